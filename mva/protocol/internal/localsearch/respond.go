package localsearch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
)

// Response is how an agent computes its unilateral best response
// (parameter "response").
type Response int

const (
	// ResponseAuto enumerates the MVA table when it has at most
	// EnumerateRows rows and solves otherwise (the default).
	ResponseAuto Response = iota
	// ResponseEnumerate asks the local view for the cost of every row
	// (Neighbourhood.BestMove): |D|^|B_i| row costs per response.
	ResponseEnumerate
	// ResponseSolve minimises over all of the agent's variables at once
	// with one exact local solve of its own functions plus its external
	// functions conditioned on the neighbours' values.
	ResponseSolve
	// ResponseBlocks is ResponseAuto where bucket elimination solves the
	// response within response_entries, and where it would not, the
	// memory-bounded exact solve within response_checks checks (0: not
	// tried; nor where its pseudo-tree's induced width passes
	// response_width) and block coordinate descent (blockSearch) past them: an
	// approximate response that never makes ℓ_i worse, for agents too
	// wide to solve exactly in time. An agent whose exact solve passed
	// the budget once, or whose exact solves together passed
	// response_total checks, answers by block descent from then on. It
	// needs a feasible start (init = 3).
	//
	// An exact response within the budget is the solver's minimiser when
	// it is strictly cheaper than the current row: a row of least ℓ_i,
	// not necessarily the lowest-index one. The lowest-index rule makes
	// the solve path agree with enumeration, which these agents, too wide
	// for either, never run; its restricted solves each cost about what
	// the first one did (3 of an SHDS home's 4 solves), to prove that no
	// other row ties with it, which on SHDS homes none did.
	ResponseBlocks
)

// ResponseNames name the values of "response" (-p response=blocks reads
// as response=3).
var ResponseNames = map[string]Response{"auto": ResponseAuto, "enumerate": ResponseEnumerate, "solve": ResponseSolve, "blocks": ResponseBlocks}

// EnumerateRows is the largest table ResponseAuto enumerates. Up to a few
// thousand rows the row costs are cached table look-ups and enumeration is
// cheaper than a solve; past it the number of rows (4^12 for an SHDS home)
// makes enumeration hopeless while the solve's cost depends only on the
// induced width of the agent's problem.
const EnumerateRows = 4096

// DefaultResponseEntries bounds the intermediate tables of the bucket
// elimination that solves a response (parameter "response_entries",
// 128 MiB of float64); past it, or with response_entries = 0, the
// response is solved by local.Exact (AND/OR branch and bound, or EDAC on
// the binary hard constraints the agent's n-ary tables imply, AOBB past
// its budget), within its memory budget.
const DefaultResponseEntries = 1 << 24

