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
	"github.com/hearth-dcop/hearth/internal/live"
	"github.com/hearth-dcop/hearth/mqtt"
)

// This file is `hearth run` (and `--once`) for an energy home (planner =
// "energy") with [live]: no protocol and no compiled problem. The home
// reads its devices' live state as a compiled live home does (the same
// topics and units, internal/live), maps its file onto devices/energy's
// continuous model (street.FromHome) on the rolling horizon from the
// slot that holds now, plans it, and publishes the plan and the current
// slot's commands only when devices/plancheck accepts it
// (street.PlanAlone checks every plan).
//
// The home plans alone: its neighbours' load is taken as zero. In
// process (`hearth sim`, `hearth solve`) energy homes answer each
// other's load (devices/street); over MQTT they do not yet.

// ErrMixedStreet is wrapped when a street mixes energy homes with
// compiled homes: `hearth run` runs an energy home only in a street of
// energy homes (or alone).
var ErrMixedStreet = errors.New("a street of energy homes and compiled homes")

// EnergyStreet checks that cfg's homes are all energy homes, and returns
// whether there is any. A street that mixes them is an error naming
// the compiled homes and the energy homes, wrapping ErrMixedStreet and
// ErrConfig.
func EnergyStreet(cfg *config.Config) (bool, error) {
	var en, comp []string
	for i, h := range cfg.Neighbourhood.Homes {
		if i < len(cfg.Planners) && cfg.Planners[i] == config.PlannerEnergy {
			en = append(en, h.Name)
		} else {
			comp = append(comp, h.Name)
		}
	}
	if len(en) == 0 {
		return false, nil
	}
	if len(comp) > 0 {
		return true, fmt.Errorf("%w: %w: homes %s say planner = \"energy\" and homes %s are compiled; hearth run plans energy homes only in a street of energy homes, since their coordination with compiled homes runs in process (hearth sim, hearth solve), not over MQTT",
			ErrConfig, ErrMixedStreet, strings.Join(en, ", "), strings.Join(comp, ", "))
	}
	return true, nil
}

