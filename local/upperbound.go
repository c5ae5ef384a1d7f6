package local

import (
	"cmp"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
)

// The first incumbent of AOBB's search: a complete assignment, so that
// its cost bounds the optimum from above. How much the search prunes
// depends far more on having one than on how good it is: an SHDS home's
// response (testdata/shds_dm_7_1_5_home5.wcsp, optimum 744290) expands
// 124k OR nodes with no incumbent, then escalates its heuristic, and 16.4k
// to 16.8k with any incumbent from 744291 to 800000.

// diveChecks bounds the checks of one dive (see dive): an eighth of the
// checks a search gets before its heuristic escalates (searchFloor), so
// that a dive that finds nothing costs little against the search it was
// meant to shorten. The dive of testdata/shds_dm_7_1_5_home5.wcsp
// takes 4.5·10^4 checks, without a backtrack.
const diveChecks = 1 << 19

// initialBound sets s.val to the first incumbent of a row's search and
// returns its cost in the conditioned functions (Hard when it found no
// feasible one): a greedy descent along the heuristic; where that meets a
// Hard cost, a dive (a depth-first search for any feasible assignment,
// within diveChecks) unless the caller has a feasible one (the last
// row's answer); then one-variable moves.
func (s *AOBB) initialBound(feasible bool) float64 {
	s.descend()
	if !feasible && mva.IsHard(s.cost(s.val)) {
		s.dive(diveChecks)
	}
	return s.improve()
}

// descend assigns s.val by descending the pseudo-tree along the heuristic:
// each variable takes its cheapest value given the ones above.
func (s *AOBB) descend() {
	for _, v := range s.pre {
		s.expand(v)
		best, bc := 0, math.Inf(1)
		for a := range s.lp.Domains[v] {
			if c := s.w[v][a] + s.h[v][a]; c < bc {
				best, bc = a, c
			}
		}
		s.val[v] = best
	}
}

// improve improves s.val by one-variable moves until none helps (at most
// 20 sweeps), and returns its cost. Moves compare (Hard entries, sum of
// the others), so that an infeasible assignment can still walk towards
// feasibility.
func (s *AOBB) improve() float64 {
	var sum []float64
	var hard []int
	for range 20 {
		moved := false
		for _, v := range s.pre {
			d := s.lp.Domains[v]
			if cap(sum) < d {
				sum, hard = make([]float64, d), make([]int, d)
			}
			sum, hard = sum[:d], hard[:d]
			clear(sum)
			clear(hard)
			for k := range s.nbr[v] {
				r := &s.nbr[v][k]
				b := r.base(s.val)
				for a := range d {
					if c := r.f.Costs[b+a*r.vstride]; mva.IsHard(c) {
						hard[a]++
					} else {
						sum[a] += c
					}
				}
				s.checks += int64(d)
			}
			cur := s.val[v]
			for a := range d {
				if hard[a] < hard[cur] || hard[a] == hard[cur] && sum[a] < sum[cur] {
					cur = a
				}
			}
			if cur != s.val[v] {
				s.val[v] = cur
				moved = true
			}
		}
		if !moved {
			break
		}
	}
	return s.cost(s.val)
}

// dive searches for a feasible assignment, depth first along the
// pseudo-tree's preorder, maintaining generalised arc consistency on the
// functions' Hard entries: a value is removed from a variable's domain
// once no entry of one of its functions that is not Hard, over values
// still in the domains, holds it. It is the repair of a descent that met
// a Hard cost: the chains of an SHDS home's progress counters (a
// counter's last value fixed, each step adding its slot's action) make
// the descent infeasible where the heuristic is too coarse to see them,
// no one-variable move repairs a chain, and a depth-first search that
// checks a chain only once it is complete thrashes over the actions above
// it (testdata/shds_dm_7_1_5_home5.wcsp: 50k nodes). Arc consistency on
// a chain of functions that share one variable pairwise is exact on it,
// so a value
// that leaves a counter's target out of reach is removed where it is
// tried. Values are tried in the order of the heuristic (w + h, as the
// descent takes them), a value whose bound is Hard skipped. It stops after
// budget checks (a table entry read counts one) or when the row's own
// budget or context ends. On success s.val holds the assignment and dive
// returns true; otherwise s.val is as it was.
func (s *AOBB) dive(budget int64) bool {
	if s.dv == nil {
		s.dv = newDiver(s)
	}
	s.dives++
	d := s.dv
	d.reset()
	d.end = s.checks + min(budget, math.MaxInt64-s.checks)
	saved := append([]int(nil), s.val...)
	ok := d.propagateAll() && d.search(0)
	if !ok {
		copy(s.val, saved)
	}
	return ok
}

