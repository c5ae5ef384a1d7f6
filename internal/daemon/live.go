package daemon

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/internal/energyround"
	"github.com/hearth-dcop/hearth/internal/live"
	"github.com/hearth-dcop/hearth/mqtt"
)

// This file is a home with [live]: it reads its devices' state and the
// published series (internal/live), plans every round on a rolling
// horizon whose slot 0 holds the round's instant, runs a round for every
// slot boundary and soon after its inputs move, and publishes the
// current slot's command for every device after every round and at
// every slot boundary.
//
// A round's instant is its request's "at": the slot boundary of a slot
// round (the same for every home, from the clock), or the start of the
// slot of a round a home asks for. Rounds a home asks for run on a grid
// of a third of a slot (the round id is the grid time), so that homes
// whose inputs move at about the same time ask for the same round.
//
// The round of a boundary starts planAhead before it (on the clock, at
// most a quarter of a slot), from the inputs then, so that its plan is
// there when the slot starts: the commands of a boundary are published
// at the boundary by a goroutine of their own (commander), whatever the
// rounds are doing. A round that started at the boundary would reach the
// devices only when it ended, a few simulated minutes into the slot at
// 720 times the wall clock's speed, and a programme that needs the whole
// slot would come out short.
//
// No round starts while a home of the street is offline (its
// availability topic): it would wait for that home until its time-out.
// The round comes when every home is online: the change that completes
// the set asks for one in every home at once, so that homes started far
// apart meet in one round instead of each starting its own.

// liveHome is a live home's part of homeState.
type liveHome struct {
	in      *live.Inputs
	client  *live.Client
	clock   *live.Clock
	grace   time.Duration
	prefix  string
	targets []report.Target
	// plan is the last round's plan; hz the last round's horizon.
	plan *live.Plan
	hz   live.Horizon
	// next is the next slot boundary whose round has not run; ask the
	// grid time of a round this home will ask for (zero: none); timer
	// fires at the earlier of next less lead and ask.
	next, ask time.Time
	lead      time.Duration
	why       string
	timer     *time.Timer
	// cmd publishes the commands at every slot boundary.
	cmd *commander
	// offline is the last set of offline homes logged, so that a
	// round skipped for them is logged once.
	offline string
	// planned is when (the home's clock) the last round that planned
	// began.
	planned time.Time
	// began is when the round in progress began.
	began time.Time
	// phases holds a mixed street's final loads (mixed.go), nil in a
	// street of compiled homes only.
	phases *energyround.Phases
}

// newLiveHome returns the live part of a home, or nil without [live].
func (st *homeState) newLiveHome() *liveHome {
	cfg := st.r.Config()
	if cfg == nil || !cfg.Live.On {
		return nil
	}
	clock := st.cfg.Clock
	if clock == nil {
		clock = live.WallClock()
	}
	prefix := st.cfg.MQTT.Prefix
	if prefix == "" {
		prefix = mqtt.DefaultPrefix
	}
	in := live.NewInputs(cfg, prefix, st.cfg.Home, clock, st.log)
	lh := &liveHome{in: in, client: live.NewClient(st.cfg.MQTT, prefix, st.cfg.Home, in, st.log), clock: clock, grace: cfg.Live.CommandGrace,
		prefix: prefix}
	for hi, h := range cfg.Neighbourhood.Homes {
		if h.Name == st.cfg.Home {
			lh.targets = live.Targets(cfg, prefix, hi)
		}
	}
	handleTargets(lh.client, lh.targets, st.log)
	en, compiled := EnergyHomes(cfg)
	lh.phases = newPhases(lh.client, prefix, st.cfg.MQTT.Keys, en, compiled, st.log)
	return lh
}

func (lh *liveHome) slot() time.Duration { return lh.hz.Slot }

// c is the timer's channel.
func (lh *liveHome) c() <-chan time.Time {
	if lh == nil || lh.timer == nil {
		return nil
	}
	return lh.timer.C
}

func (lh *liveHome) changes() <-chan live.Change {
	if lh == nil {
		return nil
	}
	return lh.in.Changes()
}

// arm sets the timer for the earlier of the next boundary and the round
// to ask for.
func (lh *liveHome) arm() {
	if lh.timer != nil {
		lh.timer.Stop()
	}
	at := lh.next.Add(-lh.lead)
	if !lh.ask.IsZero() && lh.ask.Before(at) {
		at = lh.ask
	}
	lh.timer = time.NewTimer(max(lh.clock.Wall(at.Sub(lh.clock.Now())), 0))
}

