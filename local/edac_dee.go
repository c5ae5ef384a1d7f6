package local

// Dead-end elimination for EDAC: values that another value of the same
// variable dominates are removed at every search node.

import (
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
)

// dee removes, at a search node, each value a of an unassigned variable x
// that x's EAC support s (the live value of least unary cost) dominates:
// when
//
//	u_x(s) − u_x(a) + Σ_k max_b (c_k(s, b) − c_k(a, b)) ≤ 0
//
// over x's live binary functions k and the live values b of their other
// variable (entries where c_k(a, b) is Hard skipped: no finite assignment
// with x = a has them), changing x from a to s never costs more, whatever
// the other variables are, so some optimal completion of the node keeps
// s and a may go (Goldstein's dead-end elimination on the current
// reparametrised costs; toulbar2's default restricted DEE, -dee=1). On a
// domain of two, s is also tested against a. Removals are made one at a
// time with the domains at that moment, so each keeps an optimum of what
// is left. A live n-ary function (another of its variables unassigned)
// adds its own term, the most its cost can rise over its other variables'
// live tuples (naryGains; deeVarNary). On fractional costs the inequality
// must hold by a rounding margin. It reports whether a value went; s
// stays, so no domain is wiped out.
//
// Only the variables in the DEE queue are tested (in index order): those
// whose unary costs, functions' costs, live functions, own or neighbours'
// domains or EAC support changed since they were last tested (markDEE's
// callers), the test's only inputs; a variable tested without a removal
// would fail the same test again. search keeps the queue of a branching
// node for its second branch (varQueue.save), so each node starts with exactly
// the variables changed since its parent's fixpoint. On a 40×40 binary
// grid the test ran on all 1600 variables at every node.
func (s *EDAC) dee() bool {
	margin := 0.0
	if !s.integral {
		margin = 1e-9 * max(1, math.Abs(s.fs[0]))
	}
	q := s.deeQ.take()
	removed := false
	for _, x := range q {
		if s.deeVar(x, margin) {
			removed = true
		}
	}
	if s.verifyQueues && !removed {
		// Tests: every variable, as before the queue; a removal here
		// is a change markDEE missed.
		for x := range s.n {
			if s.deeVar(x, margin) {
				s.deeMissed++
				removed = true
			}
		}
	}
	if removed {
		s.deeRemovals++
	}
	return removed
}

// deeVar tests x's values against its EAC support (see dee) and removes
// the dominated ones; it reports whether one went.
func (s *EDAC) deeVar(x int, margin float64) bool {
	if s.size(x) < 2 || s.size(x) > deeMaxSize || s.deleted(x) || s.gone[x] || (s.noNaryDEE && s.naryLive(x)) {
		return false
	}
	removed := false
	sp := s.bestValue(x)
	if len(s.adjN[x]) > 0 && !s.noNaryDEE {
		return s.deeVarNary(x, sp, margin)
	}
	for a := range s.dom[x] {
		if a == sp || !s.alive(x, a) {
			continue
		}
		if s.dom[x] == 2 {
			if spa, asp := s.dominatesPair(x, sp, a, margin); spa {
				s.remove(x, a)
				removed = true
			} else if asp {
				s.remove(x, sp)
				removed = true
			}
			continue
		}
		if s.dominates(x, sp, a, margin) {
			s.remove(x, a)
			removed = true
		}
	}
	return removed
}

// markDEE queues x for dead-end elimination's test: something it reads
// changed.
// Variables of more than deeMaxSize live values are not queued: dee does
// not test them, and the removal that brings one down to deeMaxSize
// queues it (frequency assignment, 24 values, queues nothing).
func (s *EDAC) markDEE(x int) {
	if s.size(x) <= deeMaxSize {
		s.deeQ.push(x)
	}
}

// markDEEFn queues both variables of binary function k: its costs changed.
func (s *EDAC) markDEEFn(k int) {
	b := &s.bins[k]
	s.markDEE(b.x)
	s.markDEE(b.y)
}

// naryLive reports whether x is in an n-ary function with another
// unassigned variable.
func (s *EDAC) naryLive(x int) bool {
	for _, j := range s.adjN[x] {
		if s.is[s.narys[j].cnt] > 1 {
			return true
		}
	}
	return false
}

// dominates reports whether changing x from a to b never raises the cost
// of the node's problem by more than −margin (see dee).
func (s *EDAC) dominates(x, b, a int, margin float64) bool {
	ua, ub := s.u(x, a), s.u(x, b)
	if mva.IsHard(ub) {
		return false
	}
	if mva.IsHard(ua) {
		return true
	}
	d := ub - ua
	for _, k := range s.ladj(x) {
		sd := s.side(int(k), x)
		s.checks += int64(sd.dot)
		m := math.Inf(-1)
		for c := range sd.dot {
			if sd.aot[c] == 0 {
				continue
			}
			ca := sd.cost(a, c)
			if mva.IsHard(ca) {
				continue
			}
			cb := sd.cost(b, c)
			if mva.IsHard(cb) {
				return false
			}
			m = max(m, cb-ca)
		}
		// −Inf: no live b gives x = a a finite cost.
		d += m
	}
	return d <= -margin
}

