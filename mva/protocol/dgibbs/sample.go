package dgibbs

import (
	"context"
	"math"

	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
)

// localCost is the cost of the agent's own functions when its boundary
// takes row: today the MVA row, i.e. the best completion of the interior
// given the boundary. It is the only place that decides the interior, so
// sampling the interior with local Gibbs instead (MVA-DG's P_L) changes
// this function and Result, nothing else.
func (a *Agent) localCost(ctx context.Context, row int) (localsearch.Cost, error) {
	return localsearch.RowCost(ctx, a.node.Local, row)
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
func (a *Agent) draw(ctx context.Context) error {
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
