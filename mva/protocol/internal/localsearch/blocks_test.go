package localsearch_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch/lstest"
)

// TestBlockResponse checks the block-descent response on seeded random
// problems against truths computed from the problem alone:
//
//   - its row's completion, as the local view now holds it, is a real
//     assignment: its cost recomputed from the problem's functions is the
//     cost the gain was computed from, so ℓ(cur) − gain is achievable;
//   - it never makes ℓ worse, and it moves exactly when the gain is
//     positive;
//   - with every component in one block (merge = the default) the block
//     is the whole response, so its row is a true minimiser of ℓ (brute
//     force over every row), or the current row when that is one.
func TestBlockResponse(t *testing.T) {
	ctx := context.Background()
	seeds := int64(240)
	minMulti := 30 // multi-block moves: 55 on the full run
	if testing.Short() {
		seeds, minMulti = 90, 10 // 20 on 90 seeds
	}
	var cases, moved, multi, multiMoved, exactChecked, hardStart int
	for seed := int64(1); seed <= seeds; seed++ {
		p := responseInstance(seed)
		for _, merge := range []int{localsearch.BlockEntries, 1} {
			solver := func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("be", lp) }
			nodes, _, err := mva.BuildNodes(ctx, mva.Decompose(p), solver, false, 1, nil)
			exactNodes(nodes)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			for _, n := range nodes {
				nb, err := localsearch.New(n)
				if err != nil {
					t.Fatal(err)
				}
				rowCost := func(ctx context.Context, row int) (localsearch.Cost, error) {
					return localsearch.RowCost(ctx, n.Local, row)
				}
				r, err := localsearch.NewBlockResponder(n, nb, rowCost, merge)
				if err != nil {
					t.Fatal(err)
				}
				if r.NumBlocks() > 1 {
					multi++
				}
				bf := local.NewBruteForce(n.Local.LP)
				for draw := range 4 {
					assign := drawContext(rng, p, nb)
					cur := rng.IntN(nb.Rows())
					where := fmt.Sprintf("seed %d merge %d agent %d draw %d (%d blocks, cur %d)", seed, merge, n.ID, draw, r.NumBlocks(), cur)
					curCost, err := nb.Ell(ctx, rowCost, cur, nb.Ctx)
					if err != nil {
						t.Fatal(err)
					}
					startCost, _, err := n.Local.RowIndex(ctx, cur)
					if err != nil {
						t.Fatal(err)
					}
					row, gain, err := r.BestMove(ctx, cur, nb.Ctx)
					if err != nil {
						t.Fatalf("%s: %v", where, err)
					}
					cases++
					if gain.Less(localsearch.Cost{}) || (row != cur) != gain.Positive() {
						t.Fatalf("%s: row %d gain %v", where, row, gain)
					}
					// The completion the view holds for row, recomputed
					// from the problem.
					c, interior, err := n.Local.RowIndex(ctx, row)
					if err != nil {
						t.Fatal(err)
					}
					got := recompute(t, n, assign, row, interior)
					if row != cur {
						moved++
						want := curCost.Sub(gain)
						if got.Hard != want.Hard || !lstest.Same(got.Soft, want.Soft) {
							t.Errorf("%s: moved to row %d worth %v as recomputed, %v by its gain", where, row, got, want)
						}
					}
					if mva.IsHard(startCost) && row != cur {
						t.Errorf("%s: a move from a row with no completion", where)
					}
					if r.NumBlocks() > 1 && row != cur {
						multiMoved++
					}
					if curCost.Hard > 0 || mva.IsHard(c) {
						hardStart++
						continue
					}
					if merge != localsearch.BlockEntries || r.NumBlocks() != 1 {
						continue
					}
					best := curCost
					for q := range nb.Rows() {
						if c := truthEll(ctx, t, n, bf, assign, q); c.Less(best) {
							best = c
						}
					}
					if got.Hard != best.Hard || !lstest.Same(got.Soft, best.Soft) {
						t.Errorf("%s: one block: row %d worth %v, the best row %v", where, row, got, best)
					}
					exactChecked++
				}
			}
		}
	}
	t.Logf("%d responses: %d moves, %d exact checks, %d infeasible starts, %d agents with several blocks (%d moves)", cases, moved, exactChecked, hardStart, multi, multiMoved)
	if moved < cases/5 || exactChecked < cases/5 || multiMoved < minMulti {
		t.Errorf("too few cases exercised: %d moves, %d exact checks, %d multi-block moves of %d", moved, exactChecked, multiMoved, cases)
	}
}