// dominatesPair returns dominates(x, b, a, margin) and, when that is
// false, dominates(x, a, b, margin), reading each live pair of x's tables
// once for both (deeVar asks both on a domain of two, where the second
// pass was a third of dead-end elimination's instructions on the binary
// grids). The answers, and the checks counted, are the two calls': the
// same sums in the same order, each direction's checks up to the
// function that ended it, the second's only when the first is false.
func (s *EDAC) dominatesPair(x, b, a int, margin float64) (ba, ab bool) {
	ua, ub := s.u(x, a), s.u(x, b)
	if mva.IsHard(ua) || mva.IsHard(ub) {
		if s.dominates(x, b, a, margin) {
			return true, false
		}
		return false, s.dominates(x, a, b, margin)
	}
	d1, d2 := ub-ua, ua-ub // b over a, a over b
	ok1, ok2 := true, true
	var chk1, chk2 int64
	for _, k := range s.ladj(x) {
		sd := s.side(int(k), x)
		if ok1 {
			chk1 += int64(sd.dot)
		}
		if ok2 {
			chk2 += int64(sd.dot)
		}
		m1, m2 := math.Inf(-1), math.Inf(-1)
		for c := range sd.dot {
			if sd.aot[c] == 0 {
				continue
			}
			ca, cb := sd.cost(a, c), sd.cost(b, c)
			ha, hb := mva.IsHard(ca), mva.IsHard(cb)
			if !ha {
				if hb {
					ok1 = false
				} else {
					m1 = max(m1, cb-ca)
				}
			}
			if !hb {
				if ha {
					ok2 = false
				} else {
					m2 = max(m2, ca-cb)
				}
			}
		}
		d1 += m1
		d2 += m2
		if !ok1 && !ok2 {
			break
		}
	}
	ba = ok1 && d1 <= -margin
	s.checks += chk1
	if ba {
		return true, false
	}
	s.checks += chk2
	return false, ok2 && d2 <= -margin
}

// deeMaxSize is the most live values a variable may have for dee to test
// it: each test reads every live pair of its functions' tables, and on
// larger domains that costs more than the removals save (measured with
// three: a 12×12 grid over three values 7335 nodes, 0.9 s, against 4442
// and 0.4 s without; a 150-node scale-free graph over five 1174 nodes
// against 1181, a third slower), while on two values it cuts the nodes of
// a 20×20 binary grid from 320 to 62 and those of the 12×12 grid (once its
// domains are down to two) from 4442 to 3378.
const deeMaxSize = 2

// varQueue is a set of variables to visit (dead-end elimination's tests,
// eliminations during search), in index order, that a branching node
// saves for its second branch: the first consumed it.
type varQueue struct {
	q, saved, buf []int
	in            []bool
}

func newVarQueue(n int) varQueue { return varQueue{in: make([]bool, n)} }

// push adds x.
func (v *varQueue) push(x int) {
	if !v.in[x] {
		v.in[x] = true
		v.q = append(v.q, x)
	}
}

// take empties the queue and returns its variables in index order (valid
// until the next take). A queue of a sixteenth of the variables or more
// is read off its marks in one pass instead of sorted (at a binary grid's
// root every variable is queued: the sort was 0.5% of a 30×30 grid's
// instructions).
func (v *varQueue) take() []int {
	if 16*len(v.q) >= len(v.in) {
		v.buf = v.buf[:0]
		for x, in := range v.in {
			if in {
				v.buf = append(v.buf, x)
			}
		}
	} else {
		v.buf = append(v.buf[:0], v.q...)
		slices.Sort(v.buf)
	}
	v.clear()
	return v.buf
}

// clear empties the queue.
func (v *varQueue) clear() {
	for _, x := range v.q {
		v.in[x] = false
	}
	v.q = v.q[:0]
}

// save keeps the queue (as it is at a branching node) and returns where.
func (v *varQueue) save() int {
	m := len(v.saved)
	v.saved = append(v.saved, v.q...)
	return m
}

// restore makes the queue what save kept at m, and forgets it.
func (v *varQueue) restore(m int) {
	v.clear()
	for _, x := range v.saved[m:] {
		v.push(x)
	}
	v.saved = v.saved[:m]
}

// reset empties the queue and what it saved.
func (v *varQueue) reset() {
	v.clear()
	v.saved = v.saved[:0]
}
