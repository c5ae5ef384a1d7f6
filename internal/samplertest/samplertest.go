// Package samplertest holds the fixtures and statistics shared by the
// tests of the CPU samplers (package sampler), of their device twins
// (sampler/gpu, whose tests must run the very same agents and thresholds
// to be comparable) and of the protocols that sample (D-Gibbs). Test
// helpers in _test.go files cannot be imported, so they live here; only
// tests import this package.
package samplertest

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
)

// ChiLimit is the chi-square quantile of df degrees of freedom at upper
// tail probability 10⁻⁶ (Wilson–Hilferty approximation, z = 4.753): a
// correct sampler exceeds it with probability about one in a million, so
// a test against it cannot fail by bad luck, yet a wrong target exceeds
// it many times over, so it cannot pass by accident either.
func ChiLimit(df int) float64 {
	k := float64(df)
	a := 2 / (9 * k)
	return k * math.Pow(1-a+4.753*math.Sqrt(a), 3)
}

// ChiSquare returns Pearson's statistic of counts against pi and its
// degrees of freedom (the states of non-zero probability, less one). A
// count in a state of probability 0 makes it +Inf.
func ChiSquare[C int | uint64](counts []C, pi []float64) (chi float64, df int) {
	var total C
	for _, c := range counts {
		total += c
	}
	df = -1
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

// Boltzmann returns π(s) ∝ exp(−cost(x_s)/τ) over every assignment x_s of
// variables with domain sizes doms, by enumeration; s is the mixed-radix
// index of x_s, last variable fastest (StateIndex). cost may keep x only
// for the call.
func Boltzmann(doms []int, cost func(x []int) float64, tau float64) []float64 {
	size := 1
	for _, d := range doms {
		size *= d
	}
	x := make([]int, len(doms))
	pi := make([]float64, size)
	z := 0.0
	for s := range pi {
		r := s
		for i := len(doms) - 1; i >= 0; i-- {
			x[i] = r % doms[i]
			r /= doms[i]
		}
		pi[s] = math.Exp(-cost(x) / tau)
		z += pi[s]
	}
	for s := range pi {
		pi[s] /= z
	}
	return pi
}

// StateIndex is the mixed-radix index of assignment x over domain sizes
// doms, last variable fastest: the state numbering of Boltzmann.
func StateIndex(doms, x []int) int {
	s := 0
	for i, v := range x {
		s = s*doms[i] + v
	}
	return s
}

// Target returns π over the interior states of lp's boundary row row at
// temperature tau (Boltzmann over the interior domains), the distribution
// a sampler's chains must visit.
func Target(lp *mva.LocalProblem, row int, tau float64) []float64 {
	a := make([]int, len(lp.Vars))
	lp.DecodeRow(row, a[:lp.NB])
	return Boltzmann(lp.Domains[lp.NB:], func(in []int) float64 {
		copy(a[lp.NB:], in)
		return lp.Eval(a)
	}, tau)
}

// NewProblem builds a problem from domain sizes, owners and functions;
// variables are "v0", "v1", … with labels "0".."d-1", and agents "a0",
// "a1", … up to the largest owner. It fails t if the problem is invalid.
func NewProblem(t testing.TB, doms, owners []int, funcs []mva.Function) *mva.Problem {
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

// Locals returns the local problem of every agent of p.
func Locals(p *mva.Problem) []*mva.LocalProblem {
	d := mva.Decompose(p)
	var lps []*mva.LocalProblem
	for i := range d.Subs {
		lps = append(lps, mva.NewLocalProblem(p, &d.Subs[i]))
	}
	return lps
}

// DistProblem is the distribution tests' agent: boundary v0 (linked to v5
// of another agent) and interior v1..v4 with domains 3, 2, 3, 2, soft
// costs in [0, 1.2) and one Hard entry (which removes 6 of the 36 interior
// states), so that every one of the 30 feasible states has a fair
// probability.
func DistProblem(t testing.TB) *mva.LocalProblem {
	t.Helper()
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
	p := NewProblem(t, []int{2, 3, 2, 3, 2, 2}, []int{0, 0, 0, 0, 0, 1}, []mva.Function{
		{Scope: []int{0, 5}, Costs: costs(4, 0.3)},
		{Scope: []int{0, 1}, Costs: costs(6, 0.414)},
		{Scope: []int{1, 2}, Costs: f12},
		{Scope: []int{2, 3}, Costs: costs(6, 0.732)},
		{Scope: []int{1, 3, 4}, Costs: costs(18, 0.236)},
		{Scope: []int{4}, Costs: []float64{0.5, 0}},
	})
	return Locals(p)[0]
}

// HardRows is an agent with the three ways a row is infeasible or nearly
// so: a boundary value that every completion makes Hard (through an
// interior variable), a Hard entry on boundary variables only, and rows
// with a single feasible completion among 3⁴. Greedy repair can stall on
// that chain of equalities (the defect moves along it at equal violation
// count), and the normal proposal, which moves every variable at once,
// then needs a few hundred trials to walk off the plateau. v0, v1 are the
// boundary (linked to v6 of agent 1); v2..v5 the interior.
func HardRows(t testing.TB) *mva.LocalProblem {
	t.Helper()
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
	p := NewProblem(t, []int{3, 3, 3, 3, 3, 3, 2}, []int{0, 0, 0, 0, 0, 0, 1}, []mva.Function{
		{Scope: []int{0, 6}, Costs: make([]float64, 6)},
		{Scope: []int{1, 6}, Costs: make([]float64, 6)},
		// Row v0 = 2: every v2 is Hard.
		{Scope: []int{0, 2}, Costs: hardIf(func(a []int) bool { return a[0] == 2 }, 3, 3)},
		// Rows with v0 = 1, v1 = 1: Hard on the boundary alone.
		{Scope: []int{0, 1}, Costs: hardIf(func(a []int) bool { return a[0] == 1 && a[1] == 1 }, 3, 3)},
		// v1 = v2 = v3 = v4 = v5: one feasible completion per row.
		{Scope: []int{1, 2}, Costs: hardIf(eq, 3, 3)},
		{Scope: []int{2, 3}, Costs: hardIf(eq, 3, 3)},
		{Scope: []int{3, 4}, Costs: hardIf(eq, 3, 3)},
		{Scope: []int{4, 5}, Costs: hardIf(eq, 3, 3)},
	})
	return Locals(p)[0]
}

// HugeNB is the number of binary boundary variables of HugeBoundary.
const HugeNB = 40

// HugeBoundary is an agent whose 2⁴⁰ boundary assignments no table could
// hold, so that only row by row solving works: HugeNB binary boundary
// variables, each linked to a variable of another agent and to one of
// three binary interior variables, which share a ternary function.
func HugeBoundary(t testing.TB) *mva.LocalProblem {
	t.Helper()
	const nb = HugeNB
	doms := make([]int, nb+4)
	owners := make([]int, nb+4)
	for i := range doms {
		doms[i] = 2
	}
	owners[nb+3] = 1
	var funcs []mva.Function
	for k := range nb {
		funcs = append(funcs,
			mva.Function{Scope: []int{k, nb + 3}, Costs: []float64{0, 1, 2, 3}},
			mva.Function{Scope: []int{k, nb + k%3}, Costs: []float64{float64(k % 5), 1, 2, float64(k % 3)}})
	}
	funcs = append(funcs, mva.Function{Scope: []int{nb, nb + 1, nb + 2}, Costs: []float64{5, 1, 4, 1, 5, 9, 2, 6}})
	return Locals(NewProblem(t, doms, owners, funcs))[0]
}

// MeetingAgent builds an agent like those of the DMCMC meeting-scheduling
// experiments (thesis §5.3): 10 interior variables with 12 values (time
// slots), binary functions on 70% of their pairs and a unary preference
// each, whole costs in [1, 1000]; plus nb boundary variables of db values,
// each tied to two interior variables and to another agent, so that the
// MVA table has db^nb rows. frac adds a fraction to every cost, so that
// sums are no longer exact. It returns agent 0's local problem.
func MeetingAgent(seed uint64, nb, db int, frac bool) *mva.LocalProblem {
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
