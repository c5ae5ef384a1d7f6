package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/homecheck"
	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/internal/live"
	"github.com/hearth-dcop/hearth/mqtt"
	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// This file is `hearth run -c neighbourhood.toml --home NAME`: a home as a
// long-running agent. Every home's process compiles the same
// neighbourhood (its own copy of the files) into the same problem and runs
// its home's protocol agent, exactly as `hearth run --instance` runs an
// agent; what a home adds is when rounds start and what it publishes.
//
// Rounds start on a command (<prefix>/cmd, from a controller), on another
// home's request (<prefix>/cmd/<home>), on the schedule of [run], on
// SIGHUP, and when the home's files change. The last two make the home ask
// the others on its own request topic; a schedule needs no message, since
// every home derives the same round id from the date and time. Whatever
// starts it, a round ends in server.runRound, which runs each round id
// once and first reloads the files if they changed, so that every home
// plans with the newest inputs. After a round the home publishes its plan
// (homesolve.Run.HomePublications), and with Home Assistant discovery on it
// publishes the plan's states again at every slot boundary, since Home
// Assistant renders a state only when a message arrives.

// HomeConfig configures a home (NewHome).
type HomeConfig struct {
	// Path is the neighbourhood's TOML, or an SHDS file (SHDS), loaded
	// with Overrides (the command line's solver choices), again at every
	// change.
	Path      string
	SHDS      bool
	Overrides homesolve.Overrides
	// Home is the home this process runs.
	Home string
	// Prepare chooses the protocol run of every load: the command line's
	// flags with the file's [solver] where they leave it open.
	Prepare func(r *homesolve.Run) (Prepared, error)
	// MQTT is the broker configuration.
	MQTT     mqtt.Config
	Log      *slog.Logger
	Attempts int
	// Watch is how often to look for changed input files (0: never).
	Watch time.Duration
	// Hangup delivers SIGHUP, which makes the home ask for a round (nil:
	// none).
	Hangup <-chan os.Signal
	// HomeAssistant and DiscoveryPrefix, when set, override the file's
	// [publish].
	HomeAssistant   *bool
	DiscoveryPrefix *string
	// Clock is the time a home with [live] plans by (nil: the wall
	// clock; `hearth run --now --speed` sets another).
	Clock *live.Clock
}

// Home is a home of a neighbourhood as a long-running agent.
type Home struct {
	st *homeState
	h  *Agent
}

// homeState is what a home's server keeps besides its agent: how to load
// the neighbourhood again, the files to watch, the schedule, and the last
// plan.
type homeState struct {
	cfg      HomeConfig
	log      *slog.Logger
	r        *homesolve.Run
	inputs   *inputs
	hup      <-chan os.Signal
	pollC    <-chan time.Time
	schedule schedule
	plan     planTimer
	publish  config.Publish
	// digest is what the rounds of the loaded inputs depend on.
	digest digest
	// live is the home's [live] part, nil without.
	live *liveHome
	// once: `hearth run --once`, whose round every home of a mixed
	// street joins (mixed.go).
	once bool
}

// NewHome builds home cfg.Home of r, the neighbourhood loaded from
// cfg.Path (the caller loads it first, to report its notes and take its
// [broker]). Errors wrapping ErrConfig are the configuration's.
func NewHome(ctx context.Context, cfg HomeConfig, r *homesolve.Run) (*Home, error) {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.MQTT.Identity.Client == "" {
		// One identity for the process: every reload's agent shares it.
		cfg.MQTT.Identity = mqtt.NewIdentity()
	}
	st := &homeState{cfg: cfg, log: log, inputs: newInputs(inputFiles(cfg.Path, r))}
	if err := st.setPublish(r); err != nil {
		return nil, err
	}
	h, err := st.agent(ctx, r)
	if err != nil {
		return nil, err
	}
	if st.publish.HomeAssistant && strings.Contains(h.name, ".") {
		return nil, fmt.Errorf("%w: home %q: Home Assistant discovery allows letters, digits, '_' and '-' in a home's name", ErrConfig, h.name)
	}
	st.r, st.digest = r, digestOf(r)
	st.live = st.newLiveHome()
	return &Home{st: st, h: h}, nil
}

