package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/local/gpu"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/format"
	"github.com/hearth-dcop/hearth/mva/protocol"
	"github.com/hearth-dcop/hearth/mva/reform"
)

// solveOptions are the flags of `hearth solve`, which `hearth sim` and
// `hearth run` share so that one instance runs the same way on the
// simulated runtime, over MQTT in one process, and one agent per process.
type solveOptions struct {
	global     string
	local      localOptions
	table      string
	reform     string
	agents     int
	seed       uint64
	params     paramFlag
	delay      time.Duration
	maxEntries int
	gpu        string
	json       bool
	timeout    time.Duration
	// start, when set, is a full assignment every agent's local solver
	// suggests as its start (startSolver; homes: the uncoordinated
	// schedules).
	start []int
}

// register declares the flags on fs; defGlobal is --global's default
// ("none" for solve, a protocol for the commands that need one).
func (o *solveOptions) register(fs *flag.FlagSet, defGlobal string) {
	o.params = paramFlag{}
	fs.StringVar(&o.global, "global", defGlobal, "protocol between agents: "+strings.Join(globalNames(), ", ")+" (none solves the whole file centrally)")
	o.local.register(fs)
	fs.StringVar(&o.table, "table", "", "MVA tables: lazy (rows computed when a protocol asks) or eager (all rows up front); default lazy, eager for dpop with gibbs/mh (DMCMC)")
	fs.StringVar(&o.reform, "reform", "mva", "how agents map to the protocol: mva, compilation (one variable per agent), decomposition (one agent per variable)")
	fs.IntVar(&o.agents, "agents", 0, "repartition the variables into N agents (formats without agents default to one)")
	fs.Uint64Var(&o.seed, "seed", 1, "random seed for sampling protocols and delivery order")
	fs.Var(o.params, "p", "protocol parameter name=value, repeatable (e.g. -p iterations=500 -p temperature=2); see README.md")
	fs.DurationVar(&o.delay, "delay", 0, "simulated latency of each message (e.g. 5ms), added to the simulated runtime")
	fs.IntVar(&o.maxEntries, "max-entries", reform.DefaultMaxEntries, "largest domain or table the compilation reformulation may build")
	fs.StringVar(&o.gpu, "gpu", "auto", "GPU for bucket elimination and DPOP's UTIL joins: auto (when a cuda build finds a device), on (fail without one), off")
	fs.BoolVar(&o.json, "json", false, "print the result object as JSON")
	fs.DurationVar(&o.timeout, "timeout", 0, "give up after this long (e.g. 30s; 0 means no limit)")
}

// check validates the parsed flags and fills in --table's default. The
// error is a usage error, worded for the command line.
func (o *solveOptions) check() error {
	if _, ok := protocol.Lookup(o.global); !ok && o.global != "none" {
		return fmt.Errorf("unknown --global %q (valid: %s)", o.global, strings.Join(globalNames(), ", "))
	}
	if o.table == "" {
		// DMCMC: with a sampler, every agent fills its table as soon as
		// it starts, without waiting for its children.
		o.table = "lazy"
		if o.global == "dpop" && o.local.sampling() {
			o.table = "eager"
		}
	}
	if o.table != "lazy" && o.table != "eager" {
		return fmt.Errorf("unknown --table %q (valid: lazy, eager)", o.table)
	}
	if !slices.Contains(reform.Names(), o.reform) {
		return fmt.Errorf("unknown --reform %q (valid: %s)", o.reform, strings.Join(reform.Names(), ", "))
	}
	return o.local.validate()
}

// loadInstance resolves a command's instance argument to the problem it
// names. Every command that takes an instance (solve, sim, run) goes
// through here, so that a new kind of input plugs in once: a
// neighbourhood's TOML (config.Load, then the homes compiled by devices)
// or an SHDS file will be resolved here, and may fill o's solver settings
// where the command line left them at their defaults.
func loadInstance(path string, o *solveOptions) (*mva.Problem, error) {
	return format.ReadFile(path, format.Options{Agents: o.agents})
}

