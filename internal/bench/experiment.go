package bench

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// Algorithm is one solver configuration, in the terms of `hearth solve`'s
// flags. Group and Variant name it in tables and plots: a plot has one
// panel per group and one line per variant, as the thesis's figures have a
// panel per protocol and a bar per reformulation.
type Algorithm struct {
	Group   string // "AFB-DFBnB"
	Variant string // "MVA-lazy"
	// Label, when set, is the name in tables instead of Group Variant
	// (the papers' names: "GPU-DBE").
	Label string
	// Global is the protocol (dpop, afb, dgibbs, mgm, mgm2), or "none" to
	// solve the whole instance centrally.
	Global string
	// Local is the local solver: be, dfbnb, bruteforce, gibbs, mh.
	Local string
	// Table is lazy or eager; "" lets the solver choose as `hearth
	// solve` does.
	Table string
	// Reform is mva, compilation or decomposition ("" means mva).
	Reform string
	// GPU asks for the GPU version of the local solver.
	GPU bool
	// Params are the protocol's -p parameters.
	Params map[string]float64
	// Runs, Trials, Temperature and Proposal tune a sampling local
	// solver; zero values mean the sampler's defaults.
	Runs, Trials int
	Temperature  float64
	Proposal     string
	// MaxEntries bounds the compilation reformulation's tables; 0 means
	// the default of `hearth solve`.
	MaxEntries int
	// Delay is the simulated latency of every message (--delay).
	Delay time.Duration
}

// Name is the algorithm's label in tables and in the CSV.
func (a Algorithm) Name() string {
	if a.Label != "" {
		return a.Label
	}
	if a.Variant == "" {
		return a.Group
	}
	return a.Group + " " + a.Variant
}

// Device is "gpu" or "cpu".
func (a Algorithm) Device() string {
	if a.GPU {
		return "gpu"
	}
	return "cpu"
}

// Exact reports whether the algorithm proves optimality: a complete
// protocol (or none) over an exact local solver.
func (a Algorithm) Exact() bool {
	complete := a.Global == "none" || a.Global == "dpop" || a.Global == "afb"
	return complete && slices.Contains(local.Names(), a.Local)
}

// Sampling reports whether the local solver samples.
func (a Algorithm) Sampling() bool { return a.Local == "gibbs" || a.Local == "mh" }

// clone returns a with its own Params map, so that a point's Tune cannot
// change the plan's algorithm.
func (a Algorithm) clone() Algorithm {
	a.Params = maps.Clone(a.Params)
	return a
}

// Point is one value of a sweep's parameter.
type Point struct {
	// X places the point on the plot's x axis.
	X float64
	// Label is how tables and the x axis write it ("8x4", "0.4").
	Label string
	// Gen are generator parameters that override the sweep's Base.
	Gen map[string]string
	// Tune, when set, adjusts every algorithm at this point (sweeps over
	// an algorithm's own parameter, such as a sampler's R or T).
	Tune func(*Algorithm)
}

// Sweep varies one parameter of a generated instance (or of the
// algorithms) and keeps the rest at Base.
type Sweep struct {
	// Name identifies the sweep in the CSV and in file names.
	Name string
	// Title is the x axis's title: "|A| (agents)".
	Title string
	// Kind is the generator kind (see mva/gen) and Base its parameters.
	Kind string
	Base map[string]string
	// Build, when set, makes the instance instead of the generator;
	// data is Options.DataDir.
	Build func(seed uint64, pt Point, data string) (*mva.Problem, error)
	// Measure, when set, adds figures of a finished run's solution to
	// its row (the smart-home peak and bill).
	Measure MeasureFunc
	Points  []Point
	// Algorithms run at every point; nil means the plan's.
	Algorithms []Algorithm
	// Monotone says that instances get harder as the points go on, so
	// that an algorithm that failed on every seed of a point is skipped
	// at the later ones.
	Monotone bool
	// LogX draws the x axis on a log scale.
	LogX bool
}

