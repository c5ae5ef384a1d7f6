package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/devices/street"
	"github.com/hearth-dcop/hearth/internal/energyround"
	"github.com/hearth-dcop/hearth/internal/live"
	"github.com/hearth-dcop/hearth/mqtt"
	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// This file is `hearth run` (and `--once`) for an energy home (planner =
// "energy") with [live]: no protocol and no compiled problem. The home
// reads its devices' live state as a compiled live home does (the same
// topics and units, internal/live), maps its file onto devices/energy's
// continuous model (street.FromHome) on the rolling horizon from the
// slot that holds now, plans it, and publishes the plan and the current
// slot's commands only when devices/plancheck accepts it
// (street.PlanAlone checks every plan, street.Coordinate every answer).
//
// The energy homes of a street coordinate over MQTT (internal/energyround):
// in a round they all take part in (every slot round, and `--once` on the
// same slot), each publishes its planned load per slot, signed, and
// answers its neighbours' in turn, as devices/street does in process,
// until nothing moves or the sweeps' bound, within the round's time-out.
// A round that one home runs alone (its inputs moved) answers the
// neighbours' loads of the last street round, without messages.

// ErrNotEnergyHome is wrapped when `hearth run` is asked to run a
// compiled home as an energy home.
var ErrNotEnergyHome = errors.New("not an energy home")

// EnergyHomes returns the names of cfg's energy homes (planner =
// "energy") and of its compiled homes, in the file's order.
func EnergyHomes(cfg *config.Config) (energyHomes, compiled []string) {
	for i, h := range cfg.Neighbourhood.Homes {
		if i < len(cfg.Planners) && cfg.Planners[i] == config.PlannerEnergy {
			energyHomes = append(energyHomes, h.Name)
		} else {
			compiled = append(compiled, h.Name)
		}
	}
	return energyHomes, compiled
}

// IsEnergyHome reports whether home of cfg says planner = "energy".
func IsEnergyHome(cfg *config.Config, home string) bool {
	en, _ := EnergyHomes(cfg)
	return slices.Contains(en, home)
}

// CheckEnergyHome returns what keeps home of conf (read from path) from
// running as an energy home, wrapping ErrConfig: no such home, a
// compiled home (ErrNotEnergyHome), no [live] table.
func CheckEnergyHome(conf *config.Config, path, home string) error {
	if slices.IndexFunc(conf.Neighbourhood.Homes, func(h devices.Home) bool { return h.Name == home }) < 0 {
		names := make([]string, len(conf.Neighbourhood.Homes))
		for i, h := range conf.Neighbourhood.Homes {
			names[i] = h.Name
		}
		return fmt.Errorf("%w: %s: no home %q (homes: %s)", ErrConfig, path, home, strings.Join(names, ", "))
	}
	if !IsEnergyHome(conf, home) {
		return fmt.Errorf("%w: %w: %s: home %s is compiled (no planner = \"energy\"): it runs as a protocol agent", ErrConfig, ErrNotEnergyHome, path, home)
	}
	if !conf.Live.On {
		return fmt.Errorf("%w: %s: hearth run plans an energy home from its live state: the file needs a [live] table (docs/toml.md); hearth sim and hearth solve plan it from the files", ErrConfig, path)
	}
	return nil
}

// EnergyHome is an energy home run by `hearth run` with [live]: one
// round (Once) or a home that runs until stopped (Run).
type EnergyHome struct {
	cfg    HomeConfig
	log    *slog.Logger
	in     *live.Inputs
	client *live.Client
	clock  *live.Clock
	prefix string
	grace  time.Duration
	slot   time.Duration
	// timeout bounds a street round ([solver] timeout, else half a
	// slot of the clock, at least minLiveTimeout of wall time).
	timeout time.Duration
	publish config.Publish
	// targets are the home's Home Assistant controls (live.Targets:
	// an EV's target charge and departure, a battery's reserve).
	targets []report.Target
	exch    *energyround.Exchange
	// compiled holds the compiled homes' published loads (a mixed
	// street).
	compiled *energyround.Compiled
	// phases holds the final loads of a mixed street's phases
	// (mixed.go), nil in a street of energy homes only.
	phases *energyround.Phases
	// once: `--once`, whose round takes every energy home of the
	// street in (the processes start apart: availability says little).
	once bool
	// last is what the last street round left: the other homes' load
	// and cost, for a round this home runs alone.
	last *streetView
}

