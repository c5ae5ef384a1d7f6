package solve

import (
	"context"
	"errors"
	"fmt"
	"github.com/hearth-dcop/hearth/internal/solvefile"
	"maps"
	"runtime/debug"

	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/local/gpu"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/reform"
	"github.com/hearth-dcop/hearth/sampler"
)

// HomeOptions returns base (the command's flags, with their
// defaults) with the neighbourhood's solver choice in place: protocol,
// local solver, table, seed, parameters, start, GPU mode and time-out.
// Everything else of base (sampler runs and trials, delay, --json) is
// kept.
func HomeOptions(r *homesolve.Run, base Options) Options {
	c := r.WithStart(r.Choice())
	o := base
	o.Global, o.Local.Name, o.Table, o.GPU, o.Seed = c.Global, c.Local, c.Table, c.GPU, c.Seed
	if o.Local.Temperature == 0 {
		// Homes whose rows are sampled keep the papers' τ = 1 unless
		// --temperature says otherwise: the SHDS figures were measured
		// so, and the samplers' cost-scale default was chosen on meeting
		// scheduling.
		o.Local.Temperature = sampler.DefaultTemperature
	}
	o.Params = maps.Clone(c.Params)
	if o.Params == nil {
		o.Params = map[string]float64{}
	}
	o.Start = c.Start
	if c.Timeout > 0 {
		o.Timeout = c.Timeout
	}
	if o.Reform == "" {
		o.Reform = "mva"
	}
	if o.MaxEntries == 0 {
		o.MaxEntries = reform.DefaultMaxEntries
	}
	return o
}

// HomeRestart is homesolve's Run.Restart for Options.
func HomeRestart(r *homesolve.Run, o Options) (Options, bool) {
	c, ok := r.Restart(homesolve.Choice{Global: o.Global, Params: o.Params, Start: o.Start})
	if !ok {
		return o, false
	}
	o.Params, o.Start = c.Params, c.Start
	return o, true
}

// Defaults are the flag defaults of Options, for callers
// without a command line (tests, the bench).
func Defaults() Options {
	return Options{
		Local:      solvefile.Local{Name: "be", Runs: sampler.DefaultRuns, Trials: sampler.DefaultTrials, Temperature: sampler.DefaultTemperature, Proposal: sampler.ProposalNormal, Alpha: 0.05},
		Reform:     "mva",
		Seed:       1,
		Params:     map[string]float64{},
		MaxEntries: reform.DefaultMaxEntries,
		GPU:        "off",
	}
}

// Homes solves the run's problem on the simulated runtime with o
// (normally HomeOptions of the command's flags) through the path of `hearth
// solve` — Distributed, or Central for global "none" — and
// returns the result with its assignment. A protocol run that finds no
// feasible schedule is run again from the homes' own schedules (Restart).
func Homes(ctx context.Context, r *homesolve.Run, o Options, dev *gpu.Device) (mva.Result, []int, error) {
	if err := o.Local.Validate(); err != nil {
		return mva.Result{}, nil, err
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	p := r.Problem()
	var res mva.Result
	var err error
	if o.Global == "none" {
		res, err = solvefile.Central(ctx, p, &o.Local, o.Seed, dev)
	} else {
		res, err = Distributed(ctx, p, o, dev)
		if err == nil && !res.Feasible && ctx.Err() == nil {
			if o2, ok := HomeRestart(r, o); ok {
				res, err = Distributed(ctx, p, o2, dev)
			}
		}
	}
	// The protocol's lazy MVA tables are dense: on SHDS they address
	// gigabytes of virtual memory (4^12 rows per home) of which little
	// is touched. Handing it back now keeps a later solve in the same
	// process (hearth bench) from zeroing reused pages into residence.
	debug.FreeOSMemory()
	if err != nil {
		return mva.Result{}, nil, err
	}
	res.Instance = r.Path()
	if !res.Feasible {
		return res, nil, nil
	}
	assign, err := homesolve.Assignment(p, res.Assignment)
	if err != nil {
		return mva.Result{}, nil, fmt.Errorf("internal error: %w", err)
	}
	return res, assign, nil
}

// HomeRun is HomeOptions, checked, for the agents of `hearth run`: a
// home needs a protocol to run.
func HomeRun(r *homesolve.Run, base Options) (Options, error) {
	o := HomeOptions(r, base)
	if err := o.Check(); err != nil {
		return o, err
	}
	if o.Global == "none" {
		return o, errors.New("global solver \"none\" solves centrally, with no agents to run; name a protocol ([solver] global or --global)")
	}
	return o, nil
}
