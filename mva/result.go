package mva

import (
	"encoding/json"
	"math"
)

// Result is the object `hearth solve --json` prints (DESIGN.md, "Results").
// Objective is in the file's own sense; it is null when no feasible
// solution was found, because JSON has no infinity. Status says what the
// run proved (Conclude).
type Result struct {
	Instance   string            `json:"instance"`
	Sense      string            `json:"sense"`
	Objective  *float64          `json:"objective"`
	Feasible   bool              `json:"feasible"`
	Optimal    bool              `json:"optimal"`
	Status     Status            `json:"status"`
	Assignment map[string]string `json:"assignment"`
	Algorithm  Algorithm         `json:"algorithm"`
	Metrics    Metrics           `json:"metrics"`
	// Notes say how the solver was chosen (--local auto: which ran and
	// why).
	Notes []string `json:"notes,omitempty"`
}

// Algorithm names the solver configuration that produced a result.
type Algorithm struct {
	Global string `json:"global"`
	Local  string `json:"local"`
	Table  string `json:"table"`
	Reform string `json:"reform"`
	GPU    bool   `json:"gpu"`
	// Sampling is set when the local solver samples (Gibbs,
	// Metropolis-Hastings).
	Sampling *Sampling `json:"sampling,omitempty"`
}

// Sampling reports a sampling local solver's parameters and the quality
// guarantee they imply (thesis Corollary 1, DMCMC Lemma 8): with N samples
// per MVA row, the best one lies in the top Alpha fraction of the row's
// completions with probability at least 1 − Epsilon, Epsilon = 1/(Alpha·N).
//
// Temperature is τ; 0 means that each agent sampled at its own τ, a tenth
// of its cost scale (sampler.ScaleTemperature), the command line's default.
type Sampling struct {
	Runs          int     `json:"runs"`
	Trials        int     `json:"trials"`
	Temperature   float64 `json:"temperature"`
	Proposal      string  `json:"proposal,omitempty"`
	Seed          uint64  `json:"seed"`
	SamplesPerRow int     `json:"samples_per_row"`
	Alpha         float64 `json:"alpha"`
	Epsilon       float64 `json:"epsilon"`
}

// Metrics are the research metrics of a run: simulated time, non-concurrent
// constraint checks, message counts and sizes, and wall-clock time.
type Metrics struct {
	SimTimeMs         float64 `json:"sim_time_ms"`
	NCCC              int64   `json:"nccc"`
	Messages          int64   `json:"messages"`
	InternalMessages  int64   `json:"internal_messages"`
	MaxMessageBytes   int64   `json:"max_message_bytes"`
	TotalMessageBytes int64   `json:"total_message_bytes"`
	WallMs            float64 `json:"wall_ms"`
}

// NewResult fills the instance-dependent part of a result from a complete
// assignment and its internal cost: the objective in the file's sense, the
// labelled assignment, and feasibility.
func NewResult(p *Problem, assign []int, cost float64) Result {
	r := Result{Instance: p.Name, Sense: p.Sense.String(), Assignment: map[string]string{}}
	if assign != nil && !IsHard(cost) && !math.IsNaN(cost) {
		obj := p.Sense.Report(cost)
		r.Objective = &obj
		r.Feasible = true
		r.Assignment = p.Labels(assign)
	}
	return r
}

// Status is what a run proved about the problem.
type Status string

const (
	// StatusOptimal: a feasible assignment, proved optimal.
	StatusOptimal Status = "optimal"
	// StatusFeasible: a feasible assignment, not proved optimal.
	StatusFeasible Status = "feasible"
	// StatusInfeasible: a complete algorithm proved that every
	// assignment violates a hard constraint.
	StatusInfeasible Status = "infeasible"
	// StatusUnknown: no feasible assignment was found by an algorithm
	// that may miss one (a local search, a sampler), which proves
	// nothing.
	StatusUnknown Status = "unknown"
)

// Conclude sets r.Status from r.Feasible and r.Optimal; complete says
// whether the algorithm would have found a feasible assignment if there
// were one (an exact protocol over exact rows, or an exact central
// solver), so that only then does finding none prove infeasibility.
func (r *Result) Conclude(complete bool) {
	switch {
	case r.Feasible && r.Optimal:
		r.Status = StatusOptimal
	case r.Feasible:
		r.Status = StatusFeasible
	case complete:
		r.Status = StatusInfeasible
	default:
		r.Status = StatusUnknown
	}
}

// JSON returns the result as indented JSON with a trailing newline.
func (r Result) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
