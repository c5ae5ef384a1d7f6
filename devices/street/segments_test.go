package street_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices/plancheck"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/devices/street"
)

// TestReportSegments: a street of energy homes on uneven slots reports
// each slot's length, labels the slots by their own start and prints the
// span to the last slot's end; the EV's goal at 06:30 (inside the hour
// 06:00–07:00) is met at 07:00, and every home's plan passes the checker.
func TestReportSegments(t *testing.T) {
	text := `name = "uneven"
[horizon]
start = "03:00"
segments = [{ slot = "15m", count = 4 }, { slot = "1h", count = 3 }, { slot = "30m", count = 2 }]
[prices]
default = 0.3
periods = [{ from = "04:00", to = "06:00", price = 0.1 }]
[[home]]
name = "fir"
planner = "energy"
background_kw = 0.5
[[home.device]]
name = "ev"
kind = "ev_wallbox_11kw"
initial = { charge = 20.0 }
rules = ["charge geq 40 before 06:30"]
`
	cfg, err := config.Parse("u.toml", []byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := street.Report(context.Background(), cfg, street.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{15, 15, 15, 15, 60, 60, 60, 30, 30}; !slices.Equal(h.SlotLengths, want) {
		t.Errorf("slot lengths %v, want %v", h.SlotLengths, want)
	}
	if want := []string{"03:00", "03:15", "03:30", "03:45", "04:00", "05:00", "06:00", "07:00", "07:30"}; !slices.Equal(h.Slots, want) {
		t.Errorf("slots %v, want %v", h.Slots, want)
	}
	var b strings.Builder
	if err := h.WriteText(&b, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := "9 slots (4×15 min, 3×60 min, 2×30 min), 03:00–08:00"; !strings.Contains(b.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, b.String())
	}
	_, ms, err := street.Split(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := street.PlanAlone(context.Background(), ms, street.Options{}); err != nil {
		t.Fatal(err)
	}
	p := ms[0].Plan
	if err := plancheck.Check(ms[0].Home, p).Err(); err != nil {
		t.Fatal(err)
	}
	// Boundary 7 is 07:00: the goal holds there; the cheap hours
	// (04:00–06:00, slots 4 and 5) carry the charge.
	if e := p.Energy[0][7]; e < 40-1e-6 {
		t.Errorf("ev holds %g kWh at 07:00, want at least 40", e)
	}
	if c := p.Charge[0][4] + p.Charge[0][5]; c < 1 {
		t.Errorf("ev charges %g kW in the cheap hours, want the charge there: %v", c, p.Charge[0])
	}
}
