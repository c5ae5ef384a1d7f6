// Package daemon is `hearth run`: a long-running process that runs one
// agent of an instance, or one home of a neighbourhood, over an MQTT
// broker. It runs a coordination round when asked — a command on
// <prefix>/cmd, another home's request, the schedule of [run], SIGHUP,
// changed input files — restarts a round whose run broke, and publishes
// each round's result and, for a home, its plan.
//
// The command line (cmd/hearth) parses flags and chooses the solver
// (Prepared); everything from there on is here, so that the daemon can be
// driven and tested without a command line. Agent is one agent of an
// instance (Agent.Run, Agent.Once); Home adds what a home of a
// neighbourhood needs: reloads, schedules and plans (Home.Run, Home.Once).
package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/internal/live"
	"github.com/hearth-dcop/hearth/mqtt"
	"github.com/hearth-dcop/hearth/mqtt/sign"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/pipeline"
)

// Prepared is a protocol run chosen for a problem: the pipeline's options
// (protocol, local solver, tables, reformulation, seed, parameters), what
// the result says about the algorithm, and whether the algorithm is
// complete (an exact protocol over exact rows, so that finding no feasible
// assignment proves infeasibility). cmd/hearth makes it from the flags.
type Prepared struct {
	Options   pipeline.Options
	Algorithm mva.Algorithm
	Complete  bool
	// Timeout bounds a round; 0 means none (a home then uses
	// DefaultHomeTimeout).
	Timeout time.Duration
}

// ErrConfig marks errors of the daemon's configuration (an agent or home
// the problem lacks, a name Home Assistant refuses, a bad prefix): the
// user's to fix, where other errors are the run's.
var ErrConfig = errors.New("configuration")

// AgentConfig configures NewAgent.
type AgentConfig struct {
	// Problem is the instance; Name the agent this process runs (its
	// name in the problem, or its MQTT name).
	Problem  *mva.Problem
	Name     string
	Prepared Prepared
	// MQTT is the broker configuration (Agents and Run are the daemon's).
	MQTT mqtt.Config
	Log  *slog.Logger
	// Instance names the instance in the published results.
	Instance string
	// Attempts bounds the runs a round may take (a run that breaks is
	// started again); less than 1 means 1.
	Attempts int
	// Settle is how long a round asked for waits for the rest of a
	// burst before the agent orders the queue by creation time;
	// 0 means mqtt.DefaultSettle. Every agent of a run needs the same.
	Settle time.Duration
	// After, when not nil, is a second phase between the homes after the
	// protocol (homesolve.Run.HomeDescent: the improvement phase's
	// descent on the load that flows), run over MQTT under the round's
	// run id with "-descent" added: given the agent's values and its home,
	// it returns the values to report.
	After func(ctx context.Context, values []int, home int, rt pipeline.Runtime) ([]int, error)
	// Answer, when not nil, is a mixed street's answer to its energy
	// homes after After (homeState.answerHook): given the round and the
	// agent's values, it returns the values to report; group(k) is the
	// runtime of its k-th descent between the homes, under the round's
	// run id with "-aK" added.
	Answer func(ctx context.Context, round string, values []int, group func(k int) pipeline.Runtime) ([]int, error)
	// Objective, when not nil, is the objective of the plans the homes
	// publish for the values reported, after Answer (plansHook: the
	// homes' refined plans), run over MQTT under the round's run id with
	// "-plans" added; it replaces the protocol's. Where it fails the
	// protocol's stands, with a warning.
	Objective func(ctx context.Context, values []int, home int, rt pipeline.Runtime) (float64, error)
}

// AttemptRun is the MQTT run id of attempt k (from 0) of a round
// (mqtt.AttemptRun). Every agent derives it the same way, so that after a
// broken run they meet again in the next one without talking.
func AttemptRun(round string, k int) string { return mqtt.AttemptRun(round, k) }

// server is a long-running `hearth run`: the agent, its control client,
// the rounds it has run, and for a home what else starts rounds and what
// it publishes (home, nil for an agent of an instance). Everything but the
// control client's handlers runs on loop's goroutine, so a round, a reload
// and a publication never overlap.
type server struct {
	h    *Agent
	c    *mqtt.Control
	done *recent
	home *homeState
}

