// Package tracecheck is an independent check of what a simulated home
// did (a devices/homesim Trace): it rebuilds each device's physics from
// the home's description — storage efficiencies and power limits from its
// actions, physical bounds from the catalogue's passive rules — and
// replays the recorded energies and run times slot by slot against the
// recorded property values, the meter and the bill, then checks the
// rules. It shares no code with the simulator beyond the trace's types
// and the model's, so that a simulator bug cannot hide behind its own
// arithmetic; the planner's evaluator is not used either.
package tracecheck

import (
	"fmt"
	"math"
	"strings"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/homesim"
)

// Report is what Check found.
type Report struct {
	// Violations are physics broken: a bound passed, more power than a
	// device has, a car charged while away, energy that does not add up,
	// a meter or bill that does not match its flows.
	Violations []string
	// Missed are the rules the day did not keep (goals and comfort
	// bounds), within one resolution step.
	Missed []string
	// Bill and PeakKW are recomputed from the meter.
	Bill, PeakKW float64
}

// OK reports whether no physics was broken.
func (r *Report) OK() bool { return len(r.Violations) == 0 }

func (r *Report) bad(format string, args ...any) {
	if len(r.Violations) < 50 {
		r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
	}
}

// tol is the slack of energy comparisons (kWh) and of bounds, relative
// to the magnitudes involved.
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-6*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// store is a device's storage physics, as this package reads it.
type store struct {
	prop       int
	etaIn      float64 // stored per kWh drawn
	etaOut     float64 // kWh delivered per kWh taken out
	maxIn      float64 // kW
	maxOut     float64 // kW
	isStorage  bool
	propsMoved []int
}

// readStore reads device d's storage model in slot t of hz, a slot of
// its own length: the efficiencies of that length's (rounded) effects.
func readStore(h *devices.Home, d *devices.Device, hz devices.Horizon, t int) store {
	slotH := hz.SlotHours(t)
	var s store
	for p, pr := range h.Properties {
		if d.Affects(pr.Location, pr.Name) {
			s.propsMoved = append(s.propsMoved, p)
		}
	}
	if _, sizable := devices.SizingDefaults(d.Kind); !sizable || len(s.propsMoved) != 1 {
		return s
	}
	s.prop = s.propsMoved[0]
	name := h.Properties[s.prop].Name
	s.isStorage = true
	// A wallbox or battery on automatic levels stores by its exact
	// actions (Device.Exact), which the simulator runs as set points;
	// its Actions are the compiler's levels, rounded down to whole quanta.
	acts := d.Actions
	if len(d.Exact) > 0 {
		acts = d.Exact
	}
	// The efficiencies are those of the strongest actions each way.
	deltas := make([]float64, len(acts))
	for i, a := range acts {
		deltas[i], _ = a.EffectIn(name, hz, t)
		switch {
		case a.Power == 0 && deltas[i] == 0:
		case a.Power > 0 && deltas[i] > 0:
			if a.Power > s.maxIn {
				s.maxIn, s.etaIn = a.Power, deltas[i]/(a.Power*slotH)
			}
		case a.Power < 0 && deltas[i] < 0:
			if -a.Power > s.maxOut {
				s.maxOut, s.etaOut = -a.Power, a.Power*slotH/deltas[i]
			}
		default:
			s.isStorage = false
		}
	}
	// A weaker action may move less per kWh than the strongest (its
	// stored energy rounded in the plan's disfavour, by at most one step
	// of 0.1 kWh per hour), never more; an action off by more makes the
	// simulator run the device by its actions, and the replay likewise.
	for i, a := range acts {
		var prop float64 // what the efficiency alone would move
		switch {
		case a.Power > 0:
			prop = a.Power * slotH * s.etaIn
		case a.Power < 0 && s.maxOut > 0:
			prop = a.Power * slotH / s.etaOut
		default:
			continue
		}
		short := deltas[i] - prop // charging: ≤ 0; discharging: ≤ 0
		if math.Abs(short) <= 0.01*math.Abs(prop) {
			continue
		}
		if short > 0 || -short > 0.1*slotH+1e-9 {
			s.isStorage = false
		}
	}
	if s.maxIn == 0 {
		s.isStorage = false
	}
	return s
}

