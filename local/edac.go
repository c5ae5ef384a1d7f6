package local

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/hearth-dcop/hearth/mva"
)

// EDAC solves a row by depth-first branch and bound that maintains
// existential directional arc consistency (EDAC: Larrosa, de Givry, Heras
// and Zytnicki, "Existential arc consistency: getting closer to full arc
// consistency in weighted CSPs", IJCAI 2005) at every node, the lower
// bound toulbar2 is built on. Where DFBnB's bound sums per-function minima
// and AOBB's needs mini-bucket tables, EDAC's bound comes from moving costs
// between the functions (equivalence-preserving transfers) so that as much
// of them as possible lands in a constant c∅, the bound itself. Its memory
// is linear in the problem: the transfers are kept as one delta per value
// and side of each binary function, never as new tables.
//
// What is maintained. On unary and binary functions (after conditioning
// on the row's boundary values; two functions over the same pair are
// merged into one table):
//   - NC*: every value a of x with c∅ + u_x(a) ≥ ub is removed, and every
//     variable has a value of unary cost 0 (the minimum is projected into
//     c∅);
//   - AC*: every value a of x has a support b in each neighbour y with
//     c_xy(a, b) = 0 (projection of c_xy's minimum onto u_x); it is
//     projected onto the DAC sender only, the receiver's full supports
//     being supports too;
//   - DAC*: for x before y in the DAC order (variable index order; the
//     root is propagated first in the reverse order, which raises c∅
//     further), every a has a full support, c_xy(a, b) + u_y(b) = 0
//     (extension of u_y into c_xy, the least that lets the projection onto
//     x succeed, then the projection);
//   - EAC: every x has a value a with u_x(a) = 0 that has a full support
//     in every neighbour at once; where none has, full supports are
//     enforced towards x from all its neighbours, which raises every u_x(a)
//     and so c∅.
//
// All four are enforced by one propagation loop over queues of variables
// (domain shrunk: AC; unary cost raised from zero: DAC and the
// neighbours' EAC; unary cost raised: NC* pruning), after every branching
// decision. Every operation is an equivalence-
// preserving transfer between non-negative costs, so c∅ is a lower bound
// whatever state the loop stops in (it has a cap on EAC rounds, which on
// integer costs always reach their fixpoint first).
//
// Non-binary functions (three or more interior variables) are checked when
// assigned, with two strengthenings: when a variable of one is assigned,
// the minimum of its entries consistent with the assigned values (tables
// of at most naryProjectMax entries) moves into c∅; when all but one of its
// variables are assigned, the function becomes a unary cost of the last
// one, which the arc consistencies above then use.
//
// Search. Binary branching, x = a then x ≠ a, on the variable of smallest
// domain size over weighted degree (dom/wdeg: each function's weight counts
// the failures its last transfer led to, Boussemart et al. 2004), trying
// first the value of the EAC support (unary cost 0). Variables left without
// a function to unassigned variables are set to their cheapest value
// without branching. Variables with at most two neighbours (binary
// functions only) are eliminated as bucket elimination would, before the
// search and whenever assignments leave one so during it (toulbar2's -e=2):
// one neighbour gets the least cost for each of its values as unary
// costs, two get it added to the function between them (during search,
// only when they share one). Their values are chosen after the search.
// The first upper bound comes from a greedy assignment improved by a few
// sweeps of best-value moves.
//
// Costs. The transfers subtract and add costs. On whole-number costs (most
// WCSP files) float64 arithmetic is exact and pruning is at lb ≥ ub; on
// fractional costs a node is pruned only at lb ≥ ub + 1e-9·max(1, |ub|), so
// that rounding cannot prune the optimum. Reported costs are always the
// exact sum of the original functions for the assignment found.
type EDAC struct {
	lp  *mva.LocalProblem
	bad error
	n   int   // interior variables; variable i is local index NB+i
	dom []int // domain sizes

	srcs     []edacSrc  // every function, conditioned on the row
	bins     []edacBin  // binary functions, merged per pair
	narys    []edacNary // functions of three or more interior variables
	adjB     [][]int    // per variable: its binary functions
	adjN     [][]int    // per variable: its n-ary functions
	uoff     []int      // per variable: offset of its unary costs in fs and u0
	aoff     []int      // per variable: offset of its alive flags in is
	u0       []float64  // the row's unary costs (normalised)
	c0       float64    // the row's constant (normalised)
	integral bool
	rank     []int      // DAC order: costs move towards lower ranks
	dacRev   bool       // … towards higher ranks (after the root pass)
	elim     []edacElim // variables eliminated before search, in order
	gone     []bool     // per variable / per binary function: eliminated
	goneBin  []bool

	// Trailed state: fs holds c∅ (fs[0]), unary costs and the binary and
	// n-ary deltas; is holds alive flags, domain sizes, assignment marks,
	// binary live flags and n-ary counts of unassigned variables.
	fs       []float64
	is       []int32
	sizeOff  int // is index of the domain sizes
	asgOff   int // is index of the "assignment processed" marks
	delOff   int // is index of the "eliminated during search" marks
	stackLen int // is index of the length of stack
	// stack lists the variables eliminated during search, in order, and
	// their one or two binary functions (-1: none).
	stack    []dynElim
	dynElims int64 // eliminations during search, over all rows
	// noLocalSearch starts the search without an upper bound, so that
	// tests reach every pruning rule (the local search often finds the
	// optimum of small problems, leaving the search nothing to lose).
	noLocalSearch bool
	// worstFirst branches on the costliest value first (tests only: the
	// first leaves are then poor and the optimum is reached by pruning).
	worstFirst bool
	// budget, when positive, stops a row's search (errBudget) past that
	// many checks; rowChecks is the count when the row began.
	budget, rowChecks  int64
	ft                 []fTrail
	it                 []iTrail
	sides              []side // per binary function: seen from x, then from y
	sup                []int  // per variable: last EAC support found (a hint)
	weight             []int64
	lastFn             int
	acQ, dacQ, eacQ    []int
	inAC, inDAC, inEAC []bool
	ncQ                []int // variables whose unary costs rose: NC* pruning
	inNC               []bool
	ncAll              bool
	eacRounds          int

	// Scratch for full supports.
	pbuf, ebuf []float64

	// Search.
	full   []int // boundary then interior values, for exact evaluation
	ub     float64
	best   []int
	ubVer  int
	stop   bool
	err    error
	nodes  int64
	checks int64
}

// naryProjectMax bounds the entries an n-ary function's projection into
// c∅ may read at one assignment.
const naryProjectMax = 1 << 12

type fTrail struct {
	i int32
	v float64
}

type iTrail struct {
	i, v int32
}

// edacSrc is one function of the problem and where its conditioned table
// goes: kind 0 the constant, 1 the unary costs of target, 2 binary
// function target (transposed when swap), 3 n-ary function target.
type edacSrc struct {
	c      condFunc
	kind   int
	target int
	swap   bool
}

// edacBin is a binary function over interior variables x < y. Its cost of
// (a, b) is tab[a·dy+b] − fs[px+a] − fs[py+b]: projections raise the
// deltas, extensions lower them.
type edacBin struct {
	x, y, dx, dy int
	tab          []float64
	px, py       int // offsets in fs of the deltas
	// cur is the table search works on, a view of fs at curOff: tab
	// plus what variables eliminated during search added.
	cur    []float64
	curOff int
	// Residual supports (hints, not trailed): for each value of x, its
	// last AC support and full support in y, and the same for y in x.
	resX, fresX, resY, fresY []int32
	live                     int // is index: 1 while both variables are unassigned
}

