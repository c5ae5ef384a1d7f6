package homesim

import (
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/devices"
)

// Options configure a simulated home.
type Options struct {
	// Noise is σ of the base load's relative noise per slot (0.1 is
	// ±10 %); 0 replays the file's background exactly.
	Noise float64
	// Seed seeds the noise; each home draws its own stream from it.
	Seed uint64
	// Trips are the cars' absences. A car without one stays plugged in.
	Trips []Trip
	// Step is the simulation step (simulated time); 0 means a minute.
	Step time.Duration
	// Log receives the refusals and clamps, once per device, slot and
	// reason; nil discards them.
	Log *slog.Logger
	// PV is the home's rooftop PV per slot (kW), which its background is
	// net of (config.Config.PV); nil for none.
	PV []float64
}

// DefaultStep is the simulation step.
const DefaultStep = time.Minute

// Trip is a car's daily absence: it leaves at Leave and comes back at
// Return (minutes after local midnight; Return may be earlier than Leave,
// for a car away overnight).
type Trip struct {
	Device        string
	Leave, Return int
	// ArriveWith is what the car holds when it comes back (the charge
	// property's unit, kWh for the catalogue's EVs); nil means the
	// file's initial value.
	ArriveWith *float64
}

// away reports whether the car is out at t (local clock).
func (tr *Trip) away(t time.Time) bool {
	m := t.Hour()*60 + t.Minute()
	if tr.Leave <= tr.Return {
		return m >= tr.Leave && m < tr.Return
	}
	return m >= tr.Leave || m < tr.Return
}

// DefaultTrips gives every EV of the home (a catalogue ev_* device) its
// daily trip: one with a plugged-in window (devices.Device.Plug:
// [[device]] arrival and departure) leaves at its departure and comes
// back at its arrival, with its arrival_charge (else the file's
// charge); any other leaves at the
// horizon's end and comes back at its start, plugged in for the whole
// planned horizon (a horizon of a whole day leaves it no time away, so
// no trip). A custom device with a window stays home here, where its
// plan keeps it off while away anyway: only catalogue storages leave.
func DefaultTrips(n *devices.Neighbourhood, home int) []Trip {
	hz := n.Horizon
	span := spanMinutes(hz)
	var out []Trip
	for _, d := range n.Homes[home].Devices {
		switch {
		case d.Plug != nil && strings.HasPrefix(d.Kind, "ev_"):
			out = append(out, Trip{Device: d.Name, Leave: d.Plug.Departure, Return: d.Plug.Arrival, ArriveWith: d.Plug.Charge})
		case strings.HasPrefix(d.Kind, "ev_") && span < 1440:
			out = append(out, Trip{Device: d.Name, Leave: (hz.Start + span) % 1440, Return: hz.Start})
		}
	}
	return out
}

// DayStart returns the start of the horizon that holds t, or of the next
// one: the day a simulation from t records.
func DayStart(hz devices.Horizon, t time.Time) time.Time {
	y, mo, d := t.Date()
	span := time.Duration(spanMinutes(hz)) * time.Minute
	for _, off := range []int{-1, 0, 1} {
		s := time.Date(y, mo, d+off, 0, hz.Start, 0, 0, t.Location())
		if !t.Before(s) && t.Before(s.Add(span)) || !s.Before(t) {
			return s
		}
	}
	return time.Date(y, mo, d+1, 0, hz.Start, 0, 0, t.Location())
}

// spanMinutes returns the length of the horizon hz in minutes, each slot
// its own length ([horizon] segments).
func spanMinutes(hz devices.Horizon) int {
	m := 0
	for t := range hz.Slots {
		m += hz.Minutes(t)
	}
	return m
}

// Bounds returns the offsets of the day's slot boundaries from its
// start (Slots+1 of them), each slot its own length.
func Bounds(hz devices.Horizon) []time.Duration {
	b := make([]time.Duration, hz.Slots+1)
	for t := range hz.Slots {
		b[t+1] = b[t] + time.Duration(hz.Minutes(t))*time.Minute
	}
	return b
}

// DayEnd returns the end of the day that starts at day: its slots laid
// one after the other, each its own length.
func DayEnd(hz devices.Horizon, day time.Time) time.Time {
	return day.Add(time.Duration(spanMinutes(hz)) * time.Minute)
}

// effect is an action's change of one property per hour.
type effect struct {
	prop int
	rate float64
}