// bounds reads the catalogue's physical bounds of every property: the
// passive rules tagged "(bound of KIND)" by config.
func bounds(h *devices.Home) (lo, hi []float64) {
	lo, hi = make([]float64, len(h.Properties)), make([]float64, len(h.Properties))
	for p := range h.Properties {
		lo[p], hi[p] = math.Inf(-1), math.Inf(1)
	}
	for _, r := range h.Rules {
		if r.Prefix != devices.Passive || !strings.HasSuffix(r.Text, ")") || !strings.Contains(r.Text, "(bound of") {
			continue
		}
		for p, pr := range h.Properties {
			if pr.Location != r.Location || pr.Name != r.Property {
				continue
			}
			if r.Rel == devices.Geq || r.Rel == devices.Gt {
				lo[p] = math.Max(lo[p], r.Goal)
			}
			if r.Rel == devices.Leq || r.Rel == devices.Lt {
				hi[p] = math.Min(hi[p], r.Goal)
			}
		}
	}
	return lo, hi
}

// Check replays trace tr of home hi of n, whose PV profile (kW per slot,
// nil for none) is pv.
func Check(n *devices.Neighbourhood, hi int, pv []float64, tr *homesim.Trace) *Report {
	r := &Report{}
	hz := n.Horizon
	h := &n.Homes[hi]
	slotH := hz.Hours()
	if tr.Home != h.Name || len(tr.Slots) != hz.Slots || len(tr.Properties) != len(h.Properties) {
		r.bad("trace of %q with %d slots and %d properties, for home %s of %d slots and %d properties", tr.Home, len(tr.Slots), len(tr.Properties), h.Name, hz.Slots, len(h.Properties))
		return r
	}
	lo, hi2 := bounds(h)
	// Each slot length's storage models ([horizon] segments): a device
	// that is no storage in one length is replayed by its actions in
	// all, as the simulator runs it.
	byLength := map[int][]store{}
	for t := range hz.Slots {
		if _, ok := byLength[hz.Minutes(t)]; !ok {
			stores := make([]store, len(h.Devices))
			for d := range h.Devices {
				stores[d] = readStore(h, &h.Devices[d], hz, t)
			}
			byLength[hz.Minutes(t)] = stores
		}
	}
	for d := range h.Devices {
		for _, stores := range byLength {
			for _, other := range byLength {
				stores[d].isStorage = stores[d].isStorage && other[d].isStorage
			}
		}
	}
	for t, st := range tr.Slots {
		stores := byLength[hz.Minutes(t)]
		simH := st.SimulatedS / 3600
		lenH := hz.SlotHours(t) // the slot's own length ([horizon] segments)
		if st.SimulatedS < -1e-9 || st.SimulatedS > lenH*3600+1e-6 {
			r.bad("slot %d: %g s simulated in a slot of %g s", t, st.SimulatedS, lenH*3600)
			continue
		}
		if st.SimulatedS == 0 {
			continue
		}
		if len(st.Devices) != len(h.Devices) {
			r.bad("slot %d: %d devices recorded, the home has %d", t, len(st.Devices), len(h.Devices))
			continue
		}
		// The meter.
		flows := st.BackgroundKWh - st.PVKWh
		for d := range st.Devices {
			flows += st.Devices[d].InKWh - st.Devices[d].OutKWh
		}
		if !near(flows, st.NetKWh) {
			r.bad("slot %d: the meter reads %.6g kWh net, the home's flows add up to %.6g", t, st.NetKWh, flows)
		}
		if st.BackgroundKWh < -1e-9 || st.PVKWh < -1e-9 {
			r.bad("slot %d: negative base load %.6g or PV %.6g kWh", t, st.BackgroundKWh, st.PVKWh)
		}
		if pvMax := at(pv, t); st.PVKWh > pvMax*simH+1e-9 {
			r.bad("slot %d: PV gave %.6g kWh, more than its %.6g kW profile allows", t, st.PVKWh, pvMax)
		}
		imp, exp := math.Max(st.NetKWh, 0), math.Max(-st.NetKWh, 0)
		if !near(imp, st.ImportKWh) || !near(exp, st.ExportKWh) {
			r.bad("slot %d: import %.6g and export %.6g kWh recorded for a net %.6g", t, st.ImportKWh, st.ExportKWh, st.NetKWh)
		}
		ip, eps := n.Tariff(hi) // the home's own tariff where it has one
		ep := ip[t]
		if eps != nil {
			ep = eps[t]
		}
		bill := ip[t]*imp - ep*exp
		if !near(bill, st.Bill) {
			r.bad("slot %d: bill %.6g recorded, the meter and tariff give %.6g", t, st.Bill, bill)
		}
		r.Bill += bill
		r.PeakKW = math.Max(r.PeakKW, st.NetKWh/simH)
		// Devices, and each property's change from them.
		moved := make([]float64, len(h.Properties))
		for d := range h.Devices {
			dev := &h.Devices[d]
			ds := &st.Devices[d]
			sd := &stores[d]
			if ds.Device != dev.Name {
				r.bad("slot %d: device %d recorded as %q, the home calls it %q", t, d, ds.Device, dev.Name)
				continue
			}
			if ds.InKWh < -1e-9 || ds.OutKWh < -1e-9 {
				r.bad("slot %d: %s: negative energy (in %.6g, out %.6g kWh)", t, dev.Name, ds.InKWh, ds.OutKWh)
			}
			if sd.isStorage {
				avail := simH
				if ds.Car {
					avail = ds.PluggedS / 3600
				}
				if ds.InKWh > sd.maxIn*avail+1e-6 {
					r.bad("slot %d: %s drew %.6g kWh, more than %.6g kW over its %.4g h plugged in allows", t, dev.Name, ds.InKWh, sd.maxIn, avail)
				}
				if ds.OutKWh > sd.maxOut*avail+1e-6 {
					r.bad("slot %d: %s gave %.6g kWh, more than %.6g kW over %.4g h allows", t, dev.Name, ds.OutKWh, sd.maxOut, avail)
				}
				moved[sd.prop] += sd.etaIn*ds.InKWh - ds.OutKWh*nz(1/sd.etaOut) + ds.Returned
				if ds.Returned != 0 && !ds.Car {
					r.bad("slot %d: %s came back from a trip, but it is not a car", t, dev.Name)
				}
				continue
			}
			runS, energy := 0.0, 0.0
			for name, sec := range ds.RunS {
				a := -1
				for i := range dev.Actions {
					if dev.Actions[i].Name == name {
						a = i
					}
				}
				if a < 0 {
					r.bad("slot %d: %s ran %q, which is not one of its actions", t, dev.Name, name)
					continue
				}
				if sec < 0 {
					r.bad("slot %d: %s ran %q for %g s", t, dev.Name, name, sec)
				}
				runS += sec
				energy += dev.Actions[a].Power * sec / 3600
				for _, p := range sd.propsMoved {
					delta, _ := dev.Actions[a].EffectIn(h.Properties[p].Name, hz, t)
					moved[p] += delta / lenH * sec / 3600
				}
			}
			if ds.Car {
				// A car run by its actions (automatic levels) draws
				// nothing while away.
				most := 0.0
				for i := range dev.Actions {
					most = math.Max(most, dev.Actions[i].Power)
				}
				if ds.InKWh > most*ds.PluggedS/3600+1e-6 {
					r.bad("slot %d: %s drew %.6g kWh, more than %.6g kW over its %.4g h plugged in allows", t, dev.Name, ds.InKWh, most, ds.PluggedS/3600)
				}
			}
			if ds.Returned != 0 {
				// A car run by its actions (automatic levels) comes
				// back from a trip too.
				if !ds.Car || len(sd.propsMoved) != 1 {
					r.bad("slot %d: %s came back from a trip, but it is not a car", t, dev.Name)
				} else {
					moved[sd.propsMoved[0]] += ds.Returned
				}
			}
			if math.Abs(runS-st.SimulatedS) > 1e-6*math.Max(1, st.SimulatedS) {
				r.bad("slot %d: %s ran %g s of a %g s step", t, dev.Name, runS, st.SimulatedS)
			}
			if !near(ds.InKWh-ds.OutKWh, energy) {
				r.bad("slot %d: %s drew %.6g kWh net, its actions' run times give %.6g", t, dev.Name, ds.InKWh-ds.OutKWh, energy)
			}
		}
		for p, pr := range h.Properties {
			pt := &tr.Properties[p]
			if t >= tr.From && t+1 <= tr.To && st.SimulatedS >= lenH*3600-1e-6 {
				want := pt.Values[t] + moved[p] + pr.Drift/slotH*simH
				if math.Abs(pt.Values[t+1]-want) > 1e-6*math.Max(1, math.Abs(want)) {
					r.bad("slot %d: %s %s went from %.6g to %.6g; the devices' energy and drift give %.6g", t, pr.Location, pr.Name, pt.Values[t], pt.Values[t+1], want)
				}
			}
			slack := 1e-6 * math.Max(1, math.Abs(hi2[p]))
			if pt.Max[t] > hi2[p]+slack {
				r.bad("slot %d: %s %s reached %.6g, above its physical maximum %g", t, pr.Location, pr.Name, pt.Max[t], hi2[p])
			}
			if pt.Min[t] < lo[p]-1e-6*math.Max(1, math.Abs(lo[p])) {
				r.bad("slot %d: %s %s fell to %.6g, below its physical minimum %g", t, pr.Location, pr.Name, pt.Min[t], lo[p])
			}
		}
	}
	r.Missed = missed(hz, h, tr)
	return r
}