// liveStart connects the live client, starts the commander, and arms the
// round of the next boundary. The first round comes when every home is
// online (liveChange), at once when they all are: a home that starts (or
// restarts) mid-slot plans from the live state then rather than at the
// next boundary.
func (s *server) liveStart(ctx context.Context) error {
	lh := s.home.live
	if err := lh.client.Connect(ctx); err != nil {
		return err
	}
	publishTargets(ctx, lh.client, s.home.publish, s.h.name, lh.targets, live.AvailabilityTopic(lh.prefix, s.h.name), s.h.log)
	hz := s.home.r.Model().Horizon
	lh.hz.Slot = time.Duration(hz.SlotMinutes) * time.Minute
	lh.lead = planAhead(lh.slot(), lh.clock)
	now := lh.clock.Now()
	lh.next = live.SlotStart(now, lh.slot()).Add(lh.slot())
	if !now.Before(lh.next.Add(-lh.lead)) {
		// The next boundary's round is due already: the round every
		// home asks for when this one comes online stands for it.
		lh.next = lh.next.Add(lh.slot())
	}
	lh.arm()
	lh.cmd = newCommander(lh, s.c.Prefix(), s.h.name, s.h.log)
	go lh.cmd.run(ctx)
	s.h.log.Info("live: planning on a rolling horizon", "now", now.Format(time.RFC3339), "speed", lh.clock.Speed(),
		"next_slot", lh.next.Format(time.RFC3339), "plan_ahead", lh.lead.String(), "inputs", len(lh.in.Topics()))
	return nil
}

// planAheadWall is how long on the wall clock before its boundary a slot
// round starts, at most a quarter of a slot of the home's clock: enough
// for a round of a street of a few homes (loading the files, compiling,
// the protocol) on a loaded machine, so that its plan is there when the
// slot starts. Under -race on two busy cores a round of the example's
// four homes took 3 to 4 s.
const planAheadWall = 5 * time.Second

// planAhead is how long on the home's clock before its boundary a slot
// round starts: planAheadWall at the clock's speed, at most a quarter of
// a slot (the state a round plans from is that old at the boundary).
// Every home of a street derives the same from the same files and
// --speed.
func planAhead(slot time.Duration, c *live.Clock) time.Duration {
	return min(time.Duration(float64(planAheadWall)*c.Speed()), slot/4)
}

// gridAfter is the first time on the third-of-a-slot grid after t.
func (lh *liveHome) gridAfter(t time.Time) time.Time {
	step := lh.slot() / 3
	if step <= 0 {
		step = time.Minute
	}
	g := live.SlotStart(t, step).Add(step)
	return g.Truncate(time.Second)
}

// liveTimer handles the live timer: planAhead before a slot boundary the
// boundary's round; at a grid time the round this home asks for. Neither
// runs while a home is offline.
func (s *server) liveTimer(ctx context.Context) error {
	lh := s.home.live
	now := lh.clock.Now()
	if !now.Before(lh.next.Add(-lh.lead)) {
		// The latest boundary due: a home that was busy past several
		// runs the round of the slot it is in (or about to be), not
		// every one it missed.
		at := live.SlotStart(now.Add(lh.lead), lh.slot())
		if at.Before(lh.next) {
			at = lh.next
		}
		lh.next = at.Add(lh.slot())
		if !lh.ask.IsZero() && !lh.ask.After(at) {
			lh.ask = time.Time{}
		}
		lh.arm()
		if !s.allOnline(liveID(at)) {
			return nil
		}
		return s.runRound(ctx, mqtt.Request{ID: liveID(at), At: at, From: "slot"})
	}
	if !lh.ask.IsZero() && !now.Before(lh.ask) {
		at, why := lh.ask, lh.why
		lh.ask = time.Time{}
		lh.arm()
		if !s.allOnline(askID(at)) {
			return nil
		}
		return s.askAt(ctx, askID(at), live.SlotStart(at, lh.slot()), why)
	}
	lh.arm()
	return nil
}

// allOnline reports whether every home is online, and logs (once per set
// of homes) the round skipped when not.
func (s *server) allOnline(round string) bool {
	lh := s.home.live
	off := lh.in.Offline()
	if len(off) == 0 {
		lh.offline = ""
		return true
	}
	if set := strings.Join(off, ","); set != lh.offline {
		lh.offline = set
		s.h.log.Warn("round skipped: waiting for homes to come online", "round", round, "offline", off)
	}
	return false
}