// CheckEnergyHome returns what keeps home of conf (read from path) from
// running as an energy home, wrapping ErrConfig: a street that mixes
// energy and compiled homes, no such home, no [live] table.
func CheckEnergyHome(conf *config.Config, path, home string) error {
	if _, err := EnergyStreet(conf); err != nil {
		return err
	}
	if slices.IndexFunc(conf.Neighbourhood.Homes, func(h devices.Home) bool { return h.Name == home }) < 0 {
		names := make([]string, len(conf.Neighbourhood.Homes))
		for i, h := range conf.Neighbourhood.Homes {
			names[i] = h.Name
		}
		return fmt.Errorf("%w: %s: no home %q (homes: %s)", ErrConfig, path, home, strings.Join(names, ", "))
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
	in := live.NewInputs(conf, prefix, cfg.Home, clock, log)
	return &EnergyHome{cfg: cfg, log: log, in: in, client: live.NewClient(cfg.MQTT, prefix, cfg.Home, in, log), clock: clock,
		prefix: prefix, grace: conf.Live.CommandGrace, slot: time.Duration(conf.Neighbourhood.Horizon.SlotMinutes) * time.Minute}, nil
}

// Once gathers the live state (waiting up to OnceWait for the retained
// readings), plans the home on the rolling horizon from the slot that
// holds now (or the time round names), and publishes the plan and the
// current slot's commands. A plan the checker rejects is an error
// wrapping plancheck.ErrRejected, and nothing is published.
func (e *EnergyHome) Once(ctx context.Context, round string) (EnergyRound, error) {
	if err := e.client.Connect(ctx); err != nil {
		return EnergyRound{}, err
	}
	defer e.client.Close()
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
	res, err := e.plan(ctx, round, at)
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
// current slot's commands. A round whose plan fails (the checker rejects
// it, the inputs do not load) is logged and publishes nothing: at a slot
// boundary the last good plan's command for the new slot stands in. It
// returns nil when ctx ends.
func (e *EnergyHome) Run(ctx context.Context) error {
	if err := e.client.Connect(ctx); err != nil {
		return err
	}
	defer e.client.Close()
	if e.awaitState(ctx) != nil {
		return nil
	}
	var last *EnergyRound
	round := func(at time.Time, id, why string) {
		res, err := e.plan(ctx, id, at)
		if err != nil {
			e.log.Error("round failed; nothing published", "round", id, "why", why, "err", err)
			if last != nil {
				e.republish(ctx, last)
			}
			return
		}
		for s, st := range res.Home.Storage {
			e.in.Expect(st.Name, res.Horizon.Start, res.Horizon.Slot, res.Plan.Energy[s])
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
	now := e.clock.Now()
	round(now, liveID(live.SlotStart(now, e.slot)), "start")
	for {
		now := e.clock.Now()
		next := live.SlotStart(now, e.slot).Add(e.slot)
		t := time.NewTimer(max(e.clock.Wall(next.Sub(now)), 0))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case c := <-e.in.Changes():
			t.Stop()
			if c.Online {
				continue // energy homes plan alone: nobody to wait for
			}
			at := e.clock.Now()
			round(at, askID(at), c.Why)
		case <-t.C:
			// The timer may fire a hair before the boundary on the
			// home's clock: wait it out.
			for e.clock.Now().Before(next) {
				time.Sleep(time.Millisecond)
			}
			round(next, liveID(next), "slot")
		}
	}
}

// republish publishes the commands of the slot that holds now from the
// last good plan, when a round failed.
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
	e.log.Info("commands of the last good plan published", "round", last.Round)
}

// plan plans round from instant at and builds its publications.
func (e *EnergyHome) plan(ctx context.Context, round string, at time.Time) (EnergyRound, error) {
	res := EnergyRound{Round: round}
	cfg, hz, notes, err := e.in.LoadConfig(e.cfg.Path, at)
	for _, n := range notes {
		e.log.Warn(n.Msg, n.Args...)
	}
	if err != nil {
		return res, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	res.Horizon = hz
	if _, err := EnergyStreet(cfg); err != nil {
		return res, err
	}
	eh, err := EnergyModel(cfg, e.cfg.Home)
	if err != nil {
		return res, fmt.Errorf("%w: %s: %w", ErrConfig, e.cfg.Path, err)
	}
	res.Home = eh
	m := &street.Member{Home: eh}
	e.log.Info("energy home planning alone: its neighbours' load is taken as zero (energy homes do not yet coordinate over MQTT)",
		"round", round, "slot0", hz.Start.Format(time.RFC3339))
	if err := street.PlanAlone(ctx, []*street.Member{m}, street.Options{}); err != nil {
		// A plan the checker rejects (plancheck.ErrRejected) is never
		// published.
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
	if res.Plans, err = report.Publications(cfg.Neighbourhood, []report.HomePlan{hp}, report.PublishOptions{Prefix: e.prefix, Start: hz.Start, Meta: meta}); err != nil {
		return res, err
	}
	p := live.Plan{Round: round, Created: now, Horizon: hz, Plan: hp}
	if res.Commands, err = p.Commands(e.prefix, eh.Name, now, e.grace); err != nil {
		return res, err
	}
	return res, nil
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
	h.Rules = slices.DeleteFunc(slices.Clone(h.Rules), func(r devices.Rule) bool {
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
	var pv []float64
	if hi < len(cfg.PV) {
		pv = cfg.PV[hi]
	}
	var sz map[string]devices.Sizing
	if hi < len(cfg.Sizes) {
		sz = cfg.Sizes[hi]
	}
	eh, err := street.FromHome(n, &h, pv, sz)
	if err != nil {
		return nil, err
	}
	for i := range eh.Storage {
		if slices.Contains(away, eh.Storage[i].Name) {
			eh.Storage[i].Available = make([]bool, eh.Slots())
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