// Once runs round, publishes its result and the home's plan, and returns
// the result.
//
// A home with [live] plans from the live state it gathers first (its live
// client waits up to OnceWait for the retained state, Home.liveOnce), on
// the rolling horizon from the slot that holds now, and publishes the
// current slot's commands with its plan.
func (hm *Home) Once(ctx context.Context, round string) (RoundResult, error) {
	st, h := hm.st, hm.h
	st.once = true
	if st.live != nil {
		var err error
		if h, err = hm.liveOnce(ctx, round); err != nil {
			return RoundResult{}, err
		}
		defer st.live.client.Close()
	}
	var rejected error
	rep, err := h.Once(ctx, round, func(start time.Time, rep RoundResult) []report.Publication {
		pubs, _, err := st.publications(h, start, rep)
		if err == nil && st.live != nil {
			pubs = append(pubs, st.liveCommands(h, round, rep)...)
		}
		if err != nil {
			st.log.Warn("plan not published", "err", err)
			if errors.Is(err, homecheck.ErrRejected) {
				rejected = err // the plan checker refused it: the round fails
			}
		}
		return pubs
	})
	if err == nil {
		err = rejected
	}
	return rep, err
}

// Run is the long-running home: it runs round first (when set), then
// every round asked for, scheduled, or called for by SIGHUP or changed
// files, until ctx ends. It returns nil when ctx ends, an error when the
// broker refuses the home.
func (hm *Home) Run(ctx context.Context, first string) error {
	st, h := hm.st, hm.h
	st.hup = st.cfg.Hangup
	if st.cfg.Watch > 0 {
		t := time.NewTicker(st.cfg.Watch)
		defer t.Stop()
		st.pollC = t.C
	}
	if st.live == nil {
		st.schedule.set(runSchedule(st.r), time.Now())
	}
	defer st.schedule.stop()
	defer st.plan.stop()
	s := &server{h: h, c: newControl(h, true), done: newRecent(64), home: st}
	s.c.SetHomes(mqtt.AgentNames(st.r.Problem()), h.neighbours)
	if st.live != nil {
		if err := s.liveStart(ctx); err != nil {
			return err
		}
		defer st.live.client.Close()
	}
	if st.schedule.on() {
		st.logSchedule(h.log)
	}
	return s.loop(ctx, first)
}

func (st *homeState) logSchedule(log *slog.Logger) {
	if st.schedule.on() {
		log.Info("rounds scheduled", "next", st.schedule.next.Format(time.RFC3339), "next_round", roundIDAt(st.schedule.next, st.schedule.run))
	} else {
		log.Info("no rounds scheduled")
	}
}

// agent builds the home's agent for a load.
func (st *homeState) agent(ctx context.Context, r *homesolve.Run) (*Agent, error) {
	prep, err := st.cfg.Prepare(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if prep.Timeout == 0 {
		prep.Timeout = DefaultHomeTimeout
		if lh := st.live; lh != nil {
			prep.Timeout = lh.roundTimeout(r)
		}
	}
	return NewAgent(ctx, AgentConfig{Problem: r.Problem(), Name: st.cfg.Home, Prepared: prep, MQTT: st.cfg.MQTT, Log: st.log,
		Instance: st.cfg.Path, Attempts: st.cfg.Attempts, After: r.HomeDescent(), Answer: st.answerHook(r), Objective: plansHook(r)})
}

// DefaultHomeTimeout bounds a home's round when neither [solver] timeout
// nor --timeout does. Homes agree on a round without a consensus step: a
// home may wait in a round that another never joins (it started just
// after a scheduled time, or missed a request while it restarted). The
// time-out frees it; scheduled rounds it missed meanwhile then run at
// once, where the others wait for it.
const DefaultHomeTimeout = 10 * time.Minute

// setPublish resolves what the home publishes: [publish], overridden by
// HomeAssistant and DiscoveryPrefix.
func (st *homeState) setPublish(r *homesolve.Run) error {
	p := config.Publish{DiscoveryPrefix: config.DefaultDiscoveryPrefix}
	if c := r.Config(); c != nil {
		p = c.Publish
	}
	if v := st.cfg.HomeAssistant; v != nil {
		p.HomeAssistant = *v
	}
	if v := st.cfg.DiscoveryPrefix; v != nil {
		if err := topic.CheckPrefix(*v); err != nil {
			return fmt.Errorf("%w: --discovery-prefix: %w", ErrConfig, err)
		}
		p.DiscoveryPrefix = *v
	}
	st.publish = p
	return nil
}

// runSchedule is a load's [run] (none for an SHDS file).
func runSchedule(r *homesolve.Run) config.Run {
	if c := r.Config(); c != nil {
		return c.Run
	}
	return config.Run{}
}

// ask publishes a request for round id, so that every home joins, and
// queues it (askAt). The round plans from now or, for a live home, from
// its clock's slot.
func (s *server) ask(ctx context.Context, id, why string) error {
	at := time.Now()
	if lh := s.home.live; lh != nil {
		at = live.SlotStart(lh.clock.Now(), lh.slot())
	}
	return s.askAt(ctx, id, at, why)
}

// askAt publishes a request for round id, planning from at, and queues it
// like any command: the queue orders rounds by the wall clock's creation
// time, the same on every home. A request the broker does not take
// starts no round: this home would wait in it alone.
func (s *server) askAt(ctx context.Context, id string, at time.Time, why string) error {
	req := mqtt.Request{ID: id, At: at.Truncate(time.Second), Created: time.Now(), From: why}
	pctx, cancel := context.WithTimeout(ctx, publishWait)
	err := s.c.PublishRequest(pctx, req)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			s.h.log.Error("round request not published; no round", "round", id, "why", why, "err", err)
		}
		return nil
	}
	s.h.log.Info("round requested", "round", id, "why", why, "topic", topic.HomeCmdTopic(s.c.Prefix(), s.h.name))
	s.c.Enqueue(req)
	return nil
}

