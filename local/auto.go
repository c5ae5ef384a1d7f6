package local

import (
	"context"
	"errors"
	"fmt"
	"math"
	bits64 "math/bits"
	"slices"
	"strings"

	"github.com/hearth-dcop/hearth/mva"
)

// AutoBEEntries is the most bucket-table entries Choose gives bucket
// elimination: past it AND/OR search is as fast or faster. Measured end to
// end (hearth solve, 2 cores): at 2·10^4 entries (fabe_test_0) both take
// 20 ms; at 6·10^5 (fabe_grid_50-12-5) BE 50 ms, AOBB 60 ms; at 1.8·10^6
// (meeting, 20 agents) BE 0.36 s, AOBB 0.16 s; at 2.4·10^6 (8-queens) BE
// 0.36 s, AOBB 0.14 s; at 10^8 (fabe_spot5_29) BE 14 s, AOBB 0.02 s.
const AutoBEEntries = 1 << 18

// beBytesPerEntry is what one entry of a bucket table costs bucket
// elimination: the cost (float64) and the argmin (int32).
const beBytesPerEntry = 12

// AutoOptions are the inputs of Choose besides the problem.
type AutoOptions struct {
	// Memory is the budget in bytes of the solver chosen; 0 means
	// DefaultMemory().
	Memory int64
	// Table says the caller fills the whole MVA table at once (eager):
	// bucket elimination's table plan, with the boundary, must fit.
	Table bool
	// gapAsked says the row's root-gap question was asked already
	// (Choose's second case): chooseSized then gives AOBB the rows it
	// would have asked it of.
	gapAsked bool
}

// Choice is what Choose picked for a subproblem and why.
type Choice struct {
	// Name is "be", "aobb" or "edac", as New knows them, or "edac+aobb":
	// EDAC within a budget of checks, then AOBB.
	Name string
	// Width is the induced width of the elimination BE would run, and
	// Entries its bucket tables' entries in all (+Inf past float64).
	// With AtLeast, both are lower bounds: the min-fill elimination was
	// stopped once its tables passed what bucket elimination may have
	// (AutoBEEntries, or the memory budget), the rest of it being of no
	// use to the choice (on a 40×40 binary grid most of hearth's time
	// before the search).
	Width   int
	Entries float64
	AtLeast bool
	// Reason says why, in words, for a result's notes.
	Reason string
	// budget is EDAC's checks under edac+aobb; first, when positive,
	// those of its first try, before bucket elimination is sized (see
	// Choose).
	budget, first int64
	// gap, under edac+aobb, asks EDAC only for an assignment at its root
	// bound (EDAC.rootGap) within budget checks, or first checks when
	// first is positive (Choose's second case, before the sizing); the
	// row goes to AOBB, or where chooseSized sends it, when there is
	// none (see edacGapPerVar).
	gap bool
	// plan is the elimination order beCost found, for Auto to pass on
	// to bucket elimination rather than search it again.
	plan *beGivenOrder
	// minFill is that order when it is the whole plain min-fill order
	// of the rows' graph: AOBB's first pseudo-tree try, for aobb and for
	// edac+aobb's AOBB.
	minFill []int
}