// MeasureFunc computes figures of a solution res of p into row.
type MeasureFunc func(p *mva.Problem, res mva.Result, row *Row) error

// Plan is what an experiment runs.
type Plan struct {
	Sweeps     []Sweep
	Algorithms []Algorithm
	// Seeds is the number of instances per point; seeds are 1..Seeds.
	Seeds int
	// Timeout bounds one run's wall-clock time.
	Timeout time.Duration
}

// Metric is a column of the results shown in summaries and plots.
type Metric struct {
	Name  string // the CSV column
	Title string // the axis title
	// Log draws the axis on a log scale.
	Log bool
	// Lower says smaller is better (only used in wording).
	Lower bool
	Get   func(Row) float64
}

// Ratio is a speed-up shown in the summary: Num's metric over Den's on
// the same instance, median over seeds.
type Ratio struct {
	Name     string // "GPU-BE vs BE"
	Num, Den string // algorithm names
	Metric   Metric
}

// Experiment is one entry of `hearth bench --list`.
type Experiment struct {
	Name string
	// Summary is the one-line description of --list.
	Summary string
	// Source names the published figure or table.
	Source string
	// Plan returns the full plan or, with quick, a reduced one that runs
	// in seconds.
	Plan func(quick bool) Plan
	// Metrics are plotted and summarised, in this order.
	Metrics []Metric
	Ratios  []Ratio
	// Unavailable, when set, is why the experiment cannot run in this
	// build or tree; the command reports it and exits with code 2.
	Unavailable string
}

// Experiments returns every experiment, in --list order.
func Experiments() []*Experiment {
	return []*Experiment{
		MVARandom(), Radar(), GPUDBE(), DMCMCMeeting(), DMCMCMicrogrid(), SHDS(),
	}
}

// Lookup returns the experiment called name.
func Lookup(name string) (*Experiment, error) {
	var names []string
	for _, e := range Experiments() {
		if e.Name == name {
			return e, nil
		}
		names = append(names, e.Name)
	}
	return nil, fmt.Errorf("unknown experiment %q (valid: %s)", name, strings.Join(names, ", "))
}

// The metrics the experiments share.
var (
	SimTime = Metric{Name: "sim_time_ms", Title: "simulated time (ms)", Log: true, Lower: true,
		Get: func(r Row) float64 { return r.SimTimeMs }}
	WallTime = Metric{Name: "wall_ms", Title: "wall-clock time (ms)", Log: true, Lower: true,
		Get: func(r Row) float64 { return r.WallMs }}
	Messages = Metric{Name: "messages", Title: "external messages", Log: true, Lower: true,
		Get: func(r Row) float64 { return float64(r.Messages) }}
	Internal = Metric{Name: "internal_messages", Title: "internal messages", Log: true, Lower: true,
		Get: func(r Row) float64 { return float64(r.Internal) }}
	NCCC = Metric{Name: "nccc", Title: "NCCC", Log: true, Lower: true,
		Get: func(r Row) float64 { return float64(r.NCCC) }}
	MaxBytes = Metric{Name: "max_message_bytes", Title: "largest message (bytes)", Log: true, Lower: true,
		Get: func(r Row) float64 { return float64(r.MaxBytes) }}
	// Objective is the objective in the problem's own sense.
	Objective = Metric{Name: "objective", Title: "objective", Lower: true,
		Get: func(r Row) float64 { return r.Objective }}
	// Gap is the error in solution quality, in percent of the reference
	// (the optimum where an exact algorithm proved one).
	Gap = Metric{Name: "gap_pct", Title: "error vs optimum (%)", Lower: true,
		Get: func(r Row) float64 { return r.GapPct }}
)

// point is a shorthand for a point whose label is its generator value.
func point(param string, x float64, label string) Point {
	return Point{X: x, Label: label, Gen: map[string]string{param: label}}
}

// points returns points for param at the given values, written with %g.
func points(param string, xs ...float64) []Point {
	out := make([]Point, len(xs))
	for i, x := range xs {
		out[i] = point(param, x, fmt.Sprintf("%g", x))
	}
	return out
}