// loop runs round first (when set) and then every round asked for until
// ctx ends, one at a time, in the order the control client's queue gives
// (mqtt.Control.Next): the same on every home. It returns nil when ctx
// ends (SIGINT, SIGTERM), an error when the agent cannot reach the broker
// any more or another process runs this home.
func (s *server) loop(ctx context.Context, first string) error {
	var err error
	if first != "" {
		s.c.Taken(first)
		err = s.runRound(ctx, mqtt.Request{ID: first, Created: time.Now(), From: "--run-id"})
	}
	if err == nil {
		err = s.c.Connect(ctx)
	}
	idle := true
	for err == nil {
		if st := s.home; st != nil && st.schedule.on() && !time.Now().Before(st.schedule.next) {
			// A scheduled round that fell due during a round is queued
			// before the queue is read: a home that was idle queued it
			// at its time, and the order must be the same.
			if err = s.scheduled(ctx); err != nil {
				break
			}
		}
		req, ok, wait := s.c.Next(time.Now())
		if ok && s.liveStale(req) {
			continue
		}
		if ok {
			err = s.runRound(ctx, req)
			idle = true
			continue
		}
		if idle && wait == 0 {
			s.h.log.Info("ready: waiting for commands", "topic", s.c.CommandTopic())
		}
		idle = false
		var (
			hup                        <-chan os.Signal
			poll, sched, refresh, tick <-chan time.Time
			due                        <-chan time.Time
			moved                      <-chan live.Change
		)
		if wait > 0 {
			due = time.After(wait)
		}
		if st := s.home; st != nil {
			hup, poll, sched, refresh = st.hup, st.pollC, st.schedule.c(), st.plan.c()
			tick, moved = st.live.c(), st.live.changes()
		}
		select {
		case <-ctx.Done():
			s.c.Close()
			s.h.log.Info("stopped")
			return nil
		case err = <-s.c.Conflict():
		case <-s.c.Queued():
		case <-due:
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
		case <-tick:
			err = s.liveTimer(ctx)
			idle = true
		case c := <-moved:
			s.liveChange(c)
		}
	}
	if ctx.Err() != nil {
		s.h.log.Info("stopped")
		return nil
	}
	if errors.Is(err, mqtt.ErrDuplicate) {
		s.h.log.Error("another process runs this home; stopping", "err", err)
		s.c.Disconnect()
		return err
	}
	s.h.log.Error("cannot reach the broker", "err", err)
	return err
}

// runRound runs round req and publishes its outcome (and a home's plan);
// it returns an error only when the agent cannot reach the broker any
// more. A round already run is not run again, and a round an earlier
// process of this home finished (mqtt.ErrRunFinished: a restart, a reused
// round id) publishes nothing, so that its record stands.
func (s *server) runRound(ctx context.Context, req mqtt.Request) error {
	if s.done.has(req.ID) {
		s.h.log.Info("round already run; command ignored", "round", req.ID)
		return nil
	}
	s.done.add(req.ID)
	if s.home != nil {
		// Every home runs on the newest inputs.
		s.refresh(ctx)
		if s.home.live != nil {
			s.liveRound(ctx, &req)
		}
	}
	if req.At.IsZero() {
		req.At = time.Now()
	}
	s.c.Pause()
	rep, roundErr := s.h.round(ctx, req.ID, s.c.Listener())
	if ctx.Err() != nil {
		return nil
	}
	finished := errors.Is(roundErr, mqtt.ErrRunFinished)
	switch {
	case finished:
		s.h.log.Warn("round already finished by an earlier process of this home; not run again", "round", req.ID, "from", req.From)
	case roundErr != nil:
		s.h.log.Error("round failed", "round", req.ID, "err", roundErr)
	default:
		s.h.log.Info("round complete", "round", req.ID, "run", rep.Run, "objective", objective(rep.Objective))
	}
	if err := s.c.Connect(ctx); err != nil {
		return err
	}
	if finished {
		return nil
	}
	if err := publishResult(ctx, s.c, s.h, req.ID, rep, roundErr); err != nil {
		s.h.log.Warn("result not published", "round", req.ID, "err", err)
	}
	if s.home != nil && roundErr == nil {
		s.publishPlan(ctx, req, rep)
	}
	return nil
}

