package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/gen"
	"github.com/hearth-dcop/hearth/mva/reform"
)

// ErrUnavailable is wrapped by a SolveFunc's error for an algorithm this
// build cannot run (a GPU solver without CUDA); the row's status is
// "unavailable".
var ErrUnavailable = errors.New("not available in this build")

// SolveFunc solves p with algorithm a and seed, as `hearth solve` would.
type SolveFunc func(ctx context.Context, p *mva.Problem, a Algorithm, seed uint64) (mva.Result, error)

// Options configure Run.
type Options struct {
	// Quick runs the experiment's reduced plan.
	Quick bool
	// Seeds and Timeout override the plan's when positive.
	Seeds   int
	Timeout time.Duration
	// Delay, when positive, is the simulated latency of every message of
	// every algorithm (the papers' D; the plans use none).
	Delay time.Duration
	// Sweeps, when not empty, runs only the sweeps of these names.
	Sweeps []string
	// Solve runs one algorithm on one instance.
	Solve SolveFunc
	// Progress, when set, is told after every run how many of the total
	// are done and what ran last.
	Progress func(done, total int, what string)
	// Host describes the machine; it goes in every row.
	Host string
	// DataDir is where experiments on data sets find their files; ""
	// searches the usual places (see SHDS).
	DataDir string
}

// Run runs experiment e and returns its rows, with references and gaps
// filled in. An interrupted run (ctx cancelled) returns the rows so far
// with ctx's error.
func Run(ctx context.Context, e *Experiment, o Options) ([]Row, error) {
	if e.Unavailable != "" {
		return nil, fmt.Errorf("%s: %s", e.Name, e.Unavailable)
	}
	if o.Solve == nil {
		return nil, errors.New("bench: no SolveFunc")
	}
	plan := e.Plan(o.Quick)
	if o.Seeds > 0 {
		plan.Seeds = o.Seeds
	}
	if o.Timeout > 0 {
		plan.Timeout = o.Timeout
	}
	sweeps, err := selectSweeps(plan.Sweeps, o.Sweeps)
	if err != nil {
		return nil, err
	}
	total := 0
	for _, s := range sweeps {
		total += len(s.Points) * plan.Seeds * len(algorithmsOf(s, plan))
	}
	r := &runner{e: e, o: o, plan: plan, total: total}
	for _, s := range sweeps {
		if err := r.sweep(ctx, s); err != nil {
			Score(r.rows)
			return r.rows, err
		}
	}
	Score(r.rows)
	return r.rows, nil
}

