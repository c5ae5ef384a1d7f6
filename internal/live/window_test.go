package live

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/plancheck"
	energystreet "github.com/hearth-dcop/hearth/devices/street"
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
	path := windowStreet(t, strings.NewReplacer(windowEdit...))
	away := func(now time.Time, plugged bool) ([]bool, map[int]float64, bool) {
		t.Helper()
		h := &pluggedAt(t, path, now, plugged).Neighbourhood.Homes[0]
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

// TestPluggedWindowEnergy: the same car in an energy home (planner =
// "energy"): home early at 17:10 it is available from slot 0 and comes
// back with no charge of the file's (it is home, its charge read live);
// away at 20:10 slot 0 is unavailable, and it comes back at 19:00
// (boundary 23) with its arrival_charge of 10 kWh, which the plan holds
// there, the checker accepting it.
func TestPluggedWindowEnergy(t *testing.T) {
	path := windowStreet(t, strings.NewReplacer(append(windowEdit, "background_kw = 0.4", "background_kw = 0.4\nplanner = \"energy\"")...))
	storage := func(now time.Time, plugged bool) *energy.Home {
		t.Helper()
		_, ms, err := energystreet.Split(pluggedAt(t, path, now, plugged))
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != 1 || len(ms[0].Home.Storage) != 1 {
			t.Fatalf("%d energy homes", len(ms))
		}
		return ms[0].Home
	}
	h := storage(time.Date(2026, 11, 26, 17, 10, 0, 0, time.Local), true)
	if st := h.Storage[0]; !st.Available[0] || len(st.Arrivals) != 0 || st.Initial != 20 {
		t.Errorf("home early at 17:10: available in slot 0 %v, arrivals %+v, initial %g; want available, none, 20 kWh read live", st.Available[0], st.Arrivals, st.Initial)
	}
	h = storage(time.Date(2026, 11, 26, 20, 10, 0, 0, time.Local), false)
	st := h.Storage[0]
	if st.Available[0] || !st.Available[1] || len(st.Arrivals) != 1 || st.Arrivals[0] != (energy.Arrival{Index: 23, Energy: 10}) {
		t.Fatalf("away at 20:10: available %v, arrivals %+v; want slot 0 away, 1 plugged, back with 10 kWh at boundary 23", st.Available, st.Arrivals)
	}
	p, err := energy.Solve(context.Background(), h, energy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := plancheck.Check(h, p).Err(); err != nil {
		t.Fatal(err)
	}
	if p.Energy[0][23] != 10 || p.Energy[0][11] < 40-1e-4 {
		t.Errorf("the car holds %g kWh at 07:00 and %g at its arrival, want at least 40 and 10", p.Energy[0][11], p.Energy[0][23])
	}
}

// windowEdit gives alder's EV of testdata/street a plugged-in window
// (arrival 18:30, departure 07:00) and a charge of 10 kWh at arrival.
var windowEdit = []string{"initial = { charge = 15.0 }", "initial = { charge = 15.0 }\narrival = \"18:30\"\ndeparture = \"07:00\"\narrival_charge = 10"}

// windowStreet copies testdata/street into a temporary folder, alder.toml
// edited by edit, and returns the street file's path.
func windowStreet(t *testing.T, edit *strings.Replacer) string {
	t.Helper()
	return copyStreet(t, func(f, s string) string {
		if f == "alder.toml" {
			return edit.Replace(s)
		}
		return s
	})
}

// copyStreet copies the live test street (testdata/street) into a
// temporary folder, each file's text passed through edit with the file's
// name, and returns the street file's path.
func copyStreet(t *testing.T, edit func(file, text string) string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"street.toml", "alder.toml", "dogwood.toml"} {
		b, err := os.ReadFile(filepath.Join("testdata", "street", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(edit(f, string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "street.toml")
}

// pluggedAt loads the street at path as alder's live inputs see it at
// now, its EV reported at 20 kWh, plugged in or not.
func pluggedAt(t *testing.T, path string, now time.Time, plugged bool) *config.Config {
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
	return got
}
