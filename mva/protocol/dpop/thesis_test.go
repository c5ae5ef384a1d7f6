package dpop

import (
	"context"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/internal/fixtures"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// TestThesis31 solves the thesis's Figure 3.1 example. Its agent graph is
// one edge a0–a1 (the function x0–x3), so a run sends exactly six
// messages, 2|E| + 4(|A|−1) with |E| = 1 and |A| = 2:
//
//   - DFS_DEGREE a0→a1 and a1→a0 at Start (each has one neighbour);
//   - DFS_TOKEN a0→a1 once a0 knows a1's degree, and DFS_RETURN a1→a0,
//     since a1 has no unvisited neighbour;
//   - UTIL a1→a0 over {x0}: min over x3 of MVA_1(x3) + f(x0, x3), that is
//     x0=0: min(7+7, 2+10) = 12 and x0=1: min(7+2, 2+3) = 5;
//   - VALUE a0→a1: a0 minimises MVA_0(x0) + UTIL(x0), 19+12 = 31 against
//     7+5 = 12, picks x0=1 and sends it with the cost 12; a1 reads x3=1.
func TestThesis31(t *testing.T) {
	ctx := context.Background()
	p := fixtures.Thesis31()
	for _, eager := range []bool{false, true} {
		for _, faults := range []sim.Faults{{}, {Duplicate: 0.3, Reorder: 0.5}} {
			for seed := range uint64(5) {
				sol, err := sim.Solve(ctx, p, sim.Options{
					Protocol: New,
					Solver:   func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("dfbnb", lp) },
					Eager:    eager, Seed: seed, Config: sim.Config{Faults: faults},
				})
				if err != nil {
					t.Fatal(err)
				}
				if sol.Cost != 12 || !sol.Optimal {
					t.Fatalf("cost %v optimal %v, want 12 true", sol.Cost, sol.Optimal)
				}
				if want := []int{1, 1, 0, 1, 0}; !slices.Equal(sol.Assign, want) {
					t.Fatalf("assignment %v, want %v", sol.Assign, want)
				}
				for i, r := range sol.Outcome.Results {
					if r.Cost != 12 || !r.Optimal {
						t.Fatalf("agent %d reports cost %v optimal %v", i, r.Cost, r.Optimal)
					}
				}
				m := sol.Outcome.Metrics
				if m.Messages != 6 || m.InternalMessages != 0 {
					t.Fatalf("%d messages (%d internal), want 6 (0)", m.Messages, m.InternalMessages)
				}
				// NCCC: a1's join has 2×2 entries, a0's 1×2 after
				// receiving a1's count; the local solvers add theirs.
				if m.NCCC < 6 {
					t.Fatalf("NCCC %d, want at least the 6 join entries", m.NCCC)
				}
			}
		}
	}
}

// TestThesis31Trace checks the exact messages in send order under a FIFO
// driver, the tree, the separators and the join counts.
func TestThesis31Trace(t *testing.T) {
	ctx := context.Background()
	_, agents := buildAgents(t, fixtures.Thesis31(), nil)
	trace, err := fifo(ctx, agents, -1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range trace {
		got = append(got, m.Kind+" "+string(rune('0'+m.From))+">"+string(rune('0'+m.To)))
	}
	want := []string{
		"DFS_DEGREE 0>1", "DFS_DEGREE 1>0", "DFS_TOKEN 0>1",
		"DFS_RETURN 1>0", "UTIL 1>0", "VALUE 0>1",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("trace %v\nwant  %v", got, want)
	}
	t0, ok0 := agents[0].Tree()
	t1, ok1 := agents[1].Tree()
	if !ok0 || !ok1 || t0.Parent != -1 || !slices.Equal(t0.Children, []int{1}) || t1.Parent != 0 ||
		len(t1.Children)+len(t1.PseudoParents)+len(t0.PseudoChildren) != 0 {
		t.Fatalf("trees %+v %+v", t0, t1)
	}
	if s := agents[1].Separator(); !slices.Equal(s, []int{0}) {
		t.Fatalf("a1's separator %v, want [x0]", s)
	}
	if agents[0].Checks() != 2 || agents[1].Checks() != 4 {
		t.Fatalf("join entries %d and %d, want 2 and 4", agents[0].Checks(), agents[1].Checks())
	}
	for i, want := range [][]int{{1}, {1}} {
		if r := agents[i].Result(); !slices.Equal(r.Boundary, want) || r.Cost != 12 {
			t.Fatalf("agent %d: %+v", i, r)
		}
	}
}
