package sampler

import (
	"fmt"
	"math"
	"strings"

	"github.com/hearth-dcop/hearth/mva"
)

// Defaults of Options, those of the thesis's DMCMC experiments with Gibbs
// (R = 10 runs of T = 100 trials) and of the DCOP ↔ MAP mapping (τ = 1).
// The command line's default temperature is ScaleTemperature instead.
const (
	DefaultRuns         = 10
	DefaultTrials       = 100
	DefaultTemperature  = 1.0
	DefaultRepairSweeps = 20
)

// TemperatureFraction is the fraction of a local problem's cost scale that
// ScaleTemperature takes as τ. On 5-agent PEAV meeting scheduling (costs
// up to 100 per event, a cost scale near 70) DMCMC-Gibbs with R = 10,
// T = 100 is, over 20 instances, 4.1% above the optimum on average at
// τ = 1, 1.5% at a fraction of 0.05, 0.3% at 0.1 and 1.7% at 0.2 (see the
// temperature sweep of `hearth bench dmcmc-meeting`).
const TemperatureFraction = 0.1

// Proposals of Metropolis-Hastings.
const (
	// ProposalNormal is the DMCMC paper's proposal: every interior
	// variable moves by a rounded normal step, clamped to its domain.
	ProposalNormal = "normal"
	// ProposalDiscrete changes one uniformly chosen interior variable to
	// a uniformly chosen other value.
	ProposalDiscrete = "discrete"
)

// Options configures a sampler. The zero value means the defaults.
type Options struct {
	// Runs is R, the number of independent chains per MVA row, each from
	// its own random starting point; the row keeps the best sample of
	// all of them. 0 means DefaultRuns.
	Runs int
	// Trials is T, the samples each chain draws: Gibbs sweeps (every
	// interior variable resampled once) or Metropolis-Hastings proposals.
	// 0 means DefaultTrials.
	Trials int
	// Temperature is τ in the target π(z) ∝ exp(−cost(z)/τ). Low values
	// concentrate the chains on cheap assignments, high ones let them
	// cross the ridges between local minima; τ = 1 is the papers' mapping
	// of a DCOP to a MAP problem, nearly greedy when costs run in tens
	// (ScaleTemperature picks τ from the costs). 0 means
	// DefaultTemperature.
	Temperature float64
	// Seed keys the random numbers: the same seed, problem and options
	// give the same table, whatever the number of workers.
	Seed uint64
	// Proposal selects the Metropolis-Hastings proposal, ProposalNormal
	// (the default, "") or ProposalDiscrete. Gibbs ignores it.
	Proposal string
	// StdDev is the standard deviation of the normal proposal's step, in
	// domain values. 0 means the paper's covariance √|D| per variable,
	// so a standard deviation of |D|^(1/4). Others ignore it.
	StdDev float64
	// RepairSweeps bounds the greedy repair of a chain that starts in an
	// infeasible state (see the package documentation). 0 means
	// DefaultRepairSweeps; a negative value turns repair off.
	RepairSweeps int
	// Workers is the number of goroutines sharing the (row, run) chains.
	// 0 means runtime.GOMAXPROCS(0). It never changes the results.
	Workers int
}

// withDefaults validates o and fills in its defaults.
func (o Options) withDefaults() (Options, error) {
	if o.Runs < 0 || o.Trials < 0 || o.Workers < 0 {
		return o, fmt.Errorf("runs (%d), trials (%d) and workers (%d) must not be negative", o.Runs, o.Trials, o.Workers)
	}
	if o.Runs == 0 {
		o.Runs = DefaultRuns
	}
	if o.Trials == 0 {
		o.Trials = DefaultTrials
	}
	// Runs and trials are Philox counter words (see the package doc).
	if int64(o.Runs) > math.MaxUint32 || int64(o.Trials) >= math.MaxUint32 {
		return o, fmt.Errorf("runs (%d) and trials (%d) must be below 2^32", o.Runs, o.Trials)
	}
	switch t := o.Temperature; {
	case t == 0:
		o.Temperature = DefaultTemperature
	case !(t > 0) || math.IsInf(t, 1):
		return o, fmt.Errorf("temperature %v must be positive and finite", t)
	}
	switch o.Proposal {
	case "":
		o.Proposal = ProposalNormal
	case ProposalNormal, ProposalDiscrete:
	default:
		return o, fmt.Errorf("unknown proposal %q (valid: %s, %s)", o.Proposal, ProposalNormal, ProposalDiscrete)
	}
	if s := o.StdDev; s < 0 || math.IsNaN(s) || math.IsInf(s, 1) {
		return o, fmt.Errorf("standard deviation %v must be positive and finite", s)
	}
	if o.RepairSweeps == 0 {
		o.RepairSweeps = DefaultRepairSweeps
	}
	return o, nil
}