// Agent is what `hearth run` runs: the protocol agents one agent of the
// problem (a home) owns — one with the MVA reformulation, one per
// variable with decomposition — prepared once (pipeline.Plan) and
// started afresh for every round.
type Agent struct {
	p        *mva.Problem
	prep     Prepared
	plan     *pipeline.Plan
	home     int    // index in p.Agents
	name     string // the home's MQTT name (presence, results, commands)
	cfg      mqtt.Config
	log      *slog.Logger
	instance string
	attempts int
	timeout  time.Duration
	settle   time.Duration // mqtt.Control's queue settling; 0: its default
	// neighbours are the MQTT names of the homes this one shares a
	// function with.
	neighbours []string
	after      func(ctx context.Context, values []int, home int, rt pipeline.Runtime) ([]int, error)
	answer     func(ctx context.Context, round string, values []int, group func(k int) pipeline.Runtime) ([]int, error)
	objective  func(ctx context.Context, values []int, home int, rt pipeline.Runtime) (float64, error)
}

// findHome returns the index of the agent named agent (its name in the
// file, or its MQTT name), which must take part in the protocol: the
// reformulations other than MVA give an agent without variables no
// protocol agent.
func findHome(p *mva.Problem, reform, agent string) (int, error) {
	names := mqtt.AgentNames(p)
	for i, a := range p.Agents {
		if a.Name != agent && names[i] != agent {
			continue
		}
		owns := slices.ContainsFunc(p.Variables, func(v mva.Variable) bool { return v.Agent == i })
		if reform != "" && reform != "mva" && !owns {
			return 0, fmt.Errorf("%w: agent %q owns no variables: it takes no part in the protocol", ErrConfig, agent)
		}
		return i, nil
	}
	return 0, fmt.Errorf("%w: no agent %q (agents: %s)", ErrConfig, agent, listNames(names, 10))
}

// NewAgent builds the protocol agents of agent c.Name; errors wrapping
// ErrConfig name an agent the problem lacks.
func NewAgent(ctx context.Context, c AgentConfig) (*Agent, error) {
	p := c.Problem
	home, err := findHome(p, c.Prepared.Options.Reform, c.Name)
	if err != nil {
		return nil, err
	}
	opts := c.Prepared.Options
	opts.Owned = []int{home}
	plan, err := pipeline.Prepare(ctx, p, opts)
	if err != nil {
		return nil, err
	}
	log := c.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	homeNames := mqtt.AgentNames(p)
	h := &Agent{p: p, prep: c.Prepared, plan: plan, home: home, name: homeNames[home], cfg: c.MQTT, log: log.With("agent", homeNames[home]),
		instance: c.Instance, attempts: max(c.Attempts, 1), timeout: c.Prepared.Timeout, settle: c.Settle, after: c.After, answer: c.Answer, objective: c.Objective}
	if h.cfg.Identity.Client == "" {
		h.cfg.Identity = mqtt.NewIdentity()
	}
	h.cfg.Agents = mqtt.AgentNames(plan.Problem())
	// A reformulation's agents sign as the home that owns them.
	h.cfg.Homes = homeNames
	if err := checkKeys(h.cfg.Keys, homeNames, h.name); err != nil {
		return nil, err
	}
	h.cfg.Timing = h.cfg.Timing.ForAgents(len(h.cfg.Agents))
	for _, j := range mva.Decompose(p).Neighbours()[home] {
		h.neighbours = append(h.neighbours, homeNames[j])
	}
	return h, nil
}

// checkKeys, for a signed run (keys not nil), requires a public key for
// every home and this home's private key: without them the run would
// start and every peer would drop this home's messages, or it theirs.
func checkKeys(keys *sign.Keyring, homes []string, me string) error {
	if keys == nil {
		return nil
	}
	var missing []string
	for _, n := range homes {
		if !keys.Has(n) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: no public key for %s (every home signs its messages)", ErrConfig, listNames(missing, 10))
	}
	if keys.Signer(me) == nil {
		return fmt.Errorf("%w: the signing key is not %q's (hearth keygen --home %s writes one)", ErrConfig, me, me)
	}
	return nil
}

