package sampler

import (
	"fmt"
	"math"

	"github.com/hearth-dcop/hearth/mva"
)

// MaxDomain bounds the domain size of interior variables: a Gibbs
// conditional and the normal proposal's tables are linear in it, per
// variable and per worker.
const MaxDomain = 1 << 20

// model is the sampler's read-only view of a local problem, shared by all
// chains: the functions with their strides, and for every interior
// variable the functions that hold it, so that a conditional or a one-
// variable move reads only the functions it changes.
type model struct {
	lp    *mva.LocalProblem
	nb, n int   // boundary and interior variables
	dom   []int // domain size per local variable
	maxD  int   // largest interior domain
	funcs []function
	// consts lists the functions without interior variables: constant
	// within a row, so a Hard one makes the whole row infeasible.
	consts []int
	// touch[k] lists the functions holding local variable k (interior
	// variable i is local variable nb+i). The samplers read only the
	// interior ones; Conditional reads the boundary ones too.
	touch [][]touchRef
}

// function is a local function with the stride of each scope position in
// its table (row-major, last position fastest).
type function struct {
	scope   []int
	strides []int
	costs   []float64
}

// touchRef names function f and the stride of one of its variables.
type touchRef struct {
	f      int
	stride int
}

// newModel checks lp and builds its model. The checks turn a malformed
// local problem into an error here rather than an index panic in a chain.
func newModel(lp *mva.LocalProblem) (*model, error) {
	if lp == nil {
		return nil, fmt.Errorf("no local problem")
	}
	if len(lp.Domains) != len(lp.Vars) || lp.NB < 0 || lp.NB > len(lp.Vars) {
		return nil, fmt.Errorf("local problem has %d domains for %d variables and %d boundary variables",
			len(lp.Domains), len(lp.Vars), lp.NB)
	}
	m := &model{lp: lp, nb: lp.NB, n: len(lp.Vars) - lp.NB, dom: lp.Domains}
	for k, d := range lp.Domains {
		if d < 1 || d > math.MaxInt32 {
			return nil, fmt.Errorf("local variable %d has a domain of %d values", k, d)
		}
		if k >= m.nb {
			if d > MaxDomain {
				return nil, fmt.Errorf("interior variable %d has %d values, more than the %d a sampler handles",
					k-m.nb, d, MaxDomain)
			}
			m.maxD = max(m.maxD, d)
		}
	}
	m.touch = make([][]touchRef, m.nb+m.n)
	for fi, lf := range lp.Funcs {
		f := function{scope: lf.Scope, strides: make([]int, len(lf.Scope)), costs: lf.Costs}
		size := 1
		for j := len(lf.Scope) - 1; j >= 0; j-- {
			k := lf.Scope[j]
			if k < 0 || k >= len(lp.Vars) {
				return nil, fmt.Errorf("function %d: local variable %d out of range", fi, k)
			}
			f.strides[j] = size
			if size > math.MaxInt32/lp.Domains[k] {
				return nil, fmt.Errorf("function %d: table too large", fi)
			}
			size *= lp.Domains[k]
		}
		if len(lf.Costs) != size {
			return nil, fmt.Errorf("function %d: %d costs for a scope of %d entries", fi, len(lf.Costs), size)
		}
		interior := false
		for j, k := range lf.Scope {
			m.touch[k] = append(m.touch[k], touchRef{f: fi, stride: f.strides[j]})
			if k >= m.nb {
				interior = true
			}
		}
		if !interior {
			m.consts = append(m.consts, fi)
		}
		m.funcs = append(m.funcs, f)
	}
	return m, nil
}

// index returns f's table index for the local assignment z.
func (f *function) index(z []int) int {
	idx := 0
	for j, k := range f.scope {
		idx += z[k] * f.strides[j]
	}
	return idx
}

// eval returns the lexicographic energy of the full local assignment z:
// the number of functions at a Hard entry and the sum of the other
// entries, added in lp.Funcs order from 0. When viol is 0, cost is
// therefore bit for bit lp.Eval(z).
func (m *model) eval(z []int) (viol int, cost float64) {
	for i := range m.funcs {
		f := &m.funcs[i]
		if c := f.costs[f.index(z)]; mva.IsHard(c) {
			viol++
		} else {
			cost += c
		}
	}
	return viol, cost
}

// constHard reports whether a function without interior variables is
// Hard under the boundary values in z: then no completion is feasible.
func (m *model) constHard(z []int) bool {
	for _, fi := range m.consts {
		f := &m.funcs[fi]
		if mva.IsHard(f.costs[f.index(z)]) {
			return true
		}
	}
	return false
}

// local fills, for every value d of local variable k (boundary or
// interior), the energy of the functions holding it with x_k = d and the
// other variables as in z: viol[d] counts Hard entries, cost[d] sums the
// others (in touch order). It returns the number of table entries read.
func (m *model) local(k int, z []int, viol []int32, cost []float64) int64 {
	d := m.dom[k]
	viol, cost = viol[:d], cost[:d]
	clear(viol)
	clear(cost)
	x := z[k]
	for _, r := range m.touch[k] {
		f := &m.funcs[r.f]
		base := f.index(z) - x*r.stride
		// The d entries of x_i's values, r.stride apart.
		cs := f.costs[base : base+(d-1)*r.stride+1]
		if r.stride == 1 {
			// x_i is the scope's last variable: contiguous entries, no
			// bounds checks in the loop.
			for v, c := range cs {
				if mva.IsHard(c) {
					viol[v]++
				} else {
					cost[v] += c
				}
			}
			continue
		}
		for v := range d {
			if c := cs[v*r.stride]; mva.IsHard(c) {
				viol[v]++
			} else {
				cost[v] += c
			}
		}
	}
	return int64(len(m.touch[k]) * d)
}

// delta returns the change of energy when interior variable i moves from
// its value in z to y: the difference in Hard entries and in the sum of
// the other entries over the functions holding it. It leaves z as it was.
func (m *model) delta(i int, z []int, y int) (dv int, dc float64) {
	k := m.nb + i
	x := z[k]
	oldC, newC := 0.0, 0.0
	for _, r := range m.touch[k] {
		f := &m.funcs[r.f]
		base := f.index(z) - x*r.stride
		if c := f.costs[base+x*r.stride]; mva.IsHard(c) {
			dv--
		} else {
			oldC += c
		}
		if c := f.costs[base+y*r.stride]; mva.IsHard(c) {
			dv++
		} else {
			newC += c
		}
	}
	return dv, newC - oldC
}
