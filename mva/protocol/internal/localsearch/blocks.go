package localsearch

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
)

// BlockEntries is the default of parameter "block_entries", which bounds
// the bucket elimination tables of one block of a block-descent response
// while components are merged into blocks. Larger blocks give better
// responses but cost more per solve; on SHDS dm_35_1_6 (35 homes, all
// answering by blocks, MGM over 4 levels, 2 cores) 2^16 took 11 s to an
// objective of 2.450e7, 2^18 18 s to 2.471e7 and 2^20 45 s to 2.387e7.
const BlockEntries = 1 << 16

// maxPasses bounds block descent's passes over an agent's blocks.
const maxPasses = 20

// blockSearch is the best response by block coordinate descent
// (ResponseBlocks), for agents whose whole response is too wide for exact
// bucket elimination: an SHDS home with five or six rules, whose level
// links tie every device of a slot to the slot's level, and each device
// to a property chain of hundreds of states.
//
// The agent's interior splits, once its boundary is removed, into
// components: variables joined by functions that read no boundary
// variable (a home's property with the devices that move it, or one
// device's action in one slot). Components are merged, in order, into
// blocks while a block's bucket elimination fits BlockEntries. A block's
// problem minimises ℓ_i over the whole boundary and the block's interior,
// with the neighbours' values and the other blocks' interior fixed: the
// agent's functions that read the boundary or the block, and its external
// functions. Starting from the current row and its completion, each pass
// solves every block exactly and keeps its minimiser when it lowers ℓ_i;
// passes stop when one improves nothing. ℓ_i never increases, so the
// response is never worse than staying, and MGM stays monotone: its gain
// is the exact difference of ℓ_i between two rows whose completions the
// agent holds (the candidate's completion is offered to the local view,
// mva.LocalView.Offer, so the row's cost is the one the descent found or
// a cheaper one).
//
// It is a local optimum over blocks, not the best response: a fixed point
// of MGM with block responses is stable under every block move, not
// 1-optimal. The published SH-MGM simulator is inexact on such homes too
// (a constraint solver with a 10 s limit, shds-model.md §5.1).
type blockSearch struct {
	nb     *Neighbourhood
	view   *mva.LocalView
	exact  mva.ExactFactory
	blocks []*blockProblem
	// rc is what every block keeps of the external functions; the
	// blocks share its aggregates, refilled once per response.
	rc     *respContext
	x      []int // the descent's assignment of the agent's variables
	solves int64
	// offered is set when the last descent's offer changed the local
	// view (Responder.BestMove replays an answer only when it did not).
	offered bool
	// ext is the external part of ℓ_i by boundary row within the
	// current response (see cost), the Responder's, which clears it
	// before each response.
	ext map[int]Cost
	// everyPass solves every block of every pass, settled or not (see
	// descend): the descent as it ran before, which the tests compare.
	everyPass bool
}

// blockProblem is one block's problem and its solver. Its inputs are the
// kept context slots (respContext), then the fixed interior variables it
// reads (fixed); its
// outputs the agent's boundary, then the block's interior variables
// (vars), all as indices of the agent's local problem.
type blockProblem struct {
	solver  mva.LocalSolver
	slots   int
	fixed   []int
	vars    []int
	in, out []int
}

// newBlockSearch splits the agent's interior into blocks and builds their
// solvers: components merge while a block's tables fit merge entries, and
// a single component's tables may reach entries (past it, AOBB; 0 means
// DefaultResponseEntries).
func newBlockSearch(nb *Neighbourhood, view *mva.LocalView, exact mva.ExactFactory, merge, entries int) (*blockSearch, error) {
	lp := nb.lp
	s := &blockSearch{nb: nb, view: view, exact: exact, rc: nb.newContext(0), x: make([]int, len(lp.Vars)), ext: map[int]Cost{}}
	if entries <= 0 {
		entries = DefaultResponseEntries
	}
	merge = min(merge, entries)
	var cur []int
	var curBP *blockProblem
	for _, comp := range components(lp) {
		if cur != nil {
			merged := append(slices.Clone(cur), comp...)
			slices.Sort(merged)
			bp, err := s.build(merged, merge, false)
			if err != nil {
				return nil, err
			}
			if bp != nil {
				cur, curBP = merged, bp
				continue
			}
			s.blocks = append(s.blocks, curBP)
		}
		bp, err := s.build(comp, merge, false)
		if err != nil {
			return nil, err
		}
		if bp == nil {
			if bp, err = s.build(comp, entries, true); err != nil {
				return nil, err
			}
		}
		cur, curBP = comp, bp
	}
	if curBP != nil {
		s.blocks = append(s.blocks, curBP)
	}
	if len(s.blocks) == 0 {
		// No interior: one block, the boundary alone.
		bp, err := s.build(nil, entries, true)
		if err != nil {
			return nil, err
		}
		s.blocks = append(s.blocks, bp)
	}
	return s, nil
}

