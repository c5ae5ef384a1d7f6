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
	return &Responder{nb: nb, view: n.Local, exact: n.Exact, local: local, solve: true, mode: ResponseBlocks, blocks: bs}, nil
}

// NumBlocks returns the number of blocks of a block responder.
func (r *Responder) NumBlocks() int {
	if r.blocks == nil {
		return 0
	}
	return len(r.blocks.blocks)
}
