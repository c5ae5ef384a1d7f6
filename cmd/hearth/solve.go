package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/internal/solve"
	"github.com/hearth-dcop/hearth/internal/solvefile"
	"github.com/hearth-dcop/hearth/local/gpu"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/format"
	"github.com/hearth-dcop/hearth/mva/reform"
)

// solveOptions are the flags of `hearth solve`, which `hearth sim` and
// `hearth run` share: the solver choice (solve.Options) and how the
// result prints.
type solveOptions struct {
	solve.Options
	json bool
}

// register declares the flags on fs; defGlobal is --global's default
// ("none" for solve, a protocol for the commands that need one).
func (o *solveOptions) register(fs *flag.FlagSet, defGlobal string) {
	o.Params = map[string]float64{}
	fs.StringVar(&o.Global, "global", defGlobal, "protocol between agents: "+strings.Join(solve.GlobalNames(), ", ")+" (none solves the whole file centrally)")
	solvefile.RegisterLocal(fs, &o.Local, "be")
	fs.StringVar(&o.Table, "table", "", "MVA tables: lazy (rows computed when a protocol asks) or eager (all rows up front); default lazy, eager for dpop with gibbs/mh (DMCMC)")
	fs.StringVar(&o.Reform, "reform", "mva", "how agents map to the protocol: mva, compilation (one variable per agent), decomposition (one agent per variable)")
	fs.Var(paramFlag(o.Params), "p", "protocol parameter name=value, repeatable (e.g. -p iterations=500 -p temperature=2); see README.md")
	fs.DurationVar(&o.Delay, "delay", 0, "simulated latency of each message (e.g. 5ms), added to the simulated runtime")
	fs.IntVar(&o.MaxEntries, "max-entries", reform.DefaultMaxEntries, "largest domain or table the compilation reformulation may build")
	fs.StringVar(&o.GPU, "gpu", "auto", "GPU for bucket elimination and DPOP's UTIL joins: auto (when a cuda build finds a device), on (fail without one), off")
	solvefile.RegisterRun(fs, &o.Agents, &o.Seed, &o.Timeout, &o.json)
}

// loadInstance resolves a command's instance argument to the problem it
// names. Every command that takes an instance (solve, sim, run) goes
// through here, so that a new kind of input plugs in once: a
// neighbourhood's TOML (config.Load, then the homes compiled by devices)
// or an SHDS file will be resolved here, and may fill o's solver settings
// where the command line left them at their defaults.
func loadInstance(path string, o *solveOptions) (*mva.Problem, error) {
	return format.ReadFile(path, format.Options{Agents: o.Agents})
}

func runSolve(ctx context.Context, e *env, args []string) int {
	var (
		o  solveOptions
		hf homeFlags
	)
	fs := newFlagSet(e, "solve", "FILE [flags]\n\n"+
		"Solves FILE — an instance, a neighbourhood .toml or --shds FILE.json — centrally\n"+
		"(--global none, the default) or with a protocol between its agents on the\n"+
		"simulated runtime. A neighbourhood takes its [solver] but for --global, and\n"+
		"after the solve runs hearth sim's improvement phase on the load that flows\n"+
		"(--improve). An SHDS street without --global is solved as sim solves it\n"+
		"(joint MGM): its central problem is far too wide.")
	o.register(fs, "none")
	hf.register(fs, true)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagExit(err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if o.Global == "none" {
		if !set["local"] {
			o.Local.Name = solvefile.LocalAuto
		}
	}
	path, isHomes, ok := hf.file(pos)
	if !ok {
		fmt.Fprintln(e.stderr, "hearth solve: want exactly one instance FILE (an instance, a neighbourhood .toml, or --shds FILE.json)")
		fs.Usage()
		return exitUsage
	}
	if isHomes && hf.shds == "" {
		if code, ok := energyOnly(ctx, e.stdout, e.stderr, "solve", path, &hf, o.json); ok {
			return code
		}
	}
	var homes *homesolve.Run
	if isHomes {
		global := o.Global
		if homes, o, err = hf.load(path, fs, o); err != nil {
			return loadExit(e.stderr, "solve", err)
		}
		// solve is central unless --global says otherwise: the file's
		// protocol is for sim and run. An SHDS street is the exception:
		// its central problem (every home's levels in one table) is far
		// beyond bucket elimination and exact search (dm_7_1_2 has
		// induced width 45), so without --global it is solved as sim
		// solves it, by the protocol fitSHDS chose.
		if hf.shds == "" || set["global"] {
			o.Global = global
		}
	}
	if err := o.Check(); err != nil {
		fmt.Fprintf(e.stderr, "hearth solve: %v\n", err)
		return exitUsage
	}
	dev, err := solve.OpenGPU(o.GPU)
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth solve: %v\n", err)
		return exitUsage
	}
	if dev != nil {
		defer dev.Close()
	}
	if homes != nil {
		return solveHomes(ctx, e, homes, path, o, &hf, dev)
	}
	job := solvefile.Job{Cmd: "hearth solve", Path: path, Agents: o.Agents, Memory: o.Local.Memory, Timeout: o.Timeout, JSON: o.json}
	job.Load = func(path string, _ int) (*mva.Problem, error) { return loadInstance(path, &o) }
	job.Solve = func(ctx context.Context, p *mva.Problem) (mva.Result, error) {
		if o.Global == "none" {
			return solvefile.Central(ctx, p, &o.Local, o.Seed, dev)
		}
		return solve.Distributed(ctx, p, o.Options, dev)
	}
	return job.Run(ctx, e.stdout, e.stderr)
}