// edacNary is a function over three or more interior variables; its cost
// of a tuple is tab[index] − fs[delta].
type edacNary struct {
	vars, dims, strides []int
	tab                 []float64
	delta               int // fs index
	cnt                 int // is index: unassigned variables; ≤ 1: absorbed
}

// edacElim is the elimination of variable x of at most two neighbours
// (through binary functions ks) before search: the least cost of x for each
// value of its neighbours goes into their unary costs (one neighbour) or
// into the binary function into between them (two), as bucket elimination
// does. Its value is chosen after the search, given theirs.
type edacElim struct {
	x    int
	ks   []int
	into int
}

// dacRank returns the DAC order of the interior variables: their index
// order. (Measured on generated random, scale-free and grid graphs, the
// reverse, maximum-cardinality and degree orders move the root bound by
// at most ±4% and not in one direction.)
func dacRank(lp *mva.LocalProblem) []int {
	rank := make([]int, lp.NumInterior())
	for i := range rank {
		rank[i] = i
	}
	return rank
}

// dynElim is a variable eliminated during search and its binary functions
// at that time (k2 -1 when it had one).
type dynElim struct{ x, k1, k2 int }

// deleted reports whether x was eliminated during search: it is out of
// every propagation until the search backtracks past that point.
func (s *EDAC) deleted(x int) bool { return s.is[s.delOff+x] != 0 }

// eliminateSmall eliminates, at a search node, the unassigned variables
// left with one live binary function (its least cost for each value of the
// neighbour moves into the neighbour's unary costs) or two whose
// neighbours share a live binary function (the least cost for each pair
// of their values is added to it), and no live n-ary function: toulbar2's
// variable elimination of small degree during search (-e), which bucket
// elimination makes exact. It reports whether anything changed.
func (s *EDAC) eliminateSmall() (changed, ok bool) {
	var ks [2]int
	for x := range s.n {
		if s.size(x) == 1 || s.deleted(x) {
			continue
		}
		nk := 0
		for _, k := range s.adjB[x] {
			if s.is[s.bins[k].live] != 0 {
				if nk == 2 {
					nk = 3
					break
				}
				ks[nk] = k
				nk++
			}
		}
		if nk == 0 || nk > 2 {
			continue
		}
		nary := false
		for _, j := range s.adjN[x] {
			if s.is[s.narys[j].cnt] > 1 {
				nary = true
				break
			}
		}
		if nary {
			continue
		}
		if nk == 1 {
			if !s.elim1(x, ks[0]) {
				return true, false
			}
			changed = true
			continue
		}
		y, z := s.bins[ks[0]].x+s.bins[ks[0]].y-x, s.bins[ks[1]].x+s.bins[ks[1]].y-x
		kt := -1
		for _, k := range s.adjB[y] {
			b := &s.bins[k]
			if s.is[b.live] != 0 && b.x+b.y-y == z {
				kt = k
				break
			}
		}
		if kt < 0 {
			continue
		}
		s.elim2(x, ks[0], ks[1], kt)
		changed = true
	}
	return changed, true
}

// push records x's elimination on the stack.
func (s *EDAC) pushElim(x, k1, k2 int) {
	s.dynElims++
	n := s.is[s.stackLen]
	s.stack[n] = dynElim{x, k1, k2}
	s.setI(s.stackLen, n+1)
	s.setI(s.delOff+x, 1)
	s.setI(s.bins[k1].live, 0)
	if k2 >= 0 {
		s.setI(s.bins[k2].live, 0)
	}
}

// elim1 eliminates x, whose one live binary function is k.
func (s *EDAC) elim1(x, k int) bool {
	sd := s.side(k, s.bins[k].x+s.bins[k].y-x) // seen from the neighbour
	y := sd.on
	ux := sd.uot
	s.pushElim(x, k, -1)
	raisedAny := false
	for b := range sd.don {
		if sd.aon[b] == 0 {
			continue
		}
		m := math.Inf(1)
		for a := range sd.dot {
			if sd.aot[a] != 0 {
				m = min(m, sd.cost(b, a)+ux[a])
			}
		}
		s.checks += int64(sd.dot)
		if mva.IsHard(m) {
			if !s.remove(y, b) {
				return false
			}
			continue
		}
		if m > 0 && s.addUnary(y, b, m) {
			raisedAny = true
		}
	}
	if raisedAny {
		s.raised(y)
		return s.projectUnary(y)
	}
	return true
}

// elim2 eliminates x, whose live binary functions k1 and k2 lead to y and
// z, into kt, the live function between y and z.
func (s *EDAC) elim2(x, k1, k2, kt int) {
	s1, s2 := s.side(k1, x), s.side(k2, x)
	t := &s.bins[kt]
	y, z := t.x, t.y // t's own orientation
	if s1.ot != y {
		s1, s2 = s2, s1
	}
	ux := s1.uon
	s.pushElim(x, k1, k2)
	for b := range t.dx {
		if !s.alive(y, b) {
			continue
		}
		for c := range t.dy {
			if !s.alive(z, c) {
				continue
			}
			m := math.Inf(1)
			for a := range s1.don {
				if s1.aon[a] != 0 {
					m = min(m, ux[a]+s1.cost(a, b)+s2.cost(a, c))
				}
			}
			if m > 0 {
				i := t.curOff + b*t.dy + c
				s.setF(i, s.fs[i]+m)
			}
		}
	}
	s.checks += int64(t.dx * t.dy * s1.don)
	s.pushAC(y)
	s.pushAC(z)
	s.pushDAC(y)
	s.pushDAC(z)
}

// restoreDeleted sets the variables eliminated during search (interior
// values vals) to their best values given their neighbours', last
// eliminated first.
func (s *EDAC) restoreDeleted(vals []int) {
	for i := int(s.is[s.stackLen]) - 1; i >= 0; i-- {
		e := s.stack[i]
		s1 := s.side(e.k1, e.x)
		best, bc := -1, math.Inf(1)
		for a := range s1.don {
			if s1.aon[a] == 0 {
				continue
			}
			c := s1.uon[a] + s1.cost(a, vals[s1.ot])
			if e.k2 >= 0 {
				s2 := s.side(e.k2, e.x)
				c += s2.cost(a, vals[s2.ot])
			}
			if best < 0 || c < bc {
				best, bc = a, c
			}
		}
		vals[e.x] = best
	}
}

// maxElimDegree is the largest number of neighbours a variable eliminated
// before search may have: two keeps every function binary (toulbar2's -e=2
// level, done once at the root here, not again during search).
const maxElimDegree = 2

