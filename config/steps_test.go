package config_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
)

// TestPowerStepsAuto: power_steps = "auto" gives a catalogue storage the
// levels devices.AutoLevels chooses for the horizon's slot length, and
// any other string is refused at its key.
func TestPowerStepsAuto(t *testing.T) {
	for _, tc := range []struct {
		slot  string
		hours float64
		kind  string
		extra string
		sz    devices.Sizing
	}{
		{"1h", 1, "ev_wallbox_7kw", "", devices.Sizing{CapacityKWh: 60, MaxChargeKW: 7.4, ChargeEff: 0.89}},
		{"30m", 0.5, "ev_wallbox_11kw", "min_charge_kw = 1.4\n", devices.Sizing{CapacityKWh: 60, MaxChargeKW: 11, MinChargeKW: 1.4, ChargeEff: 0.89}},
		{"15m", 0.25, "home_battery", "capacity_kwh = 8\n", devices.Sizing{CapacityKWh: 8, MaxChargeKW: 5, MaxDischargeKW: 5, ChargeEff: 0.95, DischargeEff: 0.95}},
	} {
		text := "[horizon]\nslots = 4\nslot = \"" + tc.slot + "\"\n[coordination]\nwindows = []\n[[home]]\nname = \"h\"\n[[home.device]]\nname = \"d\"\nkind = \"" + tc.kind + "\"\npower_steps = \"auto\"\n" + tc.extra
		cfg, err := config.Parse("n.toml", []byte(text), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.kind, err)
		}
		tc.sz.SlotHours, tc.sz.Auto = tc.hours, true
		dis, ch, _ := devices.AutoLevels(tc.kind, tc.sz, 0.1)
		var want []string
		for _, l := range append(dis, ch...) {
			want = append(want, l.Name)
		}
		var got []string
		for _, a := range cfg.Neighbourhood.Homes[0].Devices[0].Actions {
			if a.Power != 0 {
				got = append(got, a.Name)
			}
		}
		// Actions are sorted by power: discharging (most first), then
		// charging; AutoLevels lists discharging by magnitude.
		for i, j := 0, len(dis)-1; i < j; i, j = i+1, j-1 {
			want[i], want[j] = want[j], want[i]
		}
		if strings.Join(got, " ") != strings.Join(want, " ") || len(ch) < 3 {
			t.Errorf("%s on %s slots: actions %v, want %v", tc.kind, tc.slot, got, want)
		}
	}
	_, err := config.Parse("n.toml", []byte("[[home]]\nname = \"h\"\n[[home.device]]\nname = \"d\"\nkind = \"home_battery\"\npower_steps = \"fine\"\n"), nil)
	if err == nil || !strings.Contains(err.Error(), `power_steps: power_steps = "fine": want "auto"`) {
		t.Errorf("power_steps = \"fine\": %v", err)
	}
}

// TestPowerStepsAutoNeeds: a wallbox with automatic levels whose charge
// has goals gets the levels devices.AutoLevels chooses for what the goals
// need beyond the initial value (a percentage goal in kWh of the
// capacity); one without goals keeps the finest quantum's.
func TestPowerStepsAutoNeeds(t *testing.T) {
	for _, tc := range []struct {
		rules string
		needs []float64
	}{
		{`rules = ["charge geq 29.5 before 04:00"]`, []float64{8.5}},
		{`rules = ["charge geq 50% before 02:00", "charge geq 40.7 before 04:00"]`, []float64{9, 19.7}},
		{"", nil},
	} {
		text := "[horizon]\nslots = 4\nslot = \"1h\"\n[coordination]\nwindows = []\n[[home]]\nname = \"h\"\n[[home.device]]\nname = \"ev\"\nkind = \"ev_wallbox_7kw\"\npower_steps = \"auto\"\ninitial = { charge = 21 }\n" + tc.rules + "\n"
		cfg, err := config.Parse("n.toml", []byte(text), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.rules, err)
		}
		_, ch, _ := devices.AutoLevels("ev_wallbox_7kw", devices.Sizing{CapacityKWh: 60, MaxChargeKW: 7.4, ChargeEff: 0.89, SlotHours: 1, Auto: true, Needs: tc.needs}, 0.1)
		var want, got []string
		for _, l := range ch {
			want = append(want, fmt.Sprintf("%s:%g", l.Name, l.Stored))
		}
		for _, a := range cfg.Neighbourhood.Homes[0].Devices[0].Actions {
			if a.Power != 0 {
				got = append(got, fmt.Sprintf("%s:%g", a.Name, a.Effects[0].Delta))
			}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: actions %v, want %v", tc.rules, got, want)
		}
	}
}