// roundKind says who takes part in an energy home's round.
type roundKind int

const (
	// ownRound: this home alone (its inputs moved), answering the
	// street's loads of its last street round.
	ownRound roundKind = iota
	// streetRound: every energy home online, over MQTT, with the
	// compiled homes' loads of the same round (a slot round, --once).
	streetRound
	// onlineRound: a street round when every home has come online; the
	// compiled homes' latest loads on the same horizon stand in, since
	// their round has another name.
	onlineRound
)

// streetView is the rest of the street as a round left it.
type streetView struct {
	slot0  time.Time
	others []float64
	cost   float64
	// street, when not nil, is the round's street (energyround.Config's
	// Street), energy its energy homes and loads the others' last loads:
	// a later answer is made on it (energyround.AnswerStreet).
	street *street.Street
	energy []string
	loads  map[string]energyround.Load
}

// EnergyRound is what an energy home's round did.
type EnergyRound struct {
	Round   string
	Horizon live.Horizon
	// Home is the energy model the home planned, Plan its plan, checked.
	Home *energy.Home
	Plan *energy.Plan
	// Commands and Plans are the publications of the current slot's
	// commands and of the plan.
	Commands, Plans []report.Publication
	// Street is the coordination over MQTT; Homes the energy homes of
	// the round, Alone whether this home answered nobody (a round of its
	// own, or a street whose peak term is off).
	Street energyround.Result
	Homes  []string
	Alone  bool
	// Compiled are the street's compiled homes, whose loads of the
	// round were the background; CompiledMissing those whose did not
	// come by the time-out.
	Compiled, CompiledMissing []string
	// Answers counts the phases in which the energy homes answered the
	// compiled homes' answers (a mixed street: mixed.go).
	Answers int
	// street is the street the last answer was made on (nil: the
	// energy homes and the compiled homes' summed load only).
	street *street.Street
}

