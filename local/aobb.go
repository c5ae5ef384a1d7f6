package local

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
)

// DefaultHeuristicEntries caps the mini-bucket tables of AOBB when
// AOBBOptions.HeuristicEntries is zero, whatever the memory budget: 2^24
// entries (128 MiB) compute in well under a second, and a row of a lazy MVA
// table recomputes the messages its boundary values reach.
const DefaultHeuristicEntries = 1 << 24

var firstHeuristicEntries = 1 << 16

// AOBBOptions tunes AOBB.
type AOBBOptions struct {
	// Memory bounds, in bytes, the mini-bucket tables and the caches
	// together; 0 means DefaultMemory(). Past it the search degrades,
	// never fails: a smaller i-bound, then fewer cached variables.
	Memory int64
	// HeuristicEntries caps the mini-bucket tables' entries in all; 0
	// means DefaultHeuristicEntries.
	HeuristicEntries int
	// IBound caps the mini-bucket i-bound (variables per mini-bucket); 0
	// takes the largest that fits the budget.
	IBound int
	// Workers is the parallelism of the mini-bucket joins; 0 means
	// runtime.GOMAXPROCS(0).
	Workers int
	// ShiftRows reparameterises the conditioned functions at every row
	// whose boundary values changed (see shift), as a problem without a
	// boundary always is: tighter bounds, for a full recomputation of
	// the heuristic; cached values are kept in the functions' own costs
	// and reused where the row changed no function below them
	// (shiftCorrections). For callers that ask few rows, each a hard
	// search (best responses).
	ShiftRows bool
	// order, when not nil, is the plain min-fill order of the interior
	// with the boundary fixed, which auto's sizing of bucket elimination
	// found whole (beCostWithin): the first of bestPseudoTree's tries,
	// not searched again.
	order []int
}

// AOBB is depth-first AND/OR branch and bound with context caching
// (AOBB-C, Marinescu and Dechter 2009) and static mini-bucket heuristics,
// over the interior variables with the boundary fixed. It is exact, and
// its memory is what the budget allows: where bucket elimination's tables
// explode it still runs, with a weaker heuristic and fewer caches.
//
// Search space. A pseudo-tree of the interior (newPseudoTree, from the
// min-fill order of a row) makes the subproblems below the children of a
// node independent: an AND node (v = a) sums its children's values instead
// of searching their product. The value of the subproblem below v depends
// on the path only through v's context; where the context is smaller than
// the path and its table fits the budget, exact values are cached under
// the context's assignment with the subproblem's best assignment.
//
// Bounds. The heuristic of node (v = a) sums the mini-bucket messages sent
// from below v into v's bucket (at a) and above it, a lower bound of the
// subproblem's cost (miniBuckets). A node is pruned when that bound, plus
// the exact costs and bounds of the other pending subproblems of the
// ancestors' AND nodes, reaches the incumbent, which starts as the best of
// a greedy descent along the heuristic (repaired by a dive where it is
// infeasible), improved by one-variable local search, and the previous
// row's assignment (initialBound). Where that incumbent is far above the
// root's bound, the search first runs below guessed bounds (searchRoot).
//
// Value ordering is by the child's bound, cheapest first; once one value's
// bound reaches the incumbent, the rest are pruned together.
//
// A search of a subproblem that fails against its bound leaves a lower
// bound of the subproblem's value in its context, cached beside the exact
// values (cacheBound): a later visit of the context starts from it where
// it is above the heuristic's.
//
// MVA rows. Functions are conditioned on each row's boundary values; the
// mini-bucket messages that read a changed function are recomputed (as
// BE.runChanged does), and a cached variable keeps its entries across
// rows unless a boundary variable of a function below it changed (or a
// caller edited a function's costs in place, which clears everything).
// With ShiftRows every changed row is shifted afresh and the messages
// are all recomputed, but the cached values, kept in the functions' own
// costs, still serve the subproblems below no changed function
// (shiftCorrections), and the previous row's answer, re-evaluated, is the
// first incumbent.
//
// Checks counts the function and message entries read.
type AOBB struct {
	lp   *mva.LocalProblem
	opts AOBBOptions
	bad  error

	pt *pseudoTree
	// alts returns the other trees of a one-row race (see race), built
	// only when the first tree's solo round did not end; nil: no race.
	alts func() []*pseudoTree
	// raceSolo and raceFirst are race's raceSoloChecks and
	// raceFirstChecks (tests make them small).
	raceSolo, raceFirst int64
	// raceTree is the index of the tree a race kept (0: the first, or
	// no race), raceTrees the trees it had.
	raceTree, raceTrees int

	cond   []condFunc  // functions with interior variables
	consts []constFunc // functions over boundary variables only
	mb     *miniBuckets
	// deep[i] is the deepest variable of cond[i] in the pseudo-tree,
	// whose bucket holds it.
	deep []int

	// Cached values kept across rows (ShiftRows with a boundary, see
	// shiftCorrections): acc[i][p] is what this row's shift added to
	// cond[i] per value of its p-th variable (its finite moves); dirty
	// marks, per variable, a function at or below it whose conditioning
	// changed (its cached values are stale).
	acc      [][][]float64
	dirty    []bool
	keptRows int // rows that kept cached values across their shifts

	// Per local variable: the original functions in its bucket, the
	// messages into its bucket, and the messages from below it to above.
	orig, aug [][]aobbRef
	inter     [][]interRef
	// augBase[v][k] is aug[v][k]'s entry at v's first value, as v's
	// last expansion found it (see interRef).
	augBase [][]int
	// nbr[v]: the functions holding v, for local search.
	nbr   [][]aobbRef
	cache []aobbCache
	pre   []int // interior variables in preorder

	// Search scratch per local variable (index len(Vars) is the virtual
	// root whose children are the pseudo-tree's roots).
	w, h   [][]float64
	interV []float64
	ord    [][]int
	kidLB  [][]float64
	kidHit [][]bool
	buf    [][]int

	full    []int // scratch: a row's complete assignment
	val     []int // current path and, after a solved subproblem, its best
	inc     []int // incumbent
	prev    []int // last row's answer
	hasPrev bool

	// Row memo.
	rowsSeen bool
	lastB    []int
	condKey  []int
	changed  []bool
	snap     [][]float64

	// The heuristic grows by escalation: mbLimit is the entries it may
	// use now, heurMax at most; mbFinal says no larger i-bound is left,
	// mbFresh that the messages are not computed yet.
	mbLimit, heurMax       int
	mbFinal, mbFresh       bool
	mbReads                int64
	limit                  int64 // checks at which the search escalates
	searchFloor            int64 // the least checks a search gets before that
	searchShare            int64 // and the multiple of the heuristic's reads
	escalations            int
	heurBytes              int64
	cacheUsed, cacheBudget int64
	cachedVars             int

	// deepShifted is set once this row's shift has been continued to
	// convergence (deepShift); deepShifts counts those, for notes.
	deepShifted bool
	deepShifts  int

	// dv is the dive's state (see dive), made at the first; dives and
	// guesses count the dives and the searches below guessed bounds
	// (searchRoot).
	dv             *diver
	dives, guesses int
	// boundHits counts the children whose bound a cached lower bound
	// raised above the heuristic's (cacheBound).
	boundHits int64

	// fins is shift's lists of the conditioned functions' finite
	// entries (see finite), kept across rows.
	fins []finiteEntries

	// below is the bound of SolveRowBelow (+Inf for SolveRow), missed
	// that its last search found nothing under it.
	below  float64
	missed bool
	// budget is SolveRowWithin's checks (0: none), spent at checks
	// past budgetEnd.
	budget, budgetEnd int64

	ctx    context.Context
	stop   bool
	err    error
	nodes  int64
	checks int64
}

// aobbRef reads a factor in a bucket: terms are its variables other than
// the bucket's (all assigned above it) with their strides, vstride the
// stride of the bucket's variable (0 when the factor does not hold it).
type aobbRef struct {
	f       *Factor
	terms   []indexTerm
	vstride int
}

// interRef is a mini-bucket message passing over a variable: sent from
// below it into the bucket of an ancestor, t (-1: a constant), where it
// is aug[t][k]. Its value is fixed once t has its value, so expand reads
// it at the entry t's own expansion found (augBase[t][k], plus t's value
// times vs) instead of summing over the message's scope again at every
// variable between: on 75-16-5.uai (i-bound 10, pseudo-tree depth 75)
// those sums were an eighth of the whole process's instructions (hearth
// solve, 877 → 769 million).
type interRef struct {
	f    *Factor
	t, k int
	vs   int
}

// indexTerm is a variable and its stride in a table's index. Pairs in one
// slice rather than two slices: the index sums of the search's every
// expansion (aobbRef.base, cacheKey) were a sixth of an SHDS response's
// instructions, their second slice's bounds checks a good part of it.
type indexTerm struct {
	v, stride int
}

