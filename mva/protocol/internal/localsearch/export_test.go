package localsearch

import "github.com/hearth-dcop/hearth/mva"

// SlotVars exposes the problem variable of every context slot to the
// external tests, which fill the context from a global assignment.
func (nb *Neighbourhood) SlotVars() []int { return nb.slotVars }

// UsedWeighted reports whether a response needed the weighted problem
// (every row violated a hard entry).
func (r *Responder) UsedWeighted() bool { return r.weighted != nil }

// SolveSolver returns the solver of the unweighted response problem, nil
// before the first solve.
func (r *Responder) SolveSolver() mva.LocalSolver {
	if r.soft == nil {
		return nil
	}
	return r.soft.solver
}

// NewBlockResponder returns a responder that answers by block descent
// whatever the agent's size, its blocks merged while they fit merge
// entries (1: one block per component).
func NewBlockResponder(n *mva.Node, nb *Neighbourhood, local LocalCost, merge int) (*Responder, error) {
	bs, err := newBlockSearch(nb, n.Local, n.Exact, merge, DefaultResponseEntries)
	if err != nil {
		return nil, err
	}
	r := &Responder{nb: nb, view: n.Local, exact: n.Exact, local: local, solve: true, mode: ResponseBlocks, blocks: bs, ext: map[int]Cost{}}
	bs.ext = r.ext
	return r, nil
}

// SolveEveryPass makes a block responder solve every block of every
// pass, as block descent did before it stopped at settled blocks.
func (r *Responder) SolveEveryPass() { r.blocks.everyPass = true }

// NumBlocks returns the number of blocks of a block responder.
func (r *Responder) NumBlocks() int {
	if r.blocks == nil {
		return 0
	}
	return len(r.blocks.blocks)
}

// ResponseProblem returns the agent's (unweighted) response problem with
// the context at vals and every mask free, as a problem of its own:
// the agent's boundary and interior variables, each function conditioned
// on the context, constants in Offset. It is what one exact response
// solves, for writing to a file that other solvers read.
func (r *Responder) ResponseProblem(vals []int) (*mva.Problem, error) {
	rlp, rc, _, err := r.buildLP(false)
	if err != nil {
		return nil, err
	}
	in := make([]int, rlp.NB)
	rc.gather(r.nb, vals, in)
	q, err := rlp.Conditioned(in)
	if err != nil {
		return nil, err
	}
	q.Name = "best response of " + rlp.Problem.Agents[0].Name
	q.Agents = []mva.Agent{{Name: rlp.Problem.Agents[0].Name}}
	return q, nil
}

// ResponseSize returns the variables and functions of the agent's
// (unweighted) response problem.
func (r *Responder) ResponseSize() (vars, funcs int, err error) {
	rlp, _, _, err := r.buildLP(false)
	if err != nil {
		return 0, 0, err
	}
	return len(rlp.Vars), len(rlp.Funcs), nil
}

// BlockInputs returns, per block of a block responder, the variables its
// problem reads as inputs: kept context slots and fixed interior.
func (r *Responder) BlockInputs() []int {
	if r.blocks == nil {
		return nil
	}
	var out []int
	for _, bp := range r.blocks.blocks {
		out = append(out, len(bp.in))
	}
	return out
}
