package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hearth-dcop/hearth/devices"
)

// windowKeys are the keys of a car's daily plugged-in window on a
// [[device]] (docs/toml.md, "[[device]]"). The names are evcc's: its
// charging plans end at the car's "departure"; arrival is when it is
// plugged in again.
var windowKeys = []string{"arrival", "departure"}

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
	for i, k := range windowKeys {
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