func (r *aobbRef) base(val []int) int {
	return indexOf(r.terms, val)
}

// indexOf returns the sum of val[t.v]·t.stride over terms.
func indexOf(terms []indexTerm, val []int) int {
	idx := 0
	for _, t := range terms {
		idx += val[t.v] * t.stride
	}
	return idx
}

// newRef returns the reference to f for variable v (-1: none).
func newRef(f *Factor, v int) aobbRef {
	r := aobbRef{f: f, terms: make([]indexTerm, 0, len(f.Vars))}
	stride := 1
	for p := len(f.Vars) - 1; p >= 0; p-- {
		if f.Vars[p] == v {
			r.vstride = stride
		} else {
			r.terms = append(r.terms, indexTerm{f.Vars[p], stride})
		}
		stride *= f.Dims[p]
	}
	return r
}

// aobbCache is one variable's cache: an entry per assignment of its
// context met, valid when its generation is the variable's. A context of
// a few assignments gets a dense table, allocated at the first entry;
// a larger one starts as a map from the context's index to a slot of the
// same slabs, and becomes a dense table (densify) once it holds values of a
// denseFill-th of the contexts, if the table fits denseCacheBytes and the
// budget. A search that meets few contexts then allocates no table for
// the others: an SHDS home's response (testdata/shds_dm_7_1_5_home1.wcsp)
// met 8665 OR nodes over dense tables of 8.8 MiB, whose allocation and
// first writes were two thirds of its search's time. ctxKeys are the
// context's variables with their strides in the cache's index (cacheKey).
type aobbCache struct {
	on      bool
	ctx     []int
	ctxKeys []indexTerm
	size    int // context assignments
	sub     int // subtree variables stored per entry
	dense   bool
	grow    bool // sparse now, dense once it fills (see densify)
	// slots maps a sparse cache's context index to its entry: k >= 0 is
	// a slot of vals, gens and sols, ^k (negative) a lower bound in lbs
	// (see cacheBound). A slot carries room for the subproblem's
	// assignment, which a bound does not need (the subtrees of an SHDS
	// response are up to 130 variables), so a context that only ever
	// got a bound has it in lbs; one map for both makes a miss one
	// lookup, not two (75-16-5.uai: 210k of 345k lookups miss, 106k
	// find a bound).
	slots map[int]int32
	vals  []float64
	gens  []uint32
	sols  []uint16
	gen   uint32
	lbs   []cachedLB
	// corr holds, per context variable k (from coff[k]) and value, the
	// shifts of the subproblem's functions at that variable: a value
	// cached in the functions' own costs plus corr at the context's
	// values is the value in this row's shifted costs (ShiftRows).
	corr []float64
	coff []int
	// bvars: the boundary variables of the functions below the variable;
	// when one changes between rows, the entries are stale.
	bvars []int
}

// cachedLB is a lower bound in a sparse cache, valid in its generation.
type cachedLB struct {
	lb  float64
	gen uint32
}

// boundContexts is the most contexts of a cache given lower bounds
// (cacheBound): a bound serves only a later visit of its context, and a
// cache over more contexts than this is rarely visited twice in one. On
// the SHDS responses (docs/bench/toulbar2-shds-responses.md) the caches
// of 10^6 and 3·10^6 contexts took 8 000 of home 5's 11 000 bounds, none
// looked up again, and their maps' memory cost more than the bounds saved
// (2^19: 13 351 OR nodes, 2^17: 14 001, 2^15: 18 685, none: 22 208).
const boundContexts = 1 << 17

// boundEntryBytes estimates a sparse cache's bytes per lower bound.
const boundEntryBytes = 40

// denseCache reports whether a cache of n contexts over a subproblem of
// sub variables fits a dense table of denseCacheBytes. It divides rather
// than multiplies: n·(12+2·sub) overflows for contexts of 2^58
// assignments and more, which made a dense table of a wrapped size (a
// panic on frequency assignment, 24 values a variable).
func denseCache(n, sub int) bool {
	return int64(n) <= denseCacheBytes/(12+2*int64(sub))
}

// denseCacheBytes is the largest cache given a dense table; larger ones
// hold only the contexts the search meets.
const denseCacheBytes = 1 << 20

// denseStartBytes is the largest dense table allocated at a cache's first
// entry; denseFill the share of its contexts (one in denseFill) a larger
// cache's map holds when it becomes dense.
const (
	denseStartBytes = 1 << 12
	denseFill       = 8
)

// sparseEntryBytes estimates a map slot's overhead beyond its entry.
const sparseEntryBytes = 48

// NewAOBB prepares the search for lp: the pseudo-tree, the mini-bucket
// plan with the largest i-bound that fits half the memory budget (and
// opts.HeuristicEntries), and the caches that fit the rest.
func NewAOBB(lp *mva.LocalProblem, opts AOBBOptions) *AOBB {
	return newAOBB(lp, opts, nil)
}

// treeFunc returns the pseudo-trees AOBB may search for a problem's
// conditioned scopes, the first searched first, the others (if any) in a
// one-row race.
type treeFunc func(nv, nb int, doms []int, scopes [][]int, interior []int) []*pseudoTree

// newAOBB is NewAOBB with the pseudo-trees from tree (nil:
// bestPseudoTree, then raceTrees for a race).
func newAOBB(lp *mva.LocalProblem, opts AOBBOptions, tree treeFunc) *AOBB {
	if opts.Memory <= 0 {
		opts.Memory = DefaultMemory()
	}
	if opts.HeuristicEntries <= 0 {
		opts.HeuristicEntries = DefaultHeuristicEntries
	}
	s := &AOBB{lp: lp, opts: opts, searchFloor: 1 << 22, searchShare: 4, below: math.Inf(1), raceSolo: raceSoloChecks, raceFirst: raceFirstChecks}
	for k, d := range lp.Domains {
		if d < 1 {
			s.bad = fmt.Errorf("aobb: variable %s has an empty domain", lp.Problem.Variables[lp.Vars[k]].Name)
			return s
		}
	}
	nv := len(lp.Vars)
	interior := make([]int, lp.NumInterior())
	for k := range interior {
		interior[k] = lp.NB + k
	}

	// Condition every function on the boundary, as BE's rows do.
	scopes := make([][]int, 0, len(lp.Funcs))
	s.cond = make([]condFunc, 0, len(lp.Funcs))
	for _, f := range lp.Funcs {
		c := condFunc{f: &Factor{}, costs: f.Costs}
		stride := 1
		strides := make([]int, len(f.Scope))
		for p := len(f.Scope) - 1; p >= 0; p-- {
			strides[p] = stride
			stride *= lp.Domains[f.Scope[p]]
		}
		for p, v := range f.Scope {
			if v < lp.NB {
				c.bvars = append(c.bvars, v)
				c.bstrides = append(c.bstrides, strides[p])
			} else {
				c.f.Vars = append(c.f.Vars, v)
				c.f.Dims = append(c.f.Dims, lp.Domains[v])
				c.istrides = append(c.istrides, strides[p])
			}
		}
		if len(c.f.Vars) == 0 {
			s.consts = append(s.consts, constFunc{scope: f.Scope, costs: f.Costs})
			continue
		}
		c.static = len(c.bvars) == 0
		if c.static && lp.NB > 0 && !opts.ShiftRows {
			c.f.Costs = f.Costs
		} else { // conditioned, or shifted (see shift): a copy
			n := 1
			for _, d := range c.f.Dims {
				n *= d
			}
			c.f.Costs = make([]float64, n)
		}
		scopes = append(scopes, c.f.Vars)
		s.cond = append(s.cond, c)
	}
	if tree == nil && lp.NB > 0 && opts.ShiftRows {
		tree = ownTrees
	}
	if tree == nil {
		s.pt = bestPseudoTreeFrom(nv, lp.NB, scopes, interior, opts.order)
		if lp.NB == 0 {
			first := s.pt
			s.alts = func() []*pseudoTree { return raceTrees(nv, lp.Domains, scopes, interior, first) }
		}
	} else {
		trees := tree(nv, lp.NB, lp.Domains, scopes, interior)
		s.pt = trees[0]
		if (lp.NB == 0 || opts.ShiftRows) && len(trees) > 1 {
			s.alts = func() []*pseudoTree { return trees[1:] }
		}
	}
	if s.alts != nil {
		// One row: the trees may race (see race), the first in half
		// the budget.
		s.opts.Memory /= 2
		opts = s.opts
	}
	pt := s.pt

	s.orig = make([][]aobbRef, nv)
	s.nbr = make([][]aobbRef, nv)
	s.deep = make([]int, len(s.cond))
	for i := range s.cond {
		f := s.cond[i].f
		v := pt.deepest(f.Vars, lp.NB)
		s.deep[i] = v
		s.orig[v] = append(s.orig[v], newRef(f, v))
		for _, u := range f.Vars {
			s.nbr[u] = append(s.nbr[u], newRef(f, u))
		}
	}
	// Heuristic: at most half the budget, starting small (escalate).
	s.heurMax = int(min(int64(math.MaxInt32), opts.Memory/2/8))
	if opts.HeuristicEntries > 0 {
		s.heurMax = min(s.heurMax, opts.HeuristicEntries)
	}
	if err := s.setHeuristic(min(firstHeuristicEntries, s.heurMax)); err != nil {
		s.bad = err
		return s
	}
	for _, r := range pt.roots {
		s.pre = append(s.pre, pt.subtree[r]...)
	}

	s.planCaches()

	s.w = make([][]float64, nv)
	s.h = make([][]float64, nv)
	s.ord = make([][]int, nv)
	s.interV = make([]float64, nv)
	s.kidLB = make([][]float64, nv+1)
	s.kidHit = make([][]bool, nv+1)
	s.buf = make([][]int, nv)
	for _, v := range interior {
		d := lp.Domains[v]
		s.w[v] = make([]float64, d)
		s.h[v] = make([]float64, d)
		s.ord[v] = make([]int, d)
		s.kidLB[v] = make([]float64, len(pt.children[v]))
		s.kidHit[v] = make([]bool, len(pt.children[v]))
		s.buf[v] = make([]int, len(pt.subtree[v]))
	}
	s.kidLB[nv] = make([]float64, len(pt.roots))
	s.kidHit[nv] = make([]bool, len(pt.roots))
	s.val = make([]int, nv)
	s.full = make([]int, nv)
	s.inc = make([]int, nv)
	s.prev = make([]int, nv)
	s.lastB = make([]int, lp.NB)
	s.condKey = make([]int, len(s.cond))
	s.snap = make([][]float64, len(s.cond))
	return s
}