// Responder computes an agent's unilateral best response, MGM's step 2:
// the row minimising ℓ_i with the neighbours at their current values, and
// the gain of moving there.
//
// Both paths follow one rule, so that a run does not depend on which one
// ran: the current row is kept when no row is strictly cheaper; otherwise
// the result is the lowest-index minimiser, and the costs and gain are
// ℓ_i of the rows as the enumeration computes them (Neighbourhood.Ell:
// the local view's row cost plus the external functions, as pairs).
//
// The solve path builds, once, a local problem over the agent's variables
// (boundary and interior) whose "boundary", in the sense of
// mva.LocalProblem, is one mask selector per own boundary variable (and
// the neighbours' variables of the external functions that read two or
// more own boundary variables). Its functions are the agent's own, the
// masks, and the external ones conditioned on the neighbours' values:
// those that read one own boundary variable summed into one aggregate
// per variable, refilled before each response (respContext), so that the
// problem does not grow with the number of neighbours. One SolveRow then
// minimises over all the agent's variables: the boundary part of the
// minimiser is a best row.
//
// The lowest-index minimiser is recovered by restricting, boundary
// variable by boundary variable in row order, the value below the current
// candidate's (a mask selector turns a unary 0/Hard factor on) and solving
// again while the optimum stays the same: a lexicographically smaller
// minimiser must differ first at some variable with a smaller value. The
// masks add exact zeros to the allowed assignments, so the solver
// evaluates every assignment with the same float operations in every
// restricted solve and "the optimum stays the same" is an exact test.
// These solves run only when the current row is not a minimiser. The
// solver's floats and ℓ_i's pairs sum in different orders; when that
// rounding makes two rows compare differently (never with integer or
// dyadic costs), the solve path's row can differ from the enumeration's
// by the rounding error, and the current row is kept unless ℓ_i, as
// pairs, says the solver's row is strictly cheaper, so MGM stays monotone.
//
// Hard constraints: the first solve has Hard entries as +Inf, so a finite
// optimum is a row with no hard violation. When every row violates one
// (the optimum is Hard), the response is solved again on a weighted
// problem in which each violated external entry costs P, a power of two
// larger than twice the largest possible soft sum, and a binary variable
// z lets the agent give up its local functions for P (z = 1: they cost
// nothing), which is how ℓ_i counts a row with no feasible completion:
// one violation, no soft cost. P·violations + soft orders rows exactly as
// the pairs do. When P would overflow (costs near the float range) the
// response enumerates instead.
type Responder struct {
	nb      *Neighbourhood
	view    *mva.LocalView
	exact   mva.ExactFactory
	local   LocalCost
	solve   bool
	mode    Response
	entries int
	merge   int // block_entries
	// checks is the budget of an exact solve before block descent
	// answers instead (ResponseBlocks); budget is set while a solve runs
	// within it.
	checks int64
	budget bool
	// width bounds the induced width of the exact solve's pseudo-tree
	// under ResponseBlocks (0: none); past it, block descent at once.
	width int
	// total bounds the checks of all the agent's exact solves under
	// ResponseBlocks (0: none); past it, block descent from then on.
	total int64
	// exactMoves and blockMoves count the responses of each kind under
	// ResponseBlocks.
	exactMoves, blockMoves int64

	// blocks is set when the response is by block descent
	// (ResponseBlocks on an agent too wide for bucket elimination).
	blocks *blockSearch

	soft     *responseProblem
	weighted *responseProblem
	// noPenalty is set when the weighted problem cannot be built
	// (errNoPenalty): such responses enumerate.
	noPenalty bool

	// last is the previous BestMove's question and answer, replayed when
	// the same question comes again (see BestMove).
	last lastMove
	// lazy is set during a BestGain: a response solved exactly leaves its
	// lowest-index minimiser to BestRow (pend).
	lazy bool
	pend pendingRow
	// offered is set when a response offered a completion that the
	// local view took (it changed a row's cost).
	offered bool

	solves int64
	// ext is the external part of ℓ_i by row within the current response
	// (see ell); block descent shares it.
	ext map[int]Cost
}

// ell is ℓ_i of row with the neighbours at vals, as Neighbourhood.Ell
// computes it, the same sum in the same order. Its external part reads
// n−1 functions per window on a complete street and is computed once per
// row and response: the current row's cost, the candidate's and block
// descent's trials read the same rows.
func (r *Responder) ell(ctx context.Context, row int, vals []int) (Cost, error) {
	c, err := r.local(ctx, row)
	if err != nil {
		return Cost{}, err
	}
	e, ok := r.ext[row]
	if !ok {
		b := make([]int, len(r.nb.Domains))
		r.nb.Decode(row, b)
		e = r.nb.Ext(b, vals)
		r.ext[row] = e
	}
	return c.Add(e), nil
}

// lastMove is a BestMove's question (cur, vals) and its answer (row,
// gain); ok says it may be replayed. row is pendingRowIndex while a
// BestGain's row waits for BestRow (pend).
type lastMove struct {
	ok   bool
	cur  int
	vals []int
	row  int
	gain Cost
}

// pendingRowIndex is lastMove.row while the row is not yet known.
const pendingRowIndex = -1

// pendingRow is what BestRow needs to finish a BestGain's exact
// response: the problem solved at the question's aggregates (still in
// its functions: no response has run since), the solver's optimum opt
// there, and the current row and its ℓ_i.
type pendingRow struct {
	ok      bool
	rp      *responseProblem
	opt     float64
	cur     int
	curCost Cost
}

// responseProblem is a built response problem and its solver.
type responseProblem struct {
	solver mva.LocalSolver
	// bounded is set when the solver is the memory-bounded fallback
	// (AOBB), the tables of bucket elimination being too large.
	bounded bool
	// rc is what the problem keeps of the external functions: the
	// context slots it reads (the first entries of in) and the
	// aggregates it refills per response.
	rc    *respContext
	slots int   // len(rc.kept)
	doms  []int // own boundary domains
	in    []int // kept context slots, then one mask selector per own boundary variable
	out   []int // own boundary values, own interior values, then z
}

