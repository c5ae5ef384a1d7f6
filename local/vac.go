package local

// Virtual arc consistency (VAC) at EDAC's root: Cooper, de Givry,
// Sanchez, Schiex, Zytnicki and Werner, "Soft arc consistency revisited",
// Artificial Intelligence 174 (2010), the bound toulbar2's -A adds to
// EDAC.
//
// A problem is VAC when the classical CSP Bool_θ(P) — a value is forbidden
// when its unary cost is θ or more, a pair of values when its binary cost
// is — is arc consistent (has a non-empty arc-consistent closure). When it
// is not, arc consistency on Bool_θ(P) wipes a variable x0 out, and the
// removals that led there say which costs to move so that every value of
// x0 gets a unary cost of at least λ > 0, which then moves into c∅. EDAC
// cannot find such moves: they may need to extend a cost into a function
// and project it out on the other side in an order that no single
// support condition asks for (the classic example is a cycle of three
// variables of two values each where every pair's cost is 1 unless the
// values differ; EDAC's bound is 0, the optimum and VAC's bound 1).
//
// One iteration has three phases:
//
//  1. Bool_θ(P)'s arc consistency (vacAC), recording for each value it
//     removes its order of removal and why: its unary cost (≥ θ) or the
//     binary function in which it had no allowed pair left (its killer).
//  2. Trace-back (vacTrace): each value of x0 asks for 1 quantum λ of unary
//     cost. Walking the removals backwards, a value of demand d removed
//     by binary function c_xy gets d·λ by projecting c_xy(a, ·) onto
//     u_x(a), which needs c_xy(a, b) ≥ d·λ for every live b of y: pairs
//     forbidden in Bool_θ(P) (c_xy(a, b) ≥ θ) pay from their own cost (the
//     demands on one pair add up, from both sides), the others had b
//     removed before a, and an extension of u_y(b) into c_xy(·, b) pays —
//     the extension serves every value of x at once, so b's demand through
//     c_xy is the largest of theirs, summed over y's functions. A value
//     removed by its unary cost pays from it. λ is the largest amount all
//     of them can pay: the least of u/d over the unary payers and c/draw
//     over the forbidden pairs, floored to a whole number.
//  3. Apply (vacApply): in the order of removal (every extension then
//     comes from a value whose own projection already paid it), then λ
//     from x0's unary costs into c∅.
//
// Every step is an equivalence-preserving transfer on non-negative costs
// that leaves every cost non-negative (by the choice of λ), so c∅ stays a
// lower bound and every complete assignment keeps its cost. λ is a whole
// number, so on whole-number costs the arithmetic is exact; VAC runs on
// whole-number costs only (EDAC.integral), as toulbar2 does (its costs
// are integers). Iterations repeat while Bool_θ(P) wipes out and λ ≥ 1,
// for θ from the largest live cost down to 1, halving (toulbar2 too starts
// VAC at a high threshold and lowers it: at a high θ few pairs are
// forbidden and the demands stay small, so λ is large). A later round
// first asks the lowest threshold above 1 whether any above it can wipe
// out (vacRound), which spares the binary grids' idle last round.
//
// The functions over three or more variables are left out (their costs
// are not in Bool_θ(P)), which only weakens the bound. EDAC's propagation
// runs once VAC is done, to restore its supports.

import (
	"math"

	"github.com/hearth-dcop/hearth/mva"
)

// NewEDACVAC is NewEDAC with virtual arc consistency enforced at each
// row's root, after EDAC's own root propagation (`--local vac`).
func NewEDACVAC(lp *mva.LocalProblem) *EDAC {
	s := NewEDAC(lp)
	s.useVAC = true
	return s
}