// NewEnergyHome builds energy home cfg.Home of conf (the file as loaded).
// Errors wrap ErrConfig: a street that mixes energy and compiled homes,
// a home that is not an energy home, a file without [live].
func NewEnergyHome(cfg HomeConfig, conf *config.Config) (*EnergyHome, error) {
	if err := CheckEnergyHome(conf, cfg.Path, cfg.Home); err != nil {
		return nil, err
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.MQTT.Identity.Client == "" {
		cfg.MQTT.Identity = mqtt.NewIdentity()
	}
	clock := cfg.Clock
	if clock == nil {
		clock = live.WallClock()
	}
	prefix := cfg.MQTT.Prefix
	if prefix == "" {
		prefix = mqtt.DefaultPrefix
	}
	pub := conf.Publish
	if v := cfg.HomeAssistant; v != nil {
		pub.HomeAssistant = *v
	}
	if v := cfg.DiscoveryPrefix; v != nil {
		if err := topic.CheckPrefix(*v); err != nil {
			return nil, fmt.Errorf("%w: --discovery-prefix: %w", ErrConfig, err)
		}
		pub.DiscoveryPrefix = *v
	}
	if pub.DiscoveryPrefix == "" {
		pub.DiscoveryPrefix = config.DefaultDiscoveryPrefix
	}
	if pub.HomeAssistant && strings.Contains(cfg.Home, ".") {
		return nil, fmt.Errorf("%w: home %q: Home Assistant discovery allows letters, digits, '_' and '-' in a home's name", ErrConfig, cfg.Home)
	}
	in := live.NewInputs(conf, prefix, cfg.Home, clock, log)
	slot := time.Duration(conf.Neighbourhood.Horizon.SlotMinutes) * time.Minute
	e := &EnergyHome{cfg: cfg, log: log, in: in, client: live.NewClient(cfg.MQTT, prefix, cfg.Home, in, log), clock: clock,
		prefix: prefix, grace: conf.Live.CommandGrace, slot: slot, publish: pub,
		timeout: conf.Solver.Timeout, exch: energyround.NewExchange(prefix, cfg.MQTT.Keys, log),
		compiled: energyround.NewCompiled(prefix, cfg.MQTT.Keys, log)}
	if e.timeout <= 0 {
		e.timeout = max(clock.Wall(slot/2), minLiveTimeout)
	}
	for hi, h := range conf.Neighbourhood.Homes {
		if h.Name == cfg.Home {
			e.targets = live.Targets(conf, prefix, hi)
		}
	}
	handleTargets(e.client, e.targets, log)
	en, comp := EnergyHomes(conf)
	if len(comp) > 0 {
		e.phases = energyround.NewPhases(prefix, cfg.MQTT.Keys, log)
		e.phases.OnFinal = func(l energyround.Load) {
			// A compiled home's final says which horizon it plans:
			// a round of an earlier one need not wait for its load.
			if s0, err := time.Parse(time.RFC3339, l.Slot0); err == nil && slices.Contains(comp, l.Home) {
				e.compiled.Ahead(l.Home, s0)
			}
		}
	}
	e.client.HandleMessages(energyround.Filter(prefix), func(t string, retained bool, payload []byte) {
		e.exch.Receive(t, retained, payload) // a drop is logged and counted there
		if e.phases != nil && len(en) > 0 {
			e.phases.Receive(t, retained, payload)
		}
	})
	if len(comp) > 0 {
		e.client.HandleMessages(energyround.LoadFilter(prefix), func(t string, _ bool, payload []byte) {
			e.compiled.Receive(t, payload) // retained: the plans are; a drop is logged there
		})
	}
	return e, nil
}

// Once gathers the live state (waiting up to OnceWait for the retained
// readings), plans the home on the rolling horizon from the slot that
// holds now (or the time round names), and publishes the plan and the
// current slot's commands. A plan the checker rejects is an error
// wrapping plancheck.ErrRejected, and nothing is published.
func (e *EnergyHome) Once(ctx context.Context, round string) (EnergyRound, error) {
	e.once = true
	if err := e.client.Connect(ctx); err != nil {
		return EnergyRound{}, err
	}
	defer e.client.Close()
	e.publishTargets(ctx)
	if err := e.awaitState(ctx); err != nil {
		return EnergyRound{}, err
	}
	at := e.clock.Now()
	if t, ok := liveTime(round); ok {
		at = t
	}
	if round == "" {
		// As a live round of the slot: its start names it.
		round = liveID(live.SlotStart(at, e.slot))
	}
	res, err := e.plan(ctx, round, at, streetRound)
	if err != nil {
		return res, err
	}
	pctx, cancel := context.WithTimeout(ctx, publishWait)
	defer cancel()
	if err := e.client.Publish(pctx, append(slices.Clone(res.Plans), res.Commands...)); err != nil {
		return res, fmt.Errorf("plan not published: %w", err)
	}
	e.log.Info("plan published", "round", round, "messages", len(res.Plans)+len(res.Commands), "start", res.Horizon.Start.Format(time.RFC3339))
	return res, nil
}

// publishTargets publishes the discovery configurations of the home's
// targets, as compiled live homes do, when Home Assistant discovery is on.
func (e *EnergyHome) publishTargets(ctx context.Context) {
	publishTargets(ctx, e.client, e.publish, e.cfg.Home, e.targets, live.AvailabilityTopic(e.prefix, e.cfg.Home), e.log)
}

// awaitState waits up to OnceWait for the retained device state; what
// has not come by then is planned from the files' values, logged. It
// returns ctx's error when ctx ends first.
func (e *EnergyHome) awaitState(ctx context.Context) error {
	wait := time.NewTimer(OnceWait)
	defer wait.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for e.in.Unread() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wait.C:
			e.log.Warn("live state incomplete; planning the rest from the files", "waited", OnceWait.String(), "unread", e.in.Unread())
			return nil
		case <-tick.C:
		}
	}
	return nil
}