// solveHomes solves a neighbourhood (a TOML street or --shds) as `hearth
// sim` does, but centrally or on the simulated runtime rather than over
// MQTT: the solver of o (the committed levels' optimum for --global
// none), then the same improvement phase on the load that flows
// (homesolve.Run.Improve: the descent, escapes for SHDS files, restarts
// from the SH-MGM-style baseline's plan; [solver] improve or --improve),
// then the energy homes' answer. So `hearth solve` and `hearth sim` of a
// street report the same objective, on the load that flows, with both
// baselines on it. With --timeout the solver gets two thirds of it, as
// sim's protocol does, so that the improvement phase has time to work: a
// solve stopped before it has a plan starts the phase from the homes' own
// schedules (homesolve.Run.Fallback), and a run the timeout stops prints
// its best plan so far and exits exitStopped.
func solveHomes(ctx context.Context, e *env, homes *homesolve.Run, path string, o solveOptions, hf *homeFlags, dev *gpu.Device) int {
	started := time.Now()
	po := o.Options
	pctx := ctx
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
		pctx, cancel = context.WithTimeout(ctx, o.Timeout*2/3)
		defer cancel()
		po.Timeout = 0 // pctx bounds the solve
	}
	res, assign, err := solve.Homes(pctx, homes, po, dev)
	stopped := ""
	if pctx.Err() != nil && (err != nil || !res.Feasible) {
		// Stopped before the solver had a plan: the homes' own
		// schedules, improved on the load that flows in the time left,
		// as sim's stopped protocol.
		stopped = stopReason(ctx, o.Timeout, started)
		a, fb, ok := homes.Fallback()
		if !ok {
			fmt.Fprintf(e.stderr, "hearth solve: %s: %s during the solve, with no feasible plan yet\n", path, stopped)
			return exitFailed
		}
		fb.Algorithm = mva.Algorithm{Global: o.Global, Local: o.Local.Name, Table: o.Table}
		fb.Notes = append(fb.Notes, fmt.Sprintf("%s during the solve: the plan starts from the homes' own schedules", stopped))
		assign, res, err = a, fb, nil
	}
	if err == nil {
		assign, res, stopped, err = finishHomes(ctx, homes, assign, res, stopped, o.Timeout, started)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth solve: %s: %v\n", path, err)
		return energyExit(err)
	}
	if err := hf.render(e.stdout, homes, assign, res, o.json, nil); err != nil {
		fmt.Fprintf(e.stderr, "hearth solve: %s: %v\n", path, err)
		return energyExit(err)
	}
	if stopped != "" {
		return exitStopped
	}
	return solvefile.ResultExit(res)
}
