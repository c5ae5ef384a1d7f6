package local

// Variable elimination of small degree for EDAC: before search
// (planElimination, eliminate, restore) and during it (eliminateSmall,
// elim1, elim2, restoreDeleted).

import (
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
)

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
//
// Only the variables in elimQ are looked at, in index order: those that
// lost a live function (kill) or a live n-ary function since they were
// last looked at, the only changes that can make one eliminable (search
// keeps a branching node's queue for its second branch, as dee's).
func (s *EDAC) eliminateSmall() (changed, ok bool) {
	for _, x := range s.elimQ.take() {
		c, ok := s.elimVar(x)
		if !ok {
			return true, false
		}
		changed = changed || c
	}
	if s.verifyQueues && !changed {
		// Tests: every variable, as before the queue; an elimination
		// here is a change the queue missed.
		for x := range s.n {
			c, ok := s.elimVar(x)
			if c {
				s.elimMissed++
				changed = true
			}
			if !ok {
				return true, false
			}
		}
	}
	return changed, true
}

// elimVar eliminates x if it is left with one live binary function, or
// two whose variables share a live or dormant one, and no live n-ary
// function (see eliminateSmall); it reports whether it did, and false on
// a wipe-out.
func (s *EDAC) elimVar(x int) (changed, ok bool) {
	if nk := s.is[s.ladjLen+x]; nk == 0 || nk > 2 || s.size(x) == 1 || s.deleted(x) || s.gone[x] {
		return false, true
	}
	var ks [2]int
	l := s.ladj(x)
	nk := len(l)
	for i, k := range l {
		ks[i] = int(k)
	}
	for _, j := range s.adjN[x] {
		if s.is[s.narys[j].cnt] > 1 {
			return false, true
		}
	}
	if nk == 1 {
		return true, s.elim1(x, ks[0])
	}
	y, z := s.bins[ks[0]].x+s.bins[ks[0]].y-x, s.bins[ks[1]].x+s.bins[ks[1]].y-x
	kt := -1
	for _, k := range s.adjB[y] {
		b := &s.bins[k]
		if b.x+b.y-y == z && (s.is[b.live] != 0 || s.dormant[k]) {
			kt = k
			if s.is[b.live] != 0 {
				break
			}
		}
	}
	if kt < 0 || s.size(y) == 1 || s.size(z) == 1 || s.deleted(y) || s.deleted(z) {
		return false, true
	}
	if s.is[s.bins[kt].live] == 0 {
		// A dormant function joins the search, its costs zero (the
		// trail restores them, and its sleep, on backtracking).
		s.wake(kt)
		s.woken++
	}
	s.elim2(x, ks[0], ks[1], kt)
	return true, true
}