// Run is the long-running energy home: it plans at once (after up to
// OnceWait for the retained state), then at every slot boundary of its
// clock and whenever its live inputs move (a car plugged in or away, a
// stored energy off the plan by more than [live] off_plan_kwh, a new
// price or forecast series), and publishes each checked plan with the
// current slot's commands. Slot rounds, and one round when every home of
// the street has come online, are the street's (over MQTT with the other
// energy homes online, on the compiled homes' loads); the first round
// and those of moved inputs are the home's own, answering the loads of
// its last street round. A round whose plan fails (the checker rejects
// it, the inputs do not load) is logged and publishes nothing: at a slot
// boundary the last good plan's command for the new slot stands in. It
// returns nil when ctx ends.
func (e *EnergyHome) Run(ctx context.Context) error {
	if err := e.client.Connect(ctx); err != nil {
		return err
	}
	defer e.client.Close()
	e.publishTargets(ctx)
	if e.awaitState(ctx) != nil {
		return nil
	}
	var last *EnergyRound
	round := func(at time.Time, id, why string, kind roundKind) {
		res, err := e.plan(ctx, id, at, kind)
		if err != nil {
			e.log.Error("round failed; nothing published", "round", id, "why", why, "err", err)
			if last != nil {
				e.republish(ctx, last)
			}
			return
		}
		for s, st := range res.Home.Storage {
			e.in.Expect(st.Name, res.Horizon.Start, res.Horizon.Slot, res.Plan.Energy[s], time.Time{})
		}
		pctx, cancel := context.WithTimeout(ctx, publishWait)
		defer cancel()
		if err := e.client.Publish(pctx, append(slices.Clone(res.Plans), res.Commands...)); err != nil {
			e.log.Warn("plan not published", "round", id, "err", err)
			return
		}
		last = &res
		e.log.Info("plan published", "round", id, "why", why, "messages", len(res.Plans)+len(res.Commands), "start", res.Horizon.Start.Format(time.RFC3339))
	}
	// The first round is the home's own: the others are in the middle
	// of their slot. When every home is online (at once where they
	// all are), a street round brings it in.
	now := e.clock.Now()
	round(now, liveID(live.SlotStart(now, e.slot)), "start", ownRound)
	// next is the boundary whose slot round is due; a round that ran
	// past it (a street round at a fast clock) does not skip it: the
	// timer fires at once, for the latest boundary passed.
	next := live.SlotStart(now, e.slot).Add(e.slot)
	for {
		now := e.clock.Now()
		t := time.NewTimer(max(e.clock.Wall(next.Sub(now)), 0))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case c := <-e.in.Changes():
			t.Stop()
			at := e.clock.Now()
			if c.Online {
				// Every home saw the set complete: one street round,
				// named after the slot, in every process.
				round(at, liveID(live.SlotStart(at, e.slot))+"-all", c.Why, onlineRound)
				continue
			}
			round(at, askID(at), c.Why, ownRound)
		case <-t.C:
			// The timer may fire a hair before the boundary on the
			// home's clock: wait it out.
			for e.clock.Now().Before(next) {
				time.Sleep(time.Millisecond)
			}
			b := live.SlotStart(e.clock.Now(), e.slot)
			if last != nil {
				// The street round may wait for its neighbours (up to
				// its time-out): the new slot's command of the last
				// plan goes out first, as a compiled home's commander
				// does at every boundary.
				e.republish(ctx, last)
			}
			round(b, liveID(b), "slot", streetRound)
			next = b.Add(e.slot)
		}
	}
}

// republish publishes the commands of the slot that holds now from the
// last good plan: at a slot boundary before the street round, and when
// a round failed.
func (e *EnergyHome) republish(ctx context.Context, last *EnergyRound) {
	p := live.Plan{Round: last.Round, Created: e.clock.Now(), Horizon: last.Horizon, Plan: EnergyHomePlan(last.Home, last.Plan)}
	pubs, err := p.Commands(e.prefix, last.Home.Name, e.clock.Now(), e.grace)
	if err != nil || len(pubs) == 0 {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, publishWait)
	defer cancel()
	if err := e.client.Publish(pctx, pubs); err != nil {
		e.log.Warn("commands not published", "err", err)
		return
	}
	e.log.Info("commands of the last plan published for the slot", "round", last.Round)
}

