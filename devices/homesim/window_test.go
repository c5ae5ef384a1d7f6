package homesim_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/devices/homesim"
)

// TestWindowTrips: an EV with a plugged-in window (arrival 18:30,
// departure 06:30) gets it as its default trip — it leaves at its
// departure and comes back at its arrival — where an EV without one
// leaves at the horizon's end; a --car spec still replaces it. The
// simulated car is away at 17:00, refuses a command to charge then, and
// is plugged in again by 19:00.
func TestWindowTrips(t *testing.T) {
	src := strings.Replace(street(t), "initial = { charge = 10.0 }\nrules = [\"charge geq 20 before 21:00\"]", "initial = { charge = 10.0 }\narrival = \"18:30\"\ndeparture = \"06:30\"\nrules = [\"charge geq 20 before 21:00\"]", 1)
	if src == street(t) {
		t.Fatal("the street's EV is not where the test expects it")
	}
	n := load(t, src)
	got := homesim.DefaultTrips(n, 0)
	want := []homesim.Trip{{Device: "ev", Leave: 6*60 + 30, Return: 18*60 + 30}}
	if !slices.EqualFunc(got, want, func(a, b homesim.Trip) bool {
		return a.Device == b.Device && a.Leave == b.Leave && a.Return == b.Return && a.ArriveWith == nil
	}) {
		t.Fatalf("default trips %+v, want %+v", got, want)
	}
	// Without the window: away from the horizon's end (21:00) to its
	// start (17:00).
	if got := homesim.DefaultTrips(load(t, street(t)), 0); len(got) != 1 || got[0].Leave != 21*60 || got[0].Return != 17*60 {
		t.Errorf("default trips without a window %+v, want 21:00–17:00", got)
	}
	// With arrival_charge the car comes back with it.
	withCharge := load(t, strings.Replace(src, "departure = \"06:30\"", "departure = \"06:30\"\narrival_charge = 7.5", 1))
	if got := homesim.DefaultTrips(withCharge, 0); len(got) != 1 || got[0].ArriveWith == nil || *got[0].ArriveWith != 7.5 {
		t.Errorf("default trips with arrival_charge %+v, want back with 7.5 kWh", got)
	}
	// A --car spec replaces the window's trip.
	spec, err := homesim.ParseTripSpec("ev=08:00-17:00")
	if err != nil {
		t.Fatal(err)
	}
	if got := homesim.ApplyTrips(got, []homesim.TripSpec{spec}, func(string) bool { return true }); len(got) != 1 || got[0].Leave != 8*60 {
		t.Errorf("trips with --car %+v, want the spec's", got)
	}

	h, err := homesim.NewHome(n, 0, day, day, homesim.Options{PV: pv0, Trips: homesim.DefaultTrips(n, 0)})
	if err != nil {
		t.Fatal(err)
	}
	ev := n.Homes[0].Device("ev")
	if _, plugged := h.State(ev); plugged == nil || *plugged {
		t.Fatalf("at 17:00 the car is plugged in (%v), want away until 18:30", plugged)
	}
	h.Command("ev", cmd(0, "charge_32a", 7.4))
	h.Advance(day.Add(time.Hour))
	tr := h.Trace()
	if got := tr.Slots[0].Devices[ev].InKWh; got != 0 {
		t.Errorf("the car away drew %g kWh in slot 0", got)
	}
	h.Advance(day.Add(2 * time.Hour))
	if _, plugged := h.State(ev); plugged == nil || !*plugged {
		t.Errorf("at 19:00 the car is not plugged in")
	}
}