// NewEDAC prepares an EDAC solver for lp: the binary and n-ary functions
// the row's conditioning leaves, merged per pair, and the search state.
func NewEDAC(lp *mva.LocalProblem) *EDAC {
	s := &EDAC{lp: lp, n: lp.NumInterior(), lastFn: -1}
	for k, d := range lp.Domains {
		if d < 1 {
			s.bad = fmt.Errorf("edac: variable %s has an empty domain", lp.Problem.Variables[lp.Vars[k]].Name)
			return s
		}
	}
	s.dom = lp.Domains[lp.NB:]
	s.rank = dacRank(lp)
	s.adjB = make([][]int, s.n)
	s.adjN = make([][]int, s.n)
	pair := map[[2]int]int{}
	for _, f := range lp.Funcs {
		c := condFunc{f: &Factor{}, costs: f.Costs}
		strides := make([]int, len(f.Scope))
		m := 1
		for p := len(f.Scope) - 1; p >= 0; p-- {
			strides[p] = m
			m *= lp.Domains[f.Scope[p]]
		}
		for p, v := range f.Scope {
			if v < lp.NB {
				c.bvars = append(c.bvars, v)
				c.bstrides = append(c.bstrides, strides[p])
			} else {
				c.f.Vars = append(c.f.Vars, v-lp.NB)
				c.f.Dims = append(c.f.Dims, lp.Domains[v])
				c.istrides = append(c.istrides, strides[p])
			}
		}
		c.static = len(c.bvars) == 0
		size := 1
		for _, d := range c.f.Dims {
			size *= d
		}
		if c.static {
			c.f.Costs = f.Costs
		} else {
			c.f.Costs = make([]float64, size)
		}
		src := edacSrc{c: c, kind: min(len(c.f.Vars), 3)}
		switch src.kind {
		case 1:
			src.target = c.f.Vars[0]
		case 2:
			x, y := c.f.Vars[0], c.f.Vars[1]
			if s.rank[x] > s.rank[y] {
				x, y = y, x
				src.swap = true
			}
			k, ok := pair[[2]int{x, y}]
			if !ok {
				k = len(s.bins)
				pair[[2]int{x, y}] = k
				s.bins = append(s.bins, edacBin{x: x, y: y, dx: s.dom[x], dy: s.dom[y], tab: make([]float64, s.dom[x]*s.dom[y])})
				s.adjB[x] = append(s.adjB[x], k)
				s.adjB[y] = append(s.adjB[y], k)
			}
			src.target = k
		case 3:
			nf := edacNary{vars: c.f.Vars, dims: c.f.Dims, tab: c.f.Costs, strides: make([]int, len(c.f.Vars))}
			m := 1
			for p := len(nf.vars) - 1; p >= 0; p-- {
				nf.strides[p] = m
				m *= nf.dims[p]
			}
			src.target = len(s.narys)
			for _, v := range nf.vars {
				s.adjN[v] = append(s.adjN[v], src.target)
			}
			s.narys = append(s.narys, nf)
		}
		s.srcs = append(s.srcs, src)
	}
	s.planElimination(pair)
	for k := range s.bins {
		b := &s.bins[k]
		b.resX, b.fresX = make([]int32, b.dx), make([]int32, b.dx)
		b.resY, b.fresY = make([]int32, b.dy), make([]int32, b.dy)
	}

	// Trailed state layout.
	nf := 1
	s.uoff = make([]int, s.n)
	maxD := 1
	for x, d := range s.dom {
		s.uoff[x] = nf
		nf += d
		maxD = max(maxD, d)
	}
	s.u0 = make([]float64, nf)
	for k := range s.bins {
		b := &s.bins[k]
		b.px = nf
		b.py = nf + b.dx
		nf += b.dx + b.dy
		b.curOff = nf
		nf += b.dx * b.dy
	}
	for j := range s.narys {
		s.narys[j].delta = nf
		nf++
	}
	s.fs = make([]float64, nf)
	ni := 0
	s.aoff = make([]int, s.n)
	for x, d := range s.dom {
		s.aoff[x] = ni
		ni += d
	}
	s.sizeOff = ni
	ni += s.n
	s.asgOff = ni
	ni += s.n
	s.delOff = ni
	ni += s.n
	s.stackLen = ni
	ni++
	s.stack = make([]dynElim, s.n)
	for k := range s.bins {
		s.bins[k].live = ni
		ni++
	}
	for j := range s.narys {
		s.narys[j].cnt = ni
		ni++
	}
	s.is = make([]int32, ni)
	s.makeSides()
	s.sup = make([]int, s.n)
	s.weight = make([]int64, len(s.bins)+len(s.narys))
	s.inAC = make([]bool, s.n)
	s.inDAC = make([]bool, s.n)
	s.inEAC = make([]bool, s.n)
	s.inNC = make([]bool, s.n)
	s.pbuf = make([]float64, maxD)
	s.ebuf = make([]float64, maxD)
	s.full = make([]int, len(lp.Vars))
	s.best = make([]int, s.n)
	return s
}

// planElimination chooses the variables eliminated before search: while
// a variable without n-ary functions has at most maxElimDegree neighbours,
// it is eliminated, which adds a binary function between its two
// neighbours when they had none. The plan depends on the scopes only, so
// it is made once; condition runs it on each row's tables.
func (s *EDAC) planElimination(pair map[[2]int]int) {
	s.gone = make([]bool, s.n)
	nbrs := make([]map[int]int, s.n) // neighbour -> binary function
	for x := range nbrs {
		nbrs[x] = map[int]int{}
	}
	for k, b := range s.bins {
		nbrs[b.x][b.y] = k
		nbrs[b.y][b.x] = k
	}
	for {
		x := -1
		for v := range s.n {
			if !s.gone[v] && len(s.adjN[v]) == 0 && len(nbrs[v]) <= maxElimDegree {
				x = v
				break
			}
		}
		if x < 0 {
			break
		}
		e := edacElim{x: x, into: -1}
		var ys []int
		for y, k := range nbrs[x] {
			ys = append(ys, y)
			e.ks = append(e.ks, k)
		}
		if len(ys) == 2 && s.rank[ys[0]] > s.rank[ys[1]] {
			ys[0], ys[1] = ys[1], ys[0]
			e.ks[0], e.ks[1] = e.ks[1], e.ks[0]
		}
		for _, y := range ys {
			delete(nbrs[y], x)
		}
		if len(ys) == 2 {
			y, z := ys[0], ys[1]
			k, ok := pair[[2]int{y, z}]
			if !ok {
				k = len(s.bins)
				pair[[2]int{y, z}] = k
				s.bins = append(s.bins, edacBin{x: y, y: z, dx: s.dom[y], dy: s.dom[z], tab: make([]float64, s.dom[y]*s.dom[z])})
				s.adjB[y] = append(s.adjB[y], k)
				s.adjB[z] = append(s.adjB[z], k)
				nbrs[y][z] = k
				nbrs[z][y] = k
			}
			e.into = k
		}
		s.gone[x] = true
		s.elim = append(s.elim, e)
	}
	s.goneBin = make([]bool, len(s.bins))
	for _, e := range s.elim {
		for _, k := range e.ks {
			s.goneBin[k] = true
		}
	}
}

