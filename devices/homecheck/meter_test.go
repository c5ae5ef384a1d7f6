package homecheck_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/devices/homecheck"
	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/devices/internal/testhomes"
)

// TestRandomMeterHomes solves seeded random streets whose homes have
// meters — own tariffs with negative export prices, soft and hard import
// and export limits, curtailable PV, grid permissions, end values — and
// passes every plan through the checker, which must accept it, alone and
// in its street, and measure the same energy beyond the limits.
func TestRandomMeterHomes(t *testing.T) {
	seeds := 1500
	if testing.Short() {
		seeds = 300
	}
	solved, curtailed, over, stored := 0, 0, 0, 0
	for seed := range uint64(seeds) {
		n := testhomes.Random(90000+seed, testhomes.Options{Homes: 1 + int(seed%3), Slots: 3 + int(seed%2), Devices: 2, Actions: 3, Mixed: true, Feeder: true, Soft: true})
		testhomes.WithMeters(rand.New(rand.NewPCG(seed, 0x3e7e)), n)
		h, ok := solve(t, n)
		if !ok {
			continue
		}
		solved++
		rep := homecheck.Check(n, homesolve.Street(h))
		if err := rep.Err(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		overKWh := 0.0
		for _, o := range rep.Over {
			overKWh += o.KW * n.Horizon.Hours()
		}
		claimed := 0.0
		for hi, p := range h.Schedules {
			claimed += p.OverLimitsKWh
			if slices.ContainsFunc(p.CurtailedKW, func(v float64) bool { return v > 0 }) {
				curtailed++
			}
			if p.StoredValue != 0 {
				stored++
			}
			p.Levels = nil
			if err := homecheck.CheckHome(n, hi, homesolve.Plan(p)).Err(); err != nil {
				t.Fatalf("seed %d home %s alone: %v", seed, p.Home, err)
			}
		}
		if math.Abs(overKWh-claimed) > 1e-6 {
			t.Fatalf("seed %d: the checker measures %g kWh beyond the limits, the plans %g", seed, overKWh, claimed)
		}
		if overKWh > 0 {
			over++
		}
	}
	if solved < seeds/4 || curtailed < seeds/50 || over < seeds/100 || stored < seeds/50 {
		t.Fatalf("%d of %d streets solved, %d homes curtail, %d streets beyond a limit, %d homes store value: the generator tests too little", solved, seeds, curtailed, over, stored)
	}
	t.Logf("%d of %d streets solved and checked: %d homes curtail, %d streets beyond a soft limit, %d homes value their storage", solved, seeds, curtailed, over, stored)
}

// TestMeterStreet solves the meters street and checks its figures by
// hand: sun's bill at its own tariff, its curtailment, its end value.
func TestMeterStreet(t *testing.T) {
	r, err := homesolve.Load(filepath.Join("testdata", "meters.toml"), false, homesolve.Overrides{NoBaselines: true})
	if err != nil {
		t.Fatal(err)
	}
	n := r.Model()
	h, ok := solve(t, n)
	if !ok {
		t.Fatal("no plan")
	}
	if err := homecheck.Check(n, homesolve.Street(h)).Err(); err != nil {
		t.Fatal(err)
	}
	sun := h.Schedules[0]
	// Slot by slot from sun's own tariff: feed-in is curtailed to 0 where
	// it earns less than nothing (11:00, 12:00) and to the 2 kW export
	// limit elsewhere; 15:00 imports its 0.5 kW background at 0.40.
	want := []float64{-2, 0, 0, -2, -2, 0.5}
	for i, v := range want {
		if math.Abs(sun.LoadKW[i]-v) > 1e-9 {
			t.Fatalf("sun's load %v, want %v", sun.LoadKW, want)
		}
	}
	bill := -2*0.05 + 0 + 0 - 2*0.02 - 2*0.05 + 0.5*0.4
	if math.Abs(sun.EnergyCost-bill) > 1e-9 {
		t.Errorf("sun pays %g, want %g", sun.EnergyCost, bill)
	}
	if slices.Max(sun.CurtailedKW) == 0 {
		t.Errorf("sun curtails nothing: %v", sun.CurtailedKW)
	}
	// The battery ends at 1 + 2 × 1.9 kWh (two hours at 2 kW, 95 %,
	// rounded down to 0.1 kWh); worth 0.2 a kWh.
	if math.Abs(sun.StoredValue-0.2*4.8) > 1e-9 {
		t.Errorf("sun's stored value %g, want %g", sun.StoredValue, 0.2*4.8)
	}
	g := h.Schedules[1]
	for slot, kw := range g.Devices[0].KW {
		if kw > 0 && g.LoadKW[slot] > 1e-9 {
			t.Errorf("grid's battery charges %g kW in slot %d while the home imports %g kW", kw, slot, g.LoadKW[slot])
		}
		if g.LoadKW[slot] > 3.5+1e-9 {
			t.Errorf("grid imports %g kW in slot %d, above its hard limit", g.LoadKW[slot], slot)
		}
	}
}

// TestCatchesBadMeterPlans breaks the meters street's plan one way at a
// time and asserts that the checker names the fault.
func TestCatchesBadMeterPlans(t *testing.T) {
	r, err := homesolve.Load(filepath.Join("testdata", "meters.toml"), false, homesolve.Overrides{NoBaselines: true})
	if err != nil {
		t.Fatal(err)
	}
	n := r.Model()
	good, ok := solve(t, n)
	if !ok {
		t.Fatal("no plan")
	}
	tests := []struct {
		name   string
		break_ func(s *homecheck.Street)
		want   string
	}{
		{"curtails more than it feeds", func(s *homecheck.Street) { s.Plans[0].CurtailKW[5] = 1 }, "slot 5 curtails 1 kW of PV, outside [0, 0] kW"},
		{"curtailment left out", func(s *homecheck.Street) { s.Plans[0].CurtailKW = nil }, "home sun draws"},
		{"soft limit excess hidden", func(s *homecheck.Street) { s.Plans[0].OverKWh = 1 }, "it is 0 kWh beyond its soft limits, the plan says 1 kWh"},
		{"stored value inflated", func(s *homecheck.Street) { s.Plans[0].StoredValue += 1 }, "the energy it stores at the end is worth"},
		{"charges from the grid", func(s *homecheck.Street) {
			s.Plans[1].Actions["battery"][3] = "charge_1kw"
		}, "charges a storage that may not charge from the grid"},
		{"above the hard import limit", func(s *homecheck.Street) {
			s.Plans[1].Actions["battery"][2] = "charge_1kw"
		}, "above its hard limit 3.5 kW"},
		{"discharges to the grid", func(s *homecheck.Street) {
			s.Plans[0].Actions["battery"][0] = "discharge_2kw"
		}, "discharges a storage that may not discharge to the grid"},
	}
	if err := homecheck.Check(n, homesolve.Street(good)).Err(); err != nil {
		t.Fatalf("the solved plan is rejected: %v", err)
	}
	for _, tc := range tests {
		s := clone(homesolve.Street(good))
		for i := range s.Plans {
			s.Plans[i].CurtailKW = slices.Clone(s.Plans[i].CurtailKW)
		}
		tc.break_(&s)
		rep := homecheck.Check(n, s)
		if !errors.Is(rep.Err(), homecheck.ErrRejected) {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		if !slices.ContainsFunc(rep.Violations, func(v string) bool { return strings.Contains(v, tc.want) }) {
			t.Errorf("%s: violations\n%s\nwant one containing %q", tc.name, strings.Join(rep.Violations, "\n"), tc.want)
		}
	}
}
