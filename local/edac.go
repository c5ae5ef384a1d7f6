package local

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

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
// decision, EAC's queue first, as toulbar2 orders them (last, the root
// bound of frequency assignment of 80 links was 17 against 38, and a
// 150-node scale-free graph took 567 nodes against 189). Every operation is an equivalence-
// preserving transfer between non-negative costs, so c∅ is a lower bound
// whatever state the loop stops in (it has a cap on EAC rounds, which on
// integer costs always reach their fixpoint first).
//
// Non-binary functions (three or more interior variables) are checked when
// assigned, with these strengthenings: when a variable of one is assigned,
// the minimum of its entries consistent with the assigned values (tables
// of at most naryProjectMax entries) moves into c∅, and each unassigned
// variable's least cost per value into its unary costs (projectToUnary);
// when all but two of its variables are assigned, the function moves into
// a binary function between those two, planned per pair when EDAC is
// built (naryToBin), which the arc consistencies above then maintain;
// when all but one are (no binary function planned), it becomes a unary
// cost of the last one. Dead-end elimination reads live n-ary functions
// too (naryGains).
//
// Search. Binary branching, x = a then x ≠ a, on the variable of smallest
// domain size over weighted degree (dom/wdeg: each function's weight counts
// the failures its last transfer led to, Boussemart et al. 2004), ties
// (within scoreTie) going to the variable of the largest live unary cost,
// whose choice decides the most (as toulbar2 breaks them: on a 60×60
// binary grid 12796 nodes and 5.8 s become 935 and 0.46 s), trying
// first the value of the EAC support (unary cost 0); a variable whose
// assignment failed at once is branched on again first until one of its
// assignments holds (last-conflict reasoning, as toulbar2 does: on a
// 150-node scale-free graph 1921 nodes become 1181). Variables left without
// a function to unassigned variables are set to their cheapest value
// without branching. Variables with at most two neighbours (binary
// functions only) are eliminated as bucket elimination would, before the
// search and whenever assignments leave one so during it (toulbar2's -e=2):
// one neighbour gets the least cost for each of its values as unary
// costs, two get it added to the function between them (during search, a
// dormant, costless one planned between every two neighbours of a
// variable when they have none, as toulbar2 creates it). Their values are
// chosen after the search. At every node, values of two-value variables
// that their EAC support dominates are removed (dead-end elimination,
// toulbar2's -dee=1; see dee): on a 30×30 binary grid the two leave 155
// variables to branch on at the root instead of 551, and the search takes
// 25 nodes where it timed out.
// The first upper bound comes from a greedy assignment improved by a few
// sweeps of best-value moves.
//
// Costs. The transfers subtract and add costs. On whole-number costs (most
// WCSP files) float64 arithmetic is exact and pruning is at lb ≥ ub; on
// fractional costs a node is pruned only at lb ≥ ub + 1e-9·max(1, |ub|), so
// that rounding cannot prune the optimum. Reported costs are always the
// exact sum of the original functions for the assignment found.
type EDAC struct {
	lp *mva.LocalProblem // the problem searched: merge.red when merge is set
	// merge is the functional substitution NewEDAC made (nil: none):
	// SolveRow takes and returns the values of merge.orig.
	merge *funcMerge
	bad   error
	n     int   // interior variables; variable i is local index NB+i
	dom   []int // domain sizes

	srcs  []edacSrc  // every function, conditioned on the row
	bins  []edacBin  // binary functions, merged per pair
	narys []edacNary // functions of three or more interior variables
	adjB  [][]int    // per variable: its binary functions
	// ladjOff and ladjLen place in is each variable's binary functions,
	// the live ones first (ladjLen+x holds how many): a trailed
	// permutation of adjB[x] that kill and wake keep, so that the scans
	// of a variable's functions skip the dead and dormant ones unread (on
	// a 40×40 grid two thirds of adjB are dormant functions).
	ladjOff  []int
	ladjLen  int
	adjN     [][]int   // per variable: its n-ary functions
	uoff     []int     // per variable: offset of its unary costs in fs and u0
	aoff     []int     // per variable: offset of its alive flags in is
	u0       []float64 // the row's unary costs (normalised)
	c0       float64   // the row's constant (normalised)
	integral bool
	rank     []int      // DAC order: costs move towards lower ranks
	dacRev   bool       // … towards higher ranks (after the root pass)
	elim     []edacElim // variables eliminated before search, in order
	gone     []bool     // per variable / per binary function: eliminated
	goneBin  []bool
	// dormant marks the binary functions planDormant added with no cost:
	// out of the search (not live) until elim2 needs one between the two
	// neighbours of a variable it eliminates.
	dormant []bool
	woken   int64 // dormant functions that joined the search, over all rows

	// Trailed state: fs holds c∅ (fs[0]), unary costs, the binary and
	// n-ary deltas and, per variable, a bound on its live unary costs
	// (NC* skips a variable whose bound is below the pruning threshold); is holds alive flags, domain sizes, assignment marks,
	// binary live flags and n-ary counts of unassigned variables.
	fs       []float64
	is       []int32
	umaxOff  int // fs index of per-variable bounds on the live unary costs
	sizeOff  int // is index of the domain sizes
	asgOff   int // is index of the "assignment processed" marks
	delOff   int // is index of the "eliminated during search" marks
	stackLen int // is index of the length of stack
	// stack lists the variables eliminated during search, in order, and
	// their one or two binary functions (-1: none).
	stack    []dynElim
	dynElims int64 // eliminations during search, over all rows
	// deeRemovals counts the nodes where dead-end elimination removed
	// values, over all rows; noDEE turns it off (measurements).
	deeRemovals int64
	noDEE       bool
	// twoValues is set when every variable left to the search has at
	// most two values (flipForSearch; the row's root sets it).
	twoValues bool
	// deeQ holds the variables dee tests next, elimQ those
	// eliminateSmall looks at next (their live functions dropped).
	deeQ, elimQ varQueue
	// verifyQueues makes dee and eliminateSmall look at every variable
	// once their queue changes nothing, counting what the queues missed
	// in deeMissed and elimMissed (tests).
	verifyQueues          bool
	deeMissed, elimMissed int64
	lbPair                float64 // c∅ before reverseDAC's last pair of passes
	// noLocalSearch starts the search without an upper bound, so that
	// tests reach every pruning rule (the local search often finds the
	// optimum of small problems, leaving the search nothing to lose).
	noLocalSearch bool
	// worstFirst branches on the costliest value first (tests only: the
	// first leaves are then poor and the optimum is reached by pruning).
	worstFirst bool
	// noLastConflict turns last-conflict branching off (measurements).
	noLastConflict bool
	// noNaryUnary turns projectToUnary off (measurements).
	noNaryUnary bool
	// noNaryGAC turns naryGAC off (measurements); naryGACRemovals
	// counts its removals, over all rows.
	noNaryGAC       bool
	naryGACRemovals int64
	// noNaryBin turns naryToBin off (measurements); naryBins counts the
	// n-ary functions it moved into binary ones, over all rows.
	noNaryBin bool
	naryBins  int64
	// noNaryDEE makes dead-end elimination skip the variables of live
	// n-ary functions, as it did before naryGains (measurements); naryDEE
	// counts its removals on such variables, over all rows.
	noNaryDEE bool
	naryDEE   int64
	// budget, when positive, stops a row's search (errBudget) past that
	// many checks; rowChecks is the count when the row began.
	budget, rowChecks int64
	// rootGap, when set, asks a row only for an assignment at its root
	// bound: past the root, the upper bound drops to rootMark, and a row
	// that finds nothing below it stops (errRootGap), its optimum being
	// above the root bound (auto's edac+aobb then asks AOBB).
	rootGap bool
	// staleNodes, when positive, stops a row's search (errStale) once it
	// has searched that many nodes (counted every 1024, as the context is
	// polled) with no leaf better than the upper bound the row started
	// from: edac+aobb's hand-over to AOBB (edacStaleNodes). rowNodes and
	// rowUBVer are nodes and ubVer when the row began.
	staleNodes, rowNodes int64
	rowUBVer             int
	// startUB, when hasStart is set, is the row's first upper bound, the
	// cost of an assignment the caller knows (a best response's last
	// answer, responseSolver); found says the row found an assignment
	// cheaper than its first bound (without one, below startUB there is
	// none and the caller's is an optimum).
	startUB         float64
	hasStart, found bool
	// rooted is set while the row's root is propagated: setF and setI
	// trail nothing then (see setF); rootLB is the last row's root bound.
	rooted bool
	rootLB float64
	// useVAC adds virtual arc consistency at the root (vac.go), vac its
	// scratch.
	useVAC bool
	// vacFull makes vacAC start from every variable (tests compare).
	vacFull bool
	// vacNoSkip makes a later VAC round run its whole threshold schedule
	// (no probe at its lowest threshold; tests compare).
	vacNoSkip bool
	vac       *vacState
	ft        []fTrail
	it        []iTrail
	// sides holds each binary function seen from x, then from y, for the
	// functions below firstDormant; dsides the dormant ones' that were
	// asked for, sideChunk functions a chunk in the order asked, dslot
	// each dormant function's place there plus one (0: none yet) and
	// dused the places taken (sideAt).
	sides        []side
	dsides       [][]side
	dslot        []int32
	dused        int
	firstDormant int
	sup          []int   // per variable: last EAC support found (a hint)
	res          []int32 // the binary functions' residual supports (edacBin.resOff)
	weight       []int64
	lastFn       int
	// lastConflict is the variable whose assignment last failed at
	// once (-1: none); it is branched on first while it is unassigned
	// (last-conflict reasoning, Lecoutre et al. 2009, as toulbar2 does).
	lastConflict int
	acQ, eacQ    []int
	// The DAC queue (pushDAC): a bit set over the ranks, its size, the
	// words outside [dacLo, dacHi] empty, and the variable of each rank.
	dacBits            []uint64
	dacN               int
	dacHi, dacLo       int
	byRank             []int32
	inAC, inDAC, inEAC []bool
	ncQ                []int // variables whose unary costs rose: NC* pruning
	inNC               []bool
	// gacQ holds the crisp n-ary functions one of whose variables lost a
	// value since naryGAC last ran on them (inGAC flags them).
	gacQ       []int
	inGAC      []bool
	ncAll      bool
	eacRounds  int
	eacDropped bool // the last propagation dropped its EAC queue (pushAllDAC)

	// Scratch for full supports.
	pbuf, ebuf []float64
	posbuf     []int32
	live       []int32 // the other variable's live values (liveOf)
	adjBuf     []int32 // processAC's copy of ladj

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
	// curOff is where in fs the table search works on starts: tab plus
	// what variables eliminated during search added.
	curOff int
	// Residual supports (hints, not trailed): for each value of x, its
	// last AC support and full support in y, and the same for y in x, at
	// resOff in EDAC.res (dx, dx, dy, dy entries; an offset, not four
	// slices, for a collector that scans every function).
	resOff int
	live   int // is index: 1 while both variables are unassigned
}

