package solve

import (
	"context"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
)

// StartSolver makes every agent's local solver an mva.Starter of start, a
// full assignment of the problem (homes: the schedules each home plans
// alone): it suggests the agent's boundary values in start, and answers
// that row with start's interior whenever its own completion is worse, so
// the row is as good as start's even where a sampler finds nothing
// feasible. With start nil it returns next.
func StartSolver(start []int, next mva.SolverFactory) mva.SolverFactory {
	if start == nil {
		return next
	}
	return func(lp *mva.LocalProblem) (mva.LocalSolver, error) {
		s, err := next(lp)
		if err != nil || len(start) != len(lp.Problem.Variables) {
			return s, err
		}
		full := make([]int, len(lp.Vars))
		for k, v := range lp.Vars {
			full[k] = start[v]
		}
		return &startingSolver{LocalSolver: s, nb: lp.NB, full: full, cost: lp.Eval(full)}, nil
	}
}

// startingSolver is StartSolver's wrapper of one agent's solver.
type startingSolver struct {
	mva.LocalSolver
	nb   int
	full []int   // the agent's local variables in start
	cost float64 // their local cost
}

func (s *startingSolver) Start() ([]int, bool) { return slices.Clone(s.full[:s.nb]), true }

func (s *startingSolver) SolveRow(ctx context.Context, boundary, interior []int) (float64, error) {
	c, err := s.LocalSolver.SolveRow(ctx, boundary, interior)
	if err != nil || !slices.Equal(boundary, s.full[:s.nb]) {
		return c, err
	}
	if (mva.IsHard(c) && !mva.IsHard(s.cost)) || s.cost < c {
		copy(interior, s.full[s.nb:])
		return s.cost, nil
	}
	return c, nil
}