// components returns the interior variables of lp grouped by the
// functions that read no boundary variable, each group sorted and the
// groups in order of their first variable.
func components(lp *mva.LocalProblem) [][]int {
	parent := make([]int, len(lp.Vars))
	for k := range parent {
		parent[k] = k
	}
	find := func(k int) int {
		for parent[k] != k {
			parent[k] = parent[parent[k]]
			k = parent[k]
		}
		return k
	}
	for _, f := range lp.Funcs {
		if len(f.Scope) == 0 || slices.ContainsFunc(f.Scope, func(k int) bool { return k < lp.NB }) {
			continue
		}
		r := find(f.Scope[0])
		for _, k := range f.Scope[1:] {
			if q := find(k); q != r {
				parent[q] = r
			}
		}
	}
	index := map[int]int{}
	var out [][]int
	for k := lp.NB; k < len(lp.Vars); k++ {
		r := find(k)
		i, ok := index[r]
		if !ok {
			i = len(out)
			index[r] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], k)
	}
	return out
}

// build makes the problem of the block over interior variables vars
// (sorted local indices). With fallback its solver is bucket elimination
// within entries or AOBB; without, it returns nil when bucket
// elimination would exceed entries.
func (s *blockSearch) build(vars []int, entries int, fallback bool) (*blockProblem, error) {
	nb := s.nb
	lp := nb.lp
	p := lp.Problem
	slots := len(s.rc.kept)
	in := make([]bool, len(lp.Vars))
	for k := range lp.NB {
		in[k] = true
	}
	for _, k := range vars {
		in[k] = true
	}
	var funcs []int
	isFixed := make([]bool, len(lp.Vars))
	var fixed []int
	for i, f := range lp.Funcs {
		if !slices.ContainsFunc(f.Scope, func(k int) bool { return in[k] }) {
			continue // constant while the block moves
		}
		funcs = append(funcs, i)
		for _, k := range f.Scope {
			if !in[k] && !isFixed[k] {
				isFixed[k] = true
				fixed = append(fixed, k)
			}
		}
	}
	slices.Sort(fixed)
	// Local indices of the block problem: slots, fixed, boundary, vars.
	base := slots + len(fixed)
	n := base + lp.NB + len(vars)
	pos := make([]int, len(lp.Vars))
	q := &mva.Problem{Name: "best response block", Variables: make([]mva.Variable, n), Agents: []mva.Agent{{Name: p.Agents[nb.ID].Name}}}
	blp := &mva.LocalProblem{Problem: q, Sub: lp.Sub, Vars: make([]int, n), Domains: make([]int, n), NB: base}
	labels := map[int][]string{} // shared, as in buildLP
	variable := func(k int, name string, d int) {
		if labels[d] == nil {
			labels[d] = make([]string, d)
		}
		q.Variables[k] = mva.Variable{Name: name, Domain: labels[d]}
		blp.Vars[k], blp.Domains[k] = k, d
	}
	for i, sl := range s.rc.kept {
		variable(i, p.Variables[nb.slotVars[sl]].Name, nb.SlotDomains[sl])
	}
	for j, k := range fixed {
		pos[k] = slots + j
		variable(slots+j, p.Variables[lp.Vars[k]].Name, lp.Domains[k])
	}
	for k := range lp.NB {
		pos[k] = base + k
		variable(base+k, p.Variables[lp.Vars[k]].Name, lp.Domains[k])
	}
	for j, k := range vars {
		pos[k] = base + lp.NB + j
		variable(base+lp.NB+j, p.Variables[lp.Vars[k]].Name, lp.Domains[k])
	}
	for _, i := range funcs {
		f := &lp.Funcs[i]
		sc := make([]int, len(f.Scope))
		for j, k := range f.Scope {
			sc[j] = pos[k]
		}
		blp.Funcs = append(blp.Funcs, mva.LocalFunction{Scope: sc, Costs: f.Costs})
	}
	blp.Funcs = append(blp.Funcs, s.rc.funcs(nb, base)...)
	solver, _, err := solverFor(s.exact, blp, entries, fallback)
	if err != nil {
		return nil, fmt.Errorf("best response block: %w", err)
	}
	if solver == nil {
		return nil, nil
	}
	return &blockProblem{
		solver: solver, slots: slots, fixed: fixed, vars: vars,
		in: make([]int, base), out: make([]int, n-base),
	}, nil
}

