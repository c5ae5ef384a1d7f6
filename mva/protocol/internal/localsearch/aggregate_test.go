package localsearch_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
)

// completeStreet is a street of homes every one of which neighbours every
// other, shaped as a compiled SHDS street is: home h has one level
// variable per window (levels caps), two interior actions per window
// tied to the level by a hard link (the draw must fit the cap) and
// priced, an own peak term per level, and between every two homes and
// every window the cross part of the peak term,
// 2·coef·cap_h·cap_g (devices/compile between()).
func completeStreet(homes, windows int, seed uint64) *mva.Problem {
	rng := rand.New(rand.NewPCG(seed, 11))
	const levels = 3
	p := &mva.Problem{Name: fmt.Sprintf("complete street of %d", homes)}
	lv := make([][]int, homes)
	caps := make([][][]float64, homes)
	dom := func(n int) []string {
		d := make([]string, n)
		for i := range d {
			d[i] = fmt.Sprint(i)
		}
		return d
	}
	for h := range homes {
		p.Agents = append(p.Agents, mva.Agent{Name: fmt.Sprintf("h%d", h+1)})
		for w := range windows {
			lv[h] = append(lv[h], len(p.Variables))
			p.Variables = append(p.Variables, mva.Variable{Name: fmt.Sprintf("h%d/level@%d", h+1, w), Domain: dom(levels), Agent: h})
			c := make([]float64, levels)
			for k := range c {
				c[k] = 0.1 * float64(1+k+rng.IntN(3)) // deci-kWh, as SHDS
			}
			caps[h] = append(caps[h], c)
			own := make([]float64, levels)
			for k, v := range c {
				own[k] = 3.7 * v * v
			}
			p.Functions = append(p.Functions, mva.Function{Name: "own peak", Scope: []int{lv[h][w]}, Costs: own})
			var acts []int
			for range 2 {
				acts = append(acts, len(p.Variables))
				p.Variables = append(p.Variables, mva.Variable{Name: fmt.Sprintf("h%d/a%d@%d", h+1, len(acts), w), Domain: dom(2), Agent: h})
			}
			price := 0.198 + 0.05*rng.Float64()
			p.Functions = append(p.Functions, mva.Function{Name: "price", Scope: acts, Costs: []float64{0, price, price, 2 * price}})
			link := make([]float64, 4*levels)
			for a := range 4 {
				draw := 0.1 * float64(a&1+a>>1)
				for k := range levels {
					if draw > c[k]+1e-9 {
						link[a*levels+k] = mva.Hard
					}
				}
			}
			p.Functions = append(p.Functions, mva.Function{Name: "link", Scope: append(acts, lv[h][w]), Costs: link})
		}
		// A rule: the home must run at least once over the horizon (a
		// function over a window's actions of the first and last window).
		first, last := lv[h][0]+1, lv[h][windows-1]+1
		p.Functions = append(p.Functions, mva.Function{Name: "rule", Scope: []int{first, last}, Costs: []float64{mva.Hard, 0, 0, 0}})
	}
	for w := range windows {
		for h := range homes {
			for g := h + 1; g < homes; g++ {
				costs := make([]float64, levels*levels)
				for i, a := range caps[h][w] {
					for j, b := range caps[g][w] {
						costs[i*levels+j] = 2 * 3.7 * a * b
					}
				}
				p.Functions = append(p.Functions, mva.Function{Name: "peak", Scope: []int{lv[h][w], lv[g][w]}, Costs: costs})
			}
		}
	}
	return p
}

