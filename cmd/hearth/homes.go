package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/baseline"
	"github.com/hearth-dcop/hearth/devices/compile"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/devices/shds"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/local/gpu"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/reform"
	"github.com/hearth-dcop/hearth/sampler"
)

// This file is the glue between the homes packages (config, devices and
// its compiler, importer, baselines and reports) and the commands: a
// neighbourhood's TOML or an SHDS file becomes a problem and a solver
// choice (loadHomes), a solution becomes a report people can read
// (Render) and MQTT publications (Publications). The commands own the
// runtime: solveHomes solves on the simulated runtime, `hearth sim` and
// `hearth run` over MQTT, all from the same Problem and options.

// Solver choices for SHDS files, which carry none. fitSHDS replaces the
// protocol with MGM unless the command line names one; D-Gibbs with exact
// rows is what a user's --global dgibbs gets.
const (
	shdsGlobal = "dgibbs"
	shdsLocal  = "be"
)

// MGM is the SHDS default. Its best responses (one local solve of a home,
// localsearch.Responder) are exact where the home fits bucket
// elimination, block descent where not; with joint moves (-p joint=1)
// the homes whose moves provably still lower the total move together,
// and on the complete graphs of SHDS the run ends at the first round
// without a gain (-p quiet=1). Plain MGM moves one home per round there,
// two rounds per home of 2·n·(n−1) messages each: 70 rounds on dm_35_1_3,
// hours of MQTT traffic on 251 homes; joint MGM reaches the same peak in
// 15 to 23 rounds (dm_35_1_3, dm_71_1_4, dm_251_1_2), which D-Gibbs,
// the earlier default past 100 homes, left 2.4× above the SH-MGM-style
// baseline.
const (
	// responseEntries bounds the bucket elimination of one home's exact
	// best response; past it the home answers by block descent. Exact
	// responses near 2^22 entries took 73% of the CPU of dm_71_1_5 (their
	// lexicographic tie rule re-solves up to once per level); at 2^20
	// more homes descend by blocks, and on the 12 SHDS instances this
	// changes the protocol ran 1.2–13× faster (dm_251_1_5: 163 s
	// against 471), to a lower objective on 9 of them (README.md).
	responseEntries = 1 << 20
	// responseBlocks is MGM's "response" parameter for block-descent
	// responses where the exact one exceeds response_entries
	// (localsearch.ResponseBlocks).
	responseBlocks = 3
)

// maxEagerRows is the largest MVA table (rows of one home) an eager table
// is filled for; past it Options falls back to lazy rows, because a TOML
// file without [solver].table asks for eager (the config default).
const maxEagerRows = 1 << 16

// homeOptions are what the command line says about a homes run. Empty or
// unset fields keep the choice of the TOML's [solver] (or, for SHDS files,
// shdsGlobal and shdsLocal); params override the TOML's key by key.
type homeOptions struct {
	global, local, table, gpu string
	seed                      uint64
	seedSet                   bool
	params                    map[string]float64
	timeout                   time.Duration
	// levels is the number of energy levels per slot of an SHDS import
	// (0 means the importer's 4).
	levels int
	// strict refuses an SHDS file with infeasible homes instead of
	// dropping their rules.
	strict bool
	// rounds bounds the SH-MGM-style baseline (0: baseline.DefaultRounds;
	// negative: the baseline is skipped).
	rounds int
	// budget bounds the SH-MGM-style baseline's time (0: shmgmBudget;
	// negative: no bound).
	budget time.Duration
	// noBaselines skips both baselines.
	noBaselines bool
}

// shmgmBudget is the SH-MGM-style baseline's default time budget
// (baseline.Options.Budget). The baseline moves one home per round on the
// complete SHDS graphs and re-solves every home each round: on
// dm_71_1_4 it took 113 s to converge, where MGM with joint moves takes
// 49 s, and on the 251-home instances with many rules nearly an hour.
const shmgmBudget = 2 * time.Minute

// homeOptionsFrom reads the solver flags the user gave on fs (those left
// at their defaults do not override the TOML).
func homeOptionsFrom(fs *flag.FlagSet, o *solveOptions) homeOptions {
	var h homeOptions
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "global":
			h.global = o.global
		case "local":
			h.local = o.local.name
		case "table":
			h.table = o.table
		case "gpu":
			h.gpu = o.gpu
		case "seed":
			h.seed, h.seedSet = o.seed, true
		case "p":
			h.params = maps.Clone(o.params)
		case "timeout":
			h.timeout = o.timeout
		}
	})
	return h
}

