package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/devices"
)

// Live is the [live] table: `hearth run` as a home energy manager. With it
// a home reads its devices' state and the published series over MQTT,
// plans on a rolling horizon (slot 0 is the slot that holds the clock),
// runs a round every slot and when its inputs move, and publishes the
// current slot's command for every device (internal/live has the topics).
type Live struct {
	// On is set when the file has a [live] table.
	On bool
	// Stale is the age past which a state reading is reported stale and,
	// past twice it, replaced by the file's value.
	Stale time.Duration
	// Forget is the age past which the last good reading gives way to
	// the file's value.
	Forget time.Duration
	// OffPlanKWh is how far a stored energy (an EV's charge, a battery's
	// soc) may drift from the plan before the home asks for a round.
	OffPlanKWh float64
	// CommandGrace is added to a command's slot end to give its expiry.
	CommandGrace time.Duration
}

// Defaults of [live].
const (
	DefaultStale        = 30 * time.Minute
	DefaultForget       = 6 * time.Hour
	DefaultOffPlanKWh   = 1.0
	DefaultCommandGrace = 5 * time.Minute
)

// Source is where one live value of a device comes from when it is not
// the device's own state topic: an MQTT topic holding a plain number (or
// true/false) or a JSON document, with the value at Field (dot-separated;
// "" for a plain payload) in Unit.
type Source struct {
	Topic string
	// Unit is "kWh" or "%" (of the property's full value) for a stored
	// energy; "" for plugged.
	Unit  string
	Field string
}

// DeviceLive is what a device's [[device]] table says about its live
// state: the property its stored energy is (an EV's charge, a battery's
// soc; "" when the device stores none), and the topics that override
// the device's own state topic.
type DeviceLive struct {
	Device string
	// Property is the stored property, Full its full value (capacity)
	// and Resolution its step.
	Property   string
	Full       float64
	Resolution float64
	// EV is set for catalogue EV chargers, which report plugged.
	EV      bool
	SoC     *Source
	Plugged *Source
}

// SensorLive is a [[sensor]] that names where its live value comes
// from: a thermostat or a tank probe that is not a device of the plan.
// The value is in the property's unit; a round plans from it in place of
// the sensor's initial value.
type SensorLive struct {
	Location, Property string
	// Source's Unit is unused: the value is in the property's unit.
	Source Source
}

// sensorLive reads a sensor's topic and field keys.
func (r *homeReader) sensorLive(n *node, loc, prop string) {
	topic, ok := n.str("topic")
	if !ok {
		if n.has("field") {
			n.errorf("field", "field reads a JSON field of the sensor's topic: give topic = \"…\" too")
		}
		return
	}
	s := SensorLive{Location: loc, Property: prop, Source: Source{Topic: topic}}
	if err := checkSubscription(topic); err != nil {
		n.errorf("topic", "%v", err)
	}
	if v, ok := n.str("field"); ok {
		if v == "" || slices.Contains(strings.Split(v, "."), "") {
			n.errorf("field", "%q: write a JSON field path such as \"temperature\" or \"data.temp\"", v)
		}
		s.Source.Field = v
	}
	r.hs.sensors = append(r.hs.sensors, s)
}

// SeriesKey names a series a live home reads: a home's "pv" or
// "background" forecast, or the neighbourhood's "import" or "export"
// prices (Home "").
type SeriesKey struct{ Home, What string }

// seriesFile reads a key naming a CSV series file (pv_file,
// background_file, import_file, export_file) into cfg.SeriesFiles.
func (l *loader) seriesFile(n *node, k string, sk SeriesKey, files map[SeriesKey]string) {
	s, ok := n.str(k)
	if !ok {
		return
	}
	if s == "" {
		n.errorf(k, "give the path of a CSV file of \"time,value\" rows")
		return
	}
	files[sk] = l.file(s)
}

// LoadOptions tune LoadWith.
type LoadOptions struct {
	// Rolling, when set, moves slot 0 to Start (minutes after midnight):
	// clock times in rules, windows and price periods count from there,
	// per-slot series (per_slot prices, background_kw and pv_kw arrays)
	// are read as a profile that starts at the file's [horizon] start and
	// repeats every horizon, and a rule whose time lies beyond the horizon
	// is left out (a later round includes it).
	Rolling bool
	Start   int
}

// LoadWith is Load with options.
func LoadWith(path string, o LoadOptions) (*Config, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	l := &loader{dir: dirOf(path), read: readFile, opts: o}
	cfg := l.neighbourhood(path, data)
	if len(l.errs) > 0 {
		return nil, l.errs.sorted()
	}
	return cfg, nil
}

// errBeyond marks a rule time past the end of a rolling horizon.
var errBeyond = errors.New("beyond the horizon")