// Choose picks the exact solver for lp: bucket elimination when its
// tables (in row mode, or with the boundary when opts.Table) hold at most
// AutoBEEntries entries and fit the memory budget, its time and memory
// then being small and predictable. Past that, for rows (not opts.Table)
// whose functions are all at most binary once the boundary is fixed: EDAC
// when eliminating the variables of at most two neighbours removes at
// least a third of the interior (EDACElimShare) — sparse, partly
// tree-like graphs, where arc consistency and elimination do what AOBB's
// mini-bucket tables cannot within the budget; EDAC within a budget of
// checks (edacBudget), then AOBB, when a domain has EDACDomain values or
// more, or within edacTwoBudget checks when every domain has two values
// (binary grids: dead-end elimination and elimination during search make
// EDAC toulbar2's search there, 2–3× faster than AOBB at 20×20 to 40×40) — mini-bucket tables over such domains hold few variables, so
// AOBB's bound is coarse (frequency assignment, 24 values: AOBB past 20 s,
// EDAC 0.04 s), while EDAC's budget bounds the time lost where AOBB would
// have been the faster. The same, within edacTwoBudget checks, when the
// interior's induced width is one less than its size: the first variable
// eliminated neighbours all others, so every pseudo-tree is a chain and
// AOBB is plain branch and bound with a mini-bucket bound over a few of
// n variables, where EDAC's arc consistency bounds all of them (8 queens:
// EDAC 0.1 ms, AOBB 3 ms). The same, within edacBudget checks, for the
// other rows, binary or not, when AOBB's search space, of one min-fill
// pseudo-tree, is EDACSpace or more (random graphs over 4 and 5 values,
// the sequential ISCAS89 circuits; below it grids over 3 values, SPOT5,
// meeting scheduling and the combinational circuits, where AOBB is 9× to
// 300× faster). Otherwise AOBB, which runs within any budget (measured faster than EDAC on grids,
// random graphs, meeting scheduling and SPOT5 files of at most 10
// values). The min-fill elimination that sizes bucket elimination's
// tables stops once they pass what BE may have (Choice.AtLeast).
//
// One case comes before the sizing: rows whose functions are all binary
// over domains of at most two values, with edacFirstVars interior
// variables or more, get EDAC first within edacFirstPerVar checks a
// variable (Choice.first), and only when it passes them does the row
// size bucket elimination's tables (chooseSized) and take bucket
// elimination where they are small, else EDAC within edacTwoBudget
// checks, then AOBB. Dead-end elimination and elimination during search
// make EDAC fast there whatever the width (binary grids of 10×10 to 60×60
// answer within 3.7·10^6 checks), while the min-fill elimination that
// sizes the tables was a third to two thirds of the grids' EDAC time on
// one core (Width and Entries are then left at zero, AtLeast set).
//
// A second case comes before the sizing: rows with a function of more
// than two interior variables, every domain of two values, whole-number
// costs and edacFirstVars interior variables or more ask EDAC, within
// edacGapPerVar checks a variable, for an assignment at its root bound
// (EDAC.rootGap: past VAC at the root, the upper bound drops to the
// bound's next whole number), which is then an optimum; where there is
// none, the row goes where chooseSized sends it, AOBB for the rows it
// would have asked (AutoOptions.gapAsked). Rows whose min-degree
// elimination keeps bucket tables within AutoBEEntries entries
// (minDegreeWithin) are not asked: chooseSized gives them bucket
// elimination, cheaper than EDAC's root. The ISCAS89 circuits are
// bounded at their optimum at the root and answered within 1 to 10
// nodes, with no min-fill; the generated diagnosis circuits, whose
// optimum is 3 to 6 times their root bound, lose EDAC's build and root
// (docs/bench/auto-pick.md, "root gap"). chooseSized asks the same of
// such rows below edacFirstVars variables that it would give AOBB.
func Choose(lp *mva.LocalProblem, opts AutoOptions) Choice {
	if opts.Memory <= 0 {
		opts.Memory = DefaultMemory()
	}
	n := lp.NumInterior()
	if opts.Table || n < edacFirstVars || slices.Max(lp.Domains[lp.NB:]) > deeMaxSize {
		return chooseSized(lp, opts)
	}
	if allBinary(lp) {
		first := edacFirstPerVar * int64(n)
		return Choice{Name: "edac+aobb", AtLeast: true, budget: edacTwoBudget, first: first,
			Reason: fmt.Sprintf("auto chose edac+aobb: every function is binary, over two values (dead-end elimination), %d variables: edac first within %.3g checks, unsized; past them bucket elimination where its tables are small, else edac within %.3g checks, then aobb",
				n, float64(first), float64(edacTwoBudget))}
	}
	if wholeCosts(lp) && !minDegreeWithin(lp, AutoBEEntries) {
		first := edacGapPerVar * int64(n)
		return Choice{Name: "edac+aobb", AtLeast: true, gap: true, first: first,
			Reason: fmt.Sprintf("auto chose edac+aobb: functions of more than two variables over two values, whole-number costs, %d variables: edac first asked for an assignment at its root bound (VAC) within %.3g checks, unsized; where there is none, the solver the sizing of bucket elimination picks",
				n, float64(first))}
	}
	return chooseSized(lp, opts)
}

// edacFirstVars is the interior size from which Choose gives binary
// problems over two values EDAC before sizing bucket elimination: below
// it the sizing costs little (a 10×10 grid's min-fill 0.5 ms, the whole
// EDAC row 2 ms), and what Choose answered before stays.
const edacFirstVars = 64

// edacFirstPerVar is the checks a variable EDAC's first try gets under
// Choose's first case: 2048 a variable is 7.4·10^6 checks on a 60×60
// binary grid (3600 variables), which needs 3.7·10^6, and at most about
// 0.2 ms of one core a variable lost where bucket elimination then
// answers.
const edacFirstPerVar = 2048

// allBinary reports whether every function of lp has at most two
// interior variables.
func allBinary(lp *mva.LocalProblem) bool {
	for _, f := range lp.Funcs {
		in := 0
		for _, v := range f.Scope {
			if v >= lp.NB {
				in++
			}
		}
		if in > 2 {
			return false
		}
	}
	return true
}

