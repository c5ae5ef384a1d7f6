package localsearch_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
)

// keptSolver hides a solver's Hold and Release: the response's bucket
// elimination keeps its tables between responses and watches its costs
// for edits, as every response did before responders held their solvers
// for one response only.
type keptSolver struct{ s mva.LocalSolver }

func (k keptSolver) SolveRow(ctx context.Context, b, in []int) (float64, error) {
	return k.s.SolveRow(ctx, b, in)
}

func (k keptSolver) Checks() int64 { return k.s.Checks() }

// TestResponderHeldMatchesKept: responders whose solvers hold their tables
// for one response and drop them after (the path MGM's agents take) answer
// every question as responders whose solvers keep their tables between
// responses and watch their costs (the path before): the same row and
// the same gain, bit for bit, over MGM-like sequences of questions on
// seeded problems — the neighbours' values changing one at a time or all
// at once, the agent moving to its answer or not — by exact responses
// and by block descent.
func TestResponderHeldMatchesKept(t *testing.T) {
	ctx := context.Background()
	var cases, moved, blocks int
	for seed := int64(1); seed <= 60; seed++ {
		p := responseInstance(seed)
		for _, mode := range []localsearch.Response{localsearch.ResponseSolve, localsearch.ResponseBlocks} {
			solver := func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("be", lp) }
			var twins [2][]*mva.Node
			for i := range twins {
				nodes, _, err := mva.BuildNodes(ctx, mva.Decompose(p), solver, false, 1, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range nodes {
					n.Exact = local.Exact
					if i == 1 {
						n.Exact = func(lp *mva.LocalProblem, entries int) (mva.LocalSolver, error) {
							s, err := local.Exact(lp, entries)
							if err != nil {
								return nil, err
							}
							return keptSolver{s}, nil
						}
					}
				}
				twins[i] = nodes
			}
			rng := rand.New(rand.NewPCG(uint64(seed), 5))
			for a, n := range twins[0] {
				var rs [2]*localsearch.Responder
				var nbs [2]*localsearch.Neighbourhood
				for i := range twins {
					tn := twins[i][a]
					nb, err := localsearch.New(tn)
					if err != nil {
						t.Fatal(err)
					}
					view := tn.Local
					rowCost := func(ctx context.Context, row int) (localsearch.Cost, error) {
						return localsearch.RowCost(ctx, view, row)
					}
					tn.Params = map[string]float64{"response": float64(mode)}
					if mode == localsearch.ResponseBlocks {
						rs[i], err = localsearch.NewBlockResponder(tn, nb, rowCost, 1+int(seed%3)*8)
					} else {
						rs[i], err = localsearch.NewResponder(tn, nb, rowCost, responseConfig(t, tn))
					}
					if err != nil {
						t.Fatal(err)
					}
					nbs[i] = nb
				}
				if !rs[0].Solving() {
					continue
				}
				vals := make([]int, len(nbs[0].Ctx))
				for s, v := range nbs[0].SlotVars() {
					vals[s] = rng.IntN(p.DomainSize(v))
				}
				// Block descent starts from a feasible row (init = 3):
				// the first row whose completion the view knows.
				cur := 0
				for row := range nbs[0].Rows() {
					c, err := localsearch.RowCost(ctx, n.Local, row)
					if err != nil {
						t.Fatal(err)
					}
					if c.Hard == 0 {
						cur = row
						break
					}
				}
				for q := range 12 {
					switch {
					case q == 0:
					case rng.IntN(3) == 0:
						for s, v := range nbs[0].SlotVars() {
							vals[s] = rng.IntN(p.DomainSize(v))
						}
					case len(vals) > 0:
						s := rng.IntN(len(vals))
						vals[s] = rng.IntN(p.DomainSize(nbs[0].SlotVars()[s]))
					}
					var rows [2]int
					var gains [2]localsearch.Cost
					for i := range rs {
						copy(nbs[i].Ctx, vals)
						var err error
						if rows[i], gains[i], err = rs[i].BestMove(ctx, cur, nbs[i].Ctx); err != nil {
							t.Fatalf("seed %d agent %d: %v", seed, n.ID, err)
						}
					}
					if rows[0] != rows[1] || gains[0].Hard != gains[1].Hard || math.Float64bits(gains[0].Soft) != math.Float64bits(gains[1].Soft) {
						t.Fatalf("seed %d mode %d agent %d question %d: held row %d gain %+v, kept row %d gain %+v",
							seed, mode, n.ID, q, rows[0], gains[0], rows[1], gains[1])
					}
					if rows[0] != cur {
						moved++
						if rng.IntN(2) == 0 {
							cur = rows[0] // the agent won its neighbourhood
						}
					}
					if rs[0].Blocks() {
						blocks++
					}
					cases++
				}
			}
		}
	}
	t.Logf("%d questions, %d answered with a move, %d by block descent", cases, moved, blocks)
	if cases < 500 || moved < 100 || blocks < 100 {
		t.Errorf("too few cases exercised: %d questions, %d moves, %d by block descent", cases, moved, blocks)
	}
}
