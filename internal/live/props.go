package live

import (
	"math"
	"slices"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
)

// whatProps marks the route of a device's own state topic that carries
// the properties the device moves besides a stored energy: the room
// temperature under the radiator or heat pump that heats it, a water
// heater's water, a programme's progress. A plan that started from the
// file's values instead would heat a room that is warm already, or run
// again a dishwasher half-way through its programme.
const whatProps = "props"

// propKey names a property of a home.
type propKey struct{ home, location, name string }

// movedProps returns the properties device d of h moves, by name, other
// than its stored energy (stored, read as "soc").
func movedProps(h *devices.Home, d int, stored string) map[string]int {
	dev := &h.Devices[d]
	out := map[string]int{}
	for p, pr := range h.Properties {
		if pr.Name == stored || !dev.Affects(pr.Location, pr.Name) {
			continue
		}
		if _, dup := out[pr.Name]; !dup {
			out[pr.Name] = p
		}
	}
	return out
}

// storedOf returns the stored property of device name of home hi of
// cfg ("" when it stores none).
func storedOf(cfg *config.Config, hi int, name string) string {
	for _, dl := range cfg.Devices[hi] {
		if dl.Device == name {
			return dl.Property
		}
	}
	return ""
}

// propRoutes routes every device's own state topic to the properties it
// moves (whatProps).
func (in *Inputs) propRoutes(add func(string, route)) {
	for hi := range in.cfg.Neighbourhood.Homes {
		h := &in.cfg.Neighbourhood.Homes[hi]
		for d := range h.Devices {
			name := h.Devices[d].Name
			if len(movedProps(h, d, storedOf(in.cfg, hi, name))) > 0 {
				add(StateTopic(in.prefix, h.Name, name), route{k: key{h.Name, name, whatProps}})
			}
		}
		if hi < len(in.cfg.Sensors) {
			for _, s := range in.cfg.Sensors[hi] {
				pk := propKey{h.Name, s.Location, s.Property}
				add(s.Source.Topic, route{k: sensorKey(pk), src: &s.Source, prop: &pk})
			}
		}
	}
}

// sensorKey names a [[sensor]]'s live value among the inputs' keys
// (for the once-only "no live state yet" report).
func sensorKey(pk propKey) key {
	return key{pk.home, "", "sensor " + pk.location + " " + pk.name}
}