// chooseSized is Choose once bucket elimination's tables are sized: the
// rules of Choose's comment but its first case.
func chooseSized(lp *mva.LocalProblem, opts AutoOptions) Choice {
	if opts.Memory <= 0 {
		opts.Memory = DefaultMemory()
	}
	limit := min(float64(AutoBEEntries), float64(opts.Memory)/beBytesPerEntry)
	// space is AOBB's search space of the min-fill pseudo-tree, or a
	// lower bound past EDACSpace (spaceOK), when the pass that sizes
	// bucket elimination measured it (see needSpace).
	plan, entries, done, space, spaceOK := beCostWithin(lp, opts.Table, limit)
	width := plan.width
	bytes := entries * beBytesPerEntry
	c := Choice{Width: width, Entries: entries, AtLeast: !done}
	if !opts.Table && len(plan.order) == lp.NumInterior() && (lp.Problem == nil || !lp.Problem.SearchOrder) {
		c.minFill = plan.order // MinFillSized's, whole: AOBB's first pseudo-tree try
	}
	if done && entries <= AutoBEEntries && bytes <= float64(opts.Memory) {
		c.Name = "be"
		c.plan = plan
		c.Reason = fmt.Sprintf("auto chose be: induced width %d, bucket tables of %.3g entries (%s), within 2^18 entries and the %s budget",
			width, entries, mib(bytes), mib(float64(opts.Memory)))
		return c
	}
	why := "more than 2^18 entries, where search is faster"
	if bytes > float64(opts.Memory) {
		why = "past the " + mib(float64(opts.Memory)) + " budget"
	}
	// need says what bucket elimination would need, for the reasons.
	need := fmt.Sprintf("bucket elimination would need tables of %.3g entries (%s) at induced width %d, %s", entries, mib(bytes), width, why)
	if !done {
		need = fmt.Sprintf("bucket elimination would need tables of more than %.3g entries (%s) at induced width %d or more, %s", entries, mib(bytes), width, why)
	}
	if !opts.Table {
		binary, n, elim := edacShape(lp)
		switch {
		case binary && n > 0 && float64(elim) >= EDACElimShare*float64(n):
			c.Name = "edac"
			c.Reason = fmt.Sprintf("auto chose edac: %s; every function is binary and %d of %d variables have at most two neighbours once eliminated",
				need, elim, n)
			return c
		case binary && n > 0 && slices.Max(lp.Domains[lp.NB:]) >= EDACDomain:
			c.Name = "edac+aobb"
			c.budget = edacBudget
			c.Reason = fmt.Sprintf("auto chose edac+aobb: %s; every function is binary, over up to %d values: edac within %.3g checks, then aobb",
				need, slices.Max(lp.Domains[lp.NB:]), float64(edacBudget))
			return c
		case binary && n > 1 && width >= n-1:
			c.Name = "edac+aobb"
			c.budget = edacTwoBudget
			c.Reason = fmt.Sprintf("auto chose edac+aobb: %s; every function is binary and every variable neighbours every other (a chain pseudo-tree, nothing for aobb to decompose): edac within %.3g checks, then aobb",
				need, float64(edacTwoBudget))
			return c
		case binary && n > 0 && slices.Max(lp.Domains[lp.NB:]) <= deeMaxSize:
			c.Name = "edac+aobb"
			c.budget = edacTwoBudget
			c.Reason = fmt.Sprintf("auto chose edac+aobb: %s; every function is binary, over two values (dead-end elimination): edac within %.3g checks, then aobb",
				need, float64(edacTwoBudget))
			return c
		case n > 0:
			sp, more := space, " or more (counted until past the threshold)"
			if !spaceOK {
				sp, more = searchSpace(lp), ""
			}
			if sp >= EDACSpace {
				c.Name = "edac+aobb"
				c.budget = edacBudget
				what := "every function is binary"
				if !binary {
					what = "functions of more than two variables"
				}
				c.Reason = fmt.Sprintf("auto chose edac+aobb: %s; %s and aobb's search space (min-fill pseudo-tree) is %.3g nodes%s, past %.0e: edac within %.3g checks, then aobb",
					need, what, sp, more, EDACSpace, float64(edacBudget))
				return c
			}
			if !binary && !opts.gapAsked && slices.Max(lp.Domains[lp.NB:]) <= 2 && wholeCosts(lp) {
				c.Name = "edac+aobb"
				c.gap = true
				c.budget = edacGapPerVar * int64(n)
				c.Reason = fmt.Sprintf("auto chose edac+aobb: %s; functions of more than two variables over two values, whole-number costs, aobb's search space (min-fill pseudo-tree) %.3g nodes, below %.0e: edac asked for an assignment at its root bound (VAC) within %.3g checks, else aobb",
					need, sp, EDACSpace, float64(c.budget))
				return c
			}
		}
	}
	c.Name = "aobb"
	c.Reason = "auto chose aobb: " + need
	return c
}