// ownTrees is the treeFunc of a problem whose rows are reparameterised
// (ShiftRows, a best response): each row is searched afresh, as a
// one-row problem is, and gets the trees of its interior as a problem of
// its own, variables numbered from 0 — those of the same problem written
// to a file (TestExportSHDSResponses) and solved there, independent of
// how many boundary variables the caller has. The trees of one width
// differ by orders of magnitude (see race) and min-fill's ties are broken
// by relabellings seeded with the number of variables: with the boundary
// counted, dm_7_1_5's home 6 response got a tree past 2^28 checks, where
// its exported file's takes 10^8. The first tree is bestPseudoTree's,
// the others raceTrees', built when a race needs them.
func ownTrees(nv, nb int, doms []int, scopes [][]int, interior []int) []*pseudoTree {
	n := nv - nb
	own := make([][]int, len(scopes))
	for i, sc := range scopes {
		own[i] = make([]int, len(sc))
		for k, v := range sc {
			own[i][k] = v - nb
		}
	}
	ownInterior := make([]int, len(interior))
	for k, v := range interior {
		ownInterior[k] = v - nb
	}
	lift := func(pt *pseudoTree) *pseudoTree {
		order := make([]int, len(pt.order))
		for k, v := range pt.order {
			order[k] = v + nb
		}
		return newPseudoTree(nv, nb, scopes, order)
	}
	first := bestPseudoTree(n, 0, own, ownInterior)
	trees := []*pseudoTree{lift(first)}
	for _, pt := range raceTrees(n, doms[nb:], own, ownInterior, first) {
		trees = append(trees, lift(pt))
	}
	return trees
}

// firstHeuristicEntries is the size of the first mini-bucket heuristic;
// each escalation multiplies it by heuristicGrowth.
const (
	heuristicGrowth = 8
)

// errEscalate stops a search whose heuristic is too weak for it.
var errEscalate = errors.New("aobb: escalate the heuristic")

// setHeuristic plans the mini-bucket heuristic with the largest i-bound
// whose messages fit limit entries, and the buckets' references to them.
func (s *AOBB) setHeuristic(limit int) error {
	lp, pt := s.lp, s.pt
	nv := len(lp.Vars)
	inputs := make([]*Factor, len(s.cond))
	for i := range s.cond {
		inputs[i] = s.cond[i].f
	}
	mb, err := newMiniBuckets(pt, lp.Domains, inputs, max(limit, 0), s.opts.IBound)
	if err != nil {
		return fmt.Errorf("aobb: %w", err)
	}
	s.mb, s.mbLimit, s.mbFresh = mb, limit, true
	s.heurBytes = int64(mb.entries) * 8
	s.mbFinal = limit >= s.heurMax || mb.exact
	s.aug = make([][]aobbRef, nv)
	s.inter = make([][]interRef, nv)
	s.augBase = make([][]int, nv)
	for st := range mb.steps {
		step := &mb.steps[st]
		f := mb.factors[mb.nIn+st]
		ir := interRef{f: f, t: step.target}
		if t := step.target; t >= 0 {
			r := newRef(f, t)
			ir.k, ir.vs = len(s.aug[t]), r.vstride
			s.aug[t] = append(s.aug[t], r)
			s.augBase[t] = append(s.augBase[t], 0)
		}
		for y := pt.parent[step.v]; y >= 0 && y != step.target; y = pt.parent[y] {
			s.inter[y] = append(s.inter[y], ir)
		}
	}
	s.changed = make([]bool, len(mb.factors))
	return nil
}

// escalate replaces the heuristic by the next larger i-bound that fits the
// budget, or marks the current one final when there is none.
func (s *AOBB) escalate() error {
	s.escalations++
	for limit := s.mbLimit; limit < s.heurMax; {
		limit = int(min(int64(limit)*heuristicGrowth, int64(s.heurMax)))
		mb, err := newMiniBuckets(s.pt, s.lp.Domains, s.mb.factors[:s.mb.nIn], limit, s.opts.IBound)
		if err != nil {
			return fmt.Errorf("aobb: %w", err)
		}
		if mb.ibound > s.mb.ibound {
			return s.setHeuristic(limit)
		}
	}
	s.mbFinal = true
	return nil
}

// planCaches chooses the cached variables: those with children whose
// context is smaller than the path to them (a repeated context; with a
// boundary, rows repeat it too). Entries are added while they fit what
// the heuristic leaves of the budget (cachePut), then no more.
func (s *AOBB) planCaches() {
	lp, pt := s.lp, s.pt
	s.cache = make([]aobbCache, len(lp.Vars))
	s.cacheBudget = s.opts.Memory - int64(s.heurMax)*8
	if slices.Max(append([]int{1}, lp.Domains...)) > math.MaxUint16+1 {
		return // values do not fit the stored assignments
	}
	// The boundary variables below each variable, leaves first.
	bsets := make([][]int, len(lp.Vars))
	for i := range s.cond {
		c := &s.cond[i]
		d := pt.deepest(c.f.Vars, lp.NB)
		bsets[d] = append(bsets[d], c.bvars...)
	}
	for _, v := range pt.order {
		for _, ch := range pt.children[v] {
			bsets[v] = append(bsets[v], bsets[ch]...)
		}
		slices.Sort(bsets[v])
		bsets[v] = slices.Compact(bsets[v])
	}
	for _, v := range pt.order {
		if len(pt.children[v]) == 0 || (lp.NB == 0 && len(pt.ctx[v]) >= pt.depth[v]) {
			continue
		}
		size, ok := 1, true
		for _, u := range pt.ctx[v] {
			if size > (1<<62)/lp.Domains[u] {
				ok = false // the index would overflow
				break
			}
			size *= lp.Domains[u]
		}
		if !ok {
			continue
		}
		ca := &s.cache[v]
		ca.on, ca.ctx, ca.sub, ca.gen, ca.bvars = true, pt.ctx[v], len(pt.subtree[v]), 1, bsets[v]
		ca.ctxKeys = make([]indexTerm, len(ca.ctx))
		n := 1
		for k := len(ca.ctx) - 1; k >= 0; k-- {
			ca.ctxKeys[k] = indexTerm{ca.ctx[k], n}
			n *= lp.Domains[ca.ctx[k]]
		}
		ca.size = n
		if s.keeps() {
			ca.coff = make([]int, len(ca.ctx))
			off := 0
			for k, u := range ca.ctx {
				ca.coff[k] = off
				off += lp.Domains[u]
			}
			ca.corr = make([]float64, off)
		}
		ca.dense = denseCache(n, ca.sub) && int64(n)*(12+2*int64(ca.sub)) <= denseStartBytes
		if !ca.dense {
			ca.grow = denseCache(n, ca.sub)
			ca.slots = map[int]int32{}
		}
		s.cachedVars++
	}
}

// IBound returns the mini-bucket i-bound in use (0: no heuristic fits).
func (s *AOBB) IBound() int {
	if s.mb == nil {
		return 0
	}
	return s.mb.ibound
}