// recompute returns ℓ of the agent at row with the given interior and the
// other agents at assign, from the problem's functions.
func recompute(t *testing.T, n *mva.Node, assign []int, row int, interior []int32) localsearch.Cost {
	t.Helper()
	p := n.Problem()
	sub := n.Sub()
	lp := n.Local.LP
	b := make([]int, lp.NB)
	lp.DecodeRow(row, b)
	a := append([]int(nil), assign...)
	for k, v := range sub.Boundary {
		a[v] = b[k]
	}
	for k, v := range sub.Interior {
		a[v] = int(interior[k])
	}
	var total localsearch.Cost
	for _, fi := range append(append([]int(nil), sub.Functions...), n.External...) {
		f := &p.Functions[fi]
		idx := 0
		for _, v := range f.Scope {
			idx = idx*p.DomainSize(v) + a[v]
		}
		total = total.Add(localsearch.Of(f.Costs[idx]))
	}
	return total
}

// TestBlockDescentSettled checks that block descent, which stops once
// every block has been solved since the assignment last changed, answers
// every question as the descent that solves every block of every pass
// does: the same row and gain, bit for bit, the same completion in the
// local view, in fewer or as many solves (seeded problems, one block per
// component, the same questions asked of both).
func TestBlockDescentSettled(t *testing.T) {
	ctx := context.Background()
	seeds := int64(120)
	if testing.Short() {
		seeds = 40
	}
	var cases, moved, fewer int
	var solves, everySolves int64
	for seed := int64(1); seed <= seeds; seed++ {
		p := responseInstance(seed)
		build := func() []*mva.Node {
			solver := func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("be", lp) }
			nodes, _, err := mva.BuildNodes(ctx, mva.Decompose(p), solver, false, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			exactNodes(nodes)
			return nodes
		}
		// Each responder has its own nodes: the offers go to its view.
		nodes, everyNodes := build(), build()
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		for i, n := range nodes {
			m := everyNodes[i]
			nb, err := localsearch.New(n)
			if err != nil {
				t.Fatal(err)
			}
			mnb, err := localsearch.New(m)
			if err != nil {
				t.Fatal(err)
			}
			r, err := localsearch.NewBlockResponder(n, nb, func(ctx context.Context, row int) (localsearch.Cost, error) {
				return localsearch.RowCost(ctx, n.Local, row)
			}, 1)
			if err != nil {
				t.Fatal(err)
			}
			every, err := localsearch.NewBlockResponder(m, mnb, func(ctx context.Context, row int) (localsearch.Cost, error) {
				return localsearch.RowCost(ctx, m.Local, row)
			}, 1)
			if err != nil {
				t.Fatal(err)
			}
			every.SolveEveryPass()
			cur := rng.IntN(nb.Rows())
			for draw := range 4 {
				drawContext(rng, p, nb)
				copy(mnb.Ctx, nb.Ctx)
				where := fmt.Sprintf("seed %d agent %d draw %d (%d blocks, cur %d)", seed, n.ID, draw, r.NumBlocks(), cur)
				s0, e0 := r.Solves(), every.Solves()
				row, gain, err := r.BestMove(ctx, cur, nb.Ctx)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				wantRow, wantGain, err := every.BestMove(ctx, cur, mnb.Ctx)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				if row != wantRow || gain != wantGain {
					t.Errorf("%s: row %d gain %v, every pass: row %d gain %v", where, row, gain, wantRow, wantGain)
				}
				c, in, err := n.Local.RowIndex(ctx, row)
				if err != nil {
					t.Fatal(err)
				}
				wc, win, err := m.Local.RowIndex(ctx, row)
				if err != nil {
					t.Fatal(err)
				}
				if c != wc || !slices.Equal(in, win) {
					t.Errorf("%s: the view holds %v %v for row %d, every pass %v %v", where, c, in, row, wc, win)
				}
				ds, de := r.Solves()-s0, every.Solves()-e0
				if ds > de {
					t.Errorf("%s: %d solves, every pass %d", where, ds, de)
				}
				if ds < de {
					fewer++
				}
				solves, everySolves = solves+ds, everySolves+de
				cases++
				if row != cur {
					moved++
					cur = row
				}
			}
		}
	}
	t.Logf("%d responses, %d moves: %d block solves against %d solving every pass (%d responses with fewer)", cases, moved, solves, everySolves, fewer)
	if moved < cases/5 || fewer < cases/10 {
		t.Errorf("too few cases exercised: %d moves, %d with fewer solves of %d", moved, fewer, cases)
	}
}