// ResponseConfig chooses how a Responder answers.
type ResponseConfig struct {
	// Mode is ResponseAuto, ResponseEnumerate, ResponseSolve or
	// ResponseBlocks (parameter "response").
	Mode Response
	// Entries bounds bucket elimination's tables; 0 means AOBB, or with
	// blocks, block descent for every agent past EnumerateRows rows
	// (parameter "response_entries", 0..math.MaxInt32).
	Entries int
	// BlockEntries bounds a block of block descent (parameter
	// "block_entries", 1..math.MaxInt32).
	BlockEntries int
	// Checks is, with ResponseBlocks, the budget of checks of each exact
	// solve of a response past bucket elimination's tables (parameter
	// "response_checks"; 0: block descent without trying).
	Checks int64
	// Width is, with ResponseBlocks, the largest induced width of the
	// exact solve's pseudo-tree that is tried within Checks; past it
	// block descent answers without trying (parameter "response_width";
	// 0: no bound).
	Width int
	// Total is, with ResponseBlocks, the budget of checks of all the
	// agent's exact solves together, the first question's race
	// included: the solve that would pass it stops there, and block
	// descent answers from then on (parameter "response_total"; 0: no
	// bound).
	Total int64
}

// DefaultResponseChecks is the default budget of one exact solve of a
// ResponseBlocks response (parameter "response_checks"): none, block
// descent answers at once. With 2^28 (a few seconds of one core) every
// response of the SHDS homes of width 17–21 measured (dm_7_1_5,
// dm_7_1_6; README.md) ends within it, in one solve (the solver's
// minimiser) on its interior's own pseudo-trees, raced on the first
// question (local.AOBB), and equals toulbar2's optimum; but end to end,
// re-measured after AOBB's speed-ups, that cost 1.5–2.2 times block
// descent's CPU on the 7-home instances and 2.0–2.3 times on dm_21_1_6
// and dm_35_1_6, where most homes still pass the budget (their first
// questions are past 2^28 checks) and answer by block descent anyway, for
// a final objective on the load that flows −0.04% to +0.05% away, so it
// stays an option. Since the responses go to EDAC on the implied pairs
// with the device tables kept generalised arc consistent (local.Exact),
// every wide home of the published files stays exact within 2^28, and
// --shds sets it (homesolve.ExactResponseChecks); other MGM runs keep
// this default, block descent at once.
const DefaultResponseChecks = 0

// ParseResponse reads parameters "response" (0 auto, 1 enumerate, 2
// solve, 3 blocks; default auto), "response_entries", "block_entries",
// "response_checks", "response_width" and "response_total"
// of params, with an error naming the one out of range.
func ParseResponse(params map[string]float64) (ResponseConfig, error) {
	mode, err := Int(params, "response", int(ResponseAuto), int(ResponseAuto), int(ResponseBlocks))
	if err != nil {
		return ResponseConfig{}, err
	}
	entries, err := Int(params, "response_entries", DefaultResponseEntries, 0, math.MaxInt32)
	if err != nil {
		return ResponseConfig{}, err
	}
	merge, err := Int(params, "block_entries", BlockEntries, 1, math.MaxInt32)
	if err != nil {
		return ResponseConfig{}, err
	}
	checks, err := Int(params, "response_checks", DefaultResponseChecks, 0, math.MaxInt)
	if err != nil {
		return ResponseConfig{}, err
	}
	width, err := Int(params, "response_width", 0, 0, math.MaxInt32)
	if err != nil {
		return ResponseConfig{}, err
	}
	total, err := Int(params, "response_total", 0, 0, math.MaxInt)
	if err != nil {
		return ResponseConfig{}, err
	}
	return ResponseConfig{Mode: Response(mode), Entries: entries, BlockEntries: merge, Checks: int64(checks), Width: width, Total: int64(total)}, nil
}

// NewResponder returns the responder of the agent with neighbourhood nb
// and local cost local (normally RowCost on n's view), answering as c
// says.
func NewResponder(n *mva.Node, nb *Neighbourhood, local LocalCost, c ResponseConfig) (*Responder, error) {
	if c.Mode < ResponseAuto || c.Mode > ResponseBlocks || c.Entries < 0 || c.BlockEntries < 1 || c.Checks < 0 || c.Width < 0 || c.Total < 0 {
		return nil, fmt.Errorf("response configuration %+v out of range", c)
	}
	m := c.Mode
	solve := m == ResponseSolve || (m == ResponseAuto || m == ResponseBlocks) && nb.Rows() > EnumerateRows
	if solve && n.Exact == nil {
		return nil, errors.New("best responses need an exact solver factory (mva.Node.Exact), and the run gives none")
	}
	return &Responder{nb: nb, view: n.Local, exact: n.Exact, local: local, solve: solve, mode: m, entries: c.Entries, merge: c.BlockEntries, checks: c.Checks, width: c.Width, total: c.Total, ext: map[int]Cost{}}, nil
}

