package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/mqtt"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/pipeline"
)

// runOptions are the flags of `hearth run`.
type runOptions struct {
	solve    solveOptions
	broker   brokerOptions
	instance string
	agent    string
	runID    string
	once     bool
	attempts int
	logLevel string
	// Homes: the neighbourhood (-c, or --shds), the home, what to
	// publish, and how often to look for changed files.
	config, shds, home string
	homeAssistant      bool
	discovery          string
	watch              time.Duration
}

// homes reports whether the flags name a home of a neighbourhood rather
// than an agent of an instance.
func (o *runOptions) homes() bool { return o.config != "" || o.shds != "" || o.home != "" }

const runSynopsis = `--instance FILE --agent NAME [flags]
       hearth run -c NEIGHBOURHOOD.toml --home NAME [flags]

Runs one agent of FILE in this process, over an MQTT broker (--broker): every
agent of the instance runs the same command with its own --agent, on this
machine or another, with the same FILE and solver flags. The agent announces
itself, waits for the others, and runs a coordination round when asked:

  <prefix>/cmd                      {"round": "ID"} runs round ID
  <prefix>/ID/result/<agent>        its result (retained JSON; also on stdout with --once)

With --once it runs round --run-id at start and exits. A round whose run
breaks (an agent restarted mid-round) is restarted, up to --attempts times,
as run ID.retry1, ID.retry2, ...

With -c (or --shds FILE) it runs home NAME of a neighbourhood: every home's
process reads the same files (its own copy), with the solver of [solver] and
the broker of [broker] unless flags say otherwise. Rounds also start on the
schedule of [run], on SIGHUP, and when the files change (--watch); each home
asks the others on <prefix>/cmd/<home>. After a round the home publishes its
plan, retained:

  <prefix>/cmd/<home>               {"round": "ID", "at": TIME, "from": HOME}: a home asks for round ID
  <prefix>/home/<home>/plan/<device>  the device's action and kW per slot
  <prefix>/home/<home>/load         the home's planned draw per slot
  homeassistant/sensor/<home>/...   Home Assistant discovery ([publish], --home-assistant)`

func runRun(ctx context.Context, e *env, args []string) int {
	var o runOptions
	fs := newFlagSet(e, "run", runSynopsis)
	o.solve.register(fs, "dpop")
	o.broker.register(fs)
	fs.StringVar(&o.instance, "instance", "", "the instance FILE every agent of the run reads")
	fs.StringVar(&o.agent, "agent", "", "the agent this process runs (its name in FILE)")
	fs.StringVar(&o.runID, "run-id", "", "run round ID at start (required with --once; every agent must be given the same)")
	fs.BoolVar(&o.once, "once", false, "run round --run-id, print the result and exit")
	fs.IntVar(&o.attempts, "attempts", 3, "how many runs a round may take: a run that breaks (an agent restarted mid-round) is started again")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&o.config, "c", "", "homes: the neighbourhood TOML this home's process reads (with --home)")
	fs.StringVar(&o.shds, "shds", "", "homes: an SHDS instance (dm_*.json) instead of -c (with --home)")
	fs.StringVar(&o.home, "home", "", "homes: the home this process runs (its name in the neighbourhood)")
	fs.BoolVar(&o.homeAssistant, "home-assistant", false, "homes: publish Home Assistant discovery configurations too (default [publish] home_assistant)")
	fs.StringVar(&o.discovery, "discovery-prefix", "", "homes: Home Assistant's discovery prefix (default [publish] discovery_prefix, or homeassistant)")
	fs.DurationVar(&o.watch, "watch", 3*time.Second, "homes: how often to look for changed input files; a change that holds still for one look is loaded and starts a round (0: never)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if err := o.check(pos); err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %v\n", err)
		return exitUsage
	}
	var level slog.Level
	_ = level.UnmarshalText([]byte(o.logLevel)) // checked by o.check
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	if o.homes() {
		return runHome(ctx, e, fs, &o, log)
	}

	cfg, err := o.broker.config(o.solve.global, "")
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %v\n", err)
		return exitUsage
	}
	cfg.Logger = log
	dev, err := openGPU(o.solve.gpu)
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %v\n", err)
		return exitUsage
	}
	if dev != nil {
		defer dev.Close()
	}
	if o.solve.delay != 0 {
		log.Warn("--delay is the simulated runtime's latency; over MQTT the real one applies", "delay", o.solve.delay)
	}
	p, err := loadInstance(o.instance, &o.solve)
	if err != nil {
		fmt.Fprintln(e.stderr, err)
		return exitUsage
	}
	d, err := prepareDistributed(p, o.solve, dev)
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %s: %v\n", o.instance, err)
		return exitFailed
	}
	home, err := findHome(d, o.agent)
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %s: %v\n", o.instance, err)
		return exitUsage
	}
	h, err := newHomeAgent(ctx, d, home, cfg, log)
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %s: %v\n", o.instance, err)
		return exitFailed
	}
	h.instance, h.attempts, h.timeout = o.instance, o.attempts, o.solve.timeout
	if o.once {
		return runOnce(ctx, e, h, o.runID, o.solve.json, nil)
	}
	return serve(ctx, h, o.runID)
}

