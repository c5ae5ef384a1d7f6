package config_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/config"
)

// meterHome is a home with every meter key: its own tariff, limits,
// curtailable PV, and a battery's permissions and end value.
const meterHome = `name = "alder"
background_kw = 0.4
pv_kw = 2
pv_curtailable = true

[prices]
default = 0.2
periods = [{ from = "23:00", to = "06:00", price = 0.1 }]
export_default = -0.01

[grid]
import_limit_kw = 6
export_limit_kw = 1.5
hard = true

[[device]]
name = "battery"
kind = "home_battery"
charge_from_grid = false
discharge_to_grid = false
end_value = 0.12
`

// TestMeterKeys: a home's own tariff, limits, curtailable PV, grid
// permissions and end value land in the model; the street's tariff is
// left as it was.
func TestMeterKeys(t *testing.T) {
	cfg, err := config.Parse("/x/n.toml", []byte(neighbourhood("[prices]\ndefault = 0.3\n")), files{"/x/alder.toml": meterHome}.read)
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Neighbourhood
	h := &n.Homes[0]
	m := h.Meter
	if m == nil {
		t.Fatal("no meter")
	}
	// 14 hourly slots from 17:00: 23:00–06:00 is slots 6..12.
	want := slices.Repeat([]float64{0.2}, 14)
	for s := 6; s < 13; s++ {
		want[s] = 0.1
	}
	if !slices.Equal(m.Prices, want) || !slices.Equal(m.ExportPrices, slices.Repeat([]float64{-0.01}, 14)) {
		t.Errorf("home tariff %v / %v, want %v / -0.01", m.Prices, m.ExportPrices, want)
	}
	if !slices.Equal(n.Prices, slices.Repeat([]float64{0.3}, 14)) || n.ExportPrices != nil {
		t.Errorf("street tariff %v / %v changed", n.Prices, n.ExportPrices)
	}
	if m.ImportLimit != 6 || m.ExportLimit != 1.5 || !m.HardLimits || !slices.Equal(m.Curtail, slices.Repeat([]float64{2}, 14)) {
		t.Errorf("meter %+v", m)
	}
	d := &h.Devices[0]
	if !d.NoGridCharge || !d.NoGridDischarge {
		t.Errorf("permissions %+v", d)
	}
	if p := h.Properties[h.Property("battery", "soc")]; p.EndValue != 0.12 {
		t.Errorf("end value %g", p.EndValue)
	}
	if imp, _ := n.Tariff(0); !slices.Equal(imp, want) {
		t.Errorf("Tariff(0) = %v", imp)
	}
}

// TestMeterErrors: bad meter keys are named by file, line and key.
func TestMeterErrors(t *testing.T) {
	tests := []struct {
		name, home, nb string
		line           int
		key, msg       string
	}{
		{"currency", strings.Replace(meterHome, "default = 0.2\n", "default = 0.2\ncurrency = \"€\"\n", 1), "", 8, "prices.currency", "is the street's"},
		{"export above import", strings.Replace(meterHome, "export_default = -0.01", "export_default = 0.5", 1), "", 9, "prices.export_default", "above slot 0's price 0.2"},
		{"per_slot length", strings.Replace(meterHome, "default = 0.2\nperiods = [{ from = \"23:00\", to = \"06:00\", price = 0.1 }]", "per_slot = [0.1, 0.2]", 1), "", 7, "prices.per_slot", "2 prices for 14 slots"},
		{"negative limit", strings.Replace(meterHome, "import_limit_kw = 6", "import_limit_kw = -6", 1), "", 12, "grid.import_limit_kw", "want a positive power"},
		{"grid key", strings.Replace(meterHome, "hard = true", "hrad = true", 1), "", 14, "grid.hrad", "unknown key"},
		{"curtail without pv", strings.Replace(meterHome, "pv_kw = 2\n", "", 1), "", 3, "pv_curtailable", "needs the home's PV forecast"},
		{"permission type", strings.Replace(meterHome, "charge_from_grid = false", "charge_from_grid = 0", 1), "", 19, "device[0].charge_from_grid", "want true or false"},
		{"end value of a dishwasher", meterHome + "\n[[device]]\nname = \"dw\"\nkind = \"dishwasher\"\nend_value = 0.1\n", "", 26, "device[1].end_value", "stores no energy"},
		{"end value under shds", meterHome, "[horizon]\n", 0, "", "an end value needs full dynamics"},
	}
	for _, tc := range tests {
		nb := neighbourhood("")
		if tc.nb != "" {
			nb = "homes = [\"alder.toml\"]\n[horizon]\nslots = 14\nstart = \"17:00\"\ndynamics = \"shds\"\n"
		}
		_, err := config.Parse("/x/n.toml", []byte(nb), files{"/x/alder.toml": tc.home}.read)
		var es config.Errors
		if !errors.As(err, &es) {
			t.Errorf("%s: error %v, want config.Errors", tc.name, err)
			continue
		}
		found := false
		for _, e := range es {
			if strings.Contains(e.Msg, tc.msg) && (tc.line == 0 || e.File == "/x/alder.toml" && e.Line == tc.line && e.Key == tc.key) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: got\n%v\nwant /x/alder.toml:%d: %s: …%s…", tc.name, err, tc.line, tc.key, tc.msg)
		}
	}
}

// FuzzMeter fuzzes a home with every meter key: any input is a model that
// validates or a config.Errors, never a panic.
func FuzzMeter(f *testing.F) {
	f.Add([]byte(meterHome))
	f.Add([]byte(strings.Replace(meterHome, "[grid]", "[grid]\nimport_limit_kw = 1e309", 1)))
	f.Fuzz(func(t *testing.T, hm []byte) {
		cfg, err := config.Parse("/x/n.toml", []byte(neighbourhood("")), files{"/x/alder.toml": string(hm)}.read)
		if err != nil {
			var es config.Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %v is not a non-empty config.Errors", err)
			}
			return
		}
		if err := cfg.Neighbourhood.Validate(); err != nil {
			t.Fatalf("accepted an invalid model: %v", err)
		}
	})
}