// storage is a device that stores energy in one property in proportion
// to its power.
type storage struct {
	prop         int
	etaC, etaD   float64
	maxC, maxD   float64
	hasDischarge bool
}

type simDevice struct {
	dev     *devices.Device
	idle    int
	effects [][]effect // per action, from the first slot length's effects
	// byLength holds the per-action effects of the other slot lengths
	// of an uneven horizon (devices.Action.EffectIn: a catalogue
	// storage's per-slot figure is rounded for each length).
	byLength map[int][][]effect
	// storeByLength holds the storage model of those lengths: the
	// efficiencies the planner's rounded figures give a slot of that
	// length, so that a slot stores what its plan says.
	storeByLength map[int]*storage
	store         *storage
	// stored is the property a catalogue battery or EV (a sizable kind
	// of one property) stores, -1 for other devices: the one a trip
	// empties and refills, whether the device runs as a storage or by
	// its actions (automatic levels; storageOf).
	stored  int
	trip    *Trip
	plugged bool
	// energyOf and moved follow the command with an energy that the
	// storage runs (its slot start and creation): moved is what it has
	// drawn from the meter, net, since the energy began to count.
	energyOf [2]time.Time
	moved    float64
}

// Home is one simulated home. It is not safe for concurrent use, except
// that Command may be called from any goroutine.
type Home struct {
	n        *devices.Neighbourhood
	h        *devices.Home
	start    time.Time
	slot     time.Duration   // slot 0's length: the step outside the day
	bounds   []time.Duration // the day's slot boundaries from start
	opts     Options
	devs     []*simDevice
	vals     []float64
	lo, hi   []float64
	drift    []float64 // per hour
	noise    []float64 // per day slot
	meanLoad float64
	cmds     *book
	now      time.Time
	trace    *Trace
	warned   map[string]bool
}