// TestPowerStepsAutoResolution: a wallbox or battery with automatic
// levels stores its energy to its own resolution, so a resolution given
// for it is refused at power_steps rather than rounding its levels.
func TestPowerStepsAutoResolution(t *testing.T) {
	for _, extra := range []string{
		"resolution = { charge = 0.1 }\n",
		"[[home.sensor]]\nlocation = \"ev\"\nproperty = \"charge\"\nresolution = 0.1\n",
	} {
		text := "[horizon]\nslots = 4\n[coordination]\nwindows = []\n[[home]]\nname = \"h\"\n[[home.device]]\nname = \"ev\"\nkind = \"ev_wallbox_7kw\"\npower_steps = \"auto\"\n" + extra
		_, err := config.Parse("n.toml", []byte(text), nil)
		if err == nil || !strings.Contains(err.Error(), "power_steps: power_steps = \"auto\" stores ev's charge to 1e-06 kWh") {
			t.Errorf("%q: %v", extra, err)
		}
	}
	// So does a battery's (its exact actions, devices/refine's, are
	// whole quanta of 1 mWh too).
	text := "[horizon]\nslots = 4\n[coordination]\nwindows = []\n[[home]]\nname = \"h\"\n[[home.device]]\nname = \"b\"\nkind = \"home_battery\"\npower_steps = \"auto\"\nresolution = { soc = 0.1 }\n"
	if _, err := config.Parse("n.toml", []byte(text), nil); err == nil || !strings.Contains(err.Error(), "power_steps: power_steps = \"auto\" stores b's soc to 1e-06 kWh") {
		t.Errorf("a battery's resolution: %v", err)
	}
}

// TestPowerStepsDefault: a catalogue storage of a compiled home that
// gives no power_steps gets the levels power_steps = "auto" gives it
// (issue 17: levels chosen from the device, not two fixed ones);
// so does a street with [live] (its rounds refine a wallbox's plan never
// behind the solved one in slot 0, refine.HomeRolling); "fixed", an
// energy home and a device that sets its own resolution keep the
// catalogue's own actions (devices.Lookup's), in a street with [live]
// too; a number still gives that many levels; "fixed" on a kind without
// levels is refused.
func TestPowerStepsDefault(t *testing.T) {
	actions := func(t *testing.T, dev string) []string {
		t.Helper()
		text := "[horizon]\nslots = 4\n[coordination]\nwindows = []\n[[home]]\nname = \"h\"\n" + dev
		if street, ok := strings.CutPrefix(dev, "[live]\n"); ok {
			text = "[live]\n[horizon]\nslots = 4\n[coordination]\nwindows = []\n[[home]]\nname = \"h\"\n" + street
		}
		cfg, err := config.Parse("n.toml", []byte(text), nil)
		if err != nil {
			t.Fatalf("%s: %v", dev, err)
		}
		var out []string
		for _, a := range cfg.Neighbourhood.Homes[0].Devices[0].Actions {
			out = append(out, fmt.Sprintf("%s:%g:%v", a.Name, a.Power, a.Effects))
		}
		return out
	}
	catalogue := func(kind string) []string {
		e, err := devices.Lookup(kind, "")
		if err != nil {
			t.Fatal(err)
		}
		d, _ := e.Instantiate("d", "", 60)
		var out []string
		for _, a := range d.Actions {
			out = append(out, fmt.Sprintf("%s:%g:%v", a.Name, a.Power, a.Effects))
		}
		return out
	}
	for _, kind := range []string{"ev_wallbox_7kw", "ev_wallbox_11kw", "home_battery"} {
		dev := "[[home.device]]\nname = \"d\"\nkind = \"" + kind + "\"\n"
		auto := actions(t, dev+"power_steps = \"auto\"\n")
		for _, tc := range []struct {
			name, dev string
			want      []string
		}{
			{"default", dev, auto},
			{"fixed", dev + "power_steps = \"fixed\"\n", catalogue(kind)},
			{"resolution", dev + "resolution = { " + map[bool]string{true: "soc", false: "charge"}[kind == "home_battery"] + " = 0.1 }\n", catalogue(kind)},
			{"energy home", "planner = \"energy\"\n" + dev, catalogue(kind)},
			{"live street", "[live]\n" + dev, auto},
			{"live street, auto", "[live]\n" + dev + "power_steps = \"auto\"\n", auto},
			{"live street, fixed", "[live]\n" + dev + "power_steps = \"fixed\"\n", catalogue(kind)},
		} {
			if got := actions(t, tc.dev); strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("%s, %s: actions %v, want %v", kind, tc.name, got, tc.want)
			}
		}
		if got := actions(t, dev+"power_steps = 3\n"); len(got) < 4 || strings.Join(got, " ") == strings.Join(auto, " ") {
			t.Errorf("%s, power_steps = 3: actions %v", kind, got)
		}
		if len(auto) <= len(catalogue(kind))+2 {
			t.Errorf("%s: automatic levels %v, no finer than the catalogue's %v", kind, auto, catalogue(kind))
		}
	}
	_, err := config.Parse("n.toml", []byte("[[home]]\nname = \"h\"\n[[home.device]]\nname = \"d\"\nkind = \"dishwasher\"\npower_steps = \"fixed\"\n"), nil)
	if err == nil || !strings.Contains(err.Error(), `power_steps: kind "dishwasher" has no power levels`) {
		t.Errorf("power_steps = \"fixed\" on a dishwasher: %v", err)
	}
}