// check validates the flags; pos are the positional arguments. The
// solver flags of a home are checked once its file has filled them in.
func (o *runOptions) check(pos []string) error {
	if len(pos) > 0 {
		if homesolve.IsFile(pos[0]) {
			return fmt.Errorf("unexpected argument %q (a neighbourhood is -c FILE --home NAME)", pos[0])
		}
		return fmt.Errorf("unexpected argument %q (the instance is --instance FILE)", pos[0])
	}
	var err error
	if o.homes() {
		err = o.checkHome()
	} else {
		err = o.checkInstance()
	}
	switch {
	case err != nil:
		return err
	case o.once && o.runID == "":
		return errors.New("--once needs --run-id ID, the same for every agent of the round")
	case o.attempts < 1:
		return errors.New("--attempts must be at least 1")
	}
	if o.runID != "" {
		if err := mqtt.CheckRoundID(o.runID); err != nil {
			return fmt.Errorf("--run-id: %w", err)
		}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("--log-level %q: want debug, info, warn or error", o.logLevel)
	}
	return nil
}

func (o *runOptions) checkInstance() error {
	switch {
	case o.instance == "":
		return errors.New("--instance FILE is required (or -c NEIGHBOURHOOD.toml --home NAME for a home)")
	case o.agent == "":
		return errors.New("--agent NAME is required")
	case o.broker.url == "":
		return errors.New("--broker URL is required: every agent process meets the others at a broker (hearth sim runs a whole instance over an embedded one)")
	}
	if err := o.solve.check(); err != nil {
		return err
	}
	if o.solve.global == "none" {
		return errors.New("--global none has no agents to run; name a protocol")
	}
	return nil
}

func (o *runOptions) checkHome() error {
	switch {
	case o.instance != "" || o.agent != "":
		return errors.New("give either --instance FILE --agent NAME or -c NEIGHBOURHOOD.toml --home NAME, not both")
	case o.config != "" && o.shds != "":
		return errors.New("give either -c NEIGHBOURHOOD.toml or --shds FILE, not both")
	case o.config == "" && o.shds == "":
		return errors.New("--home needs the neighbourhood: -c NEIGHBOURHOOD.toml (or --shds FILE)")
	case o.home == "":
		return errors.New("--home NAME is required: the home this process runs")
	case o.watch < 0:
		return errors.New("--watch must not be negative (0 never looks for changed files)")
	}
	return nil
}

// attemptRun is the MQTT run id of attempt k (from 0) of a round. Every
// agent derives it the same way, so that after a broken run they meet
// again in the next one without talking.
func attemptRun(round string, k int) string {
	if k == 0 {
		return round
	}
	return fmt.Sprintf("%s.retry%d", round, k)
}