// EDACSpace is the size of AOBB's context-minimal search space (of the
// min-fill pseudo-tree, searchSpace) from which Choose gives the
// problems that no other rule of its takes EDAC first, within edacBudget
// checks, then AOBB. Measured (hearth solve --local edac / aobb, the
// solver's time in single runs; space in parentheses): random graphs of 100 and 60 variables
// over 4 and 5 values (4.1·10^11, 6.2·10^12) EDAC 82 and 657 ms, AOBB
// 212 and 797 ms; a 12×12 grid over 3 values (2.7·10^8) EDAC 65 ms,
// AOBB 4 ms; SPOT5 29 (2.6·10^8) EDAC 193 ms, AOBB 22 ms; meeting
// scheduling of 20 agents (1.8·10^7) EDAC past 20 s, AOBB 58 ms. The
// threshold sits between, a factor of about 40 from either side. Whole
// solves under auto (docs/bench/auto-pick.md): the two random graphs
// 3.8× and 1.4× faster than with AOBB, the others unchanged in route.
// The rule holds for functions of any arity (docs/bench/toulbar2-wider.md):
// the sequential ISCAS89 circuits s953, s1196 and s1238 (4.4·10^20,
// 4.6·10^16, 1.8·10^17) EDAC 19, 160 and 181 ms, AOBB 0.58, 0.42 and 1.45 s;
// the combinational c432, c499 and c880 (7.9·10^8, 1.5·10^8, 1.0·10^8)
// EDAC past 20 s, AOBB 15 to 52 ms; pedigree1 (1.6·10^7) and the Bayesian
// grid 75-16-5 (8.0·10^7) stay with AOBB too. Since the root-gap case
// (Choose's second), the ISCAS89 files are answered before this rule is
// reached; it still takes their rows where the question fails.
const EDACSpace = 1e10

// searchSpace returns the size of the context-minimal AND/OR search
// space of the pseudo-tree of one min-fill order of lp's interior, the
// boundary fixed (pseudoTree.space): the cheap part of what AOBB builds
// (it then tries more orders), a fraction of a millisecond to a few on
// the files of ../shared/data/wcsp.
func searchSpace(lp *mva.LocalProblem) float64 {
	scopes := orderScopes(lp, false)
	g := mva.NewGraph(len(lp.Vars))
	for _, sc := range scopes {
		g.AddClique(sc)
	}
	interior := make([]int, lp.NumInterior())
	for k := range interior {
		interior[k] = lp.NB + k
	}
	order, _ := g.MinFill(interior)
	return newPseudoTree(len(lp.Vars), lp.NB, scopes, order).space(lp.Domains)
}

// EDACElimShare is the share of the interior that elimination of the
// variables of at most two neighbours must remove for Choose to prefer EDAC
// to AOBB on binary problems. Measured end to end (hearth gen, user CPU
// on 2 shared cores): a scale-free graph of 150 variables (74 eliminated)
// EDAC 0.3 s, AOBB past 20 s; a random graph of 60 (7 eliminated) AOBB
// 0.8 s, EDAC 3.4 s; binary grids (a few eliminated) AOBB 0.1 s, EDAC up
// to past 20 s.
const EDACElimShare = 1.0 / 3

// interiorPair returns the number of interior variables of scope (those
// from nb on) and, as interior indices, its last two (x before y; -1
// where there are fewer): edacShape's two passes over the functions.
func interiorPair(scope []int, nb int) (x, y, in int) {
	x, y = -1, -1
	for _, v := range scope {
		if v >= nb {
			in++
			x, y = y, v-nb
		}
	}
	return x, y, in
}

// edacShape reports whether every function of lp has at most two interior
// variables, the interior's size and, when binary, how many of its
// variables EDAC eliminates before search (planElimination's rule on the
// graph alone, so that Choose builds no solver it may not use). The
// neighbour sets are short lists, sorted and deduplicated once, where a
// map a variable was a tenth of `auto`'s choice on an 80-node scale-free
// graph (`TestEDACShapeMatchesMaps` against the maps).
func edacShape(lp *mva.LocalProblem) (binary bool, n, elim int) {
	n = lp.NumInterior()
	deg := make([]int32, n)
	for _, f := range lp.Funcs {
		x, y, in := interiorPair(f.Scope, lp.NB)
		if in > 2 {
			return false, n, 0
		}
		if in == 2 && x != y {
			deg[x]++
			deg[y]++
		}
	}
	// Each list has room for two more: an elimination adds at most one
	// neighbour to each of its two, and removes one from each first.
	total := 0
	for _, d := range deg {
		total += int(d) + 2
	}
	slab := make([]int32, total)
	nbrs := make([][]int32, n)
	for x, d := range deg {
		nbrs[x], slab = slab[:0:int(d)+2], slab[int(d)+2:]
	}
	for _, f := range lp.Funcs {
		x, y, in := interiorPair(f.Scope, lp.NB)
		if in == 2 && x != y {
			nbrs[x] = append(nbrs[x], int32(y))
			nbrs[y] = append(nbrs[y], int32(x))
		}
	}
	for x, l := range nbrs {
		slices.Sort(l)
		nbrs[x] = slices.Compact(l)
	}
	// link adds y to x's neighbours unless there.
	link := func(x, y int32) {
		if !slices.Contains(nbrs[x], y) {
			nbrs[x] = append(nbrs[x], y)
		}
	}
	gone := make([]bool, n)
	for {
		x := -1
		for v := range n {
			if !gone[v] && len(nbrs[v]) <= maxElimDegree {
				x = v
				break
			}
		}
		if x < 0 {
			return true, n, elim
		}
		ys := nbrs[x]
		for _, y := range ys {
			l := nbrs[y]
			i := slices.Index(l, int32(x))
			l[i] = l[len(l)-1]
			nbrs[y] = l[:len(l)-1]
		}
		if len(ys) == 2 {
			link(ys[0], ys[1])
			link(ys[1], ys[0])
		}
		gone[x] = true
		elim++
	}
}

