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