// runOnce runs one round, publishes and prints its result, and returns the
// exit code. plan, when not nil, returns the publications of a home's plan
// after a round that began at start.
func runOnce(ctx context.Context, e *env, h *homeAgent, round string, asJSON bool, plan func(start time.Time, rep roundResult) []report.Publication) int {
	start := time.Now()
	rep, err := h.round(ctx, round)
	var pubs []report.Publication
	if err == nil && plan != nil {
		pubs = plan(start, rep)
	}
	// A failed round may have failed for want of a broker: its outcome
	// is published if the broker answers at once.
	wait := 10 * time.Second
	if err != nil {
		wait = 2 * time.Second
	}
	pubCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
	defer cancel()
	if perr := publishResultOnce(pubCtx, h, round, rep, err, pubs); perr != nil {
		h.log.Warn("result not published", "err", perr)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth run: round %s: %v\n", round, err)
		return exitFailed
	}
	if asJSON {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			fmt.Fprintf(e.stderr, "hearth run: %v\n", err)
			return exitFailed
		}
		e.stdout.Write(append(b, '\n'))
	} else {
		printReport(e.stdout, rep)
	}
	return resultExit(mva.Result{Feasible: rep.Feasible, Status: rep.Status})
}

// serve is the long-running agent: it runs round first (when set), then a
// round for every command, until ctx ends. It returns exitOK when ctx
// ends (SIGINT, SIGTERM), exitFailed when the broker refuses it.
func serve(ctx context.Context, h *homeAgent, first string) int {
	s := &server{h: h, c: newControl(h, true), done: newRecent(64)}
	return s.loop(ctx, first)
}

// server is a long-running `hearth run`: the agent, its control client,
// the rounds it has run, and for a home what else starts rounds and what
// it publishes (home, nil for an agent of an instance). Everything but the
// control client's handlers runs on loop's goroutine, so a round, a reload
// and a publication never overlap.
type server struct {
	h    *homeAgent
	c    *mqtt.Control
	done *recent
	home *homeState
}

// loop runs round first (when set) and then every round asked for until
// ctx ends.
func (s *server) loop(ctx context.Context, first string) int {
	var err error
	if first != "" {
		err = s.runRound(ctx, mqtt.Request{ID: first, From: "--run-id"})
	}
	if err == nil {
		err = s.c.Connect(ctx)
	}
	idle := true
	for err == nil {
		if idle && len(s.c.Commands()) == 0 {
			s.h.log.Info("ready: waiting for commands", "topic", s.c.CommandTopic())
		}
		idle = false
		var (
			hup                  <-chan os.Signal
			poll, sched, refresh <-chan time.Time
		)
		if st := s.home; st != nil {
			hup, poll, sched, refresh = st.hup, st.pollC, st.schedule.c(), st.plan.c()
		}
		select {
		case <-ctx.Done():
			s.c.Close()
			s.h.log.Info("stopped")
			return exitOK
		case req := <-s.c.Commands():
			err = s.runRound(ctx, req)
			idle = true
		case <-hup:
			err = s.ask(ctx, fmt.Sprintf("%s-%d", s.h.name, time.Now().Unix()), "SIGHUP")
			idle = true
		case <-poll:
			idle, err = s.poll(ctx)
		case <-sched:
			err = s.scheduled(ctx)
			idle = true
		case <-refresh:
			s.republish(ctx)
		}
	}
	if ctx.Err() != nil {
		s.h.log.Info("stopped")
		return exitOK
	}
	s.h.log.Error("cannot reach the broker", "err", err)
	return exitFailed
}

// runRound runs round req and publishes its outcome (and a home's plan);
// it returns an error only when the agent cannot reach the broker any
// more. A round already run is not run again.
func (s *server) runRound(ctx context.Context, req mqtt.Request) error {
	if s.done.has(req.ID) {
		s.h.log.Info("round already run; command ignored", "round", req.ID)
		return nil
	}
	s.done.add(req.ID)
	if s.home != nil {
		// Every home runs on the newest inputs.
		s.refresh(ctx)
	}
	if req.At.IsZero() {
		req.At = time.Now()
	}
	s.c.Pause()
	rep, roundErr := s.h.round(ctx, req.ID)
	if ctx.Err() != nil {
		return nil
	}
	if roundErr != nil {
		s.h.log.Error("round failed", "round", req.ID, "err", roundErr)
	} else {
		s.h.log.Info("round complete", "round", req.ID, "run", rep.Run, "objective", fmtObjective(rep.Objective))
	}
	if err := s.c.Connect(ctx); err != nil {
		return err
	}
	if err := publishResult(ctx, s.c, s.h, req.ID, rep, roundErr); err != nil {
		s.h.log.Warn("result not published", "round", req.ID, "err", err)
	}
	if s.home != nil && roundErr == nil {
		s.publishPlan(ctx, req, rep)
	}
	return nil
}