// vacState is VAC's scratch, kept between rows.
type vacState struct {
	// Per value, indexed by its unary index in fs (uoff[x]+a): removal
	// stamp in Bool_θ(P) (0: not removed, else position in order + 1),
	// killer (binary function, -1: the unary cost), demand in quanta.
	stamp  []int32
	killer []int32
	demand []int64
	// order lists the removals, as (variable, value).
	order [][2]int32
	cnt   []int32 // per variable: values left in Bool_θ(P)
	// Per variable, from the round's start (vacScanStart): its live
	// values and its largest live unary cost, -Inf when it takes no part.
	// VAC removes no value and changes only the moved variables' unary
	// costs, so they hold for the others through the round.
	cnt0  []int32
	umax  []float64
	moved []bool // per variable: its costs moved since enforceVAC began
	q     []int32
	inQ   []bool
	// ext holds the quanta extended from a value into a binary function,
	// keyed by the fs index of that value's delta in the function; draw
	// the quanta a forbidden pair pays, by its fs index. Maps: a
	// trace-back touches a few of them, and fs holds every table (on
	// frequency assignment, megabytes that slices would clear per row).
	ext, draw map[int32]int64
	vres      []int32 // residual supports in Bool_θ(P), laid out as EDAC.res
	// Counters over all rows: iterations that raised c∅, and by how much.
	iters int64
	gain  float64
	acs   int64 // arc consistencies on Bool_θ(P)
	// start caps the next round's first threshold: twice the one at
	// which this round first raised c∅ (later rounds find their
	// wipe-outs at thresholds no higher, and each threshold above costs
	// one arc consistency for nothing).
	start float64
}

// vacMaxIters caps one root's VAC iterations: each raises c∅ by at least
// one, so the cap only guards against slow creeping on large costs.
func (s *EDAC) vacMaxIters() int { return 64*s.n + 1024 }

// enforceVAC makes the root virtual arc consistent as far as whole-number
// quanta allow, then restores EDAC. It reports false when c∅ reaches the
// upper bound (the root is pruned).
func (s *EDAC) enforceVAC() bool {
	if !s.integral || s.n == 0 {
		return true
	}
	v := s.vac
	if v == nil {
		nu := s.uoff[s.n-1] + s.dom[s.n-1] // fs indices of the unary costs
		v = &vacState{
			stamp:  make([]int32, nu),
			killer: make([]int32, nu),
			demand: make([]int64, nu),
			ext:    map[int32]int64{},
			draw:   map[int32]int64{},
			cnt:    make([]int32, s.n),
			cnt0:   make([]int32, s.n),
			umax:   make([]float64, s.n),
			inQ:    make([]bool, s.n),
			moved:  make([]bool, s.n),
			vres:   make([]int32, len(s.res)),
		}
		s.vac = v
	}
	v.start = math.Inf(1)
	for range vacRounds {
		lb := s.fs[0]
		if !s.vacRound() {
			return false
		}
		if !(s.fs[0] > lb) {
			break
		}
	}
	return true
}

// vacRounds bounds the rounds of VAC then EDAC at one root: EDAC's
// propagation after VAC moves costs again, which may leave Bool(P)
// without a closure again.
const vacRounds = 4

// vacRound runs VAC's iterations over the threshold schedule, then EDAC's
// propagation; false when c∅ reaches the upper bound.
func (s *EDAC) vacRound() bool {
	v := s.vac
	// Bool_θ(P) forbids more as θ falls, so its closure shrinks: when
	// Bool_1(P), the finest, keeps a value in every domain, no θ wipes out
	// and the root is already VAC (one arc consistency where the whole
	// schedule, 14 thresholds on frequency assignment's costs, gains
	// nothing).
	s.vacScanStart()
	if s.vacAC(1) < 0 {
		return true
	}
	// A later round (v.start set by an earlier one that raised c∅) most
	// often finds no wipe-out above θ = 1 (on the binary grids every
	// later round: five arc consistencies at θ = 34 … 2 before θ = 1
	// wiped out again with λ < 1). Bool_θ(P)'s closure only grows with
	// θ, so one arc consistency at the schedule's lowest threshold above
	// 1 that keeps a value in every domain rules out every threshold
	// above it: the round goes straight to θ = 1 and ends with the very
	// moves and bound of the whole schedule. (The probe comes after the
	// check at θ = 1, which ends most rounds on other problems alone;
	// probing first cost the 10×10 grid 0.6% more instructions.)
	theta := min(s.vacTop(), v.start)
	if !math.IsInf(v.start, 1) && !s.vacNoSkip {
		if low := vacLowest(theta); low > 1 && low < theta && s.vacAC(low) < 0 {
			theta = 1
		}
	}
	iters := 0
	changed := false
	for theta >= 1 && iters < s.vacMaxIters() {
		x0 := s.vacAC(theta)
		if x0 < 0 {
			theta = math.Floor(theta / 2)
			continue
		}
		lam := s.vacTrace(x0, theta)
		if lam < 1 {
			s.vacClear()
			theta = math.Floor(theta / 2)
			continue
		}
		iters++
		if math.IsInf(lam, 1) {
			s.vacClear()
			s.setF(0, lam)
			s.vacFail()
			return false
		}
		s.vacApply(x0, lam)
		v.iters++
		v.gain += lam
		if !changed {
			v.start = 2 * theta
		}
		changed = true
		if !(s.fs[0] < s.threshold()) {
			s.vacFail()
			return false
		}
	}
	if !changed {
		return true
	}
	// Restore EDAC around the variables whose costs moved: an extension
	// raised a function's costs towards their neighbours (AC* supports
	// may be lost), a projection raised unary costs (full and existential
	// supports may be lost).
	for x := range s.n {
		if !v.moved[x] {
			continue
		}
		v.moved[x] = false
		s.pushAC(x)
		s.raised(x)
	}
	s.ncAll = true
	return s.propagate()
}