// ScaleTemperature returns a temperature that follows the units of lp's
// costs, the default of `hearth solve --local gibbs|mh`: TemperatureFraction of the local problem's
// cost scale, the mean spread of the functions that hold an interior
// variable, a function's spread being its largest finite cost minus its
// smallest (Hard entries left out); DefaultTemperature when no such
// function has a spread. The rule makes τ follow the units of the costs:
// a move that changes the cost by a tenth of a typical function's range
// is e times less likely, whatever the problem's currency.
func ScaleTemperature(lp *mva.LocalProblem) float64 {
	sum, n := 0.0, 0
	for _, f := range lp.Funcs {
		interior := false
		for _, k := range f.Scope {
			interior = interior || k >= lp.NB
		}
		if !interior {
			continue
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, c := range f.Costs {
			if !mva.IsHard(c) {
				lo, hi = math.Min(lo, c), math.Max(hi, c)
			}
		}
		if hi > lo {
			sum += hi - lo
			n++
		}
	}
	if n == 0 {
		return DefaultTemperature
	}
	return TemperatureFraction * sum / float64(n)
}

// Names returns the samplers New knows.
func Names() []string { return []string{"gibbs", "mh"} }

// New returns the sampler called name ("gibbs" or "mh") for lp.
func New(name string, lp *mva.LocalProblem, o Options) (mva.LocalSolver, error) {
	switch name {
	case "gibbs":
		return NewGibbs(lp, o)
	case "mh":
		return NewMH(lp, o)
	}
	return nil, fmt.Errorf("unknown sampler %q (valid: %s)", name, strings.Join(Names(), ", "))
}

// QualityBound returns N = ⌈1/(α·ε)⌉, the number of samples per MVA row
// after which the best sample lies in the top α-fraction of the row's
// interior assignments with probability at least 1 − ε: the guarantee of
// Nguyen, Yeoh and Lau (2013) that the DMCMC paper (Property 1) and the
// thesis (Corollary 1 for MVA with Gibbs, Lemma 8 for DMCMC) carry over
// to MVA rows. Choose Runs·Trials ≥ N to get it.
//
// The argument is Markov's inequality: if the expected number of samples
// before the first one in the top α is at most 1/α — true for independent
// uniform samples, and the thesis (Theorem 12) argues that an irreducible,
// aperiodic chain does no worse — then the probability of still missing
// the top α after N samples is at most (1/α)/N = ε. It says nothing about
// how close to the optimum the top α is, and for correlated chain samples
// it is the papers' argument, not something this package proves. Rows of
// an agent are sampled independently given their boundary values, so with
// m agents the whole solution is in the product of their top sets with
// probability at least ∏(1 − ε_i) (DMCMC Theorem 1).
//
// α and ε must lie in (0, 1]; otherwise QualityBound returns 0. The result
// saturates at math.MaxInt. 1/(α·ε) is rounded up after a relative
// tolerance of 1e-12, so that α = ε = 0.1 gives 100 and not 101.
func QualityBound(alpha, epsilon float64) int {
	if !(alpha > 0 && alpha <= 1 && epsilon > 0 && epsilon <= 1) {
		return 0
	}
	x := 1 / (alpha * epsilon)
	x = math.Ceil(x * (1 - 1e-12))
	if x >= math.MaxInt {
		return math.MaxInt
	}
	return int(x)
}