// eliminate runs the elimination plan on the row's normalised tables.
func (s *EDAC) eliminate() {
	for _, e := range s.elim {
		x := e.x
		ux := s.u0[s.uoff[x] : s.uoff[x]+s.dom[x]]
		switch len(e.ks) {
		case 0:
			m := math.Inf(1)
			for _, v := range ux {
				m = min(m, v)
			}
			s.c0 += m
		case 1:
			b := &s.bins[e.ks[0]]
			y := b.x + b.y - x
			uy := s.u0[s.uoff[y]:]
			for c := range s.dom[y] {
				m := math.Inf(1)
				for a, v := range ux {
					m = min(m, v+binAt(b, x, a, c))
				}
				uy[c] += m
			}
			s.checks += int64(len(b.tab))
		case 2:
			b1, b2, t := &s.bins[e.ks[0]], &s.bins[e.ks[1]], &s.bins[e.into]
			for c := range t.dx {
				for d := range t.dy {
					m := math.Inf(1)
					for a, v := range ux {
						m = min(m, v+binAt(b1, x, a, c)+binAt(b2, x, a, d))
					}
					t.tab[c*t.dy+d] += m
				}
			}
			s.checks += int64(t.dx * t.dy * len(ux) * 2)
		}
	}
}

// binAt returns the row's cost of binary function b with x = a and its
// other variable = c.
func binAt(b *edacBin, x, a, c int) float64 {
	if x == b.x {
		return b.tab[a*b.dy+c]
	}
	return b.tab[c*b.dy+a]
}

// restore sets the eliminated variables of vals (interior values) to
// their best values given their neighbours', last eliminated first.
func (s *EDAC) restore(vals []int) {
	for i := len(s.elim) - 1; i >= 0; i-- {
		e := &s.elim[i]
		x := e.x
		best, bc := 0, math.Inf(1)
		for a := range s.dom[x] {
			c := s.u0[s.uoff[x]+a]
			for _, k := range e.ks {
				b := &s.bins[k]
				c += binAt(b, x, a, vals[b.x+b.y-x])
			}
			if c < bc {
				best, bc = a, c
			}
		}
		vals[x] = best
	}
}

// Checks returns the function entries read so far.
func (s *EDAC) Checks() int64 { return s.checks }

// Nodes returns the search nodes expanded so far, over all rows.
func (s *EDAC) Nodes() int64 { return s.nodes }

// errBudget stops a row whose search passed EDAC.budget checks.
var errBudget = errors.New("edac: past its budget of checks")

// Describe says what the search did, for a result's notes.
func (s *EDAC) Describe() string {
	if s.bad != nil {
		return s.bad.Error()
	}
	return fmt.Sprintf("edac: %d variables (%d eliminated before search), %d binary and %d n-ary functions, %d nodes, %d eliminations during search",
		s.n, len(s.elim), len(s.bins), len(s.narys), s.nodes, s.dynElims)
}

