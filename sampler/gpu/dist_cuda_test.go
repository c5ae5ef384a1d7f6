//go:build cuda

package gpu

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/sampler"
)

// The distribution test of sampler/dist_test.go, on the device: the same
// agent, rows, temperatures, seeds, chain lengths, thinning, statistic and
// thresholds, with the states counted by the kernels (histogram) instead
// of sampler's trace hook. chiLimit, target and chiSquare are copies of
// that file's (test helpers are not importable).

// chiLimit is the chi-square quantile of df degrees of freedom at upper
// tail probability 10⁻⁶ (Wilson–Hilferty, z = 4.753).
func chiLimit(df int) float64 {
	k := float64(df)
	a := 2 / (9 * k)
	return k * math.Pow(1-a+4.753*math.Sqrt(a), 3)
}

// target returns π over the interior states of row row at temperature
// tau, by enumeration.
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

// chiSquare returns Pearson's statistic of counts against pi and its
// degrees of freedom; a count in a state of probability 0 makes it +Inf.
func chiSquare(counts []uint64, pi []float64) (float64, int) {
	total := uint64(0)
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

// record runs kinds[k] on row of lp on the device and counts the states
// after every thin-th trial past burn.
func record(t *testing.T, k int, lp *mva.LocalProblem, row int, o sampler.Options, burn, thin int, noHastings bool) []uint64 {
	t.Helper()
	e := gpuEngine(t, k, lp, o, 0, false)
	e.pl.setFlag(fNoHastings, noHastings)
	e.hist = &histogram{burn: burn, thin: thin}
	b := make([]int, lp.NB)
	lp.DecodeRow(row, b)
	if _, err := e.solveRow(context.Background(), b, make([]int, lp.NumInterior())); err != nil {
		t.Fatal(err)
	}
	return e.hist.counts
}

// TestStationaryDistribution is sampler's, on the device: each sampler's
// visited states against π(z) ∝ exp(−cost(z)/τ) by enumeration, a
// chi-square test at level 10⁻⁶, with the negative controls that must
// fail it: the same samples against π at a temperature 25% off, and the
// normal proposal without its Hastings correction.
func TestStationaryDistribution(t *testing.T) {
	lp := distProblem(t)
	thin := []int{4, 8, 16}
	cases := []struct {
		row int
		tau float64
	}{{0, 1}, {0, 0.5}, {1, 1}}
	for k := range kinds {
		for _, c := range cases {
			name := fmt.Sprintf("%s row %d τ=%v", kinds[k].name, c.row, c.tau)
			o := sampler.Options{Seed: uint64(10*k + c.row), Runs: 40, Trials: 1000 * thin[k], Temperature: c.tau}
			counts := record(t, k, lp, c.row, o, 100, thin[k], false)
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
	o := sampler.Options{Seed: 7, Runs: 40, Trials: 8000}
	counts := record(t, 1, lp, 0, o, 100, 8, true)
	chi, df := chiSquare(counts, target(lp, 0, 1))
	t.Logf("mh-normal without Hastings correction: χ² = %.1f (limit %.1f)", chi, chiLimit(df))
	if chi < 4*chiLimit(df) {
		t.Errorf("mh-normal without Hastings correction: χ² = %.1f, expected far above %.1f", chi, chiLimit(df))
	}
}

// TestLeavesInfeasibility: with repair off, chains that start infeasible
// still reach π.
func TestLeavesInfeasibility(t *testing.T) {
	lp := distProblem(t)
	for k := range kinds {
		o := sampler.Options{Seed: 5, Runs: 40, Trials: 8000, RepairSweeps: -1}
		counts := record(t, k, lp, 1, o, 100, 16, false)
		chi, df := chiSquare(counts, target(lp, 1, 1))
		if lim := chiLimit(df); chi > lim {
			t.Errorf("%s without repair: χ² = %.1f > %.1f", kinds[k].name, chi, lim)
		}
	}
}