// NewHome simulates home hi of n from simulated time from, recording the
// day that starts at day (DayStart). The devices start at the file's
// initial values.
func NewHome(n *devices.Neighbourhood, hi int, day, from time.Time, o Options) (*Home, error) {
	if hi < 0 || hi >= len(n.Homes) {
		return nil, fmt.Errorf("home %d of %d", hi, len(n.Homes))
	}
	if o.Step <= 0 {
		o.Step = DefaultStep
	}
	if o.PV != nil && len(o.PV) != n.Horizon.Slots {
		return nil, fmt.Errorf("PV of %d slots for a horizon of %d", len(o.PV), n.Horizon.Slots)
	}
	if o.Noise < 0 || o.Noise > 1 || math.IsNaN(o.Noise) {
		return nil, fmt.Errorf("noise %g: want a relative σ between 0 and 1", o.Noise)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	hz := n.Horizon
	h := &n.Homes[hi]
	s := &Home{n: n, h: h, start: day, slot: time.Duration(hz.SlotMinutes) * time.Minute, bounds: Bounds(hz), opts: o,
		cmds: newBook(), now: from, warned: map[string]bool{}}
	s.opts.Log = o.Log.With("home", h.Name)
	P := len(h.Properties)
	s.vals, s.drift = make([]float64, P), make([]float64, P)
	s.lo, s.hi = PhysicalBounds(h)
	for p, pr := range h.Properties {
		s.vals[p] = pr.Initial
		s.drift[p] = pr.Drift / hz.Hours()
	}
	s.noise = noise(o.Seed, h.Name, o.Noise, hz.Slots)
	for t := range hz.Slots {
		s.meanLoad += s.gross(t) / float64(hz.Slots)
	}
	for d := range h.Devices {
		sd, err := newSimDevice(h, d, hz)
		if err != nil {
			return nil, err
		}
		s.devs = append(s.devs, sd)
	}
	for i := range o.Trips {
		tr := o.Trips[i]
		d := h.Device(tr.Device)
		if d < 0 {
			return nil, fmt.Errorf("home %s: trip of device %q: the home has no such device", h.Name, tr.Device)
		}
		if s.devs[d].stored < 0 {
			return nil, fmt.Errorf("home %s: trip of device %q: only a storage device (an EV) can leave", h.Name, tr.Device)
		}
		if tr.Leave < 0 || tr.Leave >= 1440 || tr.Return < 0 || tr.Return >= 1440 || tr.Leave == tr.Return {
			return nil, fmt.Errorf("home %s: trip of device %q: leave and return are distinct clock times", h.Name, tr.Device)
		}
		s.devs[d].trip = &tr
	}
	for _, sd := range s.devs {
		sd.plugged = sd.trip == nil || !sd.trip.away(from)
	}
	s.trace = newTrace(n, hi, day)
	s.observe()
	return s, nil
}

// noise returns the base load's factor per slot of the home called name:
// 1 + σ·z, z standard normal from the seed and the name, at least 0.
func noise(seed uint64, name string, sigma float64, slots int) []float64 {
	rng := rand.New(rand.NewPCG(seed, nameHash(name)))
	out := make([]float64, slots)
	for t := range out {
		out[t] = max(0, 1+sigma*rng.NormFloat64())
	}
	return out
}

// AsSimulated returns a copy of n whose homes' backgrounds are the base
// load the simulator will draw with o's noise and seed (net of each
// home's PV, pv[h]): the neighbourhood a planner with perfect
// information would plan.
func AsSimulated(n *devices.Neighbourhood, o Options, pv [][]float64) *devices.Neighbourhood {
	out := *n
	out.Homes = slices.Clone(n.Homes)
	for hi := range out.Homes {
		h := &out.Homes[hi]
		f := noise(o.Seed, h.Name, o.Noise, n.Horizon.Slots)
		bg := make([]float64, len(h.Background))
		for t := range bg {
			p := 0.0
			if hi < len(pv) && t < len(pv[hi]) {
				p = pv[hi][t]
			}
			bg[t] = (h.Background[t]+p)*f[t] - p
		}
		h.Background = bg
	}
	return &out
}

func nameHash(s string) uint64 {
	f := fnv.New64a()
	f.Write([]byte(s))
	return f.Sum64()
}

// PhysicalBounds returns each property's physical bounds: the passive
// rules config adds from the catalogue ("… (bound of KIND)"), ±Inf where
// there are none.
func PhysicalBounds(h *devices.Home) (lo, hi []float64) {
	lo, hi = make([]float64, len(h.Properties)), make([]float64, len(h.Properties))
	for p := range lo {
		lo[p], hi[p] = math.Inf(-1), math.Inf(1)
	}
	for _, r := range h.Rules {
		if r.Active() || !strings.Contains(r.Text, "(bound of ") {
			continue
		}
		p := h.Property(r.Location, r.Property)
		if p < 0 {
			continue
		}
		switch r.Rel {
		case devices.Geq, devices.Gt:
			lo[p] = math.Max(lo[p], r.Goal)
		case devices.Leq, devices.Lt:
			hi[p] = math.Min(hi[p], r.Goal)
		}
	}
	return lo, hi
}

// IdleAction returns the index of d's action whose power is closest to
// zero (the first such): what a device does without a command.
func IdleAction(d *devices.Device) int {
	best := 0
	for a := range d.Actions {
		if math.Abs(d.Actions[a].Power) < math.Abs(d.Actions[best].Power) {
			best = a
		}
	}
	return best
}

func newSimDevice(h *devices.Home, d int, hz devices.Horizon) (*simDevice, error) {
	dev := &h.Devices[d]
	sd := &simDevice{dev: dev, idle: IdleAction(dev), stored: -1}
	var props []int
	for p, pr := range h.Properties {
		if dev.Affects(pr.Location, pr.Name) {
			props = append(props, p)
		}
	}
	rates := func(t int) [][]effect { return effectsOf(h, dev.Actions, props, hz, t) }
	sd.effects = rates(0)
	for t := range hz.Slots {
		if m := hz.Minutes(t); m != hz.SlotMinutes && sd.byLength[m] == nil {
			if sd.byLength == nil {
				sd.byLength = map[int][][]effect{}
			}
			sd.byLength[m] = rates(t)
		}
	}
	if _, sizable := devices.SizingDefaults(dev.Kind); sizable && len(props) == 1 {
		sd.stored = props[0]
		// A wallbox on automatic levels is a storage by its exact
		// currents (Device.Exact: what the device does, each storing in
		// proportion to its draw), not by the levels the compiler
		// rounded down to whole quanta: it runs a refined plan's current
		// ("13a") as a set point, as the physical charger does.
		acts := physical(dev)
		sd.store = storageOf(acts, props[0], effectsOf(h, acts, props, hz, 0))
		for t := range hz.Slots {
			m := hz.Minutes(t)
			if m == hz.SlotMinutes || sd.storeByLength[m] != nil {
				continue
			}
			st := storageOf(acts, props[0], effectsOf(h, acts, props, hz, t))
			if st == nil || sd.store == nil {
				// A storage in one slot length and not in another runs
				// by its actions in all (tracecheck replays it so).
				sd.store, sd.storeByLength = nil, nil
				break
			}
			if sd.storeByLength == nil {
				sd.storeByLength = map[int]*storage{}
			}
			sd.storeByLength[m] = st
		}
	}
	return sd, nil
}

// effectsOf returns the effects per hour of every action of acts on
// properties props of h in slot t of hz, a slot of its own length.
func effectsOf(h *devices.Home, acts []devices.Action, props []int, hz devices.Horizon, t int) [][]effect {
	out := make([][]effect, len(acts))
	for a := range acts {
		for _, p := range props {
			if delta, ok := acts[a].EffectIn(h.Properties[p].Name, hz, t); ok && delta != 0 {
				out[a] = append(out[a], effect{prop: p, rate: delta / hz.SlotHours(t)})
			}
		}
	}
	return out
}

// physical returns the actions device d physically has: its Actions,
// or, where those are levels quantised for the compiler (Device.Exact,
// a wallbox on automatic levels), its idle action and its exact ones.
func physical(d *devices.Device) []devices.Action {
	if len(d.Exact) == 0 {
		return d.Actions
	}
	return append([]devices.Action{d.Actions[IdleAction(d)]}, d.Exact...)
}

// storageOf returns the storage model of a catalogue battery or EV (the
// sizable kinds) whose every action moves property p in proportion to its
// power, nil for any other. A dishwasher's progress is proportional to
// its energy too, but it runs programmes, not set points.
//
// The efficiencies are the strongest charging and discharging actions'.
// A weaker action may store less per kWh than they say (or take more for
// what it delivers) by its rounding to the stored energy's resolution,
// which the planner applies in the plan's disfavour (docs/toml.md):
// within 1 % of the efficiency, or within rateSlack of the proportional
// rate, and never in the plan's favour. A battery's exact actions (50 W
// apart, each stored energy rounded to 50 Wh) differ from proportion by
// up to 6 % at their weakest; the physical battery the simulator stands
// for runs every set point at its one efficiency.
func storageOf(acts []devices.Action, p int, effects [][]effect) *storage {
	st := &storage{prop: p}
	rates := make([]float64, len(acts))
	for a, act := range acts {
		for _, e := range effects[a] {
			rates[a] += e.rate
		}
		switch {
		case act.Power == 0:
			if rates[a] != 0 {
				return nil
			}
		case act.Power > 0:
			if rates[a] <= 0 {
				return nil
			}
			if act.Power > st.maxC {
				st.maxC, st.etaC = act.Power, rates[a]/act.Power
			}
		default:
			if rates[a] >= 0 {
				return nil
			}
			if -act.Power > st.maxD {
				// P/δ: the share of the stored energy that reaches the home.
				st.maxD, st.etaD, st.hasDischarge = -act.Power, act.Power/rates[a], true
			}
		}
	}
	if st.maxC == 0 {
		return nil
	}
	for a, act := range acts {
		var want float64 // the proportional rate
		switch {
		case act.Power > 0:
			want = act.Power * st.etaC
		case act.Power < 0:
			want = act.Power / st.etaD
		default:
			continue
		}
		off := rates[a] - want // charging: below; discharging: more negative
		if math.Abs(off) <= 0.01*math.Abs(want) {
			continue
		}
		if off > 0 || -off > rateSlack {
			return nil
		}
	}
	return st
}

// rateSlack (kW) is how far a storage's weaker action may fall short of
// its proportional rate in the plan's disfavour: one 0.1 kWh resolution
// step per hour, or a 25 Wh step per quarter-hour.
const rateSlack = 0.1 + 1e-9

// Command records a command for device (from the MQTT client's
// goroutine); it holds from its slot_start.
func (s *Home) Command(device string, c Command) error {
	if s.h.Device(device) < 0 {
		return fmt.Errorf("home %s has no device %q", s.h.Name, device)
	}
	s.cmds.put(device, c)
	return nil
}

// Name returns the home's name.
func (s *Home) Name() string { return s.h.Name }

// Now returns the simulated time the home has reached.
func (s *Home) Now() time.Time { return s.now }

// effectsIn returns sd's effects per action in day slot k: those of the
// slot's own length, the first length's outside the day.
func (s *Home) effectsIn(sd *simDevice, k int) [][]effect {
	if k >= 0 && k < s.n.Horizon.Slots {
		if e, ok := sd.byLength[s.n.Horizon.Minutes(k)]; ok {
			return e
		}
	}
	return sd.effects
}

// slotOf returns the day slot holding t (possibly outside 0..Slots−1:
// outside the day, slots of slot 0's length) and the start of the next
// slot.
func (s *Home) slotOf(t time.Time) (int, time.Time) {
	d := t.Sub(s.start)
	last := s.bounds[len(s.bounds)-1]
	switch {
	case d < 0:
		k := int(d / s.slot)
		if d%s.slot != 0 {
			k--
		}
		return k, s.start.Add(time.Duration(k+1) * s.slot)
	case d >= last:
		j := int((d - last) / s.slot)
		return len(s.bounds) - 1 + j, s.start.Add(last + time.Duration(j+1)*s.slot)
	}
	k, _ := slices.BinarySearch(s.bounds, d)
	if s.bounds[k] != d {
		k-- // inside slot k−1
	}
	return k, s.start.Add(s.bounds[k+1])
}

// gross returns the file's background of day slot t before PV (power
// units); outside the day, the day's mean.
func (s *Home) gross(t int) float64 {
	if t < 0 || t >= len(s.h.Background) {
		return s.meanLoad
	}
	v := s.h.Background[t]
	if s.opts.PV != nil {
		v += s.opts.PV[t]
	}
	return v
}

func (s *Home) pv(t int) float64 {
	if t < 0 || t >= len(s.opts.PV) {
		return 0
	}
	return s.opts.PV[t]
}

// Load returns the base load of day slot t as simulated: the file's
// gross background with the slot's noise.
func (s *Home) Load(t int) float64 {
	if t < 0 || t >= len(s.noise) {
		return s.gross(t)
	}
	return s.gross(t) * s.noise[t]
}

// Advance simulates up to simulated time to.
func (s *Home) Advance(to time.Time) {
	for s.now.Before(to) {
		k, next := s.slotOf(s.now)
		end := s.now.Add(s.opts.Step)
		if next.Before(end) {
			end = next
		}
		if to.Before(end) {
			end = to
		}
		s.step(k, s.now, end)
		s.now = end
		s.observe()
	}
}

// step simulates [from, to) inside day slot k.
func (s *Home) step(k int, from, to time.Time) {
	dur := to.Sub(from)
	dtH := dur.Hours()
	var rec *SlotTrace
	if k >= 0 && k < len(s.trace.Slots) {
		rec = &s.trace.Slots[k]
		rec.SimulatedS += dur.Seconds()
	}
	bg, pv := s.Load(k), s.pv(k)
	net := (bg - pv) * dtH // kWh
	for d, sd := range s.devs {
		var ds *DeviceSlot
		if rec != nil {
			ds = &rec.Devices[d]
		}
		in, out := s.runDevice(k, from, sd, ds, dtH, dur)
		net += in - out
	}
	for p := range s.vals {
		s.vals[p] += s.drift[p] * dtH
	}
	if rec != nil {
		rec.BackgroundKWh += bg * dtH
		rec.PVKWh += pv * dtH
		rec.NetKWh += net
		for p, v := range s.vals {
			pt := &s.trace.Properties[p]
			pt.Min[k], pt.Max[k] = math.Min(pt.Min[k], v), math.Max(pt.Max[k], v)
		}
	}
}

// observe records the property values at a slot boundary.
func (s *Home) observe() {
	i, ok := slices.BinarySearch(s.bounds, s.now.Sub(s.start))
	if !ok {
		return
	}
	tr := s.trace
	if tr.To < tr.From {
		tr.From = i
	}
	tr.To = i
	for p, v := range s.vals {
		pt := &tr.Properties[p]
		pt.Values[i] = v
		if i < len(tr.Slots) {
			pt.Min[i], pt.Max[i] = v, v
		}
	}
}

// refuse logs a refused or clamped command once per device, slot and
// reason, and records it in the slot's trace.
func (s *Home) refuse(k int, sd *simDevice, ds *DeviceSlot, reason string, args ...any) {
	key := fmt.Sprintf("%s|%d|%s", sd.dev.Name, k, reason)
	if s.warned[key] {
		return
	}
	s.warned[key] = true
	s.opts.Log.Info("command clamped", append([]any{"device", sd.dev.Name, "reason", reason}, args...)...)
	if ds != nil {
		ds.Refused = append(ds.Refused, reason)
	}
}

// runDevice runs one device for a step and returns the energy it drew
// from the meter and gave back (kWh).
func (s *Home) runDevice(k int, at time.Time, sd *simDevice, ds *DeviceSlot, dtH float64, dur time.Duration) (in, out float64) {
	if sd.trip != nil {
		was := sd.plugged
		sd.plugged = !sd.trip.away(at)
		if sd.plugged && !was {
			p := sd.stored
			v := s.h.Properties[p].Initial
			if sd.trip.ArriveWith != nil {
				v = *sd.trip.ArriveWith
			}
			v = math.Min(math.Max(v, s.lo[p]), s.hi[p])
			if ds != nil {
				ds.Returned += v - s.vals[p]
			}
			s.vals[p] = v
		}
		if ds != nil {
			ds.Car = true
			if sd.plugged {
				ds.PluggedS += dur.Seconds()
			}
		}
	}
	cmd, ok := s.cmds.active(sd.dev.Name, at)
	a := sd.idle
	if ok {
		if i := actionIndex(sd.dev, cmd.Action); i >= 0 {
			a = i
		} else if sd.store == nil {
			s.refuse(k, sd, ds, "unknown action", "action", cmd.Action)
		}
	}
	if sd.store == nil && a != sd.idle && !sd.plugged {
		// A car away runs no action (a storage refuses its set point
		// in runStorage).
		s.refuse(k, sd, ds, "not plugged in")
		a = sd.idle
	}
	name := sd.dev.Actions[a].Name
	if ok && sd.store != nil && a == sd.idle && actionIndex(sd.dev, cmd.Action) < 0 {
		name = cmd.Action
	}
	if sd.store != nil {
		p := 0.0
		energy := ok && cmd.EnergyKWh != nil
		if ok {
			p = cmd.PowerKW
			if p == 0 && actionIndex(sd.dev, cmd.Action) >= 0 {
				p = sd.dev.Actions[a].Power
			}
		}
		if energy {
			p = s.energyPower(k, sd, &cmd, at)
		}
		in, out = s.runStorage(k, sd, ds, p, dtH)
		if energy {
			sd.moved += in - out
		}
	} else {
		if ok && a != sd.idle && cmd.PowerKW != 0 && math.Abs(cmd.PowerKW-sd.dev.Actions[a].Power) > 1e-3*math.Max(1, math.Abs(cmd.PowerKW)) {
			s.refuse(k, sd, ds, "power_kw is not the action's power; runs the action", "power_kw", cmd.PowerKW, "action_kw", sd.dev.Actions[a].Power)
		}
		in, out = s.runAction(k, sd, ds, a, dur, s.effectsIn(sd, k))
	}
	if ds != nil {
		if sd.store != nil {
			ds.addRun(name, dur.Seconds())
		}
		ds.InKWh += in
		ds.OutKWh += out
	}
	return in, out
}

func actionIndex(d *devices.Device, name string) int {
	for a := range d.Actions {
		if d.Actions[a].Name == name {
			return a
		}
	}
	return -1
}

// roundingKWh is how far past full or empty a set point may go before
// the simulator calls it a clamp: a plan that empties a battery exactly
// (automatic levels of whole quanta) reaches its bound with a rounding
// error, and is held at the bound, not refused.
const roundingKWh = 1e-9

// energyPower is the power (kW) at which storage sd, from at, delivers
// what is left of command c's energy by the slot's end: what it has
// not yet moved through the meter since the energy began to count
// (Command.EnergyKWh), over the time left, within the device's power
// and never against the energy's sign.
func (s *Home) energyPower(k int, sd *simDevice, c *Command, at time.Time) float64 {
	if key := [2]time.Time{c.SlotStart, c.Created}; sd.energyOf != key {
		sd.energyOf, sd.moved = key, 0
	}
	e := *c.EnergyKWh
	leftH := c.SlotEnd.Sub(at).Hours()
	if leftH <= 0 || e == 0 {
		return 0
	}
	st := s.storeIn(k, sd)
	p := (e - sd.moved) / leftH
	if e > 0 {
		return math.Min(math.Max(p, 0), st.maxC)
	}
	return math.Max(math.Min(p, 0), -st.maxD)
}

// storeIn is sd's storage model in slot k: that of the slot's length.
func (s *Home) storeIn(k int, sd *simDevice) *storage {
	if k >= 0 && k < s.n.Horizon.Slots {
		if o, ok := sd.storeByLength[s.n.Horizon.Minutes(k)]; ok {
			return o
		}
	}
	return sd.store
}

// runStorage runs a storage device at set point p (kW) for dtH hours.
func (s *Home) runStorage(k int, sd *simDevice, ds *DeviceSlot, p, dtH float64) (in, out float64) {
	st := s.storeIn(k, sd)
	if p > st.maxC+1e-9 {
		s.refuse(k, sd, ds, "above the greatest charging power", "power_kw", p, "max_kw", st.maxC)
		p = st.maxC
	}
	if p < -st.maxD-1e-9 {
		s.refuse(k, sd, ds, "above the greatest discharging power", "power_kw", p, "max_kw", st.maxD)
		p = -st.maxD
	}
	if p != 0 && !sd.plugged {
		s.refuse(k, sd, ds, "not plugged in")
		p = 0
	}
	v := s.vals[st.prop]
	switch {
	case p > 0:
		room := math.Max(0, s.hi[st.prop]-v)
		if p*st.etaC*dtH > room {
			if p*st.etaC*dtH > room+roundingKWh {
				s.refuse(k, sd, ds, "full")
			}
			p = room / (st.etaC * dtH)
		}
		s.vals[st.prop] = math.Min(v+p*st.etaC*dtH, math.Max(v, s.hi[st.prop]))
		return p * dtH, 0
	case p < 0:
		left := math.Max(0, v-s.lo[st.prop])
		if -p*dtH/st.etaD > left {
			if -p*dtH/st.etaD > left+roundingKWh {
				s.refuse(k, sd, ds, "empty")
			}
			p = -left * st.etaD / dtH
		}
		s.vals[st.prop] = math.Max(v+p*dtH/st.etaD, math.Min(v, s.lo[st.prop]))
		return 0, -p * dtH
	}
	return 0, 0
}

// runAction runs action a of a device for the part of the step its
// effects keep every property inside its physical bounds, and the idle
// action for the rest.
func (s *Home) runAction(k int, sd *simDevice, ds *DeviceSlot, a int, dur time.Duration, effects [][]effect) (in, out float64) {
	dtH := dur.Hours()
	f := 1.0
	if a != sd.idle {
		for _, e := range effects[a] {
			v, d := s.vals[e.prop], e.rate*dtH
			switch {
			case d > 0 && v+d > s.hi[e.prop]:
				f = math.Min(f, math.Max(0, s.hi[e.prop]-v)/d)
			case d < 0 && v+d < s.lo[e.prop]:
				f = math.Min(f, math.Max(0, v-s.lo[e.prop])/-d)
			}
		}
		if f < 1 {
			s.refuse(k, sd, ds, "at its bound", "action", sd.dev.Actions[a].Name)
		}
	}
	for _, e := range effects[a] {
		s.vals[e.prop] += f * e.rate * dtH
	}
	for _, e := range effects[sd.idle] {
		s.vals[e.prop] += (1 - f) * e.rate * dtH
	}
	e := (f*sd.dev.Actions[a].Power + (1-f)*sd.dev.Actions[sd.idle].Power) * dtH
	if ds != nil {
		ds.addRun(sd.dev.Actions[a].Name, f*dur.Seconds())
		if f < 1 {
			ds.addRun(sd.dev.Actions[sd.idle].Name, (1-f)*dur.Seconds())
		}
	}
	if e >= 0 {
		return e, 0
	}
	return 0, -e
}

// State returns what device d holds now: its properties (by name) and,
// for a car, whether it is plugged in.
func (s *Home) State(d int) (props map[string]float64, plugged *bool) {
	sd := s.devs[d]
	props = map[string]float64{}
	seen := map[int]bool{}
	for _, effs := range sd.effects {
		for _, e := range effs {
			if !seen[e.prop] {
				seen[e.prop] = true
				props[s.h.Properties[e.prop].Name] = s.vals[e.prop]
			}
		}
	}
	if sd.trip != nil || sd.stored >= 0 && strings.HasPrefix(sd.dev.Kind, "ev_") {
		p := sd.plugged
		plugged = &p
	}
	return props, plugged
}

// Trace returns the day recorded so far, its meter figures computed.
func (s *Home) Trace() *Trace {
	s.trace.settle(s.n)
	return s.trace
}
