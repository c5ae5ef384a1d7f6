package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/devices/homesim"
)

// unevenStreet is two compiled homes on slots of 15 minutes, then hours:
// an EV whose goal at 06:30 falls inside the hour 06:00–07:00, a
// battery, and a dishwasher due by 22:00; the EV and the battery keep
// the catalogue's fixed levels, and the street no improvement phase, so
// that sim's plan is the protocol's, which solve's must equal.
const unevenStreet = `[horizon]
start = "17:00"
segments = [{ slot = "15m", count = 8 }, { slot = "1h", count = 12 }]
[prices]
default = 0.30
periods = [{ from = "23:00", to = "06:00", price = 0.12 }]
[coordination]
windows = [["17:00", "19:00"], ["19:00", "23:00"]]
[objective]
peak = 0.05
[solver]
improve = -1
[[home]]
name = "a"
background_kw = 0.5
[[home.device]]
name = "ev"
kind = "ev_wallbox_7kw"
power_steps = "fixed"
initial = { charge = 10.0 }
rules = ["charge geq 30 before 06:30"]
[[home.device]]
name = "bat"
kind = "home_battery"
power_steps = "fixed"
[[home]]
name = "b"
background_kw = 0.8
[[home.device]]
name = "dw"
kind = "dishwasher"
rules = ["progress geq 100 before 22:00"]
`

// TestSimUnevenCompiled: hearth sim and hearth solve plan compiled homes
// on uneven slots alike (sim passes the plan through the checker before
// it prints it); the result lists each slot's length, every goal is
// kept, and the energy is each slot's load times its own hours.
func TestSimUnevenCompiled(t *testing.T) {
	file := filepath.Join(t.TempDir(), "uneven.toml")
	if err := os.WriteFile(file, []byte(unevenStreet), 0o600); err != nil {
		t.Fatal(err)
	}
	type result struct {
		Objective      *float64  `json:"objective"`
		Optimal        bool      `json:"optimal"`
		SlotLengths    []int     `json:"slot_lengths"`
		Slots          []string  `json:"slots"`
		EnergyKWh      float64   `json:"energy_kwh"`
		LoadKW         []float64 `json:"load_kw"`
		RulesSatisfied int       `json:"rules_satisfied"`
		RulesTotal     int       `json:"rules_total"`
	}
	var lengths []int
	for range 8 {
		lengths = append(lengths, 15)
	}
	for range 12 {
		lengths = append(lengths, 60)
	}
	var got []result
	for _, cmd := range []string{"sim", "solve"} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{cmd, file, "--json"}, &out, &errb); code != exitOK {
			t.Fatalf("%s: exit %d: %s", cmd, code, errb.String())
		}
		var r result
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, out.String())
		}
		if r.Objective == nil || !r.Optimal || r.RulesTotal == 0 || r.RulesSatisfied != r.RulesTotal {
			t.Errorf("%s: result %+v", cmd, r)
		}
		if !slices.Equal(r.SlotLengths, lengths) || len(r.Slots) != 20 || r.Slots[8] != "19:00" || r.Slots[19] != "06:00" {
			t.Errorf("%s: slots %v, lengths %v", cmd, r.Slots, r.SlotLengths)
		}
		e := 0.0
		for i, kw := range r.LoadKW {
			e += kw * float64(lengths[i]) / 60
		}
		if math.Abs(e-r.EnergyKWh) > 1e-6 {
			t.Errorf("%s: energy %v kWh, the loads times their hours %v", cmd, r.EnergyKWh, e)
		}
		got = append(got, r)
	}
	if math.Abs(*got[0].Objective-*got[1].Objective) > 1e-6 {
		t.Errorf("sim's objective %v, solve's %v", *got[0].Objective, *got[1].Objective)
	}
	// home-sim steps through the same uneven slots: a whole idle day (no
	// agent sends commands) records each slot at its own length, and
	// every home pays its background times each slot's hours and price.
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"home-sim", "-c", file, "--all", "--now", "2026-11-26T17:00:00Z",
		"--speed", "100000", "--noise", "0", "--json"}, &out, &errb); code != exitOK {
		t.Fatalf("home-sim on uneven slots: exit %d: %s", code, errb.String())
	}
	var d homesim.Day
	if err := json.Unmarshal(out.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if !d.Complete || !slices.Equal(d.Minutes, lengths) || len(d.Homes) != 2 {
		t.Fatalf("home-sim: complete %v, lengths %v, %d homes", d.Complete, d.Minutes, len(d.Homes))
	}
	for _, h := range d.Homes {
		bg := map[string]float64{"a": 0.5, "b": 0.8}[h.Home]
		bill := 0.0
		for k, st := range h.Trace.Slots {
			hours := float64(lengths[k]) / 60
			if math.Abs(st.SimulatedS-hours*3600) > 1e-6 || math.Abs(st.NetKWh-bg*hours) > 1e-9 {
				t.Errorf("home-sim %s slot %d: %g s simulated, %g kWh, want %g h and %g kWh", h.Home, k, st.SimulatedS, st.NetKWh, hours, bg*hours)
			}
			price := 0.30
			if clock := st.Start.UTC().Hour(); clock >= 23 || clock < 6 {
				price = 0.12
			}
			bill += price * bg * hours
		}
		if math.Abs(h.Bill-bill) > 1e-9 {
			t.Errorf("home-sim %s pays %.6f, want %.6f", h.Home, h.Bill, bill)
		}
	}
}
