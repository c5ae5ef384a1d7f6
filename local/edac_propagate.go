package local

// EDAC's propagation: the trail, the cost transfers (projections and
// extensions) and the queues that enforce NC*, AC*, DAC* and EAC.

import (
	"math"
	mbits "math/bits"

	"github.com/hearth-dcop/hearth/mva"
)

// setF sets fs[i] to v, the old value on the trail.
// At the row's root (rooted) nothing is trailed: the root's state is never
// undone, only reset for the next row.
func (s *EDAC) setF(i int, v float64) {
	if !s.rooted {
		s.ft = append(s.ft, fTrail{int32(i), s.fs[i]})
	}
	s.fs[i] = v
}

// setI sets is[i] to v, the old value on the trail (none at the root).
func (s *EDAC) setI(i int, v int32) {
	if !s.rooted {
		s.it = append(s.it, iTrail{int32(i), s.is[i]})
	}
	s.is[i] = v
}

// undo restores fs and is to the trail marks fm and im.
func (s *EDAC) undo(fm, im int) {
	for k := len(s.ft) - 1; k >= fm; k-- {
		s.fs[s.ft[k].i] = s.ft[k].v
	}
	for k := len(s.it) - 1; k >= im; k-- {
		s.is[s.it[k].i] = s.it[k].v
	}
	s.ft, s.it = s.ft[:fm], s.it[:im]
}

// ladj returns x's live binary functions (a view of is: kill and wake
// change it).
func (s *EDAC) ladj(x int) []int32 {
	o := s.ladjOff[x]
	return s.is[o : o+int(s.is[s.ladjLen+x])]
}

// kill takes binary function k out of the search (trailed): its costs
// are all in its variables' unary costs, or one of them is eliminated.
func (s *EDAC) kill(k int) {
	b := &s.bins[k]
	s.setI(b.live, 0)
	s.dropAdj(b.x, k)
	s.dropAdj(b.y, k)
	s.markDEEFn(k)
	s.elimQ.push(b.x)
	s.elimQ.push(b.y)
}

// dropAdj removes k from x's live functions, keeping the others' order.
func (s *EDAC) dropAdj(x, k int) {
	o, n := s.ladjOff[x], int(s.is[s.ladjLen+x])
	p := o
	for s.is[p] != int32(k) {
		p++
	}
	for ; p < o+n-1; p++ {
		s.setI(p, s.is[p+1])
	}
	s.setI(o+n-1, int32(k))
	s.setI(s.ladjLen+x, int32(n-1))
}

// wake puts dormant (or dead) binary function k into the search.
func (s *EDAC) wake(k int) {
	b := &s.bins[k]
	if s.sideAt(2*k).tab == nil {
		s.makeSide(k)
	}
	s.setI(b.live, 1)
	s.addAdj(b.x, k)
	s.addAdj(b.y, k)
	s.markDEEFn(k)
}