func runSolve(ctx context.Context, e *env, args []string) int {
	var (
		o  solveOptions
		hf homeFlags
	)
	fs := newFlagSet(e, "solve", "FILE [flags]\n\n"+
		"Solves FILE — an instance, a neighbourhood .toml or --shds FILE.json — centrally\n"+
		"(--global none, the default) or with a protocol between its agents on the\n"+
		"simulated runtime. A neighbourhood takes its [solver] but for --global.")
	o.register(fs, "none")
	hf.register(fs, true)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if set := map[string]bool{}; o.global == "none" {
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["local"] {
			o.local.name = localAuto
		}
	}
	path, isHomes, ok := hf.file(pos)
	if !ok {
		fmt.Fprintln(e.stderr, "hearth solve: want exactly one instance FILE (an instance, a neighbourhood .toml, or --shds FILE.json)")
		fs.Usage()
		return exitUsage
	}
	var homes *homesolve.Run
	if isHomes {
		global := o.global
		if homes, o, err = hf.load(path, fs, o); err != nil {
			return loadExit(e.stderr, "solve", err)
		}
		// solve is central unless --global says otherwise: the file's
		// protocol is for sim and run.
		o.global = global
	}
	if err := o.check(); err != nil {
		fmt.Fprintf(e.stderr, "hearth solve: %v\n", err)
		return exitUsage
	}
	dev, err := openGPU(o.gpu)
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth solve: %v\n", err)
		return exitUsage
	}
	if dev != nil {
		defer dev.Close()
	}
	if homes != nil {
		res, assign, err := solveHomes(ctx, homes, o, dev)
		if err != nil {
			fmt.Fprintf(e.stderr, "hearth solve: %s: %v\n", path, err)
			return exitFailed
		}
		if err := hf.render(e.stdout, homes, assign, res, o.json); err != nil {
			fmt.Fprintf(e.stderr, "hearth solve: %s: %v\n", path, err)
			return exitFailed
		}
		return resultExit(res)
	}
	p, err := loadInstance(path, &o)
	if err != nil {
		fmt.Fprintln(e.stderr, err)
		return exitUsage
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	var res mva.Result
	if o.global == "none" {
		res, err = solveCentral(ctx, p, &o.local, o.seed, dev)
	} else {
		res, err = solveDistributed(ctx, p, o, dev)
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

// solveCentral solves p as a single subproblem with no boundary: the one
// row of its MVA table is the optimum.
func solveCentral(ctx context.Context, p *mva.Problem, lo *localOptions, seed uint64, dev *gpu.Device) (mva.Result, error) {
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	factory, sampled, notes := lo.factory(seed), lo.sampling(), []string(nil)
	if lo.name == localAuto { // one row: exact, and the notes say which
		factory, sampled = func(lp *mva.LocalProblem) (mva.LocalSolver, error) {
			s, c, err := local.Auto(lp, local.AutoOptions{Memory: lo.memoryBytes()})
			notes = append(notes, c.Reason)
			return s, err
		}, false
	}
	s, err := gpuSolver(dev, lo.name, factory)(lp)
	if err != nil {
		return mva.Result{}, err
	}
	t, err := mva.NewTable(lp)
	if err != nil {
		return mva.Result{}, err
	}
	start := time.Now()
	if err := t.Fill(ctx, s); err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			if len(notes) > 0 { // which solver ran out of time
				err = fmt.Errorf("%s: %w", notes[0], err)
			}
			return mva.Result{}, fmt.Errorf("stopped before the optimum was proved: %w", err)
		}
		return mva.Result{}, err
	}
	wall := time.Since(start)
	if d, ok := s.(interface{ Describe() string }); ok && lo.name == localAuto {
		notes = append(notes, d.Describe())
	}
	cost := t.Costs[0] + p.Offset
	var assign []int
	if !mva.IsHard(cost) {
		assign = make([]int, len(p.Variables))
		for k, v := range t.Interior(0) {
			assign[lp.Vars[k]] = int(v)
		}
		// The solver's claim is checked against the model itself, so a
		// solver bug can never print a wrong objective.
		check, err := p.Eval(assign)
		if err != nil {
			return mva.Result{}, fmt.Errorf("internal error: the solver returned a bad assignment: %w", err)
		}
		if math.Abs(check-cost) > 1e-9*math.Max(1, math.Abs(cost)) {
			return mva.Result{}, fmt.Errorf("internal error: the solver reported cost %v but the assignment costs %v", cost, check)
		}
	}
	r := mva.NewResult(p, assign, cost)
	r.Optimal = r.Feasible && !sampled
	r.Conclude(!sampled)
	r.Algorithm = mva.Algorithm{Global: "none", Local: lo.name, Table: "eager", Reform: "mva",
		GPU: dev != nil && (lo.name == "be" || lo.sampling())}
	if sampled {
		r.Algorithm.Sampling = lo.report(seed)
	}
	r.Notes = notes
	ms := float64(wall.Microseconds()) / 1000
	r.Metrics = mva.Metrics{SimTimeMs: ms, WallMs: ms, NCCC: s.Checks()}
	return r, nil
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
