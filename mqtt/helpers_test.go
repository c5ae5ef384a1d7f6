package mqtt

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mqtt/broker"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/pipeline"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// logSink collects a test's logs and prints them only when it fails; it
// outlives the test safely (paho and mochi goroutines may log late).
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

func testLogger(t *testing.T) *slog.Logger {
	t.Helper()
	s := &logSink{}
	t.Cleanup(func() {
		if t.Failed() {
			s.mu.Lock()
			t.Logf("logs:\n%s", s.buf.String())
			s.mu.Unlock()
		}
	})
	return slog.New(slog.NewTextHandler(s, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

func startBroker(t *testing.T, cfg broker.Config) *broker.Broker {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	b, err := broker.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// fastTiming keeps reconnections and acknowledgements quick on loopback.
var fastTiming = Timing{
	KeepAlive: 5 * time.Second, ConnectTimeout: 2 * time.Second, ReconnectMax: 100 * time.Millisecond,
	StatusInterval: 50 * time.Millisecond, RetransmitAfter: 2 * time.Second,
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func randomProblem(seed int64, agents int) *mva.Problem {
	return randprob.New(seed, randprob.Options{
		Agents: agents, Vars: 2 * agents, MinDomain: 2, MaxDomain: 3, MaxArity: 2,
		Functions: 3 * agents, IntCosts: true, Locality: 0.4,
	})
}

var dfbnb = func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("dfbnb", lp) }

// simTruth solves p with DPOP on the simulated runtime.
func simTruth(t *testing.T, p *mva.Problem, params map[string]float64) sim.Solution {
	t.Helper()
	sol, err := sim.Solve(context.Background(), p, sim.Options{Protocol: dpop.New, Solver: dfbnb, Seed: 1, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	return sol
}

// checkSameAnswer compares an MQTT run with the simulated one: the same
// assignment and cost (DPOP is deterministic) and, exactly-once delivery
// being the link layer's promise, the same number of messages.
func checkSameAnswer(t *testing.T, got sim.Solution, gr GroupResult, want sim.Solution) {
	t.Helper()
	if got.Cost != want.Cost || !slices.Equal(got.Assign, want.Assign) || got.Optimal != want.Optimal {
		t.Fatalf("MQTT run: cost %v %v optimal %v; simulated: cost %v %v optimal %v",
			got.Cost, got.Assign, got.Optimal, want.Cost, want.Assign, want.Optimal)
	}
	var delivered int64
	for _, s := range gr.Stats {
		delivered += s.Delivered
	}
	if gr.Metrics.Messages != want.Outcome.Metrics.Messages || delivered != gr.Metrics.Messages {
		t.Fatalf("messages: sent %d, delivered %d, simulated %d", gr.Metrics.Messages, delivered, want.Outcome.Metrics.Messages)
	}
	if gr.Metrics.TotalMessageBytes != want.Outcome.Metrics.TotalMessageBytes {
		t.Fatalf("message bytes %d, simulated %d", gr.Metrics.TotalMessageBytes, want.Outcome.Metrics.TotalMessageBytes)
	}
}

// solveGroup solves p with the pipeline over RunGroup, as `hearth sim`
// does, and returns the group's result too.
func solveGroup(ctx context.Context, p *mva.Problem, o sim.Options, cfg GroupConfig) (sim.Solution, GroupResult, error) {
	g := &Group{Config: cfg}
	sol, err := pipeline.Solve(ctx, p, pipeline.Options{
		Protocol: o.Protocol, Solver: o.Solver, Eager: o.Eager, Seed: o.Seed, Params: o.Params,
		Exact: o.Exact, Sampler: o.Sampler,
	}, g)
	out := sim.Outcome{Results: sol.Outcome.Results, Metrics: sol.Outcome.Metrics}
	return sim.Solution{Assign: sol.Assign, Cost: sol.Cost, Optimal: sol.Optimal, Outcome: out}, g.Last, err
}