// edacNary is a function over three or more interior variables; its cost
// of a tuple is tab[index] − fs[delta] − Σ_p fs[vd+voff[p]+value_p], the
// last terms being what projectToUnary moved into its variables' unary
// costs.
type edacNary struct {
	vars, dims, strides []int
	tab                 []float64
	delta               int   // fs index
	vd                  int   // fs index of the per-value deltas
	voff                []int // per position: offset of its values' deltas from vd
	cnt                 int   // is index: unassigned variables; ≤ 1: absorbed
	// pairBin holds, for positions p and q (at p·arity+q and q·arity+p),
	// the binary function naryToBin moves the function into once p and
	// q are its last unassigned variables (-1: none; nil: none planned).
	pairBin []int
	// fin lists the row's finite entries when they are at most a
	// quarter of tab (nil otherwise), finDig their values, arity per
	// entry: naryMin reads those instead of every tuple (an SHDS
	// home's device tables: 645 finite entries of 3·215·215).
	fin    []int32
	finDig []int32
	// crisp is set when the row's finite entries are all equal (its
	// least, moved into the delta): every tuple then costs 0 or Hard, so
	// projectToUnary has nothing to move (its least costs are 0 or +Inf,
	// and +Inf is no cost it moves) and projectNary asks only whether a
	// tuple with live values is left (naryAnyTuple). An SHDS home's
	// device tables are so, and their projections were a fifth of a
	// response's CPU for nothing.
	crisp bool
	// res is the last live tuple naryAnyTuple found (its values, arity
	// of them; a hint, not trailed), checked first next time: a tuple
	// stays live until one of its values goes.
	res []int32
	// byVal lists, for a crisp function, the finite entries (indices
	// into fin) with value b at position p, at byOff[voff[p]+b] to
	// byOff[voff[p]+b+1]; sup holds each value's residual support (an
	// index into fin, -1 none yet): naryGAC's.
	byVal, byOff, sup []int32
	// dirty has bit p set when position p (below 64) lost a value
	// since naryGAC's last pass over the function; every bit is set when
	// a row begins. Not trailed: see naryGAC.
	dirty uint64
	// aoffs holds each position's variable's offset of alive flags in
	// is (EDAC.aoff), for liveTuple.
	aoffs []int32
}

