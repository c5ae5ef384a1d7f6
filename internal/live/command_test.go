package live

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/devices/report"
)

// TestCommands: the command of the slot that holds the clock, its expiry,
// and the stored energy the plan expects (the catalogue's 3.3 and 6.6 kWh
// per hour of ev_wallbox_7kw, added by hand).
func TestCommands(t *testing.T) {
	now := time.Date(2026, 11, 26, 5, 40, 0, 0, time.Local)
	in := newInputs(t, "alder", now)
	r, hz, _, err := in.Load(street, homesolve.Overrides{}, now)
	if err != nil {
		t.Fatal(err)
	}
	actions := make([]string, hz.Slots)
	kw := make([]float64, hz.Slots)
	for i := range actions {
		actions[i], kw[i] = "off", 0
	}
	actions[0], kw[0] = "charge_16a", 3.7
	actions[1], kw[1] = "charge_32a", 7.4
	hp := report.HomePlan{Home: "alder", Devices: []report.DevicePlan{{Device: "ev", Actions: actions, KW: kw}}}
	p := NewPlan("2026-11-26T0540", now, hz, r.Model(), 0, hp)
	want := []float64{15, 18.3, 24.9, 24.9}
	for i, w := range want {
		if got := p.Stored["ev"][i]; math.Abs(got-w) > 1e-9 {
			t.Errorf("stored at boundary %d: %g, want %g", i, got, w)
		}
	}
	for _, tc := range []struct {
		at     time.Time
		action string
		kw     float64
		start  string
	}{
		{now, "charge_16a", 3.7, "05:00"},
		{now.Add(20 * time.Minute), "charge_32a", 7.4, "06:00"},
		{now.Add(80 * time.Minute), "off", 0, "07:00"},
	} {
		pubs, err := p.Commands("hearth", "alder", tc.at, 5*time.Minute)
		if err != nil || len(pubs) != 1 || pubs[0].Topic != "hearth/home/alder/command/ev" || !pubs[0].Retained {
			t.Fatalf("%v: %+v %v", tc.at, pubs, err)
		}
		c, err := ParseCommand(pubs[0].Payload)
		if err != nil {
			t.Fatal(err)
		}
		start, _ := time.Parse(time.RFC3339, c.SlotStart)
		end, _ := time.Parse(time.RFC3339, c.SlotEnd)
		exp, _ := time.Parse(time.RFC3339, c.Expires)
		if c.Action != tc.action || c.PowerKW != tc.kw || c.EnergyKWh != tc.kw /* an hour */ || start.In(time.Local).Format("15:04") != tc.start ||
			end.Sub(start) != time.Hour || exp.Sub(end) != 5*time.Minute || c.Round != "2026-11-26T0540" {
			t.Errorf("%v: command %+v", tc.at, c)
		}
	}
	if pubs, err := p.Commands("hearth", "alder", now.Add(30*time.Hour), time.Minute); err != nil || len(pubs) != 0 {
		t.Errorf("past the horizon: %v %v", pubs, err)
	}
	short := p
	short.Plan.Devices = []report.DevicePlan{{Device: "ev", Actions: actions[:1], KW: kw[:1]}}
	if _, err := short.Commands("hearth", "alder", now.Add(time.Hour), time.Minute); err == nil {
		t.Error("a plan shorter than the horizon gave a command")
	}
	if _, err := ParseCommand([]byte(`{"created":"x"}`)); err == nil {
		t.Error("a command with a bad time accepted")
	}
}

// TestCommandsExact: on automatic levels (the live example street) a
// refined plan names a wallbox's exact current ("13a", not one of the
// compiled levels); its command carries that current and the plan's
// expected charge adds what it stores — 13 A at 230 V is 2.99 kW, 89 %
// of it stored (2.6611 kWh an hour), worked by hand — so that a car on
// course is not taken for one off the plan.
func TestCommandsExact(t *testing.T) {
	now := time.Date(2026, 11, 26, 5, 40, 0, 0, time.Local)
	cfg, err := config.Load(liveStreet)
	if err != nil {
		t.Fatal(err)
	}
	in := NewInputs(cfg, "hearth", "alder", fixedClock(t, now), nil)
	r, hz, _, err := in.Load(liveStreet, homesolve.Overrides{}, now)
	if err != nil {
		t.Fatal(err)
	}
	actions := make([]string, hz.Slots)
	kw := make([]float64, hz.Slots)
	for i := range actions {
		actions[i] = "off"
	}
	actions[0], kw[0] = "13a", 2.99
	actions[1], kw[1] = "charge_15a", 3.45
	hp := report.HomePlan{Home: "alder", Devices: []report.DevicePlan{{Device: "ev", Actions: actions, KW: kw}}}
	p := NewPlan("2026-11-26T0540", now, hz, r.Model(), 0, hp)
	ev := r.Model().Homes[0].Devices[0]
	if slices.ContainsFunc(ev.Actions, func(a devices.Action) bool { return a.Name == "13a" }) {
		t.Fatal("13a is a compiled level: the test needs an exact-only current")
	}
	c15 := 0.0
	for _, a := range ev.Actions {
		if a.Name == "charge_15a" {
			c15, _ = a.EffectIn("charge", r.Model().Horizon, 1)
		}
	}
	start := p.Stored["ev"][0]
	want := []float64{start, start + 2.6611, start + 2.6611 + c15}
	for i, w := range want {
		if got := p.Stored["ev"][i]; math.Abs(got-w) > 1e-6 {
			t.Errorf("stored at boundary %d: %g, want %g", i, got, w)
		}
	}
	if c15 <= 0 || c15 > 0.89*3.45 {
		t.Errorf("charge_15a stores %g an hour, want a quantised figure up to %g", c15, 0.89*3.45)
	}
	pubs, err := p.Commands("hearth", "alder", now, 5*time.Minute)
	if err != nil || len(pubs) != 1 {
		t.Fatal(pubs, err)
	}
	c, err := ParseCommand(pubs[0].Payload)
	if err != nil || c.Action != "13a" || c.PowerKW != 2.99 {
		t.Errorf("command %+v, %v", c, err)
	}
}

// TestExpectationFrom: the course a plan expects of a stored energy,
// worked by hand — a whole slot's course from the slot's start for a
// round made ahead of it, and from the instant a round made inside the
// slot read the state (40 kWh at 06:40, 42 by 07:00) for one made there;
// a reading then is on course, not 2/3 of the slot's 2 kWh behind.
func TestExpectationFrom(t *testing.T) {
	six := time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return six.Add(time.Duration(m) * time.Minute) }
	for _, tc := range []struct {
		name string
		from time.Time
		t    time.Time
		want float64
		ok   bool
	}{
		{"ahead, at the start", at(-5), at(0), 40, true},
		{"ahead, 40 minutes in", at(-5), at(40), 40 + 2*40.0/60, true},
		{"ahead, second slot", at(-5), at(90), 42 + 1.5, true},
		{"inside, at its instant", at(40), at(40), 40, true},
		{"inside, half-way to the end", at(40), at(50), 41, true},
		{"inside, before its instant", at(40), at(30), 0, false},
		{"inside, second slot", at(40), at(90), 42 + 1.5, true},
		{"no from", time.Time{}, at(30), 41, true},
	} {
		e := expectation{start: six, slot: time.Hour, values: []float64{40, 42, 45}, from: tc.from}
		got, ok := e.at(tc.t)
		if ok != tc.ok || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: %g %v, want %g %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
