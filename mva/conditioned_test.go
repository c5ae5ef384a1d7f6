package mva_test

import (
	"math"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
)

// TestConditionedMatchesEval checks Conditioned against the local
// problem's own evaluation: for seeded random problems, every agent's
// subproblem, a few boundary assignments and every interior assignment,
// the conditioned problem's cost (Offset included) equals lp.Eval of the
// boundary followed by the interior values, hard entries included.
func TestConditionedMatchesEval(t *testing.T) {
	checked, bounded := 0, 0
	for seed := range int64(60) {
		p := randprob.New(seed, randprob.Options{
			Agents: 2 + int(seed%2), Vars: 5 + int(seed%5), MinDomain: 2, MaxDomain: 3, MaxArity: 3,
			Functions: 5 + int(seed%6), HardProb: 0.2, IntCosts: seed%2 == 0, MaxCost: 9, Locality: 0.6,
		})
		d := mva.Decompose(p)
		for i := range d.Subs {
			lp := mva.NewLocalProblem(p, &d.Subs[i])
			if lp.NB > 0 {
				bounded++
			}
			rows, err := lp.Rows()
			if err != nil {
				t.Fatal(err)
			}
			for row := 0; row < rows; row += 1 + rows/3 {
				b := make([]int, lp.NB)
				rest := row
				for k := lp.NB - 1; k >= 0; k-- {
					b[k] = rest % lp.Domains[k]
					rest /= lp.Domains[k]
				}
				q, err := lp.Conditioned(b)
				if err != nil {
					t.Fatalf("seed %d agent %d: %v", seed, i, err)
				}
				if len(q.Variables) != lp.NumInterior() {
					t.Fatalf("seed %d agent %d: %d variables, want %d", seed, i, len(q.Variables), lp.NumInterior())
				}
				full := make([]int, len(lp.Vars))
				copy(full, b)
				in := make([]int, lp.NumInterior())
				for {
					copy(full[lp.NB:], in)
					want := lp.Eval(full)
					got, err := q.Eval(in)
					if err != nil {
						t.Fatalf("seed %d agent %d: %v", seed, i, err)
					}
					if mva.IsHard(want) != mva.IsHard(got) || (!mva.IsHard(want) && math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want))) {
						t.Fatalf("seed %d agent %d row %d at %v: conditioned %v, lp.Eval %v", seed, i, row, in, got, want)
					}
					checked++
					k := len(in) - 1
					for ; k >= 0; k-- {
						if in[k]++; in[k] < lp.Domains[lp.NB+k] {
							break
						}
						in[k] = 0
					}
					if k < 0 {
						break
					}
				}
			}
		}
	}
	if checked < 1000 || bounded < 20 {
		t.Fatalf("only %d assignments checked, %d subproblems with a boundary", checked, bounded)
	}
}

// TestConditionedRefuses checks that a boundary of the wrong length or
// with a value outside its domain is an error, not a panic.
func TestConditionedRefuses(t *testing.T) {
	for seed := range int64(20) {
		p := randprob.New(seed, randprob.Options{Agents: 2, Vars: 6, MinDomain: 2, MaxDomain: 2, MaxArity: 2, Functions: 8, Locality: 0.5})
		d := mva.Decompose(p)
		for i := range d.Subs {
			lp := mva.NewLocalProblem(p, &d.Subs[i])
			if lp.NB == 0 {
				continue
			}
			if _, err := lp.Conditioned(make([]int, lp.NB+1)); err == nil {
				t.Error("a boundary one value too long is accepted")
			}
			b := make([]int, lp.NB)
			b[0] = lp.Domains[0]
			if _, err := lp.Conditioned(b); err == nil {
				t.Error("a boundary value outside its domain is accepted")
			}
			return
		}
	}
	t.Fatal("no subproblem of 20 seeds has a boundary")
}