// TestResponseAggregates checks the response problems of a complete
// street: a home's best-response problem, and every block problem of its
// block descent, hold the same variables and functions whatever the
// street's length (one aggregate per window of the other homes' peak
// terms, not one context variable and one function per other home and
// window, which grew with n: 5,700 of each per home at 474 SHDS homes);
// and the best responses, solved on the aggregates, are the enumeration's
// and the brute-force truth's (the lowest-index minimiser of ℓ_i, the
// gain ℓ_i(cur) − min ℓ_i), with bucket elimination and with AOBB.
func TestResponseAggregates(t *testing.T) {
	ctx := context.Background()
	const windows = 3
	type size struct{ vars, funcs, blockIn int }
	var sizes []size
	var cases, moved int
	for _, homes := range []int{3, 6, 14} {
		p := completeStreet(homes, windows, uint64(homes))
		solver := func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("be", lp) }
		nodes, _, err := mva.BuildNodes(ctx, mva.Decompose(p), solver, false, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		exactNodes(nodes)
		rng := rand.New(rand.NewPCG(uint64(homes), 5))
		for _, n := range nodes {
			nb, err := localsearch.New(n)
			if err != nil {
				t.Fatal(err)
			}
			if len(nb.Neighbours) != homes-1 || len(nb.SlotDomains) != (homes-1)*windows {
				t.Fatalf("%d homes: home %d has %d neighbours and %d context slots", homes, n.ID, len(nb.Neighbours), len(nb.SlotDomains))
			}
			rowCost := func(ctx context.Context, row int) (localsearch.Cost, error) {
				return localsearch.RowCost(ctx, n.Local, row)
			}
			enum, err := localsearch.NewResponder(n, nb, rowCost, localsearch.ResponseConfig{Mode: localsearch.ResponseEnumerate, BlockEntries: 1})
			if err != nil {
				t.Fatal(err)
			}
			solvers := map[string]*localsearch.Responder{}
			for name, entries := range map[string]int{"be": localsearch.DefaultResponseEntries, "aobb": 0} {
				if solvers[name], err = localsearch.NewResponder(n, nb, rowCost, localsearch.ResponseConfig{Mode: localsearch.ResponseSolve, Entries: entries, BlockEntries: 1}); err != nil {
					t.Fatal(err)
				}
			}
			blocks, err := localsearch.NewBlockResponder(n, nb, rowCost, 1)
			if err != nil {
				t.Fatal(err)
			}
			if n.ID == 0 {
				vars, funcs, err := solvers["be"].ResponseSize()
				if err != nil {
					t.Fatal(err)
				}
				sz := size{vars, funcs, 0}
				for _, in := range blocks.BlockInputs() {
					sz.blockIn = max(sz.blockIn, in)
				}
				sizes = append(sizes, sz)
			}
			bf := local.NewBruteForce(n.Local.LP)
			for draw := range 6 {
				assign := drawContext(rng, p, nb)
				cur := rng.IntN(nb.Rows())
				curCost := truthEll(ctx, t, n, bf, assign, cur)
				want, wantCost := cur, curCost
				for row := range nb.Rows() {
					if c := truthEll(ctx, t, n, bf, assign, row); c.Less(wantCost) {
						want, wantCost = row, c
					}
				}
				wantGain := curCost.Sub(wantCost)
				where := fmt.Sprintf("%d homes, home %d, draw %d (cur %d)", homes, n.ID, draw, cur)
				row, gain, err := enum.BestMove(ctx, cur, nb.Ctx)
				if err != nil {
					t.Fatal(err)
				}
				if row != want {
					t.Errorf("%s: enumeration row %d, brute force %d", where, row, want)
				}
				for name, r := range solvers {
					srow, sgain, err := r.BestMove(ctx, cur, nb.Ctx)
					if err != nil {
						t.Fatal(err)
					}
					// ℓ_i's pairs give both gains: the same row, the same
					// gain, bit for bit.
					if srow != row || sgain != gain {
						t.Errorf("%s: %s: row %d gain %v, enumeration row %d gain %v", where, name, srow, sgain, row, gain)
					}
				}
				if gain.Hard != wantGain.Hard || abs(gain.Soft-wantGain.Soft) > 1e-9 {
					t.Errorf("%s: gain %v, brute force %v", where, gain, wantGain)
				}
				// Block descent: never worse than staying, never better
				// than the best response, its gain the ℓ difference.
				brow, bgain, err := blocks.BestMove(ctx, cur, nb.Ctx)
				if err != nil {
					t.Fatal(err)
				}
				if got := curCost.Sub(truthEll(ctx, t, n, bf, assign, brow)); bgain.Less(localsearch.Cost{}) || gain.Less(bgain) || bgain.Hard != got.Hard || abs(bgain.Soft-got.Soft) > 1e-9 {
					t.Errorf("%s: block row %d gain %v (ℓ difference %v), best gain %v", where, brow, bgain, got, gain)
				}
				cases++
				if want != cur {
					moved++
				}
			}
		}
	}
	for _, s := range sizes[1:] {
		if s != sizes[0] {
			t.Errorf("response problem sizes (variables, functions, largest block input) grow with the street: %+v", sizes)
			break
		}
	}
	t.Logf("%d responses, %d moves; response problem sizes %+v", cases, moved, sizes)
	if moved < cases/4 {
		t.Errorf("only %d of %d responses moved", moved, cases)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