// rotate turns a per-slot profile that starts at the file's start into
// one that starts at the rolling start. On a rolling horizon of uneven
// slots a per-slot profile has no meaning (slot t covers other hours
// every round), so the array at t's key is refused.
func (l *loader) rotate(v []float64, ck clock, t *node, key string) []float64 {
	if !l.opts.Rolling || len(v) == 0 || ck.slot <= 0 {
		return v
	}
	if ck.bounds != nil {
		t.errorf(key, "a live horizon of uneven slots ([horizon] segments) lays its slots from the clock every round, so a per-slot array would move with it: give one number for every slot, price periods, or a CSV file with timestamps")
		return v
	}
	shift := ((l.fileStart-ck.start)%1440 + 1440) % 1440
	k := (1440 - shift) % 1440 / ck.slot
	out := make([]float64, len(v))
	for t := range v {
		out[t] = v[(t+k)%len(v)]
	}
	return out
}

// live reads [live].
func (l *loader) live(root *node) Live {
	lv := Live{Stale: DefaultStale, Forget: DefaultForget, OffPlanKWh: DefaultOffPlanKWh, CommandGrace: DefaultCommandGrace}
	t, ok := root.table("live")
	if !ok {
		return lv
	}
	lv.On = true
	dur := func(k string, dst *time.Duration) {
		s, ok := t.str(k)
		if !ok {
			return
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 || d > 7*24*time.Hour {
			t.errorf(k, "%q is not a duration between 1s and 168h (write e.g. \"30m\")", s)
			return
		}
		*dst = d
	}
	dur("stale", &lv.Stale)
	dur("forget", &lv.Forget)
	if lv.Forget < lv.Stale {
		t.errorf("forget", "forget (%s) must be at least stale (%s)", lv.Forget, lv.Stale)
	}
	dur("command_grace", &lv.CommandGrace)
	if v, ok := t.num("off_plan_kwh"); ok {
		if v <= 0 || v > 1e4 {
			t.errorf("off_plan_kwh", "%g: want a positive energy in kWh, e.g. 1.0", v)
		} else {
			lv.OffPlanKWh = v
		}
	}
	t.done("stale", "forget", "off_plan_kwh", "command_grace")
	return lv
}

// deviceLive reads a device's soc and plugged keys. props are the
// properties the device brings, e the catalogue entry (nil for a custom
// device).
func (r *homeReader) deviceLive(n *node, name string, props []devices.Property, e *devices.Entry) {
	dl := DeviceLive{Device: name}
	if e != nil {
		for _, p := range e.Properties {
			if p.Max != nil && p.Unit == "kWh" {
				dl.Property, dl.Full, dl.Resolution = p.Name, *p.Max, p.Scale
			}
		}
		dl.EV = strings.HasPrefix(e.Kind, "ev_")
	}
	for _, p := range props {
		if p.Name == dl.Property {
			dl.Resolution = p.Scale
		}
	}
	if t, ok := n.table("soc"); ok {
		if dl.Property == "" {
			n.errorf("soc", "device %s stores no energy (soc applies to home_battery and the EV chargers)", name)
		} else {
			dl.SoC = r.source(t, true)
		}
	}
	if t, ok := n.table("plugged"); ok {
		if !dl.EV {
			n.errorf("plugged", "device %s is not an EV charger (plugged applies to ev_wallbox_7kw and ev_wallbox_11kw)", name)
		} else {
			dl.Plugged = r.source(t, false)
		}
	}
	if dl.Property != "" || dl.EV {
		r.hs.live = append(r.hs.live, dl)
	}
}

// source reads { topic = "…", unit = "%", field = "a.b" }.
func (r *homeReader) source(t *node, energy bool) *Source {
	s := &Source{}
	if v, ok := t.str("topic"); ok {
		if err := checkSubscription(v); err != nil {
			t.errorf("topic", "%v", err)
		}
		s.Topic = v
	} else {
		t.errorf("topic", "give the MQTT topic the value is published on: topic = \"…\"")
	}
	if v, ok := t.str("field"); ok {
		if v == "" || slices.Contains(strings.Split(v, "."), "") {
			t.errorf("field", "%q: write a JSON field path such as \"soc\" or \"data.soc\"", v)
		}
		s.Field = v
	}
	keys := []string{"topic", "field"}
	if energy {
		keys = append(keys, "unit")
		s.Unit = "kWh"
		if v, ok := t.str("unit"); ok {
			if v != "kWh" && v != "%" {
				t.errorf("unit", "%q: want \"kWh\" or \"%%\" (of the device's capacity)", v)
			}
			s.Unit = v
		}
	}
	t.done(keys...)
	return s
}

// checkSubscription refuses topics a client cannot subscribe to by name:
// wildcards, empty levels, a leading '$'.
func checkSubscription(s string) error {
	if err := checkTopic(s); err != nil {
		return fmt.Errorf("topic %w", err)
	}
	return nil
}