// vacLowest returns the last threshold above 1 of the schedule that
// starts at theta and halves (floored) down to 1: theta itself when
// halving it leaves less than 2.
func vacLowest(theta float64) float64 {
	for math.Floor(theta/2) >= 2 {
		theta = math.Floor(theta / 2)
	}
	return theta
}

// vacFail ends a round that pruned the node: EDAC's queues emptied, the
// moved marks cleared.
func (s *EDAC) vacFail() {
	clear(s.vac.moved)
	s.fail()
}

// vacScanStart records, at a round's start, each variable's live values
// and largest live unary cost (-Inf when it takes no part in VAC) for
// vacAC's scans.
func (s *EDAC) vacScanStart() {
	v := s.vac
	for x := range s.n {
		n, m := int32(0), math.Inf(-1)
		if !s.vacOut(x) {
			for a := range s.dom[x] {
				if s.alive(x, a) {
					n++
					m = max(m, s.u(x, a))
				}
			}
		}
		v.cnt0[x], v.umax[x] = n, m
	}
}

// vacTop returns the first threshold: the largest finite live cost (0
// when there is none).
func (s *EDAC) vacTop() float64 {
	top := 0.0
	for x := range s.n {
		if s.gone[x] || s.deleted(x) {
			continue
		}
		for a := range s.dom[x] {
			if c := s.u(x, a); s.alive(x, a) && c > top && !math.IsInf(c, 1) {
				top = c
			}
		}
		for _, k := range s.ladj(x) {
			sd := s.side(int(k), x)
			if sd.on != s.bins[k].x {
				continue
			}
			for a := range sd.don {
				if sd.aon[a] == 0 {
					continue
				}
				for b := range sd.dot {
					if c := sd.cost(a, b); sd.aot[b] != 0 && c > top && !math.IsInf(c, 1) {
						top = c
					}
				}
			}
		}
	}
	return math.Floor(top)
}

// vacOut reports whether x takes no part in VAC: eliminated before or
// during search.
func (s *EDAC) vacOut(x int) bool { return s.gone[x] || s.deleted(x) }

// vacRemove removes value a of x from Bool_θ(P), removed by killer (-1:
// its unary cost), and reports whether x is left with no value.
func (s *EDAC) vacRemove(x, a, killer int) bool {
	v := s.vac
	i := s.uoff[x] + a
	v.order = append(v.order, [2]int32{int32(x), int32(a)})
	v.stamp[i] = int32(len(v.order))
	v.killer[i] = int32(killer)
	v.cnt[x]--
	return v.cnt[x] == 0
}

