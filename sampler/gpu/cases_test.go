package gpu

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
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

// newProblem builds a problem from domain sizes, owners and functions;
// variables are "v0", "v1", ….
func newProblem(t testing.TB, doms, owners []int, funcs []mva.Function) *mva.Problem {
	t.Helper()
	p := &mva.Problem{Name: "test"}
	for a := range slices.Max(owners) + 1 {
		p.Agents = append(p.Agents, mva.Agent{Name: "a" + strconv.Itoa(a)})
	}
	for i, d := range doms {
		dom := make([]string, d)
		for j := range dom {
			dom[j] = strconv.Itoa(j)
		}
		p.Variables = append(p.Variables, mva.Variable{Name: "v" + strconv.Itoa(i), Domain: dom, Agent: owners[i]})
	}
	p.Functions = funcs
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return p
}

// locals returns the local problem of every agent of p.
func locals(p *mva.Problem) []*mva.LocalProblem {
	d := mva.Decompose(p)
	var lps []*mva.LocalProblem
	for i := range d.Subs {
		lps = append(lps, mva.NewLocalProblem(p, &d.Subs[i]))
	}
	return lps
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
		for _, lp := range locals(p) {
			if lp.NumInterior() > 0 {
				lps = append(lps, lp)
			}
		}
	}
	return lps
}

// meetingAgent builds an agent like those of the DMCMC meeting-scheduling
// experiments (thesis §5.3; sampler's benchmark agent, with the table size
// as a parameter): 10 interior variables with 12 values, binary functions
// on 70% of their pairs and a unary preference each, whole costs in
// [1, 1000]; plus nb boundary variables of db values, each tied to two
// interior variables and to another agent, so that the MVA table has
// db^nb rows. frac adds a fraction to every cost (sums no longer exact).
func meetingAgent(seed uint64, nb, db int, frac bool) *mva.LocalProblem {
	r := rand.New(rand.NewPCG(seed, 3))
	const ni, di = 10, 12
	p := &mva.Problem{Name: "meeting-like", Agents: []mva.Agent{{Name: "a0"}, {Name: "a1"}}}
	addVar := func(d, agent int) int {
		dom := make([]string, d)
		for i := range dom {
			dom[i] = strconv.Itoa(i)
		}
		p.Variables = append(p.Variables, mva.Variable{Name: "x" + strconv.Itoa(len(p.Variables)), Domain: dom, Agent: agent})
		return len(p.Variables) - 1
	}
	table := func(n int) []float64 {
		c := make([]float64, n)
		for i := range c {
			c[i] = float64(1 + r.IntN(1000))
			if frac {
				c[i] += r.Float64()
			}
		}
		return c
	}
	var b, in []int
	for range nb {
		b = append(b, addVar(db, 0))
	}
	for range ni {
		in = append(in, addVar(di, 0))
	}
	for i, u := range in {
		p.Functions = append(p.Functions, mva.Function{Scope: []int{u}, Costs: table(di)})
		for _, v := range in[i+1:] {
			if r.Float64() < 0.7 {
				p.Functions = append(p.Functions, mva.Function{Scope: []int{u, v}, Costs: table(di * di)})
			}
		}
	}
	for k, v := range b {
		for _, u := range []int{in[(2*k)%ni], in[(2*k+5)%ni]} {
			p.Functions = append(p.Functions, mva.Function{Scope: []int{v, u}, Costs: table(db * di)})
		}
		y := addVar(db, 1)
		p.Functions = append(p.Functions, mva.Function{Scope: []int{v, y}, Costs: table(db * db)})
	}
	d := mva.Decompose(p)
	return mva.NewLocalProblem(p, &d.Subs[0])
}

// hardRows is sampler's TestHardRows agent: a boundary value that makes
// every completion Hard through an interior variable, Hard entries on
// boundary variables only, and rows with a single feasible completion
// among 3⁴, which repair can stall on.
func hardRows(t testing.TB) *mva.LocalProblem {
	hardIf := func(pred func(a []int) bool, doms ...int) []float64 {
		n := 1
		for _, d := range doms {
			n *= d
		}
		c := make([]float64, n)
		a := make([]int, len(doms))
		for i := range c {
			r := i
			for k := len(doms) - 1; k >= 0; k-- {
				a[k] = r % doms[k]
				r /= doms[k]
			}
			c[i] = float64(i % 5)
			if pred(a) {
				c[i] = mva.Hard
			}
		}
		return c
	}
	eq := func(a []int) bool { return a[0] != a[1] }
	p := newProblem(t, []int{3, 3, 3, 3, 3, 3, 2}, []int{0, 0, 0, 0, 0, 0, 1}, []mva.Function{
		{Scope: []int{0, 6}, Costs: make([]float64, 6)},
		{Scope: []int{1, 6}, Costs: make([]float64, 6)},
		{Scope: []int{0, 2}, Costs: hardIf(func(a []int) bool { return a[0] == 2 }, 3, 3)},
		{Scope: []int{0, 1}, Costs: hardIf(func(a []int) bool { return a[0] == 1 && a[1] == 1 }, 3, 3)},
		{Scope: []int{1, 2}, Costs: hardIf(eq, 3, 3)},
		{Scope: []int{2, 3}, Costs: hardIf(eq, 3, 3)},
		{Scope: []int{3, 4}, Costs: hardIf(eq, 3, 3)},
		{Scope: []int{4, 5}, Costs: hardIf(eq, 3, 3)},
	})
	return locals(p)[0]
}

// distProblem is sampler's distribution-test agent (sampler/dist_test.go):
// boundary v0 and interior v1..v4 with domains 3, 2, 3, 2, soft costs in
// [0, 1.2) and one Hard entry, 30 feasible interior states.
func distProblem(t testing.TB) *mva.LocalProblem {
	costs := func(n int, seed float64) []float64 {
		c := make([]float64, n)
		for i := range c {
			c[i] = 1.2 * math.Mod(float64(i+1)*seed, 1)
		}
		return c
	}
	f12 := costs(6, 0.618)
	f12[5] = mva.Hard
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

// withDefaults returns o with the CPU samplers' defaults filled in.
func withDefaults(t testing.TB, lp *mva.LocalProblem, k int, o sampler.Options) sampler.Options {
	t.Helper()
	return cpuFor(t, k, lp, o).Options()
}