// Width returns the induced width of the pseudo-tree's elimination order.
func (s *AOBB) Width() int {
	if s.pt == nil {
		return 0
	}
	return s.pt.width
}

// Nodes returns the OR nodes expanded so far, over all rows.
func (s *AOBB) Nodes() int64 { return s.nodes }

// Checks returns the function and message entries read so far.
func (s *AOBB) Checks() int64 { return s.checks }

// MemoryPlanned returns the bytes of the mini-bucket tables and of the
// caches at their fullest, within AOBBOptions.Memory.
func (s *AOBB) MemoryPlanned() int64 { return s.heurBytes + s.cacheBudget }

// MemoryUsed returns the bytes of the mini-bucket tables and of the cache
// entries held now.
func (s *AOBB) MemoryUsed() int64 { return s.heurBytes + s.cacheUsed }

// Describe says how the search is set up, for notes: width, depth,
// i-bound and caches against the budget.
func (s *AOBB) Describe() string {
	if s.bad != nil {
		return s.bad.Error()
	}
	depth := 0
	for _, v := range s.pre {
		depth = max(depth, s.pt.depth[v]+1)
	}
	race := ""
	if s.raceTrees > 1 {
		race = fmt.Sprintf(", pseudo-tree %d of %d raced", s.raceTree+1, s.raceTrees)
	}
	return fmt.Sprintf("aobb: width %d, pseudo-tree depth %d%s, search space %.3g, mini-bucket i-bound %d (%.1f MiB), %d variables cached (%.1f MiB held), budget %d MiB",
		s.pt.width, depth, race, s.pt.space(s.lp.Domains), s.IBound(), float64(s.heurBytes)/(1<<20), s.cachedVars, float64(s.cacheUsed)/(1<<20), s.opts.Memory>>20)
}

// fill refills a conditioned function from its entries at offset idx.
func (s *AOBB) fill(c *condFunc, idx int) {
	c.fill(idx)
	s.checks += int64(len(c.f.Costs))
}

// edited reports whether cond[i]'s function differs from its copy at the
// last row (or has none), and updates the copy.
func (s *AOBB) edited(i int) bool {
	costs := s.cond[i].costs
	if s.snap[i] == nil {
		s.snap[i] = slices.Clone(costs)
		return true
	}
	snap := s.snap[i]
	for e, c := range costs {
		if math.Float64bits(c) != math.Float64bits(snap[e]) {
			copy(snap, costs)
			return true
		}
	}
	return false
}

// shifts reports whether rows reparameterise their functions (shift).
func (s *AOBB) shifts() bool { return s.lp.NB == 0 || s.opts.ShiftRows }

// SolveRowWithin is SolveRow for a caller that needs the optimum only if
// it is below ub, and within a budget of checks (0: none).
//
// The search starts with ub as its incumbent's cost, so it prunes every
// branch whose bound reaches ub and ends early when none is left: found
// true with the optimum and its assignment when the optimum is below ub,
// else found false (the optimum is at least ub, up to the rounding of the
// bounds) and the interior zeros. A best response's restricted solves ask
// this — "is a row with a smaller value here as cheap as the optimum?" —
// and proving a restricted optimum worse then costs a search bounded by
// the optimum instead of a search for the worse value.
//
// done false says the search spent the budget (counted from the call, the
// mini-bucket heuristic included) before it ended; the interior is then
// zeros. The budget counts checks, not time, so whether a row is answered
// does not depend on the machine's load.
func (s *AOBB) SolveRowWithin(ctx context.Context, boundary, interior []int, ub float64, checks int64) (c float64, found, done bool, err error) {
	s.below, s.budget = ub, max(checks, 0)
	defer func() { s.below, s.budget = math.Inf(1), 0 }()
	c, err = s.SolveRow(ctx, boundary, interior)
	switch {
	case errors.Is(err, errBudget):
		clear(interior)
		return 0, false, false, nil
	case err != nil:
		return 0, false, false, err
	case s.missed || !(c < ub):
		return c, false, true, nil
	}
	return c, true, true, nil
}

