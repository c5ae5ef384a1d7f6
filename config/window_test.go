package config_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
)

// windowHome is a home whose EV is plugged in from 18:30 to 06:30.
const windowHome = `name = "alder"
background_kw = 0.4

[[device]]
name = "ev"
kind = "ev_wallbox_7kw"
arrival = "18:30"
departure = "06:30"
initial = { charge = 15.0 }
rules = ["charge geq 40 before 06:30"]
`

// away lists the slots marked away.
func awaySlots(d *devices.Device) []int {
	var out []int
	for t, a := range d.Away {
		if a {
			out = append(out, t)
		}
	}
	return out
}

// TestWindowKeys: arrival and departure lay the slots the car is away
// in, a slot it arrives or leaves in counting as away as a whole, on
// hourly, quarter-hour and uneven horizons; a window that holds the
// whole horizon leaves Away nil.
func TestWindowKeys(t *testing.T) {
	tests := []struct {
		name, horizon, home string
		away                []int // nil: Away nil
	}{
		// 17:00–07:00 hourly: 17–18 and 18–19 (arrival 18:30), 06–07
		// (departure 06:30).
		{"hourly", "start = \"17:00\"\nslots = 14\n", windowHome, []int{0, 1, 13}},
		// Quarter hours from 17:00: away until 18:30 (slots 0..5), from
		// 06:30 (slot 54) to 07:00 (slot 56).
		{"quarter hours", "start = \"17:00\"\nslots = 56\nslot = \"15m\"\n", windowHome, []int{0, 1, 2, 3, 4, 5, 54, 55}},
		// Uneven: 8 quarter hours (17:00–19:00) then hours to 07:00.
		{"segments", "start = \"17:00\"\nsegments = [{ slot = \"15m\", count = 8 }, { slot = \"1h\", count = 12 }]\n", windowHome, []int{0, 1, 2, 3, 4, 5, 19}},
		// A daytime window, not wrapping: plugged 09:00–16:00 on a day
		// from 06:00.
		{"daytime", "start = \"06:00\"\nslots = 24\n", strings.NewReplacer(`arrival = "18:30"`, `arrival = "09:00"`, `departure = "06:30"`, `departure = "16:00"`, "before 06:30", "before 16:00").Replace(windowHome),
			[]int{0, 1, 2, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
		// Plugged in over the whole horizon: nothing away.
		{"whole horizon", "start = \"19:00\"\nslots = 11\n", strings.Replace(windowHome, "before 06:30", "before 06:00", 1), nil},
	}
	for _, tc := range tests {
		nb := "homes = [\"alder.toml\"]\n[horizon]\n" + tc.horizon
		cfg, err := config.Parse("/x/n.toml", []byte(nb), files{"/x/alder.toml": tc.home}.read)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		d := &cfg.Neighbourhood.Homes[0].Devices[0]
		if d.Plug == nil {
			t.Errorf("%s: no plugged-in window", tc.name)
			continue
		}
		if tc.away == nil {
			if d.Away != nil {
				t.Errorf("%s: away in %v, want never", tc.name, awaySlots(d))
			}
			continue
		}
		if got := awaySlots(d); !slices.Equal(got, tc.away) {
			t.Errorf("%s: away in slots %v, want %v", tc.name, got, tc.away)
		}
		if err := cfg.Neighbourhood.Validate(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestWindowErrors: a window with one end, a time that is no clock
// time, arrival equal to departure, a window on a device that does not
// leave, a custom device with no off action, and a goal whose time
// falls while the car is away are each named at their file, line and
// key.
func TestWindowErrors(t *testing.T) {
	custom := `name = "alder"

[[device]]
name = "cart"
actions = [{ name = "slow", power_kw = 1, effects = { charge = 0.9 } }, { name = "fast", power_kw = 2, effects = { charge = 1.8 } }]
range = { charge = [0, 10] }
arrival = "18:00"
departure = "06:00"
`
	tests := []struct {
		name, home string
		line       int
		key, msg   string
	}{
		{"arrival alone", strings.Replace(windowHome, "departure = \"06:30\"\n", "", 1), 7, "device[0].arrival", "give both arrival and departure"},
		{"departure alone", strings.Replace(windowHome, "arrival = \"18:30\"\n", "", 1), 7, "device[0].departure", "give both arrival and departure"},
		{"bad time", strings.Replace(windowHome, "\"18:30\"", "\"6pm\"", 1), 7, "device[0].arrival", "want a daily clock time \"HH:MM\""},
		{"slot number", strings.Replace(windowHome, "\"06:30\"", "13", 1), 8, "device[0].departure", "want a string"},
		{"equal", strings.Replace(windowHome, "\"18:30\"", "\"06:30\"", 1), 8, "device[0].departure", "both 06:30"},
		{"midnight both ways", strings.NewReplacer(`"18:30"`, `"00:00"`, `"06:30"`, `"24:00"`, "before 06:30", "before 05:00").Replace(windowHome), 8, "device[0].departure", "both 00:00"},
		{"battery", "name = \"alder\"\n\n[[device]]\nname = \"b\"\nkind = \"home_battery\"\narrival = \"18:00\"\ndeparture = \"06:00\"\n", 6, "device[0].arrival", "a home_battery does not leave"},
		{"dishwasher", "name = \"alder\"\n\n[[device]]\nname = \"dw\"\nkind = \"dishwasher\"\ndeparture = \"06:00\"\narrival = \"18:00\"\n", 7, "device[0].arrival", "a dishwasher does not leave"},
		{"no off action", custom, 7, "device[0].arrival", "no action that draws nothing"},
		{"goal while away", strings.Replace(windowHome, "before 06:30", "before 07:00", 1), 10, "device[0].rules[0]", "ev is away at 07:00 (plugged in from 18:30 to 06:30)"},
		{"goal at a slot while away", strings.Replace(windowHome, "before 06:30", "at 1", 1), 10, "device[0].rules[0]", "ev is away at 18:00"},
		{"home rule while away", strings.Replace(strings.Replace(windowHome, "rules = [\"charge geq 40 before 06:30\"]\n", "", 1), "background_kw = 0.4\n", "background_kw = 0.4\nrules = [\"ev charge geq 40 before 18:00\"]\n", 1), 3, "rules[0]", "ev is away at 18:00"},
	}
	for _, tc := range tests {
		_, err := config.Parse("/x/n.toml", []byte(neighbourhood("")), files{"/x/alder.toml": tc.home}.read)
		var es config.Errors
		if !errors.As(err, &es) {
			t.Errorf("%s: error %v, want config.Errors", tc.name, err)
			continue
		}
		found := false
		for _, e := range es {
			if strings.Contains(e.Msg, tc.msg) && e.File == "/x/alder.toml" && e.Line == tc.line && e.Key == tc.key {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: got\n%v\nwant /x/alder.toml:%d: %s: …%s…", tc.name, err, tc.line, tc.key, tc.msg)
		}
	}
	// A custom storage with an off action takes a window.
	ok := strings.Replace(custom, "actions = [", "actions = [{ name = \"off\", power_kw = 0 }, ", 1)
	cfg, err := config.Parse("/x/n.toml", []byte(neighbourhood("")), files{"/x/alder.toml": ok}.read)
	if err != nil {
		t.Fatalf("custom storage with off: %v", err)
	}
	if d := &cfg.Neighbourhood.Homes[0].Devices[0]; !slices.Equal(awaySlots(d), []int{0, 13}) {
		t.Errorf("custom storage away in %v, want [0 13]", awaySlots(d))
	}
}

// TestArrivalCharge: arrival_charge, in kWh or % of the capacity, resets
// the car's charge at the boundary each arrival inside the horizon ends
// on (the start of the first slot it is plugged in for whole) and is
// the window's charge for home-sim, in compiled and energy homes alike;
// without a window, under the SHDS indexing, outside the car's range or in another form
// it is refused at its key.
func TestArrivalCharge(t *testing.T) {
	for _, tc := range []struct{ key, want, planner string }{{`arrival_charge = 12.5`, "12.5", ""}, {`arrival_charge = "25%"`, "15", ""}, {`arrival_charge = "25%"`, "15", "planner = \"energy\"\n"}} {
		// A day from 06:00: the car leaves at 06:30 (slot 0 away) and
		// is back at 18:30 (slots 0 and 12 away): resets at 13, in
		// compiled and energy homes alike.
		home := strings.NewReplacer(`departure = "06:30"`, "departure = \"06:30\"\n"+tc.key, "before 06:30", "before 05:00", "background_kw = 0.4\n", "background_kw = 0.4\n"+tc.planner).Replace(windowHome)
		cfg, err := config.Parse("/x/n.toml", []byte("homes = [\"alder.toml\"]\n[horizon]\nstart = \"06:00\"\nslots = 24\n"), files{"/x/alder.toml": home}.read)
		if err != nil {
			t.Fatalf("%s: %v", tc.key, err)
		}
		h := &cfg.Neighbourhood.Homes[0]
		d := &h.Devices[0]
		p := &h.Properties[h.Property("ev", "charge")]
		if got := awaySlots(d); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}) {
			t.Fatalf("%s: away in %v", tc.key, got)
		}
		if len(p.Reset) != 1 || strconv.FormatFloat(p.Reset[13], 'g', -1, 64) != tc.want || d.Plug.Charge == nil || *d.Plug.Charge != p.Reset[13] {
			t.Errorf("%s: resets %v, window charge %v, want %s at index 13", tc.key, p.Reset, d.Plug.Charge, tc.want)
		}
	}
	tests := []struct {
		name, home, nb string
		line           int
		key, msg       string
	}{
		{"without a window", strings.NewReplacer("arrival = \"18:30\"\n", "", "departure = \"06:30\"\n", "arrival_charge = 10\n").Replace(windowHome), "", 7, "device[0].arrival_charge", "it needs arrival and departure"},
		{"above the capacity", strings.Replace(windowHome, "departure = \"06:30\"\n", "departure = \"06:30\"\narrival_charge = 61\n", 1), "", 9, "device[0].arrival_charge", "outside charge's range [0, 60]"},
		{"not a percentage", strings.Replace(windowHome, "departure = \"06:30\"\n", "departure = \"06:30\"\narrival_charge = \"half\"\n", 1), "", 9, "device[0].arrival_charge", "want a number (kWh) or a percentage"},
		{"shds", strings.Replace(windowHome, "departure = \"06:30\"\n", "departure = \"06:30\"\narrival_charge = 10\n", 1), "shds", 9, "device[0].arrival_charge", "needs full dynamics"},
	}
	for _, tc := range tests {
		nb := neighbourhood("")
		if tc.nb != "" {
			nb = neighbourhood("dynamics = \"shds\"\n")
		}
		_, err := config.Parse("/x/n.toml", []byte(nb), files{"/x/alder.toml": tc.home}.read)
		var es config.Errors
		if !errors.As(err, &es) {
			t.Errorf("%s: error %v, want config.Errors", tc.name, err)
			continue
		}
		if !slices.ContainsFunc(es, func(e *config.Error) bool {
			return strings.Contains(e.Msg, tc.msg) && e.File == "/x/alder.toml" && e.Line == tc.line && e.Key == tc.key
		}) {
			t.Errorf("%s: got\n%v\nwant /x/alder.toml:%d: %s: …%s…", tc.name, err, tc.line, tc.key, tc.msg)
		}
	}
}

// TestTripGoals: a goal "charge geq VALUE before TIME" on a car that
// comes back (arrival_charge) after the horizon's start and before TIME
// is read at TIME, counting from the charge it comes back with, where
// nothing lowers the charge (a catalogue EV, a custom storage that only
// charges); without an arrival charge, on a storage that can discharge
// or for another relation it keeps its reading, any boundary up to TIME.
func TestTripGoals(t *testing.T) {
	back := "departure = \"06:30\"\narrival_charge = 10\n"
	custom := func(effects string) string {
		return `name = "alder"

[[device]]
name = "ev"
actions = [{ name = "off", power_kw = 0 }, { name = "in", power_kw = 2, effects = { charge = 1.8 } }` + effects + `]
range = { charge = [0, 60] }
initial = { charge = 50.0 }
arrival = "18:30"
` + back + `rules = ["charge geq 40 before 06:30"]
`
	}
	for _, tc := range []struct {
		name, home string
		want       devices.Prefix
	}{
		{"ev back", strings.Replace(windowHome, "departure = \"06:30\"\n", back, 1), devices.At},
		{"ev without arrival charge", windowHome, devices.Before},
		{"ev, leq", strings.NewReplacer("departure = \"06:30\"\n", back, "charge geq 40", "charge leq 40").Replace(windowHome), devices.Before},
		{"charge-only storage", custom(""), devices.At},
		{"storage that discharges", custom(`, { name = "out", power_kw = -2, effects = { charge = -2.1 } }`), devices.Before},
	} {
		cfg, err := config.Parse("/x/n.toml", []byte(neighbourhood("")), files{"/x/alder.toml": tc.home}.read)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		h := &cfg.Neighbourhood.Homes[0]
		i := slices.IndexFunc(h.Rules, func(r devices.Rule) bool { return strings.HasPrefix(r.Text, "charge ") && r.Active() })
		if i < 0 {
			t.Fatalf("%s: no goal in %+v", tc.name, h.Rules)
		}
		if r := h.Rules[i]; r.Prefix != tc.want || r.T1 != 14 {
			t.Errorf("%s: %q reads as %s %d, want %s 14", tc.name, r.Text, r.Prefix, r.T1, tc.want)
		}
	}
}
