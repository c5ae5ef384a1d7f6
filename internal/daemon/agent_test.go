package daemon

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mqtt"
	"github.com/hearth-dcop/hearth/mqtt/broker"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/pipeline"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
	"github.com/hearth-dcop/hearth/mva/sim"
)

func testProblem() *mva.Problem {
	return randprob.New(7, randprob.Options{
		Agents: 3, Vars: 6, MinDomain: 2, MaxDomain: 3, MaxArity: 2,
		Functions: 9, IntCosts: true, Locality: 0.4,
	})
}

func prepared() Prepared {
	return Prepared{
		Options: pipeline.Options{
			Protocol: dpop.New, Seed: 1, Exact: local.Exact,
			Solver: func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("dfbnb", lp) },
		},
		Algorithm: mva.Algorithm{Global: "dpop", Local: "dfbnb"},
		Complete:  true,
	}
}

// TestAgentsOnce runs one round with every agent of a problem in its own
// daemon Agent, as `hearth run --once` processes do: each reports its own
// variables' values as the simulated runtime finds them, and DPOP's
// optimum, proved.
func TestAgentsOnce(t *testing.T) {
	p := testProblem()
	want, b := dpopTruth(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := mqtt.Config{Broker: mqtt.Broker{URL: b.URL()}, Protocol: "dpop", Timing: mqtt.Timing{
		StatusInterval: 50 * time.Millisecond, RetransmitAfter: 2 * time.Second, ReconnectMax: 100 * time.Millisecond}}
	reps := make([]RoundResult, len(p.Agents))
	errs := make([]error, len(p.Agents))
	var wg sync.WaitGroup
	for i, a := range p.Agents {
		h, err := NewAgent(ctx, AgentConfig{Problem: p, Name: a.Name, Prepared: prepared(), MQTT: cfg, Attempts: 2})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], errs[i] = h.Once(ctx, "r1", nil)
		}()
	}
	wg.Wait()
	for i, rep := range reps {
		if errs[i] != nil {
			t.Fatalf("agent %d: %v", i, errs[i])
		}
		if !rep.Feasible || !rep.Optimal || rep.Status != mva.StatusOptimal || rep.Objective == nil || math.Abs(*rep.Objective-want.Cost) > 1e-9 {
			t.Errorf("agent %d: %+v, want optimum %v", i, rep, want.Cost)
		}
		for v, x := range p.Variables {
			if x.Agent == i && rep.Assignment[x.Name] != x.Domain[want.Assign[v]] {
				t.Errorf("agent %d: %s = %s, simulated %s", i, x.Name, rep.Assignment[x.Name], x.Domain[want.Assign[v]])
			}
		}
	}
}

// TestNewAgentUnknown: an agent the problem lacks is the configuration's
// error, naming the agents there are.
func TestNewAgentUnknown(t *testing.T) {
	_, err := NewAgent(context.Background(), AgentConfig{Problem: testProblem(), Name: "nobody", Prepared: prepared()})
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("error %v, want ErrConfig", err)
	}
}

// dpopTruth is DPOP's answer to p on the simulated runtime (the truth the
// daemon's rounds must give) and an embedded broker for the agents,
// closed when the test ends.
func dpopTruth(t *testing.T, p *mva.Problem) (sim.Solution, *broker.Broker) {
	t.Helper()
	want, err := sim.Solve(context.Background(), p, sim.Options{Protocol: dpop.New, Seed: 1,
		Solver: func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("dfbnb", lp) }})
	if err != nil {
		t.Fatal(err)
	}
	b, err := broker.Start(broker.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return want, b
}