// listFinite sets fin and finDig from tab, which has finite finite
// entries, where they are at most a quarter of it or, on a crisp function,
// at most maxCrispList; else fin is nil.
func (nf *edacNary) listFinite(finite int) {
	if (finite*4 > len(nf.tab) && !(nf.crisp && finite <= maxCrispList)) || len(nf.tab) > math.MaxInt32 {
		nf.fin, nf.finDig = nil, nil
		return
	}
	a := len(nf.vars)
	nf.fin, nf.finDig = nf.fin[:0], nf.finDig[:0]
	dig := make([]int32, a)
	for e, v := range nf.tab {
		if !math.IsInf(v, 1) {
			nf.fin = append(nf.fin, int32(e))
			nf.finDig = append(nf.finDig, dig...)
		}
		// Next tuple: the last position fastest (strides decrease).
		for p := a - 1; p >= 0; p-- {
			if dig[p]++; int(dig[p]) < nf.dims[p] {
				break
			}
			dig[p] = 0
		}
	}
}

// maxCrispList bounds the finite entries of a crisp n-ary function that
// listFinite lists whatever their share of the table, for naryGAC (an
// SHDS home's 7-ary device couplings are half finite).
const maxCrispList = 1 << 16

// indexValues sets byVal, byOff and sup for a crisp function whose finite
// entries fin lists (nil otherwise).
func (nf *edacNary) indexValues() {
	if !nf.crisp || nf.fin == nil {
		nf.byVal, nf.byOff, nf.sup = nil, nil, nil
		return
	}
	a := len(nf.vars)
	nv := 0
	for _, d := range nf.dims {
		nv += d
	}
	nf.byOff = zeroed(nf.byOff, nv+1)
	nf.sup = zeroed(nf.sup, nv)
	voff := make([]int, a)
	for p := 1; p < a; p++ {
		voff[p] = voff[p-1] + nf.dims[p-1]
	}
	for k := range nf.fin {
		for p, b := range nf.finDig[k*a : k*a+a] {
			nf.byOff[voff[p]+int(b)+1]++
		}
	}
	for i := 1; i <= nv; i++ {
		nf.byOff[i] += nf.byOff[i-1]
	}
	nf.byVal = zeroed(nf.byVal, len(nf.fin)*a)
	next := append([]int32(nil), nf.byOff[:nv]...)
	for k := range nf.fin {
		for p, b := range nf.finDig[k*a : k*a+a] {
			i := voff[p] + int(b)
			nf.byVal[next[i]] = int32(k)
			next[i]++
		}
	}
	for i := range nf.sup {
		nf.sup[i] = -1
	}
}