// homeAgent is what `hearth run` runs: the protocol agents one home owns
// (one with the MVA reformulation, one per variable with decomposition),
// prepared once (pipeline.Plan) and started afresh for every round.
type homeAgent struct {
	d        *distributed
	plan     *pipeline.Plan
	home     int    // index in d.p.Agents
	name     string // the home's MQTT name (presence, results, commands)
	cfg      mqtt.Config
	log      *slog.Logger
	instance string
	attempts int
	timeout  time.Duration
	// neighbours are the MQTT names of the homes this one shares a
	// function with.
	neighbours []string
}

// findHome returns the index of the agent named agent (its name in the
// file, or its MQTT name), which must take part in the protocol: the
// reformulations other than MVA give an agent without variables no
// protocol agent.
func findHome(d *distributed, agent string) (int, error) {
	names := mqtt.AgentNames(d.p)
	for i, a := range d.p.Agents {
		if a.Name != agent && names[i] != agent {
			continue
		}
		owns := slices.ContainsFunc(d.p.Variables, func(v mva.Variable) bool { return v.Agent == i })
		if d.o.reform != "mva" && !owns {
			return 0, fmt.Errorf("agent %q owns no variables: it takes no part in the protocol", agent)
		}
		return i, nil
	}
	return 0, fmt.Errorf("no agent %q (agents: %s)", agent, listNames(names, 10))
}

// newHomeAgent builds agent home's protocol agents, which must take part
// in the protocol.
func newHomeAgent(ctx context.Context, d *distributed, home int, cfg mqtt.Config, log *slog.Logger) (*homeAgent, error) {
	p := d.p
	opts := d.opts
	opts.Owned = []int{home}
	plan, err := pipeline.Prepare(ctx, p, opts)
	if err != nil {
		return nil, err
	}
	homeNames := mqtt.AgentNames(p)
	h := &homeAgent{d: d, plan: plan, home: home, name: homeNames[home], cfg: cfg, log: log.With("agent", homeNames[home])}
	h.cfg.Agents = mqtt.AgentNames(plan.Problem())
	h.cfg.Timing = h.cfg.Timing.ForAgents(len(h.cfg.Agents))
	for _, j := range mva.Decompose(p).Neighbours()[home] {
		h.neighbours = append(h.neighbours, homeNames[j])
	}
	return h, nil
}

func listNames(names []string, most int) string {
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:most], ", ") + fmt.Sprintf(", … (%d in all)", len(names))
}

// round runs coordination round id to its end and reports this home's
// part of the answer. A run that breaks — typically because an agent was
// restarted mid-round: the MQTT runtime cannot resume a protocol, and
// stops every agent of the run with an error — is started again under the
// next attempt's run id, which every agent derives alike.
func (h *homeAgent) round(ctx context.Context, id string) (roundResult, error) {
	if h.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.timeout)
		defer cancel()
	}
	for k := 0; ; k++ {
		run := attemptRun(id, k)
		h.log.Info("round starting", "round", id, "run", run)
		g := &mqtt.Group{Config: mqtt.GroupConfig{Config: h.cfg}}
		g.Config.Run = run
		sol, err := h.plan.Run(ctx, g)
		if err == nil {
			return h.report(id, run, k+1, sol, g.Last.Stats)
		}
		if ctx.Err() != nil || mqtt.Refused(err) {
			return roundResult{Round: id, Run: run, Agent: h.name, Stats: g.Last.Stats}, err
		}
		if k+1 >= h.attempts {
			return roundResult{Round: id, Run: run, Agent: h.name, Stats: g.Last.Stats}, err
		}
		h.log.Warn("round broken; starting it again", "round", id, "run", run, "next", attemptRun(id, k+1), "err", err)
	}
}