// Solving reports whether BestMove solves (true) or enumerates.
func (r *Responder) Solving() bool { return r.solve }

// Blocks reports whether BestMove runs block descent; it is known after
// the first BestMove.
func (r *Responder) Blocks() bool { return r.blocks != nil }

// Solves returns the local solves run so far, restricted ones and block
// solves included.
func (r *Responder) Solves() int64 {
	if r.blocks != nil {
		return r.solves + r.blocks.solves
	}
	return r.solves
}

// ResponseCounts returns, under ResponseBlocks, the responses this agent
// computed by an exact solve within its bounds and those block descent
// answered (past response_checks, response_width or response_total, or
// with response_checks = 0); replayed questions (BestMove) count once.
// Under the other modes both are 0. A run's note reads them (the
// exact-responses option is exact only for the homes that stayed within
// the bounds: on dm_21_1_6 9 of 21, README).
func (r *Responder) ResponseCounts() (exact, blocks int64) { return r.exactMoves, r.blockMoves }

// Checks returns the constraint checks of the response solvers, the
// agent's share of the NCCC metric beyond its local view's solver and
// the external-function evaluations (Neighbourhood.Checks).
func (r *Responder) Checks() int64 {
	var c int64
	for _, rp := range []*responseProblem{r.soft, r.weighted} {
		if rp != nil {
			c += rp.solver.Checks()
		}
	}
	if r.blocks != nil {
		c += r.blocks.Checks()
	}
	return c
}

// BestMove returns the best row with the neighbours at vals and the gain
// of moving there from cur, under the rule of Responder.
//
// The answer is a function of cur, vals and the local view's costs of
// the rows it reads. A response that changed none of those costs (no
// completion offered and taken) leaves the next call with the same cur
// and vals nothing new to find: that call returns the same answer without
// solving. This is MGM's common case once an agent's neighbourhood is at
// rest (no neighbour moved, the agent did not move), round after round
// until the last: MGM runs a fixed number of rounds. The local cost must
// be a function of the view (RowCost), as MGM's and MGM-2's are.
func (r *Responder) BestMove(ctx context.Context, cur int, vals []int) (int, Cost, error) {
	gain, err := r.answer(ctx, cur, vals, false)
	if err != nil {
		return 0, Cost{}, err
	}
	row, err := r.BestRow(ctx)
	if err != nil {
		return 0, Cost{}, err
	}
	return row, gain, nil
}

// BestGain is the first half of BestMove: the gain of the best response
// with the neighbours at vals from cur, whose row BestRow returns when it
// is wanted. MGM wants the row of the round's movers alone (in a
// complete street, one home a round); every other agent only sends its
// gain. Where the response is solved exactly, the gain is that of the
// solver's first minimiser and BestRow then runs the restricted solves
// that find the lowest-index one (Responder), up to four in five of an
// SHDS home's solves: the gain is the same, both rows being minimisers,
// unless ℓ_i, summed as pairs in another order than the solver's floats,
// tells two tied rows apart by rounding (see Responder).
func (r *Responder) BestGain(ctx context.Context, cur int, vals []int) (Cost, error) {
	return r.answer(ctx, cur, vals, true)
}

// answer is BestGain, or with lazy false BestMove, whose row is then
// known when it returns.
func (r *Responder) answer(ctx context.Context, cur int, vals []int, lazy bool) (Cost, error) {
	if l := &r.last; l.ok && l.cur == cur && slices.Equal(l.vals, vals) {
		return l.gain, nil
	}
	r.last.ok, r.offered, r.pend.ok = false, false, false
	defer r.release()
	r.lazy = lazy
	row, gain, err := r.bestMove(ctx, cur, vals)
	r.lazy = false
	if err != nil {
		return Cost{}, err
	}
	r.last = lastMove{ok: !r.offered && !(r.blocks != nil && r.blocks.offered), cur: cur, vals: append(r.last.vals[:0], vals...), row: row, gain: gain}
	return gain, nil
}

// BestRow returns the row of the last BestGain's response: the
// lowest-index minimiser, or the current row where no row is strictly
// cheaper, as BestMove answers.
func (r *Responder) BestRow(ctx context.Context) (int, error) {
	l := &r.last
	if l.row != pendingRowIndex {
		return l.row, nil
	}
	p := &r.pend
	if !p.ok {
		return 0, errors.New("best response: no pending row (BestRow without BestGain)")
	}
	defer r.release()
	r.offered = false
	row, _, err := r.lowestRow(ctx, p.rp, l.vals, p.opt, p.cur, p.curCost)
	if err != nil {
		return 0, err
	}
	p.ok, l.row = false, row
	l.ok = l.ok && !r.offered
	return row, nil
}