// push records x's elimination on the stack.
func (s *EDAC) pushElim(x, k1, k2 int) {
	s.dynElims++
	n := s.is[s.stackLen]
	s.stack[n] = dynElim{x, k1, k2}
	s.setI(s.stackLen, n+1)
	s.setI(s.delOff+x, 1)
	s.kill(k1)
	if k2 >= 0 {
		s.kill(k2)
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
	s.markDEE(y)
	s.markDEE(z)
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
// level; eliminateSmall does the same during search).
const maxElimDegree = 2

// planElimination chooses the variables eliminated before search: while
// a variable without n-ary functions has at most maxElimDegree neighbours,
// it is eliminated, which adds a binary function between its two
// neighbours when they had none. The plan depends on the scopes only, so
// it is made once; condition runs it on each row's tables.
func (s *EDAC) planElimination(pair *pairIndex) {
	s.gone = make([]bool, s.n)
	// nbrs lists each variable's neighbours and their binary functions,
	// carved from one slab (lists, not maps: a 40×40 grid built 1600 maps
	// for the four variables it eliminates).
	type nbr struct{ y, k int }
	cnt := make([]int, s.n)
	for _, b := range s.bins {
		cnt[b.x]++
		cnt[b.y]++
	}
	slab := make([]nbr, 2*len(s.bins))
	nbrs := make([][]nbr, s.n)
	for x, c := range cnt {
		nbrs[x], slab = slab[:0:c], slab[c:]
	}
	for k, b := range s.bins {
		nbrs[b.x] = append(nbrs[b.x], nbr{b.y, k})
		nbrs[b.y] = append(nbrs[b.y], nbr{b.x, k})
	}
	drop := func(y, x int) {
		l := nbrs[y]
		for i, e := range l {
			if e.y == x {
				l[i] = l[len(l)-1]
				nbrs[y] = l[:len(l)-1]
				return
			}
		}
	}
	// The lowest eligible variable goes first; eliminating x changes only
	// its neighbours' eligibility, so the scan resumes at the lowest of
	// them and x.
	next := 0
	for {
		x := -1
		for v := next; v < s.n; v++ {
			if !s.gone[v] && len(s.adjN[v]) == 0 && len(nbrs[v]) <= maxElimDegree {
				x = v
				break
			}
		}
		if x < 0 {
			break
		}
		next = x
		e := edacElim{x: x, into: -1}
		var ys []int
		for _, nb := range nbrs[x] {
			ys = append(ys, nb.y)
			e.ks = append(e.ks, nb.k)
		}
		if len(ys) == 2 && s.rank[ys[0]] > s.rank[ys[1]] {
			ys[0], ys[1] = ys[1], ys[0]
			e.ks[0], e.ks[1] = e.ks[1], e.ks[0]
		}
		for _, y := range ys {
			drop(y, x)
			next = min(next, y)
		}
		if len(ys) == 2 {
			y, z := ys[0], ys[1]
			k, ok := pair.find(y, z)
			if !ok {
				k = pair.add(y, z)
				nbrs[y] = append(nbrs[y], nbr{z, k})
				nbrs[z] = append(nbrs[z], nbr{y, k})
			}
			e.into = k
		}
		nbrs[x] = nil
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

// dormantMaxTable bounds the entries of a dormant function's table, and
// dormantShare their number (as a multiple of the problem's binary
// functions plus its variables): the memory and the adjacency scans they
// add stay a small multiple of the problem's.
const (
	dormantMaxTable = 64
	dormantShare    = 3
)

// planDormant adds a costless binary function, dormant, between each two
// neighbours y, z of a variable x (neither eliminated before search, x in
// no n-ary function) that have none, so that eliminateSmall can eliminate
// x when the search leaves it with those two neighbours alone, as
// toulbar2 does by creating the function. Graphs without triangles
// (grids) otherwise have no degree-two elimination during search at all:
// on a 30×30 binary grid its root is left with 551 unassigned variables,
// toulbar2's with 140. Tables over more than dormantMaxTable entries are
// not added, and no more than dormantShare times the binary functions
// plus variables in all.
func (s *EDAC) planDormant(pair *pairIndex) {
	base := len(s.bins)
	limit := dormantShare * (base + s.n)
	added := 0
	est := 0 // the functions added, at most: grow s.bins once
	for x := range s.n {
		d := len(s.adjB[x])
		est += d * (d - 1) / 2
	}
	s.bins = slices.Grow(s.bins, min(est, limit))
	var ys []int
	for x := range s.n {
		if s.gone[x] || len(s.adjN[x]) > 0 {
			continue
		}
		ys = ys[:0]
		for _, k := range s.adjB[x] {
			if k < base && !s.goneBin[k] {
				ys = append(ys, s.bins[k].x+s.bins[k].y-x)
			}
		}
		for i, y := range ys {
			for _, z := range ys[i+1:] {
				if s.rank[y] > s.rank[z] {
					y, z = z, y
				}
				if s.dom[y]*s.dom[z] > dormantMaxTable || added >= limit {
					continue
				}
				if _, ok := pair.find(y, z); ok {
					continue
				}
				pair.add(y, z)
				added++
			}
		}
	}
	s.dormant = make([]bool, len(s.bins))
	for k := len(s.bins) - added; k < len(s.bins); k++ {
		s.dormant[k] = true
	}
	s.goneBin = append(s.goneBin, make([]bool, added)...)
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

// pairScan is the length of a variable's list of binary functions up to
// which pairIndex scans it.
const pairScan = 16

// pairDense is the most variables for which pairIndex keeps a matrix of
// every pair (n² int32 entries, 256 KiB at most) instead of its map.
const pairDense = 256

// pairIndex finds the binary function over two variables while NewEDAC
// builds them: by a scan of the shorter of the two variables' lists
// (adjB) when it has at most pairScan functions, else in a map that holds
// every function of the variables whose lists are longer, or, on rows of
// at most pairDense variables, in a matrix of every pair. Grids and most
// WCSP files have short lists only, where a map of every pair (a 40×40
// grid's 9198 functions) was a fifth of NewEDAC's CPU. Dense rows have
// long lists: on DBN_15.uai (42 variables, 861 functions) the map's
// look-ups of planDormant's 34,000 pairs were a tenth of the solve's
// instructions, the matrix's a few a look-up.
type pairIndex struct {
	s     *EDAC
	big   map[[2]int]int // keyed by (lower index, higher index)
	dense []int32        // 1 + the function over x and y at x·n+y and y·n+x, 0 for none
	// noDense keeps the map on small rows too (tests of the map).
	noDense bool
}

func pairKey(x, y int) [2]int {
	if x > y {
		x, y = y, x
	}
	return [2]int{x, y}
}

// find returns the binary function over x and y, if any.
func (p *pairIndex) find(x, y int) (int, bool) {
	s := p.s
	if p.dense != nil {
		k := p.dense[x*s.n+y]
		return int(k) - 1, k > 0
	}
	v, w := x, y
	if len(s.adjB[w]) < len(s.adjB[v]) {
		v, w = w, v
	}
	if l := s.adjB[v]; len(l) <= pairScan {
		for _, k := range l {
			if b := &s.bins[k]; b.x+b.y-v == w {
				return k, true
			}
		}
		return 0, false
	}
	k, ok := p.big[pairKey(x, y)]
	return k, ok
}

// add appends a new binary function over x and y, rank[x] < rank[y], to
// bins and to both variables' lists, and returns its index.
func (p *pairIndex) add(x, y int) int {
	s := p.s
	k := len(s.bins)
	s.bins = append(s.bins, s.newBin(x, y))
	if p.dense != nil {
		p.dense[x*s.n+y], p.dense[y*s.n+x] = int32(k+1), int32(k+1)
	}
	for _, v := range [2]int{x, y} {
		s.adjB[v] = append(s.adjB[v], k)
		switch l := s.adjB[v]; {
		case p.dense != nil:
		case len(l) == pairScan+1 && s.n <= pairDense && !p.noDense:
			// A list past scanning on a small row: the matrix,
			// of every function so far.
			p.dense = make([]int32, s.n*s.n)
			for j := range s.bins {
				b := &s.bins[j]
				p.dense[b.x*s.n+b.y], p.dense[b.y*s.n+b.x] = int32(j+1), int32(j+1)
			}
		case len(l) == pairScan+1:
			// v's list is past scanning: all its functions go in.
			if p.big == nil {
				p.big = map[[2]int]int{}
			}
			for _, j := range l {
				b := &s.bins[j]
				p.big[pairKey(b.x, b.y)] = j
			}
		case len(l) > pairScan+1:
			p.big[pairKey(x, y)] = k
		}
	}
	return k
}

// adjCap is the room newEDAC gives the list of binary functions of a
// variable of d binary functions in the problem: planDormant's functions
// (three more a neighbour on a grid) and planElimination's fill among
// them; a list that needs more grows.
func adjCap(d int) int { return min(d*d, d+16) + 2 }