// liveChange schedules a round on the grid after a change of the inputs,
// or after every home came online (unless one is pending, or the next
// slot's comes first).
func (s *server) liveChange(c live.Change) {
	lh := s.home.live
	if c.Online {
		if !lh.planned.Before(c.At) {
			// A round of every home has planned since.
			return
		}
		s.h.log.Info("every home online; round asked for")
	} else {
		s.h.log.Info("live inputs moved; round asked for", "why", c.Why)
	}
	if !lh.ask.IsZero() {
		return
	}
	// The grid time after the change was seen, not after now: every
	// home sees a message at about the same time, whereas a round in
	// progress (or, at the start, the control client's first connection)
	// may hold up this loop; a grid time past runs at once. A change
	// dated long ago (a reading's own time) counts from now.
	seen, now := c.At, lh.clock.Now()
	if seen.Before(now.Add(-lh.slot()/3)) || seen.After(now) {
		seen = now
	}
	g := lh.gridAfter(seen)
	if !g.Before(lh.next.Add(-lh.lead)) {
		return
	}
	lh.ask, lh.why = g, c.Why
	lh.arm()
}

// OnceWait bounds how long `hearth run --once` with [live] waits for the
// retained state of every home's devices before it plans: what has not
// come by then is planned from the files' values, each logged once (as a
// long-running home does before its devices first report).
const OnceWait = 3 * time.Second

// liveOnce gathers the live inputs for round (`hearth run --once`): it
// connects the live client, waits up to OnceWait for the retained device
// state, and returns the agent of the neighbourhood on the rolling
// horizon from the slot that holds now (or the time the round's id
// names, so that every home of the round plans from the same slot).
// Inputs that do not compile leave the files' neighbourhood, and agent,
// in place, logged.
func (hm *Home) liveOnce(ctx context.Context, round string) (*Agent, error) {
	st, lh := hm.st, hm.st.live
	if err := lh.client.Connect(ctx); err != nil {
		return nil, err
	}
	lh.hz.Slot = time.Duration(st.r.Model().Horizon.SlotMinutes) * time.Minute
	wait := time.NewTimer(OnceWait)
	defer wait.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
wait:
	for lh.in.Unread() > 0 {
		select {
		case <-ctx.Done():
			lh.client.Close()
			return nil, ctx.Err()
		case <-wait.C:
			hm.h.log.Warn("live state incomplete; planning the rest from the files", "waited", OnceWait.String(), "unread", lh.in.Unread())
			break wait
		case <-tick.C:
		}
	}
	at := lh.clock.Now()
	if t, ok := liveTime(round); ok {
		at = t
	}
	r, hz, notes, err := lh.in.Load(st.cfg.Path, st.cfg.Overrides, at)
	for _, n := range notes {
		hm.h.log.Warn(n.Msg, n.Args...)
	}
	var h *Agent
	if err == nil {
		h, err = st.agent(ctx, r)
	}
	if err != nil {
		hm.h.log.Error("live inputs do not compile; planning from the files", "round", round, "err", err)
		return hm.h, nil
	}
	st.r, lh.hz = r, hz
	hm.h.log.Info("live round inputs", "round", round, "slot0", hz.Start.Format(time.RFC3339), "model", digestOf(r).all[:12])
	return h, nil
}

// liveCommands are the commands of the slot that holds now in the plan of
// round rep (`hearth run --once`), none when the round planned from the
// files.
func (st *homeState) liveCommands(h *Agent, round string, rep RoundResult) []report.Publication {
	lh := st.live
	if lh.hz.Start.IsZero() {
		return nil
	}
	hp, err := st.r.HomePlan(rep.Values, h.home)
	if err != nil {
		h.log.Warn("no commands", "round", round, "err", err)
		return nil
	}
	now := lh.clock.Now()
	p := live.NewPlan(round, now, lh.hz, st.r.Model(), h.home, hp)
	pubs, err := p.Commands(lh.prefix, h.name, now, lh.grace)
	if err != nil {
		h.log.Warn("no commands", "round", round, "err", err)
	}
	return pubs
}

