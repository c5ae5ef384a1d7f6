package sampler

import (
	"fmt"
	"math"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
)

// chiLimit is the chi-square quantile of df degrees of freedom at upper
// tail probability 10⁻⁶ (Wilson–Hilferty approximation, z = 4.753): a
// correct sampler exceeds it with probability about one in a million, so
// a test against it cannot fail by bad luck, yet the wrong targets below
// exceed it many times over, so it cannot pass by accident either.
func chiLimit(df int) float64 {
	k := float64(df)
	a := 2 / (9 * k)
	return k * math.Pow(1-a+4.753*math.Sqrt(a), 3)
}

// distProblem is a small agent: boundary v0 (linked to v5 of another
// agent) and interior v1..v4 with domains 3, 2, 3, 2, soft costs in
// [0, 1.2) and one Hard entry (which removes 6 of the 36 interior
// states), so that every one of the 30 feasible states has a fair
// probability.
func distProblem(t testing.TB) *mva.LocalProblem {
	costs := func(n int, seed float64) []float64 {
		c := make([]float64, n)
		for i := range c {
			// A fixed irregular pattern, not a random one, so that the
			// problem is the same for every run of the test.
			c[i] = 1.2 * math.Mod(float64(i+1)*seed, 1)
		}
		return c
	}
	f12 := costs(6, 0.618)
	f12[5] = mva.Hard // v1 = 2, v2 = 1
	p := newProblem(t, []int{2, 3, 2, 3, 2, 2}, []int{0, 0, 0, 0, 0, 1}, []mva.Function{
		{Scope: []int{0, 5}, Costs: costs(4, 0.3)},
		{Scope: []int{0, 1}, Costs: costs(6, 0.414)},
		{Scope: []int{1, 2}, Costs: f12},
		{Scope: []int{2, 3}, Costs: costs(6, 0.732)},
		{Scope: []int{1, 3, 4}, Costs: costs(18, 0.236)},
		{Scope: []int{4}, Costs: []float64{0.5, 0}},
	})
	return locals(p)[0]
}

// target returns π over the interior states (mixed radix, last fastest)
// of boundary row row at temperature tau, by enumeration.
func target(lp *mva.LocalProblem, row int, tau float64) []float64 {
	n := lp.NumInterior()
	size := 1
	for _, d := range lp.Domains[lp.NB:] {
		size *= d
	}
	a := make([]int, len(lp.Vars))
	lp.DecodeRow(row, a[:lp.NB])
	pi := make([]float64, size)
	z := 0.0
	for s := range pi {
		r := s
		for i := n - 1; i >= 0; i-- {
			d := lp.Domains[lp.NB+i]
			a[lp.NB+i] = r % d
			r /= d
		}
		pi[s] = math.Exp(-lp.Eval(a) / tau)
		z += pi[s]
	}
	for s := range pi {
		pi[s] /= z
	}
	return pi
}

// stateIndex is the mixed-radix index of an interior assignment.
func stateIndex(lp *mva.LocalProblem, in []int) int {
	s := 0
	for i, v := range in {
		s = s*lp.Domains[lp.NB+i] + v
	}
	return s
}

// chiSquare returns Pearson's statistic of counts against pi and its
// degrees of freedom. A count in a state of probability 0 makes it +Inf.
func chiSquare(counts []int, pi []float64) (float64, int) {
	total := 0
	for _, c := range counts {
		total += c
	}
	chi, df := 0.0, -1
	for s, p := range pi {
		if p == 0 {
			if counts[s] > 0 {
				return math.Inf(1), df
			}
			continue
		}
		e := p * float64(total)
		d := float64(counts[s]) - e
		chi += d * d / e
		df++
	}
	return chi, df
}

