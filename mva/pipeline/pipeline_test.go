package pipeline_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/pipeline"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
	"github.com/hearth-dcop/hearth/mva/sim"
)

var dfbnb = func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("dfbnb", lp) }

func problem(seed int64) *mva.Problem {
	return randprob.New(seed, randprob.Options{
		Agents: 3, Vars: 7, MinDomain: 2, MaxDomain: 3, MaxArity: 2,
		Functions: 10, IntCosts: true, Locality: 0.4, HardProb: 0.1,
	})
}

// optimum is the brute-force optimum of p, the truth DPOP must reach.
func optimum(t *testing.T, p *mva.Problem) float64 {
	t.Helper()
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	in := make([]int, lp.NumInterior())
	c, err := local.NewBruteForce(lp).SolveRow(context.Background(), nil, in)
	if err != nil {
		t.Fatal(err)
	}
	return c + p.Offset
}

// TestSolveEveryReformulation: DPOP through the pipeline, on the simulated
// runtime, reaches the brute-force optimum under every reformulation, and
// the solution is an assignment of the original problem with that cost.
func TestSolveEveryReformulation(t *testing.T) {
	ctx := context.Background()
	for seed := int64(1); seed <= 6; seed++ {
		p := problem(seed)
		want := optimum(t, p)
		for _, rf := range []string{"", "mva", "decomposition", "compilation"} {
			sol, err := pipeline.Solve(ctx, p, pipeline.Options{Protocol: dpop.New, Solver: dfbnb, Seed: 1, Reform: rf}, &sim.Runtime{})
			if err != nil {
				t.Fatalf("seed %d %q: %v", seed, rf, err)
			}
			got, err := p.Eval(sol.Assign)
			if err != nil {
				t.Fatal(err)
			}
			if mva.IsHard(want) {
				if !mva.IsHard(sol.Cost) {
					t.Errorf("seed %d %q: cost %v of an infeasible problem", seed, rf, sol.Cost)
				}
				continue
			}
			if sol.Cost != want || got != want || !sol.Optimal {
				t.Errorf("seed %d %q: cost %v (model %v, optimal %v), brute force %v", seed, rf, sol.Cost, got, sol.Optimal, want)
			}
			if rf == "decomposition" && sol.Outcome.Metrics.InternalMessages == 0 && len(p.Variables) > len(p.Agents) {
				t.Errorf("seed %d: decomposition counted no internal message", seed)
			}
		}
	}
}

// replay is a runtime that answers for the agents it is given with the
// results of a complete run, as the other processes of a distributed run
// would have made it happen.
type replay struct{ results []mva.AgentResult }

func (r replay) Run(_ context.Context, run pipeline.Run) (pipeline.Outcome, error) {
	out := pipeline.Outcome{}
	for _, a := range run.Agents {
		out.Results = append(out.Results, r.results[a.Node.ID])
	}
	return out, nil
}