// setSensor takes the value v of a [[sensor]]'s own topic, received at
// at, under the range check setProps applies.
func (in *Inputs) setSensor(r route, v float64, at time.Time) {
	pk := *r.prop
	for hi := range in.cfg.Neighbourhood.Homes {
		h := &in.cfg.Neighbourhood.Homes[hi]
		if h.Name != pk.home {
			continue
		}
		if p := h.Property(pk.location, pk.name); p >= 0 {
			pr := &h.Properties[p]
			if pr.Min != nil && pr.Max != nil {
				slack := 0.05 * (*pr.Max - *pr.Min)
				if v < *pr.Min-slack || v > *pr.Max+slack {
					in.log.Warn("live state out of the property's range; ignored", "home", pk.home, "sensor", pk.location+" "+pk.name, "value", v, "min", *pr.Min, "max", *pr.Max)
					return
				}
			}
		}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.props == nil {
		in.props = map[propKey]*reading{}
	}
	in.props[pk] = &reading{v: v, at: at}
	delete(in.missing, r.k)
}

// setProps takes the values of st for the properties device k.device of
// home k.home moves. A value outside the property's physical range by
// more than 5 % of it is a fault of the publisher, logged and ignored.
func (in *Inputs) setProps(k key, st State) {
	hi := -1
	for i := range in.cfg.Neighbourhood.Homes {
		if in.cfg.Neighbourhood.Homes[i].Name == k.home {
			hi = i
		}
	}
	if hi < 0 {
		return
	}
	h := &in.cfg.Neighbourhood.Homes[hi]
	d := h.Device(k.device)
	if d < 0 {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.props == nil {
		in.props = map[propKey]*reading{}
	}
	for name, p := range movedProps(h, d, storedOf(in.cfg, hi, k.device)) {
		v, ok := st.Values[name]
		if !ok {
			continue
		}
		pr := &h.Properties[p]
		if pr.Min != nil && pr.Max != nil {
			slack := 0.05 * (*pr.Max - *pr.Min)
			if v < *pr.Min-slack || v > *pr.Max+slack {
				in.log.Warn("live state out of the property's range; ignored", "home", k.home, "device", k.device, "property", name, "value", v, "min", *pr.Min, "max", *pr.Max)
				continue
			}
		}
		pk := propKey{k.home, pr.Location, pr.Name}
		if old, had := in.props[pk]; had && old.at.After(st.Time) {
			continue // an older message of another device moving it
		}
		in.props[pk] = &reading{v: v, at: st.Time}
	}
}

// applyProps puts the live values of home h's properties (setProps) in
// place of the file's initial values, snapped to their resolution and
// kept inside their physical range. A reading older than stale is used
// and reported once; past forget the file's value stands, reported once.
// A property no device reports keeps the file's value silently: many
// appliances publish no state; a [[sensor]] that names its topic and has
// not reported is reported once, as a device's missing state is.
func (in *Inputs) applyProps(cfg *config.Config, h *devices.Home, now time.Time, notes []Note) []Note {
	if hi := slices.IndexFunc(cfg.Neighbourhood.Homes, func(x devices.Home) bool { return x.Name == h.Name }); hi >= 0 && hi < len(cfg.Sensors) {
		for _, s := range cfg.Sensors[hi] {
			pk := propKey{h.Name, s.Location, s.Property}
			k := sensorKey(pk)
			if _, ok := in.props[pk]; ok || in.missing[k] {
				continue
			}
			in.missing[k] = true
			file := 0.0
			if p := h.Property(s.Location, s.Property); p >= 0 {
				file = h.Properties[p].Initial
			}
			notes = append(notes, Note{Msg: "no live state yet; planning from the file's value", Args: []any{"home", h.Name, "property", s.Location + " " + s.Property, "topic", s.Source.Topic, "file", file}})
		}
	}
	for p := range h.Properties {
		pr := &h.Properties[p]
		r, ok := in.props[propKey{h.Name, pr.Location, pr.Name}]
		if !ok {
			continue
		}
		age := now.Sub(r.at)
		if age > cfg.Live.Forget {
			if !r.reported {
				r.reported = true
				notes = append(notes, Note{Msg: "live state too old; planning from the file's value", Args: []any{"home", h.Name, "property", pr.Location + " " + pr.Name, "age", age.Round(time.Second).String(), "file", pr.Initial}})
			}
			continue
		}
		if age > cfg.Live.Stale && !r.reported {
			r.reported = true
			notes = append(notes, Note{Msg: "live state stale; planning from the last good value", Args: []any{"home", h.Name, "property", pr.Location + " " + pr.Name, "value", r.v, "age", age.Round(time.Second).String()}})
		}
		v := snap(r.v, pr.Scale)
		if pr.Min != nil {
			v = math.Max(v, *pr.Min)
		}
		if pr.Max != nil {
			v = math.Min(v, *pr.Max)
		}
		if step, ok := programmeStep(h, p); ok {
			// A programme stopped part-way through a slot: the plan gives
			// it the whole slots that finish it, which it could not
			// (its last slot would pass 100 %); the device stops at
			// its end, drawing less than planned.
			v = math.Max(*pr.Max-math.Ceil((*pr.Max-v)/step-1e-9)*step, *pr.Min)
		}
		pr.Initial = v
	}
	return notes
}

// programmeStep returns the progress one slot of property p's programme
// makes, and whether p is one: a property with a physical range and no
// drift that every action moving it moves by the same amount up (a
// dishwasher's, washer's or dryer's progress, 50 % an hour). The model
// moves it in whole slots and never past its top, so only values a whole
// number of slots below the top can finish.
func programmeStep(h *devices.Home, p int) (float64, bool) {
	pr := &h.Properties[p]
	if pr.Min == nil || pr.Max == nil || pr.Drift != 0 {
		return 0, false
	}
	step := 0.0
	for d := range h.Devices {
		dev := &h.Devices[d]
		if !dev.Affects(pr.Location, pr.Name) {
			continue
		}
		for _, a := range dev.Actions {
			e, _ := a.Effect(pr.Name)
			switch {
			case e == 0:
			case e < 0 || step != 0 && math.Abs(e-step) > 1e-9:
				return 0, false
			default:
				step = e
			}
		}
	}
	return step, step > 0
}