// SolveRow finds the cheapest interior assignment for the boundary values.
// It returns Hard, with interior set to zeros, when none is feasible.
func (s *AOBB) SolveRow(ctx context.Context, boundary, interior []int) (float64, error) {
	lp := s.lp
	s.missed, s.budgetEnd = false, s.checks+s.budget
	if s.bad != nil {
		return 0, s.bad
	}
	if err := checkRowArgs(lp, boundary, interior); err != nil {
		return 0, fmt.Errorf("aobb: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if s.alts != nil && !s.rowsSeen && math.IsInf(s.below, 1) {
		return s.race(ctx, boundary, interior, s.budget)
	}
	clear(interior)
	g0 := 0.0
	for _, c := range s.consts {
		idx := 0
		for _, v := range c.scope {
			idx = idx*lp.Domains[v] + boundary[v]
		}
		g0 += c.costs[idx]
		s.checks++
	}
	if mva.IsHard(g0) {
		return mva.Hard, nil
	}

	// Condition the functions; mark what changed since the last row.
	edit, hardMoved := false, false
	for i := range s.cond {
		c := &s.cond[i]
		ed := s.edited(i)
		edit = edit || (ed && s.rowsSeen)
		key := condKeyOf(c, boundary)
		ch := ed || !s.rowsSeen || (!c.static && key != s.condKey[i])
		if ch && !ed && s.rowsSeen && s.keeps() && !hardMoved {
			hardMoved = !c.sameHard(s.condKey[i], key)
		}
		if ch && (!c.static || s.shifts()) {
			s.fill(c, key)
		}
		s.condKey[i] = key
		s.changed[i] = ch
	}
	// ShiftRows after the first row: the cached values are kept in the
	// functions' own (unshifted) costs, and stay valid where no function
	// below them changed its conditioning (see shiftCorrections), unless
	// a function's Hard entries moved.
	keep := s.keeps() && s.acc != nil && !edit && !hardMoved
	if keep {
		s.staleAbove()
	}
	if s.shifts() && slices.Contains(s.changed[:len(s.cond)], true) {
		// One row (or ShiftRows): shift costs between the functions (from their
		// tables again: the last shifts were of the old ones), and every
		// function and cached value changes with them.
		for i := range s.cond {
			if !s.changed[i] {
				s.fill(&s.cond[i], s.condKey[i])
			}
			s.changed[i] = true
		}
		if s.keeps() {
			s.startAcc()
		}
		s.shift(shiftRounds, shiftTol, false)
		s.deepShifted = false
		if s.keeps() {
			s.shiftCorrections()
		}
		edit = !keep
	}
	if keep {
		s.keptRows++
	}

	for v := range s.cache {
		ca := &s.cache[v]
		if !ca.on || !s.rowsSeen {
			continue
		}
		stale := edit
		if keep {
			stale = s.dirty[v]
		} else {
			for _, b := range ca.bvars {
				if boundary[b] != s.lastB[b] {
					stale = true
					break
				}
			}
		}
		if stale {
			s.forget(ca)
		}
	}
	copy(s.lastB, boundary)
	s.rowsSeen = true
	var r float64
	var exact, bounded bool
	var ub float64
	for {
		changed := s.changed
		if s.mbFresh {
			changed = nil
		}
		before := s.checks
		reads, err := s.mb.run(ctx, changed, s.opts.Workers)
		s.checks += reads
		if err != nil {
			// Some messages may be of the last row: the next row
			// computes them all.
			s.mbFresh = true
			return 0, err
		}
		if s.mbFresh {
			s.mbReads, s.mbFresh = reads, false
		}
		if s.budget > 0 && s.checks > s.budgetEnd {
			return 0, errBudget // spent on the heuristic
		}

		// Incumbent: greedy descent plus local search, or the last row's
		// answer if it is better here.
		s.ctx = ctx
		prev := math.Inf(1)
		if s.hasPrev {
			prev = s.cost(s.prev)
		}
		ub = s.initialBound(!mva.IsHard(prev))
		copy(s.inc, s.val)
		if prev < ub {
			ub = prev
			copy(s.inc, s.prev)
		}
		// SolveRowBelow's bound, when it is the tighter: the incumbent
		// is then no assignment.
		bounded = s.below <= ub
		if bounded {
			ub = s.below
		}

		// Search; with a heuristic that can still grow, only as long as
		// computing the heuristic took (and at least searchFloor reads), then
		// escalate: the time lost is at most a constant factor of the
		// best heuristic's.
		s.limit = math.MaxInt64
		if !s.mbFinal {
			s.limit = s.checks + max(s.searchFloor, s.searchShare*s.mbReads, s.searchShare*(s.checks-before))
		}
		s.ctx, s.stop, s.err = ctx, false, nil
		r, exact = s.searchRoot(ub)
		s.ctx = nil
		if s.stop && errors.Is(s.err, errEscalate) {
			if s.shifts() && !s.deepShifted && s.deepShift(ub) {
				continue
			}
			if err := s.escalate(); err != nil {
				return 0, err
			}
			continue
		}
		if s.stop {
			return 0, s.err
		}
		break
	}
	best := ub
	if exact && r < ub {
		best = r
		copy(s.inc, s.val)
	} else if bounded {
		s.missed = true // nothing below SolveRowBelow's bound
		return mva.Hard, nil
	}
	if mva.IsHard(best) {
		s.hasPrev = false
		return mva.Hard, nil
	}
	copy(s.prev, s.inc)
	s.hasPrev = true
	copy(interior, s.inc[lp.NB:])
	// The search's costs may be shifted (and rounded): report the
	// assignment's cost in the functions themselves.
	full := s.full
	copy(full, boundary)
	copy(full[lp.NB:], interior)
	return lp.Eval(full), nil
}

// raceSoloChecks are the checks the first tree of a race searches alone;
// raceFirstChecks those every tree gets in the first round after, each
// round doubling them.
const (
	raceSoloChecks  = 1 << 27
	raceFirstChecks = 1 << 24
)

// raceBudgetSolo and raceBudgetFirst divide a budget of checks (see race)
// into the first tree's solo round and the first round of every tree.
const (
	raceBudgetSolo  = 2
	raceBudgetFirst = 64
)

// race solves a one-row problem over several pseudo-trees. The first
// tree searches alone for raceSoloChecks checks (an SHDS home's response
// takes up to 10^8 on it, a second); then every tree, the first one
// included, searches in turn for raceFirstChecks checks more, twice as
// many each round, until one search ends, whose tree is kept. A tree's
// search resumes where it stopped: its heuristic and cached values stay.
// AOBB's time on trees of the same width differs by orders of magnitude
// (an SHDS home: 1.2·10^8 checks on one, past 3·10^8 on 17 of 20 other
// min-fill trees, past 5 minutes on one), and no measure of the tree
// taken before the search predicted which (see docs/DESIGN.md): the race
// bounds the loss to a few times the trees' number times the fastest
// tree's checks, while a problem the first tree solves alone costs what
// it did. The trees share the memory budget: half to the first, half to
// the others.
//
// A row of a problem that reparameterises every row (ShiftRows: a best
// response, searched afresh at each question) races too, on its first
// row, and the tree kept searches the later rows; within a budget of
// checks (SolveRowWithin), the solo round has half of it and the
// first round of each tree a 64th, and the race ends with errBudget when
// the trees together have spent it. The race's checks past the first
// tree's are the price of not keeping a tree that takes minutes: an SHDS
// home's response took 6·10^8 checks on its min-fill tree and 3·10^7 on
// another of the same width.
func (s *AOBB) race(ctx context.Context, boundary, interior []int, budget int64) (float64, error) {
	alts := s.alts
	s.alts = nil
	runners := []*AOBB{s}
	solo, first := s.raceSolo, s.raceFirst
	if budget > 0 {
		solo, first = max(1, min(solo, budget/raceBudgetSolo)), max(1, min(first, budget/raceBudgetFirst))
	}
	spent := func() int64 {
		var c int64
		for _, o := range runners {
			c += o.checks
		}
		return c
	}
	end := spent() + budget
	// run searches runner r for b checks more; ok when it ended.
	run := func(k int, b int64) (float64, bool, error) {
		r := runners[k]
		if budget > 0 {
			left := end - spent()
			if left <= 0 {
				return 0, false, errBudget
			}
			b = min(b, left)
		}
		c, _, done, err := r.SolveRowWithin(ctx, boundary, interior, math.Inf(1), b)
		if err != nil || !done {
			return 0, false, err
		}
		var checks, nodes int64
		for _, o := range runners {
			checks += o.checks
			nodes += o.nodes
		}
		if r != s {
			*s = *r
		}
		s.checks, s.nodes, s.raceTree, s.raceTrees = checks, nodes, k, len(runners)
		return c, true, nil
	}
	if c, ok, err := run(0, solo); ok || err != nil {
		return c, err
	}
	if budget > 0 && spent() >= end {
		return 0, errBudget
	}
	trees := alts()
	opts := s.opts
	opts.Memory = max(1, s.opts.Memory/int64(max(len(trees), 1)))
	for b := first; ; b *= 2 {
		for k := 0; k <= len(trees); k++ {
			if k == len(runners) {
				pt := trees[k-1]
				runners = append(runners, newAOBB(s.lp, opts, func(int, int, []int, [][]int, []int) []*pseudoTree { return []*pseudoTree{pt} }))
			}
			if c, ok, err := run(k, b); ok || err != nil {
				return c, err
			}
		}
	}
}

// shiftRounds bounds the sweeps of shift, shiftTol its least gain per
// sweep (relative to the sum of minima): the first reparameterisation of
// a row, cheap enough for every row.
const (
	shiftRounds = 20
	shiftTol    = 1e-6
)

// deepShiftRounds and deepShiftTol bound the shift that continues to
// convergence once a row's search has turned out hard (deepShift).
const (
	deepShiftRounds = 1000
	deepShiftTol    = 1e-9
	// deepShiftGain is the least rise of the sum of minima, as a
	// fraction of its gap to the incumbent, for which deepShift keeps
	// its shift: dm_21_1_6's homes 7-71%, gen_circuit500 3%.
	deepShiftGain = 0.1
	// deepShiftRise is enough too: the rise as a fraction of the sum of
	// minima itself (dm_21_1_6's homes 6-500%, gen_circuit500 2%), for
	// rows without an incumbent (SHDS responses, mostly Hard, often have
	// none before the search) or with a poor one (home 11's is far
	// above its optimum, which the shift reached).
	deepShiftRise = 0.05
)

// shift reparameterises the conditioned functions of a one-row problem to
// tighten the bounds, as FGLP does (Ihler, Flerova, Dechter and Otten
// 2012): for each variable v, each function holding it gets its min-marginal
// over v moved to the mean of theirs. The shifts at v sum to zero over the
// functions, so every complete assignment costs what it did; what grows is
// the sum of the functions' minima, and with it every mini-bucket bound.
// Integer costs stay integers (the mean is floored and one function takes
// the remainder), so that integer problems are solved without rounding. A
// value Hard in one function's min-marginal is Hard in all of them. It
// stops after shiftRounds sweeps or when a sweep raises the sum of minima
// by less than a millionth.
func (s *AOBB) shift(rounds int, tol float64, readsOnly bool) (from, to float64) {
	lp := s.lp
	type holder struct {
		f      *Factor
		stride int
		d      int
		acc    []float64 // s.acc's entry, or nil
		fin    *finiteEntries
		p      int // the variable's position in f
	}
	fins := s.finite()
	// holders[v] are runs of one slab, sized by a first count.
	holders := make([][]holder, len(lp.Vars))
	count := make([]int, len(lp.Vars))
	total := 0
	for i := range s.cond {
		for _, v := range s.cond[i].f.Vars {
			count[v]++
			total++
		}
	}
	slab := make([]holder, total)
	for v, n := range count {
		holders[v], slab = slab[:0:n], slab[n:]
	}
	for i := range s.cond {
		f := s.cond[i].f
		var fin *finiteEntries
		if fins[i].on {
			fin = &fins[i]
		}
		stride := 1
		for p := len(f.Vars) - 1; p >= 0; p-- {
			var acc []float64
			if s.acc != nil {
				acc = s.acc[i][p]
			}
			holders[f.Vars[p]] = append(holders[f.Vars[p]], holder{f, stride, f.Dims[p], acc, fin, p})
			stride *= f.Dims[p]
		}
	}
	minSum := func() float64 {
		t := 0.0
		for i := range s.cond {
			if fins[i].on {
				t += fins[i].min(s.cond[i].f.Costs)
			} else {
				t += slices.Min(s.cond[i].f.Costs)
			}
		}
		return t
	}
	var marg []float64
	last := minSum()
	from, to = last, last
	for range rounds {
		for _, v := range s.pre {
			hs := holders[v]
			if len(hs) < 2 {
				continue
			}
			d := lp.Domains[v]
			if cap(marg) < len(hs)*d {
				marg = make([]float64, len(hs)*d)
			}
			marg = marg[:len(hs)*d]
			for k, h := range hs {
				m := marg[k*d : (k+1)*d]
				for a := range m {
					m[a] = math.Inf(1)
				}
				if h.fin != nil {
					h.fin.marginals(h.f.Costs, h.p, m)
				} else {
					marginals(h.f.Costs, h.stride, h.d, m)
				}
				if readsOnly && h.fin != nil {
					s.checks += int64(len(h.fin.idx))
				} else {
					s.checks += int64(len(h.f.Costs))
				}
			}
			for a := range d {
				sum, hard, integral := 0.0, false, true
				for k := range hs {
					x := marg[k*d+a]
					hard = hard || mva.IsHard(x)
					integral = integral && x == math.Trunc(x)
					sum += x
				}
				n := float64(len(hs))
				for k := range hs {
					x := marg[k*d+a]
					switch {
					case hard:
						marg[k*d+a] = mva.Hard // the value is out
					case integral:
						marg[k*d+a] = math.Floor(sum/n) - x
					default:
						marg[k*d+a] = sum/n - x
					}
				}
				if !hard && integral { // the first takes the remainder
					rest := 0.0
					for k := 1; k < len(hs); k++ {
						rest += marg[k*d+a]
					}
					marg[a] = -rest
				}
			}
			for k, h := range hs {
				delta := marg[k*d : (k+1)*d]
				if h.fin != nil {
					h.fin.add(h.f.Costs, h.p, delta)
				} else {
					addMarginals(h.f.Costs, h.stride, h.d, delta)
				}
				if h.acc == nil {
					continue
				}
				for a, x := range delta {
					if !mva.IsHard(x) {
						h.acc[a] += x
					}
				}
			}
		}
		now := minSum()
		to = now
		if !(now-last > tol*max(1, math.Abs(now))) {
			break
		}
		last = now
	}
	return from, to
}

// deepShift continues the row's reparameterisation to convergence
// (deepShiftRounds sweeps, or until one gains less than deepShiftTol), for
// a search that reached its first escalation: the first shift stops
// after shiftRounds sweeps, cheap for every row, while the rows whose
// search turns out hard may need the tighter bounds. On dm_21_1_6's
// homes' first questions it took 85 to 900 sweeps, raised the sum of
// the functions' minima by 7-60% (to the optimum on four of them) and
// cut the search from 1.1-11 s to 0.07-0.4 s, and home 12's from past
// 70 s to 2.2 s (docs/bench/toulbar2-shds-responses.md); run on every
// row, it cost more than it saved on easy responses, whose search ends
// before its first escalation and never gets here.
//
// The shift is kept where it raised the sum of minima by at least
// deepShiftGain of its gap to the incumbent ub, or by deepShiftRise of
// the sum itself: the messages are then
// recomputed from the shifted functions, and every cached value and
// bound of the row is forgotten (they are of the old shifts); a problem
// that keeps cached values across rows (keeps) keeps none of this row's,
// as its deeper shifts may make Hard values (shift propagates them) that
// the next row's corrections know nothing of. Elsewhere the functions
// get their costs back and the search goes on as before, with its
// caches: gen_circuit500's shift converged at once (296 to 302 against
// an incumbent of 473) and forgetting its caches cost it half its CPU
// again. Its checks count the entries it reads (the finite ones, see
// finiteEntries), so that a response's budget of checks is not spent on
// Hard entries it skips. It reports whether the shift was kept.
func (s *AOBB) deepShift(ub float64) bool {
	s.deepShifted = true
	saved := make([][]float64, len(s.cond))
	for i := range s.cond {
		saved[i] = slices.Clone(s.cond[i].f.Costs)
		s.checks += int64(len(saved[i]))
	}
	acc := s.acc
	s.acc = nil // the deep shift's moves are not the row's corrections
	from, to := s.shift(deepShiftRounds, deepShiftTol, true)
	need := min(deepShiftGain*(ub-from), deepShiftRise*max(1, math.Abs(from)))
	if !(to-from >= need) {
		for i := range s.cond {
			copy(s.cond[i].f.Costs, saved[i])
		}
		s.acc = acc
		return false
	}
	s.deepShifts++
	for v := range s.cache {
		s.forget(&s.cache[v])
	}
	s.mbFresh = true
	return true
}

// forget makes every entry of ca stale: a new generation.
func (s *AOBB) forget(ca *aobbCache) {
	if !ca.on {
		return
	}
	ca.gen++
	if ca.gen == lbGen { // wrapped: forget every entry
		clear(ca.gens)
		clear(ca.lbs)
		ca.gen = 1
	}
}

// finiteEntries lists a conditioned function's entries that are not Hard,
// for shift. The SHDS responses' functions are mostly Hard (a progress
// counter's ternary chain function allows 3 to 41 of its 648 entries, a
// slot's six-variable function 74 of 144), and a Hard entry stays Hard
// whatever shift adds (Hard is +Inf): shift's sweeps over the finite
// entries alone compute the same marginals and the same tables, bit for
// bit, for a fraction of the reads. shift's checks still count every
// entry, so that budgets of checks (SolveRowWithin, race) are spent as
// before.
type finiteEntries struct {
	on  bool
	idx []int32 // the finite entries' offsets in the table
	// val[p][e] is the value of the function's p-th variable at entry
	// idx[e].
	val [][]uint16
}

// finite returns, per conditioned function, its finite entries where
// they are at most three quarters of its table (on false elsewhere: the
// dense walks of marginals and addMarginals are then the cheaper; at a
// half, the six-variable slot functions, 74 of 144 finite, stayed dense),
// in buffers kept across rows.
func (s *AOBB) finite() []finiteEntries {
	if len(s.fins) != len(s.cond) {
		s.fins = make([]finiteEntries, len(s.cond))
	}
	for i := range s.cond {
		f, fe := s.cond[i].f, &s.fins[i]
		fe.on = false
		n := 0
		for _, c := range f.Costs {
			if !mva.IsHard(c) {
				n++
			}
		}
		if 4*n > 3*len(f.Costs) || len(f.Costs) > math.MaxInt32 || slices.Max(f.Dims) > math.MaxUint16+1 {
			continue
		}
		fe.on = true
		fe.idx = fe.idx[:0]
		for e, c := range f.Costs {
			if !mva.IsHard(c) {
				fe.idx = append(fe.idx, int32(e))
			}
		}
		if len(fe.val) != len(f.Vars) {
			fe.val = make([][]uint16, len(f.Vars))
		}
		stride := 1
		for p := len(f.Vars) - 1; p >= 0; p-- {
			vals := fe.val[p][:0]
			d := f.Dims[p]
			for _, e := range fe.idx {
				vals = append(vals, uint16(int(e)/stride%d))
			}
			fe.val[p] = vals
			stride *= d
		}
	}
	return s.fins
}

// min returns the least of costs' entries listed in fe (+Inf when none
// is: every entry is Hard), what slices.Min of the whole table returns.
func (fe *finiteEntries) min(costs []float64) float64 {
	m := math.Inf(1)
	for _, e := range fe.idx {
		m = min(m, costs[e])
	}
	return m
}

// marginals is marginals over fe's entries, for the variable at position
// p: a value whose entries are all Hard keeps its +Inf, as there.
func (fe *finiteEntries) marginals(costs []float64, p int, m []float64) {
	vals := fe.val[p]
	for e, i := range fe.idx {
		if c, a := costs[i], vals[e]; c < m[a] {
			m[a] = c
		}
	}
}

// add is addMarginals over fe's entries, for the variable at position p.
// A Hard delta makes its entries Hard (+Inf plus a finite cost), and
// they leave the list.
func (fe *finiteEntries) add(costs []float64, p int, delta []float64) {
	vals := fe.val[p]
	hard := false
	for e, i := range fe.idx {
		x := delta[vals[e]]
		costs[i] += x
		hard = hard || mva.IsHard(x)
	}
	if !hard {
		return
	}
	n := 0
	for e, i := range fe.idx {
		if mva.IsHard(costs[i]) {
			continue
		}
		fe.idx[n] = i
		for q := range fe.val {
			fe.val[q][n] = fe.val[q][e]
		}
		n++
	}
	fe.idx = fe.idx[:n]
	for q := range fe.val {
		fe.val[q] = fe.val[q][:n]
	}
}

// keeps reports whether rows keep cached values across their shifts
// (shiftCorrections): ShiftRows with a boundary.
func (s *AOBB) keeps() bool { return s.opts.ShiftRows && s.lp.NB > 0 }

// startAcc zeroes the kept shifts, before the functions are shifted
// afresh.
func (s *AOBB) startAcc() {
	if s.acc == nil {
		s.acc = make([][][]float64, len(s.cond))
		s.dirty = make([]bool, len(s.lp.Vars))
		for i := range s.cond {
			f := s.cond[i].f
			s.acc[i] = make([][]float64, len(f.Vars))
			for p, d := range f.Dims {
				s.acc[i][p] = make([]float64, d)
			}
		}
	}
	for i := range s.acc {
		for _, a := range s.acc[i] {
			clear(a)
		}
	}
}

// shiftCorrections sets the cached variables' corrections (aobbCache.corr)
// from this row's shifts (acc), so that their cached values, kept in the
// functions' own costs, stay valid across rows whose shifts differ.
//
// The value of the subproblem below a cached variable w, in shifted
// costs, is its value in the functions' own costs plus the shifts of its
// functions: those at a variable of w's subtree cancel out (every
// function that holds it is below w, and shift's moves at a variable sum
// to zero over its holders), so what is left are the shifts at the
// variables of w's context, a sum of one table per context variable. A
// row's question then reuses the cached values of every subproblem whose
// functions' conditioning did not change (staleAbove), with the row's own
// fresh shifts for its bounds. A Hard that shift propagates (a value
// impossible because of a function elsewhere) is no such sum: a row that
// propagates one keeps no cached value, and its values are not kept
// (SolveRow).
func (s *AOBB) shiftCorrections() {
	for v := range s.cache {
		clear(s.cache[v].corr)
	}
	pt := s.pt
	for i := range s.cond {
		f := s.cond[i].f
		for p, u := range f.Vars {
			acc := s.acc[i][p]
			for w := s.deep[i]; w >= 0 && w != u; w = pt.parent[w] {
				ca := &s.cache[w]
				if ca.corr == nil {
					continue
				}
				k := slices.Index(ca.ctx, u)
				if k < 0 {
					continue
				}
				c := ca.corr[ca.coff[k] : ca.coff[k]+len(acc)]
				for a, x := range acc {
					c[a] += x
				}
				s.checks += int64(len(acc))
			}
		}
	}
}

// sameHard reports whether c's function conditioned at offsets a and b
// (condKeyOf) has its Hard entries at the same places.
func (c *condFunc) sameHard(a, b int) bool {
	k := len(c.istrides)
	if k == 0 {
		return mva.IsHard(c.costs[a]) == mva.IsHard(c.costs[b])
	}
	dig := make([]int, k)
	for range c.f.Costs {
		if mva.IsHard(c.costs[a]) != mva.IsHard(c.costs[b]) {
			return false
		}
		for q := k - 1; q >= 0; q-- {
			dig[q]++
			if dig[q] < c.f.Dims[q] {
				a += c.istrides[q]
				b += c.istrides[q]
				break
			}
			a -= (c.f.Dims[q] - 1) * c.istrides[q]
			b -= (c.f.Dims[q] - 1) * c.istrides[q]
			dig[q] = 0
		}
	}
	return true
}

// staleAbove marks in s.dirty the variables at or above the bucket of a
// changed function: the subproblems whose cached values it enters.
func (s *AOBB) staleAbove() {
	clear(s.dirty)
	for i := range s.cond {
		if !s.changed[i] {
			continue
		}
		for v := s.deep[i]; v >= 0 && !s.dirty[v]; v = s.pt.parent[v] {
			s.dirty[v] = true
		}
	}
}

// marginals lowers m[a] to the least entry of costs whose value of the
// variable at stride (of d values) is a. It walks the table in runs of
// stride entries that share a value: the index arithmetic of each entry
// (a division and a remainder) was most of shift's time, and shift most
// of an SHDS home's response.
func marginals(costs []float64, stride, d int, m []float64) {
	block := stride * d
	for o := 0; o < len(costs); o += block {
		for a := range d {
			ma := m[a]
			for _, c := range costs[o+a*stride : o+(a+1)*stride] {
				ma = min(ma, c)
			}
			m[a] = ma
		}
	}
}

// addMarginals adds delta[a] to the entries of costs whose value of the
// variable at stride (of d values) is a, or makes them Hard where delta[a]
// is, walking the table as marginals does.
func addMarginals(costs []float64, stride, d int, delta []float64) {
	block := stride * d
	for o := 0; o < len(costs); o += block {
		for a, x := range delta[:d] {
			run := costs[o+a*stride : o+(a+1)*stride]
			if mva.IsHard(x) {
				for i := range run {
					run[i] = mva.Hard
				}
				continue
			}
			for i := range run {
				run[i] += x
			}
		}
	}
}

// cost returns the conditioned functions' sum at the interior values of x.
func (s *AOBB) cost(x []int) float64 {
	total := 0.0
	for i := range s.cond {
		f := s.cond[i].f
		idx := 0
		for p, v := range f.Vars {
			idx = idx*f.Dims[p] + x[v]
		}
		total += f.Costs[idx]
	}
	s.checks += int64(len(s.cond))
	return total
}

// expand fills s.w[c] (the exact cost of c's bucket functions) and s.h[c]
// (the messages into c's bucket) for every value of c, and s.interV[c]
// (the messages from below c to above it), given the values above c, and
// returns the bound of the subproblem below c: min over a of w + h, plus
// interV.
func (s *AOBB) expand(c int) float64 {
	d := s.lp.Domains[c]
	w, h := s.w[c][:d], s.h[c][:d]
	clear(w)
	clear(h)
	val := s.val
	origs, augs, inters := s.orig[c], s.aug[c], s.inter[c]
	for k := range origs {
		r := &origs[k]
		b := r.base(val)
		costs, vs := r.f.Costs, r.vstride
		for a := range w {
			w[a] += costs[b+a*vs]
		}
	}
	bases := s.augBase[c]
	for k := range augs {
		r := &augs[k]
		b := r.base(val)
		bases[k] = b
		costs, vs := r.f.Costs, r.vstride
		for a := range h {
			h[a] += costs[b+a*vs]
		}
	}
	// The messages passing over c: each at the entry its target's
	// expansion found, the target (an ancestor) expanded since its own
	// ancestors last changed.
	iv := 0.0
	for k := range inters {
		r := &inters[k]
		if r.t < 0 {
			iv += r.f.Costs[0]
		} else {
			iv += r.f.Costs[s.augBase[r.t][r.k]+val[r.t]*r.vs]
		}
	}
	s.checks += int64(d*(len(origs)+len(augs)) + len(inters))
	s.interV[c] = iv
	m := math.Inf(1)
	for a, x := range w {
		if x += h[a]; x < m {
			m = x
		}
	}
	return m + iv
}

// cacheKey returns the index of c's context assignment.
func (s *AOBB) cacheKey(ca *aobbCache) int {
	return indexOf(ca.ctxKeys, s.val)
}

// cacheGet returns c's cached value for the current context and writes
// its subproblem's assignment into s.val, or ok false.
func (s *AOBB) cacheGet(c int) (float64, bool) {
	x, kind := s.cacheLookup(c)
	return x, kind == cachedExact
}

// What cacheLookup found: nothing, the exact value, or a lower bound.
const (
	cachedNone = iota
	cachedExact
	cachedBound
)

// lbGen marks, in aobbCache.gens, an entry that holds a lower bound of its
// subproblem rather than its value: gens[e] == gen|lbGen. Generations wrap
// before they reach it.
const lbGen = 1 << 31

// cacheLookup returns what c's cache holds for the current context: its
// exact value (cachedExact; its subproblem's assignment is then written
// into s.val), a lower bound of it that an earlier search failed to beat
// (cachedBound, see cacheBound), or cachedNone.
func (s *AOBB) cacheLookup(c int) (float64, int) {
	ca := &s.cache[c]
	if !ca.on || ca.vals == nil && len(ca.slots) == 0 {
		return 0, cachedNone
	}
	e := s.cacheKey(ca)
	if !ca.dense {
		slot, ok := ca.slots[e]
		switch {
		case !ok:
			return 0, cachedNone
		case slot < 0:
			if b := ca.lbs[^slot]; b.gen == ca.gen {
				return b.lb + s.correction(ca), cachedBound
			}
			return 0, cachedNone
		}
		e = int(slot)
	}
	switch ca.gens[e] {
	case ca.gen:
		sol := ca.sols[e*ca.sub : (e+1)*ca.sub]
		for k, u := range s.pt.subtree[c] {
			s.val[u] = int(sol[k])
		}
		return ca.vals[e] + s.correction(ca), cachedExact
	case ca.gen | lbGen:
		return ca.vals[e] + s.correction(ca), cachedBound
	}
	return 0, cachedNone
}

// correction returns the shift of ca's subproblem at the current context
// values (see aobbCache.corr), 0 where rows do not keep cached values.
func (s *AOBB) correction(ca *aobbCache) float64 {
	if ca.corr == nil {
		return 0
	}
	c := 0.0
	for k, u := range ca.ctx {
		c += ca.corr[ca.coff[k]+s.val[u]]
	}
	return c
}

// cachePut stores c's exact value and its subproblem's assignment (in
// s.val) for the current context, unless the budget is spent.
func (s *AOBB) cachePut(c int, value float64) {
	ca := &s.cache[c]
	e, ok := s.cacheSlot(ca)
	if !ok {
		return
	}
	ca.vals[e], ca.gens[e] = value-s.correction(ca), ca.gen
	sol := ca.sols[e*ca.sub : (e+1)*ca.sub]
	for k, u := range s.pt.subtree[c] {
		sol[k] = uint16(s.val[u])
	}
}

// cacheBound stores lb, the value a failed search of c's subproblem
// returned (solveOR: a lower bound of the subproblem's value in the
// current context), unless the cache holds the exact value or a bound at
// least as high, or the budget is spent. A later visit of the context
// starts from the larger of it and the heuristic's bound (solveAND): the
// search below guessed bounds (searchRoot) and an AND node's siblings
// meet the same contexts again with bounds no higher, and the bound
// prunes them at once. The subproblem's value depends only on the
// context, whatever the bounds of the search that failed; rows that keep
// cached values correct bounds as they correct values (correction).
func (s *AOBB) cacheBound(c int, lb float64) {
	ca := &s.cache[c]
	if !ca.on || ca.size > boundContexts {
		return
	}
	own := lb - s.correction(ca)
	e := s.cacheKey(ca)
	if !ca.dense {
		slot, ok := ca.slots[e]
		switch {
		case !ok:
			if s.cacheUsed+boundEntryBytes > s.cacheBudget || len(ca.lbs) >= math.MaxInt32 {
				return
			}
			s.cacheUsed += boundEntryBytes
			ca.slots[e] = ^int32(len(ca.lbs))
			ca.lbs = append(ca.lbs, cachedLB{own, ca.gen})
		case slot < 0:
			if b := &ca.lbs[^slot]; b.gen != ca.gen || b.lb < own {
				*b = cachedLB{own, ca.gen}
			}
		default: // a value's slot, stale or not: as in a dense table
			if g := ca.gens[slot]; g != ca.gen && (g != ca.gen|lbGen || ca.vals[slot] < own) {
				ca.vals[slot], ca.gens[slot] = own, ca.gen|lbGen
			}
		}
		return
	}
	if ca.vals != nil {
		if g := ca.gens[e]; g == ca.gen || g == ca.gen|lbGen && ca.vals[e] >= own {
			return
		}
	}
	e, ok := s.cacheSlot(ca)
	if !ok {
		return
	}
	ca.vals[e], ca.gens[e] = own, ca.gen|lbGen
}

// cacheSlot returns the entry of ca for the current context, made if it
// has none (a dense table allocated, a map slot added, or the map made
// dense), or ok false where the budget is spent.
func (s *AOBB) cacheSlot(ca *aobbCache) (int, bool) {
	if !ca.on {
		return 0, false
	}
	e := s.cacheKey(ca)
	if ca.dense {
		if ca.vals == nil {
			bytes := int64(ca.size) * (12 + 2*int64(ca.sub))
			if s.cacheUsed+bytes > s.cacheBudget {
				return 0, false
			}
			s.cacheUsed += bytes
			ca.vals = make([]float64, ca.size)
			ca.gens = make([]uint32, ca.size)
			ca.sols = make([]uint16, ca.size*ca.sub)
		}
	} else if ca.grow && len(ca.vals) >= ca.size/denseFill && s.densify(ca) {
		// now dense, e indexes the table
	} else {
		slot, ok := ca.slots[e]
		if !ok || slot < 0 { // none, or only a bound: a value's slot
			bytes := 12 + 2*int64(ca.sub) + sparseEntryBytes
			if s.cacheUsed+bytes > s.cacheBudget || len(ca.vals) >= math.MaxInt32 {
				return 0, false
			}
			s.cacheUsed += bytes
			slot = int32(len(ca.vals))
			ca.slots[e] = slot
			ca.vals = append(ca.vals, 0)
			ca.gens = append(ca.gens, 0)
			ca.sols = append(ca.sols, make([]uint16, ca.sub)...)
		}
		e = int(slot)
	}
	return e, true
}

// densify moves ca's map into a dense table, if that fits the budget
// (otherwise ca stays a map for good), and reports whether it did.
func (s *AOBB) densify(ca *aobbCache) bool {
	ca.grow = false
	sub := int64(ca.sub)
	dense := int64(ca.size) * (12 + 2*sub)
	sparse := int64(len(ca.vals))*(12+2*sub+sparseEntryBytes) + int64(len(ca.lbs))*boundEntryBytes
	if s.cacheUsed-sparse+dense > s.cacheBudget {
		return false
	}
	vals := make([]float64, ca.size)
	gens := make([]uint32, ca.size)
	sols := make([]uint16, ca.size*ca.sub)
	for e, slot := range ca.slots {
		if slot < 0 { // a bound
			b := ca.lbs[^slot]
			vals[e], gens[e] = b.lb, b.gen|lbGen
			continue
		}
		vals[e], gens[e] = ca.vals[slot], ca.gens[slot]
		copy(sols[e*ca.sub:(e+1)*ca.sub], ca.sols[int(slot)*ca.sub:])
	}
	ca.vals, ca.gens, ca.sols, ca.slots, ca.lbs, ca.dense = vals, gens, sols, nil, nil, true
	s.cacheUsed += dense - sparse
	return true
}

// kids returns the children of AND node v (len(Vars): the roots).
func (s *AOBB) kids(v int) []int {
	if v == len(s.lp.Vars) {
		return s.pt.roots
	}
	return s.pt.children[v]
}

// solveAND returns the sum of the values of the subproblems below v's
// children, given the path in s.val, and whether it is exact: then s.val
// holds their best assignments. Otherwise it is a lower bound that reached
// ub (up to rounding). Exactness is tracked, not inferred from ub, since
// with fractional costs a bound can round below ub.
func (s *AOBB) solveAND(v int, ub float64) (float64, bool) {
	kids := s.kids(v)
	if len(kids) == 0 {
		return 0, true
	}
	lbs, hit := s.kidLB[v], s.kidHit[v]
	sum := 0.0
	for i, c := range kids {
		x, kind := s.cacheLookup(c)
		switch kind {
		case cachedExact:
			lbs[i], hit[i] = x, true
		case cachedBound:
			lb := s.expand(c)
			if x > lb {
				lb = x
				s.boundHits++
			}
			lbs[i], hit[i] = lb, false
		default:
			lbs[i], hit[i] = s.expand(c), false
		}
		sum += lbs[i]
		if !(sum < ub) {
			return sum, false
		}
	}
	for i, c := range kids {
		if hit[i] {
			continue
		}
		rest := 0.0
		for j := range kids {
			if j != i {
				rest += lbs[j]
			}
		}
		r, exact := s.solveOR(c, ub-rest)
		if s.stop {
			return math.Inf(1), false
		}
		lbs[i] = r
		if !exact || !(rest+r < ub) {
			return rest + r, false
		}
	}
	sum = 0
	for _, x := range lbs {
		sum += x
	}
	return sum, true
}

// solveOR returns the value of the subproblem below c (c included), whose
// values' costs and bounds expand has filled, and whether it is exact:
// then s.val holds the subproblem's best assignment, and it is cached.
// Otherwise it is a lower bound that reached ub.
func (s *AOBB) solveOR(c int, ub float64) (float64, bool) {
	s.nodes++
	if s.nodes&0xff == 0 {
		if err := s.ctx.Err(); err != nil {
			s.stop, s.err = true, err
			return math.Inf(1), false
		}
	}
	if s.budget > 0 && s.checks > s.budgetEnd {
		s.stop, s.err = true, errBudget
		return math.Inf(1), false
	}
	if s.checks > s.limit {
		s.stop, s.err = true, errEscalate
		return math.Inf(1), false
	}
	d := s.lp.Domains[c]
	w, h, iv := s.w[c], s.h[c], s.interV[c]
	ord := s.ord[c]
	for a := range d {
		f := w[a] + h[a]
		k := a
		for k > 0 && w[ord[k-1]]+h[ord[k-1]] > f {
			ord[k] = ord[k-1]
			k--
		}
		ord[k] = a
	}
	// Only c's parent expands c, so w and h stay as they are during
	// the loop. After a failed trial following the best one, s.val holds
	// the failed trial's values: the best's are restored from s.buf.
	best, lbFail := math.Inf(1), math.Inf(1)
	found, lastBest := false, false
	for i, a := range ord {
		bound := min(ub, best)
		lb := w[a] + h[a] + iv
		if !(lb < bound) {
			lbFail = min(lbFail, lb)
			break
		}
		s.val[c] = a
		r, exact := s.solveAND(c, bound-w[a])
		r += w[a]
		if s.stop {
			return math.Inf(1), false
		}
		if exact && r < bound {
			best, found, lastBest = r, true, true
			if i < d-1 {
				for k, u := range s.pt.subtree[c] {
					s.buf[c][k] = s.val[u]
				}
			}
		} else {
			lbFail = min(lbFail, r)
			lastBest = false
		}
	}
	if !found {
		// A bound no higher than the heuristic's (the search pruned
		// at once) is what expand finds again: not worth an entry.
		if a := ord[0]; lbFail > w[a]+h[a]+iv {
			s.cacheBound(c, lbFail)
		}
		return lbFail, false
	}
	if !lastBest {
		for k, u := range s.pt.subtree[c] {
			s.val[u] = s.buf[c][k]
		}
	}
	s.cachePut(c, best)
	return best, true
}