// isHomesFile reports whether path names a neighbourhood (a .toml file)
// rather than a DCOP instance; SHDS files are named by --shds.
func isHomesFile(path string) bool {
	return strings.EqualFold(filepath.Ext(path), ".toml")
}

// homeRun is a loaded neighbourhood: its model, the compiled problem, the
// resolved solver choice, and the baselines once computed.
type homeRun struct {
	path     string
	cfg      *config.Config // nil for an SHDS file
	compiled *compile.Compiled
	opts     homeOptions
	// The resolved solver choice.
	global, local, table, gpu string
	seed                      uint64
	params                    map[string]float64
	timeout                   time.Duration
	notes                     []string

	baselinesDone bool
	uncoordinated *baseline.Outcome
	shmgm         *baseline.Outcome
	// start is the uncoordinated schedule as an assignment of the
	// problem, where the protocol starts from it (initStart).
	start []int
}

// initStart is the "init" parameter of D-Gibbs, MGM and MGM-2 that starts
// every agent at its local solver's suggestion (mva.Starter): for homes,
// the schedule each home plans alone (the uncoordinated baseline). Homes
// runs use it to restart (Restart) a D-Gibbs run over sampled rows that
// ended without a feasible sample: on SHDS homes with many rules most
// sampled rows are infeasible (dm_35_1_6: 0 of 20 random rows for 9 of 35
// homes). It is not the default: from row 0 D-Gibbs wanders through
// infeasible rows to far better schedules where it finds feasible ones
// (dm_21_1_4: objective 9.0M from row 0, 15.2M from the uncoordinated
// schedules, whose own is 15.3M), while from the uncoordinated schedules
// it hardly moves, every neighbouring row being infeasible to the sampler.
const initStart = 3

// startable reports whether protocol global reads initStart.
func startable(global string) bool { return slices.Contains([]string{"dgibbs", "mgm", "mgm2"}, global) }

