package energy

import (
	"context"

	"github.com/hearth-dcop/hearth/devices/energy/internal/lp"
)

// Stats describe one search.
type Stats struct {
	// LPs solved, the root relaxation's optimum (a lower bound) and the
	// LP count at the last improvement of the plan by more than the gap.
	LPs      int
	Root     float64
	Improved int
}

// SolveStats solves h and returns the plan and the search's figures.
func SolveStats(h *Home, opts Options) (*Plan, Stats, error) {
	if opts.Gap <= 0 {
		opts.Gap = DefaultGap
	}
	if opts.Nodes <= 0 {
		opts.Nodes = DefaultNodes
	}
	m := build(h)
	p, err := m.branch(context.Background(), opts)
	return p, Stats{m.solved, m.rootObj, m.improved}, err
}

// RootKinds counts the root relaxation's broken disjunctions by the
// number of bounds of their first side (debugging aid).
func RootKinds(h *Home) map[string]int {
	m := build(h)
	res, _ := lp.Solve(m.prob)
	snap(res.X, m.prob.Lo, m.prob.Hi)
	out := map[string]int{}
	for _, c := range m.violations(res.X, m.prob.Lo, m.prob.Hi) {
		k := "other"
		if len(c.first) == 1 && len(c.second) == 1 {
			switch {
			case c.first[0].lo > 0 || c.second[0].lo > 0:
				k = "mincharge"
			default:
				k = "excl"
			}
		} else {
			k = "perm"
		}
		out[k]++
	}
	return out
}