// record runs sampler k on row of lp and counts the states it visits,
// keeping every thin-th trial after burn trials of each run.
func record(t *testing.T, k int, lp *mva.LocalProblem, row int, o Options, burn, thin int, tweak func(*engine)) []int {
	t.Helper()
	s, err := kinds[k].make(lp, o)
	if err != nil {
		t.Fatal(err)
	}
	e := engineOf(s)
	if tweak != nil {
		tweak(e)
	}
	size := len(target(lp, row, 1))
	// One histogram per run: a run is on one goroutine at a time.
	perRun := make([][]int, o.Runs)
	for r := range perRun {
		perRun[r] = make([]int, size)
	}
	e.trace = func(r, run, t int, in []int) {
		if r == row && t > burn && t%thin == 0 {
			perRun[run][stateIndex(lp, in)]++
		}
	}
	b := make([]int, lp.NB)
	lp.DecodeRow(row, b)
	if _, err := s.SolveRow(t.Context(), b, make([]int, lp.NumInterior())); err != nil {
		t.Fatal(err)
	}
	counts := make([]int, size)
	for _, h := range perRun {
		for i, c := range h {
			counts[i] += c
		}
	}
	return counts
}

// TestStationaryDistribution compares the states visited by long chains
// with π(z) ∝ exp(−cost(z)/τ) by enumeration, for each sampler, on two
// rows and two temperatures: a chi-square test at level 10⁻⁶ (thinned
// chains, so that the samples are close to independent), plus negative
// controls that must fail the same test: the same samples against π at a
// temperature 25% off, and the normal proposal accepted as the paper
// writes it, without the Hastings correction for clamping.
func TestStationaryDistribution(t *testing.T) {
	lp := distProblem(t)
	thin := []int{4, 8, 16} // per kinds entry: MH moves less per trial
	cases := []struct {
		row int
		tau float64
	}{{0, 1}, {0, 0.5}, {1, 1}}
	for k := range kinds {
		for _, c := range cases {
			name := fmt.Sprintf("%s row %d τ=%v", kinds[k].name, c.row, c.tau)
			o := Options{Seed: uint64(10*k + c.row), Runs: 40, Trials: 1000 * thin[k], Temperature: c.tau}
			counts := record(t, k, lp, c.row, o, 100, thin[k], nil)
			chi, df := chiSquare(counts, target(lp, c.row, c.tau))
			lim := chiLimit(df)
			wrong, _ := chiSquare(counts, target(lp, c.row, 1.25*c.tau))
			t.Logf("%s: χ² = %.1f (df %d, limit %.1f); against τ×1.25: %.1f", name, chi, df, lim, wrong)
			if df != 29 {
				t.Fatalf("%d feasible states, want 30", df+1)
			}
			if chi > lim {
				t.Errorf("%s: χ² = %.1f > %.1f: not sampling π", name, chi, lim)
			}
			if wrong < 4*lim {
				t.Errorf("%s: negative control χ² = %.1f, not above 4×%.1f: the test lacks power", name, wrong, lim)
			}
		}
	}

	// Without the Hastings ratio the clamped normal proposal favours the
	// ends of the 3-value domains: the chain misses π.
	o := Options{Seed: 7, Runs: 40, Trials: 8000}
	counts := record(t, 1, lp, 0, o, 100, 8, func(e *engine) { e.noHastings = true })
	chi, df := chiSquare(counts, target(lp, 0, 1))
	t.Logf("mh-normal without Hastings correction: χ² = %.1f (limit %.1f)", chi, chiLimit(df))
	if chi < 4*chiLimit(df) {
		t.Errorf("mh-normal without Hastings correction: χ² = %.1f, expected far above %.1f", chi, chiLimit(df))
	}
}

// TestLeavesInfeasibility: with repair off, chains that start infeasible
// must still reach π (the lexicographic energy walks them out).
func TestLeavesInfeasibility(t *testing.T) {
	lp := distProblem(t)
	for k := range kinds {
		o := Options{Seed: 5, Runs: 40, Trials: 8000, RepairSweeps: -1}
		counts := record(t, k, lp, 1, o, 100, 16, nil)
		chi, df := chiSquare(counts, target(lp, 1, 1))
		if lim := chiLimit(df); chi > lim {
			t.Errorf("%s without repair: χ² = %.1f > %.1f", kinds[k].name, chi, lim)
		}
	}
}
