package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hearth-dcop/hearth/devices"
)

// windowKeys are the keys of a car's daily plugged-in window on a
// [[device]] (docs/toml.md, "[[device]]"). The names are evcc's: its
// charging plans end at the car's "departure"; arrival is when it is
// plugged in again.
var windowKeys = []string{"arrival", "departure", "arrival_charge"}

// window reads a device's arrival and departure: the daily clock times
// between which the car is plugged in (wrapping past midnight: arrival
// "17:30", departure "07:30" is overnight). Outside the window the
// device may only be off (devices.Device.Away), and a slot the car
// arrives or leaves in counts as away as a whole: a plan never counts on
// a car that is not there for all of its slot, and a command to charge
// never reaches an empty wallbox (the conservative reading; scaling the
// power by the plugged share would give an automatic level's current a
// fraction of its quanta, off the lattice its states are built on).
func (r *homeReader) window(n *node, dev *devices.Device, props []devices.Property) {
	hasA, hasD := n.has("arrival"), n.has("departure")
	if !hasA && !hasD {
		if n.has("arrival_charge") {
			n.errorf("arrival_charge", "arrival_charge is what the car comes back with: it needs arrival and departure (its plugged-in window)")
		}
		return
	}
	key := "arrival"
	if !hasA {
		key = "departure"
	}
	if !hasA || !hasD {
		n.errorf(key, "give both arrival and departure (the car's daily plugged-in window, e.g. arrival = \"17:30\", departure = \"07:30\"), or neither for a car that never leaves")
		return
	}
	switch {
	case strings.HasPrefix(dev.Kind, "ev_"):
	case dev.Kind == "" && len(props) > 0 && dev.Idle() >= 0:
	case dev.Kind == "":
		n.errorf(key, "device %s has no action that draws nothing and changes nothing (power_kw = 0, no effects): a device that leaves must be off while away; add one, e.g. { name = \"off\", power_kw = 0 }", dev.Name)
		return
	default:
		n.errorf(key, "a %s does not leave: arrival and departure apply to EV chargers (ev_wallbox_7kw, ev_wallbox_11kw) and custom storage devices with an off action", dev.Kind)
		return
	}
	var at [2]int
	for i, k := range windowKeys[:2] {
		s, ok := n.str(k)
		if !ok {
			return
		}
		m, err := parseClock(s)
		if err != nil {
			n.errorf(k, "%s = %q: want a daily clock time \"HH:MM\" (the car's %s)", k, s, map[string]string{"arrival": "arrival at home", "departure": "departure"}[k])
			return
		}
		at[i] = m % 1440
	}
	if at[0] == at[1] {
		n.errorf("departure", "arrival and departure are both %s: the window would last no time or the whole day; leave both out for a car that never leaves", fmtClock(at[0]))
		return
	}
	w := devices.PlugWindow{Arrival: at[0], Departure: at[1]}
	dev.Plug = &w
	away := make([]bool, r.hz.Slots)
	gone := false
	for s := range r.hz.Slots {
		from, to := r.ck.start+r.ck.slotStart(s), r.ck.start+r.ck.slotStart(s+1)
		for m := from; m < to; m++ {
			if !w.Plugged(m) {
				away[s], gone = true, true
				break
			}
		}
	}
	if gone {
		dev.Away = away
	}
	r.arrivalCharge(n, dev, props)
}

// arrivalCharge reads a device's arrival_charge: what the car holds when
// it comes back, in the stored property's unit (kWh) or "N%" of its
// capacity. The property is reset to it at the boundary each arrival
// inside the horizon ends on (the start of the first slot the car is
// plugged in for whole: devices.Property.Reset), and home-sim's car comes
// back with it; energy homes plan it as their storage's arrivals
// (devices/street, energy.Storage.Arrivals). The SHDS indexing does not.
func (r *homeReader) arrivalCharge(n *node, dev *devices.Device, props []devices.Property) {
	raw, ok := n.get("arrival_charge")
	if !ok {
		return
	}
	if r.hz.Dynamics != devices.Full {
		n.errorf("arrival_charge", "arrival_charge needs full dynamics (the SHDS indexing has no boundary to reset at)")
		return
	}
	stored := -1
	for i := range props {
		if props[i].Min != nil || props[i].Max != nil || len(props) == 1 {
			if stored >= 0 {
				n.errorf("arrival_charge", "device %s stores more than one property; arrival_charge applies to a storage that keeps one (an EV's charge)", dev.Name)
				return
			}
			stored = i
		}
	}
	if stored < 0 {
		n.errorf("arrival_charge", "device %s stores nothing with a physical range; arrival_charge applies to a storage (an EV's charge)", dev.Name)
		return
	}
	p := &props[stored]
	var v float64
	switch x := raw.(type) {
	case string:
		pct, isPct := strings.CutSuffix(strings.TrimSpace(x), "%")
		f, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
		if !isPct || err != nil || f < 0 || f > 100 {
			n.errorf("arrival_charge", "arrival_charge = %q: want a number (%s) or a percentage of the capacity such as \"40%%\"", x, p.Unit)
			return
		}
		if p.Max == nil {
			n.errorf("arrival_charge", "arrival_charge = %q: a percentage needs the device's capacity; give it in %s", x, p.Name)
			return
		}
		v = f / 100 * *p.Max
	default:
		f, isNum := asNumber(raw)
		if !isNum {
			n.errorf("arrival_charge", "want a number (%s) or a percentage such as \"40%%\", got %s", p.Unit, typeName(raw))
			return
		}
		v = f
	}
	if p.Min != nil && v < *p.Min || p.Max != nil && v > *p.Max || v != v {
		n.errorf("arrival_charge", "arrival_charge = %g is outside %s's range [%s]", v, p.Name, rangeText(p))
		return
	}
	dev.Plug.Charge = &v
	for i := 1; i < len(dev.Away); i++ {
		if dev.Away[i-1] && !dev.Away[i] {
			if p.Reset == nil {
				p.Reset = map[int]float64{}
			}
			p.Reset[i] = v
		}
	}
}