// TestOwnedAgents: a plan of some agents (`hearth run`'s home) builds only
// their nodes, and its solution gives their variables the values of the
// complete run, under every reformulation.
func TestOwnedAgents(t *testing.T) {
	ctx := context.Background()
	p := problem(2)
	for _, rf := range []string{"mva", "decomposition", "compilation"} {
		o := pipeline.Options{Protocol: dpop.New, Solver: dfbnb, Seed: 1, Reform: rf}
		rt := &sim.Runtime{}
		full, err := pipeline.Solve(ctx, p, o, rt)
		if err != nil {
			t.Fatal(err)
		}
		for h := range p.Agents {
			o.Owned = []int{h}
			pl, err := pipeline.Prepare(ctx, p, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range pl.Agents {
				if pl.Reform.Owner[k] != h {
					t.Fatalf("%s: home %d runs agent %d of owner %d", rf, h, k, pl.Reform.Owner[k])
				}
			}
			sol, err := pl.Run(ctx, replay{rt.Last.Results})
			if err != nil {
				t.Fatal(err)
			}
			if !math.IsNaN(sol.Cost) || sol.Reported != full.Cost || sol.HardRow != mva.IsHard(full.Cost) {
				t.Errorf("%s home %d: cost %v reported %v hard %v; complete run %v", rf, h, sol.Cost, sol.Reported, sol.HardRow, full.Cost)
			}
			for v, x := range p.Variables {
				if x.Agent == h && sol.Assign[v] != full.Assign[v] {
					t.Errorf("%s home %d: %s = %d, complete run %d", rf, h, x.Name, sol.Assign[v], full.Assign[v])
				}
			}
		}
	}
}

// TestSimRuntimeRunsEveryAgent: the simulated runtime cannot run a part of
// a problem; it says so instead of waiting for agents that never come.
func TestSimRuntimeRunsEveryAgent(t *testing.T) {
	_, err := pipeline.Solve(context.Background(), problem(1), pipeline.Options{Protocol: dpop.New, Solver: dfbnb, Owned: []int{0}}, &sim.Runtime{})
	if err == nil {
		t.Fatal("a partial run on the simulated runtime did not fail")
	}
}

func TestPrepareRejects(t *testing.T) {
	p := problem(1)
	for _, tc := range []struct {
		name string
		o    pipeline.Options
	}{
		{"no protocol", pipeline.Options{Solver: dfbnb}},
		{"no solver", pipeline.Options{Protocol: dpop.New}},
		{"unknown reformulation", pipeline.Options{Protocol: dpop.New, Solver: dfbnb, Reform: "magic"}},
		{"owned agent out of range", pipeline.Options{Protocol: dpop.New, Solver: dfbnb, Owned: []int{3}}},
	} {
		if _, err := pipeline.Prepare(context.Background(), p, tc.o); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// counted is a protocol with constraint checks of its own.
type counted struct {
	mva.Protocol
	n int64
}

func (c *counted) Checks() int64 { return c.n }

// TestAgentChecks: an agent's checks are its local solver's plus its
// protocol's own.
func TestAgentChecks(t *testing.T) {
	ctx := context.Background()
	p := problem(3)
	pl, err := pipeline.Prepare(ctx, p, pipeline.Options{Protocol: dpop.New, Solver: dfbnb, Eager: true})
	if err != nil {
		t.Fatal(err)
	}
	var n *mva.Node
	for _, m := range pl.Nodes {
		if m.Local.Solver.Checks() > 0 {
			n = m
		}
	}
	if n == nil {
		t.Fatal("filling the eager tables made no check")
	}
	solver := n.Local.Solver.Checks()
	proto, err := dpop.New(n)
	if err != nil {
		t.Fatal(err)
	}
	a := pipeline.Agent{Node: n, Protocol: &counted{Protocol: proto, n: 7}}
	if got := a.Checks(); got != solver+7 {
		t.Errorf("checks %d, want %d + 7", got, solver)
	}
}

// TestProgress: the progress counters see every agent start and finish,
// and as many messages delivered as sent, on a run that completes.
func TestProgress(t *testing.T) {
	p := problem(4)
	prog := &pipeline.Progress{}
	rt := &sim.Runtime{}
	if _, err := pipeline.Solve(context.Background(), p, pipeline.Options{Protocol: dpop.New, Solver: dfbnb, Progress: prog}, rt); err != nil {
		t.Fatal(err)
	}
	agents, started, done, delivered, sent := prog.Snapshot()
	m := rt.Last.Metrics
	if agents != len(p.Agents) || started != agents || done != agents || delivered != sent || sent != m.Messages+m.InternalMessages {
		t.Errorf("progress: %d agents, %d started, %d done, %d delivered, %d sent; the run sent %d", agents, started, done, delivered, sent, m.Messages)
	}
}

// failing is a runtime that fails.
type failing struct{}

func (failing) Run(context.Context, pipeline.Run) (pipeline.Outcome, error) {
	return pipeline.Outcome{}, errors.New("broker gone")
}

func TestRuntimeErrorIsReturned(t *testing.T) {
	_, err := pipeline.Solve(context.Background(), problem(1), pipeline.Options{Protocol: dpop.New, Solver: dfbnb}, failing{})
	if err == nil || err.Error() != "broker gone" {
		t.Fatalf("error %v", err)
	}
}

// short is a runtime that loses a result.
type short struct{}

func (short) Run(_ context.Context, r pipeline.Run) (pipeline.Outcome, error) {
	return pipeline.Outcome{Results: make([]mva.AgentResult, len(r.Agents)-1)}, nil
}

func TestRuntimeMissingResults(t *testing.T) {
	_, err := pipeline.Solve(context.Background(), problem(1), pipeline.Options{Protocol: dpop.New, Solver: dfbnb}, short{})
	if err == nil || !strings.Contains(err.Error(), "results for") {
		t.Fatalf("error %v", err)
	}
}
