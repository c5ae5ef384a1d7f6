package sampler

import (
	"context"

	"github.com/hearth-dcop/hearth/mva"
)

// Gibbs fills MVA table rows by Gibbs sampling (thesis Algorithm 1, DMCMC
// lines 43–48): for each row, Runs chains of Trials sweeps, each sweep
// drawing every interior variable from its exact conditional under
// π(z) ∝ exp(−cost(z)/τ), and the best sample any chain saw is the row's
// answer. See the package documentation for the random numbers, hard
// constraints and parallelism.
//
// A Gibbs value is safe for concurrent use, but it already spreads each
// call over Options.Workers goroutines.
type Gibbs struct{ e *engine }

// NewGibbs returns a Gibbs sampler for lp. It fails on invalid options or
// a malformed local problem.
func NewGibbs(lp *mva.LocalProblem, o Options) (*Gibbs, error) {
	e, err := newEngine("gibbs", lp, o, gibbsSweep)
	if err != nil {
		return nil, err
	}
	return &Gibbs{e: e}, nil
}

// SolveRow samples the row of the given boundary values and writes the
// best interior assignment found. It returns its cost, which equals
// lp.Eval of the full assignment, or mva.Hard when no chain found a
// feasible one — which does not prove that none exists. The row's chains
// are those SolveTable runs for it, so both give the same answer.
func (g *Gibbs) SolveRow(ctx context.Context, boundary, interior []int) (float64, error) {
	return g.e.solveRow(ctx, boundary, interior)
}

// SolveTable samples every unknown row of t (an eager MVA table), all
// (row, run) chains in parallel.
func (g *Gibbs) SolveTable(ctx context.Context, t *mva.Table) error {
	return g.e.solveTable(ctx, t)
}

// Checks returns the cost-table entries read so far: per conditional,
// |D| entries of each function holding the variable, plus one entry per
// function for each sample's full evaluation.
func (g *Gibbs) Checks() int64 { return g.e.checks.Load() }

// Options returns the options in effect, defaults filled in.
func (g *Gibbs) Options() Options { return g.e.o }