// diver holds the domains of a dive (see dive) over the conditioned
// functions.
type diver struct {
	s       *AOBB
	off     []int  // off[v]: v's first slot in live and sup
	owner   []int  // owner[slot]: the variable of a slot
	live    []bool // live[off[v]+a]: a is still in v's domain
	size    []int  // live values per variable
	sup     []bool // scratch of revise, indexed as live
	trail   []int  // removed slots, to undo
	holders [][]int
	queue   []int
	queued  []bool
	dig     []int   // scratch of revise: an entry's places in lists
	strides []int   // scratch of revise: the function's strides
	lists   [][]int // scratch of revise: each variable's live values
	// fin[i] lists function i's entries that are not Hard, as the slots
	// (in live) of their values, len(Vars) per entry, from fin[i].at on
	// in finSlots; set at each dive, as rows change the costs.
	fin      []finRange
	finSlots []int32
	end      int64 // checks at which the dive stops
	out      bool  // it stopped
}

// finRange is a function's run of diver.finSlots: n entries from at.
type finRange struct{ at, n int }

func newDiver(s *AOBB) *diver {
	nv := len(s.lp.Vars)
	d := &diver{s: s, off: make([]int, nv+1), size: make([]int, nv), holders: make([][]int, nv), queued: make([]bool, len(s.cond))}
	for v := range nv {
		d.off[v+1] = d.off[v]
		if v >= s.lp.NB {
			d.off[v+1] += s.lp.Domains[v]
		}
	}
	d.owner = make([]int, d.off[nv])
	for v := range nv {
		for slot := d.off[v]; slot < d.off[v+1]; slot++ {
			d.owner[slot] = v
		}
	}
	d.live = make([]bool, d.off[nv])
	d.sup = make([]bool, d.off[nv])
	for i := range s.cond {
		f := s.cond[i].f
		for _, u := range f.Vars {
			if !slices.Contains(d.holders[u], i) {
				d.holders[u] = append(d.holders[u], i)
			}
		}
		if len(f.Vars) > len(d.dig) {
			d.dig = make([]int, len(f.Vars))
			d.strides = make([]int, len(f.Vars))
			d.lists = make([][]int, len(f.Vars))
		}
	}
	return d
}

// reset makes every interior value live again.
func (d *diver) reset() {
	for i := range d.live {
		d.live[i] = true
	}
	for v := d.s.lp.NB; v < len(d.size); v++ {
		d.size[v] = d.s.lp.Domains[v]
	}
	d.trail, d.queue, d.out = d.trail[:0], d.queue[:0], false
	clear(d.queued)
	d.listFinite()
}

// listFinite lists each function's entries that are not Hard (fin), for
// revise: where they are fewer than the live entries, revise reads them
// instead. The SHDS responses' functions are mostly Hard (a progress
// chain's ternary function allows 3 to 41 of its 648 entries), and the
// dive's first propagation, over whole domains, read every entry of
// every function: most of a dive's time
// (testdata/shds_dm_7_1_5_home5.wcsp).
func (d *diver) listFinite() {
	conds := d.s.cond
	if len(d.fin) != len(conds) {
		d.fin = make([]finRange, len(conds))
	}
	total := 0 // the slots needed: one allocation at the first dive
	for i := range conds {
		f := conds[i].f
		for _, c := range f.Costs {
			if !mva.IsHard(c) {
				total += len(f.Vars)
			}
		}
	}
	slots := slices.Grow(d.finSlots[:0], total)
	for i := range conds {
		f := conds[i].f
		at := len(slots)
		n := 0
		for e, c := range f.Costs {
			if mva.IsHard(c) {
				continue
			}
			n++
			// The entry's values, last variable fastest.
			start := len(slots)
			for range f.Vars {
				slots = append(slots, 0)
			}
			for p := len(f.Vars) - 1; p >= 0; p-- {
				slots[start+p] = int32(d.off[f.Vars[p]] + e%f.Dims[p])
				e /= f.Dims[p]
			}
		}
		d.fin[i] = finRange{at, n}
	}
	d.finSlots = slots
}