// liveRound prepares round req of a live home: its instant (the clock's
// now when the request has none), and the neighbourhood on the rolling
// horizon with every home's live inputs, compiled, with the home's agent
// for it. When that fails the round runs on the last one, since the
// other homes wait for this one.
func (s *server) liveRound(ctx context.Context, req *mqtt.Request) {
	st, lh := s.home, s.home.live
	if req.At.IsZero() {
		// A round named by a time (a controller's "2026-11-26T0715")
		// plans from it in every home; another from the clock.
		req.At = lh.clock.Now()
		if at, ok := liveTime(req.ID); ok {
			req.At = at
		}
	}
	r, hz, notes, err := lh.in.Load(st.cfg.Path, st.cfg.Overrides, req.At)
	for _, n := range notes {
		s.h.log.Warn(n.Msg, n.Args...)
	}
	if err != nil {
		s.h.log.Error("live inputs do not compile; the round runs on the last plan's", "round", req.ID, "err", err)
		return
	}
	h, err := st.agent(ctx, r)
	if err != nil {
		s.h.log.Error("live inputs do not compile; the round runs on the last plan's", "round", req.ID, "err", err)
		return
	}
	st.r, s.h, lh.hz = r, h, hz
	lh.began = lh.clock.Now()
	// Every home of a round must compile the same neighbourhood: the
	// digest in every home's log tells a round whose inputs differed.
	s.h.log.Info("live round inputs", "round", req.ID, "slot0", hz.Start.Format(time.RFC3339), "model", digestOf(r).all[:12])
}

// liveStale reports whether queued round req of a live home plans from
// a slot that has passed (a round queued behind a slow one, a
// controller's round named by an earlier time), and then drops it: its
// plan would give no commands (livePlan), and running it would hold up
// the rounds behind it. It is logged once and marked run, so that the
// same round queued again is not run either. Every home drops it alike:
// they read the same queue on the same clock. A home that has not
// planned yet drops nothing (no slot length is known before a round).
func (s *server) liveStale(req mqtt.Request) bool {
	if s.home == nil || s.home.live == nil || s.done.has(req.ID) {
		return false
	}
	lh := s.home.live
	at := req.At
	if at.IsZero() {
		t, ok := liveTime(req.ID)
		if !ok {
			return false // a round named by no time plans from now
		}
		at = t
	}
	slot := lh.slot()
	if slot <= 0 {
		return false
	}
	now := lh.clock.Now()
	if !live.SlotStart(at, slot).Before(live.SlotStart(now, slot)) {
		return false
	}
	s.done.add(req.ID)
	s.h.log.Warn("round's first slot has passed; dropped unrun", "round", req.ID, "from", req.From,
		"slot0", live.SlotStart(at, slot).Format(time.RFC3339), "now", now.Format(time.RFC3339))
	return true
}

// livePlan keeps a round's plan, tells the inputs what it expects of the
// stored energies, and publishes the current slot's commands.
func (s *server) livePlan(ctx context.Context, req mqtt.Request, rep RoundResult) {
	st, lh := s.home, s.home.live
	if lh.hz.Start.IsZero() {
		return
	}
	hp, err := st.r.HomePlan(rep.Values, s.h.home)
	if err != nil {
		s.h.log.Warn("no commands", "round", req.ID, "err", err)
		return
	}
	now := lh.clock.Now()
	p := live.NewPlan(req.ID, now, lh.hz, st.r.Model(), s.h.home, hp)
	lh.planned = lh.began
	if cur := live.SlotStart(now, lh.slot()); p.Horizon.Start.Before(cur) && lh.plan != nil {
		// A round that ended after its slot 0 (a request queued behind
		// others, a slow round at a fast clock) planned slots that have
		// passed from the state after them: its later slots are shifted
		// and its commands would be wrong. The last plan stands.
		s.h.log.Warn("round ended after its first slot; its plan gives no commands", "round", req.ID,
			"slot0", p.Horizon.Start.Format(time.RFC3339), "now", now.Format(time.RFC3339))
		return
	}
	lh.plan = &p
	for d, vals := range p.Stored {
		lh.in.Expect(d, p.Horizon.Start, p.Horizon.Slot, vals, lh.began)
	}
	// A plan made ahead of its slot has no command for now: the
	// commander publishes its first at the boundary.
	lh.cmd.set(ctx, &p)
}

