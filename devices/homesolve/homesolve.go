// Package homesolve is the solver policy for a neighbourhood of homes:
// it loads a neighbourhood (a TOML file, config.Load, or a published SHDS
// instance, devices/shds), compiles it to a problem (devices/compile),
// and chooses how to solve it — the protocol, the local solver, the MVA
// tables, the protocol's parameters and the start — from the file's
// [solver], the command line's overrides, and, for SHDS files, the sizes
// of the homes. The choice is a typed Choice with notes that say why
// (Run.Notes). It also turns a solution into what people read (Render),
// MQTT publications of the plans (Publications, HomePublications), and
// keeps the baselines a result is compared with.
//
// The commands (`hearth sim`, `hearth run`) own the runtime: they run the
// chosen protocol through mva/pipeline and come back here for a restart
// (Run.Restart) and for the report.
package homesolve

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/baseline"
	"github.com/hearth-dcop/hearth/devices/compile"
	"github.com/hearth-dcop/hearth/devices/homecheck"
	"github.com/hearth-dcop/hearth/devices/refine"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/devices/shds"
	"github.com/hearth-dcop/hearth/devices/street"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/pipeline"
	"github.com/hearth-dcop/hearth/mva/protocol/mgm"
	"github.com/hearth-dcop/hearth/sampler"
)

// Choice is how a neighbourhood is solved: what `hearth sim` and `hearth
// run` run unless their flags say otherwise. Names are those of the
// command line (--global, --local, --table, --gpu).
type Choice struct {
	Global, Local, Table, GPU string
	Seed                      uint64
	Params                    map[string]float64
	// Timeout bounds a solve; 0 means none.
	Timeout time.Duration
	// Start, when set, is the assignment every agent's local solver
	// suggests as its start (the homes' own schedules): the protocol
	// starts there (-p init=3).
	Start []int
}

// AutoLocal is the local solver "auto": bucket elimination where a
// home's tables fit, Gibbs sampling where not (cmd/hearth's --local auto).
const AutoLocal = "auto"

// Samples reports whether local solver name samples rows (a sampler, or
// auto), so that a run over it proves nothing.
func Samples(name string) bool {
	return name == AutoLocal || slices.Contains(sampler.Names(), name)
}

// Solver choices for SHDS files, which carry none. fitSHDS replaces the
// protocol with MGM unless the command line names one; D-Gibbs with exact
// rows is what a user's --global dgibbs gets.
const (
	shdsGlobal = "dgibbs"
	shdsLocal  = "be"
)

// MGM is the SHDS default. Its best responses (one local solve of a home,
// localsearch.Responder) are exact: by bucket elimination where the
// home fits it, else by an exact solve within bounds (-p
// response_checks, response_width, response_total) and block descent
// past them; with joint moves (-p joint=1)
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
	// responseWidth bounds the induced width of the AND/OR search's
	// pseudo-tree that is tried at all: past it the mini-bucket bound
	// covers too little of the home for the search to end within the
	// budget, and the home answers by block descent without trying. The
	// response problems of the published homes have trees of width
	// 13–21 (their whole own problems: min-fill width 17–21).
	responseWidth = 24
	// responseTotal bounds the checks of all of one home's exact
	// responses in a run (each home's CPU for them, whatever the number
	// of MGM rounds): past it the home answers by block descent. A wide
	// home's first response took 5.5·10^5–4.2·10^7 checks (one passed
	// 2^28) and its later ones 8·10^5–4·10^7 (TestExportSHDSResponses
	// on dm_7_1_5 and dm_7_1_6): 2^30 leaves room for about 25 rounds
	// of the costliest. On dm_21_1_6 three homes' later questions grew to
	// 2·10^8 checks each and passed it after 5–8 exact answers (README).
	responseTotal = 1 << 30
)

// ExactResponseChecks is the budget of checks of one exact best response
// of a home past responseEntries (AND/OR search, or EDAC on the binary
// hard constraints its device tables imply, local.Exact within its
// memory budget), --shds's default (-p response_checks): past it the
// home answers by block descent, from then on (-p response_checks=0:
// block descent at once). The budget counts checks, not time, so which
// homes answer exactly does not depend on the machine's load.
//
// It is the default since every wide home of the published files stays
// within it and responseTotal throughout (README.md, "Exact best
// responses for wide SHDS homes"): with EDAC keeping the crisp device
// tables generalised arc consistent, dm_21_1_6's 315 responses took a
// median of 4.1·10^6 checks and at most 6.6·10^7, its costliest home
// 7.0·10^8 in all; end to end, exact responses cost 1.2–1.65 times block
// descent's CPU on dm_7_1_5, dm_7_1_6, dm_21_1_6 and dm_35_1_6 (an idle
// host, one run each; dm_7_1_3 within a run's spread), for plans on the
// load that flows within 1.3 units of block descent's (dm_7_1_5 44 units
// lower). An exact best
// response need not lead MGM to a better local optimum, but it is the
// best response the protocol asks for, not an approximation of it.
const ExactResponseChecks = 1 << 28

// maxEagerRows is the largest MVA table (rows of one home) an eager table
// is filled for; past it Options falls back to lazy rows, because a TOML
// file without [solver].table asks for eager (the config default).
const maxEagerRows = 1 << 16

// Overrides are what the command line says about a homes run. Empty or
// unset fields keep the choice of the TOML's [solver] (or, for SHDS files,
// shdsGlobal and shdsLocal); params override the TOML's key by key.
type Overrides struct {
	Global, Local, Table, GPU string
	Seed                      uint64
	SeedSet                   bool
	Params                    map[string]float64
	Timeout                   time.Duration
	// Levels is the number of energy levels per slot of an SHDS import
	// (0 means the importer's 4).
	Levels int
	// Strict refuses an SHDS file with infeasible homes instead of
	// dropping their rules.
	Strict bool
	// Rounds bounds the SH-MGM-style baseline (0: baseline.DefaultRounds;
	// negative: the baseline is skipped).
	Rounds int
	// NoBaselines skips both baselines.
	NoBaselines bool
	// Kicks is the number of escapes of the improvement phase on the
	// load that flows (Improve); 0 means baseline.DefaultKicks for SHDS
	// files, fewer on streets past 109 homes (their budget of
	// baseline.DefaultKickedHomes kicked homes), and, for TOML
	// neighbourhoods, the phase's descent without escapes (improvement);
	// negative none. A positive Kicks is run in full whatever the street.
	Kicks int
}

