package dgibbs

import (
	"fmt"
	"math"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
)

// DefaultIterations is the number of samples when neither "iterations"
// nor "alpha" and "epsilon" are given.
const DefaultIterations = 100

// DefaultTemperature is τ in P(x) ∝ exp(−cost(x)/τ): 1 is the paper's
// mapping of costs to probabilities.
const DefaultTemperature = 1.0

// MaxIterations bounds the iterations, given or derived from α and ε.
const MaxIterations = 1 << 30

// iterations reads the number of samples: "iterations", or, when both
// "alpha" and "epsilon" are given, N = ⌈1/(α·ε)⌉ — after N samples the
// best solution found is in the top α fraction of all solutions with
// probability at least 1 − ε (thesis Corollary 1; notes §2.8, which list
// the assumptions: a mixed chain, no zero-probability regions).
func iterations(n *mva.Node) (int, error) {
	alpha, hasAlpha := n.Params["alpha"]
	eps, hasEps := n.Params["epsilon"]
	if !hasAlpha && !hasEps {
		return localsearch.Int(n, "iterations", DefaultIterations, 1, MaxIterations)
	}
	if hasAlpha != hasEps {
		return 0, fmt.Errorf("parameters alpha and epsilon go together (N = 1/(alpha·epsilon) samples)")
	}
	if _, given := n.Params["iterations"]; given {
		return 0, fmt.Errorf("give either iterations or alpha and epsilon, not both")
	}
	if !(alpha > 0 && alpha <= 1) || !(eps > 0 && eps <= 1) {
		return 0, fmt.Errorf("alpha = %v, epsilon = %v: both must lie in (0, 1]", alpha, eps)
	}
	// Rounding may put α·ε's reciprocal a hair above an integer; a
	// relative slack of 1e-12 keeps 1/(0.1·0.1) at 100, not 101.
	N := math.Ceil(1/(alpha*eps) - 1e-12*(1/(alpha*eps)))
	if N > MaxIterations {
		return 0, fmt.Errorf("alpha = %v, epsilon = %v ask for %.0f samples, more than %d", alpha, eps, N, MaxIterations)
	}
	return max(int(N), 1), nil
}

func temperature(n *mva.Node) (float64, error) {
	tau := n.Param("temperature", DefaultTemperature)
	if !(tau > 0) || math.IsInf(tau, 1) {
		return 0, fmt.Errorf("temperature = %v: want a positive finite number", tau)
	}
	return tau, nil
}

// Interior modes: how an agent decides its interior variables (parameter
// "interior").
const (
	// InteriorBest takes the MVA row's completion: the best interior
	// assignment the local solver found for the boundary values. It is
	// the default and the right choice for exact local solvers.
	InteriorBest = 0
	// InteriorGibbs samples the interior by local Gibbs conditioned on the
	// agent's own variables, one sweep per iteration at the protocol's
	// temperature: MVA-DG (thesis Theorem 4), whose chain over the whole
	// state is plain D-Gibbs's. The command line sets it with --local gibbs.
	InteriorGibbs = 1
)

// InteriorNames name the values of "interior" (-p interior=gibbs reads
// as interior=1).
var InteriorNames = map[string]int{"best": InteriorBest, "gibbs": InteriorGibbs}

func interiorMode(n *mva.Node) (int, error) {
	return localsearch.Int(n, "interior", InteriorBest, InteriorBest, InteriorGibbs)
}
