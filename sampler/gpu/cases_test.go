package gpu

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/internal/samplertest"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/sampler"
)

// Test problems and helpers shared by the emulator tests (default build)
// and the device tests (cuda build).

// kinds lists every sampler configuration: the transition kind and the
// CPU sampler that is the reference.
var kinds = []struct {
	name string
	kind int
	opts func(sampler.Options) sampler.Options
}{
	{"gibbs", kindGibbs, func(o sampler.Options) sampler.Options { return o }},
	{"mh-normal", kindNormal, func(o sampler.Options) sampler.Options { o.Proposal = sampler.ProposalNormal; return o }},
	{"mh-discrete", kindDiscrete, func(o sampler.Options) sampler.Options { o.Proposal = sampler.ProposalDiscrete; return o }},
}

// cpuFor returns the CPU sampler of kinds[k] under o.
func cpuFor(t testing.TB, k int, lp *mva.LocalProblem, o sampler.Options) interface {
	mva.LocalSolver
	mva.TableSolver
	Options() sampler.Options
} {
	t.Helper()
	o = kinds[k].opts(o)
	if kinds[k].kind == kindGibbs {
		s, err := sampler.NewGibbs(lp, o)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s, err := sampler.NewMH(lp, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// cpuTable fills lp's table with the CPU sampler of kinds[k] and returns
// it with the sampler's checks.
func cpuTable(t testing.TB, k int, lp *mva.LocalProblem, o sampler.Options) (*mva.Table, int64) {
	t.Helper()
	s := cpuFor(t, k, lp, o)
	tab, err := mva.NewTable(lp)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SolveTable(context.Background(), tab); err != nil {
		t.Fatal(err)
	}
	return tab, s.Checks()
}

// sameTable reports the first row where a and b differ in cost (bit for
// bit) or assignment, −1 if none.
func sameTable(a, b *mva.Table) int {
	for r := range a.Costs {
		if math.Float64bits(a.Costs[r]) != math.Float64bits(b.Costs[r]) || !slices.Equal(a.Interior(r), b.Interior(r)) {
			return r
		}
	}
	return -1
}

// randomLocals returns the local problems with interiors of seeded random
// problems: whole and fractional costs, with and without Hard entries,
// domains of 2 to 5 values.
func randomLocals(seeds int) []*mva.LocalProblem {
	var lps []*mva.LocalProblem
	for seed := range int64(seeds) {
		p := randprob.New(seed, randprob.Options{
			Agents: 3, Vars: 14, MinDomain: 2, MaxDomain: 5, MaxArity: 3,
			Functions: 20, IntCosts: seed%2 == 0, MaxCost: 10,
			HardProb: 0.08 * float64(seed%3), Locality: 0.8,
		})
		for _, lp := range samplertest.Locals(p) {
			if lp.NumInterior() > 0 {
				lps = append(lps, lp)
			}
		}
	}
	return lps
}

// withDefaults returns o with the CPU samplers' defaults filled in.
func withDefaults(t testing.TB, lp *mva.LocalProblem, k int, o sampler.Options) sampler.Options {
	t.Helper()
	return cpuFor(t, k, lp, o).Options()
}