// roundResult is what a `hearth run` agent publishes after a round (on
// <prefix>/<round>/result/<agent>, retained) and prints with --once: its
// own variables' values, and the objective as far as it knows it.
type roundResult struct {
	V     int    `json:"v"`
	Round string `json:"round"`
	// Run is the MQTT run id of the attempt that completed the round.
	Run      string `json:"run"`
	Attempts int    `json:"attempts"`
	Agent    string `json:"agent"`
	Instance string `json:"instance,omitempty"`
	Sense    string `json:"sense,omitempty"`
	// Objective is the whole problem's objective in the file's sense as
	// the protocol told this agent, or null when it does not tell agents
	// (D-Gibbs, MGM) or the problem is infeasible.
	Objective *float64 `json:"objective"`
	// LocalObjective is the agent's own functions' part of it.
	LocalObjective *float64 `json:"local_objective"`
	Feasible       bool     `json:"feasible"`
	Optimal        bool     `json:"optimal"`
	// Status is what the round proved (mva.Result.Status).
	Status mva.Status `json:"status,omitempty"`
	// Assignment holds the values of this agent's variables, as the file
	// writes them.
	Assignment map[string]string `json:"assignment"`
	Algorithm  *mva.Algorithm    `json:"algorithm,omitempty"`
	// Stats are the MQTT counters of this process's protocol agents.
	Stats []mqtt.Stats `json:"stats"`
	// Error says why the round failed; the other fields are then partial.
	Error string `json:"error,omitempty"`
	// values are the values of the problem's variables (indices, in the
	// problem's terms) as far as this agent knows them: its own, and
	// zeros for the others'. A home's plan is built from them.
	values []int
}

// report turns the solution of the home's agents into its report.
func (h *homeAgent) report(id, run string, attempts int, sol pipeline.Solution, stats []mqtt.Stats) (roundResult, error) {
	d, p := h.d, h.d.p
	orig := sol.Assign
	feasible := !sol.HardRow
	rep := roundResult{V: 1, Round: id, Run: run, Attempts: attempts, Agent: h.name, Instance: h.instance,
		Sense: p.Sense.String(), Assignment: map[string]string{}, Stats: stats, values: orig}
	algo := d.algorithm()
	rep.Algorithm = &algo
	mine := make([]bool, len(p.Variables))
	for v, x := range p.Variables {
		if x.Agent == h.home {
			mine[v] = true
			rep.Assignment[x.Name] = x.Domain[orig[v]]
		}
	}
	local := 0.0
	for fi := range p.Functions {
		f := &p.Functions[fi]
		inside := len(f.Scope) > 0
		idx := 0
		for _, v := range f.Scope {
			inside = inside && mine[v]
			idx = idx*p.DomainSize(v) + orig[v]
		}
		if inside {
			local += f.Costs[idx]
		}
	}
	if mva.IsHard(local) {
		feasible = false
	} else {
		rep.LocalObjective = ptr(p.Sense.Report(local))
	}
	switch cost := sol.Reported; {
	case mva.IsHard(cost):
		feasible = false
	case !math.IsNaN(cost):
		rep.Objective = ptr(p.Sense.Report(cost))
	}
	rep.Feasible = feasible
	rep.Optimal = d.complete() && sol.Optimal && feasible && rep.Objective != nil
	r := mva.Result{Feasible: feasible, Optimal: rep.Optimal}
	r.Conclude(d.complete())
	rep.Status = r.Status
	return rep, nil
}

func ptr(f float64) *float64 { return &f }

func fmtObjective(o *float64) string {
	if o == nil {
		return "unknown"
	}
	return formatCost(*o)
}

func printReport(w io.Writer, r roundResult) {
	state := "best found"
	if r.Optimal {
		state = "optimal"
	}
	if !r.Feasible {
		state = "infeasible"
		if r.Status == mva.StatusUnknown {
			state = "no feasible assignment found, not a proof"
		}
	}
	fmt.Fprintf(w, "agent       %s, round %s (run %s, %d attempt(s))\n", r.Agent, r.Round, r.Run, r.Attempts)
	fmt.Fprintf(w, "objective   %s (%s, %s); own functions %s\n", fmtObjective(r.Objective), r.Sense, state, fmtObjective(r.LocalObjective))
	var b strings.Builder
	n := 0
	for _, v := range slices.Sorted(maps.Keys(r.Assignment)) {
		if n == maxListed {
			fmt.Fprintf(&b, " … (%d more; --json prints all)", len(r.Assignment)-maxListed)
			break
		}
		fmt.Fprintf(&b, " %s=%s", v, r.Assignment[v])
		n++
	}
	fmt.Fprintf(w, "assignment %s\n", b.String())
}