// poll looks for changed files. Once a change has held still for a poll,
// files that load and change what a round depends on start a round
// (changeRound names it); a change of comments, or of the broker or
// publishing settings, starts none.
func (s *server) poll(ctx context.Context) (bool, error) {
	hash, changed := s.home.inputs.look()
	if !changed || !s.home.inputs.settled(hash) {
		return false, nil
	}
	s.h.log.Info("input files changed; reloading", "files", len(s.home.inputs.files))
	id, ok := s.reload(ctx, hash)
	if !ok || id == "" {
		return true, nil
	}
	return true, s.ask(ctx, id, "input files changed")
}

// refresh reloads the files before a round if they changed; files that do
// not load leave the last good ones in place (the round goes ahead: the
// other homes wait for this one).
func (s *server) refresh(ctx context.Context) {
	if hash, changed := s.home.inputs.look(); changed {
		s.h.log.Info("input files changed; reloading before the round", "files", len(s.home.inputs.files))
		s.reload(ctx, hash)
	}
}

// reload loads the files whose contents hash to hash and, if they load,
// makes them the home's problem. Files that do not load are logged, once,
// and change nothing. It returns the round the change calls for, "" when
// no round depends on what changed.
func (s *server) reload(ctx context.Context, hash string) (string, bool) {
	st := s.home
	fail := func(err error) (string, bool) {
		st.inputs.reject(hash)
		var ce config.Errors
		if errors.As(err, &ce) {
			for _, e := range ce {
				s.h.log.Error("input files invalid; keeping the last good ones", "err", e.Error())
			}
		} else {
			s.h.log.Error("input files invalid; keeping the last good ones", "err", err)
		}
		return "", false
	}
	r, err := homesolve.Load(st.cfg.Path, st.cfg.SHDS, st.cfg.Overrides)
	if err != nil {
		return fail(err)
	}
	h, err := st.agent(ctx, r)
	if err != nil {
		return fail(err)
	}
	prev := st.publish
	if err := st.setPublish(r); err != nil {
		st.publish = prev
		return fail(err)
	}
	if st.publish.HomeAssistant && strings.Contains(h.name, ".") {
		st.publish = prev
		return fail(fmt.Errorf("home %q: Home Assistant discovery allows letters, digits, '_' and '-' in a home's name", h.name))
	}
	st.inputs.accept(inputFiles(st.cfg.Path, r), hash)
	d := digestOf(r)
	id := changeRound(st.digest, d, r)
	st.r, st.digest, s.h = r, d, h
	if st.live == nil && !runSchedule(r).Equal(st.schedule.run) {
		st.schedule.set(runSchedule(r), time.Now())
		st.logSchedule(s.h.log)
	}
	// The control client subscribes anew at its next connection, after
	// the round that follows every reload.
	s.c.SetHomes(mqtt.AgentNames(r.Problem()), h.neighbours)
	s.h.log.Info("input files loaded", "round", id, "variables", len(r.Problem().Variables))
	return id, true
}