// Name is the agent's MQTT name.
func (h *Agent) Name() string { return h.name }

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
func (h *Agent) round(ctx context.Context, id string, listen *mqtt.Listener) (RoundResult, error) {
	if h.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.timeout)
		defer cancel()
	}
	for k := 0; ; k++ {
		run := AttemptRun(id, k)
		h.log.Info("round starting", "round", id, "run", run)
		g := &mqtt.Group{Config: mqtt.GroupConfig{Config: h.cfg}}
		g.Config.Run = run
		g.Config.Listen = listen
		sol, err := h.plan.Run(ctx, g)
		if err == nil {
			stats := g.Last.Stats
			if h.after != nil {
				// The homes' second phase: a home whose phase fails keeps
				// the protocol's values, which keep its rules too.
				d := &mqtt.Group{Config: mqtt.GroupConfig{Config: h.cfg}}
				d.Config.Run, d.Config.Listen, d.Config.Agents = run+"-descent", listen, mqtt.AgentNames(h.p)
				if vals, derr := h.after(ctx, sol.Assign, h.home, d); derr != nil {
					h.log.Warn("descent between the homes failed; the plan is the protocol's", "round", id, "err", derr)
				} else {
					sol.Assign = vals
				}
				stats = append(slices.Clone(stats), d.Last.Stats...)
			}
			if h.answer != nil {
				var groups []*mqtt.Group
				vals, aerr := h.answer(ctx, id, sol.Assign, func(k int) pipeline.Runtime {
					g := &mqtt.Group{Config: mqtt.GroupConfig{Config: h.cfg}}
					g.Config.Run, g.Config.Listen, g.Config.Agents = fmt.Sprintf("%s-a%d", run, k), listen, mqtt.AgentNames(h.p)
					groups = append(groups, g)
					return g
				})
				if errors.Is(aerr, energy.ErrInfeasible) {
					// The energy homes' best responses end above a
					// hard feeder limit: the street fails, as in
					// `hearth sim`, and nothing is published.
					return RoundResult{Round: id, Run: run, Agent: h.name, Stats: stats}, fmt.Errorf("mixed street: %w", aerr)
				}
				if aerr != nil {
					h.log.Warn("answer to the energy homes failed; the plan is the one before it", "round", id, "err", aerr)
				}
				sol.Assign = vals
				for _, g := range groups {
					stats = append(slices.Clone(stats), g.Last.Stats...)
				}
			}
			if h.objective != nil && !sol.HardRow {
				// The objective of the plans published, refined
				// (plansHook), for the protocol's.
				g := &mqtt.Group{Config: mqtt.GroupConfig{Config: h.cfg}}
				g.Config.Run, g.Config.Listen, g.Config.Agents = run+"-plans", listen, mqtt.AgentNames(h.p)
				if cost, oerr := h.objective(ctx, sol.Assign, h.home, g); oerr != nil {
					h.log.Warn("the homes' plans not shared; the objective is the protocol's", "round", id, "err", oerr)
				} else {
					sol.Reported = h.p.Sense.Report(cost)
				}
				stats = append(slices.Clone(stats), g.Last.Stats...)
			}
			rep, err := h.report(id, run, k+1, sol, stats)
			rep.Dropped = mqtt.SecurityDropped(stats)
			if rep.Dropped != nil {
				h.log.Warn("messages dropped as forged or replayed", "round", id, "dropped", rep.Dropped)
			}
			return rep, err
		}
		// A finished run, or one a peer gave up, is not started again:
		// the next attempt would wait for peers that have left.
		if ctx.Err() != nil || mqtt.Refused(err) || errors.Is(err, mqtt.ErrRunFinished) || errors.Is(err, mqtt.ErrPeerAbandoned) {
			return RoundResult{Round: id, Run: run, Agent: h.name, Stats: g.Last.Stats}, err
		}
		if k+1 >= h.attempts {
			return RoundResult{Round: id, Run: run, Agent: h.name, Stats: g.Last.Stats}, err
		}
		h.log.Warn("round broken; starting it again", "round", id, "run", run, "next", AttemptRun(id, k+1), "err", err)
	}
}

// RoundResult is what a `hearth run` agent publishes after a round (on
// <prefix>/<round>/result/<agent>, retained) and prints with --once: its
// own variables' values, and the objective as far as it knows it.
type RoundResult struct {
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
	// (D-Gibbs, MGM) or the problem is infeasible; for a home of a street
	// with devices to refine, that of the refined plans the homes
	// publish (AgentConfig.Objective), as `hearth sim` reports it.
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
	// Dropped counts, by reason, the messages this home's agents dropped
	// as unsigned, wrongly signed, replayed or retained on an inbox
	// (mqtt.SecurityDrops): someone may be forging messages.
	Dropped map[string]int64 `json:"security_drops,omitempty"`
	// Values are the values of the problem's variables (indices, in the
	// problem's terms) as far as this agent knows them: its own, and
	// zeros for the others'. A home's plan is built from them.
	Values []int `json:"-"`
}

