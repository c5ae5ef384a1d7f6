package sampler

import (
	"context"

	"github.com/hearth-dcop/hearth/mva"
)

// MH fills MVA table rows by Metropolis-Hastings sampling (DMCMC
// Algorithm 1 and lines 34–42): for each row, Runs chains of Trials
// proposals, each accepted with probability
// min(1, π̃(z*)q(z|z*) / (π̃(z)q(z*|z))), π̃(z) = exp(−cost(z)/τ), and the
// best sample any chain saw is the row's answer.
//
// Options.Proposal chooses the proposal:
//
//   - "normal" (the default) is the paper's: a multivariate normal
//     centred on the current state with diagonal covariance √|D| — so a
//     standard deviation of |D|^(1/4) per variable, |D| its domain size —
//     rounded to the nearest value and clamped into the domain. Every
//     interior variable moves at once. The paper calls this proposal
//     symmetric and accepts with min(1, π̃(z*)/π̃(z)). Rounding keeps it
//     symmetric, but clamping does not: near the ends of a domain all the
//     mass beyond the end lands on the end value (from 0, the step to 0
//     has probability Φ(½/σ) > ½, while an inner value stays put with
//     probability 2Φ(½/σ) − 1). Ignoring that would bias the chain
//     towards the domain ends, so we keep the paper's proposal and add
//     the exact Hastings ratio q(z|z*)/q(z*|z), computed from the same
//     tables the proposal is drawn from (see normalStep). The chain then
//     targets π exactly.
//   - "discrete" changes one uniformly chosen interior variable to a
//     uniformly chosen other value: symmetric, so the ratio is 1, and a
//     trial reads only the functions of that variable.
//
// An MH value is safe for concurrent use, but it already spreads each
// call over Options.Workers goroutines.
type MH struct{ e *engine }

// NewMH returns a Metropolis-Hastings sampler for lp. It fails on invalid
// options or a malformed local problem.
func NewMH(lp *mva.LocalProblem, o Options) (*MH, error) {
	k := mhNormal
	if o.Proposal == ProposalDiscrete {
		k = mhDiscrete
	}
	e, err := newEngine("metropolis-hastings", lp, o, k)
	if err != nil {
		return nil, err
	}
	return &MH{e: e}, nil
}

// SolveRow samples the row of the given boundary values and writes the
// best interior assignment found. It returns its cost, which equals
// lp.Eval of the full assignment, or mva.Hard when no chain found a
// feasible one — which does not prove that none exists.
func (s *MH) SolveRow(ctx context.Context, boundary, interior []int) (float64, error) {
	return s.e.solveRow(ctx, boundary, interior)
}

// SolveTable samples every unknown row of t (an eager MVA table), all
// (row, run) chains in parallel.
func (s *MH) SolveTable(ctx context.Context, t *mva.Table) error {
	return s.e.solveTable(ctx, t)
}

// Checks returns the cost-table entries read so far: one per function for
// each normal proposal evaluated, two per function of the moved variable
// for a discrete one.
func (s *MH) Checks() int64 { return s.e.checks.Load() }

// Options returns the options in effect, defaults filled in.
func (s *MH) Options() Options { return s.e.o }