// digest hashes what a round depends on: the neighbourhood's model (the
// homes apart) with the solver choice, and each home's model. It is taken
// of the loaded model, not of the files, so that every home whose files
// say the same thing — whatever their paths, comments or broker
// credentials — derives the same round from a change.
type digest struct {
	all, rest string
	homes     map[string]string
}

func digestOf(r *homesolve.Run) digest {
	sum := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			// The model holds finite numbers only; should that ever
			// change, the text form still tells versions apart.
			b = fmt.Appendf(nil, "%+v", v)
		}
		h := sha256.Sum256(b)
		return hex.EncodeToString(h[:])
	}
	n := *r.Model()
	c := r.Choice()
	homes := n.Homes
	n.Homes = nil
	d := digest{homes: map[string]string{}}
	d.rest = sum(struct {
		Neighbourhood        any
		Homes                []string
		Global, Local, Table string
		Seed                 uint64
		Params               map[string]float64
	}{n, homeNames(homes), c.Global, c.Local, c.Table, c.Seed, c.Params})
	all := sha256.New()
	all.Write([]byte(d.rest))
	for i := range homes {
		d.homes[homes[i].Name] = sum(homes[i])
		all.Write([]byte(d.homes[homes[i].Name]))
	}
	d.all = hex.EncodeToString(all.Sum(nil))
	return d
}

// changeRound names the round a change from old to new inputs calls for:
// <home>-<hash8>, after the first home whose model changed, or after the
// neighbourhood when its own sections (or the set of homes, or the
// solver) changed; hash8 is new's. Homes that had the same inputs before
// and after derive the same name, so when every home notices a change of
// shared files they meet in one round. It is "" when nothing a round
// depends on changed.
func changeRound(old, new digest, r *homesolve.Run) string {
	if old.all == new.all {
		return ""
	}
	who := r.Model().Name
	if old.rest == new.rest {
		for _, h := range r.Model().Homes {
			if old.homes[h.Name] != new.homes[h.Name] {
				who = h.Name
				break
			}
		}
	}
	id := who + "-" + new.all[:8]
	if mqtt.CheckRoundID(id) != nil {
		id = "inputs-" + new.all[:8]
	}
	return id
}

func homeNames(homes []devices.Home) []string {
	out := make([]string, len(homes))
	for i := range homes {
		out[i] = homes[i].Name
	}
	return out
}

// scheduled runs the scheduled round due now and arms the next. A timer
// runs on the monotonic clock: when the wall clock has been set back
// meanwhile, the round is not due yet and the timer is armed again.
func (s *server) scheduled(ctx context.Context) error {
	sc := &s.home.schedule
	at := sc.next
	if wait := time.Until(at); wait > 0 {
		sc.timer.Reset(wait)
		return nil
	}
	sc.set(sc.run, at)
	// Queued like a command, so that every home takes it in the same
	// order as the commands around it.
	s.c.Enqueue(mqtt.Request{ID: roundIDAt(at, sc.run), At: at, Created: at, From: "schedule"})
	return nil
}

// publishWait bounds the wait for the broker to take a publication, so
// that a broker gone quiet does not hold up the rounds for ever.
const publishWait = 30 * time.Second