// release drops the working memory the response's solvers held for the
// last BestMove (see hold): between responses an agent keeps no tables,
// so that a street's agents do not keep one each.
func (r *Responder) release() {
	for _, rp := range []*responseProblem{r.soft, r.weighted} {
		if rp != nil {
			release(rp.solver)
		}
	}
	if r.blocks != nil {
		for _, bp := range r.blocks.blocks {
			release(bp.solver)
		}
	}
}

// hold asks s, when it can, to keep its working memory between the rows
// of one response (the first solve, the restricted ones, block descent's
// passes), which are solved faster from the last row's tables; the
// response never edits its functions' costs in place.
func hold(s mva.LocalSolver) {
	if h, ok := s.(mva.HoldingSolver); ok {
		h.Hold()
	}
}

// release drops what hold kept.
func release(s mva.LocalSolver) {
	if h, ok := s.(mva.HoldingSolver); ok {
		h.Release()
	}
}

// bestMove is BestMove without the replay of the last answer.
func (r *Responder) bestMove(ctx context.Context, cur int, vals []int) (int, Cost, error) {
	if !r.solve {
		return r.nb.BestMove(ctx, r.local, cur, vals)
	}
	// A new response: the aggregates are refilled at the first solve,
	// and the external parts of ℓ_i are those of new values.
	clear(r.ext)
	for _, rp := range []*responseProblem{r.soft, r.weighted} {
		if rp != nil {
			rp.rc.stale = true
		}
	}
	if r.blocks != nil {
		r.blocks.rc.stale = true
	}
	curCost, err := r.ell(ctx, cur, vals)
	if err != nil {
		return 0, Cost{}, err
	}
	if r.soft == nil && r.blocks == nil {
		if r.soft, err = r.build(false); err != nil {
			return 0, Cost{}, err
		}
		if r.soft.bounded && r.mode == ResponseBlocks {
			if _, ok := r.soft.solver.(withinSolver); !ok || r.checks == 0 || r.tooWide(r.soft.solver) {
				r.soft = nil
			}
			if r.blocks, err = newBlockSearch(r.nb, r.view, r.exact, r.merge, r.entries); err != nil {
				return 0, Cost{}, err
			}
			r.blocks.ext = r.ext
		}
	}
	if r.blocks != nil && r.soft == nil {
		r.blockMoves++
		return r.blockMove(ctx, cur, curCost, vals)
	}
	rp := r.soft
	r.budget = r.blocks != nil
	defer func() { r.budget = false }()
	opt, done, err := r.runWithin(ctx, rp, vals)
	if err != nil {
		return 0, Cost{}, err
	}
	if r.budget && (!done || mva.IsHard(opt)) {
		// Past the budget, or no feasible row: block descent answers,
		// from the current row. An agent whose solve passed the budget
		// once answers by block descent from then on: its later
		// questions differ only in the current row and the neighbours'
		// values, and each try would likely spend the whole budget again.
		if !done {
			r.soft = nil
		}
		r.blockMoves++
		return r.blockMove(ctx, cur, curCost, vals)
	}
	if r.budget {
		r.exactMoves++
	}
	if mva.IsHard(opt) {
		if r.weighted == nil && !r.noPenalty {
			r.weighted, err = r.build(true)
			if errors.Is(err, errNoPenalty) {
				r.noPenalty, err = true, nil
			}
			if err != nil {
				return 0, Cost{}, err
			}
		}
		if r.weighted == nil {
			return r.nb.BestMove(ctx, r.local, cur, vals)
		}
		rp = r.weighted
		if opt, err = r.run(ctx, rp, vals); err != nil {
			return 0, Cost{}, err
		}
	}
	if err := r.offer(ctx, rp.out); err != nil {
		return 0, Cost{}, err
	}
	nb := len(rp.doms)
	first, err := r.ell(ctx, r.nb.Encode(rp.out[:nb]), vals)
	if err != nil {
		return 0, Cost{}, err
	}
	if !first.Less(curCost) {
		return cur, Cost{}, nil
	}
	if r.budget {
		// ResponseBlocks: the solver's minimiser, not necessarily the
		// lowest-index one (see ResponseBlocks).
		return r.nb.Encode(rp.out[:nb]), curCost.Sub(first), nil
	}
	if r.lazy {
		r.pend = pendingRow{ok: true, rp: rp, opt: opt, cur: cur, curCost: curCost}
		return pendingRowIndex, curCost.Sub(first), nil
	}
	return r.lowestRow(ctx, rp, vals, opt, cur, curCost)
}

