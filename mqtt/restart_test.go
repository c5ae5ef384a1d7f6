package mqtt

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/mqtt/broker"
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
		got, gr, err := Solve(testContext(t), p, sim.Options{Protocol: factory, Solver: dfbnb, Seed: 1}, cfg)
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
	_, gr, err := Solve(testContext(t), p, sim.Options{Protocol: factory, Solver: dfbnb, Seed: 1}, cfg)
	if !errors.Is(err, errBoom) {
		t.Fatalf("got %v, want the failing agent's error", err)
	}
	if len(gr.Stats) != 5 {
		t.Fatalf("%d stats", len(gr.Stats))
	}
}
