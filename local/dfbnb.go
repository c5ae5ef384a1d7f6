package local

import (
	"context"
	"fmt"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
)

// DFBnB solves a row by depth-first branch and bound over the interior
// variables, the local solver of the thesis (§3.2.3) with a real lower
// bound. It needs memory linear in the functions' sizes, never exponential
// in the induced width, which is why it is the fallback when bucket
// elimination's tables do not fit.
//
// Variable order. The order is static, chosen once by maximum cardinality
// search on the interior primal graph: each next variable is the one with
// most already-ordered neighbours (ties: higher degree, then lower index).
// Functions therefore complete, and their exact costs enter the partial
// cost, as early as possible; on a tree or chain the order walks along the
// edges.
//
// Lower bound. For every function f with interior variables v1..vk (in
// search order), level j of f is the table over v1..vj of the minimum of f
// over the entries consistent with the boundary values and v1..vj. Level 0
// is f's minimum over the entries consistent with the boundary. The bound
// at a node is g + h: g sums the completed functions, h sums every other
// function's level at its assigned prefix. h is kept incrementally: a node
// looks up one level entry per function that holds its variable, the same
// cost as the exact lookups it needs anyway. It is at least the classic
// bound (the sum of level 0 of the functions not yet complete) and prunes
// infeasible prefixes at once: a level entry is Hard exactly when no
// completion of the prefix avoids a Hard entry of f.
//
// The levels of functions without boundary variables are built once; the
// others are rebuilt for every row from the entries consistent with its
// boundary values.
//
// Value ordering. The values of a variable are tried in increasing order of
// the child's bound g + h (ties by value index), so that cheap values come
// first and, as soon as one child's bound reaches the incumbent, the rest
// are pruned together.
//
// Checks. One constraint check per function entry read: each entry
// gathered into a row's levels, and each exact lookup of a function when
// its last variable is assigned.
type DFBnB struct {
	lp    *mva.LocalProblem
	bad   error // why the problem cannot be solved at all
	n     int   // interior variables
	order []int // order[i] = local index of the variable at depth i
	dom   []int // dom[i] = domain size at depth i
	maxD  int

	consts []constFunc // functions without interior variables
	funcs  []levelFunc // functions with interior variables
	// touch[i] lists, for depth i, the functions holding its variable.
	touch [][]touchRef

	levels []float64 // all functions' levels, at levelFunc.offsets

	// Search state.
	cur     []int     // per funcs: index into its current level
	curMin  []float64 // per funcs: that level's entry
	val     []int     // value per depth
	bestVal []int
	best    float64
	gbuf    []float64 // per depth × value: child's g
	hbuf    []float64 // per depth × value: child's h
	obuf    []int     // per depth × value: value order
	saveCur []int     // per touch entry
	saveMin []float64 // per touch entry
	saveOff []int     // per depth: first touch entry in saveCur
	stop    bool
	err     error
	nodes   int64
	checks  int64
}

// constFunc is a function whose scope is boundary variables only (or
// empty): a constant within a row.
type constFunc struct {
	scope []int // local indices
	costs []float64
}

// levelFunc is a function with interior variables and its levels.
type levelFunc struct {
	costs []float64
	// Boundary positions of the scope: local variable and stride.
	bvars, bstrides []int
	// Interior variables in search order: stride in costs and domain.
	istrides, idims []int
	// offsets[j] is where level j starts in DFBnB.levels.
	offsets []int
}

// touchRef says that the variable at some depth is function f's j-th
// interior variable (1-based), so assigning it moves f to level j.
type touchRef struct {
	f, j int
	last bool
	base int // offsets[j] of f
}