// lowestRow finishes an exact response whose solver optimum with the
// neighbours at vals is opt: the lowest-index minimiser and its gain from
// cur (of cost curCost), or cur where ℓ_i says it is not strictly
// cheaper.
func (r *Responder) lowestRow(ctx context.Context, rp *responseProblem, vals []int, opt float64, cur int, curCost Cost) (int, Cost, error) {
	x, full, err := r.lexMin(ctx, rp, vals, opt)
	if err != nil {
		return 0, Cost{}, err
	}
	if err := r.offer(ctx, full); err != nil {
		return 0, Cost{}, err
	}
	row := r.nb.Encode(x)
	best, err := r.ell(ctx, row, vals)
	if err != nil {
		return 0, Cost{}, err
	}
	if !best.Less(curCost) {
		return cur, Cost{}, nil
	}
	return row, curCost.Sub(best), nil
}

// blockMove is BestMove by block descent: the descent's row when ℓ_i says
// it is strictly cheaper than cur (whose cost is curCost), else cur.
func (r *Responder) blockMove(ctx context.Context, cur int, curCost Cost, vals []int) (int, Cost, error) {
	row, err := r.blocks.descend(ctx, cur, vals)
	if err != nil || row == cur {
		return cur, Cost{}, err
	}
	best, err := r.ell(ctx, row, vals)
	if err != nil {
		return 0, Cost{}, err
	}
	if !best.Less(curCost) {
		return cur, Cost{}, nil
	}
	return row, curCost.Sub(best), nil
}

// widthSolver is a solver that knows the induced width of its search
// (local.AOBB's pseudo-tree).
type widthSolver interface{ Width() int }

// tooWide reports whether s, the exact solve of a ResponseBlocks response,
// searches a pseudo-tree wider than response_width: such an agent answers
// by block descent without trying it.
func (r *Responder) tooWide(s mva.LocalSolver) bool {
	w, ok := s.(widthSolver)
	return r.width > 0 && ok && w.Width() > r.width
}

// run solves rp with the context at vals and the masks as they are.
func (r *Responder) run(ctx context.Context, rp *responseProblem, vals []int) (float64, error) {
	rp.rc.gather(r.nb, vals, rp.in)
	r.solves++
	hold(rp.solver)
	c, err := rp.solver.SolveRow(ctx, rp.in, rp.out)
	if err != nil {
		return 0, fmt.Errorf("best response: %w", err)
	}
	return c, nil
}

// withinSolver is a solver that can search for a row's optimum only below
// a bound and within a budget of checks (local.AOBB): pruned by the bound
// from the start, a search that finds nothing ends early; done false says
// the budget ran out first.
type withinSolver interface {
	SolveRowWithin(ctx context.Context, boundary, interior []int, ub float64, checks int64) (c float64, found, done bool, err error)
}

// runWithin is run, within the budget while r.budget is set (each
// solve's checks, and what is left of the agent's total): done false says
// the budget ran out.
func (r *Responder) runWithin(ctx context.Context, rp *responseProblem, vals []int) (c float64, done bool, err error) {
	ws, ok := rp.solver.(withinSolver)
	if !ok || !r.budget {
		c, err := r.run(ctx, rp, vals)
		return c, err == nil, err
	}
	checks := r.checks
	if r.total > 0 {
		// What is left of the agent's budget of exact solves.
		left := r.total - rp.solver.Checks()
		if left <= 0 {
			return 0, false, nil
		}
		checks = min(checks, left)
	}
	rp.rc.gather(r.nb, vals, rp.in)
	r.solves++
	c, _, done, err = ws.SolveRowWithin(ctx, rp.in, rp.out, math.Inf(1), checks)
	if err != nil {
		return 0, false, fmt.Errorf("best response: %w", err)
	}
	return c, done, nil
}

// runBelow is run for lexMin's restricted solves, which only ask whether
// the restricted optimum is still opt: found false says it is above opt,
// done false that the budget ran out (r.budget) before the answer. A
// solver that can bound its search (withinSolver) searches below opt plus
// a margin of rounding, so that an assignment costing opt is found
// whatever order the bounds summed in, and c > opt still decides; others
// solve in full.
func (r *Responder) runBelow(ctx context.Context, rp *responseProblem, vals []int, opt float64) (c float64, found, done bool, err error) {
	ws, ok := rp.solver.(withinSolver)
	if !ok || mva.IsHard(opt) {
		c, err := r.run(ctx, rp, vals)
		return c, err == nil, err == nil, err
	}
	rp.rc.gather(r.nb, vals, rp.in)
	r.solves++
	var checks int64
	if r.budget {
		checks = r.checks
	}
	c, found, done, err = ws.SolveRowWithin(ctx, rp.in, rp.out, opt+1e-9*max(1, math.Abs(opt)), checks)
	if err != nil {
		return 0, false, false, fmt.Errorf("best response: %w", err)
	}
	return c, found, done, nil
}