// commander publishes a live home's commands: the current slot's of the
// newest plan when a round ends, and the next slot's at every boundary,
// on a goroutine of its own so that a round in progress does not hold
// them up. It never publishes a slot before one it has published, so a
// round that ends as a boundary passes cannot put the old slot's
// command back.
type commander struct {
	clock  *live.Clock
	slot   time.Duration
	grace  time.Duration
	client *live.Client
	prefix string
	home   string
	log    *slog.Logger

	mu   sync.Mutex
	plan *live.Plan
	// last is the start of the last slot published.
	last time.Time
}

func newCommander(lh *liveHome, prefix, home string, log *slog.Logger) *commander {
	return &commander{clock: lh.clock, slot: lh.slot(), grace: lh.grace, client: lh.client, prefix: prefix, home: home, log: log}
}

// set makes p the plan and publishes its command for now (none when p
// starts later).
func (c *commander) set(ctx context.Context, p *live.Plan) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.plan = p
	c.publish(ctx, c.clock.Now())
}

// run publishes at every slot boundary until ctx ends.
func (c *commander) run(ctx context.Context) {
	for {
		now := c.clock.Now()
		next := live.SlotStart(now, c.slot).Add(c.slot)
		t := time.NewTimer(max(c.clock.Wall(next.Sub(now)), 0))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		// The timer may fire a hair before the boundary on the home's
		// clock (durations scaled and rounded): wait it out, so that
		// the next loop's boundary is the one after.
		for c.clock.Now().Before(next) {
			time.Sleep(time.Millisecond)
		}
		c.mu.Lock()
		c.publish(ctx, next)
		c.mu.Unlock()
	}
}

// publish publishes the plan's commands of the slot that holds at, or
// of the last slot published when that is later; c.mu is held.
func (c *commander) publish(ctx context.Context, at time.Time) {
	if c.plan == nil {
		return
	}
	if at.Before(c.last) {
		at = c.last
	}
	pubs, err := c.plan.Commands(c.prefix, c.home, at, c.grace)
	if err != nil || len(pubs) == 0 {
		if err != nil {
			c.log.Warn("commands not published", "err", err)
		}
		return
	}
	ctx, cancel := context.WithTimeout(ctx, publishWait)
	defer cancel()
	if err := c.client.Publish(ctx, pubs); err != nil {
		c.log.Warn("commands not published", "err", err)
		return
	}
	c.last = live.SlotStart(at, c.slot)
	c.log.Info("commands published", "round", c.plan.Round, "slot_start", c.last.Format(time.RFC3339), "devices", len(pubs))
}

// roundTimeout bounds a live round where neither [solver] timeout nor
// --timeout does: half a slot of the home's clock on the wall clock (a
// round that outlasts it would miss the next slot's), at least
// minLiveTimeout.
func (lh *liveHome) roundTimeout(r *homesolve.Run) time.Duration {
	slot := time.Duration(r.Model().Horizon.SlotMinutes) * time.Minute
	return max(lh.clock.Wall(slot/2), minLiveTimeout)
}

// minLiveTimeout is the least time a live round is given, however fast
// the clock runs.
const minLiveTimeout = 15 * time.Second

// askID is the id of the round asked for at grid time at: its date and
// time to the second, apart from the slot rounds' ids (a grid time may be
// a boundary whose round ran already).
func askID(at time.Time) string { return at.Format("2006-01-02T150405") }

// liveID is the id of the slot round of boundary at: its date and time
// to the minute, or to the second off whole minutes.
func liveID(at time.Time) string {
	if at.Second() != 0 {
		return at.Format("2006-01-02T150405")
	}
	return at.Format("2006-01-02T1504")
}

// liveTime reads a round id that names a local time (liveID's and
// askID's forms).
func liveTime(id string) (time.Time, bool) {
	for _, layout := range []string{"2006-01-02T1504", "2006-01-02T150405"} {
		if t, err := time.ParseInLocation(layout, id, time.Local); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// planTimes are a live plan's fields for the plan payloads and the start
// of its slot 0; ok is false before the first live round compiled.
func (lh *liveHome) planTimes(round string) (report.PlanMeta, time.Time, bool) {
	if lh.hz.Start.IsZero() {
		return report.PlanMeta{}, time.Time{}, false
	}
	created := lh.clock.Now()
	end := lh.hz.End()
	return report.PlanMeta{Round: round, Created: created.Format(time.RFC3339), ValidUntil: end.Format(time.RFC3339)}, lh.hz.Start, true
}
