package energy

import (
	"context"
)

// SolveStats solves h and returns the plan, the number of linear
// programmes solved and the root relaxation's optimum (a lower bound).
func SolveStats(h *Home, opts Options) (*Plan, int, float64, error) {
	if opts.Gap <= 0 {
		opts.Gap = DefaultGap
	}
	if opts.Nodes <= 0 {
		opts.Nodes = DefaultNodes
	}
	m := build(h)
	p, err := m.branch(context.Background(), opts)
	return p, m.solved, m.rootObj, err
}