// SolveRow finds the cheapest interior assignment for the boundary values.
// It returns Hard, with interior set to zeros, when none is feasible.
func (s *EDAC) SolveRow(ctx context.Context, boundary, interior []int) (float64, error) {
	lp := s.lp
	if s.bad != nil {
		return 0, s.bad
	}
	if err := checkRowArgs(lp, boundary, interior); err != nil {
		return 0, fmt.Errorf("edac: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	clear(interior)
	copy(s.full, boundary)
	s.rowChecks = s.checks
	if !s.condition(boundary) {
		return mva.Hard, nil
	}
	s.ub, s.stop, s.err = mva.Hard, false, nil
	if !s.noLocalSearch {
		s.localSearch()
	}
	s.reset()
	if s.propagate() && s.reverseDAC() {
		s.search(ctx)
	}
	if s.stop {
		return 0, s.err
	}
	if mva.IsHard(s.ub) {
		return mva.Hard, nil
	}
	copy(interior, s.best)
	return s.ub, nil
}

// condition fills the row's tables from the boundary values and
// normalises them: each table's minimum moves into the constant, so that
// every cost is non-negative. It reports false when the row is infeasible
// on its face (a Hard constant or a table of Hard entries only).
func (s *EDAC) condition(boundary []int) bool {
	s.c0 = 0
	clear(s.u0)
	for k := range s.bins {
		clear(s.bins[k].tab)
	}
	for i := range s.srcs {
		src := &s.srcs[i]
		c := &src.c
		if !c.static {
			c.fill(condKeyOf(c, boundary))
		}
		t := c.f.Costs
		s.checks += int64(len(t))
		switch src.kind {
		case 0:
			s.c0 += t[0]
		case 1:
			u := s.u0[s.uoff[src.target]:]
			for a, v := range t {
				u[a] += v
			}
		case 2:
			b := &s.bins[src.target]
			if !src.swap {
				for e, v := range t {
					b.tab[e] += v
				}
				break
			}
			for yb := range b.dy {
				for xa := range b.dx {
					b.tab[xa*b.dy+yb] += t[yb*b.dx+xa]
				}
			}
		}
	}
	s.integral = isWhole(s.c0)
	for x := range s.n {
		u := s.u0[s.uoff[x] : s.uoff[x]+s.dom[x]]
		s.c0 += shiftMin(u)
		s.integral = s.integral && allWhole(u)
	}
	for k := range s.bins {
		s.c0 += shiftMin(s.bins[k].tab)
		s.integral = s.integral && allWhole(s.bins[k].tab)
	}
	// n-ary tables are shared with the problem (static ones): their
	// minimum goes into the delta at reset instead of being subtracted.
	for j := range s.narys {
		s.integral = s.integral && allWhole(s.narys[j].tab)
	}
	s.eliminate()
	return !mva.IsHard(s.c0)
}

// shiftMin subtracts t's minimum from every entry and returns it: Hard
// when every entry is Hard (then t is left as it is).
func shiftMin(t []float64) float64 {
	m := math.Inf(1)
	for _, v := range t {
		m = min(m, v)
	}
	if mva.IsHard(m) || m == 0 {
		return m
	}
	for i := range t {
		t[i] -= m
	}
	return m
}

// wholeLimit bounds the costs whose sums float64 keeps exact.
const wholeLimit = 1 << 50

func isWhole(v float64) bool {
	return mva.IsHard(v) || (v == math.Trunc(v) && math.Abs(v) < wholeLimit)
}

func allWhole(t []float64) bool {
	for _, v := range t {
		if !isWhole(v) {
			return false
		}
	}
	return true
}

// reset puts the trailed state at the row's root: every value alive, the
// normalised unary costs, zero deltas, every queue full.
func (s *EDAC) reset() {
	s.ft, s.it = s.ft[:0], s.it[:0]
	clear(s.fs)
	s.fs[0] = s.c0
	copy(s.fs[1:], s.u0[1:])
	for k := range s.bins {
		copy(s.bins[k].cur, s.bins[k].tab)
	}
	clear(s.is)
	for x, d := range s.dom {
		for a := range d {
			s.is[s.aoff[x]+a] = 1
		}
		s.is[s.sizeOff+x] = int32(d)
		s.sup[x] = 0
	}
	for k := range s.bins {
		if !s.goneBin[k] {
			s.is[s.bins[k].live] = 1
		}
	}
	for x := range s.n {
		if !s.gone[x] {
			continue
		}
		// Out of the search: one value, no cost, nothing to propagate.
		for a := range s.dom[x] {
			s.is[s.aoff[x]+a] = 0
			s.fs[s.uoff[x]+a] = 0
		}
		s.is[s.aoff[x]] = 1
		s.is[s.sizeOff+x] = 1
		s.is[s.asgOff+x] = 1
	}
	for j := range s.narys {
		nf := &s.narys[j]
		s.is[nf.cnt] = int32(len(nf.vars))
		m := math.Inf(1)
		for _, v := range nf.tab {
			m = min(m, v)
		}
		if mva.IsHard(m) {
			s.fs[0] = m
		} else {
			s.fs[nf.delta] = m
			s.fs[0] += m
		}
	}
	s.acQ, s.dacQ, s.eacQ = s.acQ[:0], s.dacQ[:0], s.eacQ[:0]
	for x := range s.n {
		if s.gone[x] {
			continue
		}
		s.inAC[x], s.inDAC[x], s.inEAC[x] = true, true, true
		s.acQ = append(s.acQ, x)
		s.dacQ = append(s.dacQ, x)
		s.eacQ = append(s.eacQ, x)
	}
	s.ncAll = true
	s.dacRev = true
}

// reverseDAC reverses the DAC order at the root and propagates again:
// the first pass gathered costs towards the low ranks, the second moves
// them on towards the high ranks and raises c∅ further (on a 2×2 grid from
// 85 to the optimum 108), as toulbar2's preprocessing does when it sets
// its DAC order. The search keeps the reversed order.
func (s *EDAC) reverseDAC() bool {
	s.dacRev = false
	for x := range s.n {
		if !s.gone[x] {
			s.pushDAC(x)
			s.pushEAC(x)
		}
	}
	return s.propagate()
}

// tolerance is how far past the upper bound a lower bound must be to
// prune: 0 on whole-number costs, a rounding margin otherwise.
func (s *EDAC) threshold() float64 {
	if s.integral || mva.IsHard(s.ub) {
		return s.ub
	}
	return s.ub + 1e-9*max(1, math.Abs(s.ub))
}

func (s *EDAC) setF(i int, v float64) {
	s.ft = append(s.ft, fTrail{int32(i), s.fs[i]})
	s.fs[i] = v
}

func (s *EDAC) setI(i int, v int32) {
	s.it = append(s.it, iTrail{int32(i), s.is[i]})
	s.is[i] = v
}

func (s *EDAC) undo(fm, im int) {
	for k := len(s.ft) - 1; k >= fm; k-- {
		s.fs[s.ft[k].i] = s.ft[k].v
	}
	for k := len(s.it) - 1; k >= im; k-- {
		s.is[s.it[k].i] = s.it[k].v
	}
	s.ft, s.it = s.ft[:fm], s.it[:im]
}

func (s *EDAC) alive(x, a int) bool { return s.is[s.aoff[x]+a] != 0 }
func (s *EDAC) size(x int) int      { return int(s.is[s.sizeOff+x]) }
func (s *EDAC) u(x, a int) float64  { return s.fs[s.uoff[x]+a] }

func (s *EDAC) pushAC(x int) {
	if !s.inAC[x] {
		s.inAC[x] = true
		s.acQ = append(s.acQ, x)
	}
}

func (s *EDAC) pushDAC(x int) {
	if !s.inDAC[x] {
		s.inDAC[x] = true
		s.dacQ = append(s.dacQ, x)
	}
}

func (s *EDAC) pushEAC(x int) {
	if !s.inEAC[x] {
		s.inEAC[x] = true
		s.eacQ = append(s.eacQ, x)
	}
}

// pushEACNeighbours queues x's neighbours for an EAC check: a change at x
// (a lost value, a raised unary cost) may take their full supports away.
func (s *EDAC) pushEACNeighbours(x int) {
	for _, k := range s.adjB[x] {
		b := &s.bins[k]
		if s.is[b.live] != 0 {
			s.pushEAC(b.x + b.y - x)
		}
	}
}

// remove deletes value a of x; false on a domain wipe-out.
func (s *EDAC) remove(x, a int) bool {
	if !s.alive(x, a) {
		return true
	}
	s.setI(s.aoff[x]+a, 0)
	sz := s.is[s.sizeOff+x] - 1
	s.setI(s.sizeOff+x, sz)
	if sz == 0 {
		return false
	}
	s.pushAC(x)
	return true
}

// addUnary raises u_x(a) by c and queues x for NC* pruning. It reports
// whether the cost was zero before: only then can a full support (which
// needs a zero unary cost) or the unary support be lost.
func (s *EDAC) addUnary(x, a int, c float64) bool {
	i := s.uoff[x] + a
	old := s.fs[i]
	s.setF(i, old+c)
	if !s.inNC[x] {
		s.inNC[x] = true
		s.ncQ = append(s.ncQ, x)
	}
	return old <= 0
}

// raised records that x's unary costs went up: lower neighbours' full
// supports and neighbours' existential supports may be gone.
func (s *EDAC) raised(x int) {
	s.pushDAC(x)
	s.pushEAC(x)
	s.pushEACNeighbours(x)
}

// projectUnary moves x's least unary cost into c∅ (NC*); false when c∅
// reaches the upper bound.
func (s *EDAC) projectUnary(x int) bool {
	m := math.Inf(1)
	o := s.uoff[x]
	for a := range s.dom[x] {
		if s.alive(x, a) {
			m = min(m, s.fs[o+a])
		}
	}
	if !(m > 0) {
		return true
	}
	if mva.IsHard(m) {
		return false
	}
	for a := range s.dom[x] {
		if s.alive(x, a) {
			s.setF(o+a, s.fs[o+a]-m)
		}
	}
	s.setF(0, s.fs[0]+m)
	s.ncAll = true
	return s.fs[0] < s.threshold()
}

// side describes binary function k seen from variable on: the strides of
// on's and the other variable's values in the table, their deltas, alive
// flags and unary costs, and the residual supports of on's values.
type side struct {
	tab       []float64
	on, ot    int       // variables
	son, sot  int       // strides
	pon, pot  []float64 // deltas (views of fs)
	aon, aot  []int32   // alive flags (views of is)
	uon, uot  []float64 // unary costs (views of fs)
	pOn, pOt  int       // fs offsets of the deltas
	res, fres []int32   // on's residual AC and full supports
	don, dot  int       // domain sizes
}

// side returns binary function k seen from on.
func (s *EDAC) side(k, on int) *side {
	if on == s.bins[k].x {
		return &s.sides[2*k]
	}
	return &s.sides[2*k+1]
}

// makeSides builds every binary function's two sides, once fs and is
// exist (they are never reallocated, so the views stay valid).
func (s *EDAC) makeSides() {
	s.sides = make([]side, 2*len(s.bins))
	for k := range s.bins {
		b := &s.bins[k]
		for i := range 2 {
			b.cur = s.fs[b.curOff : b.curOff+b.dx*b.dy]
			sd := side{tab: b.cur}
			if i == 0 {
				sd.on, sd.ot, sd.son, sd.sot, sd.pOn, sd.pOt, sd.don, sd.dot = b.x, b.y, b.dy, 1, b.px, b.py, b.dx, b.dy
				sd.res, sd.fres = b.resX, b.fresX
			} else {
				sd.on, sd.ot, sd.son, sd.sot, sd.pOn, sd.pOt, sd.don, sd.dot = b.y, b.x, 1, b.dy, b.py, b.px, b.dy, b.dx
				sd.res, sd.fres = b.resY, b.fresY
			}
			sd.pon, sd.pot = s.fs[sd.pOn:sd.pOn+sd.don], s.fs[sd.pOt:sd.pOt+sd.dot]
			sd.aon, sd.aot = s.is[s.aoff[sd.on]:s.aoff[sd.on]+sd.don], s.is[s.aoff[sd.ot]:s.aoff[sd.ot]+sd.dot]
			sd.uon = s.fs[s.uoff[sd.on] : s.uoff[sd.on]+sd.don]
			sd.uot = s.fs[s.uoff[sd.ot] : s.uoff[sd.ot]+sd.dot]
			s.sides[2*k+i] = sd
		}
	}
}

// cost is the current cost of (on = a, other = c).
func (sd *side) cost(a, c int) float64 {
	return sd.tab[a*sd.son+c*sd.sot] - sd.pon[a] - sd.pot[c]
}

// minCost returns the least current cost of on = a over the other
// variable's live values and where it is, trying the residual support
// first.
func (sd *side) minCost(a int) (float64, int) {
	if r := int(sd.res[a]); sd.aot[r] != 0 && sd.cost(a, r) <= 0 {
		return 0, r
	}
	m, at := math.Inf(1), 0
	base, pa := a*sd.son, sd.pon[a]
	for c := range sd.dot {
		if sd.aot[c] != 0 {
			if v := sd.tab[base+c*sd.sot] - pa - sd.pot[c]; v < m {
				m, at = v, c
			}
		}
	}
	sd.res[a] = int32(at)
	return m, at
}

// minFull returns the least c(a, c) + u(c) of on = a over the other
// variable's live values, trying the residual full support first.
func (sd *side) minFull(a int) float64 {
	if r := int(sd.fres[a]); sd.aot[r] != 0 && sd.cost(a, r)+sd.uot[r] <= 0 {
		return 0
	}
	m, at := math.Inf(1), 0
	base, pa := a*sd.son, sd.pon[a]
	for c := range sd.dot {
		if sd.aot[c] != 0 {
			if v := sd.tab[base+c*sd.sot] - pa - sd.pot[c] + sd.uot[c]; v < m {
				m, at = v, c
			}
		}
	}
	sd.fres[a] = int32(at)
	return m
}

// findSupport projects binary function k onto variable on (AC*): each
// value's least cost over the other variable's live values moves into its
// unary cost; values with none finite are removed. It reports whether a
// unary cost rose and false on a wipe-out.
func (s *EDAC) findSupport(k, on int) (bool, bool) {
	sd := s.side(k, on)
	raisedAny := false
	for a := range sd.don {
		if sd.aon[a] == 0 {
			continue
		}
		m, _ := sd.minCost(a)
		s.checks += int64(sd.dot)
		if mva.IsHard(m) {
			s.lastFn = k
			if !s.remove(on, a) {
				return raisedAny, false
			}
			continue
		}
		if m > 0 {
			s.setF(sd.pOn+a, sd.pon[a]+m)
			raisedAny = s.addUnary(on, a, m) || raisedAny
			s.lastFn = k
		}
	}
	return raisedAny, true
}

// findFullSupport gives every value of on a full support in the other
// variable of binary function k (DAC*, and EAC's enforcement): it extends
// the least unary costs of the other variable into k that let each value's
// least c(a, b) + u(b) move onto u_on(a), then moves it. It reports whether
// a unary cost of on rose and false on a wipe-out.
func (s *EDAC) findFullSupport(k, on int) (bool, bool) {
	sd := s.side(k, on)
	P, E := s.pbuf[:sd.don], s.ebuf[:sd.dot]
	ut := s.uoff[sd.ot]
	positive := false
	for a := range sd.don {
		P[a] = 0
		if sd.aon[a] == 0 {
			continue
		}
		m := sd.minFull(a)
		s.checks += int64(sd.dot)
		P[a] = m
		if m > 0 {
			positive = true
		}
	}
	if !positive {
		return false, true
	}
	for c := range sd.dot {
		E[c] = 0
		if sd.aot[c] == 0 {
			continue
		}
		for a := range sd.don {
			if sd.aon[a] != 0 && P[a] > 0 && !mva.IsHard(P[a]) {
				E[c] = max(E[c], P[a]-sd.cost(a, c))
			}
		}
	}
	for c, e := range E {
		if e > 0 {
			s.setF(ut+c, s.fs[ut+c]-e)
			s.setF(sd.pOt+c, sd.pot[c]-e)
		}
	}
	s.lastFn = k
	raisedAny := false
	for a, p := range P {
		if sd.aon[a] == 0 || !(p > 0) {
			continue
		}
		if mva.IsHard(p) {
			if !s.remove(on, a) {
				return raisedAny, false
			}
			continue
		}
		s.setF(sd.pOn+a, sd.pon[a]+p)
		raisedAny = s.addUnary(on, a, p) || raisedAny
	}
	return raisedAny, true
}

// assigned handles x becoming assigned (one value left) once: its n-ary
// functions lose an unassigned variable, project their minimum into c∅,
// and become a unary cost when one variable is left.
func (s *EDAC) assigned(x int) bool {
	if s.is[s.asgOff+x] != 0 {
		return true
	}
	s.setI(s.asgOff+x, 1)
	for _, j := range s.adjN[x] {
		nf := &s.narys[j]
		cnt := s.is[nf.cnt]
		if cnt <= 1 {
			continue
		}
		s.setI(nf.cnt, cnt-1)
		var ok bool
		if cnt-1 == 1 {
			ok = s.absorb(j)
		} else {
			ok = s.projectNary(j)
		}
		if !ok {
			s.lastFn = len(s.bins) + j
			return false
		}
	}
	return true
}

// value returns the value of an assigned variable.
func (s *EDAC) value(x int) int {
	for a := range s.dom[x] {
		if s.alive(x, a) {
			return a
		}
	}
	return 0
}

// absorb moves n-ary function j, all of whose variables but one are
// assigned, into that variable's unary costs.
func (s *EDAC) absorb(j int) bool {
	nf := &s.narys[j]
	base, y, sy := 0, -1, 0
	for p, v := range nf.vars {
		if s.is[s.asgOff+v] != 0 {
			base += s.value(v) * nf.strides[p]
		} else {
			y, sy = v, nf.strides[p]
		}
	}
	d := s.fs[nf.delta]
	raisedAny := false
	for b := range s.dom[y] {
		if !s.alive(y, b) {
			continue
		}
		c := nf.tab[base+b*sy] - d
		s.checks++
		if mva.IsHard(c) {
			if !s.remove(y, b) {
				return false
			}
			continue
		}
		if c > 0 && s.addUnary(y, b, c) {
			raisedAny = true
		}
	}
	if raisedAny {
		s.lastFn = len(s.bins) + j
		s.raised(y)
		return s.projectUnary(y)
	}
	return true
}

// projectNary moves the least entry of n-ary function j consistent with
// the assigned variables and the live values into c∅, when there are at
// most naryProjectMax such entries.
func (s *EDAC) projectNary(j int) bool {
	nf := &s.narys[j]
	base, n := 0, 1
	var free [16]int
	nfree := 0
	for p, v := range nf.vars {
		if s.is[s.asgOff+v] != 0 {
			base += s.value(v) * nf.strides[p]
			continue
		}
		n *= nf.dims[p]
		if nfree == len(free) || n > naryProjectMax {
			return true
		}
		free[nfree] = p
		nfree++
	}
	var dig [16]int
	m := math.Inf(1)
	idx := base
	for range n {
		ok := true
		for q := range nfree {
			if !s.alive(nf.vars[free[q]], dig[q]) {
				ok = false
				break
			}
		}
		if ok {
			m = min(m, nf.tab[idx])
		}
		for q := nfree - 1; q >= 0; q-- {
			p := free[q]
			dig[q]++
			if dig[q] < nf.dims[p] {
				idx += nf.strides[p]
				break
			}
			idx -= (nf.dims[p] - 1) * nf.strides[p]
			dig[q] = 0
		}
	}
	s.checks += int64(n)
	m -= s.fs[nf.delta]
	if !(m > 0) {
		return true
	}
	if mva.IsHard(m) {
		return false
	}
	s.setF(nf.delta, s.fs[nf.delta]+m)
	s.setF(0, s.fs[0]+m)
	s.ncAll = true
	return s.fs[0] < s.threshold()
}

// processAC restores AC* around x, whose domain shrank.
func (s *EDAC) processAC(x int) bool {
	if s.deleted(x) {
		return true
	}
	single := s.size(x) == 1
	if single && !s.assigned(x) {
		return false
	}
	for _, k := range s.adjB[x] {
		b := &s.bins[k]
		if s.is[b.live] == 0 {
			continue
		}
		y := b.x + b.y - x
		if y == s.receiver(b) && !single && s.size(y) > 1 {
			// y receives k's costs by DAC (pushDAC(x) below), whose
			// full supports are also supports: projecting k onto y
			// alone first would move the costs greedily, a weaker
			// bound (the toulbar2 order).
			s.pushEAC(y)
			continue
		}
		r, ok := s.findSupport(k, y)
		if !ok {
			return false
		}
		if r {
			s.raised(y)
			if !s.projectUnary(y) {
				return false
			}
		}
		s.pushEAC(y)
		if single || s.size(y) == 1 {
			// Everything of k is now in y's (or x's) unary costs.
			if s.size(y) == 1 {
				if r, ok := s.findSupport(k, x); !ok {
					return false
				} else if r {
					s.raised(x)
				}
			}
			s.setI(b.live, 0)
		}
	}
	if !s.projectUnary(x) {
		return false
	}
	s.pushDAC(x)
	s.pushEAC(x)
	return true
}

// processDAC restores full supports in y for y's lower neighbours.
func (s *EDAC) processDAC(y int) bool {
	if s.deleted(y) {
		return true
	}
	for _, k := range s.adjB[y] {
		b := &s.bins[k]
		if s.is[b.live] == 0 || s.receiver(b) == y {
			continue
		}
		x := s.receiver(b)
		r, ok := s.findFullSupport(k, x)
		if !ok {
			return false
		}
		if r {
			s.raised(x)
			if !s.projectUnary(x) {
				return false
			}
		}
	}
	return true
}

// receiver returns the variable of b that DAC gives full supports to: the
// lower in rank, or the higher once the order is reversed.
func (s *EDAC) receiver(b *edacBin) int {
	if s.dacRev {
		return b.y
	}
	return b.x
}

// eacSupported reports whether value a of x has unary cost 0 and a full
// support in every neighbour.
func (s *EDAC) eacSupported(x, a int) bool {
	if !s.alive(x, a) || s.u(x, a) > 0 {
		return false
	}
	for _, k := range s.adjB[x] {
		if s.is[s.bins[k].live] == 0 {
			continue
		}
		sd := s.side(k, x)
		s.checks += int64(sd.dot)
		if sd.minFull(a) > 0 {
			return false
		}
	}
	return true
}

// processEAC gives x an existential support, enforcing full supports
// towards x from all its neighbours when it has none.
func (s *EDAC) processEAC(x int) bool {
	if s.deleted(x) {
		return true
	}
	if s.eacSupported(x, s.sup[x]) {
		return true
	}
	for a := range s.dom[x] {
		if a != s.sup[x] && s.eacSupported(x, a) {
			s.sup[x] = a
			return true
		}
	}
	s.eacRounds++
	raisedAny := false
	for _, k := range s.adjB[x] {
		if s.is[s.bins[k].live] == 0 {
			continue
		}
		r, ok := s.findFullSupport(k, x)
		if !ok {
			return false
		}
		raisedAny = raisedAny || r
	}
	if raisedAny {
		s.raised(x)
	}
	return s.projectUnary(x)
}

// pruneAll removes every value whose unary cost reaches the upper bound
// with c∅ (NC*).
func (s *EDAC) pruneAll() bool {
	s.ncAll = false
	thr := s.threshold() - s.fs[0]
	for x := range s.n {
		if s.size(x) == 1 || s.deleted(x) {
			continue
		}
		o := s.uoff[x]
		for a := range s.dom[x] {
			if s.alive(x, a) && s.fs[o+a] >= thr {
				if !s.remove(x, a) {
					return false
				}
			}
		}
	}
	return true
}

// pruneVar removes x's values whose unary cost reaches the upper bound
// with c∅ (NC*).
func (s *EDAC) pruneVar(x int) bool {
	if s.size(x) == 1 || s.deleted(x) {
		return true
	}
	thr := s.threshold() - s.fs[0]
	o := s.uoff[x]
	for a := range s.dom[x] {
		if s.alive(x, a) && s.fs[o+a] >= thr {
			if !s.remove(x, a) {
				return false
			}
		}
	}
	return true
}

// maxEACRounds caps the EAC enforcements of one propagation: each raises
// c∅, which on whole-number costs bounds them; the cap guards fractional
// costs against endless tiny transfers.
func (s *EDAC) maxEACRounds() int { return 4*s.n + 64 }

// propagate enforces EDAC and NC*; false when the node is pruned.
func (s *EDAC) propagate() bool {
	s.eacRounds = 0
	ok := s.propagateLoop()
	if !ok {
		s.fail()
	}
	return ok
}

// fail empties the queues after a wipe-out or a bound reached, and
// charges the function whose transfer came last (dom/wdeg).
func (s *EDAC) fail() {
	for _, q := range [][]int{s.acQ, s.dacQ, s.eacQ} {
		for _, x := range q {
			s.inAC[x], s.inDAC[x], s.inEAC[x] = false, false, false
		}
	}
	s.acQ, s.dacQ, s.eacQ = s.acQ[:0], s.dacQ[:0], s.eacQ[:0]
	for _, x := range s.ncQ {
		s.inNC[x] = false
	}
	s.ncQ = s.ncQ[:0]
	s.ncAll = false
	if s.lastFn >= 0 {
		s.weight[s.lastFn]++
	}
}

func (s *EDAC) propagateLoop() bool {
	for {
		if !(s.fs[0] < s.threshold()) {
			return false
		}
		switch {
		case len(s.acQ) > 0:
			x := s.acQ[len(s.acQ)-1]
			s.acQ = s.acQ[:len(s.acQ)-1]
			s.inAC[x] = false
			if !s.processAC(x) {
				return false
			}
		case len(s.dacQ) > 0:
			// Highest variable first, so that one pass reaches the
			// fixpoint.
			bi := 0
			for i, x := range s.dacQ {
				if (s.rank[x] > s.rank[s.dacQ[bi]]) != s.dacRev {
					bi = i
				}
			}
			x := s.dacQ[bi]
			s.dacQ[bi] = s.dacQ[len(s.dacQ)-1]
			s.dacQ = s.dacQ[:len(s.dacQ)-1]
			s.inDAC[x] = false
			if !s.processDAC(x) {
				return false
			}
		case s.ncAll:
			for _, x := range s.ncQ {
				s.inNC[x] = false
			}
			s.ncQ = s.ncQ[:0]
			if !s.pruneAll() {
				return false
			}
		case len(s.ncQ) > 0:
			x := s.ncQ[len(s.ncQ)-1]
			s.ncQ = s.ncQ[:len(s.ncQ)-1]
			s.inNC[x] = false
			if !s.pruneVar(x) {
				return false
			}
		case len(s.eacQ) > 0:
			x := s.eacQ[len(s.eacQ)-1]
			s.eacQ = s.eacQ[:len(s.eacQ)-1]
			s.inEAC[x] = false
			if s.eacRounds >= s.maxEACRounds() {
				continue
			}
			if !s.processEAC(x) {
				return false
			}
		default:
			return true
		}
	}
}

// liveDegree returns the weighted degree of x: the weights (plus one) of
// its functions that still link it to an unassigned variable.
func (s *EDAC) liveDegree(x int) int64 {
	var w int64
	for _, k := range s.adjB[x] {
		if s.is[s.bins[k].live] != 0 {
			w += 1 + s.weight[k]
		}
	}
	for _, j := range s.adjN[x] {
		if s.is[s.narys[j].cnt] > 1 {
			w += 1 + s.weight[len(s.bins)+j]
		}
	}
	return w
}

// bestValue returns x's live value of least unary cost, the EAC support
// first among equals.
func (s *EDAC) bestValue(x int) int {
	a := s.sup[x]
	if !s.alive(x, a) {
		a = -1
	}
	for c := range s.dom[x] {
		if s.alive(x, c) && (a < 0 || s.u(x, c) < s.u(x, a)) {
			a = c
		}
	}
	return a
}

// search explores the node the trail describes, which propagate accepted,
// and leaves the trail as it found it.
func (s *EDAC) search(ctx context.Context) {
	s.nodes++
	if s.nodes&0x3ff == 0 {
		if err := ctx.Err(); err != nil {
			s.stop, s.err = true, err
			return
		}
	}
	if s.budget > 0 && s.checks-s.rowChecks > s.budget {
		s.stop, s.err = true, errBudget
		return
	}
	fm, im := len(s.ft), len(s.it)
	defer s.undo(fm, im)
	for {
		changed, ok := s.eliminateSmall()
		if !ok {
			s.fail()
			return
		}
		if changed && !s.propagate() {
			return
		}
		if !changed {
			break
		}
	}
	// Variables without live functions take their cheapest value; then
	// the variable of least domain over weighted degree is branched on.
	x, bestScore := -1, 0.0
	for v := range s.n {
		if s.size(v) == 1 || s.deleted(v) {
			continue
		}
		w := s.liveDegree(v)
		if w == 0 {
			a := s.bestValue(v)
			for c := range s.dom[v] {
				if c != a && !s.remove(v, c) {
					s.fail()
					return
				}
			}
			continue
		}
		if score := float64(s.size(v)) / float64(w); x < 0 || score < bestScore {
			x, bestScore = v, score
		}
	}
	if len(s.acQ) > 0 && !s.propagate() {
		return
	}
	if x < 0 {
		s.leaf()
		return
	}
	if s.size(x) == 1 {
		// Propagating the free variables' values settled x too.
		s.search(ctx)
		return
	}
	a := s.bestValue(x)
	if s.worstFirst {
		for c := range s.dom[x] {
			if s.alive(x, c) && s.u(x, c) >= s.u(x, a) {
				a = c
			}
		}
	}
	fm2, im2 := len(s.ft), len(s.it)
	ver := s.ubVer
	ok := true
	for c := range s.dom[x] {
		if c != a && !s.remove(x, c) {
			ok = false
			s.fail()
			break
		}
	}
	if ok && s.propagate() {
		s.search(ctx)
	}
	s.undo(fm2, im2)
	if s.stop {
		return
	}
	// A better upper bound prunes more values now.
	s.ncAll = s.ubVer != ver
	if !s.remove(x, a) {
		s.fail()
		return
	}
	if s.propagate() {
		s.search(ctx)
	}
}

// leaf records the complete assignment the domains hold when it beats the
// upper bound, at its exact cost.
func (s *EDAC) leaf() {
	nb := s.lp.NB
	for x := range s.n {
		s.full[nb+x] = s.value(x)
	}
	s.restoreDeleted(s.full[nb:])
	s.restore(s.full[nb:])
	c := s.lp.Eval(s.full)
	s.checks += int64(len(s.lp.Funcs))
	if c < s.ub {
		s.ub = c
		copy(s.best, s.full[nb:])
		s.ubVer++
	}
}

// localSearch sets the first upper bound: a greedy assignment in variable
// order (each value chosen by the unary and binary costs towards the
// variables already set), improved by sweeps that move one variable at a
// time to its best value given the others, until none moves.
func (s *EDAC) localSearch() {
	nb := s.lp.NB
	cur := s.full[nb:]
	set := make([]bool, s.n)
	for x := range s.n {
		if s.gone[x] {
			continue
		}
		best, bc := 0, math.Inf(1)
		for a := range s.dom[x] {
			c := s.u0[s.uoff[x]+a]
			for _, k := range s.adjB[x] {
				b := &s.bins[k]
				y := b.x + b.y - x
				if !set[y] || s.goneBin[k] {
					continue
				}
				if x == b.x {
					c += b.tab[a*b.dy+cur[y]]
				} else {
					c += b.tab[cur[y]*b.dy+a]
				}
			}
			if c < bc {
				best, bc = a, c
			}
		}
		cur[x] = best
		set[x] = true
	}
	for range 8 {
		moved := false
		for x := range s.n {
			if s.gone[x] {
				continue
			}
			old := cur[x]
			best, bc := old, s.localCost(x, old)
			for a := range s.dom[x] {
				if a == old {
					continue
				}
				if c := s.localCost(x, a); c < bc {
					best, bc = a, c
				}
			}
			cur[x] = best
			moved = moved || best != old
		}
		if !moved {
			break
		}
	}
	s.restore(cur)
	c := s.lp.Eval(s.full)
	s.checks += int64(len(s.lp.Funcs))
	if c < s.ub {
		s.ub = c
		copy(s.best, cur)
	}
}

// localCost is the cost of the functions holding x with x = a and the
// other variables as in s.full.
func (s *EDAC) localCost(x, a int) float64 {
	cur := s.full[s.lp.NB:]
	c := s.u0[s.uoff[x]+a]
	for _, k := range s.adjB[x] {
		b := &s.bins[k]
		if s.goneBin[k] {
			continue
		}
		if x == b.x {
			c += b.tab[a*b.dy+cur[b.y]]
		} else {
			c += b.tab[cur[b.x]*b.dy+a]
		}
	}
	for _, j := range s.adjN[x] {
		nf := &s.narys[j]
		idx := 0
		for p, v := range nf.vars {
			w := cur[v]
			if v == x {
				w = a
			}
			idx += w * nf.strides[p]
		}
		c += nf.tab[idx]
	}
	s.checks += int64(len(s.adjB[x]) + len(s.adjN[x]))
	return c
}
