package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"runtime/debug"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/local/gpu"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/reform"
	"github.com/hearth-dcop/hearth/sampler"
)

// This file wires the homes' solver policy (devices/homesolve) to the
// commands: the flags that override a neighbourhood's [solver], the
// choice as solveOptions, and solveHomes, the simulated runtime's solve
// of a neighbourhood (`hearth sim` and `hearth run` run over MQTT).

// homeOptionsFrom reads the solver flags the user gave on fs (those left
// at their defaults do not override the TOML).
func homeOptionsFrom(fs *flag.FlagSet, o *solveOptions) homesolve.Overrides {
	var h homesolve.Overrides
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "global":
			h.Global = o.global
		case "local":
			h.Local = o.local.name
		case "table":
			h.Table = o.table
		case "gpu":
			h.GPU = o.gpu
		case "seed":
			h.Seed, h.SeedSet = o.seed, true
		case "p":
			h.Params = maps.Clone(o.params)
		case "timeout":
			h.Timeout = o.timeout
		}
	})
	return h
}

// homeSolveOptions returns base (the command's flags, with their
// defaults) with the neighbourhood's solver choice in place: protocol,
// local solver, table, seed, parameters, start, GPU mode and time-out.
// Everything else of base (sampler runs and trials, delay, --json) is
// kept.
func homeSolveOptions(r *homesolve.Run, base solveOptions) solveOptions {
	c := r.WithStart(r.Choice())
	o := base
	o.global, o.local.name, o.table, o.gpu, o.seed = c.Global, c.Local, c.Table, c.GPU, c.Seed
	if o.local.temp == 0 {
		// Homes whose rows are sampled keep the papers' τ = 1 unless
		// --temperature says otherwise: the SHDS figures were measured
		// so, and the samplers' cost-scale default was chosen on meeting
		// scheduling.
		o.local.temp = sampler.DefaultTemperature
	}
	o.params = paramFlag(maps.Clone(c.Params))
	if o.params == nil {
		o.params = paramFlag{}
	}
	o.start = c.Start
	if c.Timeout > 0 {
		o.timeout = c.Timeout
	}
	if o.reform == "" {
		o.reform = "mva"
	}
	if o.maxEntries == 0 {
		o.maxEntries = reform.DefaultMaxEntries
	}
	return o
}

// homeRestart is homesolve's Run.Restart for solveOptions.
func homeRestart(r *homesolve.Run, o solveOptions) (solveOptions, bool) {
	c, ok := r.Restart(homesolve.Choice{Global: o.global, Params: o.params, Start: o.start})
	if !ok {
		return o, false
	}
	o.params, o.start = paramFlag(c.Params), c.Start
	return o, true
}

// homeSolveDefaults are the flag defaults of solveOptions, for callers
// without a command line (tests, the bench).
func homeSolveDefaults() solveOptions {
	return solveOptions{
		local:      localOptions{name: "be", runs: sampler.DefaultRuns, trials: sampler.DefaultTrials, temp: sampler.DefaultTemperature, proposal: sampler.ProposalNormal, alpha: 0.05},
		reform:     "mva",
		seed:       1,
		params:     paramFlag{},
		maxEntries: reform.DefaultMaxEntries,
		gpu:        "off",
	}
}

