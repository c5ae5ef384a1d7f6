package street_test

import (
	"errors"
	"os"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices/street"
)

// FuzzSplit: whatever a home file that says planner = "energy" holds,
// loading it and mapping it to an energy home (config.Parse, Split)
// returns a model that validates or an error, never a panic; a model
// it returns has a storage per device.
func FuzzSplit(f *testing.F) {
	for _, p := range []string{"../../examples/energy-street/fir.toml", "../../examples/energy-street/hazel.toml"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("name = \"h\"\nplanner = \"energy\"\n[[device]]\nname = \"b\"\nkind = \"home_battery\"\ncapacity_kwh = 0.001\nrules = [\"soc geq 100% at 19:00\", { rule = \"soc gt 0 before 17:30\", hard = true }]\n")
	f.Add("name = \"h\"\nplanner = \"energy\"\npv_kw = 1e6\nbackground_kw = -5\n")
	f.Add("name = \"h\"\nplanner = \"energy\"\npv_kw = 3\npv_curtailable = true\n[prices]\ndefault = -0.1\nexport_default = -0.2\n[grid]\nimport_limit_kw = 2\nexport_limit_kw = 0.5\nhard = true\ndemand_charge = 0.4\ndemand_threshold_kw = 1\n[[device]]\nname = \"b\"\nkind = \"home_battery\"\ncharge_from_grid = false\ndischarge_to_grid = false\nend_value = -1e6\n")
	f.Add("name = \"h\"\nplanner = \"energy\"\n[[device]]\nname = \"ev\"\nkind = \"ev_wallbox_11kw\"\narrival = \"18:30\"\ndeparture = \"07:30\"\narrival_charge = \"20%\"\ninitial = { charge = 50 }\nrules = [\"charge geq 80% before 07:30\", { rule = \"charge geq 30 at 19:00\", hard = true }]\n")
	nb := "homes = [\"h.toml\"]\n[horizon]\nstart = \"17:00\"\nslots = 24\n[prices]\nexport_default = 0.05\n[coordination]\nwindows = [[\"17:00\", \"07:00\"]]\n"
	f.Fuzz(func(t *testing.T, home string) {
		files := map[string]string{"/x/n.toml": nb, "/x/h.toml": home}
		cfg, err := config.Parse("/x/n.toml", []byte(nb), func(p string) ([]byte, error) {
			s, ok := files[p]
			if !ok {
				return nil, os.ErrNotExist
			}
			return []byte(s), nil
		})
		if err != nil {
			return
		}
		rest, ms, err := street.Split(cfg)
		if err != nil {
			if !errors.Is(err, street.ErrNotEnergy) && len(cfg.Planners) > 0 && cfg.Planners[0] != config.PlannerEnergy {
				t.Fatalf("a compiled home failed to split: %v", err)
			}
			return
		}
		for _, m := range ms {
			if err := m.Home.Validate(); err != nil {
				t.Fatalf("Split returned a model that does not validate: %v", err)
			}
			if len(m.Home.Storage) != len(cfg.Neighbourhood.Homes[0].Devices) {
				t.Fatalf("%d storages for %d devices", len(m.Home.Storage), len(cfg.Neighbourhood.Homes[0].Devices))
			}
		}
		if len(ms)+len(rest.Homes) != len(cfg.Neighbourhood.Homes) {
			t.Fatalf("split %d homes into %d compiled and %d energy", len(cfg.Neighbourhood.Homes), len(rest.Homes), len(ms))
		}
	})
}
