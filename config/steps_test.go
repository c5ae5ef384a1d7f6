package config_test

import (
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