// Auto returns the solver Choose picks for lp, with the memory budget
// passed on, and the choice.
func Auto(lp *mva.LocalProblem, opts AutoOptions) (mva.LocalSolver, Choice, error) {
	if opts.Memory <= 0 {
		opts.Memory = DefaultMemory()
	}
	c := Choose(lp, opts)
	switch c.Name {
	case "edac":
		return NewEDACVAC(lp), c, nil
	case "edac+aobb":
		e := NewEDACVAC(lp)
		e.budget = c.budget
		s := &edacThenAOBB{lp: lp, edac: e, memory: opts.Memory, first: c.first, order: c.minFill}
		e.rootGap = c.gap
		// The root-gap question needs no first upper bound: it sets
		// its own, past the root bound.
		e.noLocalSearch = c.gap
		if c.gap && c.first > 0 {
			s.gapFirst, s.first, e.budget = true, 0, c.first
		}
		if c.budget == edacBudget {
			s.stale = edacStaleNodes
		}
		return s, c, nil
	case "be":
		maxEntries := int(min(float64(opts.Memory)/beBytesPerEntry, math.MaxInt32))
		be, err := NewBE(lp, BEOptions{MaxEntries: maxEntries, plan: c.plan})
		if err != nil {
			return nil, c, err
		}
		return be, c, nil
	}
	return NewAOBB(lp, AOBBOptions{Memory: opts.Memory, minFill: c.minFill}), c, nil
}

// mib formats bytes for notes.
func mib(b float64) string {
	switch {
	case b >= 1<<40:
		return fmt.Sprintf("%.3g TiB", b/(1<<40))
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	}
	return fmt.Sprintf("%.0f KiB", math.Ceil(b/(1<<10)))
}

// beCost returns the induced width of bucket elimination's order of lp's
// interior (problemOrder, with the boundary as neighbours never eliminated
// when table, else with the boundary fixed, as BE's rows run) and the
// entries of its bucket tables in all, as float64 so that no width
// overflows. The order comes with the width, as a plan NewBE takes
// (BEOptions.plan) instead of searching again.
func beCost(lp *mva.LocalProblem, table bool) (*beGivenOrder, float64) {
	scopes := orderScopes(lp, table)
	interior := make([]int, lp.NumInterior())
	for k := range interior {
		interior[k] = lp.NB + k
	}
	order, width, entries := problemOrder(lp, scopes, interior, false)
	return &beGivenOrder{order: order, width: width, table: table}, entries
}

// beCostWithin is beCost for Choose: the min-fill elimination stops once
// its tables pass limit entries (done false; the plan is then partial, its
// width and the entries so far lower bounds). Problems that search their
// order (SearchOrder) get beCost's whole answer.
//
// Once the tables pass limit, in row mode, where chooseSized may reach its
// search-space rule (needSpace, asked only then), the same pass also
// measures AOBB's search space of the min-fill pseudo-tree (searchSpace's),
// going on until it reaches EDACSpace (then a lower bound) or the order is
// whole; spaceOK says it did. searchSpace ran a second min-fill over the
// same graph with the same ties, so the order, and the space, are the
// same.
func beCostWithin(lp *mva.LocalProblem, table bool, limit float64) (plan *beGivenOrder, entries float64, done bool, sp float64, spaceOK bool) {
	if lp.Problem != nil && lp.Problem.SearchOrder {
		plan, entries := beCost(lp, table)
		return plan, entries, true, 0, false
	}
	g := mva.NewGraph(len(lp.Vars))
	for _, sc := range orderScopes(lp, table) {
		g.AddClique(sc)
	}
	interior := make([]int, lp.NumInterior())
	for k := range interior {
		interior[k] = lp.NB + k
	}
	r := g.MinFillSized(interior, lp.Domains, limit, func() float64 {
		if spaceOK = needSpace(lp, table); spaceOK {
			return EDACSpace
		}
		return 0
	})
	sp = r.Space
	if math.IsInf(sp, 0) {
		sp = math.MaxFloat64 // as pseudoTree.space
	}
	return &beGivenOrder{order: r.Order, width: r.Width, table: table}, r.Entries, r.Done, sp, spaceOK
}

// needSpace reports whether chooseSized's search-space rule may be
// reached on lp's rows, should bucket elimination's tables be too large:
// the rows that no binary rule of chooseSized takes whatever the width
// (functions of more than two interior variables, or binary ones over 3
// to EDACDomain-1 values, with few variables eliminated before search).
// Only then does the pass that sizes the tables go on to measure AOBB's
// search space: elsewhere it stops as soon as they are too large.
func needSpace(lp *mva.LocalProblem, table bool) bool {
	n := lp.NumInterior()
	if table || n == 0 {
		return false
	}
	if !allBinary(lp) {
		return true
	}
	if d := slices.Max(lp.Domains[lp.NB:]); d <= deeMaxSize || d >= EDACDomain {
		return false
	}
	_, _, elim := edacShape(lp)
	return float64(elim) < EDACElimShare*float64(n)
}

