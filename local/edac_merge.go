package local

// Functional substitution for EDAC (toulbar2's -f=1): an interior variable
// y that a hard binary function makes a function of another, y = h(x), is
// replaced by x everywhere before search.

import (
	"slices"

	"github.com/hearth-dcop/hearth/mva"
)

// funcMerge records the substitution mergeFunctional made: the solver
// searches red, and each of orig's interior variables takes its value from
// its root's.
type funcMerge struct {
	orig, red *mva.LocalProblem
	// root[i] is the interior index in red of orig's interior variable
	// i's root; val[i] maps the root's values to i's (nil: i is the root;
	// -1: no value of i goes with that value of the root).
	root []int
	val  [][]int
	n    int   // orig's interior variables merged away
	buf  []int // red's interior values
}

// mergeFunctional looks for binary functions between interior variables
// that, between their roots, allow at most one value of one for each value
// of the other (every other entry Hard): y = h(x), as the difference
// constraints between the two directions of a link of frequency
// assignment are. y is then merged into x when x's domain is no larger
// than y's (so that no table grows): every function of y becomes one of x
// through h, and the binary function itself a unary cost of x (Hard where
// h has no value). Chains merge into one root. It returns nil when nothing
// merges. The substituted problem has the same optimum and the same cost
// for every assignment that h extends, table entry for table entry: on
// frequency assignment of 80 links it halves the variables and EDAC's
// search (1341 nodes; toulbar2 251 with its own merging, 732 without).
func mergeFunctional(lp *mva.LocalProblem) *funcMerge {
	nb, n := lp.NB, lp.NumInterior()
	for _, d := range lp.Domains {
		if d < 1 {
			return nil
		}
	}
	root := make([]int, n)
	val := make([][]int, n)
	// members[i]: the variables root i stands for, nil for i alone (most
	// rows merge nothing: a 40×40 grid made 1600 slices for none).
	members := make([][]int, n)
	membersOf := func(i int) []int {
		if members[i] == nil {
			return []int{i}
		}
		return members[i]
	}
	for i := range root {
		root[i] = i
	}
	// at returns interior variable i's value when its root takes a.
	at := func(i, a int) int {
		if val[i] == nil {
			return a
		}
		return val[i][a]
	}
	merged := 0
	for _, f := range lp.Funcs {
		if len(f.Scope) != 2 || f.Scope[0] < nb || f.Scope[1] < nb {
			continue
		}
		u, v := f.Scope[0]-nb, f.Scope[1]-nb
		ru, rv := root[u], root[v]
		if ru == rv {
			continue
		}
		du, dv, dvo := lp.Domains[nb+ru], lp.Domains[nb+rv], lp.Domains[nb+v]
		if val[u] == nil && val[v] == nil && du >= 2 && dv >= 2 && !anyHard(f.Costs) {
			// u and v are roots and every pair of their values is
			// allowed: each value allows two of the other, no h.
			continue
		}
		// finite(a, b): the function allows roots' values a and b.
		finite := func(a, b int) bool {
			x, y := at(u, a), at(v, b)
			return x >= 0 && y >= 0 && !mva.IsHard(f.Costs[x*dvo+y])
		}
		// image returns h: for each value of one root (u's when fromU),
		// the one value of the other it allows (-1: none), or nil when
		// some value allows two.
		image := func(dfrom, dto int, fromU bool) []int {
			h := make([]int, dfrom)
			for a := range dfrom {
				h[a] = -1
				for b := range dto {
					var ok bool
					if fromU {
						ok = finite(a, b)
					} else {
						ok = finite(b, a)
					}
					if !ok {
						continue
					}
					if h[a] >= 0 {
						return nil
					}
					h[a] = b
				}
			}
			return h
		}
		keep, drop, h := -1, -1, []int(nil)
		if du <= dv {
			if h = image(du, dv, true); h != nil {
				keep, drop = ru, rv
			}
		}
		if h == nil && dv <= du {
			if h = image(dv, du, false); h != nil {
				keep, drop = rv, ru
			}
		}
		if h == nil {
			continue
		}
		for _, w := range membersOf(drop) {
			m := make([]int, lp.Domains[nb+keep])
			for a, b := range h {
				m[a] = -1
				if b >= 0 {
					m[a] = at(w, b)
				}
			}
			val[w], root[w] = m, keep
		}
		members[keep] = append(membersOf(keep), membersOf(drop)...)
		members[drop] = nil
		merged++
	}
	if merged == 0 {
		return nil
	}
	return buildMerged(lp, root, val, merged)
}

// anyHard reports whether a table has a Hard entry.
func anyHard(t []float64) bool {
	for _, c := range t {
		if mva.IsHard(c) {
			return true
		}
	}
	return false
}

// buildMerged writes the substituted problem: the roots as interior
// variables, in index order, and every function of lp over its variables'
// roots (a variable and its root in one scope become one position).
func buildMerged(lp *mva.LocalProblem, root []int, val [][]int, merged int) *funcMerge {
	nb, n := lp.NB, lp.NumInterior()
	newIdx := make([]int, n)
	red := &mva.LocalProblem{Problem: lp.Problem, Sub: lp.Sub, NB: nb}
	red.Vars = append(red.Vars, lp.Vars[:nb]...)
	red.Domains = append(red.Domains, lp.Domains[:nb]...)
	for i := range n {
		if root[i] == i {
			newIdx[i] = len(red.Vars) - nb
			red.Vars = append(red.Vars, lp.Vars[nb+i])
			red.Domains = append(red.Domains, lp.Domains[nb+i])
		}
	}
	fm := &funcMerge{orig: lp, red: red, root: make([]int, n), val: val, n: merged}
	for i := range n {
		fm.root[i] = newIdx[root[i]]
	}
	fm.buf = make([]int, red.NumInterior())
	// rv is a scope position's variable in red.
	rv := func(v int) int {
		if v < nb {
			return v
		}
		return nb + fm.root[v-nb]
	}
	for _, f := range lp.Funcs {
		changed := false
		var sc []int
		for _, v := range f.Scope {
			r := rv(v)
			changed = changed || v >= nb && val[v-nb] != nil
			if !slices.Contains(sc, r) {
				sc = append(sc, r)
			}
		}
		if !changed {
			red.Funcs = append(red.Funcs, mva.LocalFunction{Scope: sc, Costs: f.Costs})
			continue
		}
		size := 1
		for _, v := range sc {
			size *= red.Domains[v]
		}
		costs := make([]float64, size)
		tuple := make([]int, len(sc))
		for e := range costs {
			// tuple: entry e's values, last position fastest.
			r := e
			for p := len(sc) - 1; p >= 0; p-- {
				d := red.Domains[sc[p]]
				tuple[p] = r % d
				r /= d
			}
			idx, ok := 0, true
			for _, v := range f.Scope {
				a := tuple[slices.Index(sc, rv(v))]
				if v >= nb && val[v-nb] != nil {
					a = val[v-nb][a]
				}
				if a < 0 {
					ok = false
					break
				}
				idx = idx*lp.Domains[v] + a
			}
			if ok {
				costs[e] = f.Costs[idx]
			} else {
				costs[e] = mva.Hard
			}
		}
		red.Funcs = append(red.Funcs, mva.LocalFunction{Scope: sc, Costs: costs})
	}
	return fm
}

// expand writes orig's interior values from red's (fm.buf).
func (fm *funcMerge) expand(interior []int) {
	for i, r := range fm.root {
		a := fm.buf[r]
		if fm.val[i] != nil {
			a = fm.val[i][a]
		}
		interior[i] = a
	}
}
