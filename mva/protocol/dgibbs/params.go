package dgibbs

import (
	"fmt"
	"math"

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
func iterations(params map[string]float64) (int, error) {
	alpha, hasAlpha := params["alpha"]
	eps, hasEps := params["epsilon"]
	if !hasAlpha && !hasEps {
		return localsearch.Int(params, "iterations", DefaultIterations, 1, MaxIterations)
	}
	if hasAlpha != hasEps {
		return 0, fmt.Errorf("parameters alpha and epsilon go together (N = 1/(alpha·epsilon) samples)")
	}
	if _, given := params["iterations"]; given {
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

func temperature(params map[string]float64) (float64, error) {
	tau, ok := params["temperature"]
	if !ok {
		tau = DefaultTemperature
	}
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

func interiorMode(params map[string]float64) (int, error) {
	return localsearch.Int(params, "interior", InteriorBest, InteriorBest, InteriorGibbs)
}

// Config is D-Gibbs's configuration. A run sets it by name on the
// command line (`-p iterations=200 -p interior=gibbs`, mva.Node.Params;
// the package comment says what each does); ParseConfig reads such a
// map, and the agents read only the Config.
type Config struct {
	// Iterations is the number of samples N (iterations, or ⌈1/(α·ε)⌉
	// from alpha and epsilon), 1..MaxIterations.
	Iterations int
	// Temperature is τ (temperature), positive and finite.
	Temperature float64
	// Init is the first boundary assignment (init; default first).
	Init localsearch.Init
	// Interior is InteriorBest or InteriorGibbs (interior).
	Interior int
}

// ParseConfig returns the configuration params set, the documented
// defaults for the parameters it lacks, validated. Names D-Gibbs does
// not read are ignored, as other protocols' parameters may share the map.
func ParseConfig(params map[string]float64) (Config, error) {
	var c Config
	var err error
	if c.Iterations, err = iterations(params); err != nil {
		return Config{}, fmt.Errorf("dgibbs: %w", err)
	}
	if c.Temperature, err = temperature(params); err != nil {
		return Config{}, fmt.Errorf("dgibbs: %w", err)
	}
	if c.Init, err = localsearch.InitParam(params, localsearch.InitFirst); err != nil {
		return Config{}, fmt.Errorf("dgibbs: %w", err)
	}
	if c.Interior, err = interiorMode(params); err != nil {
		return Config{}, fmt.Errorf("dgibbs: %w", err)
	}
	return c, c.validate()
}

// validate reports a field out of range, naming its parameter.
func (c Config) validate() error {
	switch {
	case c.Iterations < 1 || c.Iterations > MaxIterations:
		return fmt.Errorf("dgibbs: parameter iterations = %d: want an integer in 1..%d", c.Iterations, MaxIterations)
	case !(c.Temperature > 0) || math.IsInf(c.Temperature, 1):
		return fmt.Errorf("dgibbs: temperature = %v: want a positive finite number", c.Temperature)
	case c.Init < localsearch.InitFirst || c.Init > localsearch.InitStart:
		return fmt.Errorf("dgibbs: parameter init = %d: want an integer in %d..%d", c.Init, localsearch.InitFirst, localsearch.InitStart)
	case c.Interior != InteriorBest && c.Interior != InteriorGibbs:
		return fmt.Errorf("dgibbs: parameter interior = %d: want %d (best) or %d (gibbs)", c.Interior, InteriorBest, InteriorGibbs)
	}
	return nil
}
