package mqtt

import (
	"bytes"
	"context"
	"maps"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.mqtt.golang/packets"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mqtt/broker"
	"github.com/hearth-dcop/hearth/mqtt/envelope"
	"github.com/hearth-dcop/hearth/mqtt/topic"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/dgibbs"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// completeProblem is a random problem of one variable per agent whose
// agent graph is complete: D-Gibbs then sends every peer the same VALUE
// body, every iteration, which is what multicasts are for.
func completeProblem(t *testing.T, seed int64, agents int) *mva.Problem {
	t.Helper()
	p := randprob.New(seed, randprob.Options{
		Agents: agents, Vars: agents, MinDomain: 2, MaxDomain: 3, MaxArity: 2,
		Functions: 4 * agents * agents, IntCosts: true,
	})
	linked := map[[2]int]bool{}
	for _, f := range p.Functions {
		if len(f.Scope) == 2 {
			a, b := p.Variables[f.Scope[0]].Agent, p.Variables[f.Scope[1]].Agent
			linked[[2]int{min(a, b), max(a, b)}] = true
		}
	}
	if len(linked) != agents*(agents-1)/2 {
		t.Fatalf("seed %d: agent graph not complete (%d links): pick another seed", seed, len(linked))
	}
	return p
}

// TestEndToEndMulticast runs D-Gibbs on a complete graph over the
// embedded broker with and without multicasts, and under the per-home
// ACL: every run gives the simulated runtime's answer and message count,
// and multicasts carry the VALUEs exactly when they are on.
func TestEndToEndMulticast(t *testing.T) {
	p := completeProblem(t, 11, 5)
	opts := sim.Options{Protocol: dgibbs.New, Solver: dfbnb, Seed: 3, Params: map[string]float64{"iterations": 30}}
	want, err := sim.Solve(testContext(t), p, opts)
	if err != nil {
		t.Fatal(err)
	}
	var users []broker.User
	for _, a := range p.Agents {
		users = append(users, broker.User{Name: a.Name, Password: "pw-" + a.Name})
	}
	for _, tc := range []struct {
		name        string
		noMulticast bool
		acl         bool
	}{
		{"multicast", false, false},
		{"unicast", true, false},
		{"multicast under the ACL", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := GroupConfig{Config: Config{Protocol: "dgibbs", Timing: fastTiming, Logger: testLogger(t), NoMulticast: tc.noMulticast}}
			if tc.acl {
				b := startBroker(t, broker.Config{Users: users})
				cfg.Broker.URL = b.URL()
				cfg.Credentials = func(a string) (string, string) { return a, "pw-" + a }
			}
			got, gr, err := solveGroup(testContext(t), p, opts, cfg)
			if err != nil {
				t.Fatal(err)
			}
			checkSameAnswer(t, got, gr, want)
			var multicasts, skipped int64
			for _, s := range gr.Stats {
				multicasts += s.Multicasts
				skipped += s.MulticastsSkipped
				if len(s.Dropped) != 0 {
					t.Errorf("agent %s dropped %v", s.Agent, s.Dropped)
				}
			}
			// 30 iterations of VALUEs from each of 5 agents, plus the
			// final iteration's.
			if tc.noMulticast && multicasts != 0 || !tc.noMulticast && multicasts < 30*5 {
				t.Errorf("%d multicasts", multicasts)
			}
			if skipped != 0 {
				t.Errorf("%d multicasts skipped on a complete graph", skipped)
			}
		})
	}
}