// loadHomes reads a neighbourhood: a TOML file (config.Load) or, with
// shdsFile, an SHDS instance (shds.ReadFile, homes whose rules no
// schedule satisfies dropped and noted unless o.strict), compiles it and
// resolves the solver choice. Errors: config.Errors for a bad TOML (print
// it as is), errors wrapping devices.ErrInfeasible for rules no schedule
// can satisfy, devices.ErrTooLarge for tables past the limits; loadExit
// maps them to exit codes.
func loadHomes(path string, shdsFile bool, o homeOptions) (*homeRun, error) {
	r := &homeRun{path: path, opts: o}
	var n *devices.Neighbourhood
	if shdsFile {
		res, err := shds.ReadFile(path, shds.Options{Levels: o.levels, Infeasible: policy(o)})
		if err != nil {
			return nil, err
		}
		n = res.Neighbourhood
		for _, d := range res.Dropped {
			r.notes = append(r.notes, fmt.Sprintf("home %s: no schedule satisfies its rules; dropped %d of them: %s", d.Home, len(d.Rules), strings.Join(d.Rules, "; ")))
		}
		r.notes = append(r.notes, res.Warnings...)
		r.global, r.local, r.table, r.gpu, r.seed = shdsGlobal, shdsLocal, "lazy", "auto", config.DefaultSeed
		r.params = map[string]float64{}
	} else {
		cfg, err := config.Load(path)
		if err != nil {
			return nil, err
		}
		r.cfg, n = cfg, cfg.Neighbourhood
		s := cfg.Solver
		r.global, r.local, r.table, r.gpu, r.seed = s.Global, s.Local, s.Table, s.GPU, s.Seed
		r.params, r.timeout = maps.Clone(s.Params), s.Timeout
	}
	if err := r.compile(n); err != nil {
		return nil, err
	}
	r.override(o)
	if shdsFile {
		if err := r.fitSHDS(o); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// fitSHDS adapts the defaults to the SHDS instance where the command line
// left them open.
//
// The protocol is MGM with joint moves, for at most two rounds per home,
// ending at the first round without a gain where the homes form a
// complete graph (all the published instances do). Where some home's
// exact best response is too wide for bucket elimination (homes with many
// rules), those homes answer by block descent (-p response=3) from their
// own schedules (-p init=3), and the importer's 4 levels per slot stay:
// such a run never samples a row.
//
// D-Gibbs (the command line's choice) reads MVA rows. Where they are too
// wide for fast bucket elimination, --local auto samples those homes'
// rows with Gibbs and keeps bucket elimination for the others; and
// sampled rows over 4 levels per slot often leave D-Gibbs in infeasible
// rows (dm_7_1_5), as 4^12-row dense tables of their interiors may not
// even be addressable: 3 levels avoid both, whenever rows may be sampled
// (--local gibbs, mh or auto).
func (r *homeRun) fitSHDS(o homeOptions) error {
	wide := o.local == "" && r.local == "be" && !r.fitsBE()
	if wide {
		r.local = shdsWideLocal
	}
	homes := len(r.Problem().Agents)
	if o.global == "" {
		r.global = "mgm"
		r.paramDefault("rounds", float64(2*homes))
		r.paramDefault("joint", 1)
		note := fmt.Sprintf("MGM with joint moves (-p joint=%v), at most %v rounds", r.params["joint"], r.params["rounds"])
		if r.complete() {
			r.paramDefault("quiet", 1)
			note += fmt.Sprintf(", ending at the first round without a gain (-p quiet=%v)", r.params["quiet"])
		}
		r.notes = append(r.notes, note)
	}
	if r.global == "mgm" {
		if wide || !r.fitsResponse() {
			r.paramDefault("response", responseBlocks)
			r.paramDefault("response_entries", responseEntries)
			r.paramDefault("init", initStart)
			r.notes = append(r.notes, fmt.Sprintf("homes too wide for an exact best response answer by block descent (-p response=%v) from their own schedules (-p init=%v)", r.params["response"], r.params["init"]))
		}
		return nil
	}
	sampled := (&localOptions{name: r.local}).sampling()
	if o.levels == 0 && (sampled || !r.tablesFit()) {
		res, err := shds.ReadFile(r.path, shds.Options{Levels: shdsFallbackLevels, Infeasible: policy(o)})
		if err != nil {
			return err
		}
		if err := r.compile(res.Neighbourhood); err != nil {
			return err
		}
		r.notes = append(r.notes, fmt.Sprintf("%d energy levels per slot (4 make the MVA tables too large or the sampled rows infeasible)", shdsFallbackLevels))
	}
	if wide {
		r.notes = append(r.notes, fmt.Sprintf("some homes are too wide for fast bucket elimination: their MVA rows are sampled (local = %q)", shdsWideLocal))
	}
	return nil
}

// complete reports whether every home neighbours every other, which MGM's
// quiet = 1 needs.
func (r *homeRun) complete() bool {
	nb := mva.Decompose(r.Problem()).Neighbours()
	for _, l := range nb {
		if len(l) != len(nb)-1 {
			return false
		}
	}
	return true
}

// paramDefault sets protocol parameter k to v unless the TOML or the
// command line set it.
func (r *homeRun) paramDefault(k string, v float64) {
	if _, set := r.params[k]; !set {
		r.params[k] = v
	}
}

// fitsResponse reports whether bucket elimination solves every home's
// whole local problem (boundary included, as an MGM best response does)
// with tables of at most responseEntries.
func (r *homeRun) fitsResponse() bool {
	p := r.Problem()
	d := mva.Decompose(p)
	for i := range d.Subs {
		sub := d.Subs[i]
		sub.Boundary, sub.Interior = nil, sub.Local
		if _, err := local.NewBE(mva.NewLocalProblem(p, &sub), local.BEOptions{MaxEntries: responseEntries}); err != nil {
			return false
		}
	}
	return true
}

func policy(o homeOptions) shds.Policy {
	if o.strict {
		return shds.Strict
	}
	return shds.Drop
}

// shdsFallbackLevels and shdsWideLocal are the SHDS choices for homes
// with many rules: fewer levels keep the dense MVA tables addressable,
// and Gibbs sampling fills rows that bucket elimination cannot (induced
// width 17–21 on dm_7_1_5 and dm_7_1_6).
const (
	shdsFallbackLevels = 3
	shdsWideLocal      = localAuto
)

// tablesFit reports whether every home's dense MVA table (rows × interior
// variables, mva.NewTable) is addressable.
func (r *homeRun) tablesFit() bool {
	p := r.Problem()
	d := mva.Decompose(p)
	for i := range d.Subs {
		lp := mva.NewLocalProblem(p, &d.Subs[i])
		rows, err := lp.Rows()
		if err != nil || lp.NumInterior() > 0 && rows > math.MaxInt32/lp.NumInterior() {
			return false
		}
	}
	return true
}

// rowEntries bounds the tables bucket elimination may need for one MVA
// row of an SHDS home before the rows are sampled instead: 4M entries
// solve in milliseconds, the 100M allowed by default in seconds, and
// D-Gibbs asks for thousands of rows.
const rowEntries = 1 << 22

// fitsBE reports whether bucket elimination fills every home's MVA rows
// with tables of at most rowEntries.
func (r *homeRun) fitsBE() bool {
	p := r.Problem()
	d := mva.Decompose(p)
	for i := range d.Subs {
		if _, err := local.NewBE(mva.NewLocalProblem(p, &d.Subs[i]), local.BEOptions{MaxEntries: rowEntries}); err != nil {
			return false
		}
	}
	return true
}

// newHomeRun is loadHomes for a model built in memory, with the solver
// choice of an SHDS file.
func newHomeRun(name string, n *devices.Neighbourhood, o homeOptions) (*homeRun, error) {
	r := &homeRun{path: name, opts: o, global: shdsGlobal, local: shdsLocal, table: "lazy", gpu: "auto", seed: config.DefaultSeed, params: map[string]float64{}}
	if err := r.compile(n); err != nil {
		return nil, err
	}
	r.override(o)
	return r, nil
}

func (r *homeRun) compile(n *devices.Neighbourhood) error {
	c, err := compile.Compile(n, compile.Options{})
	if err != nil {
		return fmt.Errorf("%s: %w", r.path, err)
	}
	r.compiled = c
	return nil
}

// override applies the command line's choices.
func (r *homeRun) override(o homeOptions) {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&r.global, o.global)
	set(&r.local, o.local)
	set(&r.table, o.table)
	set(&r.gpu, o.gpu)
	if o.seedSet {
		r.seed = o.seed
	}
	if r.params == nil {
		r.params = map[string]float64{}
	}
	maps.Copy(r.params, o.params)
	if o.timeout > 0 {
		r.timeout = o.timeout
	}
	if r.table == "eager" && o.table == "" {
		if rows := r.compiled.Stats().MVARows; rows > maxEagerRows {
			r.table = "lazy"
			r.notes = append(r.notes, fmt.Sprintf("MVA tables of up to %d rows per home: rows are computed when the protocol asks (table = \"lazy\")", rows))
		}
	}
}

// Problem is the compiled neighbourhood: one agent per home.
func (r *homeRun) Problem() *mva.Problem { return r.compiled.Problem }

// Model is the neighbourhood the problem was compiled from.
func (r *homeRun) Model() *devices.Neighbourhood { return r.compiled.Model }

// Config is the loaded TOML (its broker settings), nil for an SHDS file.
func (r *homeRun) Config() *config.Config { return r.cfg }

// Notes are warnings for the user: homes whose rules were dropped,
// repairs, solver choices changed.
func (r *homeRun) Notes() []string { return r.notes }

// Options returns base (the command's flags, with their defaults) with the
// run's solver choice in place: protocol, local solver, table, seed,
// parameters, GPU mode and time-out. Everything else of base (sampler
// runs and trials, delay, --json) is kept.
func (r *homeRun) Options(base solveOptions) solveOptions {
	o := base
	o.global, o.local.name, o.table, o.gpu, o.seed = r.global, r.local, r.table, r.gpu, r.seed
	if o.local.temp == 0 {
		// Homes whose rows are sampled keep the papers' τ = 1 unless
		// --temperature says otherwise: the SHDS figures were measured
		// so, and the samplers' cost-scale default was chosen on meeting
		// scheduling.
		o.local.temp = sampler.DefaultTemperature
	}
	o.params = paramFlag(maps.Clone(r.params))
	if o.params["init"] == initStart && startable(o.global) {
		o.start = r.startAssignment()
	}
	if r.timeout > 0 {
		o.timeout = r.timeout
	}
	if o.reform == "" {
		o.reform = "mva"
	}
	if o.maxEntries == 0 {
		o.maxEntries = reform.DefaultMaxEntries
	}
	return o
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
// (normally r.Options of the command's flags) through the path of `hearth
// solve` — solveDistributed, or solveCentral for global "none" — and
// returns the result with its assignment. A protocol run that finds no
// feasible schedule is run again from the homes' own schedules (Restart).
func solveHomes(ctx context.Context, r *homeRun, o solveOptions, dev *gpu.Device) (mva.Result, []int, error) {
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
			if o2, ok := r.Restart(o); ok {
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
	res.Instance = r.path
	if !res.Feasible {
		return res, nil, nil
	}
	assign, err := assignmentOf(p, res.Assignment)
	if err != nil {
		return mva.Result{}, nil, fmt.Errorf("internal error: %w", err)
	}
	return res, assign, nil
}

// assignmentOf turns a result's labelled assignment back into value
// indices.
func assignmentOf(p *mva.Problem, labels map[string]string) ([]int, error) {
	assign := make([]int, len(p.Variables))
	for v := range p.Variables {
		x := &p.Variables[v]
		l, ok := labels[x.Name]
		if !ok {
			return nil, fmt.Errorf("the assignment has no value for %s", x.Name)
		}
		found := false
		for k, d := range x.Domain {
			if d == l {
				assign[v], found = k, true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("%s = %q is not in its domain", x.Name, l)
		}
	}
	return assign, nil
}

// Restart returns the options for a second run when a first one with o
// found no feasible schedule: D-Gibbs, MGM or MGM-2 started from the
// uncoordinated schedules (initStart), whose first sample keeps every
// rule. It declines when the command line chose the start itself, the
// protocol is another, or the start cannot be built.
func (r *homeRun) Restart(o solveOptions) (solveOptions, bool) {
	if _, set := r.params["init"]; set || !startable(o.global) {
		return o, false
	}
	start := r.startAssignment()
	if start == nil {
		return o, false
	}
	o.params = paramFlag(maps.Clone(o.params))
	o.params["init"] = initStart
	o.start = start
	r.notes = append(r.notes, fmt.Sprintf("%s from its first rows ended without a feasible schedule; restarted from each home's own (uncoordinated) schedule (-p init=%d)", o.global, initStart))
	return o, true
}

// startAssignment returns the uncoordinated schedule as an assignment of
// the problem (computing the baseline now, once), or nil with a note when
// it cannot: the protocol then starts at row 0.
func (r *homeRun) startAssignment() []int {
	if r.start != nil {
		return r.start
	}
	if r.uncoordinated == nil {
		u, err := baseline.Uncoordinated(context.Background(), r.Model(), baseline.Options{})
		if err != nil {
			r.notes = append(r.notes, "no start from the uncoordinated schedules: "+err.Error())
			return nil
		}
		r.uncoordinated = u
	}
	start, err := r.compiled.Encode(r.uncoordinated.Schedule)
	if err != nil {
		r.notes = append(r.notes, "no start from the uncoordinated schedules: "+err.Error())
		return nil
	}
	r.start = start
	return start
}

// Baselines computes the uncoordinated and SH-MGM-style baselines once
// (Render computes them itself when they are missing). A baseline that
// fails is noted, not fatal: the coordinated result stands alone.
func (r *homeRun) Baselines(ctx context.Context) error {
	if r.baselinesDone || r.opts.noBaselines {
		return nil
	}
	n := r.Model()
	var err error
	if r.uncoordinated == nil {
		if r.uncoordinated, err = baseline.Uncoordinated(ctx, n, baseline.Options{}); err != nil {
			if ctx.Err() != nil {
				return err
			}
			r.notes = append(r.notes, "uncoordinated baseline: "+err.Error())
		}
	}
	if r.opts.rounds >= 0 {
		budget := r.opts.budget
		if budget == 0 {
			budget = shmgmBudget
		}
		if r.shmgm, err = baseline.SHMGM(ctx, n, baseline.Options{Rounds: r.opts.rounds, Budget: max(budget, 0)}); err != nil {
			if ctx.Err() != nil {
				return err
			}
			r.notes = append(r.notes, "SH-MGM-style baseline: "+err.Error())
		}
	}
	r.baselinesDone = true
	return nil
}

// Report builds the result object of a solution: res and its assignment
// (nil to decode res.Assignment, as the MQTT path returns it).
func (r *homeRun) Report(assign []int, res mva.Result) (*report.Homes, error) {
	if err := r.Baselines(context.Background()); err != nil {
		return nil, err
	}
	in := report.Input{Model: r.Model(), Result: res, Uncoordinated: r.uncoordinated, SHMGM: r.shmgm, Notes: r.notes}
	if res.Feasible {
		if assign == nil {
			var err error
			if assign, err = assignmentOf(r.Problem(), res.Assignment); err != nil {
				return nil, err
			}
		}
		s, ev, err := r.compiled.Report(assign)
		if err != nil {
			return nil, err
		}
		in.Schedule, in.Eval = s, ev
	}
	return report.Build(in)
}

// Render writes the result people read: format "text" (or "") the
// summary, "json" the result object, "csv" one file per table in outDir
// (the current folder when empty) and their paths. With outDir set, the
// load-profile charts are written there too (PNG and SVG) and their paths
// printed (listed under "charts" in JSON).
func (r *homeRun) Render(w io.Writer, assign []int, res mva.Result, format string, outDir string) error {
	h, err := r.Report(assign, res)
	if err != nil {
		return err
	}
	if outDir != "" {
		files, err := h.WriteCharts(outDir)
		if err != nil {
			return fmt.Errorf("charts: %w", err)
		}
		h.Charts = files
	}
	switch format {
	case "", "text":
		return h.WriteText(w, report.TextOptions{})
	case "json":
		b, err := h.JSON()
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case "csv":
		dir := outDir
		if dir == "" {
			dir = "."
		}
		files, err := h.WriteCSV(dir)
		if err != nil {
			return fmt.Errorf("csv: %w", err)
		}
		for _, f := range append(files, h.Charts...) {
			if _, err := fmt.Fprintln(w, f); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown output format %q (valid: text, json, csv)", format)
}

// Publications returns the MQTT messages that publish every home's plan
// (report.Publications documents the topics); the prefix defaults to the
// TOML's [broker].topic_prefix.
func (r *homeRun) Publications(assign []int, o report.PublishOptions) ([]report.Publication, error) {
	s, ev, err := r.compiled.Report(assign)
	if err != nil {
		return nil, err
	}
	h, err := report.Build(report.Input{Model: r.Model(), Schedule: s, Eval: ev})
	if err != nil {
		return nil, err
	}
	return report.Publications(r.Model(), h.Schedules, r.publishDefaults(o))
}

// HomePublications publishes one home's plan, for `hearth run`, whose
// agent knows only its own variables: assign needs values for the home's
// variables only.
func (r *homeRun) HomePublications(assign []int, home int, o report.PublishOptions) ([]report.Publication, error) {
	if home < 0 || home >= len(r.compiled.Homes) {
		return nil, fmt.Errorf("home %d of %d", home, len(r.compiled.Homes))
	}
	if len(assign) != len(r.Problem().Variables) {
		return nil, fmt.Errorf("assignment has %d values for %d variables", len(assign), len(r.Problem().Variables))
	}
	hc := &r.compiled.Homes[home]
	hs := devices.HomeSchedule{Actions: make([][]int, len(hc.Actions))}
	for d, row := range hc.Actions {
		hs.Actions[d] = make([]int, len(row))
		for t, v := range row {
			hs.Actions[d][t] = assign[v]
		}
	}
	plan, err := report.PlanOf(r.Model(), home, hs)
	if err != nil {
		return nil, err
	}
	return report.Publications(r.Model(), []report.HomePlan{plan}, r.publishDefaults(o))
}

func (r *homeRun) publishDefaults(o report.PublishOptions) report.PublishOptions {
	if o.Prefix == "" && r.cfg != nil {
		o.Prefix = r.cfg.Broker.TopicPrefix
	}
	return o
}

// loadExit prints an error of loadHomes and returns the exit code: 1 for
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
	fs.DurationVar(&b.budget, "shmgm-budget", shmgmBudget, "homes: time after which the SH-MGM-style baseline starts no new round (0: no limit)")
}

// apply puts the flags into h.
func (b *baselineFlags) apply(h homeOptions) homeOptions {
	h.rounds = b.rounds
	h.budget = b.budget
	if b.budget == 0 {
		h.budget = -1
	}
	return h
}
