package mva

import "errors"

// ErrTooLarge is wrapped by the errors of an ExactFactory whose solver's
// tables would exceed the bound it was given.
var ErrTooLarge = errors.New("tables too large")

// ExactFactory makes the exact solvers a protocol builds for problems of
// its own (MGM's best responses over an agent's whole local problem): with
// maxEntries > 0, bucket elimination whose tables stay within maxEntries
// entries, or an error wrapping ErrTooLarge; with maxEntries 0, a solver
// whose memory is bounded by the problem (depth-first branch and bound).
// Protocols receive it through their Node, so that package mva and the
// protocols depend on no solver package (local implements it: local.Exact).
type ExactFactory func(lp *LocalProblem, maxEntries int) (LocalSolver, error)

// ConditionalSampler samples an agent's interior given its boundary, for
// protocols that sample the interior themselves (MVA-D-Gibbs): the Gibbs
// conditionals of a local problem at one temperature. z is a full local
// assignment, boundary values first.
type ConditionalSampler interface {
	// Energies returns, for every value of local variable k, the number
	// of Hard entries and the sum of the other costs of the local
	// functions holding it, the other variables as in z; valid until the
	// next call.
	Energies(k int, z []int) (viol []int32, cost []float64)
	// Sweep resamples every interior variable of z once, in order;
	// (run, step) key its random numbers.
	Sweep(z []int, run, step uint32)
	// Eval returns z's Hard entries and the sum of its other costs.
	Eval(z []int) (viol int, cost float64)
	// Checks counts the cost-table entries read.
	Checks() int64
}

// SamplerFactory makes the conditional sampler of lp at temperature tau
// with random numbers keyed by seed (sampler.NewConditionalSampler).
type SamplerFactory func(lp *LocalProblem, tau float64, seed uint64) (ConditionalSampler, error)

// A HoldingSolver is a LocalSolver that can keep its working memory
// between rows on request. Bucket elimination keeps its bucket tables
// between rows so that a row close to the last one reruns only the buckets
// it reaches — but hundreds of agents' solvers keeping theirs between
// their best responses held most of a large street's heap. A caller that
// solves rows in bursts (a best response: its first solve, its restricted
// solves) calls Hold before the burst and Release after it, so that the
// tables live for the burst alone.
type HoldingSolver interface {
	LocalSolver
	// Hold keeps the working memory between rows, whatever its size,
	// until Release. Until then the caller promises not to edit the
	// functions' costs in place, so the solver need not watch them.
	Hold()
	// Release drops the working memory Hold kept and ends the promise;
	// the next row is solved from scratch.
	Release()
}