// publishPlan publishes the home's plan after round req.
func (s *server) publishPlan(ctx context.Context, req mqtt.Request, rep RoundResult) {
	pubs, start, err := s.home.publications(s.h, req.At, rep)
	if err != nil {
		s.h.log.Warn("plan not published", "round", req.ID, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, publishWait)
	defer cancel()
	if err := s.c.Publish(ctx, publications(pubs)); err != nil {
		s.h.log.Warn("plan not published", "round", req.ID, "err", err)
		return
	}
	s.h.log.Info("plan published", "round", req.ID, "messages", len(pubs), "start", start.Format(time.RFC3339))
	var states []report.Publication
	if s.home.publish.HomeAssistant {
		for _, p := range pubs {
			if strings.HasPrefix(p.Topic, s.c.Prefix()+"/home/") {
				states = append(states, p)
			}
		}
	}
	hz := s.home.r.Model().Horizon
	s.home.plan.set(states, start, boundaries(hz), time.Now())
	if s.home.live != nil {
		s.livePlan(ctx, req, rep)
	}
}

// republish publishes the plan's states again at a slot boundary, for Home
// Assistant's templates, and arms the next boundary.
func (s *server) republish(ctx context.Context) {
	p := &s.home.plan
	ctx, cancel := context.WithTimeout(ctx, publishWait)
	defer cancel()
	if err := s.c.Publish(ctx, publications(p.states)); err != nil {
		s.h.log.Warn("plan not published again", "err", err)
	}
	p.set(p.states, p.start, p.bounds, time.Now())
}

// publications returns the home's plan after a round that planned from
// at (the command's "at", the scheduled time, or the round's start), and
// the wall-clock start of slot 0 it gives the plan.
func (st *homeState) publications(h *Agent, at time.Time, rep RoundResult) ([]report.Publication, time.Time, error) {
	if !rep.Feasible || rep.Values == nil {
		return nil, time.Time{}, errors.New("the round found no schedule that keeps every rule")
	}
	start := slotZero(at, st.r.Model().Horizon.Start)
	var (
		meta  report.PlanMeta
		avail string
	)
	if st.live != nil {
		if m, s, ok := st.live.planTimes(rep.Round); ok {
			meta, start = m, s
		}
		avail = live.AvailabilityTopic(st.live.prefix, h.name)
	}
	pubs, err := st.r.HomePublications(rep.Values, h.home, report.PublishOptions{
		Prefix: h.cfg.Prefix, Start: start, HomeAssistant: st.publish.HomeAssistant, DiscoveryPrefix: st.publish.DiscoveryPrefix, Meta: meta,
		Availability: avail,
	})
	return pubs, start, err
}

// slotZero is the wall-clock start of slot 0 of a plan made at at: the
// next time the clock shows the horizon's start (minutes after midnight)
// at or after at, in the local time zone.
func slotZero(at time.Time, startMin int) time.Time {
	at = at.In(time.Local)
	y, m, d := at.Date()
	t := time.Date(y, m, d, startMin/60, startMin%60, 0, 0, time.Local)
	if t.Before(at) {
		t = time.Date(y, m, d+1, startMin/60, startMin%60, 0, 0, time.Local)
	}
	return t
}

// schedule is the timer of a home's [run].
type schedule struct {
	run   config.Run
	next  time.Time
	timer *time.Timer
}

func (sc *schedule) on() bool { return sc.timer != nil }

// c is the timer's channel, nil (never ready) without a schedule.
func (sc *schedule) c() <-chan time.Time {
	if sc.timer == nil {
		return nil
	}
	return sc.timer.C
}

func (sc *schedule) stop() {
	if sc.timer != nil {
		sc.timer.Stop()
		sc.timer = nil
	}
}

// set arms the timer for the first round of run strictly after after.
func (sc *schedule) set(run config.Run, after time.Time) {
	sc.stop()
	sc.run = run
	next, ok := nextRound(run, after)
	if !ok {
		return
	}
	sc.next = next
	sc.timer = time.NewTimer(time.Until(next))
}

// nextRound returns the first round of run strictly after t: the next of
// its daily times, or the next multiple of its period after local
// midnight, on the wall clock of t's time zone.
func nextRound(run config.Run, t time.Time) (time.Time, bool) {
	var best time.Time
	consider := func(c time.Time) {
		if c.After(t) && (best.IsZero() || c.Before(best)) {
			best = c
		}
	}
	y, m, d := t.Date()
	for _, at := range run.At {
		// Today's and tomorrow's (and, past a clock change, the day
		// after): the earliest after t is the next.
		for day := range 3 {
			consider(time.Date(y, m, d+day, at/60, at%60, 0, 0, t.Location()))
		}
	}
	if p := int(run.Every / time.Second); p > 0 {
		secs := t.Hour()*3600 + t.Minute()*60 + t.Second()
		// A clock change can put the wall-clock time of step k before t;
		// a few more steps get past it.
		for k := secs/p + 1; k <= secs/p+1+3600/p+1; k++ {
			c := time.Date(y, m, d, 0, 0, k*p, 0, t.Location())
			if c.After(t) {
				consider(c)
				break
			}
		}
	}
	return best, !best.IsZero()
}

// roundIDAt is the id of the scheduled round at t: its local date and
// time, to the minute (2026-11-22T1630), or to the second when the period
// is not whole minutes (2026-11-22T163005), the same for every round of
// the schedule so that a time both listed and periodic is one round.
func roundIDAt(t time.Time, run config.Run) string {
	if run.Every%time.Minute != 0 {
		return t.Format("2006-01-02T150405")
	}
	return t.Format("2006-01-02T1504")
}

// planTimer republishes a plan's states at every slot boundary while the
// plan lasts (Home Assistant discovery only: states nil otherwise).
type planTimer struct {
	states []report.Publication
	start  time.Time
	// bounds are the plan's slot boundaries after start (boundaries).
	bounds []time.Duration
	timer  *time.Timer
}

func (p *planTimer) c() <-chan time.Time {
	if p.timer == nil {
		return nil
	}
	return p.timer.C
}

func (p *planTimer) stop() {
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
}

// set arms the timer for the first slot boundary of the plan after now.
func (p *planTimer) set(states []report.Publication, start time.Time, bounds []time.Duration, now time.Time) {
	p.stop()
	p.states, p.start, p.bounds = states, start, bounds
	if len(states) == 0 {
		return
	}
	if next, ok := nextBoundary(start, bounds, now); ok {
		p.timer = time.NewTimer(next.Sub(now))
	}
}

// boundaries returns the slot boundaries of horizon hz as offsets from
// slot 0's start: the start of slots 0 to Slots−1 and the end of the
// last, each slot its own length ([horizon] segments).
func boundaries(hz devices.Horizon) []time.Duration {
	out := make([]time.Duration, hz.Slots+1)
	for t := range hz.Slots {
		out[t+1] = out[t] + time.Duration(hz.Minutes(t))*time.Minute
	}
	return out
}

// nextBoundary returns the first of the plan's slot boundaries (offsets
// from start, boundaries) after now.
func nextBoundary(start time.Time, bounds []time.Duration, now time.Time) (time.Time, bool) {
	for _, b := range bounds {
		if at := start.Add(b); at.After(now) {
			return at, true
		}
	}
	return time.Time{}, false
}

// inputs watches the files a home was loaded from: a look compares their
// modification times and sizes with the last look's, and only when one
// differs reads them all and hashes their contents, so that saving a file
// unchanged starts nothing.
type inputs struct {
	files  []string
	stamps []stamp
	// current is the hash at the last look that read the files; loaded
	// the hash of the inputs in use; bad the hash of the last inputs that
	// did not load, not reported again; pending a change seen once by
	// poll, which waits for it to hold still.
	current, loaded, bad, pending string
}

type stamp struct {
	mod  time.Time
	size int64
	err  string
}

func newInputs(files []string) *inputs {
	in := &inputs{files: files}
	in.loaded = in.snapshot()
	return in
}

// inputFiles are the files a load read: the neighbourhood and its home
// files, or the SHDS file.
func inputFiles(path string, r *homesolve.Run) []string {
	files := []string{path}
	if c := r.Config(); c != nil {
		for _, f := range c.HomeFiles {
			if !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
	}
	return files
}

func stampOf(path string) stamp {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{err: err.Error()}
	}
	return stamp{mod: fi.ModTime(), size: fi.Size()}
}

// snapshot records the files' stamps and returns the hash of their
// contents (a file that cannot be read hashes as its error).
func (in *inputs) snapshot() string {
	in.stamps = make([]stamp, len(in.files))
	h := sha256.New()
	var n [8]byte
	for i, f := range in.files {
		in.stamps[i] = stampOf(f)
		b, err := os.ReadFile(f)
		if err != nil {
			b = []byte("\x00unreadable: " + err.Error())
		}
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	in.current = hex.EncodeToString(h.Sum(nil))
	return in.current
}

// look returns the hash of the files now, and whether they differ from
// the inputs in use and from the last ones that did not load.
func (in *inputs) look() (string, bool) {
	same := true
	for i, f := range in.files {
		if stampOf(f) != in.stamps[i] {
			same = false
			break
		}
	}
	hash := in.current
	if !same {
		hash = in.snapshot()
	}
	return hash, hash != in.loaded && hash != in.bad
}

// settled reports whether the change to hash was seen at the previous
// poll too: files are written a piece at a time, and a look in between
// would load half a file (and might even find it valid).
func (in *inputs) settled(hash string) bool {
	if in.pending == hash {
		in.pending = ""
		return true
	}
	in.pending = hash
	return false
}

// accept makes the inputs hashed as hash, read from files, the ones in
// use. When the load names other files (a home added), their hash is
// taken anew.
func (in *inputs) accept(files []string, hash string) {
	in.bad, in.pending = "", ""
	if !slices.Equal(files, in.files) {
		in.files = files
		hash = in.snapshot()
	}
	in.loaded = hash
}

// reject remembers inputs that did not load, so that they are reported
// once.
func (in *inputs) reject(hash string) { in.bad, in.pending = hash, "" }
