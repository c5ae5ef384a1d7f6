package mqtt

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/mqtt/broker"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// TestEndToEndDPOP runs DPOP on random problems with every agent on its
// own MQTT client through the embedded broker, reached through memory
// (the default) and over loopback TCP, and checks the answer against the
// simulated runtime's.
func TestEndToEndDPOP(t *testing.T) {
	for _, tc := range []struct {
		seed   int64
		agents int
		tcp    bool
	}{{1, 3, false}, {2, 4, false}, {3, 5, false}, {1, 3, true}, {3, 5, true}} {
		t.Run(fmt.Sprintf("seed%d-agents%d-tcp%v", tc.seed, tc.agents, tc.tcp), func(t *testing.T) {
			p := randomProblem(tc.seed, tc.agents)
			want := simTruth(t, p, nil)
			cfg := GroupConfig{Config: Config{Protocol: "dpop", Timing: fastTiming, Logger: testLogger(t)}, EmbeddedTCP: tc.tcp}
			got, gr, err := solveGroup(testContext(t), p, sim.Options{Protocol: dpop.New, Solver: dfbnb, Seed: 1}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			checkSameAnswer(t, got, gr, want)
			if gr.InMemory == tc.tcp {
				t.Errorf("InMemory = %v with EmbeddedTCP = %v", gr.InMemory, tc.tcp)
			}
			for _, s := range gr.Stats {
				if len(s.Dropped) != 0 {
					t.Errorf("agent %s dropped %v", s.Agent, s.Dropped)
				}
			}
		})
	}
}

// TestEndToEndFragmented forces every UTIL table through fragmentation
// with a tiny payload limit.
func TestEndToEndFragmented(t *testing.T) {
	p := randomProblem(4, 4)
	want := simTruth(t, p, nil)
	b := startBroker(t, broker.Config{})
	cfg := GroupConfig{Config: Config{
		Broker: Broker{URL: b.URL()}, Protocol: "dpop", Timing: fastTiming, Logger: testLogger(t),
		Limits: Limits{MaxPayload: 16},
	}}
	got, gr, err := solveGroup(testContext(t), p, sim.Options{Protocol: dpop.New, Solver: dfbnb, Seed: 1}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkSameAnswer(t, got, gr, want)
	var frag int64
	for _, s := range gr.Stats {
		frag += s.Fragmented
	}
	if frag == 0 {
		t.Fatal("no message was fragmented")
	}
}

// TestRunIDReuse runs twice with the same run id on one broker: the second
// run finds the first one's retained statuses and must refuse to mix them
// with its own.
func TestRunIDReuse(t *testing.T) {
	p := randomProblem(1, 3)
	b := startBroker(t, broker.Config{})
	cfg := GroupConfig{Config: Config{Broker: Broker{URL: b.URL()}, Run: "once", Protocol: "dpop", Timing: fastTiming, Logger: testLogger(t)}}
	o := sim.Options{Protocol: dpop.New, Solver: dfbnb, Seed: 1}
	if _, _, err := solveGroup(testContext(t), p, o, cfg); err != nil {
		t.Fatal(err)
	}
	_, _, err := solveGroup(testContext(t), p, o, cfg)
	if err == nil || !strings.Contains(err.Error(), "run id") {
		t.Fatalf("second run with the same id: %v", err)
	}
}

// slowProto makes a protocol slow, so that its mailbox fills up.
type slowProto struct{ mva.Protocol }

func (s slowProto) Step(ctx context.Context, m mva.Message) ([]mva.Message, error) {
	time.Sleep(2 * time.Millisecond)
	return s.Protocol.Step(ctx, m)
}

// TestEndToEndTinyMailbox gives every agent a mailbox of a few payloads
// while the root is slow and the UTIL tables arrive in bursts of tiny
// fragments: payloads are refused (in most runs: it depends on timing;
// TestOverflowAsksResync checks the policy deterministically), and the
// resyncs must recover every one.
func TestEndToEndTinyMailbox(t *testing.T) {
	p := randomProblem(4, 4)
	want := simTruth(t, p, nil)
	cfg := GroupConfig{Config: Config{
		Protocol: "dpop", Timing: fastTiming, Logger: testLogger(t),
		Limits: Limits{MaxPayload: 8, MailboxBytes: 300},
	}}
	factory := func(n *mva.Node) (mva.Protocol, error) {
		p, err := dpop.New(n)
		if n.ID == dpop.Root {
			return slowProto{p}, err
		}
		return p, err
	}
	got, gr, err := solveGroup(testContext(t), p, sim.Options{Protocol: factory, Solver: dfbnb, Seed: 1}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkSameAnswer(t, got, gr, want)
	var full int64
	for _, s := range gr.Stats {
		full += s.Dropped[DropMailboxFull]
	}
	t.Logf("%d payloads refused", full)
}

// TestOverflowAsksResync overfills an agent's mailbox the way paho's
// handler would: the payload that does not fit is refused and counted,
// and the next step raises the generation in a status, which makes every
// peer retransmit what this agent has not delivered.
func TestOverflowAsksResync(t *testing.T) {
	cfg, err := AgentConfig{Config: Config{
		Broker: Broker{URL: "tcp://127.0.0.1:1"}, Run: "r", Protocol: "p", Agents: []string{"a0", "a1"},
		Logger: testLogger(t), Limits: Limits{MailboxBytes: 10},
	}, Agent: 1}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	a := newAgent(cfg, &recorder{})
	a.connected, a.gen = true, 1 // as after the first connection
	inbox := a.layout.Inbox("a1", "a0")
	for _, n := range []int{8, 8, 2} {
		a.mbox.push(item{kind: itemMessage, topic: inbox, payload: make([]byte, n)})
	}
	if _, err := a.step(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := a.ctr.snapshot("a1")
	if st.Dropped[DropMailboxFull] != 1 || st.Resyncs != 1 || a.lastPub.Gen != 2 {
		t.Fatalf("dropped %v, %d resyncs, status generation %d", st.Dropped, st.Resyncs, a.lastPub.Gen)
	}
}

// countingProto counts the agents computing at once (Start or Step).
type countingProto struct {
	mva.Protocol
	now, most *atomic.Int64
}

func (c countingProto) enter() func() {
	n := c.now.Add(1)
	for {
		m := c.most.Load()
		if n <= m || c.most.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(time.Millisecond)
	return func() { c.now.Add(-1) }
}

func (c countingProto) Start(ctx context.Context) ([]mva.Message, error) {
	defer c.enter()()
	return c.Protocol.Start(ctx)
}

func (c countingProto) Step(ctx context.Context, m mva.Message) ([]mva.Message, error) {
	defer c.enter()()
	return c.Protocol.Step(ctx, m)
}

// TestGroupParallel checks that RunGroup's agents compute at most
// Parallel at a time, and still give the simulated runtime's answer.
func TestGroupParallel(t *testing.T) {
	p := randomProblem(5, 6)
	want := simTruth(t, p, nil)
	for _, parallel := range []int{1, 2} {
		t.Run(fmt.Sprint(parallel), func(t *testing.T) {
			var now, most atomic.Int64
			factory := func(n *mva.Node) (mva.Protocol, error) {
				p, err := dpop.New(n)
				return countingProto{p, &now, &most}, err
			}
			cfg := GroupConfig{Config: Config{Protocol: "dpop", Timing: fastTiming, Logger: testLogger(t)}, Parallel: parallel}
			got, gr, err := solveGroup(testContext(t), p, sim.Options{Protocol: factory, Solver: dfbnb, Seed: 1}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			checkSameAnswer(t, got, gr, want)
			if m := most.Load(); m > int64(parallel) || m < 1 {
				t.Errorf("%d agents computed at once, Parallel %d", m, parallel)
			}
		})
	}
}