// offer records a solve's completion full (the agent's boundary and
// interior values) in the local view's MVA table, as block descent does,
// when it is cheaper than what the view knows of its row beyond rounding:
// ℓ_i reads a row's cost from that table, whose own solver may know no
// completion as good, or none at all where it samples (SHDS homes too
// wide for bucket elimination: without the offer, an exact response's row
// read as infeasible and was refused). The row is looked up first, as ℓ_i
// does next, so that an exact view keeps its own entry and no extra row
// is solved.
func (r *Responder) offer(ctx context.Context, full []int) error {
	lp := r.nb.lp
	x := full[:len(lp.Vars)]
	c := lp.Eval(x)
	if mva.IsHard(c) {
		return nil
	}
	row := lp.EncodeRow(x[:lp.NB])
	known, _, err := r.view.RowIndex(ctx, row)
	if err != nil {
		return fmt.Errorf("best response: %w", err)
	}
	if mva.IsHard(known) || c < known-1e-9*max(1, math.Abs(known)) {
		if r.view.Offer(row, c, x[lp.NB:]) {
			r.offered = true
		}
	}
	return nil
}

// Mask selectors of a boundary variable with domain d: free, equal to v
// (1+v), or below v (1+d+v).
func maskEq(v int) int       { return 1 + v }
func maskBelow(d, v int) int { return 1 + d + v }

// lexMin returns the lowest-index minimiser, starting from the solver's
// minimiser in rp.out of value opt, and the solve's output for it.
func (r *Responder) lexMin(ctx context.Context, rp *responseProblem, vals []int, opt float64) (x, full []int, err error) {
	masks := rp.in[rp.slots:]
	defer clear(masks)
	x = slices.Clone(rp.out[:len(rp.doms)])
	full = slices.Clone(rp.out)
	for k, d := range rp.doms {
		for x[k] > 0 {
			masks[k] = maskBelow(d, x[k])
			c, found, done, err := r.runBelow(ctx, rp, vals, opt)
			if err != nil {
				return nil, nil, err
			}
			if !done {
				// The budget ran out: x is a minimiser, not
				// necessarily the lowest-index one.
				return x, full, nil
			}
			if !found || c > opt || mva.IsHard(c) {
				break
			}
			copy(x, rp.out[:len(x)])
			copy(full, rp.out)
		}
		masks[k] = maskEq(x[k])
	}
	return x, full, nil
}

// errNoPenalty reports that the weighted problem's penalty would not be
// finite.
var errNoPenalty = errors.New("costs too large for a finite hard-violation penalty")

// build makes the response problem (weighted: Hard entries become
// penalties, see Responder) and its solver.
func (r *Responder) build(weighted bool) (*responseProblem, error) {
	rlp, rc, doms, err := r.buildLP(weighted)
	if err != nil {
		return nil, err
	}
	s, bounded, err := solverFor(r.exact, rlp, r.entries, true)
	if err != nil {
		return nil, fmt.Errorf("best response: %w", err)
	}
	n := len(rlp.Vars)
	return &responseProblem{
		solver: s, bounded: bounded, rc: rc, slots: len(rc.kept), doms: doms,
		in: make([]int, rlp.NB), out: make([]int, n-rlp.NB),
	}, nil
}