// orderScopes returns lp's function scopes as bucket elimination's order
// sees them: whole for a table, without the boundary (fixed) for rows.
func orderScopes(lp *mva.LocalProblem, table bool) [][]int {
	scopes := make([][]int, 0, len(lp.Funcs))
	for _, f := range lp.Funcs {
		var sc []int
		for _, v := range f.Scope {
			if table || v >= lp.NB {
				sc = append(sc, v)
			}
		}
		scopes = append(scopes, sc)
	}
	return scopes
}

// NewBEWithin returns bucket elimination for lp if its row tables (cost
// and argmin, all buckets together) fit memory bytes, and otherwise an
// error wrapping ErrTooLarge that says how much they need: refused up
// front, never swapping. memory <= 0 means DefaultMemory().
func NewBEWithin(lp *mva.LocalProblem, memory int64) (*BE, error) {
	if memory <= 0 {
		memory = DefaultMemory()
	}
	plan, entries := beCost(lp, false)
	if need := entries * beBytesPerEntry; need > float64(memory) {
		return nil, fmt.Errorf("bucket elimination: induced width %d: its tables need %s, past the %s budget (use aobb): %w",
			plan.width, mib(need), mib(float64(memory)), ErrTooLarge)
	}
	return NewBE(lp, BEOptions{MaxEntries: int(min(float64(memory)/beBytesPerEntry, math.MaxInt32)), plan: plan})
}

// EDACDomain is the domain size from which Choose tries EDAC first on
// binary problems (see Choose).
const EDACDomain = 16

// edacBudget is the checks EDAC gets under edac+aobb before AOBB takes
// the row over: about 2 s of one core. Measured (checks to the optimum):
// frequency assignment of 80 and 160 links 1.1·10^7 and 1.1·10^8, the
// 150-node scale-free graph 2·10^7, a 20×20 binary grid 5·10^5; the
// 60-node random graph 2.4·10^8, which AOBB solves in 0.8 s.
const edacBudget = 1 << 27

// edacTwoBudget is the checks EDAC gets under edac+aobb on binary
// problems over two values, where dead-end elimination and elimination
// during search make it toulbar2's search: about 30 s of one loaded core.
// Measured (checks to the optimum, issue 18's third pass): binary grids of
// 20×20 to 40×40 1.2·10^5 to 10^6 (AOBB 2–10× slower), a 60×60 grid
// 1.7·10^8 in 28 s of one loaded core (39061 nodes; toulbar2 0.2 s), where
// AOBB passes 60 s and 800 MB. No public file of ../shared/data/wcsp
// takes this rule; past the budget AOBB answers.
const edacTwoBudget = 1 << 28

// edacThenAOBB answers a row by EDAC within its budget of checks and,
// when EDAC passes it, by AOBB (made at the first such row). Both are
// exact, and the budget counts checks, not time, so the answer does not
// depend on the machine's load. With first (Choose's first case), EDAC
// first tries the row within first checks; past them, chooseSized sizes
// bucket elimination once, and the rows go to bucket elimination where it
// chose it, else as above.
type edacThenAOBB struct {
	lp     *mva.LocalProblem
	edac   *EDAC
	aobb   *AOBB
	memory int64
	byAOBB bool // the last row was AOBB's
	first  int64
	be     *BE
	sized  string // chooseSized's reason, once it ran
	byBE   bool   // the last row was bucket elimination's
	// aobbOnly: chooseSized, past EDAC's first budget, chose AOBB.
	aobbOnly bool
	// stale, when positive, sends a row to AOBB once EDAC searched that
	// many nodes without improving its first upper bound (EDAC.staleNodes);
	// wasStale says the last row went so.
	stale    int64
	wasStale bool
	// gapMissed: a row under EDAC.rootGap had no assignment at its root
	// bound, or passed its budget; the later rows go to AOBB.
	gapMissed bool
	// gapFirst: the first row asks the root-gap question before the
	// sizing (Choose's second case); gapFirstMissed: it found nothing at
	// its root bound, and the rows went where size sent them.
	gapFirst, gapFirstMissed bool
	// order is the sizing's whole min-fill order, for AOBB (Choice.minFill).
	order []int
}

