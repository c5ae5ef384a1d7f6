package sampler

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/internal/samplertest"
	"github.com/hearth-dcop/hearth/mva"
)

// TestConditionalSweepIsGibbsTrial: Sweep(z, run, t) applied to the state
// a Gibbs chain had after trial t−1 gives, bit for bit, its state after
// trial t — the MVA-D-Gibbs interior moves are the Gibbs sampler's own.
func TestConditionalSweepIsGibbsTrial(t *testing.T) {
	lp := samplertest.DistProblem(t)
	const trials = 60
	for _, tau := range []float64{1, 0.3} {
		o := Options{Seed: 99, Runs: 3, Trials: trials, Temperature: tau, Workers: 1}
		g, err := NewGibbs(lp, o)
		if err != nil {
			t.Fatal(err)
		}
		// states[run][t] is the interior after trial t of row 1.
		states := make([][][]int, o.Runs)
		for r := range states {
			states[r] = make([][]int, trials+1)
		}
		g.e.trace = func(row, run, t int, in []int) {
			if row == 1 {
				states[run][t] = slices.Clone(in)
			}
		}
		b := make([]int, lp.NB)
		lp.DecodeRow(1, b)
		if _, err := g.SolveRow(t.Context(), b, make([]int, lp.NumInterior())); err != nil {
			t.Fatal(err)
		}
		c, err := NewConditional(lp, tau, o.Seed)
		if err != nil {
			t.Fatal(err)
		}
		z := make([]int, len(lp.Vars))
		for run := range o.Runs {
			for step := 2; step <= trials; step++ {
				copy(z, b)
				copy(z[lp.NB:], states[run][step-1])
				c.Sweep(z, uint32(run), uint32(step))
				if !slices.Equal(z[lp.NB:], states[run][step]) {
					t.Fatalf("τ=%v run %d trial %d: sweep gives %v, the Gibbs chain %v", tau, run, step, z[lp.NB:], states[run][step])
				}
				if !slices.Equal(z[:lp.NB], b) {
					t.Fatalf("sweep changed the boundary to %v", z[:lp.NB])
				}
			}
		}
		if c.Checks() == 0 {
			t.Error("no checks counted")
		}
	}
}

// TestConditionalEnergies: for every local variable, boundary ones
// included, the energies differ between values exactly as the whole local
// assignment's cost does (lp.Eval), and count its Hard entries.
func TestConditionalEnergies(t *testing.T) {
	lp := samplertest.DistProblem(t)
	c, err := NewConditional(lp, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	z := make([]int, len(lp.Vars))
	for range 200 {
		for k := range z {
			z[k] = rng.IntN(lp.Domains[k])
		}
		for k := range z {
			viol, cost := c.Energies(k, z)
			viol, cost = slices.Clone(viol), slices.Clone(cost)
			x := z[k]
			var v0 int
			var c0 float64
			for y := range lp.Domains[k] {
				z[k] = y
				hard, soft := 0, 0.0
				for _, f := range lp.Funcs {
					idx := 0
					for _, v := range f.Scope {
						idx = idx*lp.Domains[v] + z[v]
					}
					if mva.IsHard(f.Costs[idx]) {
						hard++
					} else {
						soft += f.Costs[idx]
					}
				}
				if ev, ec := c.Eval(z); ev != hard || ec != soft {
					t.Fatalf("Eval = (%d, %v), want (%d, %v)", ev, ec, hard, soft)
				}
				if hard == 0 && soft != lp.Eval(z) {
					t.Fatalf("Eval's soft part %v, lp.Eval %v", soft, lp.Eval(z))
				}
				// The functions without x_k add the same to every y.
				if y == 0 {
					v0, c0 = hard-int(viol[0]), soft-cost[0]
				} else if hard-int(viol[y]) != v0 || math.Abs(soft-cost[y]-c0) > 1e-12 {
					t.Fatalf("variable %d value %d: energy (%d, %v) is not the assignment's (%d, %v) minus a constant",
						k, y, viol[y], cost[y], hard, soft)
				}
			}
			z[k] = x
		}
	}
}

func TestConditionalBadInput(t *testing.T) {
	lp := samplertest.DistProblem(t)
	for _, tau := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if _, err := NewConditional(lp, tau, 1); err == nil {
			t.Errorf("temperature %v accepted", tau)
		}
	}
	if _, err := NewConditional(nil, 1, 1); err == nil {
		t.Error("nil local problem accepted")
	}
	big := &mva.LocalProblem{Vars: []int{0}, Domains: []int{MaxDomain + 1}, NB: 1}
	if _, err := NewConditional(big, 1, 1); err == nil {
		t.Error("boundary domain above MaxDomain accepted")
	}
}
