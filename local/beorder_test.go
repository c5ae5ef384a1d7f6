package local

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
)

// naiveCost is orderCost recomputed on neighbour maps, apart from the
// bit rows of coster: eliminating v joins Π of the domains of v and its
// neighbours then, keeps a table over the neighbours, and makes them a
// clique.
func naiveCost(nvars int, scopes [][]int, doms []int, order []int) orderCost {
	adj := make([]map[int]bool, nvars)
	for v := range adj {
		adj[v] = map[int]bool{}
	}
	for _, sc := range scopes {
		for _, u := range sc {
			for _, w := range sc {
				if u != w {
					adj[u][w] = true
				}
			}
		}
	}
	var c orderCost
	for _, v := range order {
		n := 1.0
		var nb []int
		for u := range adj[v] {
			nb = append(nb, u)
			n *= float64(doms[u])
		}
		c.entries += n
		c.joins += n * float64(doms[v])
		c.width = max(c.width, len(nb))
		for _, a := range nb {
			delete(adj[a], v)
			for _, b := range nb {
				if a != b {
					adj[a][b] = true
				}
			}
		}
		adj[v] = nil
	}
	return c
}

// TestOrderCost checks coster against naiveCost on seeded random graphs
// (over 64 variables too, two words a row) and random orders of some of
// their variables.
func TestOrderCost(t *testing.T) {
	for seed := range 40 {
		r := rand.New(rand.NewPCG(uint64(seed), 3))
		nv := 2 + r.IntN(90)
		doms := make([]int, nv)
		for v := range doms {
			doms[v] = 1 + r.IntN(12)
		}
		var scopes [][]int
		for range r.IntN(2 * nv) {
			scopes = append(scopes, r.Perm(nv)[:1+r.IntN(min(nv, 3))])
		}
		order := r.Perm(nv)[:r.IntN(nv+1)]
		got, want := costOf(nv, scopes, doms, order), naiveCost(nv, scopes, doms, order)
		if got.width != want.width || math.Abs(got.joins-want.joins) > 1e-9*want.joins || math.Abs(got.entries-want.entries) > 1e-9*want.entries {
			t.Errorf("seed %d: cost %+v, want %+v", seed, got, want)
		}
	}
}

// TestBEOrderSearch: on seeded random problems whose min-fill order joins
// more than beSearchFrom entries, beOrder returns a permutation of the
// variables to eliminate that joins no more and keeps no more, and bucket
// elimination in it finds min-fill's optimum (rows, and the MVA table over
// a boundary), its assignment costing what it reports. Some problem must
// get another order than min-fill's, or the search is not tested.
func TestBEOrderSearch(t *testing.T) {
	ctx := context.Background()
	searched, solved := 0, 0
	t0 := time.Now()
	for seed := int64(0); seed < 400 && solved < 3; seed++ {
		p := randprob.New(seed, randprob.Options{Agents: 2, Vars: 22, MinDomain: 3, MaxDomain: 16, MaxArity: 3, Functions: 28, Locality: 0.7})
		p.SearchOrder = true
		// The whole problem as one row, and its MVA table over two
		// boundary variables.
		part := mva.Whole(p)
		part.Boundary, part.Interior = part.Interior[:2], part.Interior[2:]
		for _, sub := range []*mva.Subproblem{mva.Whole(p), part} {
			lp := mva.NewLocalProblem(p, sub)
			var scopes [][]int
			for _, f := range lp.Funcs {
				scopes = append(scopes, f.Scope)
			}
			interior := make([]int, lp.NumInterior())
			for k := range interior {
				interior[k] = lp.NB + k
			}
			g := lp.PrimalGraph()
			mf, _ := g.MinFill(interior)
			base := costOf(len(lp.Vars), scopes, lp.Domains, mf)
			if rows, err := lp.Rows(); err != nil || rows > 1<<10 || base.joins < beSearchFrom || base.joins > 1<<22 {
				continue // nothing to search, or too long a test
			}
			order, width, cost := beOrder(len(lp.Vars), scopes, lp.Domains, interior)
			if s := slices.Sorted(slices.Values(order)); !slices.Equal(s, interior) {
				t.Fatalf("seed %d: order %v is not a permutation of %v", seed, order, interior)
			}
			if want := naiveCost(len(lp.Vars), scopes, lp.Domains, order); width != want.width || math.Abs(cost.joins-want.joins) > 1e-9*want.joins {
				t.Errorf("seed %d: cost %+v width %d, recomputed %+v", seed, cost, width, want)
			}
			if cost.joins > base.joins || cost.entries > base.entries {
				t.Errorf("seed %d: order joins %.4g and keeps %.4g, min-fill's %.4g and %.4g", seed, cost.joins, cost.entries, base.joins, base.entries)
			}
			t.Logf("seed %d, boundary %d: joins %.3g, min-fill's %.3g (%v)", seed, lp.NB, cost.joins, base.joins, time.Since(t0))
			solved++
			if !slices.Equal(order, mf) {
				searched++
			}
			tables := [2]*mva.Table{}
			for i, minFill := range []bool{true, false} {
				be, err := NewBE(lp, BEOptions{MinFill: minFill})
				if err != nil {
					t.Fatal(err)
				}
				if tables[i], err = mva.NewTable(lp); err != nil {
					t.Fatal(err)
				}
				if err := tables[i].Fill(ctx, be); err != nil {
					t.Fatal(err)
				}
			}
			// Every row's cost, and a sample's assignments.
			stride := max(1, len(tables[0].Costs)/64)
			for row, want := range tables[0].Costs {
				got := tables[1].Costs[row]
				if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
					t.Fatalf("seed %d, boundary %d, row %d: cost %.12g, min-fill's %.12g", seed, lp.NB, row, got, want)
				}
				if row%stride != 0 {
					continue
				}
				bnd := make([]int, lp.NB)
				lp.DecodeRow(row, bnd)
				assign := append(bnd, make([]int, lp.NumInterior())...)
				for k, v := range tables[1].Interior(row) {
					assign[lp.NB+k] = int(v)
				}
				if !mva.IsHard(want) && math.Abs(lp.Eval(assign)-got) > 1e-9*math.Max(1, math.Abs(got)) {
					t.Fatalf("seed %d, row %d: the assignment costs %.12g, reported %.12g", seed, row, lp.Eval(assign), got)
				}
			}
		}
	}
	if searched == 0 {
		t.Error("no problem got another order than min-fill's: the search went untested")
	}
	t.Logf("%d problems in another order than min-fill's", searched)
}

// TestBEOrderOptIn: bucket elimination searches its order only where the
// problem allows it (mva.Problem.SearchOrder) and BEOptions.MinFill is
// not set; elsewhere it eliminates in min-fill's order, as before.
func TestBEOrderOptIn(t *testing.T) {
	p := randprob.New(15, randprob.Options{Agents: 2, Vars: 22, MinDomain: 3, MaxDomain: 16, MaxArity: 3, Functions: 28, Locality: 0.7})
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	mf, _ := lp.PrimalGraph().MinFill(lp.Sub.Interior)
	for _, tc := range []struct {
		search, minFill, want bool
	}{{false, false, false}, {true, true, false}, {true, false, true}} {
		p.SearchOrder = tc.search
		be, err := NewBE(lp, BEOptions{MinFill: tc.minFill})
		if err != nil {
			t.Fatal(err)
		}
		if searched := !slices.Equal(be.rowOrder, mf); searched != tc.want {
			t.Errorf("SearchOrder %v, MinFill %v: another order than min-fill's %v, want %v", tc.search, tc.minFill, searched, tc.want)
		}
	}
}
