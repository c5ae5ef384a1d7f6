package local

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
)

// TestBEHoldRelease solves bursts of rows with one BE held for each burst
// and released after it, as a best response does, and checks every answer
// (cost and interior assignment, bit for bit) against a BE that solves
// each row from scratch. Between bursts one function entry is edited in
// place: a released BE must see it. Within a burst the held BE must keep
// its tables (fewer entries read than from scratch, over the subproblems),
// and a released one must hold none.
func TestBEHoldRelease(t *testing.T) {
	ctx := context.Background()
	checked := 0
	var heldReads, fullReads int64
	seededSubs(80, func(seed int64, i int, lp *mva.LocalProblem) {
		held, err := NewBE(lp, BEOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var hs mva.HoldingSolver = held
		rng := rand.New(rand.NewPCG(uint64(seed), uint64(i)))
		got, want := make([]int, lp.NumInterior()), make([]int, lp.NumInterior())
		b := make([]int, lp.NB)
		for burst := range 6 {
			if burst > 0 && len(lp.Funcs) > 0 {
				// An edit in place between bursts, as the SH-MGM
				// baseline makes between its solves.
				f := lp.Funcs[rng.IntN(len(lp.Funcs))].Costs
				f[rng.IntN(len(f))] = float64(rng.IntN(10))
			}
			hs.Hold()
			for n := range 4 {
				// A burst's rows differ in one variable, as a best
				// response's restricted solves do in one mask.
				if n == 0 {
					for k := range b {
						b[k] = rng.IntN(lp.Domains[k])
					}
				} else {
					k := rng.IntN(lp.NB)
					b[k] = rng.IntN(lp.Domains[k])
				}
				wc, freshChecks := fromScratch(t, lp, b, want)
				before := held.Checks()
				gc, err := held.SolveRow(ctx, b, got)
				if err != nil {
					t.Fatal(err)
				}
				if n > 0 {
					heldReads += held.Checks() - before
					fullReads += freshChecks
				}
				if math.Float64bits(gc) != math.Float64bits(wc) || !slices.Equal(got, want) {
					t.Fatalf("seed %d agent %d, burst %d row %d %v: held %v %v, from scratch %v %v", seed, i, burst, n, b, gc, got, wc, want)
				}
			}
			hs.Release()
			if held.row.entries() > 0 && slices.ContainsFunc(held.row.args, func(a []int32) bool { return a != nil }) {
				t.Fatalf("seed %d agent %d: a released BE still holds bucket tables", seed, i)
			}
			if slices.ContainsFunc(held.snap, func(s []float64) bool { return s != nil }) {
				t.Fatalf("seed %d agent %d: a released BE still holds copies of the costs", seed, i)
			}
		}
		// Unheld again, the BE watches edits in place as before.
		if len(lp.Funcs) > 0 {
			for range 3 {
				f := lp.Funcs[rng.IntN(len(lp.Funcs))].Costs
				f[rng.IntN(len(f))] = float64(rng.IntN(10))
				wc, _ := fromScratch(t, lp, b, want)
				gc, err := held.SolveRow(ctx, b, got)
				if err != nil {
					t.Fatal(err)
				}
				if math.Float64bits(gc) != math.Float64bits(wc) || !slices.Equal(got, want) {
					t.Fatalf("seed %d agent %d, after release, row %v: %v %v, from scratch %v %v", seed, i, b, gc, got, wc, want)
				}
			}
		}
		checked++
	})
	if checked < 40 {
		t.Fatalf("only %d subproblems checked", checked)
	}
	if heldReads >= fullReads {
		t.Errorf("held tables read %d entries, solving from scratch %d", heldReads, fullReads)
	}
	t.Logf("%d subproblems: %d entries read held, %d from scratch", checked, heldReads, fullReads)
}

// seededSubs calls f with every subproblem that has interior and boundary
// variables, of seeded random problems 0..seeds−1 small enough for brute
// force (two agents, 5 to 11 variables of 2 to 4 values): the rows the
// memo and held-table tests compare with solving from scratch.
func seededSubs(seeds int64, f func(seed int64, i int, lp *mva.LocalProblem)) {
	for seed := range seeds {
		p := randprob.New(seed, randprob.Options{
			Agents: 2, Vars: 5 + int(seed%7), MinDomain: 2, MaxDomain: 4, MaxArity: 3,
			Functions: 5 + int(seed%9), HardProb: 0.1, IntCosts: seed%2 == 0, MaxCost: 9, Locality: 0.7,
		})
		if space(p) > 1<<14 {
			continue
		}
		d := mva.Decompose(p)
		for i := range d.Subs {
			lp := mva.NewLocalProblem(p, &d.Subs[i])
			if lp.NumInterior() == 0 || lp.NB == 0 {
				continue
			}
			f(seed, i, lp)
		}
	}
}

// fromScratch solves row b of lp with a new BE into want and returns its
// cost and the entries it read.
func fromScratch(t *testing.T, lp *mva.LocalProblem, b, want []int) (float64, int64) {
	t.Helper()
	fresh, err := NewBE(lp, BEOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wc, err := fresh.SolveRow(context.Background(), b, want)
	if err != nil {
		t.Fatal(err)
	}
	return wc, fresh.Checks()
}
