package mqtt

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/mqtt/broker"
	"github.com/hearth-dcop/hearth/mqtt/topic"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// hookProto wraps a protocol and calls hook before its k-th Step across
// all agents (k counts from 1), on that agent's goroutine.
type hookProto struct {
	mva.Protocol
	steps *atomic.Int64
	k     int64
	hook  func()
}

func (h *hookProto) Step(ctx context.Context, m mva.Message) ([]mva.Message, error) {
	if h.steps.Add(1) == h.k {
		h.hook()
	}
	return h.Protocol.Step(ctx, m)
}

// TestBrokerRestart stops the embedded broker in the middle of a DPOP run,
// while one agent holds its next messages, and starts a new one on the same
// port. The new broker knows no session, subscription or retained message:
// the agents must reconnect, resubscribe, republish their statuses and
// retransmit what was lost, and the run must end with the simulated
// runtime's answer.
func TestBrokerRestart(t *testing.T) {
	for _, k := range []int64{3, 8} {
		p := randomProblem(5, 5)
		want := simTruth(t, p, nil)
		log := testLogger(t)
		b, err := broker.Start(broker.Config{Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		addr, url := b.Addr(), b.URL()
		var restarted atomic.Pointer[broker.Broker]
		t.Cleanup(func() {
			if nb := restarted.Load(); nb != nil {
				_ = nb.Close()
			}
		})
		closed := make(chan struct{})
		hook := func() {
			// Stop the broker with this agent's outputs still to come,
			// so that they are published while it is down, then start
			// the new one while the agent goes on.
			if err := b.Close(); err != nil {
				t.Error(err)
			}
			close(closed)
			go func() {
				time.Sleep(300 * time.Millisecond)
				nb, err := broker.Start(broker.Config{Addr: addr, Logger: log})
				if err != nil {
					t.Error(err)
					return
				}
				restarted.Store(nb)
			}()
		}
		var steps atomic.Int64
		factory := func(n *mva.Node) (mva.Protocol, error) {
			inner, err := dpop.New(n)
			return &hookProto{Protocol: inner, steps: &steps, k: k, hook: hook}, err
		}
		cfg := GroupConfig{Config: Config{Broker: Broker{URL: url}, Protocol: "dpop", Timing: fastTiming, Logger: log}}
		got, gr, err := solveGroup(testContext(t), p, sim.Options{Protocol: factory, Solver: dfbnb, Seed: 1}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-closed:
		default:
			t.Fatal("the broker was never stopped")
		}
		checkSameAnswer(t, got, gr, want)
		for _, s := range gr.Stats {
			if s.Connects < 2 {
				t.Errorf("agent %s connected %d times", s.Agent, s.Connects)
			}
		}
	}
}

// failProto fails its k-th Step.
type failProto struct {
	mva.Protocol
	steps, k int
}

var errBoom = errors.New("boom")

func (f *failProto) Step(ctx context.Context, m mva.Message) ([]mva.Message, error) {
	if f.steps++; f.steps == f.k {
		return nil, errBoom
	}
	return f.Protocol.Step(ctx, m)
}

// TestAgentFailureStopsRun makes one agent's protocol fail: every agent
// must stop, and RunGroup must report that failure, not its echoes.
func TestAgentFailureStopsRun(t *testing.T) {
	p := randomProblem(5, 5)
	factory := func(n *mva.Node) (mva.Protocol, error) {
		inner, err := dpop.New(n)
		if n.ID == 2 {
			return &failProto{Protocol: inner, k: 1}, err
		}
		return inner, err
	}
	cfg := GroupConfig{Config: Config{Protocol: "dpop", Timing: fastTiming, Logger: testLogger(t)}}
	_, gr, err := solveGroup(testContext(t), p, sim.Options{Protocol: factory, Solver: dfbnb, Seed: 1}, cfg)
	if !errors.Is(err, errBoom) {
		t.Fatalf("got %v, want the failing agent's error", err)
	}
	if len(gr.Stats) != 5 {
		t.Fatalf("%d stats", len(gr.Stats))
	}
}

// startSignal is a protocol that says when it starts and is never done.
type startSignal struct {
	recorder
	started chan struct{}
}

func (s *startSignal) Start(context.Context) ([]mva.Message, error) {
	close(s.started)
	return nil, nil
}

// TestRestartedAgentStopsPeers: an agent restarted in the middle of a run
// finds its earlier incarnation's status and stops before it announces
// itself. It must still say that it failed: its peer started the protocol
// on the earlier incarnation's status and would otherwise wait for it
// forever.
func TestRestartedAgentStopsPeers(t *testing.T) {
	b := startBroker(t, broker.Config{})
	names := []string{"a0", "a1"}
	cfg := func(i int) AgentConfig {
		return AgentConfig{Config: Config{
			Broker: Broker{URL: b.URL()}, Run: "r", Protocol: "p", Agents: names, Timing: fastTiming, Logger: testLogger(t),
		}, Agent: i}
	}
	// a1's earlier incarnation left its status, as a killed process does.
	c, err := rawClient(b.URL(), "earlier-a1", "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	earlier := status{V: statusVersion, Agent: "a1", Run: "r", Nonce: 42, Gen: 1, Ver: 3, State: stateRunning, N: 2}
	if tok := c.Publish(topic.Layout{Prefix: "hearth", Run: "r"}.Status("a1"), 1, true, earlier.encode()); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	c.Disconnect(0)

	p0 := &startSignal{started: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, _, err := RunAgent(ctx, cfg(0), p0)
		errc <- err
	}()
	select {
	case <-p0.started:
	case <-time.After(10 * time.Second):
		t.Fatal("a0 did not start on a1's earlier status")
	}
	_, _, err = RunAgent(testContext(t), cfg(1), &recorder{})
	if err == nil || !strings.Contains(err.Error(), "another process") {
		t.Fatalf("the restarted a1: %v", err)
	}
	select {
	case err := <-errc:
		if err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "a1") {
			t.Fatalf("a0 stopped with %v, want a1's failure", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a0 still waits for a1's earlier incarnation")
	}
}

// TestFailBeforeAnnounced: an agent whose transport is connected but that
// has not yet taken its connection in (a failure found among the first
// messages, before the connection item) still publishes its failed
// status, with its own nonce.
func TestFailBeforeAnnounced(t *testing.T) {
	b := startBroker(t, broker.Config{})
	cfg, err := AgentConfig{Config: Config{
		Broker: Broker{URL: b.URL()}, Run: "r", Protocol: "p", Agents: []string{"a0", "a1"}, Timing: fastTiming, Logger: testLogger(t),
	}, Agent: 1}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	a := newAgent(cfg, &recorder{})
	if err := a.tr.connect(testContext(t)); err != nil {
		t.Fatal(err)
	}
	defer a.tr.close(time.Second)
	if a.connected {
		t.Fatal("the agent took its connection in without a step")
	}
	a.fail(errBoom, 5*time.Second)

	c, err := rawClient(b.URL(), "watcher", "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(0)
	got := make(chan []byte, 1)
	tok := c.Subscribe(a.layout.Status("a1"), 1, func(_ paho.Client, m paho.Message) {
		select {
		case got <- m.Payload():
		default:
		}
	})
	if !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	select {
	case b := <-got:
		s, err := decodeStatus(b, "a1", "r", 1, 2)
		if err != nil || s.State != stateFailed || s.Nonce != a.nonce || !strings.Contains(s.Error, "boom") {
			t.Fatalf("retained status %+v, %v", s, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no status retained")
	}
}

// TestFinishedRunFoundLate: an agent whose earlier process finished the
// run (its done status is the broker's retained one) stops with
// ErrRunFinished and never starts the protocol, however late that status
// reaches its mailbox: with the connection, after the connection item in
// the batch that also brings back the agent's own first status (the
// broker sends a subscription's retained messages after its
// acknowledgement, which lets the connection item go first; the echo once
// superseded the earlier status, unread), or after the deadline for the
// echo has passed (which once counted as an echo). The peers' retained
// statuses are those of the finished run, so an agent that starts waits
// for peers that have left.
func TestFinishedRunFoundLate(t *testing.T) {
	l := topic.Layout{Prefix: "hearth", Run: "r"}
	earlier := func(name string, nonce uint64) item {
		s := status{V: statusVersion, Agent: name, Run: "r", Nonce: nonce, Gen: 1, Ver: 7, State: stateDone, N: 2}
		return item{kind: itemMessage, topic: l.Status(name), payload: s.encode(), control: true}
	}
	own, peer := earlier("a0", 41), earlier("a1", 42)
	connected := item{kind: itemConnected}
	// batch is what one drain of the mailbox finds.
	type batch struct {
		// late: a tick past the deadline for the echo comes first;
		// delivering: the connection received something meanwhile.
		late, delivering bool
		items            []item
		// echo: then the agent's latest status, as the broker sends
		// it back.
		echo bool
	}
	cases := []struct {
		name    string
		batches []batch
		// log is what the agent must log on the way.
		log string
	}{
		{"with the connection", []batch{{items: []item{connected, own, peer}}}, ""},
		{"with the echo", []batch{{items: []item{connected, peer}}, {items: []item{own}, echo: true}}, ""},
		{"after the echo's deadline, nothing received", []batch{{items: []item{connected, peer}}, {late: true}, {items: []item{own}}},
			"the broker delivers nothing on this connection"},
		// A slow connection is kept: a new one would be sent the
		// retained messages again, ahead of the echo again.
		{"after the echo's deadline, the connection delivering", []batch{{items: []item{connected, peer}}, {late: true, delivering: true}, {items: []item{own}}},
			"own status not echoed yet, but the connection delivers; waiting on"},
	}
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			// No broker: the mailbox is filled by hand, in the order
			// under test.
			var logs logSink
			cfg, err := AgentConfig{Config: Config{
				Broker: Broker{URL: "tcp://127.0.0.1:1"}, Run: "r", Protocol: "p", Agents: []string{"a0", "a1"},
				Timing: fastTiming, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			}, Agent: 0}.resolve()
			if err != nil {
				t.Fatal(err)
			}
			a := newAgent(cfg, &recorder{})
			t.Cleanup(func() { a.tr.close(time.Second) })
			// The late tick's reconnection gives up at once.
			gone, cancel := context.WithCancel(context.Background())
			cancel()
			for k, b := range tc.batches {
				if b.delivering {
					a.tr.arrived.Add(1)
				}
				if b.late {
					a.onTick(gone, a.echoDeadline.Add(tickEvery))
				}
				for _, it := range b.items {
					a.mbox.push(it)
				}
				if b.echo {
					a.mbox.push(item{kind: itemMessage, topic: l.Status("a0"), payload: a.lastPub.encode(), control: true})
				}
				_, err = a.step(context.Background())
				if a.started {
					t.Fatalf("batch %d: the protocol started on the finished run's statuses", k)
				}
				if err != nil {
					if k != len(tc.batches)-1 {
						t.Fatalf("batch %d: %v", k, err)
					}
					break
				}
			}
			if !errors.Is(err, ErrRunFinished) {
				t.Fatalf("got %v, want ErrRunFinished", err)
			}
			if !bytes.Equal(a.finishedStatus, own.payload) {
				t.Errorf("kept %s as the finished run's status, want %s", a.finishedStatus, own.payload)
			}
			logs.mu.Lock()
			log := logs.buf.String()
			logs.mu.Unlock()
			if tc.log != "" && !strings.Contains(log, tc.log) {
				t.Errorf("the agent never logged %q:\n%s", tc.log, log)
			}
			if strings.Contains(log, "reconnecting") != strings.Contains(tc.log, "delivers nothing") {
				t.Errorf("the agent replaced its connection, or kept it, wrongly:\n%s", log)
			}
		})
	}
}
