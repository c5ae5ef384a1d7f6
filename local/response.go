package local

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/hearth-dcop/hearth/mva"
)

// impliedMaxEntries bounds the table of a function whose implied pairs
// withImpliedPairs reads (an SHDS home's device constraints: 576 entries
// at most).
const impliedMaxEntries = 1 << 16

// withImpliedPairs returns lp with, for every function of three or more
// variables, all interior, whose table has at most impliedMaxEntries
// entries, the binary hard constraints it implies: for each pair of its
// variables, the pairs of values that no finite entry of the function
// allows are Hard. It is the same problem (every added entry is Hard only
// where the function already is), and added reports whether there was
// any such pair.
//
// Why: EDAC propagates an n-ary function only into its variables' unary
// costs, so the storage chains and device couplings of an SHDS home
// (hard ternary and 7-ary tables, the costs all unary) leave its arc
// consistency little to move costs through. With the pairs spelled out,
// as toulbar2's preprocessing does (its -n, "projects n-ary cost
// functions on all binary cost functions": without it toulbar2 passes a
// minute on dm_21_1_6's hard response problems, with it 0.03–0.2 s), EDAC
// solves them in 0.02–0.25 s where AOBB takes 0.4–45 s (docs/DESIGN.md).
func withImpliedPairs(lp *mva.LocalProblem) (out *mva.LocalProblem, added bool) {
	var extra []mva.LocalFunction
	for _, f := range lp.Funcs {
		if len(f.Scope) < 3 || len(f.Costs) > impliedMaxEntries {
			continue
		}
		interior := true
		for _, v := range f.Scope {
			interior = interior && v >= lp.NB
		}
		if !interior {
			continue
		}
		extra = append(extra, impliedPairs(lp.Domains, f)...)
	}
	if len(extra) == 0 {
		return lp, false
	}
	q := *lp
	q.Funcs = append(append(make([]mva.LocalFunction, 0, len(lp.Funcs)+len(extra)), lp.Funcs...), extra...)
	return &q, true
}

// impliedPairs returns the binary hard constraints f implies on its pairs
// of variables (see withImpliedPairs), those that forbid some pair.
func impliedPairs(doms []int, f mva.LocalFunction) []mva.LocalFunction {
	a := len(f.Scope)
	d := make([]int, a)
	for p, v := range f.Scope {
		d[p] = doms[v]
	}
	// allowed[k] per pair k of positions (p < q): value pairs, row-major.
	type pair struct{ p, q int }
	var pairs []pair
	var allowed [][]bool
	for p := range a {
		for q := p + 1; q < a; q++ {
			pairs = append(pairs, pair{p, q})
			allowed = append(allowed, make([]bool, d[p]*d[q]))
		}
	}
	x := make([]int, a)
	for e, c := range f.Costs {
		if !mva.IsHard(c) {
			for k, pq := range pairs {
				allowed[k][x[pq.p]*d[pq.q]+x[pq.q]] = true
			}
		}
		// Next tuple: the last position fastest, as the table's layout.
		for p := a - 1; p >= 0 && e+1 < len(f.Costs); p-- {
			if x[p]++; x[p] < d[p] {
				break
			}
			x[p] = 0
		}
	}
	var out []mva.LocalFunction
	for k, pq := range pairs {
		costs := make([]float64, len(allowed[k]))
		forbids := false
		for i, ok := range allowed[k] {
			if !ok {
				costs[i], forbids = mva.Hard, true
			}
		}
		if forbids {
			out = append(out, mva.LocalFunction{Scope: []int{f.Scope[pq.p], f.Scope[pq.q]}, Costs: costs})
		}
	}
	return out
}

// responseSolver is Exact's solver, for best responses, of a problem whose
// n-ary functions imply binary hard constraints (withImpliedPairs: an SHDS
// home's device constraints): EDAC on the problem with the implied pairs,
// and where EDAC passes its budget, AOBB as Exact made it before (with
// ShiftRows). On the responses of dm_21_1_6 that passed 2^28 checks in
// AOBB inside MGM, EDAC took 0.02–0.25 s each (docs/DESIGN.md). AOBB is
// built when first needed: Width (the responder's response_width asks
// for its pseudo-tree's) or a row EDAC did not end.
type responseSolver struct {
	lp     *mva.LocalProblem
	edac   *EDAC
	aobb   *AOBB
	byAOBB bool // the last row was AOBB's
	// edacChecks, when positive, is EDAC's budget whatever the call's
	// (tests: 1 hands every row to AOBB).
	edacChecks int64
	// prev is the last row's answer (hasPrev), whose cost at the next
	// row is EDAC's first upper bound there (EDAC.startUB): a question
	// of MGM differs from the last one in a few neighbours' values, and
	// the last answer is often close to the new optimum. full is scratch.
	prev, full []int
	hasPrev    bool
	noPrev     bool // tests and measurements: no first bound from prev
	fromPrev   bool // the last row's answer was prev (tests)
}

