package local

// n-ary functions for EDAC: down to two unassigned variables they become
// binary ones (planNaryPairs, naryToBin); dead-end elimination reads
// them (naryGains).

import (
	"math"

	"github.com/hearth-dcop/hearth/mva"
)

// naryPairMaxArity bounds the arity of the n-ary functions whose pairs of
// variables planNaryPairs plans binary functions for: C(arity, 2) of them
// a function (28 at arity 8), each of at most dormantMaxTable entries.
const naryPairMaxArity = 8

// planNaryPairs plans, for every n-ary function of at most
// naryPairMaxArity variables, a binary function between each two of its
// variables (an existing one, else a dormant, costless one, as
// planDormant's), so that naryToBin has one to move the function into
// once the search assigns all its variables but two. Pairs whose table
// would pass dormantMaxTable entries get none (-1): such a function stays
// n-ary to the end, as before. It runs after planDormant: its dormant
// functions come last in bins and in each variable's list, as
// makeSides and costedB expect.
func (s *EDAC) planNaryPairs(pair *pairIndex) {
	added := 0
	for j := range s.narys {
		nf := &s.narys[j]
		a := len(nf.vars)
		if a > naryPairMaxArity {
			continue
		}
		nf.pairBin = make([]int, a*a)
		for p, y := range nf.vars {
			for q := p + 1; q < a; q++ {
				z := nf.vars[q]
				k := -1
				if s.dom[y]*s.dom[z] <= dormantMaxTable && y != z {
					x, w := y, z
					if s.rank[x] > s.rank[w] {
						x, w = w, x
					}
					var ok bool
					if k, ok = pair.find(x, w); !ok {
						k = pair.add(x, w)
						added++
					}
				}
				nf.pairBin[p*a+q], nf.pairBin[q*a+p] = k, k
			}
		}
	}
	s.dormant = append(s.dormant, make([]bool, added)...)
	for k := len(s.bins) - added; k < len(s.bins); k++ {
		s.dormant[k] = true
	}
	s.goneBin = append(s.goneBin, make([]bool, added)...)
}

// naryToBin moves n-ary function j, whose variables are all assigned but
// two, into the binary function planned between those two (waking it when
// dormant): each pair of their values gets the function's current cost,
// its table entry less the delta and the two variables' per-value deltas
// (what projectNary and projectToUnary already moved into c∅ and unary
// costs). From then on AC*, DAC*, EAC and dead-end elimination maintain it
// as any binary function, where the n-ary function only projected its
// least costs onto each variable alone; toulbar2 does the same with its
// n-ary constraints down to two unassigned variables. The function's count
// goes to 0 (absorbed), on the trail. It reports false where no binary
// function was planned for the pair (the caller projects as before).
func (s *EDAC) naryToBin(j int) bool {
	nf := &s.narys[j]
	if nf.pairBin == nil || s.noNaryBin {
		return false
	}
	a := len(nf.vars)
	base, d := 0, s.fs[nf.delta]
	p1, p2 := -1, -1
	for p, v := range nf.vars {
		switch {
		case s.is[s.asgOff+v] != 0:
			w := s.value(v)
			base += w * nf.strides[p]
			d += s.fs[nf.vd+nf.voff[p]+w]
		case p1 < 0:
			p1 = p
		default:
			p2 = p
		}
	}
	if p2 < 0 {
		// Fewer than two unassigned positions (cannot happen while cnt
		// counts them; no index out of range if it ever does).
		return false
	}
	k := nf.pairBin[p1*a+p2]
	if k < 0 {
		return false
	}
	b := &s.bins[k]
	if s.is[b.live] == 0 {
		s.wake(k)
		s.woken++
	}
	px, py := p1, p2
	if nf.vars[px] != b.x {
		px, py = p2, p1
	}
	sx, sy := nf.strides[px], nf.strides[py]
	vx, vy := nf.vd+nf.voff[px], nf.vd+nf.voff[py]
	for xa := range b.dx {
		for yb := range b.dy {
			c := nf.tab[base+xa*sx+yb*sy] - d - s.fs[vx+xa] - s.fs[vy+yb]
			if c > 0 {
				i := b.curOff + xa*b.dy + yb
				s.setF(i, s.fs[i]+c)
			}
		}
	}
	s.checks += int64(b.dx * b.dy)
	s.naryBins++
	s.setI(nf.cnt, 0)
	for _, v := range [2]int{b.x, b.y} {
		s.markDEE(v)
		s.elimQ.push(v)
		s.pushAC(v)
		s.pushDAC(v)
		s.pushEAC(v)
	}
	return true
}

// deeVarNary is deeVar for a variable of n-ary functions: each pair of
// its EAC support sp and another live value is tested both ways in one
// pass over the functions (dominatesBoth), the n-ary ones included.
func (s *EDAC) deeVarNary(x, sp int, margin float64) bool {
	removed := false
	for a := range s.dom[x] {
		if a == sp || !s.alive(x, a) {
			continue
		}
		spA, aSp := s.dominatesBoth(x, sp, a, margin)
		if spA {
			s.remove(x, a)
			removed = true
		} else if s.dom[x] == 2 && aSp {
			s.remove(x, sp)
			removed = true
		}
	}
	if removed && s.naryLive(x) {
		s.naryDEE++
	}
	return removed
}

