package street_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/plancheck"
	"github.com/hearth-dcop/hearth/devices/street"
)

// TestFromTOML maps the example street's energy homes and compares the
// models with the figures worked out by hand from their files and the
// catalogue: fir's 13.5 kWh, 5 kW battery at 95% each way, its EV
// sized to 11 kW from 1.4 kW with a goal of 75% of 60 kWh at 07:30
// (inside the 07:00 slot: boundary 15 from 17:00), its PV apart from
// its 0.5 kW load; hazel's battery resized to 10 kWh and 4 kW.
func TestFromTOML(t *testing.T) {
	cfg, err := config.Load("../../examples/energy-street/street.toml")
	if err != nil {
		t.Fatal(err)
	}
	rest, ms, err := street.Split(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rest.Homes) != 2 || rest.Homes[0].Name != "alder" || rest.Homes[1].Name != "oak" || len(ms) != 2 {
		t.Fatalf("split: %d compiled homes, %d energy homes", len(rest.Homes), len(ms))
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-3 {
			t.Errorf("%s = %g, want %g", what, got, want)
		}
	}
	fir, hazel := ms[0].Home, ms[1].Home
	if fir.Name != "fir" || hazel.Name != "hazel" || len(fir.Storage) != 2 || len(hazel.Storage) != 1 || len(fir.PV) != 1 {
		t.Fatalf("fir %+v, hazel %+v", fir, hazel)
	}
	b, ev, hb := fir.Storage[0], fir.Storage[1], hazel.Storage[0]
	near("fir battery max", b.Max, 13.5)
	near("fir battery initial", b.Initial, 4)
	near("fir battery charge", b.MaxCharge, 5)
	near("fir battery discharge", b.MaxDischarge, 5)
	near("fir battery etaC", b.EtaC, 0.95)
	near("fir battery etaD", b.EtaD, 0.95)
	near("fir battery min charge", b.MinCharge, 0)
	near("fir ev max", ev.Max, 60)
	near("fir ev charge", ev.MaxCharge, 11)
	near("fir ev min charge", ev.MinCharge, 1.4)
	near("fir ev etaC", ev.EtaC, 0.89)
	near("fir ev discharge", ev.MaxDischarge, 0)
	if len(ev.Goals) != 1 || ev.Goals[0].Index != 15 || ev.Goals[0].Hard {
		t.Fatalf("fir ev goals %+v", ev.Goals)
	}
	near("fir ev goal", ev.Goals[0].Energy, 45)
	near("fir ev goal penalty", ev.Goals[0].Penalty, 100)
	near("fir load at noon", fir.Load[19], 0.5)
	near("fir pv at noon", fir.PV[0].Forecast[19], 3.9)
	near("night price", fir.Tariff.Import[8], 0.12)
	near("export price", fir.Tariff.Export[8], 0.08)
	near("fir wear", fir.Wear, 0.01)
	near("hazel battery max", hb.Max, 10)
	near("hazel battery charge", hb.MaxCharge, 4)
	near("hazel battery discharge", hb.MaxDischarge, 4)
	near("hazel load at 19:00", hazel.Load[2], 2.8)

	// Alone, every plan passes the checker and fir's EV reaches its goal.
	if err := street.PlanAlone(context.Background(), ms, street.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if err := plancheck.Check(m.Home, m.Alone).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if got := ms[0].Alone.Energy[1][15]; got < 45-1e-3 {
		t.Errorf("fir's EV holds %.3f kWh at 07:30, want 45", got)
	}
}

// TestFromHomeRefuses: what an energy home cannot hold is refused with
// the home file, the device or rule, and ErrNotEnergy.
func TestFromHomeRefuses(t *testing.T) {
	street := func(home string) string { return "homes = [\"h.toml\"]\n[horizon]\nslots = 8\n" }
	cases := []struct{ name, home, want string }{
		{"dishwasher", "name = \"h\"\nplanner = \"energy\"\n[[device]]\nname = \"dw\"\nkind = \"dishwasher\"\n", "device dw (kind \"dishwasher\")"},
		{"cap rule", "name = \"h\"\nplanner = \"energy\"\n[[device]]\nname = \"b\"\nkind = \"home_battery\"\nrules = [\"soc leq 5\"]\n", "rule \"soc leq 5\""},
		{"within", "name = \"h\"\nplanner = \"energy\"\n[[device]]\nname = \"b\"\nkind = \"home_battery\"\nrules = [\"soc geq 5 within 02:00 04:00\"]\n", "rule \"soc geq 5 within 02:00 04:00\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{"/x/n.toml": street(c.home), "/x/h.toml": c.home}
			cfg, err := config.Parse("/x/n.toml", []byte(files["/x/n.toml"]), func(p string) ([]byte, error) { return []byte(files[p]), nil })
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = splitOf(cfg)
			if err == nil || !errors.Is(err, errNotEnergy) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "/x/h.toml") {
				t.Fatalf("got %v, want an error naming /x/h.toml and %s", err, c.want)
			}
		})
	}
}

var (
	splitOf      = street.Split
	errNotEnergy = street.ErrNotEnergy
)

// TestSplitFeederReserve: Split lowers a feeder limit for the compiled
// homes by what the energy homes import whatever they plan — hazel's
// load raised to 9 kW, less its battery's 4 kW — and refuses a hard
// limit at or below it.
func TestSplitFeederReserve(t *testing.T) {
	cases := []struct {
		name  string
		limit float64
		hard  bool
		want  float64 // the compiled homes' limit; < 0: refused
	}{
		{"room left", 12, false, 7},
		{"hard, room left", 12, true, 7},
		{"soft, no room", 4, false, plancheck.Tolerance},
		{"hard, no room", 4, true, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := config.Load("../../examples/energy-street/street.toml")
			if err != nil {
				t.Fatal(err)
			}
			n := cfg.Neighbourhood
			n.FeederLimit, n.FeederSoft = c.limit, !c.hard
			for i := range n.Homes {
				if n.Homes[i].Name == "hazel" {
					for t := range n.Homes[i].Background {
						n.Homes[i].Background[t] = 9
					}
				}
			}
			rest, _, err := street.Split(cfg)
			if c.want < 0 {
				if !errors.Is(err, devices.ErrInfeasible) {
					t.Fatalf("a hard %g kW limit below the energy homes' 5 kW: %v", c.limit, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(rest.FeederLimit-c.want) > 1e-9 || n.FeederLimit != c.limit {
				t.Errorf("compiled homes' limit %g (the street's now %g), want %g", rest.FeederLimit, n.FeederLimit, c.want)
			}
		})
	}
}