// responseEDACBudget is EDAC's budget of checks on a row asked without
// one (SolveRow), before AOBB takes it over: edacThenAOBB's.
const responseEDACBudget = edacBudget

// newResponseSolver returns the solver of lp, withPairs being lp with its
// implied pairs.
func newResponseSolver(lp, withPairs *mva.LocalProblem) *responseSolver {
	return &responseSolver{lp: lp, edac: NewEDAC(withPairs), prev: make([]int, lp.NumInterior()), full: make([]int, len(lp.Vars))}
}

func (s *responseSolver) getAOBB() *AOBB {
	if s.aobb == nil {
		s.aobb = NewAOBB(s.lp, AOBBOptions{ShiftRows: true})
	}
	return s.aobb
}

// SolveRow finds the cheapest interior assignment for the boundary values:
// EDAC's within responseEDACBudget checks, else AOBB's.
func (s *responseSolver) SolveRow(ctx context.Context, boundary, interior []int) (float64, error) {
	c, _, done, err := s.SolveRowWithin(ctx, boundary, interior, math.Inf(1), 0)
	if err != nil || done {
		return c, err
	}
	return 0, errors.New("internal error: an unbounded response solve ran out of checks")
}

// SolveRowWithin is AOBB.SolveRowWithin's contract (the responder's
// withinSolver): EDAC within the budget of checks (0: within
// responseEDACBudget, then AOBB without one), and where EDAC passes it,
// AOBB within the same budget again; done false when both passed theirs.
// EDAC searches without ub (its optimum is compared with it after).
func (s *responseSolver) SolveRowWithin(ctx context.Context, boundary, interior []int, ub float64, checks int64) (c float64, found, done bool, err error) {
	s.byAOBB = false
	switch {
	case s.edacChecks > 0:
		s.edac.budget = s.edacChecks
	case checks > 0:
		s.edac.budget = checks
	default:
		s.edac.budget = responseEDACBudget
	}
	start := math.Inf(1)
	if s.hasPrev && !s.noPrev {
		copy(s.full, boundary)
		copy(s.full[len(boundary):], s.prev)
		start = s.lp.Eval(s.full)
	}
	s.edac.startUB, s.edac.hasStart = start, !mva.IsHard(start)
	c, err = s.edac.SolveRow(ctx, boundary, interior)
	s.edac.hasStart = false
	s.fromPrev = err == nil && s.edac.hasStartAnswer(start)
	if s.fromPrev {
		// Nothing cheaper than the last answer: it is an optimum.
		c = start
		copy(interior, s.prev)
	}
	switch {
	case err == nil:
		s.remember(c, interior)
		if mva.IsHard(c) || !(c < ub) {
			clear(interior)
			return c, false, true, nil
		}
		return c, true, true, nil
	case !errors.Is(err, errBudget):
		return 0, false, false, fmt.Errorf("response: %w", err)
	}
	s.byAOBB = true
	c, found, done, err = s.getAOBB().SolveRowWithin(ctx, boundary, interior, ub, max(checks, 0))
	if err == nil && found {
		s.remember(c, interior)
	}
	return c, found, done, err
}

// remember keeps a row's answer of cost c as the next row's first bound.
func (s *responseSolver) remember(c float64, interior []int) {
	s.hasPrev = !mva.IsHard(c)
	if s.hasPrev {
		copy(s.prev, interior)
	}
}

// Width returns the induced width of AOBB's pseudo-tree.
func (s *responseSolver) Width() int { return s.getAOBB().Width() }

// Checks returns the function entries both solvers read.
func (s *responseSolver) Checks() int64 {
	c := s.edac.Checks()
	if s.aobb != nil {
		c += s.aobb.Checks()
	}
	return c
}

// Describe says which solver answered the last row, for notes.
func (s *responseSolver) Describe() string {
	if s.byAOBB {
		return fmt.Sprintf("edac with implied pairs passed its budget (%d nodes); %s", s.edac.Nodes(), s.aobb.Describe())
	}
	return "edac with implied pairs: " + s.edac.Describe()
}
