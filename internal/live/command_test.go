package live

import (
	"math"
	"testing"
	"time"

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
		if c.Action != tc.action || c.PowerKW != tc.kw || start.In(time.Local).Format("15:04") != tc.start ||
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