// vacAC enforces arc consistency on Bool_θ(P) and returns the variable it
// wiped out, or -1 when it has a non-empty closure. The removals stay
// recorded (vacClear forgets them).
//
// EDAC's AC* holds at a round's start: every live value has a pair of
// cost 0 with a live value, allowed at every θ ≥ 1, so revising x against
// a variable y that lost no value in Bool_θ(P) and whose costs VAC has not
// moved this round (vacState.moved; an extension and a projection mark
// both ends of the function) removes nothing. vacAC therefore visits the
// variables in index order as the full AC-3 queue would, but revises only
// against those that lost a value or moved (pending), and queues after the
// scan those that lose one once passed: the same removals in the same
// order as with every variable queued, without the pass over every
// function that found a support for every value (vacFull restores that
// pass, for the tests that compare).
func (s *EDAC) vacAC(theta float64) int {
	v := s.vac
	v.acs++
	s.vacClear()
	v.q = v.q[:0]
	// The scan reads the round's records (vacScanStart) for a variable
	// whose costs VAC has not moved: its live values, and whether any
	// unary cost reaches θ; only a moved one is read through is and fs
	// (this scan runs over every variable at each of a root's 10–60 arc
	// consistencies: 5% of a 60×60 grid's instructions when it read them
	// all).
	cnt, inQ, moved, umax := v.cnt[:s.n], v.inQ[:s.n], v.moved[:s.n], v.umax[:s.n]
	copy(cnt, v.cnt0)
	clear(inQ)
	for x := range cnt {
		if !moved[x] && !s.vacFull {
			if umax[x] < theta {
				continue
			}
		} else if s.vacOut(x) {
			continue
		}
		d, ao, uo := s.dom[x], s.aoff[x], s.uoff[x]
		al, u := s.is[ao:ao+d], s.fs[uo:uo+d]
		// inQ marks the pending variables during the scan.
		inQ[x] = moved[x] || s.vacFull
		for a, f := range al {
			if f != 0 && u[a] >= theta {
				inQ[x] = true
				if s.vacRemove(x, a, -1) {
					clear(inQ)
					return x
				}
			}
		}
	}
	// revise revises y's neighbours against y; false on a wipe-out, whose
	// variable it stores in wiped. Within the scan (scan ≥ 0) a neighbour
	// past it stays pending for its turn, one before it is queued.
	wiped := -1
	revise := func(y, scan int) bool {
		for _, k32 := range s.ladj(y) {
			k := int(k32)
			x := s.bins[k].x + s.bins[k].y - y
			lost, w := s.vacRevise(k, x, theta)
			if w {
				wiped = x
				return false
			}
			if lost && !v.inQ[x] {
				v.inQ[x] = true
				if x < scan || scan < 0 {
					v.q = append(v.q, int32(x))
				}
			}
		}
		return true
	}
	for y := range s.n {
		if !v.inQ[y] {
			continue
		}
		v.inQ[y] = false
		if !revise(y, y) {
			clear(v.inQ)
			return wiped
		}
	}
	for len(v.q) > 0 {
		y := int(v.q[0])
		v.q = v.q[1:]
		v.inQ[y] = false
		if !revise(y, -1) {
			clear(v.inQ)
			return wiped
		}
	}
	return -1
}

// vacRevise removes the values of x left without an allowed pair in
// binary function k; it reports whether it removed any and whether x was
// wiped out. It reads the side's and VAC's records through local views
// (the membership test and side.cost through s and sd cost a fifth more
// instructions, and this is most of VAC's time on the scale-free graphs).
func (s *EDAC) vacRevise(k, x int, theta float64) (lost, wiped bool) {
	v := s.vac
	sd := s.side(k, x)
	y := sd.ot
	roff := s.bins[k].resOff
	if x != s.bins[k].x {
		roff += 2 * s.bins[k].dx
	}
	don, dot := sd.don, sd.dot
	res := v.vres[roff : roff+don]
	aon, aot := sd.aon[:don], sd.aot[:dot]
	uo, ut := s.uoff[x], s.uoff[y]
	stOn, stOt := v.stamp[uo:uo+don], v.stamp[ut:ut+dot]
	eres, efres := sd.res[:don], sd.fres[:don]
	tab, pon, pot := sd.tab, sd.pon[:don], sd.pot[:dot]
	son, sot := sd.son, sd.sot
	for a := range don {
		if aon[a] == 0 || stOn[a] != 0 {
			continue
		}
		// allowed reports whether (a, b) is in Bool_θ(P): b in it and
		// their cost below θ.
		base, pa := a*son, pon[a]
		allowed := func(b int) bool {
			return b < dot && aot[b] != 0 && stOt[b] == 0 && tab[base+b*sot]-pa-pot[b] < theta
		}
		// EDAC's residual supports first (its AC* and full supports cost
		// nothing, so they are allowed pairs unless y's value left
		// Bool_θ(P)), then VAC's own.
		if allowed(int(eres[a])) || allowed(int(efres[a])) || allowed(int(res[a])) {
			continue
		}
		found := false
		for b := range dot {
			if allowed(b) {
				res[a] = int32(b)
				found = true
				break
			}
		}
		if found {
			continue
		}
		lost = true
		if s.vacRemove(x, a, k) {
			return true, true
		}
	}
	return lost, false
}