// NewDFBnB prepares a DFBnB solver for lp: the variable order, the
// per-depth function lists and the levels of the functions that do not
// depend on the boundary.
func NewDFBnB(lp *mva.LocalProblem) *DFBnB {
	s := &DFBnB{lp: lp, n: lp.NumInterior()}
	for k, d := range lp.Domains {
		if d < 1 {
			s.bad = fmt.Errorf("dfbnb: variable %s has an empty domain", lp.Problem.Variables[lp.Vars[k]].Name)
			return s
		}
	}
	s.order = maxCardinalityOrder(lp)
	depth := make([]int, len(lp.Vars))
	for i, v := range s.order {
		depth[v] = i
		s.dom = append(s.dom, lp.Domains[v])
		s.maxD = max(s.maxD, lp.Domains[v])
	}
	s.touch = make([][]touchRef, s.n)
	total := 0
	for _, f := range lp.Funcs {
		strides := make([]int, len(f.Scope))
		m := 1
		for p := len(f.Scope) - 1; p >= 0; p-- {
			strides[p] = m
			m *= lp.Domains[f.Scope[p]]
		}
		var lf levelFunc
		var ivars []int
		for p, v := range f.Scope {
			if v < lp.NB {
				lf.bvars = append(lf.bvars, v)
				lf.bstrides = append(lf.bstrides, strides[p])
			} else {
				ivars = append(ivars, p)
			}
		}
		if len(ivars) == 0 {
			s.consts = append(s.consts, constFunc{scope: f.Scope, costs: f.Costs})
			continue
		}
		slices.SortFunc(ivars, func(a, b int) int { return depth[f.Scope[a]] - depth[f.Scope[b]] })
		size := 1
		lf.offsets = append(lf.offsets, total)
		total += size
		for _, p := range ivars {
			lf.istrides = append(lf.istrides, strides[p])
			lf.idims = append(lf.idims, lp.Domains[f.Scope[p]])
			size *= lp.Domains[f.Scope[p]]
			lf.offsets = append(lf.offsets, total)
			total += size
		}
		lf.costs = f.Costs
		fi := len(s.funcs)
		for j, p := range ivars {
			i := depth[f.Scope[p]]
			s.touch[i] = append(s.touch[i], touchRef{f: fi, j: j + 1, last: j == len(ivars)-1, base: lf.offsets[j+1]})
		}
		s.funcs = append(s.funcs, lf)
	}
	s.levels = make([]float64, total)
	for fi := range s.funcs {
		if len(s.funcs[fi].bvars) == 0 {
			s.buildLevels(fi, nil)
		}
	}

	s.cur = make([]int, len(s.funcs))
	s.curMin = make([]float64, len(s.funcs))
	s.val = make([]int, s.n)
	s.bestVal = make([]int, s.n)
	s.gbuf = make([]float64, s.n*s.maxD)
	s.hbuf = make([]float64, s.n*s.maxD)
	s.obuf = make([]int, s.n*s.maxD)
	s.saveOff = make([]int, s.n+1)
	for i, t := range s.touch {
		s.saveOff[i+1] = s.saveOff[i] + len(t)
	}
	s.saveCur = make([]int, s.saveOff[s.n])
	s.saveMin = make([]float64, s.saveOff[s.n])
	return s
}

// maxCardinalityOrder returns the interior variables (local indices) in
// maximum cardinality search order on the primal graph restricted to the
// interior: boundary variables are fixed in a row and link nothing.
func maxCardinalityOrder(lp *mva.LocalProblem) []int {
	n := lp.NumInterior()
	adj := make([]map[int]bool, n)
	for k := range adj {
		adj[k] = map[int]bool{}
	}
	for _, f := range lp.Funcs {
		for _, u := range f.Scope {
			for _, v := range f.Scope {
				if u != v && u >= lp.NB && v >= lp.NB {
					adj[u-lp.NB][v-lp.NB] = true
				}
			}
		}
	}
	placed := make([]bool, n)
	card := make([]int, n) // ordered neighbours
	order := make([]int, 0, n)
	for range n {
		best := -1
		for k := range n {
			if placed[k] {
				continue
			}
			if best < 0 || card[k] > card[best] || (card[k] == card[best] && len(adj[k]) > len(adj[best])) {
				best = k
			}
		}
		placed[best] = true
		order = append(order, best+lp.NB)
		for u := range adj[best] {
			card[u]++
		}
	}
	return order
}

// buildLevels fills function fi's levels for the boundary values b (nil
// when the function has no boundary variable) and counts the entries read.
func (s *DFBnB) buildLevels(fi int, b []int) {
	f := &s.funcs[fi]
	base := 0
	for q, v := range f.bvars {
		base += b[v] * f.bstrides[q]
	}
	k := len(f.idims)
	size := 1
	for _, d := range f.idims {
		size *= d
	}
	top := s.levels[f.offsets[k] : f.offsets[k]+size]
	// Gather the entries consistent with b, interior variables in search
	// order (last fastest), with an odometer over their strides.
	var buf [16]int
	var digits []int
	if k > len(buf) {
		digits = make([]int, k)
	} else {
		digits = buf[:k]
	}
	idx := base
	for e := range top {
		top[e] = f.costs[idx]
		for q := k - 1; q >= 0; q-- {
			digits[q]++
			if digits[q] < f.idims[q] {
				idx += f.istrides[q]
				break
			}
			idx -= (f.idims[q] - 1) * f.istrides[q]
			digits[q] = 0
		}
	}
	s.checks += int64(size)
	// Level j-1 is level j minimised over its last variable.
	for j := k; j >= 1; j-- {
		d := f.idims[j-1]
		hi := s.levels[f.offsets[j] : f.offsets[j]+size]
		size /= d
		lo := s.levels[f.offsets[j-1] : f.offsets[j-1]+size]
		for x := range lo {
			m := hi[x*d]
			for _, c := range hi[x*d+1 : x*d+d] {
				m = min(m, c)
			}
			lo[x] = m
		}
	}
}