// plan plans round (of kind) from instant at and builds its
// publications: in a street round the home coordinates with the other
// energy homes over MQTT (energyround.Run); in its own round it answers
// their loads of the last street round on the same horizon, if any.
func (e *EnergyHome) plan(ctx context.Context, round string, at time.Time, kind roundKind) (EnergyRound, error) {
	res := EnergyRound{Round: round}
	cfg, hz, notes, err := e.in.LoadConfig(e.cfg.Path, at)
	for _, n := range notes {
		e.log.Warn(n.Msg, n.Args...)
	}
	if err != nil {
		return res, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	res.Horizon = hz
	if !IsEnergyHome(cfg, e.cfg.Home) {
		return res, fmt.Errorf("%w: %w: %s: home %s", ErrConfig, ErrNotEnergyHome, e.cfg.Path, e.cfg.Home)
	}
	eh, err := EnergyModel(cfg, e.cfg.Home)
	if err != nil {
		return res, fmt.Errorf("%w: %s: %w", ErrConfig, e.cfg.Path, err)
	}
	res.Home = eh
	m := &street.Member{Home: eh}
	if err := street.PlanAlone(ctx, []*street.Member{m}, street.Options{}); err != nil {
		// A plan the checker rejects (plancheck.ErrRejected) is never
		// published.
		return res, err
	}
	if err := e.coordinate(ctx, &res, cfg, m, kind); err != nil {
		return res, err
	}
	res.Plan = m.Plan
	for _, sf := range m.Check.Shortfalls {
		e.log.Warn("goal missed", "home", eh.Name, "what", sf.What, "slot", sf.Slot, "by", sf.By)
	}
	hp := EnergyHomePlan(eh, m.Plan)
	now := e.clock.Now()
	end := hz.End()
	meta := report.PlanMeta{Round: round, Created: now.Format(time.RFC3339), ValidUntil: end.Format(time.RFC3339)}
	if res.Plans, err = report.Publications(cfg.Neighbourhood, []report.HomePlan{hp}, report.PublishOptions{Prefix: e.prefix, Start: hz.Start, Meta: meta,
		HomeAssistant: e.publish.HomeAssistant, DiscoveryPrefix: e.publish.DiscoveryPrefix, Availability: live.AvailabilityTopic(e.prefix, eh.Name)}); err != nil {
		return res, err
	}
	p := live.Plan{Round: round, Created: now, Horizon: hz, Plan: hp}
	if res.Commands, err = p.Commands(e.prefix, eh.Name, now, e.grace); err != nil {
		return res, err
	}
	return res, nil
}

// coordinate answers the street: in a street round, over MQTT with the
// energy homes of cfg that are online (every home, for --once, which
// does not wait for availability); in a round of this home alone,
// against the last street round's loads on the same horizon. m holds
// its alone plan and ends with the plan to publish.
func (e *EnergyHome) coordinate(ctx context.Context, res *EnergyRound, cfg *config.Config, m *street.Member, kind roundKind) error {
	hz := res.Horizon
	pk := street.PeakOf(cfg.Neighbourhood)
	energyHomes, compiled := EnergyHomes(cfg)
	feeder := cfg.Neighbourhood.FeederLimit > 0 && len(cfg.Neighbourhood.Windows) > 0
	if (pk.Weight <= 0 || len(pk.Slots) == 0) && !feeder {
		// Nothing to share: `hearth sim`'s street.CoordinateStreet
		// leaves every energy home at its plan alone. With a feeder
		// limit it shares the limit, as `hearth sim` does, with the
		// compiled homes' committed caps too (their phase 0, mixed.go).
		res.Alone = true
		e.log.Info("energy home planned alone: the street's peak term is off ([objective] peak, [coordination] windows)", "round", res.Round)
		return nil
	}
	if kind == ownRound {
		res.Alone = true
		if v := e.last; v != nil && v.slot0.Equal(hz.Start) && len(v.others) == len(m.Plan.Import) {
			var moved bool
			var err error
			if v.street != nil {
				moved, err = energyround.AnswerStreet(ctx, m, v.street, v.energy, v.loads, street.Options{})
			} else {
				moved, err = energyround.Answer(ctx, m, v.others, v.cost, pk, street.Options{})
			}
			if err != nil {
				return err
			}
			e.log.Info("energy home answered the street's loads of its last round", "round", res.Round, "moved", moved)
		} else {
			e.log.Info("energy home planned alone: no street round on this horizon yet", "round", res.Round)
		}
		return nil
	}
	deadline := time.Now().Add(e.timeout)
	offline := e.in.Offline()
	for _, h := range energyHomes {
		if h == e.cfg.Home || !slices.Contains(offline, h) || e.once {
			res.Homes = append(res.Homes, h)
		}
	}
	var base []float64
	var st *street.Street
	if len(compiled) == 0 {
		// The street as `hearth sim` coordinates it: the links of
		// [coordination] neighbours and the [feeder] limit.
		st = streetOfLoads(cfg, energyHomes, compiled, nil)
	}
	if len(compiled) > 0 {
		// A mixed street: the compiled homes' plans of this round are
		// the fixed background every energy home answers.
		var missing []string
		of := res.Round
		if kind == onlineRound {
			of = ""
		}
		if kind == streetRound && e.phases != nil {
			// The compiled homes' loads after their protocol: phase 0's
			// finals (mixed.go), which they publish before they wait
			// for this home's.
			got, miss, err := e.phases.Await(ctx, res.Round, compiled, energyround.Expect{Slots: len(m.Plan.Import), Slot0: hz.Start}, deadline, 0, nil)
			if err != nil && !errors.Is(err, energyround.ErrPhaseTimedOut) {
				return err
			}
			missing = miss
			base, st = compiledStreet(cfg, energyHomes, compiled, got, miss, len(m.Plan.Import))
		} else {
			// The compiled homes' latest loads (onlineRound) or those
			// of this round, with their committed caps where they
			// publish them: the street as in a phase.
			got, miss, err := e.compiled.Loads(ctx, compiled, of, hz.Start, len(m.Plan.Import), deadline)
			if err != nil {
				return err
			}
			missing = miss
			base, st = compiledStreet(cfg, energyHomes, compiled, got, miss, len(m.Plan.Import))
		}
		res.Compiled = compiled
		if len(missing) > 0 {
			e.log.Warn("compiled homes' loads of the round did not come by the round's time-out; answering the others",
				"round", res.Round, "missing", strings.Join(missing, ","))
			res.CompiledMissing = missing
		}
	}
	if len(res.Homes) < 2 && base == nil && !feeder {
		res.Alone = true
		e.log.Info("energy home planned alone: no other energy home of the street is online; the neighbours' load is taken as zero",
			"round", res.Round, "offline", strings.Join(offline, ","))
		return nil
	}
	x := energyround.Config{Prefix: e.prefix, Round: res.Round, Home: e.cfg.Home, Homes: res.Homes, Slot0: hz.Start, Peak: pk, Base: base,
		Street: st, Energy: energyHomes,
		Deadline: deadline, Keys: e.cfg.MQTT.Keys, Log: e.log,
		Publish: func(ctx context.Context, t string, b []byte) error {
			return e.client.Publish(ctx, []report.Publication{{Topic: t, Payload: b}})
		}}
	r, err := energyround.Run(ctx, e.exch, m, x)
	if err != nil {
		if kind == streetRound && e.phases != nil {
			e.failPhase(ctx, x, 0, m, err)
		}
		return err
	}
	res.Street, res.street = r, st
	if kind == streetRound && e.phases != nil && len(res.CompiledMissing) == 0 && len(r.Missing) == 0 {
		if err := e.answerPhases(ctx, res, cfg, m, x, compiled); err != nil {
			return err
		}
		r = res.Street
	}
	if len(r.Missing) == 0 && r.Others != nil {
		e.last = &streetView{slot0: hz.Start, others: r.Others, cost: r.OthersCost, street: res.street, energy: energyHomes, loads: r.Loads}
	}
	if r.Dropped > 0 {
		e.log.Warn("energy round: messages dropped (see the warnings above)", "round", res.Round, "dropped", r.Dropped)
	}
	e.log.Info("energy home coordinated with the street", "round", res.Round, "homes", len(res.Homes), "sweeps", r.Sweeps,
		"moves", r.Moves, "objective", r.Objective, "missing", strings.Join(r.Missing, ","), "answers", res.Answers)
	return nil
}

// EnergyModel maps home name of cfg (the files with the live inputs put
// in) onto devices/energy's model: street.FromHome, with an EV that is
// away (the live inputs' AwayRule) unavailable in every slot, its goals
// left out.
func EnergyModel(cfg *config.Config, name string) (*energy.Home, error) {
	n := cfg.Neighbourhood
	hi := slices.IndexFunc(n.Homes, func(h devices.Home) bool { return h.Name == name })
	if hi < 0 {
		return nil, fmt.Errorf("no home %q", name)
	}
	h := n.Homes[hi]
	var away []string
	// A battery's reserve set live (live.ReservePct: a rule in every
	// slot, which an energy home does not take) is its storage's floor.
	reserve := map[string]float64{}
	h.Rules = slices.DeleteFunc(slices.Clone(h.Rules), func(r devices.Rule) bool {
		if strings.HasSuffix(r.Text, live.ReserveRule) {
			for _, d := range h.Devices {
				if d.Affects(r.Location, r.Property) {
					reserve[d.Name] = max(reserve[d.Name], r.Goal)
				}
			}
			return true
		}
		if !strings.HasSuffix(r.Text, live.AwayRule) {
			return false
		}
		for _, d := range h.Devices {
			if d.Affects(r.Location, r.Property) {
				away = append(away, d.Name)
			}
		}
		return true
	})
	eh, err := street.FromConfigHome(cfg, hi, &h)
	if err != nil {
		return nil, err
	}
	for i := range eh.Storage {
		st := &eh.Storage[i]
		if slices.Contains(away, st.Name) {
			st.Available = make([]bool, eh.Slots())
		}
		if r, ok := reserve[st.Name]; ok {
			// Never above what it holds now (a plan could not keep it
			// from slot 0) nor its capacity.
			st.Min = max(st.Min, min(r, st.Initial, st.Max))
		}
	}
	return eh, eh.Validate()
}

// EnergyHomePlan is an energy home's plan as compiled homes publish
// theirs: per storage, per slot, "charge" (kW > 0, drawn from the
// meter), "discharge" (kW < 0, fed to it) or "idle"; and for curtailable
// PV a device named after it, "curtail" where the plan leaves some of
// the forecast unused, else "produce", its kW the PV power used as a
// negative draw.
func EnergyHomePlan(h *energy.Home, p *energy.Plan) report.HomePlan {
	const eps = 1e-6
	T := h.Slots()
	hp := report.HomePlan{Home: h.Name, LoadKW: make([]float64, T)}
	for t := range T {
		hp.LoadKW[t] = p.Import[t] - p.Export[t]
	}
	for s, st := range h.Storage {
		dp := report.DevicePlan{Device: st.Name, Actions: make([]string, T), KW: make([]float64, T)}
		for t := range T {
			kw := p.Charge[s][t] - p.Discharge[s][t]
			switch {
			case kw > eps:
				dp.Actions[t] = "charge"
			case kw < -eps:
				dp.Actions[t] = "discharge"
			default:
				dp.Actions[t], kw = "idle", 0
			}
			dp.KW[t] = roundKW(kw)
		}
		hp.Devices = append(hp.Devices, dp)
	}
	for i, pv := range h.PV {
		if !pv.Curtailable {
			continue
		}
		dp := report.DevicePlan{Device: pv.Name, Actions: make([]string, T), KW: make([]float64, T)}
		for t := range T {
			used := p.PVUsed[i][t]
			dp.Actions[t] = "produce"
			if used < pv.Forecast[t]-eps {
				dp.Actions[t] = "curtail"
			}
			dp.KW[t] = roundKW(-used)
		}
		hp.Devices = append(hp.Devices, dp)
	}
	return hp
}

// roundKW rounds a power to the watt: the LP's last digits are noise to
// a controller.
func roundKW(v float64) float64 {
	v = math.Round(v*1000) / 1000
	if v == 0 {
		return 0 // no -0 in the payloads
	}
	return v
}

// compiledStreet sums the compiled homes' loads that flow (got) into
// the base load of n slots that the energy homes answer, and builds their
// street (streetOfLoads) when no compiled home's load is missing (miss);
// with one missing the street is nil and the answer plans on the base.
func compiledStreet(cfg *config.Config, energyHomes, compiled []string, got map[string]energyround.Load, miss []string, n int) ([]float64, *street.Street) {
	base := make([]float64, n)
	for _, h := range compiled {
		for t, v := range got[h].ImportKW {
			base[t] += v
		}
	}
	if len(miss) > 0 {
		return base, nil
	}
	return base, streetOfLoads(cfg, energyHomes, compiled, got)
}

// streetOfLoads is the street that cfg's energy homes (energyHomes)
// answer in, as `hearth sim` builds it (street.StreetOf of the whole
// neighbourhood): its peak term, the links of [coordination] neighbours
// and the [feeder] limit, with the compiled homes' loads that flow and
// committed caps of their final loads of a phase (finals; nil for a
// street without compiled homes). A compiled home's final without caps
// counts none.
func streetOfLoads(cfg *config.Config, energyHomes, compiled []string, finals map[string]energyround.Load) *street.Street {
	full := cfg.Neighbourhood
	ms := make([]*street.Member, 0, len(energyHomes))
	for i, h := range full.Homes {
		if slices.Contains(energyHomes, h.Name) {
			ms = append(ms, &street.Member{Index: i})
		}
	}
	var loads [][]float64
	var committed []float64
	if len(compiled) > 0 {
		loads = make([][]float64, len(compiled))
		committed = make([]float64, len(full.Windows))
		for i, h := range compiled {
			loads[i] = finals[h].ImportKW
			for w, c := range finals[h].CommittedKW {
				if w < len(committed) {
					committed[w] += c
				}
			}
		}
	}
	return street.StreetOf(full, ms, loads, committed)
}