// zeroed returns s resized to n zeros, reusing its array where it is
// large enough (indexValues runs at every row).
func zeroed(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// newBin returns the binary function over x and y, rank[x] < rank[y]; its
// table and residual supports are allocated once every function is known.
func (s *EDAC) newBin(x, y int) edacBin {
	return edacBin{x: x, y: y, dx: s.dom[x], dy: s.dom[y]}
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

// NewEDAC prepares an EDAC solver for lp: the functional substitution of
// mergeFunctional, then (newEDAC) the binary and n-ary functions the row's
// conditioning leaves, merged per pair, and the search state.
func NewEDAC(lp *mva.LocalProblem) *EDAC {
	fm := mergeFunctional(lp)
	if fm == nil {
		return newEDAC(lp)
	}
	s := newEDAC(fm.red)
	s.merge = fm
	return s
}

// newEDAC is NewEDAC without the substitution.
func newEDAC(lp *mva.LocalProblem) *EDAC {
	s := &EDAC{lp: lp, n: lp.NumInterior(), lastFn: -1, lastConflict: -1}
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
	// The functions' factors and their index slices are carved from slabs
	// (five slices of each function's arity), srcs and bins are sized up
	// front, and so are the variables' lists of binary functions: one
	// allocation each where a 40×40 grid made 3 per function and grew
	// the lists by doubling. bins and the lists also get room for
	// planElimination's functions (at most one a variable) and
	// planDormant's (at most d(d-1)/2 for a variable of d binary
	// functions, and dormantShare times the functions and variables in
	// all). The function over a pair is found by pairIndex, not a map
	// of every pair (a 40×40 grid's NewEDAC a fifth less CPU).
	arity, dormant := 0, 0
	deg := make([]int, s.n)
	for _, f := range lp.Funcs {
		arity += len(f.Scope)
		in := 0
		for _, v := range f.Scope {
			if v >= lp.NB {
				in++
			}
		}
		if in == 2 {
			for _, v := range f.Scope {
				if v >= lp.NB {
					deg[v-lp.NB]++
				}
			}
		}
	}
	adjRoom := 0
	for x, d := range deg {
		if s.dom[x]*s.dom[x] <= dormantMaxTable { // neighbours of as many values
			dormant += d * (d - 1) / 2
		}
		adjRoom += adjCap(d)
	}
	room := len(lp.Funcs) + s.n + min(dormant, dormantShare*(len(lp.Funcs)+s.n))
	adjSlab := make([]int, adjRoom)
	for x, d := range deg {
		c := adjCap(d)
		s.adjB[x], adjSlab = adjSlab[:0:c], adjSlab[c:]
	}
	pair := pairIndex{s: s}
	factors := make([]Factor, len(lp.Funcs))
	slab := make([]int, 0, 5*arity)
	carve := func(n int) []int {
		sl := slab[len(slab) : len(slab) : len(slab)+n]
		slab = slab[:len(slab)+n]
		return sl
	}
	s.srcs = make([]edacSrc, 0, len(lp.Funcs))
	s.bins = make([]edacBin, 0, room)
	var strides []int
	for i, f := range lp.Funcs {
		n := len(f.Scope)
		c := condFunc{f: &factors[i], costs: f.Costs}
		c.bvars, c.bstrides, c.istrides = carve(n), carve(n), carve(n)
		c.f.Vars, c.f.Dims = carve(n), carve(n)
		strides = slices.Grow(strides[:0], n)[:n]
		m := 1
		for p := n - 1; p >= 0; p-- {
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
		if len(c.bvars) == 0 {
			c.bvars, c.bstrides = nil, nil
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
			k, ok := pair.find(x, y)
			if !ok {
				k = pair.add(x, y)
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
	s.planElimination(&pair)
	s.planDormant(&pair)
	s.planNaryPairs(&pair)
	// The binary functions' tables and residual supports, carved from
	// one slab each (a 40×40 grid has 9198 functions, two thirds dormant).
	nt, nr := 0, 0
	for k := range s.bins {
		nt += s.bins[k].dx * s.bins[k].dy
		nr += 2 * (s.bins[k].dx + s.bins[k].dy)
	}
	tabs := make([]float64, nt)
	s.res = make([]int32, nr)
	nr = 0
	for k := range s.bins {
		b := &s.bins[k]
		b.tab, tabs = tabs[:b.dx*b.dy:b.dx*b.dy], tabs[b.dx*b.dy:]
		b.resOff = nr
		nr += 2 * (b.dx + b.dy)
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
	for j := range s.narys {
		nfj := &s.narys[j]
		nfj.vd = nf
		nfj.voff = make([]int, len(nfj.vars))
		for p, d := range nfj.dims {
			nfj.voff[p] = nf - nfj.vd
			nf += d
		}
	}
	s.umaxOff = nf
	nf += s.n
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
	s.ladjLen = ni
	ni += s.n
	s.ladjOff = make([]int, s.n)
	for x := range s.n {
		s.ladjOff[x] = ni
		ni += len(s.adjB[x])
	}
	s.is = make([]int32, ni)
	s.makeSides()
	s.sup = make([]int, s.n)
	s.weight = make([]int64, len(s.bins)+len(s.narys))
	s.inAC = make([]bool, s.n)
	s.inDAC = make([]bool, s.n)
	s.dacBits = make([]uint64, (s.n+63)/64)
	s.dacHi, s.dacLo = -1, len(s.dacBits)
	s.byRank = make([]int32, s.n)
	for x, r := range s.rank {
		s.byRank[r] = int32(x)
	}
	s.inEAC = make([]bool, s.n)
	s.inNC = make([]bool, s.n)
	s.inGAC = make([]bool, len(s.narys))
	s.deeQ, s.elimQ = newVarQueue(s.n), newVarQueue(s.n)
	s.pbuf = make([]float64, maxD)
	s.ebuf = make([]float64, maxD)
	s.posbuf = make([]int32, 0, maxD)
	s.live = make([]int32, 0, maxD)
	s.full = make([]int, len(lp.Vars))
	s.best = make([]int, s.n)
	return s
}

// Checks returns the function entries read so far.
func (s *EDAC) Checks() int64 { return s.checks }

// Nodes returns the search nodes expanded so far, over all rows.
func (s *EDAC) Nodes() int64 { return s.nodes }

// hasStartAnswer reports whether the last row, started from the caller's
// bound start (startUB), found nothing cheaper: start's assignment is
// then an optimum, and the row's interior values are not.
func (s *EDAC) hasStartAnswer(start float64) bool {
	return !mva.IsHard(start) && !s.found
}

// errBudget stops a row whose search passed EDAC.budget checks.
var errBudget = errors.New("edac: past its budget of checks")

// errRootGap stops a row under EDAC.rootGap that has no assignment
// within the root bound's margin.
var errRootGap = errors.New("edac: no assignment within the root bound's margin")

// rootMark is the upper bound a row under rootGap searches below: the
// root bound's next whole number past it on whole-number costs (any
// assignment at the bound), else the bound and a rounding margin.
func (s *EDAC) rootMark() float64 {
	if s.integral {
		return math.Ceil(s.rootLB-1e-9) + 1
	}
	return s.rootLB + 1e-6*max(1, math.Abs(s.rootLB))
}

// errStale stops a row that searched EDAC.staleNodes nodes without
// improving its first upper bound.
var errStale = errors.New("edac: no better upper bound than the local search's within its nodes")

// Describe says what the search did, for a result's notes.
func (s *EDAC) Describe() string {
	if s.bad != nil {
		return s.bad.Error()
	}
	merged := 0
	if s.merge != nil {
		merged = s.merge.n
	}
	vac := ""
	if s.vac != nil {
		vac = fmt.Sprintf(" (VAC added %v in %d iterations)", s.vac.gain, s.vac.iters)
	}
	return fmt.Sprintf("edac: %d variables (%d more merged into them by functional substitution, %d eliminated before search), %d binary and %d n-ary functions, root bound %v%s, %d nodes, %d eliminations during search",
		s.n, merged, len(s.elim), len(s.bins), len(s.narys), s.rootLB, vac, s.nodes, s.dynElims)
}

// SolveRow finds the cheapest interior assignment for the boundary values.
// It returns Hard, with interior set to zeros, when none is feasible.
func (s *EDAC) SolveRow(ctx context.Context, boundary, interior []int) (float64, error) {
	fm := s.merge
	if fm == nil {
		return s.solveRow(ctx, boundary, interior)
	}
	if s.bad != nil {
		return 0, s.bad
	}
	if err := checkRowArgs(fm.orig, boundary, interior); err != nil {
		return 0, fmt.Errorf("edac: %w", err)
	}
	clear(interior)
	c, err := s.solveRow(ctx, boundary, fm.buf)
	if err != nil || mva.IsHard(c) {
		return c, err
	}
	fm.expand(interior)
	return c, nil
}

// solveRow is SolveRow on s.lp.
func (s *EDAC) solveRow(ctx context.Context, boundary, interior []int) (float64, error) {
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
	s.rowChecks, s.rowNodes, s.rowUBVer = s.checks, s.nodes, s.ubVer
	if !s.condition(boundary) {
		return mva.Hard, nil
	}
	s.ub, s.stop, s.err, s.found = mva.Hard, false, nil, false
	if s.hasStart {
		s.ub = s.startUB
	}
	s.lastConflict = -1
	if !s.noLocalSearch {
		s.localSearch()
	}
	s.reset()
	s.rooted = true
	// On two values each reversal goes alone, without the pairs of
	// passes that follow it elsewhere: before the eliminations they
	// raised c∅ by at most 0.05% on binary grids (60×60 grid: 3.7·10^6
	// checks and 320 nodes became 2.7·10^6 and 256; over eight grids of
	// 30×30 to 60×60 and three seeds a quarter fewer checks, though one
	// 60×60 grid took 16% more), and after them, with dead-end
	// elimination batched (simplify), they cost 3–12% more checks on
	// each of 15 grids of 10×10 to 60×60 and strips for a root bound at
	// most 0.01% higher.
	s.twoValues = s.flipForSearch()
	pairs := dacPasses
	if s.twoValues {
		pairs = 0
	}
	ok := true
	if !s.noNaryUnary {
		// The n-ary functions' costs move into their variables' unary
		// costs before the first propagation (projectToUnary).
		for j := range s.narys {
			if s.is[s.narys[j].cnt] > 1 && !s.projectToUnary(j) {
				ok = false
				break
			}
		}
	}
	ok = ok && s.propagate() && s.reverseDAC(pairs)
	if ok {
		// Elimination and dead-end elimination at the root leave
		// other functions for the DAC passes to move costs through:
		// one more round of them (40×40 binary grid: root bound
		// 106314, then 106537 after the eliminations, 106568 after
		// the passes; toulbar2's 106648, the optimum 106823).
		var changed bool
		changed, ok = s.simplify()
		if ok && changed {
			s.lbPair = 0
			ok = s.reverseDAC(pairs)
		}
	}
	if ok && s.twoValues {
		// The search's DAC order is the other one than the root's
		// last pass (see flipForSearch).
		s.dacRev = !s.dacRev
		s.pushAllDAC()
		ok = s.propagate()
	}
	if ok && s.useVAC {
		ok = s.enforceVAC()
	}
	s.rooted = false
	s.rootLB = s.fs[0]
	mark := mva.Hard // rootGap's bound, once the root stands
	if ok && s.rootGap {
		if mark = s.rootMark(); mark < s.ub {
			s.ub, s.ncAll = mark, true
			ok = s.propagate()
		}
	}
	if ok {
		s.search(ctx)
	}
	if s.stop {
		return 0, s.err
	}
	if s.rootGap && !mva.IsHard(mark) && !(s.ub < mark) {
		return 0, errRootGap
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
	// The dormant functions (k ≥ firstDormant) get no source and no
	// elimination: their tables stay zero from NewEDAC on, and the loops
	// here and in reset skip them (two thirds of a binary grid's
	// functions; their minima and wholeness checks were 1.7% of the 30×30
	// grid's instructions).
	live := s.bins[:s.firstDormant]
	for k := range live {
		clear(live[k].tab)
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
	for k := range live {
		s.c0 += shiftMin(live[k].tab)
		s.integral = s.integral && allWhole(live[k].tab)
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
	for x := range s.n {
		s.fs[s.umaxOff+x] = math.Inf(1) // unknown: the first scan sets it
	}
	for k := range s.firstDormant { // dormant tables are zero (condition)
		b := &s.bins[k]
		copy(s.fs[b.curOff:b.curOff+len(b.tab)], b.tab)
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
		if !s.goneBin[k] && !s.dormant[k] {
			s.is[s.bins[k].live] = 1
		}
	}
	for x := range s.n {
		// The live functions first, then the others, each in adjB's
		// order; the dormant ones, never live here, are adjB's tail.
		adj := s.adjB[x]
		d := len(adj)
		for d > 0 && adj[d-1] >= s.firstDormant {
			d--
		}
		l := s.is[s.ladjOff[x] : s.ladjOff[x]+len(adj)]
		n := 0
		for _, k := range adj[:d] {
			if s.is[s.bins[k].live] != 0 {
				l[n] = int32(k)
				n++
			}
		}
		s.is[s.ladjLen+x] = int32(n)
		for _, k := range adj[:d] {
			if s.is[s.bins[k].live] == 0 {
				l[n] = int32(k)
				n++
			}
		}
		for _, k := range adj[d:] {
			l[n] = int32(k)
			n++
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
		m, finite := math.Inf(1), 0
		for _, v := range nf.tab {
			m = min(m, v)
			if !math.IsInf(v, 1) {
				finite++
			}
		}
		nf.crisp = true
		for _, v := range nf.tab {
			if v != m && !math.IsInf(v, 1) {
				nf.crisp = false
				break
			}
		}
		nf.listFinite(finite)
		nf.res = nf.res[:0]
		nf.indexValues()
		nf.dirty = ^uint64(0)
		if nf.aoffs == nil {
			for _, v := range nf.vars {
				nf.aoffs = append(nf.aoffs, int32(s.aoff[v]))
			}
		}
		if mva.IsHard(m) {
			s.fs[0] = m
		} else {
			s.fs[nf.delta] = m
			s.fs[0] += m
		}
	}
	s.acQ, s.eacQ = s.acQ[:0], s.eacQ[:0]
	s.clearDAC(func(x int) { s.inDAC[x] = false })
	s.dacRev = true
	for x := range s.n {
		if s.gone[x] {
			continue
		}
		s.inAC[x], s.inEAC[x] = true, true
		s.acQ = append(s.acQ, x)
		s.pushDAC(x)
		s.eacQ = append(s.eacQ, x)
	}
	s.ncAll = true
	s.deeQ.reset()
	s.elimQ.reset()
	for x := range s.n {
		if !s.gone[x] {
			s.deeQ.push(x)
			s.elimQ.push(x)
		}
	}
}

// reverseDAC reverses the DAC order at the root and propagates again:
// the first pass gathered costs towards the low ranks, the second moves
// them on towards the high ranks and raises c∅ further (on a 2×2 grid from
// 85 to the optimum 108), as toulbar2's preprocessing does when it sets
// its DAC order. It then goes on alternating the order, a pair of passes
// at a time, while a pair raises c∅ (at most pairs pairs), and the
// search keeps the reversed order. Measured (one core, EDAC with dead-end
// elimination, one pass against the pairs): a 40×40 binary grid's root
// bound 106360 against 106518 (toulbar2's 106648, the optimum 106823),
// 2772 nodes and 2.9 s against 251 and 0.31 s; a 150-node scale-free graph
// over five values 1087 nodes, 0.25 s against 655, 0.13 s; a 12×12 grid
// over three values 0.41 s against 0.17 s; frequency assignment of 80
// links 0.28 s against 0.23 s. Leaving the search the other order instead
// made the scale-free graph slower (0.93 s): the order the search keeps
// matters as much as the bound (on two values the other order is the
// better one: flipForSearch).
func (s *EDAC) reverseDAC(pairs int) bool {
	for pass := range 1 + 2*pairs {
		if pass > 0 && pass%2 == 1 {
			// A new pair: stop when the last one raised nothing.
			if pass > 1 && !(s.fs[0] > s.lbPair) {
				break
			}
			s.lbPair = s.fs[0]
		}
		s.dacRev = !s.dacRev
		s.pushAllDAC()
		if !s.propagate() {
			return false
		}
	}
	return true
}

// pushAllDAC queues every variable left for DAC, for a pass in the other
// order. It queues them for EAC too only when the last propagation
// dropped its EAC queue (past maxEACRounds): otherwise that propagation
// ended with every variable's existential support checked since its last
// change, and EAC does not depend on the DAC order, so each check would
// confirm a support and change nothing (measured: no variable failed it
// at these points on the binary grids 10×10 to 60×60, the scale-free,
// frequency-assignment and random graphs, 8 queens and DBN_15.uai; the
// same nodes, bounds and eliminations, 1–4% fewer checks, 20×20 grid's
// solve 15.15M → 14.89M instructions, 40×40 80.3M → 78.9M).
func (s *EDAC) pushAllDAC() {
	for x := range s.n {
		if !s.gone[x] {
			s.pushDAC(x)
			if s.eacDropped {
				s.pushEAC(x)
			}
		}
	}
}

// flipForSearch reports whether the search runs in the DAC order opposite
// to the root's last pass: on problems whose variables all have at most
// two values, where the costs the last pass gathered are then moved again
// at the first nodes (measured, nodes keeping the order against flipping
// it: binary grids 60×60 935 against 320, toulbar2 284; 40×40 55 against
// 37; 20×20 and 30×30 7 and 13 against 6 and 15). On larger domains it
// is no rule: a 150-node scale-free graph over five values takes 186
// nodes against 667, frequency assignment of 80 links 103 against 126, a
// 12×12 grid over three values 569 against 641, while a 60-node random
// graph over five takes 3777 against 3244.
func (s *EDAC) flipForSearch() bool {
	for x, d := range s.dom {
		if d > 2 && !s.gone[x] {
			return false
		}
	}
	return true
}

// dacPasses bounds the pairs of DAC passes reverseDAC adds at the root.
const dacPasses = 8

// tolerance is how far past the upper bound a lower bound must be to
// prune: 0 on whole-number costs, a rounding margin otherwise.
func (s *EDAC) threshold() float64 {
	if s.integral || mva.IsHard(s.ub) {
		return s.ub
	}
	return s.ub + 1e-9*max(1, math.Abs(s.ub))
}

// liveDegree returns the weighted degree of x: the weights (plus one) of
// its functions that still link it to an unassigned variable.
func (s *EDAC) liveDegree(x int) int64 {
	var w int64
	for _, k := range s.ladj(x) {
		w += 1 + s.weight[k]
	}
	for _, j := range s.adjN[x] {
		if s.is[s.narys[j].cnt] > 1 {
			w += 1 + s.weight[len(s.bins)+j]
		}
	}
	return w
}

// scoreTie is the relative difference under which two variables' dom/wdeg
// scores tie in search's choice; the tie goes to the larger maxUnary.
const scoreTie = 1e-6

// maxUnary returns the largest unary cost of x's live values.
func (s *EDAC) maxUnary(x int) float64 {
	m := 0.0
	o := s.uoff[x]
	for c := range s.dom[x] {
		if s.alive(x, c) && s.fs[o+c] > m {
			m = s.fs[o+c]
		}
	}
	return m
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
		if s.staleNodes > 0 && s.ubVer == s.rowUBVer && s.nodes-s.rowNodes >= s.staleNodes {
			s.stop, s.err = true, errStale
			return
		}
	}
	if s.budget > 0 && s.checks-s.rowChecks > s.budget {
		s.stop, s.err = true, errBudget
		return
	}
	fm, im := len(s.ft), len(s.it)
	defer s.undo(fm, im)
	if _, ok := s.simplify(); !ok {
		return
	}
	// Variables without live functions take their cheapest value; then
	// the variable of least domain over weighted degree is branched on.
	x, bestScore, worst := -1, 0.0, 0.0
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
		if v == s.lastConflict && !s.noLastConflict {
			x, bestScore = v, math.Inf(-1)
			continue
		}
		score := float64(s.size(v)) / float64(w)
		switch {
		case x < 0 || score < bestScore*(1-scoreTie):
			x, bestScore, worst = v, score, s.maxUnary(v)
		case score < bestScore*(1+scoreTie):
			if m := s.maxUnary(v); m > worst {
				x, bestScore, worst = v, score, m
			}
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
	dm, em := s.deeQ.save(), s.elimQ.save()
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
		if x == s.lastConflict {
			s.lastConflict = -1
		}
		s.search(ctx)
	} else {
		s.lastConflict = x
	}
	s.undo(fm2, im2)
	s.deeQ.restore(dm)
	s.elimQ.restore(em)
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

// simplify eliminates the variables of small degree and removes the
// dead ends (dee), propagating after each change, until neither changes
// anything; it reports whether anything changed, and false when the node
// is pruned. Where every variable has at most two values (twoValues),
// dead-end elimination follows the eliminations before they are
// propagated, not only once they change nothing: the 60×60 binary grid's
// root bound 240187 → 240258 (toulbar2's 240196), 256 → 111 nodes,
// 2.7·10^6 → 1.6·10^6 checks; two more 60×60 grids 1076 → 440 and 1419
// → 792 nodes, 40×40 grids 37 → 36, 69 → 52, 104 → 80. On larger
// domains it is no rule (a 60-node random graph over five values 3777 →
// 4680 nodes), so there the eliminations are propagated first.
func (s *EDAC) simplify() (any, ok bool) {
	for {
		changed, ok := s.eliminateSmall()
		if !ok {
			s.fail()
			return true, false
		}
		if !s.noDEE && (!changed || s.twoValues) {
			changed = s.dee() || changed
		}
		if changed && !s.propagate() {
			return true, false
		}
		if !changed {
			return any, true
		}
		any = true
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
		s.ub, s.found = c, true
		copy(s.best, s.full[nb:])
		s.ubVer++
	}
}

// greedyStart sets cur to the greedy assignment in variable order: each
// value chosen by the unary and binary costs towards the variables
// already set. It returns the marks of the variables it set (those not
// eliminated).
func (s *EDAC) greedyStart(cur []int) []bool {
	set := make([]bool, s.n)
	for x := range s.n {
		if s.gone[x] {
			continue
		}
		best, bc := 0, math.Inf(1)
		for a := range s.dom[x] {
			c := s.u0[s.uoff[x]+a]
			for _, k := range s.costedB(x) {
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
	return set
}

// localSearch sets the first upper bound: a greedy assignment in variable
// order (each value chosen by the unary and binary costs towards the
// variables already set), improved by sweeps that move one variable at a
// time to its best value given the others, until none moves.
func (s *EDAC) localSearch() {
	cur := s.full[s.lp.NB:]
	set := s.greedyStart(cur)
	// dirty marks the variables whose neighbours moved since they were
	// last weighed (all at first): a variable whose neighbourhood is as
	// it was keeps its value (a move needs a strictly lower cost), so the
	// sweeps skip it and make the same moves as sweeps over every
	// variable, which read every function twice a sweep (on a 20×20 grid
	// most of them for a variable that stayed).
	dirty := set
	for x := range dirty {
		dirty[x] = true
	}
	for range 8 {
		moved := false
		for x := range s.n {
			if s.gone[x] || !dirty[x] {
				continue
			}
			dirty[x] = false
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
			if best == old {
				continue
			}
			cur[x] = best
			moved = true
			s.dirtyNeighbours(x, dirty)
		}
		if !moved {
			break
		}
	}
	s.restore(cur)
	c := s.lp.Eval(s.full)
	s.checks += int64(len(s.lp.Funcs))
	if c < s.ub {
		s.ub, s.found = c, true
		copy(s.best, cur)
	}
}

// dirtyNeighbours marks the variables that share a function with x,
// whose costs localCost reads.
func (s *EDAC) dirtyNeighbours(x int, dirty []bool) {
	for _, k := range s.costedB(x) {
		b := &s.bins[k]
		dirty[b.x+b.y-x] = true
	}
	for _, j := range s.adjN[x] {
		for _, v := range s.narys[j].vars {
			dirty[v] = true
		}
	}
}

// localCost is the cost of the functions holding x with x = a and the
// other variables as in s.full.
func (s *EDAC) localCost(x, a int) float64 {
	cur := s.full[s.lp.NB:]
	c := s.u0[s.uoff[x]+a]
	adj := s.costedB(x)
	for _, k := range adj {
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
	s.checks += int64(len(adj) + len(s.adjN[x]))
	return c
}

// costedB returns x's binary functions but the dormant ones, which hold no
// cost before the search wakes them: adjB[x] lists functions in the order
// they were made, the dormant last (on a 40×40 grid two thirds of them,
// which the local search read for nothing: a fifth of the row's checks).
func (s *EDAC) costedB(x int) []int {
	adj := s.adjB[x]
	n := len(adj)
	for n > 0 && adj[n-1] >= s.firstDormant {
		n--
	}
	return adj[:n]
}
