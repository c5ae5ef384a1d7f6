package energy

import (
	"context"
	"errors"
)

// Options tune Solve.
type Options struct {
	// Gap is the relative optimality gap at which the branch and bound
	// stops: a plan is returned once no unexplored branch can beat it by
	// more than Gap × max(|cost|, 1 currency). 0 means DefaultGap.
	Gap float64
	// Nodes bounds the linear programmes the branch and bound solves; 0
	// means DefaultNodes. When it runs out the best plan found so far is
	// returned.
	Nodes int
}

// Defaults of Options.
const (
	// DefaultGap is a tenth of issue 17's 1% accuracy goal.
	DefaultGap = 1e-3
	// DefaultNodes bounds the search at a few hundred milliseconds on
	// the largest homes the tests generate; typical homes need 1–20.
	DefaultNodes = 1500
)

// HoldValue is the tie-break of energy held over time: each kWh held in
// a storage for an hour is worth 10⁻⁷ currency, so that among plans of
// equal bill the one that charges earlier and discharges later wins (an
// EV charges as soon as the price allows, not spread thinly over equal
// slots). It is far too small to move a plan that any price difference
// favours (a 80 kWh car held for a day is worth 0.0002), is not part of
// the plan's reported cost, and together with Wear removes free ties.
const HoldValue = 1e-7

// ErrInfeasible is wrapped when a hard goal, limit or cap cannot be kept.
var ErrInfeasible = errors.New("no plan keeps the hard goals and limits")

// Solve plans the home. See docs/DESIGN.md "Energy homes" for the method:
// the home's linear relaxation (storage physics, the convex meter, soft
// goals and limits, the demand charge) solved by an interior-point method
// on its banded time structure, and a branch and bound over what is not
// convex — a minimum charging power, charging and discharging at once,
// the grid permissions — with the relaxation's optimum as the bound.
func Solve(ctx context.Context, h *Home, opts Options) (*Plan, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	if opts.Gap <= 0 {
		opts.Gap = DefaultGap
	}
	if opts.Nodes <= 0 {
		opts.Nodes = DefaultNodes
	}
	m := build(h)
	return m.branch(ctx, opts)
}