// report turns the solution of the home's agents into its report.
func (h *Agent) report(id, run string, attempts int, sol pipeline.Solution, stats []mqtt.Stats) (RoundResult, error) {
	p := h.p
	orig := sol.Assign
	feasible := !sol.HardRow
	rep := RoundResult{V: 1, Round: id, Run: run, Attempts: attempts, Agent: h.name, Instance: h.instance,
		Sense: p.Sense.String(), Assignment: map[string]string{}, Stats: stats, Values: orig}
	algo := h.prep.Algorithm
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
	rep.Optimal = h.prep.Complete && sol.Optimal && feasible && rep.Objective != nil
	r := mva.Result{Feasible: feasible, Optimal: rep.Optimal}
	r.Conclude(h.prep.Complete)
	rep.Status = r.Status
	return rep, nil
}

func ptr(f float64) *float64 { return &f }

// objective is o for the log.
func objective(o *float64) any {
	if o == nil {
		return "unknown"
	}
	return *o
}

// newControl returns the control client of h (mqtt.Control): serving for
// the long-running agent, not for a one-shot publication.
func newControl(h *Agent, serving bool) *mqtt.Control {
	cfg := h.cfg
	cfg.Logger = h.log
	c := mqtt.NewControl(cfg, h.name, h.neighbours, serving)
	c.SetTiming(h.timeout, h.settle)
	return c
}

// publishResult publishes a round's outcome on c's connection, retained:
// rep, or the error that ended the round.
func publishResult(ctx context.Context, c *mqtt.Control, h *Agent, round string, rep RoundResult, err error) error {
	if err != nil {
		rep.Error = err.Error()
		rep.V, rep.Round, rep.Agent = 1, round, h.name
	}
	b, jerr := json.Marshal(rep)
	if jerr != nil {
		return jerr
	}
	return c.PublishResult(ctx, round, b)
}

// publications converts a plan's publications for the control client.
func publications(pubs []report.Publication) []mqtt.Publication {
	out := make([]mqtt.Publication, len(pubs))
	for i, p := range pubs {
		out[i] = mqtt.Publication(p)
	}
	return out
}

// publishResultOnce publishes a round's outcome on a connection of its
// own (`hearth run --once`), and then plan (a home's plan, nil for
// none).
func publishResultOnce(ctx context.Context, h *Agent, round string, rep RoundResult, err error, plan []report.Publication) error {
	c := newControl(h, false)
	if cerr := c.Connect(ctx); cerr != nil {
		return cerr
	}
	defer c.Disconnect()
	if perr := publishResult(ctx, c, h, round, rep, err); perr != nil {
		return perr
	}
	return c.Publish(ctx, publications(plan))
}

// recent remembers the last rounds run, so that a command repeated (a
// retained command, or one sent twice) does not run a round again.
type recent struct {
	ids  []string
	most int
}

func newRecent(most int) *recent { return &recent{most: most} }

func (r *recent) has(id string) bool { return slices.Contains(r.ids, id) }

func (r *recent) add(id string) {
	if len(r.ids) == r.most {
		r.ids = r.ids[1:]
	}
	r.ids = append(r.ids, id)
}

// Once runs round, publishes its result (and plan's publications, when
// plan is not nil: a home's plan after a round that began at start) on a
// connection of its own, and returns the result.
func (h *Agent) Once(ctx context.Context, round string, plan func(start time.Time, rep RoundResult) []report.Publication) (RoundResult, error) {
	start := time.Now()
	rep, err := h.round(ctx, round, nil)
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
	return rep, err
}

// Run is the long-running agent: it runs round first (when set), then a
// round for every command, until ctx ends. It returns nil when ctx ends
// (SIGINT, SIGTERM), an error when the broker refuses it.
func (h *Agent) Run(ctx context.Context, first string) error {
	s := &server{h: h, c: newControl(h, true), done: newRecent(64)}
	return s.loop(ctx, first)
}