// addAdj appends k to x's live functions.
func (s *EDAC) addAdj(x, k int) {
	o, n := s.ladjOff[x], int(s.is[s.ladjLen+x])
	p := o + n
	for s.is[p] != int32(k) {
		p++
	}
	if p != o+n {
		s.setI(p, s.is[o+n])
		s.setI(o+n, int32(k))
	}
	s.setI(s.ladjLen+x, int32(n+1))
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

// pushDAC queues x for processDAC. The DAC queue is a bit set over the
// ranks, so that processDAC sees the variables from the highest rank down
// (the lowest up once the order is reversed): one pass then reaches the
// fixpoint. A pop takes the highest (lowest) set bit, from a word index
// that only moves down (up) between pushes above (below) it, so a whole
// pass reads each word about once, where a binary heap's pops cost
// O(log n) each and its pushes sifted every new entry to the root on two
// values (3.4% of a 30×30 grid's instructions). The order flips (dacRev)
// only between propagations, when the queue is empty.
func (s *EDAC) pushDAC(x int) {
	if s.inDAC[x] {
		return
	}
	s.inDAC[x] = true
	r := s.rank[x]
	w := r >> 6
	s.dacBits[w] |= 1 << (r & 63)
	s.dacN++
	s.dacHi = max(s.dacHi, w)
	s.dacLo = min(s.dacLo, w)
}

// popDAC removes and returns the DAC queue's first variable: the highest
// rank, the lowest once the order is reversed.
func (s *EDAC) popDAC() int {
	bits := s.dacBits
	var r int
	if s.dacRev {
		w := s.dacLo
		for bits[w] == 0 {
			w++
		}
		s.dacLo = w
		r = w<<6 + mbits.TrailingZeros64(bits[w])
	} else {
		w := s.dacHi
		for bits[w] == 0 {
			w--
		}
		s.dacHi = w
		r = w<<6 + 63 - mbits.LeadingZeros64(bits[w])
	}
	bits[r>>6] &^= 1 << (r & 63)
	s.dacN--
	if s.dacN == 0 {
		s.dacHi, s.dacLo = -1, len(bits)
	}
	x := int(s.byRank[r])
	s.inDAC[x] = false
	return x
}

// clearDAC empties the DAC queue, calling f on each variable it held.
func (s *EDAC) clearDAC(f func(x int)) {
	for w := max(s.dacLo, 0); w <= s.dacHi && w < len(s.dacBits); w++ {
		for b := s.dacBits[w]; b != 0; b &= b - 1 {
			f(int(s.byRank[w<<6+mbits.TrailingZeros64(b)]))
		}
		s.dacBits[w] = 0
	}
	s.dacN, s.dacHi, s.dacLo = 0, -1, len(s.dacBits)
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
	for _, k := range s.ladj(x) {
		b := &s.bins[k]
		s.pushEAC(b.x + b.y - x)
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
	s.markDEE(x)
	for _, k := range s.ladj(x) {
		b := &s.bins[k]
		s.markDEE(b.x + b.y - x)
	}
	if len(s.adjN[x]) > 0 {
		s.markDEENary(x)
		for _, j := range s.adjN[x] {
			nf := &s.narys[j]
			if nf.byVal == nil {
				continue
			}
			for p, v := range nf.vars {
				if v == x && p < 64 {
					nf.dirty |= 1 << p
				}
			}
			if !s.noNaryGAC && !s.inGAC[j] && s.is[nf.cnt] > 1 {
				s.inGAC[j] = true
				s.gacQ = append(s.gacQ, j)
			}
		}
	}
	return true
}

// addUnary raises u_x(a) by c and queues x for NC* pruning. It reports
// whether the cost was zero before: only then can a full support (which
// needs a zero unary cost) or the unary support be lost.
func (s *EDAC) addUnary(x, a int, c float64) bool {
	i := s.uoff[x] + a
	old := s.fs[i]
	s.setF(i, old+c)
	if m := s.umaxOff + x; old+c > s.fs[m] {
		s.setF(m, old+c)
	}
	if !s.inNC[x] {
		s.inNC[x] = true
		s.ncQ = append(s.ncQ, x)
	}
	s.markDEE(x)
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
//
// The fields that EAC reads to check a full support (eacSupported, a third
// of EDAC's time on the grids, most of it a residual that still holds)
// come first, in three of the record's five cache lines; the rest after.
type side struct {
	fres     []int32   // on's residual full supports
	aot      []int32   // the other variable's alive flags (a view of is)
	tab      []float64 // the table
	pon, pot []float64 // deltas (views of fs)
	uot      []float64 // the other variable's unary costs (a view of fs)
	son, sot int       // strides
	dot, don int       // domain sizes
	res      []int32   // on's residual AC supports
	aon      []int32   // on's alive flags (a view of is)
	uon      []float64 // on's unary costs (a view of fs)
	on, ot   int       // variables
	pOn, pOt int       // fs offsets of the deltas
}

// side returns binary function k seen from on. k is live or was: a
// dormant function's sides exist once it first woke (wake's makeSide,
// through sideAt). side reads dslot itself instead of calling sideAt so
// that it inlines (it is called at every projection and revision, and
// the call was 2% of the 40×40 grid's instructions).
func (s *EDAC) side(k, on int) *side {
	i := 2 * k
	if on != s.bins[k].x {
		i++
	}
	if uint(i) < uint(len(s.sides)) {
		return &s.sides[i]
	}
	n := int(s.dslot[k-s.firstDormant]) - 1
	return &s.dsides[n/sideChunk][2*(n%sideChunk)+i%2]
}

// sideChunk is how many dormant functions' sides are allocated together,
// at the first wake among them.
const sideChunk = 32

// sideAt returns side i (binary function i/2, seen from its x when i is
// even): in sides below firstDormant, else in the chunks of dsides, where
// a dormant function gets the next free place when first asked for. Most
// dormant functions never wake, and a side is 280 bytes of pointers for
// the collector to scan: on a 40×40 grid the sides of all 9198 functions
// made 5 MB, those of the 3120 that start live 1.7 MB; and those that
// wake are spread out (a 60×60 grid's search woke 1384 of 13914, which
// touched 420 of 435 chunks when each function had its place in them).
func (s *EDAC) sideAt(i int) *side {
	if i < 2*s.firstDormant {
		return &s.sides[i]
	}
	d := i/2 - s.firstDormant
	n := int(s.dslot[d]) - 1
	if n < 0 {
		n = s.dused
		if n%sideChunk == 0 {
			s.dsides = append(s.dsides, make([]side, 2*sideChunk))
		}
		s.dused++
		s.dslot[d] = int32(n + 1)
	}
	return &s.dsides[n/sideChunk][2*(n%sideChunk)+i%2]
}

// makeSides builds the two sides of every binary function but the
// dormant ones, which planDormant appended last, once fs and is exist
// (they are never reallocated, so the views stay valid); a dormant
// function's when it first wakes (most never do).
func (s *EDAC) makeSides() {
	s.firstDormant = len(s.bins)
	for s.firstDormant > 0 && s.dormant[s.firstDormant-1] {
		s.firstDormant--
	}
	s.sides = make([]side, 2*s.firstDormant)
	s.dslot = make([]int32, len(s.bins)-s.firstDormant)
	for k := range s.firstDormant {
		s.makeSide(k)
	}
}

// makeSide builds binary function k's two sides. Each view of fs, is and
// res is cut once and shared by the side that reads it as its own and
// the side that reads it as the other's.
func (s *EDAC) makeSide(k int) {
	b := &s.bins[k]
	dx, dy := b.dx, b.dy
	tab := s.fs[b.curOff : b.curOff+dx*dy]
	ax, ay := s.is[s.aoff[b.x]:s.aoff[b.x]+dx], s.is[s.aoff[b.y]:s.aoff[b.y]+dy]
	ux, uy := s.fs[s.uoff[b.x]:s.uoff[b.x]+dx], s.fs[s.uoff[b.y]:s.uoff[b.y]+dy]
	px, py := s.fs[b.px:b.px+dx], s.fs[b.py:b.py+dy]
	o, o2 := b.resOff, b.resOff+2*dx
	sd := s.sideAt(2 * k)
	sd.fres, sd.aot, sd.tab, sd.pon, sd.pot, sd.uot = s.res[o+dx:o+2*dx:o+2*dx], ay, tab, px, py, uy
	sd.son, sd.sot, sd.dot, sd.don = dy, 1, dy, dx
	sd.res, sd.aon, sd.uon = s.res[o:o+dx:o+dx], ax, ux
	sd.on, sd.ot, sd.pOn, sd.pOt = b.x, b.y, b.px, b.py
	sd = s.sideAt(2*k + 1)
	sd.fres, sd.aot, sd.tab, sd.pon, sd.pot, sd.uot = s.res[o2+dy:o2+2*dy:o2+2*dy], ax, tab, py, px, ux
	sd.son, sd.sot, sd.dot, sd.don = 1, dy, dx, dy
	sd.res, sd.aon, sd.uon = s.res[o2:o2+dy:o2+dy], ay, uy
	sd.on, sd.ot, sd.pOn, sd.pOt = b.y, b.x, b.py, b.px
}

// cost is the current cost of (on = a, other = c).
func (sd *side) cost(a, c int) float64 {
	return sd.tab[a*sd.son+c*sd.sot] - sd.pon[a] - sd.pot[c]
}

// liveOf lists the live values of the other variable of sd into s.live,
// once per projection: its values' scans then skip the dead ones (after
// an assignment, all but one), in the same increasing order.
func (s *EDAC) liveOf(sd *side) []int32 {
	l := s.live[:0]
	for c, al := range sd.aot[:sd.dot] {
		if al != 0 {
			l = append(l, int32(c))
		}
	}
	s.live = l
	return l
}

// resOK reports whether on = a's residual support still costs nothing.
func (sd *side) resOK(a int) bool {
	r := int(sd.res[a])
	return sd.aot[r] != 0 && sd.cost(a, r) <= 0
}

// fresOK reports whether on = a's residual full support is still one.
func (sd *side) fresOK(a int) bool {
	r := int(sd.fres[a])
	return sd.aot[r] != 0 && sd.cost(a, r)+sd.uot[r] <= 0
}

// minCost returns the least current cost of on = a over the other
// variable's live values (listed in live) and where it is; callers try
// the residual support first (resOK). Costs are never negative, so a zero is the
// least and ends the scan (on whole costs the value the full scan would
// pick too: the first least).
func (sd *side) minCost(a int, live []int32) (float64, int) {
	pa, pot := sd.pon[a], sd.pot
	tab, st := sd.tab[a*sd.son:], sd.sot
	m, at := math.Inf(1), 0
	for _, c32 := range live {
		c := int(c32)
		if v := tab[c*st] - pa - pot[c]; v < m {
			if v <= 0 {
				sd.res[a] = c32
				return v, c
			}
			m, at = v, c
		}
	}
	sd.res[a] = int32(at)
	return m, at
}

// minFull returns the least c(a, c) + u(c) of on = a over the other
// variable's live values (listed in live); callers try the residual full
// support first (fresOK); a zero ends the scan, as in minCost.
func (sd *side) minFull(a int, live []int32) float64 {
	pa, pot, uot := sd.pon[a], sd.pot, sd.uot
	tab, st := sd.tab[a*sd.son:], sd.sot
	m, at := math.Inf(1), 0
	for _, c32 := range live {
		c := int(c32)
		if v := tab[c*st] - pa - pot[c] + uot[c]; v < m {
			if v <= 0 {
				sd.fres[a] = c32
				return v
			}
			m, at = v, c
		}
	}
	sd.fres[a] = int32(at)
	return m
}

// scanFull reports whether on = a has a full support, c(a, c) + u(c) ≤ 0
// for a live c, past its residual (which eacSupported tries first,
// inline): minFull's answer to "is it zero", which stops at the first
// support it meets (EAC asks only that), the new residual.
func (sd *side) scanFull(a int) bool {
	n := sd.dot
	aot, pot, uot := sd.aot[:n], sd.pot[:n], sd.uot[:n]
	pa := sd.pon[a]
	base, st := a*sd.son, sd.sot
	tab := sd.tab
	for c := range n {
		if aot[c] != 0 && tab[base+c*st]-pa-pot[c]+uot[c] <= 0 {
			sd.fres[a] = int32(c)
			return true
		}
	}
	return false
}

// findSupport projects binary function k onto variable on (AC*): each
// value's least cost over the other variable's live values moves into its
// unary cost; values with none finite are removed. It reports whether a
// unary cost rose and false on a wipe-out.
func (s *EDAC) findSupport(k, on int) (bool, bool) {
	sd := s.side(k, on)
	var live []int32 // listed at the first residual that fails
	raisedAny := false
	for a := range sd.don {
		if sd.aon[a] == 0 {
			continue
		}
		s.checks += int64(sd.dot)
		if sd.resOK(a) {
			continue
		}
		if live == nil {
			live = s.liveOf(sd)
		}
		m, _ := sd.minCost(a, live)
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
			s.markDEE(sd.ot)
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
	var live []int32 // listed at the first residual that fails
	positive := false
	for a := range sd.don {
		P[a] = 0
		if sd.aon[a] == 0 {
			continue
		}
		s.checks += int64(sd.dot)
		if sd.fresOK(a) {
			continue
		}
		if live == nil {
			live = s.liveOf(sd)
		}
		m := sd.minFull(a, live)
		P[a] = m
		if m > 0 {
			positive = true
		}
	}
	if !positive {
		return false, true
	}
	// E[c]: the least extension of u(c) into k that lets every value's
	// P move, over the values with a finite positive P only (listed
	// once; most values keep their full support).
	pos := s.posbuf[:0]
	for a := range sd.don {
		if sd.aon[a] != 0 && P[a] > 0 && !mva.IsHard(P[a]) {
			pos = append(pos, int32(a))
		}
	}
	s.posbuf = pos
	for c := range sd.dot {
		E[c] = 0
	}
	for _, a32 := range pos {
		a := int(a32)
		pa, p := sd.pon[a], P[a]
		base := a * sd.son
		for _, c32 := range live {
			c := int(c32)
			if e := p - (sd.tab[base+c*sd.sot] - pa - sd.pot[c]); e > E[c] {
				E[c] = e
			}
		}
	}
	for c, e := range E {
		if e > 0 {
			s.setF(ut+c, s.fs[ut+c]-e)
			s.setF(sd.pOt+c, sd.pot[c]-e)
		}
	}
	s.markDEEFn(k)
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
// become a binary function when two variables are left (naryToBin, where
// one was planned) and a unary cost when one is left.
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
		if cnt-1 == 2 && s.naryToBin(j) {
			continue
		}
		if cnt-1 == 1 {
			for _, v := range nf.vars {
				s.markDEE(v)
				s.elimQ.push(v)
			}
		}
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
	base, y, sy, py := 0, -1, 0, 0
	d := s.fs[nf.delta]
	for p, v := range nf.vars {
		if s.is[s.asgOff+v] != 0 {
			a := s.value(v)
			base += a * nf.strides[p]
			d += s.fs[nf.vd+nf.voff[p]+a]
		} else {
			y, sy, py = v, nf.strides[p], p
		}
	}
	raisedAny := false
	for b := range s.dom[y] {
		if !s.alive(y, b) {
			continue
		}
		c := nf.tab[base+b*sy] - d - s.fs[nf.vd+nf.voff[py]+b]
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
// the assigned variables and the live values into c∅, then, for each
// unassigned variable y, the least entry with y = b into y's unary cost
// of b (projectToUnary), when there are at most naryProjectMax such
// entries.
func (s *EDAC) projectNary(j int) bool {
	nf := &s.narys[j]
	if nf.byVal != nil && !s.noNaryGAC {
		if s.inGAC[j] {
			return true // the queue's turn (gacQ) comes
		}
		return s.naryGAC(j)
	}
	var free [16]int
	nfree, n, base, d, ok := s.naryFree(j, &free)
	if !ok {
		return true
	}
	if nf.crisp {
		// Its least cost is 0 or Hard, and its projections move
		// nothing: only whether a live tuple is left matters.
		if !s.naryAnyTuple(j, free[:nfree], n, base) {
			return false
		}
		return s.noNaryGAC || s.naryGAC(j)
	}
	m := s.naryMin(j, free[:nfree], n, base, d, -1, nil)
	if m > 0 {
		if mva.IsHard(m) {
			return false
		}
		s.setF(nf.delta, s.fs[nf.delta]+m)
		s.setF(0, s.fs[0]+m)
		s.ncAll = true
		if s.fs[0] >= s.threshold() {
			return false
		}
	}
	if s.noNaryUnary {
		return true
	}
	return s.projectToUnary(j)
}

// naryFree returns n-ary function j's unassigned positions, the number of
// their tuples, the table index and the sum of the deltas the assigned
// ones fix; ok is false past naryProjectMax tuples or 16 positions.
func (s *EDAC) naryFree(j int, free *[16]int) (nfree, n, base int, d float64, ok bool) {
	nf := &s.narys[j]
	n, d = 1, s.fs[nf.delta]
	for p, v := range nf.vars {
		if s.is[s.asgOff+v] != 0 {
			a := s.value(v)
			base += a * nf.strides[p]
			d += s.fs[nf.vd+nf.voff[p]+a]
			continue
		}
		n *= nf.dims[p]
		if nfree == len(free) || n > naryProjectMax {
			return 0, 0, 0, 0, false
		}
		free[nfree] = p
		nfree++
	}
	return nfree, n, base, d, true
}

// naryMin returns the least cost of n-ary function j over the n tuples of
// live values of the free positions (the others fixed by base and d).
// With q ≥ 0 it also fills mins with the least cost for each value of
// free position free[q].
func (s *EDAC) naryMin(j int, free []int, n, base int, d float64, q int, mins []float64) float64 {
	nf := &s.narys[j]
	if nf.fin != nil && len(nf.fin) < n {
		return s.naryMinFinite(j, d, q, free, mins)
	}
	var dig [16]int
	// Per free position: its variable's alive flags and its deltas,
	// sliced once instead of indexed per tuple.
	var live [16][]int32
	var delta [16][]float64
	for i, p := range free {
		v, dm := nf.vars[p], nf.dims[p]
		live[i] = s.is[s.aoff[v] : s.aoff[v]+dm]
		delta[i] = s.fs[nf.vd+nf.voff[p] : nf.vd+nf.voff[p]+dm]
	}
	m := math.Inf(1)
	idx := base
	for range n {
		// A Hard entry stays Hard whatever the deltas: its values'
		// liveness is not read (an SHDS home's device tables are mostly
		// Hard: half of a response's EDAC time was these reads).
		ok := !math.IsInf(nf.tab[idx], 1)
		c := nf.tab[idx] - d
		for i := 0; ok && i < len(free); i++ {
			if ok = live[i][dig[i]] != 0; ok {
				c -= delta[i][dig[i]]
			}
		}
		if ok {
			m = min(m, c)
			if q >= 0 {
				mins[dig[q]] = min(mins[dig[q]], c)
			}
		}
		for i := len(free) - 1; i >= 0; i-- {
			p := free[i]
			dig[i]++
			if dig[i] < nf.dims[p] {
				idx += nf.strides[p]
				break
			}
			idx -= (nf.dims[p] - 1) * nf.strides[p]
			dig[i] = 0
		}
	}
	s.checks += int64(n)
	return m
}

// naryAnyTuple reports whether crisp n-ary function j has a finite entry
// whose values are live (the assigned variables' included) among the n
// tuples of its free positions (the others fixed by base): naryMin's
// least cost is then 0, else Hard. It tries the last such tuple first (a
// residue, as arc consistency's residual supports), then reads the
// finite entries or the tuples, whichever are fewer, up to the first
// live one. Its checks are the entries it reads.
func (s *EDAC) naryAnyTuple(j int, free []int, n, base int) bool {
	nf := &s.narys[j]
	a := len(nf.vars)
	if len(nf.res) == a {
		s.checks++
		if s.liveTuple(nf, nf.res) {
			return true
		}
	}
	if nf.fin != nil && len(nf.fin) < n {
		for k := range nf.fin {
			if dig := nf.finDig[k*a : k*a+a]; s.liveTuple(nf, dig) {
				s.checks += int64(k + 1)
				nf.res = append(nf.res[:0], dig...)
				return true
			}
		}
		s.checks += int64(len(nf.fin))
		return false
	}
	var dig [16]int
	idx := base
	for t := range n {
		ok := !math.IsInf(nf.tab[idx], 1)
		for i := 0; ok && i < len(free); i++ {
			ok = s.alive(nf.vars[free[i]], dig[i])
		}
		if ok {
			s.checks += int64(t + 1)
			nf.res = nf.res[:0]
			for p, v := range nf.vars {
				nf.res = append(nf.res, int32(s.valueAt(nf, p, v, free, dig[:len(free)])))
			}
			return true
		}
		for i := len(free) - 1; i >= 0; i-- {
			p := free[i]
			dig[i]++
			if dig[i] < nf.dims[p] {
				idx += nf.strides[p]
				break
			}
			idx -= (nf.dims[p] - 1) * nf.strides[p]
			dig[i] = 0
		}
	}
	s.checks += int64(n)
	return false
}

// naryGAC removes the live values of crisp n-ary function j's unassigned
// variables that no live tuple of its finite entries supports (generalised
// arc consistency on its Hard entries), until every one left has a
// support; false on a wipe-out. Each value's last support is tried first
// (sup), then the finite entries with that value (byVal). projectToUnary
// moves no cost on a crisp function, and EDAC removed no value through it:
// the implied pairs (withImpliedPairs) are its static pairwise part, but a
// storage chain s' = s + a whose a lost a value still allowed every s'
// the pair (s, s') allows. Only the positions some other position of
// which lost a value since the last pass are read (dirty): a support of
// x = b holds b, so x's own removals cannot take it. A search undoes its
// changes only back to states that propagated to the end, where the
// function was arc consistent, so the bits need no trail.
func (s *EDAC) naryGAC(j int) bool {
	nf := &s.narys[j]
	if nf.byVal == nil {
		return true
	}
	a := len(nf.vars)
	for {
		mask := nf.dirty
		nf.dirty = 0
		if a > 64 {
			mask = ^uint64(0)
		}
		if mask == 0 {
			return true
		}
		changed := false
		off := 0
		for p, y := range nf.vars {
			dy := nf.dims[p]
			if s.is[s.asgOff+y] != 0 || (a <= 64 && mask&^(1<<p) == 0) {
				// Assigned, or no other position lost a value
				// since every value of p had a live support.
				off += dy
				continue
			}
			for b := range dy {
				i := off + b
				if !s.alive(y, b) {
					continue
				}
				if r := nf.sup[i]; r >= 0 {
					s.checks++
					if s.liveTuple(nf, nf.finDig[int(r)*a:int(r)*a+a]) {
						continue
					}
				}
				found := false
				for _, k := range nf.byVal[nf.byOff[i]:nf.byOff[i+1]] {
					s.checks++
					if s.liveTuple(nf, nf.finDig[int(k)*a:int(k)*a+a]) {
						nf.sup[i], found = k, true
						break
					}
				}
				if found {
					continue
				}
				if !s.remove(y, b) {
					s.lastFn = len(s.bins) + j
					return false
				}
				s.naryGACRemovals++
				changed = true
			}
			off += dy
		}
		if !changed {
			return true
		}
	}
}

// valueAt returns the value of position p (variable v) of n-ary function
// nf in the tuple whose free positions free have the values dig: dig's
// where p is free, else the assigned variable's.
func (s *EDAC) valueAt(nf *edacNary, p, v int, free, dig []int) int {
	for i, f := range free {
		if f == p {
			return dig[i]
		}
	}
	return s.value(v)
}

// liveTuple reports whether every value of the tuple dig of n-ary
// function nf is live (an assigned variable's only live value is its
// own).
func (s *EDAC) liveTuple(nf *edacNary, dig []int32) bool {
	// Through each position's offset of alive flags (aoffs), not its
	// variable's: one load less per position.
	for p, o := range nf.aoffs[:len(dig)] {
		if s.is[int(o)+int(dig[p])] == 0 {
			return false
		}
	}
	return true
}

// naryMinFinite is naryMin over n-ary function j's finite entries (fin):
// those that agree with the assigned variables' values and whose free
// positions' values are live. Its checks are the entries it reads.
func (s *EDAC) naryMinFinite(j int, d float64, q int, free []int, mins []float64) float64 {
	nf := &s.narys[j]
	a := len(nf.vars)
	var fixed [16]int32
	for p, v := range nf.vars {
		fixed[p] = -1
		if s.is[s.asgOff+v] != 0 {
			fixed[p] = int32(s.value(v))
		}
	}
	qp := -1
	if q >= 0 {
		qp = free[q]
	}
	m := math.Inf(1)
	for k, e := range nf.fin {
		dig := nf.finDig[k*a : k*a+a]
		c := nf.tab[e] - d
		ok := true
		for p, v := range nf.vars {
			b := dig[p]
			if f := fixed[p]; f >= 0 {
				if ok = b == f; !ok {
					break
				}
				continue
			}
			if ok = s.alive(v, int(b)); !ok {
				break
			}
			c -= s.fs[nf.vd+nf.voff[p]+int(b)]
		}
		if ok {
			m = min(m, c)
			if qp >= 0 {
				mins[dig[qp]] = min(mins[dig[qp]], c)
			}
		}
	}
	s.checks += int64(len(nf.fin))
	return m
}

// projectToUnary moves, for each unassigned variable y of n-ary function
// j in turn, the least cost of j's tuples with y = b (live values, the
// assigned variables' values) into y's unary cost of b, removing b where
// that cost is hard: arc consistency on the n-ary function. Without it a
// function's costs reach the unary costs only once all but one of its
// variables are assigned, and EAC's value choice ignores them: on the
// ISCAS89 circuits (gates of arity 3–5, a cost of 100 when the output
// disagrees) the search's dives violated dozens of gates.
func (s *EDAC) projectToUnary(j int) bool {
	nf := &s.narys[j]
	if nf.crisp {
		// Every least cost is 0 or +Inf: nothing to move, but values
		// without a live tuple go.
		return s.noNaryGAC || s.naryGAC(j)
	}
	var mins [64]float64
	for {
		var free [16]int
		nfree, n, base, d, ok := s.naryFree(j, &free)
		if !ok || nfree < 2 {
			return true
		}
		changed := false
		for q := range nfree {
			p := free[q]
			y := nf.vars[p]
			dy := nf.dims[p]
			if dy > len(mins) {
				continue
			}
			for b := range dy {
				mins[b] = math.Inf(1)
			}
			s.naryMin(j, free[:nfree], n, base, d, q, mins[:dy])
			raisedAny := false
			for b := range dy {
				c := mins[b]
				if !s.alive(y, b) || !(c > 0) || math.IsInf(c, 1) {
					continue
				}
				if mva.IsHard(c) {
					if !s.remove(y, b) {
						s.lastFn = len(s.bins) + j
						return false
					}
					// A removal may assign y: start over.
					changed = true
					continue
				}
				s.setF(nf.vd+nf.voff[p]+b, s.fs[nf.vd+nf.voff[p]+b]+c)
				if s.addUnary(y, b, c) {
					raisedAny = true
				}
			}
			if raisedAny {
				s.lastFn = len(s.bins) + j
				s.raised(y)
				if !s.projectUnary(y) {
					return false
				}
			}
			if changed {
				break
			}
		}
		if !changed {
			return true
		}
	}
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
	// A copy: the loop kills functions of x, which reorders ladj(x).
	s.adjBuf = append(s.adjBuf[:0], s.ladj(x)...)
	for _, k32 := range s.adjBuf {
		k := int(k32)
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
			s.kill(k)
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
	for _, k32 := range s.ladj(y) {
		k := int(k32)
		b := &s.bins[k]
		if s.receiver(b) == y {
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
	// side and the residual full support by hand: most calls end at
	// the residual, and a call to side or to a method that also scans
	// is not inlined (3% fewer instructions on the 60×60 grid).
	for _, k := range s.ladj(x) {
		i := 2 * int(k)
		if x != s.bins[k].x {
			i++
		}
		var sd *side
		if int(k) < s.firstDormant {
			sd = &s.sides[i]
		} else {
			sd = s.sideAt(i)
		}
		s.checks += int64(sd.dot)
		if r := int(sd.fres[a]); sd.aot[r] != 0 && sd.tab[a*sd.son+r*sd.sot]-sd.pon[a]-sd.pot[r]+sd.uot[r] <= 0 {
			continue
		}
		if !sd.scanFull(a) {
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
			s.markDEE(x)
			return true
		}
	}
	s.eacRounds++
	raisedAny := false
	for _, k := range s.ladj(x) {
		r, ok := s.findFullSupport(int(k), x)
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
// with c∅ (NC*). It reads the variables' bounds on their live unary costs
// in one pass (c∅ rises at most nodes, many times a node) and scans only
// the variables whose bound reaches the threshold.
func (s *EDAC) pruneAll() bool {
	s.ncAll = false
	thr := s.threshold() - s.fs[0]
	for x, m := range s.fs[s.umaxOff : s.umaxOff+s.n] {
		if m >= thr && !s.pruneBelow(x, thr) {
			return false
		}
	}
	return true
}

// pruneVar removes x's values whose unary cost reaches the upper bound
// with c∅ (NC*).
func (s *EDAC) pruneVar(x int) bool {
	return s.pruneBelow(x, s.threshold()-s.fs[0])
}

// pruneBelow removes x's values of unary cost thr or more. Unary costs
// rise only through addUnary, which keeps fs[umaxOff+x] at or above every
// live one, so a variable whose bound is below thr is skipped unread
// (c∅ rises at most nodes, and most variables have nothing to lose); a
// scan tightens the bound.
func (s *EDAC) pruneBelow(x int, thr float64) bool {
	if s.fs[s.umaxOff+x] < thr {
		return true
	}
	if s.size(x) == 1 || s.deleted(x) {
		// Nothing to prune while it stays so: pruneAll skips it (until
		// addUnary raises the bound again).
		s.setF(s.umaxOff+x, math.Inf(-1))
		return true
	}
	o, al := s.uoff[x], s.aoff[x]
	u, alive := s.fs[o:o+s.dom[x]], s.is[al:al+s.dom[x]]
	hi := math.Inf(-1)
	for a, c := range u {
		if alive[a] == 0 {
			continue
		}
		if c >= thr {
			if !s.remove(x, a) {
				return false
			}
			continue
		}
		hi = max(hi, c)
	}
	if m := s.umaxOff + x; hi < s.fs[m] {
		s.setF(m, hi)
	}
	return true
}

// maxEACRounds caps the EAC enforcements of one propagation: each raises
// c∅, which on whole-number costs bounds them; the cap guards fractional
// costs against endless tiny transfers.
func (s *EDAC) maxEACRounds() int { return 4*s.n + 64 }

// propagate enforces EDAC and NC*; false when the node is pruned.
func (s *EDAC) propagate() bool {
	s.eacRounds, s.eacDropped = 0, false
	ok := s.propagateLoop()
	if !ok {
		s.fail()
	}
	return ok
}

// fail empties the queues after a wipe-out or a bound reached, and
// charges the function whose transfer came last (dom/wdeg).
func (s *EDAC) fail() {
	for _, q := range [][]int{s.acQ, s.eacQ} {
		for _, x := range q {
			s.inAC[x], s.inDAC[x], s.inEAC[x] = false, false, false
		}
	}
	s.clearDAC(func(x int) { s.inAC[x], s.inDAC[x], s.inEAC[x] = false, false, false })
	s.acQ, s.eacQ = s.acQ[:0], s.eacQ[:0]
	for _, x := range s.ncQ {
		s.inNC[x] = false
	}
	s.ncQ = s.ncQ[:0]
	for _, j := range s.gacQ {
		s.inGAC[j] = false
	}
	s.gacQ = s.gacQ[:0]
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
		case len(s.eacQ) > 0 && s.eacRounds < s.maxEACRounds():
			// EAC first, as toulbar2's propagation loop does: a
			// variable's existential support is restored before
			// the AC and DAC queues move its neighbours' costs,
			// which then spread what EAC raised. Last (AC, DAC and
			// NC* first), the root bound of frequency assignment
			// of 80 links was 17 where this order reaches the
			// optimum, 38; see the README's toulbar2 section.
			x := s.eacQ[len(s.eacQ)-1]
			s.eacQ = s.eacQ[:len(s.eacQ)-1]
			s.inEAC[x] = false
			if !s.processEAC(x) {
				return false
			}
		case len(s.acQ) > 0:
			x := s.acQ[len(s.acQ)-1]
			s.acQ = s.acQ[:len(s.acQ)-1]
			s.inAC[x] = false
			if !s.processAC(x) {
				return false
			}
		case len(s.gacQ) > 0:
			j := s.gacQ[len(s.gacQ)-1]
			s.gacQ = s.gacQ[:len(s.gacQ)-1]
			s.inGAC[j] = false
			if s.is[s.narys[j].cnt] > 1 && !s.naryGAC(j) {
				return false
			}
		case s.dacN > 0:
			if !s.processDAC(s.popDAC()) {
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
			// Past the cap on EAC rounds: dropped.
			s.eacDropped = true
			for _, x := range s.eacQ {
				s.inEAC[x] = false
			}
			s.eacQ = s.eacQ[:0]
		default:
			return true
		}
	}
}