// solveHomes solves the run's problem on the simulated runtime with o
// (normally homeSolveOptions of the command's flags) through the path of `hearth
// solve` — solveDistributed, or solveCentral for global "none" — and
// returns the result with its assignment. A protocol run that finds no
// feasible schedule is run again from the homes' own schedules (Restart).
func solveHomes(ctx context.Context, r *homesolve.Run, o solveOptions, dev *gpu.Device) (mva.Result, []int, error) {
	if err := o.local.validate(); err != nil {
		return mva.Result{}, nil, err
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	p := r.Problem()
	var res mva.Result
	var err error
	if o.global == "none" {
		res, err = solveCentral(ctx, p, &o.local, o.seed, dev)
	} else {
		res, err = solveDistributed(ctx, p, o, dev)
		if err == nil && !res.Feasible && ctx.Err() == nil {
			if o2, ok := homeRestart(r, o); ok {
				res, err = solveDistributed(ctx, p, o2, dev)
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

// loadExit prints an error of homesolve.Load and returns the exit code: 1 for
// rules no schedule can satisfy, 3 for a problem too large to build, 2 for
// everything else (a bad file). config.Errors print as they are, one
// "file:line: key: message" per line.
func loadExit(w io.Writer, cmd string, err error) int {
	var ce config.Errors
	if errors.As(err, &ce) {
		fmt.Fprintln(w, ce.Error())
		// A file with faults of its own is a bad file even where some
		// of its rules are also infeasible.
		if ce.Infeasible() {
			return exitInfeasible
		}
		return exitUsage
	}
	fmt.Fprintf(w, "hearth %s: %v\n", cmd, err)
	switch {
	case errors.Is(err, devices.ErrInfeasible):
		return exitInfeasible
	case errors.Is(err, devices.ErrTooLarge):
		return exitFailed
	}
	return exitUsage
}

// baselineFlags are the command line's bounds on the SH-MGM-style
// baseline.
type baselineFlags struct {
	rounds int
	budget time.Duration
}

func (b *baselineFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&b.rounds, "shmgm-rounds", 0, "homes: rounds of the SH-MGM-style baseline (0: max(100, 2·homes), stopping when no home gains; -1: skip it)")
	fs.DurationVar(&b.budget, "shmgm-budget", homesolve.SHMGMBudget, "homes: time after which the SH-MGM-style baseline starts no new round (0: no limit)")
}

// apply puts the flags into h.
func (b *baselineFlags) apply(h homesolve.Overrides) homesolve.Overrides {
	h.Rounds = b.rounds
	h.Budget = b.budget
	if b.budget == 0 {
		h.Budget = -1
	}
	return h
}

// homeFlags are the flags of the commands that take a neighbourhood
// (`hearth solve`, `hearth sim`, `hearth inspect`): an SHDS file instead
// of FILE, and for solve and sim the outputs and the baselines.
type homeFlags struct {
	shds   string
	outDir string
	csv    bool
	bl     baselineFlags
}

// register declares --shds and, with outputs, --out, --csv and the
// baselines' flags.
func (h *homeFlags) register(fs *flag.FlagSet, outputs bool) {
	fs.StringVar(&h.shds, "shds", "", "homes: a published SHDS instance (dm_*.json) instead of FILE")
	if !outputs {
		return
	}
	fs.StringVar(&h.outDir, "out", "", "homes: write the load-profile charts (PNG, SVG) and, with --csv, the CSV files into this folder")
	fs.BoolVar(&h.csv, "csv", false, "homes: write the schedule, load profile and per-home CSV files")
	h.bl.register(fs)
}

// file returns the command's one FILE (or --shds's), and whether it is a
// neighbourhood; ok is false when there is not exactly one.
func (h *homeFlags) file(pos []string) (path string, homes, ok bool) {
	if h.shds != "" && len(pos) == 0 {
		pos = []string{h.shds}
	}
	if len(pos) != 1 {
		return "", false, false
	}
	return pos[0], h.shds != "" || homesolve.IsFile(pos[0]), true
}

// arg is path as the command line names it: --shds FILE or FILE.
func (h *homeFlags) arg(path string) string {
	if h.shds != "" {
		return "--shds " + path
	}
	return path
}

// load loads the neighbourhood path (the flags given on fs override its
// [solver]) and returns o with its solver choice.
func (h *homeFlags) load(path string, fs *flag.FlagSet, o solveOptions) (*homesolve.Run, solveOptions, error) {
	r, err := homesolve.Load(path, h.shds != "", h.bl.apply(homeOptionsFrom(fs, &o)))
	if err != nil {
		return nil, o, err
	}
	return r, homeSolveOptions(r, o), nil
}

// render prints a neighbourhood's result: text, JSON (asJSON) or CSV
// files (--csv), and the charts with --out.
func (h *homeFlags) render(w io.Writer, r *homesolve.Run, assign []int, res mva.Result, asJSON bool) error {
	format := "text"
	if asJSON {
		format = "json"
	} else if h.csv {
		format = "csv"
	}
	return r.Render(w, assign, res, format, h.outDir)
}