// IsFile reports whether path names a neighbourhood (a .toml file)
// rather than a DCOP instance; SHDS files are named by --shds.
func IsFile(path string) bool {
	return strings.EqualFold(filepath.Ext(path), ".toml")
}

// Run is a loaded neighbourhood: its model, the compiled problem, the
// resolved solver choice, and the baselines once computed.
type Run struct {
	path     string
	cfg      *config.Config // nil for an SHDS file
	compiled *compile.Compiled
	opts     Overrides
	// The resolved solver choice.
	global, local, table, gpu string
	seed                      uint64
	params                    map[string]float64
	timeout                   time.Duration
	notes                     []string
	// dropped are the SHDS rules no schedule keeps, by home.
	dropped []report.DroppedHome
	// lower is the flow objective's lower bound once computed.
	lower     *float64
	lowerDone bool

	baselinesDone bool
	// missing names the baselines not computed, with why.
	missing []report.MissingBaseline
	// skipped says why SkipSHMGM left the SH-MGM-style baseline out.
	skipped       string
	uncoordinated *baseline.Outcome
	shmgm         *baseline.Outcome
	// start is the uncoordinated schedule as an assignment of the
	// problem, where the protocol starts from it (mgm.InitStart).
	start []int
	// energy are the energy homes (planner = "energy"), planned by
	// devices/street and not compiled; answered is what Answer left
	// (nil before it runs).
	energy   []*street.Member
	answered *answered
}

// startable reports whether protocol global reads mgm.InitStart: D-Gibbs,
// MGM and MGM-2 start every agent at its local solver's suggestion with it
// (mva.Starter): for homes, the schedule each home plans alone (the
// uncoordinated baseline). Homes runs use it to restart (Restart) a
// D-Gibbs run over sampled rows that ended without a feasible sample: on
// SHDS homes with many rules most sampled rows are infeasible (dm_35_1_6:
// 0 of 20 random rows for 9 of 35 homes). It is not the default: from row
// 0 D-Gibbs wanders through infeasible rows to far better schedules where
// it finds feasible ones (dm_21_1_4: objective 9.0M from row 0, 15.2M from
// the uncoordinated schedules, whose own is 15.3M), while from the
// uncoordinated schedules it hardly moves, every neighbouring row being
// infeasible to the sampler.
func startable(global string) bool { return slices.Contains([]string{"dgibbs", "mgm", "mgm2"}, global) }

