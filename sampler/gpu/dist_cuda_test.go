//go:build cuda

package gpu

import (
	"context"
	"testing"

	"github.com/hearth-dcop/hearth/internal/samplertest"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/sampler"
)

// The distribution tests of sampler/dist_test.go, on the device: the same
// samplertest.Stationary and LeavesInfeasibility (agent, rows,
// temperatures, seeds, chain lengths, thinning, statistic and thresholds),
// with the states counted by the kernels (histogram) instead of sampler's
// trace hook.

// kindNames returns the names of kinds, in order.
func kindNames() []string {
	var names []string
	for _, k := range kinds {
		names = append(names, k.name)
	}
	return names
}

// record runs chain c on row c.Row of lp on the device and counts the
// interior states after every c.Thin-th trial past c.Burn.
func record(t *testing.T, lp *mva.LocalProblem, c samplertest.Chain) []uint64 {
	t.Helper()
	o := sampler.Options{Seed: c.Seed, Runs: c.Runs, Trials: c.Trials, Temperature: c.Temperature, RepairSweeps: c.RepairSweeps}
	e := gpuEngine(t, c.Kind, lp, o, 0, false)
	e.pl.setFlag(fNoHastings, c.NoHastings)
	e.hist = &histogram{burn: c.Burn, thin: c.Thin}
	b := make([]int, lp.NB)
	lp.DecodeRow(c.Row, b)
	if _, err := e.solveRow(context.Background(), b, make([]int, lp.NumInterior())); err != nil {
		t.Fatal(err)
	}
	return e.hist.counts
}

// TestStationaryDistribution is samplertest.Stationary on the device.
func TestStationaryDistribution(t *testing.T) {
	lp := samplertest.DistProblem(t)
	samplertest.Stationary(t, lp, kindNames(), func(c samplertest.Chain) []uint64 { return record(t, lp, c) })
}

// TestLeavesInfeasibility: with repair off, chains that start infeasible
// still reach π.
func TestLeavesInfeasibility(t *testing.T) {
	lp := samplertest.DistProblem(t)
	samplertest.LeavesInfeasibility(t, lp, kindNames(), func(c samplertest.Chain) []uint64 { return record(t, lp, c) })
}
