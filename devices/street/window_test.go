package street_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/plancheck"
	"github.com/hearth-dcop/hearth/devices/street"
)

// TestWindowEnergyHome: an energy home's EV with a plugged-in window
// (arrival 18:30, departure 06:30 on hourly slots from 17:00) is
// unavailable in the slots it is away in, whole slots it arrives or
// leaves in included (0, 1 and 13); its plan charges only while it is
// there and meets its goal by the departure, passing the checker, and
// the same plan charging in an away slot (the cheapest) is rejected.
func TestWindowEnergyHome(t *testing.T) {
	const text = `[horizon]
start = "17:00"
slots = 14
[prices]
default = 0.30
periods = [{ from = "17:00", to = "19:00", price = 0.02 }, { from = "06:00", to = "07:00", price = 0.02 }, { from = "23:00", to = "05:00", price = 0.12 }]
[[home]]
name = "fir"
planner = "energy"
background_kw = 0.4
[[home.device]]
name = "ev"
kind = "ev_wallbox_11kw"
arrival = "18:30"
departure = "06:30"
initial = { charge = 15.0 }
rules = ["charge geq 40 before 06:30"]
`
	cfg, err := config.Parse("w.toml", []byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, ms, err := street.Split(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || len(ms[0].Home.Storage) != 1 {
		t.Fatalf("split: %d energy homes", len(ms))
	}
	h := ms[0].Home
	st := &h.Storage[0]
	var away []int
	for s, ok := range st.Available {
		if !ok {
			away = append(away, s)
		}
	}
	if !slices.Equal(away, []int{0, 1, 13}) {
		t.Fatalf("unavailable in %v, want [0 1 13]", away)
	}
	p, err := energy.Solve(context.Background(), h, energy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range away {
		if p.Charge[0][s] > 1e-6 {
			t.Errorf("the plan charges %g kW in slot %d, while the car is away", p.Charge[0][s], s)
		}
	}
	if p.Energy[0][14] < 40-1e-6 || len(p.Missed) > 0 {
		t.Errorf("the car holds %g kWh at 07:00 (missed %v), want at least 40", p.Energy[0][14], p.Missed)
	}
	if err := plancheck.Check(h, p).Err(); err != nil {
		t.Fatalf("the plan is rejected: %v", err)
	}
	p.Charge[0][0] = 2
	rep := plancheck.Check(h, p)
	if rep.OK() || !slices.ContainsFunc(rep.Violations, func(v string) bool { return strings.Contains(v, "slot 0: acts while unavailable") }) {
		t.Errorf("charging in slot 0 while away passes: %v", rep.Violations)
	}
}