// Checks returns the block solvers' constraint checks.
func (s *blockSearch) Checks() int64 {
	var c int64
	for _, bp := range s.blocks {
		c += bp.solver.Checks()
	}
	return c
}

// cost returns ℓ_i of the descent's assignment x with the neighbours at
// vals: the agent's own functions and its external ones, as a pair. The
// external part reads the boundary alone and, on a complete street, n−1
// functions per window; the descent's trials often keep the boundary of
// the assignment they start from, so within one response (vals fixed) it
// is computed once per boundary row (ext), the same sum in the same order.
func (s *blockSearch) cost(x, vals []int) Cost {
	lp := s.nb.lp
	row := lp.EncodeRow(x[:lp.NB])
	e, ok := s.ext[row]
	if !ok {
		e = s.nb.Ext(x[:lp.NB], vals)
		s.ext[row] = e
	}
	return Of(lp.Eval(x)).Add(e)
}

// improves reports whether c is cheaper than d by more than rounding
// noise: a move for nothing could make two homes swap equal schedules.
func improves(c, d Cost) bool {
	if c.Hard != d.Hard {
		return c.Hard < d.Hard
	}
	return d.Soft-c.Soft > 1e-9*math.Max(1, math.Abs(d.Soft))
}

// descend runs block descent from row cur and its completion with the
// neighbours at vals, offers the candidate's completion to the local view
// and returns the candidate row.
func (s *blockSearch) descend(ctx context.Context, cur int, vals []int) (int, error) {
	lp := s.nb.lp
	s.offered = false
	c, interior, err := s.view.RowIndex(ctx, cur)
	if err != nil {
		return 0, err
	}
	if mva.IsHard(c) {
		// No completion to start from; the row stays (the descent
		// needs a feasible start: init = 3 gives one).
		return cur, nil
	}
	x := s.x
	lp.DecodeRow(cur, x[:lp.NB])
	for k, v := range interior {
		x[lp.NB+k] = int(v)
	}
	J := s.cost(x, vals)
	trial := make([]int, len(x))
	// settled counts the blocks solved, in a row, since x last changed.
	// A block's problem reads the context, the aggregates and the other
	// blocks' interior, none of which its own move changes: solved again
	// with x unchanged since its last solve, it would find the same
	// minimiser and, x being that minimiser or better, improve nothing.
	// Once every block is settled the descent is over: a pass over them
	// would change nothing. On a home that does not move this skips the
	// part of the last pass after its last improvement, the same
	// descent for fewer solves.
	settled := 0
passes:
	for range maxPasses {
		improved := false
		for _, bp := range s.blocks {
			if settled >= len(s.blocks) && !s.everyPass {
				break passes
			}
			settled++
			s.rc.gather(s.nb, vals, bp.in)
			for j, k := range bp.fixed {
				bp.in[bp.slots+j] = x[k]
			}
			s.solves++
			hold(bp.solver)
			bc, err := bp.solver.SolveRow(ctx, bp.in, bp.out)
			if err != nil {
				return 0, fmt.Errorf("best response block: %w", err)
			}
			if mva.IsHard(bc) {
				continue
			}
			copy(trial, x)
			copy(trial[:lp.NB], bp.out[:lp.NB])
			for j, k := range bp.vars {
				trial[k] = bp.out[lp.NB+j]
			}
			if t := s.cost(trial, vals); improves(t, J) {
				copy(x, trial)
				J, improved = t, true
				settled = 1
			}
		}
		if !improved {
			break
		}
	}
	row := lp.EncodeRow(x[:lp.NB])
	s.offered = s.view.Offer(row, lp.Eval(x), x[lp.NB:])
	return row, nil
}
