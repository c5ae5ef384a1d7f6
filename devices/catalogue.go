package devices

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Entry is an appliance model of the catalogue. Power is in kW (the
// average draw while the action runs) and effects and drifts are per hour;
// Instantiate scales them to the slot length.
type Entry struct {
	Kind        string
	Description string
	// Location is where the device acts by default; "" means its own
	// name (the properties it changes belong to the device itself).
	Location string
	Actions  []Action
	// Exact are the device's physical actions where Actions are
	// quantised levels (Device.Exact), per hour like Actions.
	Exact      []Action
	Properties []EntryProperty
	// CycleCost is the device's default Device.CycleCost (currency per
	// kWh through it).
	CycleCost float64
}

// EntryProperty is a property a catalogue device changes, with the
// defaults that make a home work without a sensor declaration.
type EntryProperty struct {
	// At is "" for a property of the device itself (an EV's charge), or
	// the entry's Location for a property of the place (a room's
	// temperature).
	At      string
	Name    string
	Unit    string
	Initial float64
	// Drift is the change per hour whatever the device does.
	Drift float64
	Scale float64
	// Min and Max, when set, are physical bounds added as passive rules
	// whenever a rule mentions the property.
	Min, Max *float64
}

func bound(v float64) *float64 { return &v }

// Sizes names the SHDS house types, the variants of the SHDS entries.
var Sizes = []string{"small", "medium", "large"}

// Kinds returns the names of every catalogue entry, sorted.
func Kinds() []string {
	var out []string
	for _, e := range builtin {
		out = append(out, e.Kind)
	}
	if d, err := ParseDictionary(shdsDictionary); err == nil {
		for name, dev := range d[0] {
			if dev.Type == "actuator" {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Lookup returns the catalogue entry kind. size picks the SHDS house type
// of the nine SHDS appliance models ("small", "medium" or "large"; ""
// means medium) and is ignored by the others.
func Lookup(kind, size string) (Entry, error) {
	for _, e := range builtin {
		if e.Kind == kind {
			return e, nil
		}
	}
	ht := 1
	if size != "" {
		ht = slices.Index(Sizes, size)
		if ht < 0 {
			return Entry{}, fmt.Errorf("size %q: want one of %s", size, strings.Join(Sizes, ", "))
		}
	}
	d, err := ParseDictionary(shdsDictionary)
	if err != nil {
		return Entry{}, err
	}
	dev, ok := d[ht][kind]
	if !ok || dev.Type != "actuator" {
		return Entry{}, fmt.Errorf("unknown device kind %q (known: %s)", kind, strings.Join(Kinds(), ", "))
	}
	return shdsEntry(d[ht], kind, dev), nil
}

// shdsUnits are the natural units of the SHDS properties; laundry, dish
// and bake progress count minutes of programme (a goal of 60 is one hour
// of running).
var shdsUnits = map[string]string{
	"temperature_heat": "°C", "temperature_cool": "°C", "water_temp": "°C",
	"cleanliness": "%", "charge": "%",
	"laundry_wash": "min", "laundry_dry": "min", "dish_wash": "min", "bake": "min",
}

// shdsBounds are the physical bounds of SHDS properties (the data set's
// passive rules for them, where those are fixed).
var shdsBounds = map[string][2]*float64{
	"charge":       {bound(0), bound(100)},
	"cleanliness":  {bound(0), bound(100)},
	"laundry_wash": {bound(0), bound(60)},
	"laundry_dry":  {bound(0), bound(60)},
	"dish_wash":    {bound(0), bound(60)},
	"bake":         {bound(0), nil},
}

// shdsEntry turns a dictionary actuator into a catalogue entry; its
// properties are those of the sensors at its location or named after it.
func shdsEntry(devs HouseType, name string, dev DictDevice) Entry {
	id := func(v float64) float64 { return v }
	d := dev.Actuator(name, id, id)
	e := Entry{Kind: name, Description: "SHDS " + dev.Subtype + " (DeviceDictionary.json)", Location: dev.Location, Actions: d.Actions}
	seen := map[string]bool{}
	for _, a := range d.Actions {
		for _, eff := range a.Effects {
			if seen[eff.Property] {
				continue
			}
			seen[eff.Property] = true
			at := ""
			s, ok := devs.Sensor(name, eff.Property)
			if !ok {
				at = dev.Location
				if s, ok = devs.Sensor(dev.Location, eff.Property); !ok {
					continue
				}
			}
			b := shdsBounds[eff.Property]
			e.Properties = append(e.Properties, EntryProperty{
				At: at, Name: eff.Property, Unit: shdsUnits[eff.Property],
				Initial: *devs[s].CurrentState, Scale: 0.1, Min: b[0], Max: b[1],
			})
		}
	}
	return e
}

// Instantiate makes a device called name from the entry, at location loc
// ("" for the entry's default), for slots of slotMinutes, and returns the
// properties it brings with their initial values. Properties of the
// entry's default location move with the device when loc is given.
func (e *Entry) Instantiate(name, loc string, slotMinutes int) (Device, []Property) {
	if loc == "" {
		loc = e.Location
	}
	if loc == "" {
		loc = name
	}
	f := float64(slotMinutes) / 60
	d := Device{Name: name, Kind: e.Kind, Location: loc, CycleCost: e.CycleCost}
	_, storage := sizable[e.Kind]
	perSlot := func(acts []Action) []Action {
		var out []Action
		for _, a := range acts {
			act := Action{Name: a.Name, Power: a.Power}
			for _, eff := range a.Effects {
				delta := eff.Delta * f
				if storage {
					delta = e.conservative(eff.Property, delta)
				}
				act.Effects = append(act.Effects, Effect{Property: eff.Property, Delta: delta})
			}
			out = append(out, act)
		}
		SortActions(out)
		return out
	}
	d.Actions, d.Exact = perSlot(e.Actions), perSlot(e.Exact)
	var props []Property
	for _, p := range e.Properties {
		at := name
		if p.At != "" {
			at = loc
		}
		props = append(props, Property{Location: at, Name: p.Name, Initial: p.Initial, Drift: p.Drift * f, Scale: p.Scale, Unit: p.Unit, Min: p.Min, Max: p.Max})
	}
	return d, props
}

// conservative rounds a storage device's change of property name per
// slot to whole steps of the property's resolution, never in the plan's
// favour: charging stores at most what the efficiency gives (rounded
// down), discharging takes at least what it costs (rounded up). Rounded
// to the nearest step, a 5 kW charge at 95% (4.75 kWh an hour) would
// store 4.8 kWh, and a 13.5 kWh battery could not take two charges from
// 4 kWh, forcing a plan that charges and discharges in turn.
func (e *Entry) conservative(name string, delta float64) float64 {
	for _, p := range e.Properties {
		if p.Name != name || p.Scale <= 0 {
			continue
		}
		steps := delta / p.Scale
		if math.Abs(steps-math.Round(steps)) < 1e-9 {
			steps = math.Round(steps)
		} else {
			steps = math.Floor(steps)
		}
		return math.Round(steps*p.Scale*1e9) / 1e9
	}
	return delta
}

// Bounds returns the entry's physical bounds of property name as passive
// rules at location loc.
func (e *Entry) Bounds(name, loc string) []Rule {
	var out []Rule
	for _, p := range e.Properties {
		if p.Name != name {
			continue
		}
		if p.Min != nil {
			out = append(out, Rule{Location: loc, Property: name, Rel: Geq, Goal: *p.Min})
		}
		if p.Max != nil {
			out = append(out, Rule{Location: loc, Property: name, Rel: Leq, Goal: *p.Max})
		}
	}
	for i := range out {
		out[i].Text = strings.TrimPrefix(out[i].String(), "0 ")
	}
	return out
}