// buildLP makes the response problem of build, without its solver: the
// context slots it keeps (respContext) and the mask selectors are its
// boundary, rc says how to set them and its aggregates, and doms are
// the agent's own boundary domains.
func (r *Responder) buildLP(weighted bool) (*mva.LocalProblem, *respContext, []int, error) {
	nb := r.nb
	lp := nb.lp
	p := lp.Problem
	var penalty float64
	useZ := false
	if weighted {
		var err error
		if penalty, useZ, err = r.penalty(); err != nil {
			return nil, nil, nil, err
		}
	}
	rc := nb.newContext(penalty)
	slots, own := len(rc.kept), lp.NB
	base := slots + own
	n := base + len(lp.Vars)
	if useZ {
		n++
	}
	z := n - 1
	q := &mva.Problem{Name: "best response", Variables: make([]mva.Variable, n), Agents: []mva.Agent{{Name: p.Agents[nb.ID].Name}}}
	rlp := &mva.LocalProblem{Problem: q, Sub: lp.Sub, Vars: make([]int, n), Domains: make([]int, n), NB: base}
	// Domains of one size share their (empty) labels.
	labels := map[int][]string{}
	variable := func(k int, name string, d int) {
		if labels[d] == nil {
			labels[d] = make([]string, d)
		}
		q.Variables[k] = mva.Variable{Name: name, Domain: labels[d]}
		rlp.Vars[k], rlp.Domains[k] = k, d
	}
	for i, s := range rc.kept {
		variable(i, p.Variables[nb.slotVars[s]].Name, nb.SlotDomains[s])
	}
	for k := range own {
		variable(slots+k, "mask of "+p.Variables[lp.Vars[k]].Name, 2*lp.Domains[k]+1)
	}
	for k, v := range lp.Vars {
		variable(base+k, p.Variables[v].Name, lp.Domains[k])
	}
	if useZ {
		variable(z, "local functions given up", 2)
	}
	for _, f := range lp.Funcs {
		sc := make([]int, len(f.Scope), len(f.Scope)+1)
		for i, k := range f.Scope {
			sc[i] = base + k
		}
		costs := f.Costs
		if useZ {
			// z last, fastest: z = 0 keeps the entry, z = 1 costs nothing.
			sc = append(sc, z)
			costs = make([]float64, 2*len(f.Costs))
			for i, c := range f.Costs {
				costs[2*i] = c
			}
		}
		rlp.Funcs = append(rlp.Funcs, mva.LocalFunction{Scope: sc, Costs: costs})
	}
	if useZ {
		rlp.Funcs = append(rlp.Funcs, mva.LocalFunction{Scope: []int{z}, Costs: []float64{0, penalty}})
	}
	rlp.Funcs = append(rlp.Funcs, rc.funcs(nb, base)...)
	doms := slices.Clone(lp.Domains[:own])
	for k, d := range doms {
		costs := make([]float64, (2*d+1)*d)
		for v := range d {
			for u := range d {
				if u != v {
					costs[maskEq(v)*d+u] = mva.Hard
				}
				if u >= v {
					costs[maskBelow(d, v)*d+u] = mva.Hard
				}
			}
		}
		rlp.Funcs = append(rlp.Funcs, mva.LocalFunction{Scope: []int{slots + k, base + k}, Costs: costs})
	}
	return rlp, rc, doms, nil
}

// penalty returns the weighted problem's cost of a hard violation, a
// power of two above twice the largest soft sum |ℓ_i| can reach (so that
// one violation outweighs any soft difference), and whether the agent's
// own functions have Hard entries (then the weighted problem needs z).
func (r *Responder) penalty() (float64, bool, error) {
	bound, localHard := 0.0, false
	for _, f := range r.nb.lp.Funcs {
		m, h := maxFinite(f.Costs)
		bound += m
		localHard = localHard || h
	}
	for i := range r.nb.funcs {
		m, _ := maxFinite(r.nb.costs(&r.nb.funcs[i]))
		bound += m
	}
	if math.IsInf(2*bound+1, 0) {
		return 0, false, errNoPenalty
	}
	_, exp := math.Frexp(2*bound + 1)
	p := math.Ldexp(1, exp)
	// H·P + soft must stay finite for every violation count H.
	if math.IsInf(p*float64(len(r.nb.funcs)+2)+bound, 0) {
		return 0, false, errNoPenalty
	}
	return p, localHard, nil
}

// maxFinite returns the largest |entry| among the finite entries of costs
// and whether any entry is Hard.
func maxFinite(costs []float64) (float64, bool) {
	m, hard := 0.0, false
	for _, c := range costs {
		if mva.IsHard(c) {
			hard = true
			continue
		}
		m = max(m, math.Abs(c))
	}
	return m, hard
}

// solverFor returns, from exact, bucket elimination for lp when its
// tables fit entries (0: never), else the memory-bounded solver (AOBB,
// bounded true) with fallback, or nil without.
func solverFor(exact mva.ExactFactory, lp *mva.LocalProblem, entries int, fallback bool) (s mva.LocalSolver, bounded bool, err error) {
	if exact == nil {
		return nil, false, errors.New("no exact solver factory (mva.Node.Exact)")
	}
	if entries > 0 {
		s, err := exact(lp, entries)
		switch {
		case err == nil:
			return s, false, nil
		case !errors.Is(err, mva.ErrTooLarge):
			return nil, false, err
		}
	}
	if !fallback {
		return nil, false, nil
	}
	s, err = exact(lp, 0)
	return s, true, err
}
