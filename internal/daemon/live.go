package daemon

import (
	"context"
	"time"

	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/internal/live"
	"github.com/hearth-dcop/hearth/mqtt"
)

// This file is a home with [live]: it reads its devices' state and the
// published series (internal/live), plans every round on a rolling
// horizon whose slot 0 holds the round's instant, runs a round at every
// slot boundary and soon after its inputs move, and publishes the
// current slot's command for every device after every round and at
// every slot boundary.
//
// A round's instant is its request's "at": the slot boundary of a slot
// round (the same for every home, from the clock), or the start of the
// slot of a round a home asks for. Rounds a home asks for run on a grid
// of a third of a slot (the round id is the grid time), so that homes
// whose inputs move at about the same time ask for the same round.

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
	// next is the next slot boundary; ask the grid time of a round this
	// home will ask for (zero: none); timer fires at the earlier.
	next, ask time.Time
	why       string
	timer     *time.Timer
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
	for _, t := range lh.targets {
		lh.client.Handle(t.CommandTopic, func(b []byte) {
			v, err := live.CheckTarget(t, b)
			if err != nil {
				st.log.Warn("target refused", "topic", t.CommandTopic, "err", err)
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), publishWait)
			defer cancel()
			// Retained on the state topic, where every home reads it.
			if err := lh.client.Publish(ctx, []report.Publication{{Topic: t.StateTopic, Payload: []byte(v), Retained: true}}); err != nil {
				st.log.Warn("target not published", "topic", t.StateTopic, "err", err)
				return
			}
			st.log.Info("target set", "device", t.Device, "target", t.Name, "value", v)
		})
	}
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
	at := lh.next
	if !lh.ask.IsZero() && lh.ask.Before(at) {
		at = lh.ask
	}
	lh.timer = time.NewTimer(max(lh.clock.Wall(at.Sub(lh.clock.Now())), 0))
}

// start connects the live client and arms the first boundary and a
// first round a third of a slot ahead at most: a home that starts (or
// restarts) mid-slot plans from the live state at once rather than at
// the next boundary.
func (s *server) liveStart(ctx context.Context) error {
	lh := s.home.live
	if err := lh.client.Connect(ctx); err != nil {
		return err
	}
	if p := s.home.publish; p.HomeAssistant {
		pubs, err := report.TargetPublications(p.DiscoveryPrefix, s.h.name, lh.targets, live.AvailabilityTopic(lh.prefix, s.h.name))
		if err == nil {
			pctx, cancel := context.WithTimeout(ctx, publishWait)
			err = lh.client.Publish(pctx, pubs)
			cancel()
		}
		if err != nil {
			s.h.log.Warn("Home Assistant targets not published", "err", err)
		}
	}
	hz := s.home.r.Model().Horizon
	lh.hz.Slot = time.Duration(hz.SlotMinutes) * time.Minute
	now := lh.clock.Now()
	lh.next = live.SlotStart(now, lh.slot()).Add(lh.slot())
	lh.ask, lh.why = lh.gridAfter(now), "start"
	lh.arm()
	s.h.log.Info("live: planning on a rolling horizon", "now", now.Format(time.RFC3339), "speed", lh.clock.Speed(),
		"next_round", lh.ask.Format(time.RFC3339), "next_slot", lh.next.Format(time.RFC3339), "inputs", len(lh.in.Topics()))
	return nil
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

// liveTimer handles the live timer: at a slot boundary the commands of
// the new slot and the boundary's round; at a grid time the round this
// home asks for.
func (s *server) liveTimer(ctx context.Context) error {
	lh := s.home.live
	now := lh.clock.Now()
	if !now.Before(lh.next) {
		// The latest boundary: a home that was busy past several runs
		// the round of the slot it is in, not every one it missed.
		at := live.SlotStart(now, lh.slot())
		if at.Before(lh.next) {
			at = lh.next
		}
		lh.next = at.Add(lh.slot())
		if !lh.ask.IsZero() && !lh.ask.After(at) {
			lh.ask = time.Time{}
		}
		lh.arm()
		s.publishCommands(ctx, at)
		return s.runRound(ctx, mqtt.Request{ID: liveID(at), At: at, From: "slot"})
	}
	if !lh.ask.IsZero() && !now.Before(lh.ask) {
		at, why := lh.ask, lh.why
		lh.ask = time.Time{}
		lh.arm()
		return s.askAt(ctx, liveID(at), live.SlotStart(at, lh.slot()), why)
	}
	lh.arm()
	return nil
}

// liveChange schedules a round on the grid after a change of the inputs
// (unless one is pending, or the next slot's comes first).
func (s *server) liveChange(c live.Change) {
	lh := s.home.live
	s.h.log.Info("live inputs moved; round asked for", "why", c.Why)
	if !lh.ask.IsZero() {
		return
	}
	g := lh.gridAfter(lh.clock.Now())
	if !g.Before(lh.next) {
		return
	}
	lh.ask, lh.why = g, c.Why
	lh.arm()
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
	// Every home of a round must compile the same neighbourhood: the
	// digest in every home's log tells a round whose inputs differed.
	s.h.log.Info("live round inputs", "round", req.ID, "slot0", hz.Start.Format(time.RFC3339), "model", digestOf(r).all[:12])
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
	p := live.NewPlan(req.ID, lh.clock.Now(), lh.hz, st.r.Model(), s.h.home, hp)
	lh.plan = &p
	for d, vals := range p.Stored {
		lh.in.Expect(d, p.Horizon.Start, p.Horizon.Slot, vals)
	}
	s.publishCommands(ctx, lh.clock.Now())
}

// publishCommands publishes the commands of the slot that holds at.
func (s *server) publishCommands(ctx context.Context, at time.Time) {
	lh := s.home.live
	if lh.plan == nil {
		return
	}
	pubs, err := lh.plan.Commands(s.c.Prefix(), s.h.name, at, lh.grace)
	if err != nil || len(pubs) == 0 {
		if err != nil {
			s.h.log.Warn("commands not published", "err", err)
		}
		return
	}
	ctx, cancel := context.WithTimeout(ctx, publishWait)
	defer cancel()
	if err := lh.client.Publish(ctx, pubs); err != nil {
		s.h.log.Warn("commands not published", "err", err)
		return
	}
	s.h.log.Info("commands published", "round", lh.plan.Round, "slot_start", live.SlotStart(at, lh.slot()).Format(time.RFC3339), "devices", len(pubs))
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

// liveID is the id of the round at grid time or boundary at: its date
// and time to the minute, or to the second off whole minutes.
func liveID(at time.Time) string {
	if at.Second() != 0 {
		return at.Format("2006-01-02T150405")
	}
	return at.Format("2006-01-02T1504")
}

// liveTime reads a round id that names a local time (liveID's forms).
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
	end := lh.hz.Start.Add(time.Duration(lh.hz.Slots) * lh.hz.Slot)
	return report.PlanMeta{Round: round, Created: created.Format(time.RFC3339), ValidUntil: end.Format(time.RFC3339)}, lh.hz.Start, true
}