// rangeText writes a property's range, "0, 60".
func rangeText(p *devices.Property) string {
	lo, hi := "−∞", "∞"
	if p.Min != nil {
		lo = strconv.FormatFloat(*p.Min, 'g', -1, 64)
	}
	if p.Max != nil {
		hi = strconv.FormatFloat(*p.Max, 'g', -1, 64)
	}
	return lo + ", " + hi
}

// awayGoals refuses a timed rule on what a device with a plugged-in
// window stores whose time falls while the car is away: after its
// departure and before its arrival (a goal at the departure itself is
// the usual one, "charge geq 80% before 07:30" with departure =
// "07:30"). Nothing can charge the car there, and the goal the user
// means is at the departure.
func (r *homeReader) awayGoals() {
	for ri, toks := range r.ruleToks {
		if ri >= len(r.h.Rules) {
			continue
		}
		rule := &r.h.Rules[ri]
		if rule.Prefix != devices.Before && rule.Prefix != devices.At && rule.Prefix != devices.Within {
			continue
		}
		for di := range r.h.Devices {
			dev := &r.h.Devices[di]
			if dev.Plug == nil || !dev.Affects(rule.Location, rule.Property) {
				continue
			}
			for _, tok := range toks {
				m, ok := r.clockOf(tok)
				if !ok || dev.Plug.Plugged(m) || m%1440 == dev.Plug.Departure {
					continue
				}
				r.hs.src.errorf(r.hs.rules[ri], "rule %q: %s is away at %s (%s): nothing can charge it then; give the goal at or before its departure (%s)", rule.Text, dev.Name, fmtClock(m), awayText(dev.Plug), fmtClock(dev.Plug.Departure))
				break
			}
		}
	}
}

// tripGoals reads a goal "PROPERTY geq|gt VALUE before TIME" on what a
// car stores as holding at TIME where the car comes back
// (arrival_charge) after the horizon's start and at or before TIME, and
// no device ever lowers what it stores: the goal counts from the charge
// the car comes back with. Read as "at any boundary up to TIME" it would
// be met by a charge held before the trip (yesterday's car, not the one
// that leaves at TIME); from the last arrival on the charge never falls,
// so "at TIME" is that window's reading, and the energy planner's.
func (r *homeReader) tripGoals() {
	for ri := range r.h.Rules {
		rule := &r.h.Rules[ri]
		if rule.Prefix != devices.Before || rule.Rel != devices.Geq && rule.Rel != devices.Gt {
			continue
		}
		pi := r.h.Property(rule.Location, rule.Property)
		if pi < 0 || r.h.Properties[pi].Drift < 0 {
			continue
		}
		back := false
		for i := range r.h.Properties[pi].Reset {
			back = back || i <= rule.T1
		}
		if back && !r.lowers(rule.Location, rule.Property) {
			rule.Prefix = devices.At
		}
	}
}

// lowers reports whether a device of the home can lower property p at
// loc: an action, in any slot length, with a negative effect on it.
func (r *homeReader) lowers(loc, p string) bool {
	for di := range r.h.Devices {
		d := &r.h.Devices[di]
		if !d.Affects(loc, p) {
			continue
		}
		for _, a := range d.Actions {
			effs := slices.Clone(a.Effects)
			for _, e := range a.ByLength {
				effs = append(effs, e...)
			}
			for _, e := range effs {
				if e.Property == p && e.Delta < 0 {
					return true
				}
			}
		}
	}
	return false
}

// clockOf returns the clock minute of a rule's time token: an "HH:MM",
// or a slot number's boundary on the horizon.
func (r *homeReader) clockOf(tok string) (int, bool) {
	if b, err := strconv.Atoi(tok); err == nil {
		if b < 0 || b > r.hz.Slots {
			return 0, false
		}
		return r.ck.start + r.ck.slotStart(b), true
	}
	m, err := parseClock(tok)
	return m, err == nil
}

// awayText describes a device's window for errors and reports.
func awayText(w *devices.PlugWindow) string {
	return fmt.Sprintf("plugged in from %s to %s", fmtClock(w.Arrival), fmtClock(w.Departure))
}