func (s *edacThenAOBB) SolveRow(ctx context.Context, boundary, interior []int) (float64, error) {
	s.byBE = false
	switch {
	case s.gapFirst:
		c, err := s.edac.SolveRow(ctx, boundary, interior)
		if s.byAOBB = false; !errors.Is(err, errRootGap) && !errors.Is(err, errBudget) {
			return c, err
		}
		s.gapFirst, s.gapFirstMissed = false, true
		s.edac.rootGap, s.edac.noLocalSearch = false, false
		if err := s.size(); err != nil {
			return 0, err
		}
	case s.first > 0 && s.first < s.edac.budget:
		budget := s.edac.budget
		s.edac.budget = s.first
		c, err := s.edac.SolveRow(ctx, boundary, interior)
		s.edac.budget = budget
		if s.byAOBB = false; !errors.Is(err, errBudget) {
			return c, err
		}
		s.first = 0
		if err := s.size(); err != nil {
			return 0, err
		}
	}
	if s.be != nil {
		s.byBE = true
		return s.be.SolveRow(ctx, boundary, interior)
	}
	if s.aobbOnly || s.gapMissed {
		return s.solveAOBB(ctx, boundary, interior)
	}
	s.edac.staleNodes = s.stale
	c, err := s.edac.SolveRow(ctx, boundary, interior)
	s.byAOBB = errors.Is(err, errBudget) || errors.Is(err, errStale) || errors.Is(err, errRootGap)
	if !s.byAOBB {
		return c, err
	}
	s.wasStale = errors.Is(err, errStale)
	// A row whose root bound is not its optimum says the problem is not
	// one VAC solves at the root: the later rows go to AOBB at once
	// rather than each building EDAC's root again.
	s.gapMissed = s.edac.rootGap
	return s.solveAOBB(ctx, boundary, interior)
}

// size sends the rows, once EDAC's first try failed (Choose's first
// cases), where chooseSized sends them, EDAC's budget included: keeping
// the one Auto gave (edacTwoBudget) sent a row that chooseSized gives
// AOBB back to EDAC for up to 2^28 checks. The root-gap question, once
// asked, is not asked again (AutoOptions.gapAsked).
func (s *edacThenAOBB) size() error {
	sc := chooseSized(s.lp, AutoOptions{Memory: s.memory, gapAsked: s.gapFirstMissed})
	s.sized, s.order = sc.Reason, sc.minFill
	switch {
	case sc.Name == "be":
		be, err := NewBE(s.lp, BEOptions{MaxEntries: int(min(float64(s.memory)/beBytesPerEntry, math.MaxInt32)), plan: sc.plan})
		if err != nil {
			return err
		}
		s.be = be
	case sc.Name == "aobb":
		s.aobbOnly = true
	case sc.Name == "edac":
		s.edac.budget = 0
	default: // edac+aobb
		s.edac.budget = sc.budget
		if sc.budget == edacBudget {
			s.stale = edacStaleNodes
		}
	}
	return nil
}

// minDegreeWithin reports whether a min-degree elimination of lp's
// interior, the boundary fixed, keeps bucket elimination's tables within
// limit entries in all: Choose's second case asks it before the root-gap
// question, so that low-width rows keep bucket elimination, sized by
// chooseSized, without first paying EDAC's root (a circuit wired within
// 8 lines, width 7: 20 → 25 million instructions for the whole solve).
// Min-degree rather than min-fill: no fill scores, so the pass costs
// little where it stops (the part of min-fill's pass up to 2^18 entries
// took back a third to half of what the question saves on the ISCAS89
// files), and its tables are rarely smaller than min-fill's, so a row it
// finds small is one chooseSized gives bucket elimination.
func minDegreeWithin(lp *mva.LocalProblem, limit float64) bool {
	n := lp.NumInterior()
	if n > minDegreeVars {
		return false
	}
	words := (n + 63) / 64
	bits := make([]uint64, n*words) // row x: x's neighbours
	row := func(x int) []uint64 { return bits[x*words : (x+1)*words] }
	var in []int
	for _, f := range lp.Funcs {
		in = in[:0]
		for _, v := range f.Scope {
			if v >= lp.NB {
				in = append(in, v-lp.NB)
			}
		}
		for _, x := range in {
			rx := row(x)
			for _, y := range in {
				if x != y {
					rx[y/64] |= 1 << (y % 64)
				}
			}
		}
	}
	deg := func(x int) int {
		d := 0
		for _, w := range row(x) {
			d += bits64.OnesCount64(w)
		}
		return d
	}
	// Buckets of variables by degree, the stale entries skipped (dg
	// holds the current degrees), lo the least degree that may be
	// queued.
	dg := make([]int, n)
	buckets := make([][]int, n)
	for x := range n {
		dg[x] = deg(x)
		buckets[dg[x]] = append(buckets[dg[x]], x)
	}
	gone := make([]bool, n)
	entries, lo := 0.0, 0
	for {
		for lo < n && len(buckets[lo]) == 0 {
			lo++
		}
		if lo == n {
			return true
		}
		b := buckets[lo]
		x := b[len(b)-1]
		buckets[lo] = b[:len(b)-1]
		if gone[x] || dg[x] != lo {
			continue
		}
		rx := row(x)
		t := float64(lp.Domains[lp.NB+x])
		for k, w := range rx {
			for ; w != 0; w &= w - 1 {
				t *= float64(lp.Domains[lp.NB+k*64+bits64.TrailingZeros64(w)])
			}
		}
		if entries += t; entries > limit {
			return false
		}
		gone[x] = true
		for k, w := range rx {
			for ; w != 0; w &= w - 1 {
				y := k*64 + bits64.TrailingZeros64(w)
				ry := row(y)
				for i := range ry {
					ry[i] |= rx[i]
				}
				ry[y/64] &^= 1 << (y % 64)
				ry[x/64] &^= 1 << (x % 64)
				if d := deg(y); d != dg[y] {
					dg[y] = d
					buckets[d] = append(buckets[d], y)
					lo = min(lo, d)
				}
			}
		}
	}
}

