package dgibbs

import (
	"context"
	"fmt"
	"math"

	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
)

// localCost is the cost of the agent's own functions when its boundary
// takes row. Under interior = 0 it is the MVA row: the best completion of
// the interior given the boundary. Under MVA-DG the interior is sampled,
// so it is the cost of the current local state, and row must be the
// current row (callers ask for nothing else in that mode).
func (a *Agent) localCost(ctx context.Context, row int) (localsearch.Cost, error) {
	if a.cond == nil {
		return localsearch.RowCost(ctx, a.node.Local, row)
	}
	if row != a.row {
		return localsearch.Cost{}, fmt.Errorf("internal error: MVA-DG local cost of row %d, not the current row %d", row, a.row)
	}
	v, c := a.cond.Eval(a.z)
	return localsearch.Cost{Hard: int64(v), Soft: c}, nil
}

// ell returns ℓ_i(row, ctx): the local cost plus every external function
// of the agent with the neighbours at their current values.
func (a *Agent) ell(ctx context.Context, row int) (localsearch.Cost, error) {
	return a.nb.Ell(ctx, a.localCost, row, a.nb.Ctx)
}

// draw is one systematic Gibbs sweep over the boundary variables in
// Subproblem.Boundary order (notes §2.9): each is drawn from its exact
// conditional given the others' current values and the neighbours' values
// in ctx, P(v) ∝ exp(−E(v)/τ), where E(v) is the local cost of the
// boundary with the variable at v plus the external functions containing
// the variable (the other terms do not depend on v and cancel).
func (a *Agent) draw(ctx context.Context, t int) error {
	if a.cond != nil {
		a.drawMVADG(t)
		return nil
	}
	b := a.scratch
	a.nb.Decode(a.row, b)
	for k, d := range a.nb.Domains {
		costs := a.costs[:d]
		for v := range d {
			b[k] = v
			lc, err := a.localCost(ctx, a.nb.Encode(b))
			if err != nil {
				return err
			}
			costs[v] = lc.Add(a.nb.ExtVar(k, b, a.nb.Ctx))
		}
		b[k] = pick(costs, a.tau, a.rng.Float64())
	}
	a.setRow(a.nb.Encode(b))
	return nil
}

// sweepRun is the Philox run word of MVA-DG's interior sweeps (counter
// (row, sweepRun, t, ·) under the agent's seed). A row sampler's runs are
// numbered below Options.Runs ≤ 2³²−1, so they never use it: with a Gibbs
// local solver keyed by the same agent seed (as the command line does),
// the sweeps never reuse the numbers that filled the MVA table.
const sweepRun = math.MaxUint32

// drawMVADG is iteration t of MVA-DG at this agent (thesis Theorem 4):
// the boundary sweep of draw, except that the local part of each
// variable's conditional is the agent's local functions holding it,
// evaluated at the current interior (sampler.Conditional.Energies), not
// the row's best completion; then one Gibbs sweep of the interior given
// the new boundary values (sampler.Conditional.Sweep). Interior variables
// share no function with other agents, so their conditional given L_i is
// their conditional given the whole problem, and the boundary ones see
// every function they are in: each draw is a draw of plain Gibbs on the
// whole problem, whose target exp(−cost(x)/τ) the chain therefore keeps.
// The agent's scan order is its boundary variables, then its interior
// ones; any fixed order leaves the target invariant.
func (a *Agent) drawMVADG(t int) {
	b := a.scratch
	copy(b, a.b)
	for k, d := range a.nb.Domains {
		viol, cost := a.cond.Energies(k, a.z)
		costs := a.costs[:d]
		for v := range d {
			b[k] = v
			costs[v] = localsearch.Cost{Hard: int64(viol[v]), Soft: cost[v]}.Add(a.nb.ExtVar(k, b, a.nb.Ctx))
		}
		b[k] = pick(costs, a.tau, a.rng.Float64())
		a.z[k] = b[k]
	}
	a.setRow(a.nb.Encode(b))
	a.cond.Sweep(a.z, sweepRun, uint32(t))
}

// pick draws an index from the Gibbs conditional of costs at temperature
// tau with the uniform variate u ∈ [0, 1). Weights are computed in log
// space, relative to the lowest cost, so that the best value has weight 1
// and nothing overflows; a hard value has probability 0. When every value
// is hard, the values with the fewest hard violations are drawn uniformly
// (notes §2.1; not from the paper, whose D-Gibbs has no hard constraints).
func pick(costs []localsearch.Cost, tau, u float64) int {
	lo := costs[0]
	for _, c := range costs[1:] {
		if c.Less(lo) {
			lo = c
		}
	}
	weight := func(c localsearch.Cost) float64 {
		switch {
		case c.Hard != lo.Hard:
			return 0
		case lo.Hard > 0:
			return 1
		}
		return math.Exp(-(c.Soft - lo.Soft) / tau)
	}
	total := 0.0
	for _, c := range costs {
		total += weight(c)
	}
	x := u * total
	last := 0
	for v, c := range costs {
		w := weight(c)
		if w == 0 {
			continue
		}
		if x < w {
			return v
		}
		x -= w
		last = v
	}
	return last // rounding left x ≥ the last weight
}
