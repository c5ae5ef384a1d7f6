package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/internal/solve"
	"github.com/hearth-dcop/hearth/local/gpu"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/format"
	"github.com/hearth-dcop/hearth/mva/reform"
	"github.com/hearth-dcop/hearth/sampler"
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
	registerLocal(fs, &o.Local)
	fs.StringVar(&o.Table, "table", "", "MVA tables: lazy (rows computed when a protocol asks) or eager (all rows up front); default lazy, eager for dpop with gibbs/mh (DMCMC)")
	fs.StringVar(&o.Reform, "reform", "mva", "how agents map to the protocol: mva, compilation (one variable per agent), decomposition (one agent per variable)")
	fs.IntVar(&o.Agents, "agents", 0, "repartition the variables into N agents (formats without agents default to one)")
	fs.Uint64Var(&o.Seed, "seed", 1, "random seed for sampling protocols and delivery order")
	fs.Var(paramFlag(o.Params), "p", "protocol parameter name=value, repeatable (e.g. -p iterations=500 -p temperature=2); see README.md")
	fs.DurationVar(&o.Delay, "delay", 0, "simulated latency of each message (e.g. 5ms), added to the simulated runtime")
	fs.IntVar(&o.MaxEntries, "max-entries", reform.DefaultMaxEntries, "largest domain or table the compilation reformulation may build")
	fs.StringVar(&o.GPU, "gpu", "auto", "GPU for bucket elimination and DPOP's UTIL joins: auto (when a cuda build finds a device), on (fail without one), off")
	fs.BoolVar(&o.json, "json", false, "print the result object as JSON")
	fs.DurationVar(&o.Timeout, "timeout", 0, "give up after this long (e.g. 30s; 0 means no limit)")
}

// registerLocal declares the flags of the local solver on fs.
func registerLocal(fs *flag.FlagSet, o *solve.Local) {
	fs.StringVar(&o.Name, "local", "be", "local solver: be (bucket elimination), dfbnb (depth-first branch and bound), aobb (AND/OR branch and bound), edac (branch and bound maintaining soft arc consistency), vac (edac with virtual arc consistency at the root), bruteforce, gibbs, mh (Metropolis-Hastings), auto (one row: be, edac or aobb, chosen per subproblem, the default of solve --global none; agents: be where its tables fit 2^16 entries, else gibbs)")
	fs.Int64Var(&o.Memory, "memory", 0, "memory budget of the exact local solvers in MiB (aobb's heuristics and caches, auto's choice); 0 means a quarter of physical memory")
	fs.IntVar(&o.Runs, "runs", sampler.DefaultRuns, "gibbs/mh: independent chains R per MVA row")
	fs.IntVar(&o.Trials, "trials", sampler.DefaultTrials, "gibbs/mh: samples T per chain (Gibbs sweeps or MH proposals)")
	fs.Float64Var(&o.Temperature, "temperature", 0, "gibbs/mh: temperature τ of exp(−cost/τ); 0: a tenth of each agent's cost scale (sampler.ScaleTemperature)")
	fs.StringVar(&o.Proposal, "proposal", sampler.ProposalNormal, "mh: proposal, normal (the DMCMC paper's) or discrete")
	fs.Float64Var(&o.Alpha, "alpha", 0.05, "gibbs/mh: the top fraction α the quality guarantee is reported for")
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
			o.Local.Name = solve.LocalAuto
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
	defer solveGC(o.Local.Memory)()
	p, err := loadInstance(path, &o)
	if err != nil {
		fmt.Fprintln(e.stderr, err)
		return exitUsage
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	var res mva.Result
	if o.Global == "none" {
		res, err = solve.Central(ctx, p, &o.Local, o.Seed, dev)
	} else {
		res, err = solve.Distributed(ctx, p, o.Options, dev)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth solve: %s: %v\n", path, err)
		return exitFailed
	}
	res.Instance = path
	if o.json {
		b, err := res.JSON()
		if err != nil {
			fmt.Fprintf(e.stderr, "hearth solve: %v\n", err)
			return exitFailed
		}
		e.stdout.Write(b)
	} else {
		printSummary(e.stdout, p, res)
	}
	return resultExit(res)
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
	return resultExit(res)
}

// resultExit is the exit code of a result: 0 with a feasible assignment,
// 1 when infeasibility was proved, 3 when an incomplete algorithm found
// no feasible assignment, which proves nothing.
func resultExit(r mva.Result) int {
	switch {
	case r.Feasible:
		return exitOK
	case r.Status == mva.StatusInfeasible:
		return exitInfeasible
	}
	return exitFailed
}

// unproved names what keeps a run that found no feasible assignment from
// being a proof: an incomplete protocol, or sampled rows.
func unproved(a mva.Algorithm) string {
	if a.Sampling != nil {
		return "--local " + a.Local + " samples"
	}
	return a.Global + " is incomplete"
}

// maxListed bounds the assignment printed in the human summary.
const maxListed = 40

func printSummary(w io.Writer, p *mva.Problem, r mva.Result) {
	st := p.Stats()
	fmt.Fprintf(w, "instance    %s (%d variables, %d functions, %d agents)\n", r.Instance, st.Variables, st.Functions, st.Agents)
	if r.Status == mva.StatusUnknown {
		fmt.Fprintf(w, "result      no feasible assignment found (not a proof: %s)\n", unproved(r.Algorithm))
	} else if !r.Feasible {
		fmt.Fprintln(w, "result      infeasible: every assignment violates a hard constraint")
	} else {
		state := "best found"
		if r.Optimal {
			state = "optimal"
		}
		fmt.Fprintf(w, "objective   %s (%s, %s)\n", formatCost(*r.Objective), r.Sense, state)
	}
	a := r.Algorithm
	fmt.Fprintf(w, "solver      global=%s local=%s table=%s reform=%s\n", a.Global, a.Local, a.Table, a.Reform)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note        %s\n", n)
	}
	m := r.Metrics
	if a.Global == "none" {
		fmt.Fprintf(w, "time        %.3f ms wall, %d constraint checks\n", m.WallMs, m.NCCC)
	} else {
		fmt.Fprintf(w, "time        %.3f ms wall, %.3f ms simulated, %d NCCC\n", m.WallMs, m.SimTimeMs, m.NCCC)
		fmt.Fprintf(w, "messages    %d between agents (%d bytes, largest %d), %d inside agents\n",
			m.Messages, m.TotalMessageBytes, m.MaxMessageBytes, m.InternalMessages)
	}
	if !r.Feasible {
		return
	}
	names := make([]string, 0, len(p.Variables)) // file order
	for v := range p.Variables {
		names = append(names, p.Variables[v].Name)
	}
	var b strings.Builder
	for i, n := range names {
		if i == maxListed {
			fmt.Fprintf(&b, " … (%d more; --json prints all)", len(names)-maxListed)
			break
		}
		fmt.Fprintf(&b, " %s=%s", n, r.Assignment[n])
	}
	fmt.Fprintf(w, "assignment %s\n", b.String())
}

// formatCost prints integers without a decimal point and other numbers
// with the shortest exact representation.
func formatCost(c float64) string {
	if c == math.Trunc(c) && math.Abs(c) < 1e15 {
		return fmt.Sprintf("%.0f", c)
	}
	return fmt.Sprintf("%g", c)
}