// remove takes value a out of v's domain and queues v's functions; false
// when the domain is empty.
func (d *diver) remove(v, a int) bool {
	d.live[d.off[v]+a] = false
	d.trail = append(d.trail, d.off[v]+a)
	d.size[v]--
	for _, i := range d.holders[v] {
		if !d.queued[i] {
			d.queued[i] = true
			d.queue = append(d.queue, i)
		}
	}
	return d.size[v] > 0
}

// undo restores the values removed since the trail had length mark.
func (d *diver) undo(mark int) {
	for _, slot := range d.trail[mark:] {
		d.live[slot] = true
		d.size[d.owner[slot]]++
	}
	d.trail = d.trail[:mark]
}

// propagateAll queues every function and propagates.
func (d *diver) propagateAll() bool {
	for i := range d.s.cond {
		if !d.queued[i] {
			d.queued[i] = true
			d.queue = append(d.queue, i)
		}
	}
	return d.propagate()
}

// propagate revises queued functions until none is queued (true) or a
// domain is empty (false, the queue cleared).
func (d *diver) propagate() bool {
	ok := true
	for len(d.queue) > 0 && ok {
		i := d.queue[len(d.queue)-1]
		d.queue = d.queue[:len(d.queue)-1]
		d.queued[i] = false
		ok = d.revise(i)
	}
	for _, i := range d.queue {
		d.queued[i] = false
	}
	d.queue = d.queue[:0]
	return ok
}

// revise removes the values of function i's variables that no entry of
// it supports (not Hard, over live values); false when a domain empties.
func (d *diver) revise(i int) bool {
	f := d.s.cond[i].f
	k := len(f.Vars)
	// The live values of each variable, and the entries they span: the
	// walk visits only those (after a few assignments, a counter of 182
	// values has one or two left).
	n := 1
	for p, u := range f.Vars {
		// sup is cleared in the same loop (clear is a runtime call,
		// dearer than a few stores).
		live, sup := d.live[d.off[u]:d.off[u+1]], d.sup[d.off[u]:d.off[u+1]]
		sup = sup[:len(live)]
		l := d.lists[p][:0]
		for a, ok := range live {
			sup[a] = false
			if ok {
				l = append(l, a)
			}
		}
		d.lists[p] = l
		n *= len(l)
	}
	stride := 1
	for p := k - 1; p >= 0; p-- {
		d.strides[p] = stride
		stride *= f.Dims[p]
	}
	d.s.checks += int64(n) // the live entries, whichever are read
	if fr := d.fin[i]; fr.n < n {
		// Fewer entries are finite than live: read those.
		ents := d.finSlots[fr.at : fr.at+fr.n*k]
		for len(ents) > 0 {
			e := ents[:k]
			ents = ents[k:]
			ok := true
			for _, slot := range e {
				ok = ok && d.live[slot]
			}
			if ok {
				for _, slot := range e {
					d.sup[slot] = true
				}
			}
		}
		return d.prune(f, k)
	}
	// Walk the live entries in order, the last variable fastest.
	dig := d.dig[:k]
	clear(dig)
	idx := 0
	for p := range k {
		idx += d.lists[p][0] * d.strides[p]
	}
	for range n {
		if !mva.IsHard(f.Costs[idx]) {
			for p, u := range f.Vars {
				d.sup[d.off[u]+d.lists[p][dig[p]]] = true
			}
		}
		for p := k - 1; p >= 0; p-- {
			l := d.lists[p]
			idx -= l[dig[p]] * d.strides[p]
			dig[p]++
			if dig[p] < len(l) {
				idx += l[dig[p]] * d.strides[p]
				break
			}
			dig[p] = 0
			idx += l[0] * d.strides[p]
		}
	}
	return d.prune(f, k)
}