func selectSweeps(all []Sweep, names []string) ([]Sweep, error) {
	if len(names) == 0 {
		return all, nil
	}
	var out []Sweep
	for _, n := range names {
		i := slices.IndexFunc(all, func(s Sweep) bool { return s.Name == n })
		if i < 0 {
			var valid []string
			for _, s := range all {
				valid = append(valid, s.Name)
			}
			return nil, fmt.Errorf("unknown sweep %q (valid: %s)", n, strings.Join(valid, ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

func algorithmsOf(s Sweep, p Plan) []Algorithm {
	if s.Algorithms != nil {
		return s.Algorithms
	}
	return p.Algorithms
}

type runner struct {
	e     *Experiment
	o     Options
	plan  Plan
	rows  []Row
	done  int
	total int
}

func (r *runner) sweep(ctx context.Context, s Sweep) error {
	algs := algorithmsOf(s, r.plan)
	// failedAt[i] is the point label at which algorithm i failed on
	// every seed, in a monotone sweep.
	failedAt := make([]string, len(algs))
	for _, pt := range s.Points {
		failures := make([]int, len(algs))
		for seed := uint64(1); seed <= uint64(r.plan.Seeds); seed++ {
			p, genErr := r.instance(s, pt, seed)
			for i, a := range algs {
				if err := ctx.Err(); err != nil {
					return err
				}
				a = a.clone()
				if r.o.Delay > 0 {
					a.Delay = r.o.Delay
				}
				if pt.Tune != nil {
					pt.Tune(&a)
				}
				row := r.newRow(s, pt, seed, a, p)
				switch {
				case genErr != nil:
					row.Status, row.Error = StatusError, "generating the instance: "+genErr.Error()
				case failedAt[i] != "":
					row.Status = StatusSkipped
					row.Error = "failed on every seed at " + s.Name + "=" + failedAt[i]
				default:
					r.solve(ctx, &row, p, a, seed, s.Measure)
					if err := ctx.Err(); err != nil {
						return err // interrupted: the row is not a result
					}
				}
				if row.Status == StatusTimeout || row.Status == StatusMemory || row.Status == StatusSkipped {
					failures[i]++
				}
				r.rows = append(r.rows, row)
				r.done++
				if r.o.Progress != nil {
					r.o.Progress(r.done, r.total, fmt.Sprintf("%s %s=%s seed %d %s", r.e.Name, s.Name, pt.Label, seed, a.Name()))
				}
			}
		}
		if s.Monotone {
			for i := range algs {
				if failedAt[i] == "" && failures[i] == r.plan.Seeds {
					failedAt[i] = pt.Label
				}
			}
		}
	}
	return nil
}

// instance makes the problem of a point and seed.
func (r *runner) instance(s Sweep, pt Point, seed uint64) (*mva.Problem, error) {
	if s.Build != nil {
		return s.Build(seed, pt, r.o.DataDir)
	}
	params := maps.Clone(s.Base)
	if params == nil {
		params = map[string]string{}
	}
	maps.Copy(params, pt.Gen)
	return gen.Generate(s.Kind, seed, params)
}

func (r *runner) newRow(s Sweep, pt Point, seed uint64, a Algorithm, p *mva.Problem) Row {
	row := Row{
		Experiment: r.e.Name, Sweep: s.Name, X: pt.X, XLabel: pt.Label, Seed: seed,
		Algorithm: a.Name(), Group: a.Group, Variant: a.Variant,
		Global: a.Global, Local: a.Local, Table: a.Table, Reform: a.Reform, Device: a.Device(),
		Objective: math.NaN(), Reference: math.NaN(), GapPct: math.NaN(),
		SimTimeMs: math.NaN(), WallMs: math.NaN(), PeakLoad: math.NaN(), Price: math.NaN(), Host: r.o.Host,
	}
	if row.Reform == "" {
		row.Reform = "mva"
	}
	if a.Sampling() {
		row.Runs, row.Trials = a.Runs, a.Trials
	}
	if p != nil {
		st := p.Stats()
		row.Agents, row.Variables, row.Sense = st.Agents, st.Variables, p.Sense.String()
	}
	return row
}

// solve runs one algorithm under the plan's time limit and records the
// outcome in row. A panic in a solver is recorded as an error row (and
// fails Check) instead of losing the whole experiment.
func (r *runner) solve(ctx context.Context, row *Row, p *mva.Problem, a Algorithm, seed uint64, measure MeasureFunc) {
	rctx, cancel := context.WithTimeout(ctx, r.plan.Timeout)
	defer cancel()
	start := time.Now()
	res, err := func() (res mva.Result, err error) {
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("panic: %v\n%s", v, debug.Stack())
			}
		}()
		return r.o.Solve(rctx, p, a, seed)
	}()
	wall := float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		row.Status = classify(rctx, err)
		row.Error = firstLine(err.Error())
		if row.Status == StatusTimeout {
			row.WallMs = wall
		}
		return
	}
	// What actually ran: the solver's defaults fill what the plan left
	// open (the table mode of DMCMC, say).
	if res.Algorithm.Table != "" {
		row.Table = res.Algorithm.Table
	}
	if res.Algorithm.Reform != "" {
		row.Reform = res.Algorithm.Reform
	}
	row.Optimal = res.Optimal
	row.Status = StatusInfeasible
	if res.Objective != nil && res.Feasible {
		row.Status = StatusOK
		row.Objective = *res.Objective
	}
	m := res.Metrics
	row.SimTimeMs, row.WallMs = m.SimTimeMs, m.WallMs
	row.NCCC, row.Messages, row.Internal = m.NCCC, m.Messages, m.InternalMessages
	row.MaxBytes, row.Bytes = m.MaxMessageBytes, m.TotalMessageBytes
	if measure != nil && row.Status == StatusOK {
		if err := measure(p, res, row); err != nil {
			row.Status, row.Error = StatusError, "measuring the solution: "+err.Error()
		}
	}
}

// classify maps a solver's error to a status.
func classify(ctx context.Context, err error) string {
	switch {
	case errors.Is(err, ErrUnavailable):
		return StatusUnavailable
	case errors.Is(err, reform.ErrTooLarge), errors.Is(err, local.ErrTooLarge):
		return StatusMemory
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return StatusTimeout
	}
	return StatusError
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 && !strings.HasPrefix(s, "panic") {
		return s[:i]
	}
	return s
}
