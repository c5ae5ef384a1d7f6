package live

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
)

// TestPluggedWindow: an EV with a plugged-in window (arrival 18:30,
// departure 07:00) is planned from the window for the slots ahead, and
// from its plugged state for the current slot: home early at 17:10, it
// may charge from slot 0 (17:00–18:00) on, though the window has it
// away until 18:30 — it stays until its departure; away at 20:10, slot
// 0 is away and the window's later slots are not, its goal kept (not
// left out as a car with no window's is). The charge it comes back with
// (arrival_charge) is planned at the next arrival, but not at one the
// car has already made.
func TestPluggedWindow(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"street.toml", "alder.toml", "dogwood.toml"} {
		b, err := os.ReadFile(filepath.Join("testdata", "street", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "alder.toml" {
			b = []byte(strings.Replace(string(b), "initial = { charge = 15.0 }", "initial = { charge = 15.0 }\narrival = \"18:30\"\ndeparture = \"07:00\"\narrival_charge = 10", 1))
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "street.toml")
	away := func(now time.Time, plugged bool) ([]bool, map[int]float64, bool) {
		t.Helper()
		cfg, err := config.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		in := NewInputs(cfg, "hearth", "alder", fixedClock(t, now), nil)
		in.Handle(StateTopic("hearth", "alder", "ev"), []byte(fmt.Sprintf(`{"time":%q,"charge":20,"plugged":%v}`, now.Format(time.RFC3339), plugged)))
		got, _, _, err := in.LoadConfig(path, now)
		if err != nil {
			t.Fatal(err)
		}
		h := &got.Neighbourhood.Homes[0]
		goal := slices.ContainsFunc(h.Rules, func(r devices.Rule) bool { return strings.HasPrefix(r.Text, "charge geq 40") })
		return h.Devices[0].Away, h.Properties[h.Property("ev", "charge")].Reset, goal
	}
	// 17:10, plugged in: slot 0 is 17:00–18:00, slot 14 07:00–08:00.
	a, reset, goal := away(time.Date(2026, 11, 26, 17, 10, 0, 0, time.Local), true)
	if len(a) != 24 || slices.Contains(a[:14], true) || !a[14] || !a[23] || !goal || len(reset) != 0 {
		t.Errorf("home early at 17:10: away %v, resets %v, goal kept %v; want slots 0–13 plugged, 14 on away, no arrival charge (the car is home), the goal kept", a, reset, goal)
	}
	// 20:10, away: slot 0 is 20:00–21:00.
	a, reset, goal = away(time.Date(2026, 11, 26, 20, 10, 0, 0, time.Local), false)
	if len(a) != 24 || !a[0] || a[1] || a[10] || !a[11] || !a[22] || a[23] || !goal || len(reset) != 1 || reset[23] != 10 {
		t.Errorf("away at 20:10: away %v, resets %v, goal kept %v; want slot 0 away, 1–10 plugged, 11–22 away, back with 10 kWh at 19:00 (index 23), the goal kept", a, reset, goal)
	}
}