// vacClear forgets the last removals, demands, extensions and draws.
func (s *EDAC) vacClear() {
	v := s.vac
	for _, p := range v.order {
		i := s.uoff[p[0]] + int(p[1])
		v.stamp[i], v.demand[i] = 0, 0
	}
	v.order = v.order[:0]
	clear(v.ext)
	clear(v.draw)
}

// vacTrace computes the demands of the removals that wiped x0 out and
// returns λ, the whole number of cost every quantum can be: 0 when some
// payer cannot give one.
func (s *EDAC) vacTrace(x0 int, theta float64) float64 {
	v := s.vac
	for a := range s.dom[x0] {
		if s.alive(x0, a) {
			v.demand[s.uoff[x0]+a]++
		}
	}
	lam := math.Inf(1)
	for p := len(v.order) - 1; p >= 0; p-- {
		x, a := int(v.order[p][0]), int(v.order[p][1])
		i := s.uoff[x] + a
		d := v.demand[i]
		if d == 0 {
			continue
		}
		k := int(v.killer[i])
		if k < 0 {
			lam = min(lam, math.Floor(s.fs[i]/float64(d)))
			continue
		}
		sd := s.side(k, x)
		y := sd.ot
		for b := range sd.dot {
			if sd.aot[b] == 0 {
				continue
			}
			if c := sd.cost(a, b); c >= theta {
				t := int32(s.bins[k].curOff + a*sd.son + b*sd.sot)
				v.draw[t] += d
				lam = min(lam, math.Floor(c/float64(v.draw[t])))
				continue
			}
			// b left Bool_θ(P) before a: an extension from it pays.
			e := int32(sd.pOt + b)
			if was := v.ext[e]; d > was {
				v.demand[s.uoff[y]+b] += d - was
				v.ext[e] = d
			}
		}
	}
	// Inf when every payer is a hard cost: no finite assignment is left.
	return lam
}

// vacApply makes the transfers vacTrace planned with quantum lam, then
// moves lam from x0's unary costs into c∅.
func (s *EDAC) vacApply(x0 int, lam float64) {
	v := s.vac
	for _, p := range v.order {
		x, a := int(p[0]), int(p[1])
		i := s.uoff[x] + a
		d := v.demand[i]
		k := int(v.killer[i])
		if d == 0 || k < 0 {
			continue
		}
		sd := s.side(k, x)
		y := sd.ot
		for b := range sd.dot {
			e := sd.pOt + b
			q := v.ext[int32(e)]
			if q == 0 {
				continue
			}
			amt := float64(q) * lam
			delete(v.ext, int32(e))
			s.setF(e, s.fs[e]-amt) // c_xy(·, b) rises by amt
			ui := s.uoff[y] + b
			s.setF(ui, s.fs[ui]-amt)
			s.markDEE(y)
			v.moved[y] = true
		}
		amt := float64(d) * lam
		s.setF(sd.pOn+a, s.fs[sd.pOn+a]+amt) // c_xy(a, ·) falls by amt
		s.addUnary(x, a, amt)
		v.moved[x] = true
	}
	o := s.uoff[x0]
	for a := range s.dom[x0] {
		if s.alive(x0, a) {
			s.setF(o+a, s.fs[o+a]-lam)
		}
	}
	s.markDEE(x0)
	v.moved[x0] = true
	s.setF(0, s.fs[0]+lam)
	s.ncAll = true
	s.vacClear()
}
