package sampler

import (
	"testing"

	"github.com/hearth-dcop/hearth/internal/samplertest"
	"github.com/hearth-dcop/hearth/mva"
)

// kindNames returns the names of kinds, in order.
func kindNames() []string {
	var names []string
	for _, k := range kinds {
		names = append(names, k.name)
	}
	return names
}

// record runs chain c on row c.Row of lp and counts the interior states it
// visits through the trace hook, keeping every c.Thin-th trial after
// c.Burn trials of each run.
func record(t *testing.T, lp *mva.LocalProblem, c samplertest.Chain) []int {
	t.Helper()
	o := Options{Seed: c.Seed, Runs: c.Runs, Trials: c.Trials, Temperature: c.Temperature, RepairSweeps: c.RepairSweeps}
	s, err := kinds[c.Kind].make(lp, o)
	if err != nil {
		t.Fatal(err)
	}
	e := engineOf(s)
	e.noHastings = c.NoHastings
	size := len(samplertest.Target(lp, c.Row, 1))
	// One histogram per run: a run is on one goroutine at a time.
	perRun := make([][]int, o.Runs)
	for r := range perRun {
		perRun[r] = make([]int, size)
	}
	e.trace = func(r, run, t int, in []int) {
		if r == c.Row && t > c.Burn && t%c.Thin == 0 {
			perRun[run][samplertest.StateIndex(lp.Domains[lp.NB:], in)]++
		}
	}
	b := make([]int, lp.NB)
	lp.DecodeRow(c.Row, b)
	if _, err := s.SolveRow(t.Context(), b, make([]int, lp.NumInterior())); err != nil {
		t.Fatal(err)
	}
	counts := make([]int, size)
	for _, h := range perRun {
		for i, n := range h {
			counts[i] += n
		}
	}
	return counts
}

// TestStationaryDistribution is samplertest.Stationary on the CPU
// samplers: each kind's visited states against π(z) ∝ exp(−cost(z)/τ) by
// enumeration, a chi-square test at level 10⁻⁶ with negative controls.
func TestStationaryDistribution(t *testing.T) {
	lp := samplertest.DistProblem(t)
	samplertest.Stationary(t, lp, kindNames(), func(c samplertest.Chain) []int { return record(t, lp, c) })
}

// TestLeavesInfeasibility: with repair off, chains that start infeasible
// must still reach π (the lexicographic energy walks them out).
func TestLeavesInfeasibility(t *testing.T) {
	lp := samplertest.DistProblem(t)
	samplertest.LeavesInfeasibility(t, lp, kindNames(), func(c samplertest.Chain) []int { return record(t, lp, c) })
}