// dominatesBoth reports dominates(x, p, q) and dominates(x, q, p), over
// x's live binary and live n-ary functions (naryGains), from one read of
// each function: on two values dead-end elimination tests both ways, and
// an n-ary function's tuples cost more to enumerate than a binary
// function's row (s386: 2.5·10^6 of 16·10^6 instructions when each way
// read them anew).
func (s *EDAC) dominatesBoth(x, p, q int, margin float64) (pq, qp bool) {
	up, uq := s.u(x, p), s.u(x, q)
	if mva.IsHard(up) || mva.IsHard(uq) {
		// A Hard value is dominated by any finite one, and dominates
		// none.
		return !mva.IsHard(up), !mva.IsHard(uq)
	}
	dpq, dqp := up-uq, uq-up
	okpq, okqp := true, true
	for _, k := range s.ladj(x) {
		sd := s.side(int(k), x)
		s.checks += int64(sd.dot)
		m1, m2 := math.Inf(-1), math.Inf(-1)
		for c := range sd.dot {
			if sd.aot[c] == 0 {
				continue
			}
			cq, cp := sd.cost(q, c), sd.cost(p, c)
			hq, hp := mva.IsHard(cq), mva.IsHard(cp)
			switch {
			case !hq && !hp:
				m1, m2 = max(m1, cp-cq), max(m2, cq-cp)
			case hq && !hp:
				okqp = false
			case hp && !hq:
				okpq = false
			}
		}
		// −Inf: no live value gives x = q (p) a finite cost.
		dpq += m1
		dqp += m2
		if !okpq && !okqp {
			return false, false
		}
	}
	for _, j := range s.adjN[x] {
		if s.is[s.narys[j].cnt] <= 1 {
			continue
		}
		g1, g2, ok1, ok2 := s.naryGains(j, x, p, q)
		okpq, okqp = okpq && ok1, okqp && ok2
		if !okpq && !okqp {
			return false, false
		}
		dpq += g1
		dqp += g2
	}
	return okpq && dpq <= -margin, okqp && dqp <= -margin
}

// naryGains returns, for dead-end elimination's tests of x = p against
// x = q, the most that n-ary function j's current cost can rise when x
// changes from q to p (g1) and from p to q (g2), over the live tuples t of
// its other unassigned variables (the assigned ones fixed): max_t c(p, t)
// − c(q, t), tuples where c(q, t) is Hard skipped, −Inf when every one is,
// and the same the other way. The delta and the other variables'
// per-value deltas cancel out; x's do not. ok1 (ok2) is false, no
// dominance, where c(p, t) (c(q, t)) is Hard for a tuple where the other
// is finite, and both past naryProjectMax tuples.
func (s *EDAC) naryGains(j, x, p, q int) (g1, g2 float64, ok1, ok2 bool) {
	nf := &s.narys[j]
	var free [16]int
	nfree, n, base, _, ok := s.naryFree(j, &free)
	if !ok {
		return 0, 0, false, false
	}
	// x's position out of the free ones.
	px, k := -1, 0
	for _, f := range free[:nfree] {
		if nf.vars[f] == x {
			px = f
			continue
		}
		free[k] = f
		k++
	}
	if px < 0 {
		return 0, 0, false, false
	}
	others := free[:k]
	n /= nf.dims[px]
	ip, iq := base+p*nf.strides[px], base+q*nf.strides[px]
	vx := nf.vd + nf.voff[px]
	dv := s.fs[vx+q] - s.fs[vx+p]
	var dig [16]int
	g1, g2 = math.Inf(-1), math.Inf(-1)
	ok1, ok2 = true, true
	off := 0
	for range n {
		live := true
		for i, f := range others {
			if !s.alive(nf.vars[f], dig[i]) {
				live = false
				break
			}
		}
		if live {
			cp, cq := nf.tab[ip+off], nf.tab[iq+off]
			hp, hq := mva.IsHard(cp), mva.IsHard(cq)
			switch {
			case !hp && !hq:
				g1, g2 = max(g1, cp-cq), max(g2, cq-cp)
			case hp && !hq:
				ok1 = false
			case hq && !hp:
				ok2 = false
			}
		}
		for i := len(others) - 1; i >= 0; i-- {
			f := others[i]
			dig[i]++
			if dig[i] < nf.dims[f] {
				off += nf.strides[f]
				break
			}
			off -= (nf.dims[f] - 1) * nf.strides[f]
			dig[i] = 0
		}
	}
	s.checks += int64(n)
	return g1 + dv, g2 - dv, ok1, ok2
}

// markDEENary queues for dead-end elimination the variables of x's live
// n-ary functions: x's domain changed, which changes the tuples their
// test reads (naryGains).
func (s *EDAC) markDEENary(x int) {
	for _, j := range s.adjN[x] {
		nf := &s.narys[j]
		if s.is[nf.cnt] <= 1 {
			continue
		}
		for _, v := range nf.vars {
			if v != x {
				s.markDEE(v)
			}
		}
	}
}