// TestMulticastReceived publishes multicasts of every kind to a waiting
// agent a1: one for it is taken on its link (a second copy is a
// duplicate), one for others is skipped, and the bad ones are dropped by
// reason.
func TestMulticastReceived(t *testing.T) {
	b := startBroker(t, broker.Config{})
	names := []string{"a0", "a1", "a2", "a3"}
	a, errc, stop := waitingAgent(t, AgentConfig{Config: Config{
		Broker: Broker{URL: b.URL()}, Run: "r", Protocol: "p", Agents: names,
		Timing: fastTiming, Logger: testLogger(t),
	}, Agent: 1})
	defer stop()
	c, err := rawClient(b.URL(), "attacker", "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(0)
	l := topic.Layout{Prefix: "hearth", Run: "r"}
	mc := func(edit func(*envelope.Multicast)) []byte {
		m := envelope.Multicast{
			Run: "r", Sender: "a0", Protocol: "p", Kind: "K", Agents: 4,
			To: []envelope.Receiver{{Index: 1, Seq: 0}, {Index: 2, Seq: 7}}, Payload: []byte("v"),
		}
		if edit != nil {
			edit(&m)
		}
		b, err := m.Encode(envelope.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, p := range []struct {
		topic   string
		payload []byte
	}{
		{l.Multicast("a0"), mc(nil)},
		{l.Multicast("a0"), mc(nil)}, // a duplicate
		{l.Multicast("a0"), mc(func(m *envelope.Multicast) { m.To = m.To[1:] })},
		{l.Multicast("a0"), mc(func(m *envelope.Multicast) { m.Agents = 5 })},
		{l.Multicast("a0"), mc(func(m *envelope.Multicast) { m.Sender = "a2" })},
		{l.Multicast("a0"), mc(func(m *envelope.Multicast) { m.Protocol = "q" })},
		{l.Multicast("zz"), mc(nil)},
		{l.Multicast("a0"), []byte{envelope.MulticastVersion, 0xff}},
	} {
		mustPublish(t, c, 1, p.topic, p.payload)
	}
	want := map[string]int64{DropMalformed: 2, DropSenderMismatch: 1, DropWrongProtocol: 1, DropUnknownSender: 1}
	waitFor(t, "every multicast", func() bool { return a.ctr.received.Load() == 8 })
	var st Stats
	settle(func() bool {
		st = a.ctr.snapshot("a1")
		return st.Duplicates == 1 && st.MulticastsSkipped == 1 && maps.Equal(st.Dropped, want)
	})
	if st.Duplicates != 1 || st.MulticastsSkipped != 1 || !maps.Equal(st.Dropped, want) {
		t.Errorf("duplicates %d, skipped %d, dropped %v; want 1, 1, %v", st.Duplicates, st.MulticastsSkipped, st.Dropped, want)
	}
	checkAlive(t, errc)
}

// lossyConn is a client's connection that loses some of the QoS 0
// PUBLISH packets the broker sends it, as a broker may (it queues none
// for an offline client, and sheds them when a client's buffer is full).
type lossyConn struct {
	net.Conn
	pending bytes.Buffer
	drop    func(topic string) bool
	dropped *atomic.Int64
}

func (c *lossyConn) Read(p []byte) (int, error) {
	for c.pending.Len() == 0 {
		cp, err := packets.ReadPacket(c.Conn)
		if err != nil {
			return 0, err
		}
		if pub, ok := cp.(*packets.PublishPacket); ok && pub.Qos == 0 && c.drop(pub.TopicName) {
			c.dropped.Add(1)
			continue
		}
		if err := cp.Write(&c.pending); err != nil {
			return 0, err
		}
	}
	return c.pending.Read(p)
}

// TestLostMulticastsRecovered runs D-Gibbs on a complete graph with
// connections that lose the 2nd and 5th multicast copy each agent
// receives: the multicast subscription is QoS 0, so the broker may, and
// the link layer must retransmit those messages on the inboxes. The run
// gives the simulated runtime's answer.
func TestLostMulticastsRecovered(t *testing.T) {
	p := completeProblem(t, 11, 5)
	opts := sim.Options{Protocol: dgibbs.New, Solver: dfbnb, Seed: 3, Params: map[string]float64{"iterations": 10}}
	want, err := sim.Solve(testContext(t), p, opts)
	if err != nil {
		t.Fatal(err)
	}
	b := startBroker(t, broker.Config{})
	var dropped atomic.Int64
	timing := fastTiming
	timing.RetransmitAfter = 300 * time.Millisecond
	cfg := GroupConfig{Config: Config{Protocol: "dgibbs", Timing: timing, Logger: testLogger(t)}}
	cfg.Broker.URL = b.URL()
	cfg.Broker.Dial = func(ctx context.Context) (net.Conn, error) {
		c, err := b.Dial(ctx)
		if err != nil {
			return nil, err
		}
		seen := 0
		return &lossyConn{Conn: c, dropped: &dropped, drop: func(tp string) bool {
			if !strings.Contains(tp, "/"+topic.Multicast+"/") {
				return false
			}
			seen++
			return seen == 2 || seen == 5
		}}, nil
	}
	got, gr, err := solveGroup(testContext(t), p, opts, cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkSameAnswer(t, got, gr, want)
	var retrans int64
	for _, s := range gr.Stats {
		retrans += s.Retransmitted
	}
	if dropped.Load() != 2*int64(len(p.Agents)) {
		t.Fatalf("%d multicast copies lost, want 2 per agent: is the multicast subscription QoS 0?", dropped.Load())
	}
	// An agent also receives its own multicasts (and skips them): at
	// most one of its two lost copies may be one of those.
	if retrans == 0 || retrans < dropped.Load()-int64(len(p.Agents)) {
		t.Errorf("%d retransmissions for %d lost multicast copies", retrans, dropped.Load())
	}
}
