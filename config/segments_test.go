package config_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/devices/street"
)

// segmentsStreet is a street of one energy home on uneven slots: four
// quarter hours from 06:00, then three hours (boundaries 06:00 06:15
// 06:30 06:45 07:00 08:00 09:00 10:00).
const segmentsStreet = `[horizon]
start = "06:00"
segments = [{ slot = "15m", count = 4 }, { slot = "1h", count = 3 }]
[prices]
default = 0.2
periods = [{ from = "06:30", to = "08:00", price = 0.5 }]
[coordination]
windows = [["06:00", "07:00"], ["07:00", "10:00"]]
[[home]]
name = "h"
planner = "energy"
pv_kw = [0, 0, 1, 1, 2, 3, 0]
[[home.device]]
name = "ev"
kind = "ev_wallbox_7kw"
initial = { charge = 10.0 }
rules = ["charge geq 20 before 07:30", "charge geq 12 at 06:45"]
`

// TestSegments works one horizon of uneven slots by hand: the price
// period 06:30–08:00 covers slots 2, 3 (quarter hours) and 4 (the hour
// 07:00–08:00); a goal before 07:30 falls inside the hour slot 07:00–
// 08:00 and applies at its end, boundary 5; a goal at 06:45 is boundary
// 3; the windows cut at boundary 4 (07:00); the energy home's model
// takes 0.25 h for the quarter hours and 1 h for the hours.
func TestSegments(t *testing.T) {
	cfg, err := config.Parse("n.toml", []byte(segmentsStreet), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Neighbourhood
	hz := n.Horizon
	if hz.Slots != 7 || !slices.Equal(hz.Lengths, []int{15, 15, 15, 15, 60, 60, 60}) {
		t.Fatalf("horizon %+v", hz)
	}
	if want := []float64{0.2, 0.2, 0.5, 0.5, 0.5, 0.2, 0.2}; !slices.Equal(n.Prices, want) {
		t.Errorf("prices %v, want %v", n.Prices, want)
	}
	if want := []devices.Window{{From: 0, To: 4}, {From: 4, To: 7}}; !slices.Equal(n.Windows, want) {
		t.Errorf("windows %v, want %v", n.Windows, want)
	}
	var goals []int
	for _, r := range n.Homes[0].Rules {
		if r.Active() {
			goals = append(goals, r.T1)
		}
	}
	if !slices.Equal(goals, []int{5, 3}) {
		t.Errorf("goal boundaries %v, want [5 3]", goals)
	}
	_, ms, err := street.Split(cfg)
	if err != nil {
		t.Fatal(err)
	}
	eh := ms[0].Home
	if want := []float64{0.25, 0.25, 0.25, 0.25, 1, 1, 1}; !slices.Equal(eh.Dt, want) {
		t.Errorf("dt %v, want %v", eh.Dt, want)
	}
	var idx []int
	for _, g := range eh.Storage[0].Goals {
		idx = append(idx, g.Index)
	}
	if !slices.Equal(idx, []int{5, 3}) {
		t.Errorf("energy goals at %v, want [5 3]", idx)
	}

	every := strings.Replace(segmentsStreet, `windows = [["06:00", "07:00"], ["07:00", "10:00"]]`, `every = "30m"`, 1)
	cfg, err = config.Parse("n.toml", []byte(every), nil)
	if err == nil {
		t.Fatalf("every 30m on hour slots accepted: windows %v", cfg.Neighbourhood.Windows)
	}
	every = strings.Replace(every, `"30m"`, `"1h"`, 1)
	cfg, err = config.Parse("n.toml", []byte(every), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []devices.Window{{From: 0, To: 4}, {From: 4, To: 5}, {From: 5, To: 6}, {From: 6, To: 7}}; !slices.Equal(cfg.Neighbourhood.Windows, want) {
		t.Errorf("every 1h: windows %v, want %v", cfg.Neighbourhood.Windows, want)
	}
	if got := fmt.Sprint(report.SlotTimes(cfg.Neighbourhood.Horizon)); got != "[06:00 06:15 06:30 06:45 07:00 08:00 09:00]" {
		t.Errorf("slot times %s", got)
	}
}

// TestSegmentsErrors: every fault of a segmented horizon names its file,
// line and key.
func TestSegmentsErrors(t *testing.T) {
	seg := `segments = [{ slot = "15m", count = 4 }, { slot = "1h", count = 3 }]`
	tests := []struct {
		name, nb string
		line     int
		key, msg string
	}{
		{"with slot", "[horizon]\nslot = \"1h\"\n" + seg + "\n" + energyHome, 3, "horizon.segments", "not both"},
		{"bad slot", "[horizon]\nsegments = [{ slot = \"15m\", count = 4 },\n  { slot = \"90s\", count = 2 }]\n" + energyHome, 3, "horizon.segments[1].slot", "whole number of minutes"},
		{"zero count", "[horizon]\nsegments = [{ slot = \"15m\", count = 0 }]\n" + energyHome, 2, "horizon.segments[0].count", "at least one slot"},
		{"no count", "[horizon]\nsegments = [{ slot = \"15m\" }]\n" + energyHome, 2, "horizon.segments[0]", "count"},
		{"empty", "[horizon]\nsegments = []\n" + energyHome, 2, "horizon.segments", "at least one"},
		{"unknown key", "[horizon]\nsegments = [{ slot = \"15m\", cuont = 4 }]\n" + energyHome, 2, "horizon.segments[0].cuont", `did you mean "count"`},
		{"period off boundary", "[horizon]\nstart = \"06:00\"\n" + seg + "\n[prices]\nperiods = [{ from = \"07:30\", to = \"09:00\", price = 1 }]\n" + energyHome, 5, "prices.periods[0].from", "07:00–08:00"},
		{"window off boundary", "[horizon]\nstart = \"06:00\"\n" + seg + "\n[coordination]\nwindows = [[\"06:00\", \"06:40\"]]\n" + energyHome, 5, "coordination.windows[0]", "not a slot boundary"},
		{"every cuts", "[horizon]\nstart = \"06:00\"\n" + seg + "\n[coordination]\nevery = \"45m\"\n" + energyHome, 5, "coordination.every", "cuts a slot"},
		{"per slot", "[horizon]\n" + seg + "\n[prices]\nper_slot = [1, 2, 3]\n" + energyHome, 4, "prices.per_slot", "3 prices for 7 slots"},
		{"live per-slot array", "[horizon]\n" + seg + "\n[live]\n[[home]]\nname = \"c\"\nbackground_kw = [1, 1, 1, 1, 1, 1, 1]\n", 6, "home[0].background_kw", "per-slot array"},
	}
	for _, tc := range tests {
		_, err := config.Parse("/x/n.toml", []byte(tc.nb), nil)
		var es config.Errors
		if !errors.As(err, &es) {
			t.Errorf("%s: error %v, want config.Errors", tc.name, err)
			continue
		}
		found := false
		for _, e := range es {
			if e.File == "/x/n.toml" && (tc.line == 0 || e.Line == tc.line) && e.Key == tc.key && strings.Contains(e.Msg, tc.msg) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: got\n%v\nwant /x/n.toml:%d: %s: …%s…", tc.name, err, tc.line, tc.key, tc.msg)
		}
	}
}

const energyHome = `[[home]]
name = "h"
planner = "energy"
[[home.device]]
name = "b"
kind = "home_battery"
`

// FuzzSegments: no segments value makes the loader panic; one it
// accepts gives a valid model whose slots have the lengths it lists.
func FuzzSegments(f *testing.F) {
	for _, s := range []string{
		`[{ slot = "15m", count = 16 }, { slot = "1h", count = 20 }]`,
		`[{ slot = "1m", count = 1 }]`,
		`[{ slot = "24h", count = 2 }, { slot = "5m", count = 3 }]`,
		`[{ slot = "15m" }]`,
		`[]`,
		`"15m"`,
	} {
		f.Add(s, "07:30")
	}
	f.Fuzz(func(t *testing.T, segs, at string) {
		text := fmt.Sprintf("[horizon]\nsegments = %s\n%s[[home.device]]\nname = \"ev\"\nkind = \"ev_wallbox_7kw\"\nrules = [%q]\n", segs, energyHome, "charge geq 1 before "+at)
		cfg, err := config.Parse("n.toml", []byte(text), nil)
		if err != nil {
			var es config.Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %v is not a non-empty config.Errors", err)
			}
			return
		}
		n := cfg.Neighbourhood
		if err := n.Validate(); err != nil {
			t.Fatalf("accepted an invalid model: %v", err)
		}
		hz := n.Horizon
		if len(hz.Lengths) != hz.Slots || hz.SlotMinutes != hz.Lengths[0] {
			t.Fatalf("horizon %+v", hz)
		}
		if _, _, err := street.Split(cfg); err != nil && !errors.Is(err, street.ErrNotEnergy) {
			t.Fatalf("split: %v", err)
		}
		// The same home compiled: each slot length gets the battery's
		// own effects, and the model stays valid.
		cfg, err = config.Parse("n.toml", []byte(strings.Replace(text, "planner = \"energy\"\n", "", 1)), nil)
		if err != nil {
			return
		}
		if err := cfg.Neighbourhood.Validate(); err != nil {
			t.Fatalf("accepted an invalid compiled model: %v", err)
		}
	})
}

// TestSegmentsCompiled works a compiled battery's effects on uneven
// slots by hand: 5 kW at 95% stores 5·0.95·0.25 = 1.1875 kWh in a
// quarter hour and 4.75 kWh in an hour, rounded down to the 0.1 kWh
// resolution per slot length: 1.1 and 4.7 (not 4·1.1 = 4.4); 5 kW out
// takes 5/0.95·0.25 = 1.316 and 5.263 kWh, rounded up: 1.4 and 5.3. A
// custom heater's effect per hour and a drift scale with each slot's
// hours, and a goal at 06:30 inside the hour 06:00–07:00 is checked at
// its end.
func TestSegmentsCompiled(t *testing.T) {
	const text = `[horizon]
start = "05:30"
segments = [{ slot = "15m", count = 2 }, { slot = "1h", count = 2 }]
[[home]]
name = "c"
[[home.device]]
name = "bat"
kind = "home_battery"
max_charge_kw = 5
max_discharge_kw = 5
charge_efficiency = 0.95
discharge_efficiency = 0.95
power_steps = 1
[[home.device]]
name = "heater"
actions = [{ name = "off", power_kw = 0 }, { name = "on", power_kw = 2, effects = { heat = 4 } }]
drift = { heat = -1 }
range = { heat = [0, 20] }
rules = ["heat geq 1 before 06:30"]
`
	cfg, err := config.Parse("c.toml", []byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Neighbourhood
	hz := n.Horizon
	h := &n.Homes[0]
	bat := &h.Devices[h.Device("bat")]
	effect := func(d *devices.Device, power float64, p string, slot int) float64 {
		t.Helper()
		for k := range d.Actions {
			if d.Actions[k].Power == power {
				v, _ := d.Actions[k].EffectIn(p, hz, slot)
				return math.Round(v*1e9) / 1e9
			}
		}
		t.Fatalf("device %s has no action of %g kW: %+v", d.Name, power, d.Actions)
		return 0
	}
	for _, tc := range []struct {
		power float64
		slot  int
		want  float64
	}{{5, 0, 1.1}, {5, 1, 1.1}, {5, 2, 4.7}, {5, 3, 4.7}, {-5, 0, -1.4}, {-5, 3, -5.3}} {
		if got := effect(bat, tc.power, "soc", tc.slot); got != tc.want {
			t.Errorf("battery at %g kW in slot %d stores %g kWh, want %g", tc.power, tc.slot, got, tc.want)
		}
	}
	heater := &h.Devices[h.Device("heater")]
	heat := &h.Properties[h.Property("heater", "heat")]
	for slot, want := range []float64{1, 1, 4, 4} {
		if got := effect(heater, 2, "heat", slot); got != want {
			t.Errorf("heater in slot %d: %g, want %g", slot, got, want)
		}
		if got := heat.DriftIn(hz, slot); math.Abs(got-(-want/4)) > 1e-12 {
			t.Errorf("drift in slot %d: %g, want %g", slot, got, -want/4)
		}
	}
	for _, r := range h.Rules {
		if r.Property == "heat" && r.Prefix == devices.Before && r.T1 != 3 {
			t.Errorf("goal before 06:30 at boundary %d, want 3 (07:00)", r.T1)
		}
	}
}
