package mgm

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/internal/fixtures"
	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch/lstest"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// pairwiseInstance is a dense random problem whose functions read at most
// two variables: every agent is Pairwise, and its neighbours are many, so
// joint moves are frequent. Odd seeds have integer costs.
func pairwiseInstance(seed int64) *mva.Problem {
	agents := 4 + int(seed%3)
	return randprob.New(seed, randprob.Options{
		Agents: agents, Vars: 2 * agents, MinDomain: 2, MaxDomain: 3, MaxArity: 2,
		Functions: 4 * agents, HardProb: 0.03, IntCosts: seed%2 == 1, MaxCost: 10, Locality: 0.2,
	})
}

// denseInstance is pairwiseInstance with three or four agents and every
// scope drawn from all variables: most seeds give a complete graph.
func denseInstance(seed int64) *mva.Problem {
	agents := 3 + int(seed%2)
	return randprob.New(seed, randprob.Options{
		Agents: agents, Vars: 2 * agents, MinDomain: 2, MaxDomain: 3, MaxArity: 2,
		Functions: 5 * agents, HardProb: 0.03, IntCosts: seed%2 == 1, MaxCost: 10,
	})
}

// jointRounds counts the rounds of tr in which two neighbours moved.
func jointRounds(nodes []*mva.Node, tr *trace) int {
	n := 0
	for _, moved := range tr.moved[1:] {
		joint := false
		for i, m := range moved {
			for _, j := range nodes[i].Neighbours {
				joint = joint || m && moved[j]
			}
		}
		if joint {
			n++
		}
	}
	return n
}

// TestJointMoves runs MGM with joint moves on dense pairwise instances,
// where many neighbours move together, and on lstest's instances, whose
// ternary functions send some agents back to MGM's winner test. The
// global cost, computed from outside, must never rise; a run whose last
// round moved nobody must be 1-optimal by brute force; and joint moves
// must actually happen, in fewer rounds to a fixed point than plain MGM.
func TestJointMoves(t *testing.T) {
	ctx := context.Background()
	n := int64(80)
	if testing.Short() {
		n = 20
	}
	instances := []struct {
		name string
		make func(int64) *mva.Problem
	}{
		{"pairwise", pairwiseInstance},
		{"lstest", lstest.Instance},
	}
	for _, in := range instances {
		for _, cfg := range lstest.Configs(testSolvers()) {
			t.Run(in.name+"/"+cfg.Name, func(t *testing.T) {
				converged, joint, jointRoundsTotal, plainRoundsTotal := 0, 0, 0, 0
				for seed := int64(1); seed <= n; seed++ {
					p := in.make(seed)
					params := map[string]float64{"rounds": 40, "joint": 1}
					tr, sol := runTrace(ctx, t, p, cfg, uint64(seed), params)
					nodes := tr.rec.Nodes
					if brCheck(ctx, t, fmt.Sprintf("seed %d", seed), nodes, tr.rows, tr.lastMoved()) {
						converged++
					}
					if len(sol.Assign) != len(p.Variables) {
						t.Fatalf("seed %d: incomplete assignment", seed)
					}
					joint += jointRounds(nodes, tr)
					jointRoundsTotal += roundsToFixedPoint(tr)
					plain, _ := runTrace(ctx, t, p, cfg, uint64(seed), map[string]float64{"rounds": 40})
					plainRoundsTotal += roundsToFixedPoint(plain)
				}
				t.Logf("%d of %d runs converged; %d rounds with joint moves; rounds to a fixed point: joint %d, plain %d", converged, n, joint, jointRoundsTotal, plainRoundsTotal)
				if converged < int(n)*9/10 {
					t.Errorf("only %d of %d runs reached a fixed point in 40 rounds", converged, n)
				}
				if in.name == "pairwise" {
					if joint == 0 {
						t.Error("no round moved two neighbours together")
					}
					if jointRoundsTotal >= plainRoundsTotal {
						t.Errorf("joint moves took %d rounds in all to fixed points, plain MGM %d", jointRoundsTotal, plainRoundsTotal)
					}
				}
			})
		}
	}
}

// roundsToFixedPoint returns the last round in which somebody moved.
func roundsToFixedPoint(tr *trace) int {
	last := 0
	for r, moved := range tr.moved {
		if r > 0 && slices.Contains(moved, true) {
			last = r
		}
	}
	return last
}

// TestQuiet checks that quiet = 1 ends a run on a complete graph after
// the first round without a positive gain, with the assignment a run
// without it reaches, and that it is refused where some agent does not
// neighbour every other.
func TestQuiet(t *testing.T) {
	ctx := context.Background()
	cfg := lstest.Configs(testSolvers())[0]
	complete := 0
	for seed := int64(1); seed <= 60; seed++ {
		p := denseInstance(seed)
		tr, sol := runTrace(ctx, t, p, cfg, uint64(seed), map[string]float64{"rounds": 40, "joint": 1})
		full := true
		for _, nd := range tr.rec.Nodes {
			full = full && len(nd.Neighbours) == nd.NumAgents-1
		}
		quiet := map[string]float64{"rounds": 1000, "joint": 1, "quiet": 1}
		if !full {
			if _, err := sim.Solve(ctx, p, cfg.Options(New, uint64(seed), quiet)); err == nil {
				t.Errorf("seed %d: quiet accepted on an incomplete graph", seed)
			}
			continue
		}
		complete++
		stop := roundsToFixedPoint(tr) + 1
		if slices.Contains(tr.moved[len(tr.moved)-1], true) {
			t.Fatalf("seed %d: no fixed point in 40 rounds", seed)
		}
		qsol, err := sim.Solve(ctx, p, cfg.Options(New, uint64(seed), quiet))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		edges := 0
		for _, nd := range tr.rec.Nodes {
			edges += len(nd.Neighbours)
		}
		if got, want := qsol.Outcome.Metrics.Messages, int64(2*edges*stop); got != want {
			t.Errorf("seed %d: %d messages, want %d (%d rounds, the last without a move)", seed, got, want, stop)
		}
		if !slices.Equal(qsol.Assign, sol.Assign) {
			t.Errorf("seed %d: quiet run ended at %v, the 40-round run at %v", seed, qsol.Assign, sol.Assign)
		}
	}
	t.Logf("%d of 60 instances complete", complete)
	if complete < 10 {
		t.Fatalf("only %d complete-graph instances", complete)
	}
	// Thesis31's two agents neighbour each other.
	if _, err := sim.Solve(ctx, fixtures.Thesis31(), cfg.Options(New, 1, map[string]float64{"quiet": 1, "joint": 1})); err != nil {
		t.Errorf("thesis31: %v", err)
	}
}