func at(v []float64, t int) float64 {
	if t < len(v) {
		return v[t]
	}
	return 0
}

func nz(v float64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0
	}
	return v
}

// missed checks every rule on the observed boundary values, to within one
// resolution step: `before`/`after` need one boundary of their window to
// hold, `at`/`within`/passive every observed one.
func missed(hz devices.Horizon, h *devices.Home, tr *homesim.Trace) []string {
	var out []string
	for i := range h.Rules {
		rule := &h.Rules[i]
		p := h.Property(rule.Location, rule.Property)
		if p < 0 {
			out = append(out, rule.Text+": no such property")
			continue
		}
		step := h.Properties[p].Scale
		ok := func(v float64) bool {
			switch rule.Rel {
			case devices.Geq, devices.Gt:
				return v >= rule.Goal-step
			case devices.Leq, devices.Lt:
				return v <= rule.Goal+step
			case devices.Eq:
				return math.Abs(v-rule.Goal) <= step
			}
			return math.Abs(v-rule.Goal) > step/2
		}
		var from, to int
		some := false
		switch rule.Prefix {
		case devices.Passive:
			from, to = 0, hz.Slots
		case devices.Before:
			from, to, some = 0, rule.T1, true
		case devices.After:
			from, to, some = rule.T1, hz.Slots, true
		case devices.At:
			from, to = rule.T1, rule.T1
		case devices.Within:
			from, to = rule.T1, rule.T2
		}
		from, to = max(from, tr.From), min(to, tr.To)
		if from > to {
			out = append(out, rule.Text+": not observed")
			continue
		}
		kept := !some
		for b := from; b <= to; b++ {
			if ok(tr.Properties[p].Values[b]) == some {
				kept = some
				break
			}
		}
		if !kept {
			out = append(out, rule.Text)
		}
	}
	return out
}