// Load reads a neighbourhood: a TOML file (config.Load) or, with
// shdsFile, an SHDS instance (shds.ReadFile, homes whose rules no
// schedule satisfies dropped and noted unless o.Strict), compiles it and
// resolves the solver choice. Errors: config.Errors for a bad TOML (print
// it as is), errors wrapping devices.ErrInfeasible for rules no schedule
// can satisfy, devices.ErrTooLarge for tables past the limits; loadExit
// maps them to exit codes.
func Load(path string, shdsFile bool, o Overrides) (*Run, error) {
	r := &Run{path: path, opts: o}
	var n *devices.Neighbourhood
	if shdsFile {
		res, err := shds.ReadFile(path, shds.Options{Levels: o.Levels, Infeasible: policy(o)})
		if err != nil {
			return nil, err
		}
		n = res.Neighbourhood
		for _, d := range res.Dropped {
			r.dropped = append(r.dropped, report.DroppedHome{Home: d.Home, Rules: d.Rules})
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
		r.cfg = cfg
		if n, r.energy, err = street.Split(cfg); err != nil {
			return nil, err
		}
		if len(n.Homes) == 0 && len(r.energy) > 0 {
			return nil, fmt.Errorf("%s: every home is an energy home (planner = \"energy\"): there is no compiled problem; hearth solve and hearth sim plan such a street", path)
		}
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
	} else if startable(r.global) {
		r.startSoft()
	}
	return r, nil
}

// startSoft starts D-Gibbs, MGM and MGM-2 from the homes' own schedules
// (-p init=3) on a TOML neighbourhood whose file and command line leave
// the start open. Its rules are soft goals: from row 0 (every device off)
// a local search sees each missed goal as a finite penalty rather than an
// infeasible row, moves one home per neighbourhood per round, and may
// stop with goals missed that the homes' own schedules meet (MGM's 3
// rounds on the example street left alder's EV short). From the own
// schedules, which miss only what no schedule of the home can meet, a
// search that only lowers the objective keeps them met.
func (r *Run) startSoft() {
	soft := false
	for _, h := range r.Model().Homes {
		for _, rule := range h.Rules {
			soft = soft || rule.Soft
		}
	}
	if _, set := r.params["init"]; set || !soft {
		return
	}
	r.params["init"] = mgm.InitStart
	r.notes = append(r.notes, fmt.Sprintf("%s starts from each home's own schedule (-p init=%v): the homes' goals are soft", r.global, mgm.InitStart))
}

// FromConfig is Load for a configuration already read (config.LoadWith,
// and changed by the caller: `hearth run`'s live homes put their state and
// series into it), named path in messages.
func FromConfig(path string, cfg *config.Config, o Overrides) (*Run, error) {
	r := &Run{path: path, opts: o, cfg: cfg}
	// Energy homes (planner = "energy") are split off as Load does:
	// `hearth run` plans them in their own processes.
	n, en, err := street.Split(cfg)
	if err != nil {
		return nil, err
	}
	if len(n.Homes) == 0 && len(en) > 0 {
		return nil, fmt.Errorf("%s: every home is an energy home (planner = \"energy\"): there is no compiled problem", path)
	}
	r.energy = en
	s := cfg.Solver
	r.global, r.local, r.table, r.gpu, r.seed = s.Global, s.Local, s.Table, s.GPU, s.Seed
	r.params, r.timeout = maps.Clone(s.Params), s.Timeout
	if err := r.compile(n); err != nil {
		return nil, err
	}
	r.override(o)
	if startable(r.global) {
		r.startSoft()
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
// rules), those homes answer by exact best responses within
// ExactResponseChecks checks per response (-p response_checks) and
// responseTotal in all per home where its pseudo-tree's width is at most
// responseWidth (-p response_total, response_width), and by block descent
// past any of them (-p response=3; -p response_checks=0: block descent at
// once) — from their own schedules (-p init=3), and the importer's 4
// levels per slot stay: such a run never samples a row.
//
// D-Gibbs (the command line's choice) reads MVA rows. Where they are too
// wide for fast bucket elimination, --local auto samples those homes'
// rows with Gibbs and keeps bucket elimination for the others; and
// sampled rows over 4 levels per slot often leave D-Gibbs in infeasible
// rows (dm_7_1_5), as 4^12-row dense tables of their interiors may not
// even be addressable: 3 levels avoid both, whenever rows may be sampled
// (--local gibbs, mh or auto).
func (r *Run) fitSHDS(o Overrides) error {
	wide := o.Local == "" && r.local == "be" && !r.fitsBE()
	if wide {
		r.local = shdsWideLocal
	}
	homes := len(r.Problem().Agents)
	if o.Global == "" {
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
		if r.complete() {
			// Every home neighbours every other: VALUEs and GAINs go
			// through one hub, which sends each home one bundle per
			// wave, not n−1 messages (the same moves; mgm's relay).
			r.paramDefault("relay", 1)
		}
		if n := r.wideResponses(); wide || n > 0 {
			r.paramDefault("response", mgm.ResponseBlocks)
			r.paramDefault("response_entries", responseEntries)
			r.paramDefault("response_width", responseWidth)
			r.paramDefault("response_total", responseTotal)
			r.paramDefault("init", mgm.InitStart)
			r.paramDefault("response_checks", ExactResponseChecks)
			how := "by block descent (-p response_checks=0)"
			if c := r.params["response_checks"]; c > 0 {
				how = fmt.Sprintf("by exact best responses (EDAC on the binary hard constraints their device tables imply, AND/OR search past its budget) within %.3g checks each (-p response_checks) and %.3g in all per home (-p response_total) where its pseudo-tree's induced width is at most %v (-p response_width), and by block descent past any of them", c, r.params["response_total"], r.params["response_width"])
			}
			r.notes = append(r.notes, fmt.Sprintf("%d of %d homes are too wide for an exact best response by bucket elimination in %.3g-entry tables: they answer %s (-p response=%v), from their own schedules (-p init=%v)", n, homes, r.params["response_entries"], how, r.params["response"], r.params["init"]))
		}
		return nil
	}
	sampled := Samples(r.local)
	if o.Levels == 0 && (sampled || !r.tablesFit()) {
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
func (r *Run) complete() bool {
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
func (r *Run) paramDefault(k string, v float64) {
	if _, set := r.params[k]; !set {
		r.params[k] = v
	}
}

// wideResponses counts the homes whose whole local problem (boundary
// included, as an MGM best response solves it) bucket elimination does
// not solve with tables of at most responseEntries.
func (r *Run) wideResponses() int {
	p := r.Problem()
	d := mva.Decompose(p)
	n := 0
	for i := range d.Subs {
		sub := d.Subs[i]
		sub.Boundary, sub.Interior = nil, sub.Local
		if _, err := local.NewBE(mva.NewLocalProblem(p, &sub), local.BEOptions{MaxEntries: responseEntries}); err != nil {
			n++
		}
	}
	return n
}

func policy(o Overrides) shds.Policy {
	if o.Strict {
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
	shdsWideLocal      = AutoLocal
)

// tablesFit reports whether every home's dense MVA table (rows × interior
// variables, mva.NewTable) is addressable.
func (r *Run) tablesFit() bool {
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
func (r *Run) fitsBE() bool {
	p := r.Problem()
	d := mva.Decompose(p)
	for i := range d.Subs {
		if _, err := local.NewBE(mva.NewLocalProblem(p, &d.Subs[i]), local.BEOptions{MaxEntries: rowEntries}); err != nil {
			return false
		}
	}
	return true
}

// New is Load for a model built in memory, with the solver
// choice of an SHDS file.
func New(name string, n *devices.Neighbourhood, o Overrides) (*Run, error) {
	r := &Run{path: name, opts: o, global: shdsGlobal, local: shdsLocal, table: "lazy", gpu: "auto", seed: config.DefaultSeed, params: map[string]float64{}}
	if err := r.compile(n); err != nil {
		return nil, err
	}
	r.override(o)
	return r, nil
}

func (r *Run) compile(n *devices.Neighbourhood) error {
	c, err := compile.Compile(n, compile.Options{})
	if err != nil {
		return fmt.Errorf("%s: %w", r.path, err)
	}
	r.compiled = c
	return nil
}

// override applies the command line's choices.
func (r *Run) override(o Overrides) {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&r.global, o.Global)
	set(&r.local, o.Local)
	set(&r.table, o.Table)
	set(&r.gpu, o.GPU)
	if o.SeedSet {
		r.seed = o.Seed
	}
	if r.params == nil {
		r.params = map[string]float64{}
	}
	maps.Copy(r.params, o.Params)
	if o.Timeout > 0 {
		r.timeout = o.Timeout
	}
	if r.table == "eager" && o.Table == "" {
		if rows := r.compiled.Stats().MVARows; rows > maxEagerRows {
			r.table = "lazy"
			r.notes = append(r.notes, fmt.Sprintf("MVA tables of up to %d rows per home: rows are computed when the protocol asks (table = \"lazy\")", rows))
		}
	}
}

// Path is the file the neighbourhood was read from (its name, for one
// built in memory).
func (r *Run) Path() string { return r.path }

// Problem is the compiled neighbourhood: one agent per home.
func (r *Run) Problem() *mva.Problem { return r.compiled.Problem }

// Model is the neighbourhood the problem was compiled from.
func (r *Run) Model() *devices.Neighbourhood { return r.compiled.Model }

// Config is the loaded TOML (its broker settings), nil for an SHDS file.
func (r *Run) Config() *config.Config { return r.cfg }

// EnergyHomes returns the number of energy homes (planner = "energy"),
// which the compiled problem leaves out and Report plans.
func (r *Run) EnergyHomes() int { return len(r.energy) }

// Notes are warnings for the user: homes whose rules were dropped,
// repairs, solver choices changed.
func (r *Run) Notes() []string { return r.notes }

// Assignment turns a result's labelled assignment back into value
// indices.
func Assignment(p *mva.Problem, labels map[string]string) ([]int, error) {
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

// startAssignment returns the uncoordinated schedule as an assignment of
// the problem (computing the baseline now, once), or nil with a note when
// it cannot: the protocol then starts at row 0.
func (r *Run) startAssignment() []int {
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
func (r *Run) Baselines(ctx context.Context) error {
	if r.baselinesDone {
		return nil
	}
	if r.opts.NoBaselines {
		r.missing = append(r.missing,
			report.MissingBaseline{Name: "uncoordinated", Reason: "skipped (no baselines asked for)"},
			report.MissingBaseline{Name: "shmgm", Reason: "skipped (no baselines asked for)"})
		r.baselinesDone = true
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
			r.missing = append(r.missing, report.MissingBaseline{Name: "uncoordinated", Reason: err.Error()})
		}
	}
	if r.opts.Rounds >= 0 {
		if r.shmgm, err = baseline.SHMGM(ctx, n, baseline.Options{Rounds: r.opts.Rounds}); err != nil {
			if ctx.Err() != nil {
				return err
			}
			r.notes = append(r.notes, "SH-MGM-style baseline: "+err.Error())
			r.missing = append(r.missing, report.MissingBaseline{Name: "shmgm", Reason: err.Error()})
		}
	} else if r.skipped == "" {
		r.missing = append(r.missing, report.MissingBaseline{Name: "shmgm", Reason: "skipped (--shmgm-rounds -1)"})
	}
	if r.skipped != "" {
		r.missing = append(r.missing, report.MissingBaseline{Name: "shmgm", Reason: "skipped: " + r.skipped})
	}
	r.baselinesDone = true
	return nil
}

// Report builds the result object of a solution: res and its assignment
// (nil to decode res.Assignment, as the MQTT path returns it).
func (r *Run) Report(assign []int, res mva.Result) (*report.Homes, error) {
	if err := r.Baselines(context.Background()); err != nil {
		return nil, err
	}
	in := report.Input{Model: r.Model(), Result: res, Uncoordinated: r.refinedOutcome(r.uncoordinated), SHMGM: r.refinedSHMGM(), Missing: r.missing, Dropped: r.dropped, LowerBound: r.lowerBound(), Notes: append(slices.Clone(res.Notes), r.notes...)}
	if res.Feasible {
		if assign == nil {
			var err error
			if assign, err = Assignment(r.Problem(), res.Assignment); err != nil {
				return nil, err
			}
		}
		s, ev, refined, err := r.schedule(assign)
		if err != nil {
			return nil, err
		}
		in.Schedule, in.Eval = s, ev
		if refined {
			before := math.NaN()
			if res.Objective != nil {
				before = *res.Objective
			}
			c := ev.Cost
			in.Result.Objective = &c
			in.Notes = append(in.Notes, fmt.Sprintf("the EVs' charging refined onto their exact currents after the solve (devices/refine): objective %.6g → %.6g", before, c))
		}
	}
	h, err := report.Build(in)
	if err != nil {
		return nil, err
	}
	if in.Schedule != nil {
		chk := homecheck.Check(r.Model(), Street(h))
		if err := chk.Err(); err != nil {
			return nil, err
		}
		if h.EnergyHomes, err = r.energyHomes(assign, in.Eval); err != nil {
			return nil, err
		}
		if err := r.checkFeeder(h.EnergyHomes, chk.CommittedKW); err != nil {
			return nil, err
		}
		if h.EnergyHomes != nil {
			// The result's goals missed are every home's.
			for _, eh := range h.EnergyHomes.Homes {
				h.GoalsMissed = append(h.GoalsMissed, eh.GoalsMissed...)
			}
		}
	}
	return h, nil
}

// schedule decodes assign and evaluates it, and refines the devices with
// exact actions onto them (devices/refine; true where that changed the
// plan; in a street never raising the objective on the load that flows
// either: refineCompiled). In a street with energy homes the compiled
// homes are refined with the energy homes' plans fixed as they answered
// them, each refinement kept only where it lowers the street's
// objective (refineMixed).
func (r *Run) schedule(assign []int) (*devices.Schedule, *devices.Evaluation, bool, error) {
	s, ev, err := r.compiled.Report(assign)
	if err != nil {
		return s, ev, false, err
	}
	if len(r.energy) > 0 {
		s2, ev2, err := r.refineMixed(assign, s, ev)
		return s2, ev2, s2 != s, err
	}
	s2, ev2, err := refineCompiled(r.Model(), s, ev)
	return s2, ev2, s2 != s, err
}

// refinedOutcome is the uncoordinated baseline's outcome o with its plans
// refined as the coordinated plan's are (devices/refine), so that what a
// home saves against planning alone compares like with like: each home
// refined with no committed levels, as it plans alone, then evaluated on
// the street with the tightest levels its draw fits, as the baseline is.
// (The SH-MGM-style baseline's plan is refined as the coordinated plan
// is: refinedSHMGM.) The outcome itself is left as it is: its schedule
// is also the start the protocol encodes. Without devices to refine, in
// a street with energy homes, or where the refinement cannot be
// evaluated, it is o.
func (r *Run) refinedOutcome(o *baseline.Outcome) *baseline.Outcome {
	if o == nil || o.Schedule == nil || o.Eval == nil || len(r.energy) > 0 {
		return o
	}
	n := r.Model()
	m := *n
	m.Windows, m.FeederLimit = nil, 0
	plain := &devices.Schedule{Homes: slices.Clone(o.Schedule.Homes)}
	for i := range plain.Homes {
		plain.Homes[i].Levels = nil
	}
	ev, err := m.Evaluate(plain)
	if err != nil {
		return o
	}
	s, _, err := refine.Schedule(&m, plain, ev)
	if err != nil || s == plain {
		return o
	}
	for i := range s.Homes {
		s.Homes[i].Levels = nil
	}
	full, err := n.Evaluate(s)
	if err != nil {
		return o
	}
	out := *o
	out.Schedule, out.Eval = s, full
	return &out
}

// Street is what a result claims, for the independent checker
// (devices/homecheck): every home's plan and the street's figures.
func Street(h *report.Homes) homecheck.Street {
	s := homecheck.Street{LoadKW: h.LoadKW, EnergyCost: h.EnergyCost, PeakKW: h.PeakKW, GoalsMissed: len(h.GoalsMissed), FeederExcessKW: h.FeederExcessKW}
	for _, p := range h.Schedules {
		s.Plans = append(s.Plans, Plan(p))
	}
	return s
}

// Plan is what one home's plan claims, for the independent checker.
func Plan(p report.HomePlan) homecheck.Plan {
	out := homecheck.Plan{Home: p.Home, Actions: map[string][]string{}, KW: map[string][]float64{}, LoadKW: p.LoadKW, EnergyKWh: p.EnergyKWh, Cost: p.EnergyCost, PeakKW: p.PeakKW, Levels: p.Levels,
		CurtailKW: p.CurtailedKW, OverKWh: p.OverLimitsKWh, StoredValue: p.StoredValue}
	for _, d := range p.Devices {
		out.Actions[d.Device] = d.Actions
		out.KW[d.Device] = d.KW
	}
	for _, r := range p.Rules {
		out.Rules = append(out.Rules, homecheck.Claim{Rule: r.Rule, OK: r.OK, Hard: r.Hard, Missed: r.Missed})
	}
	return out
}

// Render writes the result people read: format "text" (or "") the
// summary, "json" the result object, "csv" one file per table in outDir
// (the current folder when empty) and their paths. With outDir set, the
// load-profile charts are written there too (PNG and SVG) and their paths
// printed (listed under "charts" in JSON).
func (r *Run) Render(w io.Writer, assign []int, res mva.Result, format string, outDir string) error {
	h, err := r.Report(assign, res)
	if err != nil {
		return err
	}
	return Write(w, h, Output{Format: format, Dir: outDir})
}

// Output says how Write prints a result.
type Output struct {
	// Format is "text" (or ""), "json" or "csv"; Dir is where charts
	// and CSV files go (CSV: the current folder when empty; charts only
	// when set).
	Format, Dir string
	// Text tunes the summary.
	Text report.TextOptions
	// CSVBeside, with Format "text", also writes the CSV files and
	// lists them after the summary.
	CSVBeside bool
}

// Write prints h as o says (Render's formats).
func Write(w io.Writer, h *report.Homes, o Output) error {
	if o.Dir != "" {
		files, err := h.WriteCharts(o.Dir)
		if err != nil {
			return fmt.Errorf("charts: %w", err)
		}
		h.Charts = files
	}
	writeCSV := func(listCharts bool) error {
		dir := o.Dir
		if dir == "" {
			dir = "."
		}
		files, err := h.WriteCSV(dir)
		if err != nil {
			return fmt.Errorf("csv: %w", err)
		}
		if listCharts {
			files = append(files, h.Charts...)
		}
		for _, f := range files {
			if _, err := fmt.Fprintln(w, f); err != nil {
				return err
			}
		}
		return nil
	}
	switch o.Format {
	case "", "text":
		if err := h.WriteText(w, o.Text); err != nil {
			return err
		}
		if !o.CSVBeside {
			return nil
		}
		if _, err := fmt.Fprintln(w, "\ncsv files"); err != nil {
			return err
		}
		return writeCSV(false)
	case "json":
		b, err := h.JSON()
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case "csv":
		return writeCSV(true)
	}
	return fmt.Errorf("unknown output format %q (valid: text, json, csv)", o.Format)
}

// Publications returns the MQTT messages that publish every home's plan
// (report.Publications documents the topics); the prefix defaults to the
// TOML's [broker].topic_prefix.
func (r *Run) Publications(assign []int, o report.PublishOptions) ([]report.Publication, error) {
	s, ev, _, err := r.schedule(assign)
	if err != nil {
		return nil, err
	}
	h, err := report.Build(report.Input{Model: r.Model(), Schedule: s, Eval: ev})
	if err != nil {
		return nil, err
	}
	if err := homecheck.Check(r.Model(), Street(h)).Err(); err != nil {
		return nil, err
	}
	return report.Publications(r.Model(), h.Schedules, r.publishDefaults(o))
}

// HomePublications publishes one home's plan, for `hearth run`, whose
// agent knows only its own variables: assign needs values for the home's
// variables only.
func (r *Run) HomePublications(assign []int, home int, o report.PublishOptions) ([]report.Publication, error) {
	if home < 0 || home >= len(r.compiled.Homes) {
		return nil, fmt.Errorf("home %d of %d", home, len(r.compiled.Homes))
	}
	if len(assign) != len(r.Problem().Variables) {
		return nil, fmt.Errorf("assignment has %d values for %d variables", len(assign), len(r.Problem().Variables))
	}
	plan, err := r.HomePlan(assign, home)
	if err != nil {
		return nil, err
	}
	if len(r.Model().Windows) > 0 && len(r.energy) > 0 {
		// A mixed street's energy homes share the feeder limit less
		// the compiled homes' caps (`hearth run`'s rounds when every
		// home comes online read them from the published load).
		if plan.CommittedKW, err = r.HomeCaps(assign, home); err != nil {
			return nil, err
		}
	}
	return report.Publications(r.Model(), []report.HomePlan{plan}, r.publishDefaults(o))
}

// HomePlan is one home's plan (its devices' actions and kW per slot) in
// an assignment that needs values for the home's variables only: the
// schedule HomeRefined returns, checked.
func (r *Run) HomePlan(assign []int, home int) (report.HomePlan, error) {
	hs, err := r.HomeRefined(assign, home)
	if err != nil {
		return report.HomePlan{}, err
	}
	plan, err := report.PlanOf(r.Model(), home, hs)
	if err != nil {
		return report.HomePlan{}, err
	}
	if err := homecheck.CheckHome(r.Model(), home, Plan(plan)).Err(); err != nil {
		return report.HomePlan{}, fmt.Errorf("home %s: %w", plan.Home, err)
	}
	return plan, nil
}

// HomeRefined is the schedule of home home that HomePlan publishes for
// an assignment that needs values for the home's variables only: its
// actions and committed levels, its devices with exact actions refined
// (devices/refine). It reads nothing of the other homes, so every home
// of `hearth run` can tell the others what it publishes
// (PlansObjective).
func (r *Run) HomeRefined(assign []int, home int) (devices.HomeSchedule, error) {
	if home < 0 || home >= len(r.compiled.Homes) {
		return devices.HomeSchedule{}, fmt.Errorf("home %d of %d", home, len(r.compiled.Homes))
	}
	if len(assign) != len(r.Problem().Variables) {
		return devices.HomeSchedule{}, fmt.Errorf("assignment has %d values for %d variables", len(assign), len(r.Problem().Variables))
	}
	hc := &r.compiled.Homes[home]
	hs := devices.HomeSchedule{Actions: make([][]int, len(hc.Actions))}
	for d, row := range hc.Actions {
		hs.Actions[d] = make([]int, len(row))
		for t, v := range row {
			hs.Actions[d][t] = assign[v]
		}
	}
	// Its devices with exact actions refined within the levels it
	// committed to (its own variables); in a street, energy homes
	// included, with its draw in no coordinated slot above the solved
	// one's, as schedule refines a street (refineMixed keeps such a
	// refinement wherever it lowers the home's own objective: the
	// street's terms can then only fall).
	hs.Levels = make([]int, len(hc.Levels))
	for w, v := range hc.Levels {
		hs.Levels[w] = assign[v]
	}
	onLoad := len(r.Model().Homes) > 1 || len(r.energy) > 0
	refineHome := refine.Home
	if onLoad {
		refineHome = refine.HomeOnLoad
	}
	if r.cfg != nil && r.cfg.Live.On {
		// A rolling horizon runs slot 0 only, then plans again from
		// what the devices hold: never behind the solved plan there
		// (refine.HomeRolling).
		refineHome = func(n *devices.Neighbourhood, hi int, hs devices.HomeSchedule) (devices.HomeSchedule, bool, error) {
			return refine.HomeRolling(n, hi, hs, onLoad)
		}
	}
	refined, _, err := refineHome(r.Model(), home, hs)
	if err != nil {
		return devices.HomeSchedule{}, err
	}
	return refined, nil
}

// HomeRefinedLoad is the draw per slot (kW) of the schedule of home home
// that HomePlan publishes (HomeRefined): with automatic levels, what its
// refined plan draws, which a mixed street's energy homes of `hearth run`
// score the street on after the phases, as `hearth sim` scores it on the
// refined compiled homes.
func (r *Run) HomeRefinedLoad(assign []int, home int) ([]float64, error) {
	hs, err := r.HomeRefined(assign, home)
	if err != nil {
		return nil, err
	}
	n := r.Model()
	scale := powerScale(n)
	out := make([]float64, n.Horizon.Slots)
	for t := range out {
		out[t] = n.Homes[home].Draw(t, func(d int) int { return hs.Actions[d][t] }) * scale
	}
	return out, nil
}

// PlansObjective is the objective of the compiled homes' schedules homes
// (one per home, in the street's order: what each publishes,
// HomeRefined) as `hearth sim` reports a plan's: the model's evaluation
// on their committed levels (devices.Neighbourhood.Evaluate). A home of
// `hearth run` reports it once the homes have told each other their
// schedules, so that with automatic power levels the objective it
// reports is that of the refined plan published, not the protocol's.
// It fails where the schedules break a hard rule or limit.
func (r *Run) PlansObjective(homes []devices.HomeSchedule) (float64, error) {
	n := r.Model()
	if len(homes) != len(n.Homes) {
		return 0, fmt.Errorf("%d schedules for %d homes", len(homes), len(n.Homes))
	}
	ev, err := n.Evaluate(&devices.Schedule{Homes: homes})
	if err != nil {
		return 0, err
	}
	if !ev.Feasible {
		return 0, fmt.Errorf("the published plans break the street's rules: %s", strings.Join(ev.Violations, "; "))
	}
	return ev.Cost, nil
}

func (r *Run) publishDefaults(o report.PublishOptions) report.PublishOptions {
	if o.Prefix == "" && r.cfg != nil {
		o.Prefix = r.cfg.Broker.TopicPrefix
	}
	return o
}

// Choice returns the run's resolved solver choice (without a start:
// WithStart adds it).
func (r *Run) Choice() Choice {
	return Choice{Global: r.global, Local: r.local, Table: r.table, GPU: r.gpu, Seed: r.seed,
		Params: maps.Clone(r.params), Timeout: r.timeout}
}

// WithStart returns c with Start set where its parameters ask for the
// homes' own schedules as the start (-p init=3 for D-Gibbs, MGM, MGM-2),
// computing the uncoordinated baseline once.
func (r *Run) WithStart(c Choice) Choice {
	if c.Params["init"] == mgm.InitStart && startable(c.Global) {
		c.Start = r.startAssignment()
	}
	return c
}

// Restart returns the choice for a second run when a first one with c
// found no feasible schedule: D-Gibbs, MGM or MGM-2 started from the
// uncoordinated schedules (-p init=3), whose first sample keeps every
// rule. It declines when the file or the command line chose the start
// itself, the protocol is another, or the start cannot be built.
func (r *Run) Restart(c Choice) (Choice, bool) {
	if _, set := r.params["init"]; set || !startable(c.Global) {
		return c, false
	}
	start := r.startAssignment()
	if start == nil {
		return c, false
	}
	c.Params = maps.Clone(c.Params)
	if c.Params == nil {
		c.Params = map[string]float64{}
	}
	c.Params["init"] = mgm.InitStart
	c.Start = start
	r.notes = append(r.notes, fmt.Sprintf("%s from its first rows ended without a feasible schedule; restarted from each home's own (uncoordinated) schedule (-p init=%v)", c.Global, mgm.InitStart))
	return c, true
}

// Improve lowers the objective on the load that flows from the protocol's
// result (res and its assignment; nil decodes res.Assignment) by
// baseline.Improve's joint best responses and escapes, where the run asks
// for it (SHDS files by default, Overrides.Kicks), and restarts it from
// the homes' own schedules and the SH-MGM-style baseline's plan where the
// run computes them (restarts; baseline.ImproveFrom keeps the best of the
// three, so the plan is never above the baseline's on that objective, and
// a note says which start it came from; where the report refines plans
// onto exact currents, the one lowest once refined, refinedChoice). It
// returns the result
// of the improved schedule — its objective on the committed levels that
// fit it tightest, status feasible — and whether ctx stopped the search
// (the result is then the best found so far). Without an improvement
// phase, or an infeasible res, it returns res as it is.
func (r *Run) Improve(ctx context.Context, assign []int, res mva.Result) ([]int, mva.Result, bool, error) {
	kicks, on := r.improvement()
	if !on || !res.Feasible {
		return assign, res, false, nil
	}
	if assign == nil {
		var err error
		if assign, err = Assignment(r.Problem(), res.Assignment); err != nil {
			return nil, res, false, err
		}
	}
	s, _, err := r.compiled.Report(assign)
	if err != nil {
		return nil, res, false, err
	}
	o := baseline.ImproveOptions{Kicks: kicks, Seed: r.seed, Options: baseline.Options{ExactEntries: improveEntries}}
	if r.opts.Kicks != 0 {
		o.KickedHomes = -1 // --improve N: N escapes, whatever the street
	}
	// The baselines first: they are the report's yardstick and two of
	// the starts, and a run stopped during the improvement phase then
	// still reports the converged SH-MGM-style baseline beside its best
	// plan so far (a stop during them leaves them out; the protocol's
	// plan is then returned as it is, stopped).
	by := solverName(res)
	starts := append([]baseline.Start{{Name: by + "'s plan", Schedule: s}}, r.restarts(ctx, kicks < 0)...)
	rs, err := baseline.ImproveFrom(ctx, r.Model(), starts, o)
	if err != nil {
		return nil, res, false, err
	}
	imp := rs.Improvement()
	kept := imp.Schedule
	choice, choiceNote, err := r.refinedChoice(rs, starts)
	if err != nil {
		return nil, res, false, err
	}
	if choice != nil {
		kept = choice
	}
	out, err := r.compiled.Encode(kept)
	if err != nil {
		return nil, res, false, err
	}
	improved := res
	cost, err := r.Problem().Eval(out)
	if err != nil {
		return nil, res, false, err
	}
	improved.Objective = &cost
	improved.Assignment = r.Problem().Labels(out)
	improved.Optimal = false
	improved.Status = mva.StatusFeasible
	improved.Notes = append(slices.Clone(res.Notes), fmt.Sprintf(
		"improved on the load that flows after %s: objective %.0f → %.0f (%+.1f%%) in %d rounds of joint best responses (%d moves) and %d escapes (%d kept), %.1f s",
		by, rs.Runs[0].Start, rs.Runs[0].Flow, 100*(rs.Runs[0].Flow-rs.Runs[0].Start)/rs.Runs[0].Start, rs.Runs[0].Rounds, rs.Runs[0].Moves, rs.Runs[0].Kicks, rs.Runs[0].Accepted, rs.Runs[0].Wall.Seconds())+budgetNote(rs.Runs[0]))
	if len(starts) > 1 {
		improved.Notes = append(improved.Notes, restartNote(starts, rs))
	}
	if choiceNote != "" {
		improved.Notes = append(improved.Notes, choiceNote)
	}
	// A stop while the restarts' baselines were computed is a stop too:
	// the report must not compute them again regardless.
	return out, improved, rs.Stopped || ctx.Err() != nil, nil
}

// solverName names what found res in the notes: its protocol, or "the
// central solve" for --global none (`hearth solve`).
func solverName(res mva.Result) string {
	if g := res.Algorithm.Global; g != "" && g != "none" {
		return g
	}
	return "the central solve"
}

// restarts returns the further starts of the improvement phase: the
// homes' own (uncoordinated) schedules and the SH-MGM-style baseline's
// plan, where the run computes them (Baselines; an error or a stop there
// leaves them out). Both are plans the homes reach without a central
// solver — each home alone, or the MGM between them — though hearth sim
// computes them in its own process.
//
// A descent without escapes (descentOnly) restarts from the baseline's
// plan alone: the baseline's best responses start from the homes' own
// schedules already, and descend on the same load.
func (r *Run) restarts(ctx context.Context, descentOnly bool) []baseline.Start {
	if err := r.Baselines(ctx); err != nil {
		return nil
	}
	var out []baseline.Start
	if u := r.uncoordinated; u != nil && u.Eval != nil && u.Eval.Feasible && !descentOnly {
		out = append(out, baseline.Start{Name: "the homes' own schedules", Schedule: u.Schedule})
	}
	if b := r.shmgm; b != nil && b.Eval != nil && b.Eval.Feasible {
		out = append(out, baseline.Start{Name: "the SH-MGM-style baseline's plan", Schedule: b.Schedule})
	}
	return out
}

// budgetNote says, where the responses' budget ended a run's escapes
// early, that it did ("" otherwise).
func budgetNote(run *baseline.Improvement) string {
	if !run.Budgeted {
		return ""
	}
	return fmt.Sprintf("; the escapes' budget of %d kicked homes ended them", baseline.DefaultKickedHomes)
}

// restartNote says what each start of the improvement phase led to and
// which plan was kept.
func restartNote(starts []baseline.Start, rs *baseline.Restarts) string {
	var b strings.Builder
	b.WriteString("the improvement phase also restarted, in process, from")
	for k := 1; k < len(starts); k++ {
		if k > 1 {
			b.WriteString(";")
		}
		if run := rs.Runs[k]; run != nil {
			fmt.Fprintf(&b, " %s (objective %.0f → %.0f, %d escapes, %d kept, %.1f s%s)", starts[k].Name, run.Start, run.Flow, run.Kicks, run.Accepted, run.Wall.Seconds(), budgetNote(run))
		} else {
			fmt.Fprintf(&b, " %s (skipped: %s)", starts[k].Name, rs.Skipped[k])
		}
	}
	fmt.Fprintf(&b, "; the plan kept is the one from %s (objective %.0f)", starts[rs.Best].Name, rs.Improvement().Flow)
	return b.String()
}

// Descend runs the descent of the improvement phase — joint best
// responses on the load that flows — between the homes as protocol agents
// on rt (baseline.Descend: the homes exchange per-slot loads, not
// schedules), where the run asks for an improvement phase (descends). Improve
// afterwards plans what it would have planned from res
// (baseline.TestDescendThenImprove), its own first descent moving nobody.
func (r *Run) Descend(ctx context.Context, assign []int, res mva.Result, rt pipeline.Runtime) ([]int, mva.Result, error) {
	if !r.descends() || !res.Feasible {
		return assign, res, nil
	}
	if assign == nil {
		var err error
		if assign, err = Assignment(r.Problem(), res.Assignment); err != nil {
			return nil, res, err
		}
	}
	s, _, err := r.compiled.Report(assign)
	if err != nil {
		return nil, res, err
	}
	d, err := baseline.Descend(ctx, r.Model(), s, baseline.ImproveOptions{Seed: r.seed, Options: baseline.Options{ExactEntries: improveEntries}}, rt, nil)
	if err != nil {
		return nil, res, err
	}
	out, err := r.compiled.Encode(d.Schedule)
	if err != nil {
		return nil, res, err
	}
	cost, err := r.Problem().Eval(out)
	if err != nil {
		return nil, res, err
	}
	flow := func(sc *devices.Schedule) float64 {
		ev, err := r.Model().Evaluate(sc)
		if err != nil {
			return math.NaN()
		}
		return baseline.FlowObjective(r.Model(), ev)
	}
	from, to := flow(s), flow(d.Schedule)
	improved := res
	improved.Objective = &cost
	improved.Assignment = r.Problem().Labels(out)
	improved.Optimal = false
	improved.Status = mva.StatusFeasible
	improved.Notes = append(slices.Clone(res.Notes), fmt.Sprintf(
		"descent on the load that flows between the homes after %s (per-slot loads exchanged): objective %.0f → %.0f (%+.1f%%) in %d rounds, %d moves, %d messages (%d bytes)",
		res.Algorithm.Global, from, to, 100*(to-from)/from, d.Rounds, d.Moves, d.Metrics.Messages, d.Metrics.TotalMessageBytes))
	return out, improved, nil
}

// descends reports whether the run has an improvement phase whose
// descent runs between the homes: one is asked for (SHDS files by
// default, Overrides.Kicks), and the street has no feeder limit or every
// home is every other's neighbour (baseline.Descend).
func (r *Run) descends() bool {
	_, on := r.improvement()
	return on && (r.Model().FeederLimit <= 0 || baseline.Complete(r.Model()))
}

// improvement returns the escapes of the run's improvement phase on the
// load that flows (baseline.ImproveOptions.Kicks: negative for a descent
// without escapes) and whether it has one: Overrides.Kicks, or else a
// TOML file's [solver] improve, where given (negative: none); else
// baseline.DefaultKicks for an SHDS file and, for
// a TOML neighbourhood without [live], the descent alone, restarted from
// the SH-MGM-style baseline's plan (restarts). On the example street the
// protocol's committed levels leave the load that flows 8% above the
// baseline's; the descent and that restart put it at the baseline's or
// below, for about a third of what escapes cost (docs/DESIGN.md).
func (r *Run) improvement() (kicks int, on bool) {
	k := r.opts.Kicks
	if k == 0 && r.cfg != nil {
		k = r.cfg.Solver.Improve // [solver] improve
	}
	switch {
	case k < 0:
		return 0, false
	case k > 0:
		return k, true
	case r.cfg == nil:
		return baseline.DefaultKicks, true
	case r.cfg.Live.On:
		// A street with [live] re-plans every slot on a rolling
		// horizon; the descent between its rounds is not measured
		// there yet (docs/DESIGN.md, "TOML streets").
		return 0, false
	}
	return -1, true
}

// HomeDescent is the descent of the improvement phase for one home of
// `hearth run`, which knows only its own values: given the values after
// the protocol (the home's own, the others' anything), it takes part in
// baseline.Descend with the other homes over rt and returns the values
// with its own replaced by its schedule after the descent. It is nil where
// the run has no such phase (descends), the same on every home of a
// street that loads the same file with the same --improve.
func (r *Run) HomeDescent() func(ctx context.Context, values []int, home int, rt pipeline.Runtime) ([]int, error) {
	if !r.descends() {
		return nil
	}
	return func(ctx context.Context, values []int, home int, rt pipeline.Runtime) ([]int, error) {
		s, err := r.compiled.Decode(values)
		if err != nil {
			return nil, err
		}
		d, err := baseline.Descend(ctx, r.Model(), s, baseline.ImproveOptions{Seed: r.seed, Options: baseline.Options{ExactEntries: improveEntries}}, rt, []int{home})
		if err != nil {
			return nil, err
		}
		out := slices.Clone(values)
		if err := r.compiled.EncodeHome(out, home, &d.Schedule.Homes[home]); err != nil {
			return nil, fmt.Errorf("home %d after the descent: %w", home, err)
		}
		return out, nil
	}
}

// improveEntries bounds the tables of a home whose best response the
// improvement phase solves exactly; wider homes use block descent. On
// dm_7_1_5, 2^20 entries (MGM's response_entries) took 2.1 s of CPU and
// 88 MB for the same objective that 2^22, the SH-MGM-style baseline's
// bound, reached in 8.7 s and 556 MB.
const improveEntries = 1 << 20

// lowerBound is baseline.LowerBound of the model, computed once; nil
// where the model has none (sparse links, export, …) or it fails.
func (r *Run) lowerBound() *float64 {
	if !r.lowerDone {
		r.lowerDone = true
		if lb, err := baseline.LowerBound(context.Background(), r.Model(), baseline.Options{}); err == nil {
			r.lower = &lb
		}
	}
	return r.lower
}

// Fallback is the best plan known without the protocol's: the homes' own
// schedules (the uncoordinated baseline), when they are feasible in the
// coordinated model (a feeder limit may forbid them). A run stopped
// before its protocol finished reports it.
func (r *Run) Fallback() ([]int, mva.Result, bool) {
	start := r.startAssignment()
	if start == nil {
		return nil, mva.Result{}, false
	}
	cost, err := r.Problem().Eval(start)
	if err != nil || mva.IsHard(cost) {
		return nil, mva.Result{}, false
	}
	res := mva.NewResult(r.Problem(), start, cost)
	res.Conclude(false)
	return start, res, res.Feasible
}

// SkipSHMGM leaves the SH-MGM-style baseline out of the report, with
// why as a note (a stopped run prints what it has at once).
func (r *Run) SkipSHMGM(why string) {
	if r.opts.Rounds >= 0 && r.shmgm == nil {
		r.opts.Rounds = -1
		r.skipped = why
		r.notes = append(r.notes, "SH-MGM-style baseline skipped: "+why)
	}
}