// minDegreeVars bounds the rows minDegreeWithin measures (its bit rows
// take n²/8 bytes: 0.5 MiB at 2048); larger rows are asked the root-gap
// question at once.
const minDegreeVars = 2048

// wholeCosts reports whether every cost of lp is a whole number (or
// Hard), as EDAC's integral rows are: the rows edac+aobb's root-gap
// question is asked on (see edacGapPerVar).
func wholeCosts(lp *mva.LocalProblem) bool {
	for _, f := range lp.Funcs {
		if !allWhole(f.Costs) {
			return false
		}
	}
	return true
}

// edacGapPerVar is the checks a variable EDAC gets, from the row's
// start, for the root-gap question (Choice.gap, EDAC.rootGap) on rows
// whose functions are not all binary, over two values, with whole-number
// costs. EDAC with VAC at the root bounds the ISCAS89 circuits at their
// optimum exactly, and its search below the bound's next whole number
// then ends within 1 to 10 nodes (issue 18, iscasroute; whole rows,
// checks a variable: s386 120, s953 87, s1196 105, s1238 115, s1423 90,
// s1488 153, s1494 150, c432 292, c499 108, c880 88), where AOBB took 1.4
// to 2 times as long as EDAC and EDAC's own search 27 to 134 nodes. On
// the generated diagnosis circuits (gen_circuit200/500/800, optimum 195,
// 473, 717 against root bounds 36, 116, 117) the search below the mark
// ends at its first node. The budget bounds what a row could lose where
// the question takes a search of its own.
const edacGapPerVar = 1024

// edacStaleNodes is the nodes EDAC may search under edac+aobb within
// edacBudget checks without improving the upper bound its root's local
// search gave before the row goes to AOBB (EDAC.staleNodes). Measured (one row,
// checks to the optimum): SPOT5 408b and 42b (binary, up to 44 values)
// never improve it, over 55093 and 19150 nodes (6.7·10^7 checks), where
// AOBB is 4.5× and 1.4× faster; every other file those rules give EDAC
// improves it within 72 nodes or ends within 1000 (gen_fap32/40/80 11, 0
// and 103 nodes, gen_randgraph100 and 60 improve by nodes 37 and 72, the
// ISCAS89 circuits end within 70). A problem whose local search finds the
// optimum and that EDAC proves in more nodes loses by it.
const edacStaleNodes = 1024

// solveAOBB answers a row by AOBB, made at the first such row.
func (s *edacThenAOBB) solveAOBB(ctx context.Context, boundary, interior []int) (float64, error) {
	s.byAOBB = true
	if s.aobb == nil {
		s.aobb = NewAOBB(s.lp, AOBBOptions{Memory: s.memory, minFill: s.order})
	}
	return s.aobb.SolveRow(ctx, boundary, interior)
}

func (s *edacThenAOBB) Checks() int64 {
	c := s.edac.Checks()
	if s.aobb != nil {
		c += s.aobb.Checks()
	}
	if s.be != nil {
		c += s.be.Checks()
	}
	return c
}

// Describe says which solver answered the last row, for a result's notes.
func (s *edacThenAOBB) Describe() string {
	first := fmt.Sprintf("edac passed its first budget (%d nodes)", s.edac.Nodes())
	if s.gapFirstMissed {
		first = fmt.Sprintf("edac found no assignment at its root bound %v (%d nodes)", s.edac.rootLB, s.edac.Nodes())
	}
	if s.byBE {
		return fmt.Sprintf("%s; %s", first, strings.TrimPrefix(s.sized, "auto "))
	}
	if s.byAOBB && s.aobbOnly {
		return fmt.Sprintf("%s; %s; %s", first, strings.TrimPrefix(s.sized, "auto "), s.aobb.Describe())
	}
	if s.byAOBB && s.edac.rootGap && s.gapMissed {
		return fmt.Sprintf("edac found no assignment at its root bound %v within %.3g checks (%d nodes); %s", s.edac.rootLB, float64(s.edac.budget), s.edac.Nodes(), s.aobb.Describe())
	}
	if s.byAOBB && s.wasStale {
		return fmt.Sprintf("edac found no better upper bound than its local search's in %d nodes; %s", s.stale, s.aobb.Describe())
	}
	if s.byAOBB {
		return fmt.Sprintf("edac passed its budget of %.3g checks (%d nodes); %s", float64(s.edac.budget), s.edac.Nodes(), s.aobb.Describe())
	}
	return s.edac.Describe()
}