// prune removes the live values of f's variables that revise found no
// support for; false when a domain empties.
func (d *diver) prune(f *Factor, k int) bool {
	for p, u := range f.Vars[:k] {
		for _, a := range d.lists[p] {
			if !d.sup[d.off[u]+a] {
				if !d.remove(u, a) {
					return false
				}
			}
		}
	}
	return true
}

// assign removes v's values other than a and propagates; false when a
// domain empties.
func (d *diver) assign(v, a int) bool {
	for b := range d.s.lp.Domains[v] {
		if b != a && d.live[d.off[v]+b] {
			d.remove(v, b) // a stays: never empty
		}
	}
	return d.propagate()
}

// search assigns s.pre[k:] given the values before k; false when it
// finds no feasible assignment or stops.
func (d *diver) search(k int) bool {
	s := d.s
	if k == len(s.pre) {
		return true
	}
	s.nodes++
	if s.checks > d.end || (s.budget > 0 && s.checks > s.budgetEnd) ||
		(s.nodes&0xff == 0 && s.ctx.Err() != nil) {
		d.out = true
		return false
	}
	v := s.pre[k]
	s.expand(v)
	w, h, iv := s.w[v], s.h[v], s.interV[v]
	ord := s.ord[v][:0]
	for a := range s.lp.Domains[v] {
		if d.live[d.off[v]+a] && !mva.IsHard(w[a]+h[a]+iv) {
			ord = append(ord, a)
		}
	}
	slices.SortStableFunc(ord, func(a, b int) int { return cmp.Compare(w[a]+h[a], w[b]+h[b]) })
	for _, a := range ord {
		m := len(d.trail)
		s.val[v] = a
		if d.assign(v, a) && d.search(k+1) {
			return true
		}
		d.undo(m)
		if d.out {
			return false
		}
	}
	return false
}

// guessFactor is the ratio of searchRoot's successive guessed bounds,
// guessMax the most it tries: past guessFactor^guessMax times the root's
// bound, the bound is too weak for a guess to be worth its search (a
// first heuristic that fits no i-bound: dm_7_1_5's home2 response,
// exported by TestExportSHDSResponses, 5954 against 8.9·10^6).
const (
	guessFactor = 2
	guessMax    = 3
)

// searchRoot searches the whole AND/OR space below the incumbent's cost
// ub. Where ub is more than guessFactor times the root's lower bound lb
// (a repaired descent's incumbent: testdata/shds_dm_7_1_5_home5.wcsp,
// 6.8·10^6 against a bound of 5.8·10^5 and an optimum of 7.4·10^5), it
// first searches below guessed bounds guessFactor·lb, guessFactor²·lb,
// ... (at most guessMax) while they are below ub: a search's nodes grow
// with its bound (that home: 16.5k nodes below the optimum plus one,
// 24.5k below 2·10^6, 81k below 6.8·10^6, 124k with no incumbent), and
// one that finds an assignment below its bound has found the optimum,
// since everything it pruned was bounded below by it. A guess below the
// optimum ends with nothing found, its exact subproblem values cached
// for the next.
func (s *AOBB) searchRoot(ub float64) (float64, bool) {
	root := len(s.lp.Vars)
	if mva.IsHard(ub) {
		return s.solveAND(root, ub)
	}
	lb := 0.0
	for _, c := range s.kids(root) {
		if x, ok := s.cacheGet(c); ok {
			lb += x
		} else {
			lb += s.expand(c)
		}
	}
	if lb > 0 && !mva.IsHard(lb) {
		u := guessFactor * lb
		for k := 0; k < guessMax && u < ub; k, u = k+1, u*guessFactor {
			s.guesses++
			r, exact := s.solveAND(root, u)
			if s.stop || exact && r < u {
				return r, exact
			}
		}
	}
	return s.solveAND(root, ub)
}