// Checks returns the function entries read so far.
func (s *DFBnB) Checks() int64 { return s.checks }

// Nodes returns the search nodes expanded so far, over all rows.
func (s *DFBnB) Nodes() int64 { return s.nodes }

// SolveRow finds the cheapest interior assignment for the boundary values.
// It returns Hard, with interior set to zeros, when none is feasible.
func (s *DFBnB) SolveRow(ctx context.Context, boundary, interior []int) (float64, error) {
	lp := s.lp
	if s.bad != nil {
		return 0, s.bad
	}
	if err := checkRowArgs(lp, boundary, interior); err != nil {
		return 0, fmt.Errorf("dfbnb: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	clear(interior)
	g := 0.0
	for _, c := range s.consts {
		idx := 0
		for _, v := range c.scope {
			idx = idx*lp.Domains[v] + boundary[v]
		}
		g += c.costs[idx]
		s.checks++
	}
	h := 0.0
	for fi := range s.funcs {
		if len(s.funcs[fi].bvars) > 0 {
			s.buildLevels(fi, boundary)
		}
		s.cur[fi] = 0
		s.curMin[fi] = s.levels[s.funcs[fi].offsets[0]]
		h += s.curMin[fi]
	}
	if mva.IsHard(g + h) {
		return mva.Hard, nil
	}
	s.best, s.stop, s.err = mva.Hard, false, nil
	s.search(ctx, 0, g, h)
	if s.stop {
		return 0, s.err
	}
	if !mva.IsHard(s.best) {
		for i, v := range s.order {
			interior[v-lp.NB] = s.bestVal[i]
		}
	}
	return s.best, nil
}

// search expands the node at depth i whose partial cost is g and whose
// remaining bound is h.
func (s *DFBnB) search(ctx context.Context, i int, g, h float64) {
	s.nodes++
	if s.nodes&0xfff == 0 {
		if err := ctx.Err(); err != nil {
			s.stop, s.err = true, err
			return
		}
	}
	if i == s.n {
		if g < s.best {
			s.best = g
			copy(s.bestVal, s.val)
		}
		return
	}
	D := s.dom[i]
	touch := s.touch[i]
	gs := s.gbuf[i*s.maxD : i*s.maxD+D]
	hs := s.hbuf[i*s.maxD : i*s.maxD+D]
	ord := s.obuf[i*s.maxD : i*s.maxD+D]
	for a := range D {
		gg, hh := g, h
		for _, t := range touch {
			v := s.levels[t.base+s.cur[t.f]*D+a]
			if t.last {
				gg += v
			} else {
				hh += v
			}
			hh -= s.curMin[t.f]
		}
		gs[a], hs[a] = gg, hh
		// Insertion sort by bound, stable so ties keep value order.
		lb := gg + hh
		k := a
		for k > 0 && gs[ord[k-1]]+hs[ord[k-1]] > lb {
			ord[k] = ord[k-1]
			k--
		}
		ord[k] = a
	}
	for _, t := range touch {
		if t.last {
			s.checks += int64(D)
		}
	}
	saveCur := s.saveCur[s.saveOff[i]:s.saveOff[i+1]]
	saveMin := s.saveMin[s.saveOff[i]:s.saveOff[i+1]]
	for q, t := range touch {
		saveCur[q], saveMin[q] = s.cur[t.f], s.curMin[t.f]
	}
	for _, a := range ord {
		if !(gs[a]+hs[a] < s.best) {
			break // sorted: every later value is pruned too
		}
		for q, t := range touch {
			c := saveCur[q]*D + a
			s.cur[t.f] = c
			s.curMin[t.f] = s.levels[t.base+c]
		}
		s.val[i] = a
		s.search(ctx, i+1, gs[a], hs[a])
		if s.stop {
			break
		}
	}
	for q, t := range touch {
		s.cur[t.f], s.curMin[t.f] = saveCur[q], saveMin[q]
	}
}
