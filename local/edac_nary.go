package local

// n-ary functions for EDAC: down to two unassigned variables they become
// binary ones (planNaryPairs, naryToBin); dead-end elimination reads
// them (naryGain).

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

// naryGain returns, for dead-end elimination's test of x = a against
// x = b (dominates), the most that n-ary function j's current cost can
// rise when x changes from a to b, over the live tuples of its other
// unassigned variables (the assigned ones fixed): max_t c(b, t) − c(a, t),
// tuples where c(a, t) is Hard skipped, −Inf when every one is. The
// delta and the other variables' per-value deltas cancel out; x's do not.
// It reports false (no dominance) where c(b, t) is Hard for a tuple with
// c(a, t) finite, or past naryProjectMax tuples.
func (s *EDAC) naryGain(j, x, b, a int) (float64, bool) {
	nf := &s.narys[j]
	var free [16]int
	nfree, n, base, _, ok := s.naryFree(j, &free)
	if !ok {
		return 0, false
	}
	// x's position out of the free ones.
	px, k := -1, 0
	for _, p := range free[:nfree] {
		if nf.vars[p] == x {
			px = p
			continue
		}
		free[k] = p
		k++
	}
	if px < 0 {
		return 0, false
	}
	others := free[:k]
	n /= nf.dims[px]
	ia, ib := base+a*nf.strides[px], base+b*nf.strides[px]
	vx := nf.vd + nf.voff[px]
	dv := s.fs[vx+a] - s.fs[vx+b]
	var dig [16]int
	m := math.Inf(-1)
	off := 0
	for range n {
		live := true
		for i, p := range others {
			if !s.alive(nf.vars[p], dig[i]) {
				live = false
				break
			}
		}
		if live {
			ca := nf.tab[ia+off]
			if !mva.IsHard(ca) {
				cb := nf.tab[ib+off]
				if mva.IsHard(cb) {
					s.checks += int64(n)
					return 0, false
				}
				m = max(m, cb-ca)
			}
		}
		for i := len(others) - 1; i >= 0; i-- {
			p := others[i]
			dig[i]++
			if dig[i] < nf.dims[p] {
				off += nf.strides[p]
				break
			}
			off -= (nf.dims[p] - 1) * nf.strides[p]
			dig[i] = 0
		}
	}
	s.checks += int64(n)
	return m + dv, true
}

// markDEENary queues for dead-end elimination the variables of x's live
// n-ary functions: x's domain changed, which changes the tuples their
// test reads (naryGain).
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
