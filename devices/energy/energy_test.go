package energy_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/plancheck"
)

func flat(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func solve(t *testing.T, h *energy.Home) *energy.Plan {
	t.Helper()
	p, err := energy.Solve(context.Background(), h, energy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := plancheck.Check(h, p).Err(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestExportPrice: a PV home's surplus earns the export price, not the
// import price; with a negative export price a curtailable array is
// curtailed and a fixed one is not.
func TestExportPrice(t *testing.T) {
	for _, tc := range []struct {
		name        string
		export      float64
		curtailable bool
		revenue     float64
		exported    float64
	}{
		{"paid at export price", 0.05, false, 4 * 0.05 * 3, 12},
		{"negative price, fixed array", -0.02, false, 4 * -0.02 * 3, 12},
		{"negative price, curtailed", -0.02, true, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &energy.Home{Name: "pv", Wear: -1, Dt: flat(3, 1), Load: flat(3, 1),
				PV:     []energy.PV{{Name: "roof", Forecast: flat(3, 5), Curtailable: tc.curtailable}},
				Tariff: energy.Tariff{Import: flat(3, 0.3), Export: flat(3, tc.export)}}
			p := solve(t, h)
			got := 0.0
			for _, e := range p.Export {
				got += e
			}
			if math.Abs(p.ExportRevenue-tc.revenue) > 1e-9 || math.Abs(got-tc.exported) > 1e-9 || p.ImportCost != 0 {
				t.Fatalf("revenue %v (want %v), exported %v kWh (want %v), import cost %v", p.ExportRevenue, tc.revenue, got, tc.exported, p.ImportCost)
			}
		})
	}
}

// TestRangeAlwaysHeld: a battery facing a price that rewards emptying it
// (high import price, nothing stored is worth anything) stops at its
// minimum, with no goal or rule asking it to.
func TestRangeAlwaysHeld(t *testing.T) {
	h := &energy.Home{Name: "b", Wear: -1, Dt: flat(24, 1), Load: flat(24, 5),
		Storage: []energy.Storage{{Name: "battery", Min: 1, Max: 13.5, Initial: 5, MaxCharge: 5, MaxDischarge: 5, EtaC: 0.95, EtaD: 0.95}},
		Tariff:  energy.Tariff{Import: flat(24, 0.4), Export: flat(24, 0)}}
	p := solve(t, h)
	for i, e := range p.Energy[0] {
		if e < 1-1e-9 || e > 13.5+1e-9 {
			t.Fatalf("boundary %d: %v kWh outside [1, 13.5]", i, e)
		}
	}
	if last := p.Energy[0][24]; last > 1+0.1 {
		t.Fatalf("the battery keeps %v kWh that is worth nothing", last)
	}
}

// TestNoFreeTies: on a flat tariff a battery has nothing to gain, and the
// wear cost keeps it idle instead of flipping between charge and
// discharge.
func TestNoFreeTies(t *testing.T) {
	h := &energy.Home{Name: "b", Wear: -1, Dt: flat(24, 1), Load: flat(24, 1),
		PV:      []energy.PV{{Name: "roof", Forecast: flat(24, 0.5)}},
		Storage: []energy.Storage{{Name: "battery", Max: 10, Initial: 5, MaxCharge: 5, MaxDischarge: 5, EtaC: 1, EtaD: 1, EndValue: 0.2}},
		Tariff:  energy.Tariff{Import: flat(24, 0.2), Export: flat(24, 0.2)}}
	p := solve(t, h)
	for tt := range 24 {
		if p.Charge[0][tt] != 0 || p.Discharge[0][tt] != 0 {
			t.Fatalf("slot %d: charge %v discharge %v on a flat tariff", tt, p.Charge[0][tt], p.Discharge[0][tt])
		}
	}
}

// TestSoftAndHardGoals: a goal no plan reaches yields the closest plan and
// names the goal with its shortfall; the same goal marked hard is refused
// with its name.
func TestSoftAndHardGoals(t *testing.T) {
	home := func(hard bool) *energy.Home {
		avail := []bool{false, true, true, true}
		return &energy.Home{Name: "ev", Wear: -1, Dt: flat(4, 1), Load: flat(4, 0.5),
			Storage: []energy.Storage{{Name: "ev", Max: 60, Initial: 10, MaxCharge: 7.4, MinCharge: 1.4, EtaC: 0.9, EtaD: 1, Available: avail,
				Goals: []energy.Goal{{Index: 4, Energy: 50, Hard: hard, Text: "ev 50 kWh by 04:00"}}}},
			Tariff: energy.Tariff{Import: flat(4, 0.3), Export: flat(4, 0)}}
	}
	p := solve(t, home(false))
	// Three plugged-in hours at 7.4 kW and 90%: 10 + 19.98 kWh.
	if len(p.Missed) != 1 || p.Missed[0].What != "ev 50 kWh by 04:00" || math.Abs(p.Missed[0].By-(50-10-3*7.4*0.9)) > 1e-6 {
		t.Fatalf("missed %+v", p.Missed)
	}
	_, err := energy.Solve(context.Background(), home(true), energy.Options{})
	if !errors.Is(err, energy.ErrInfeasible) || !strings.Contains(err.Error(), "ev 50 kWh by 04:00") {
		t.Fatalf("hard goal: %v", err)
	}
}

// TestValidate: descriptions that cannot be planned are refused with the
// field named.
func TestValidate(t *testing.T) {
	good := func() *energy.Home {
		return &energy.Home{Name: "h", Dt: flat(2, 1), Load: flat(2, 1),
			Storage: []energy.Storage{{Name: "b", Max: 10, Initial: 5, MaxCharge: 3, MaxDischarge: 3, EtaC: 0.9, EtaD: 0.9}},
			Tariff:  energy.Tariff{Import: flat(2, 0.3), Export: flat(2, 0.1)}}
	}
	for _, tc := range []struct {
		name string
		edit func(h *energy.Home)
		want string
	}{
		{"no slots", func(h *energy.Home) { h.Dt = nil }, "no slots"},
		{"load length", func(h *energy.Home) { h.Load = flat(3, 1) }, "load has 3 values"},
		{"export above import", func(h *energy.Home) { h.Tariff.Export[1] = 0.5 }, "export price 0.5 above import price"},
		{"NaN price", func(h *energy.Home) { h.Tariff.Import[0] = math.NaN() }, "import price[0]"},
		{"efficiency", func(h *energy.Home) { h.Storage[0].EtaC = 1.2 }, "efficiencies"},
		{"range", func(h *energy.Home) { h.Storage[0].Min = 20 }, "range [20, 10]"},
		{"goal outside", func(h *energy.Home) { h.Storage[0].Goals = []energy.Goal{{Index: 9, Text: "g"}} }, "outside 1..2"},
		{"negative PV", func(h *energy.Home) { h.PV = []energy.PV{{Name: "roof", Forecast: []float64{-1, 0}}} }, "pv roof forecast[0]"},
		{"arrival while plugged", func(h *energy.Home) { h.Storage[0].Arrivals = []energy.Arrival{{Index: 1, Energy: 4}} }, "follows slot 0, in which it is available"},
		{"arrival after plugged slot", func(h *energy.Home) {
			h.Storage[0].Available = []bool{true, true}
			h.Storage[0].Arrivals = []energy.Arrival{{Index: 2, Energy: 4}}
		}, "follows slot 1, in which it is available"},
		{"arrival outside", func(h *energy.Home) {
			h.Storage[0].Available = []bool{false, false}
			h.Storage[0].Arrivals = []energy.Arrival{{Index: 3, Energy: 4}}
		}, "arrivals lie at boundaries 1..2"},
		{"arrivals out of order", func(h *energy.Home) {
			h.Storage[0].Available = []bool{false, false}
			h.Storage[0].Arrivals = []energy.Arrival{{Index: 2, Energy: 4}, {Index: 1, Energy: 4}}
		}, "arrival 1 at boundary 1"},
		{"arrival above the range", func(h *energy.Home) {
			h.Storage[0].Available = []bool{false, true}
			h.Storage[0].Arrivals = []energy.Arrival{{Index: 1, Energy: 11}}
		}, "with 11 kWh, outside its range [0, 10]"},
		{"arrival NaN", func(h *energy.Home) {
			h.Storage[0].Available = []bool{false, true}
			h.Storage[0].Arrivals = []energy.Arrival{{Index: 1, Energy: math.NaN()}}
		}, "outside its range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := good()
			tc.edit(h)
			err := h.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestTieBreaks: the documented tie-breaks decide plans of equal bill.
// Selling stored energy at exactly what it is worth kept (export price =
// end value, lossless) is a tie the wear cost breaks towards keeping it;
// on a flat tariff an EV charges as early as it can (HoldValue), at full
// power, not spread thinly over equal slots.
func TestTieBreaks(t *testing.T) {
	t.Run("no export for nothing", func(t *testing.T) {
		h := &energy.Home{Name: "b", Wear: -1, Dt: flat(12, 1), Load: flat(12, 0.3),
			Storage: []energy.Storage{{Name: "battery", Max: 10, Initial: 8, MaxCharge: 3, MaxDischarge: 3, EtaC: 1, EtaD: 1, EndValue: 0.1}},
			Tariff:  energy.Tariff{Import: flat(12, 0.1), Export: flat(12, 0.1)}}
		p := solve(t, h)
		for tt := range 12 {
			if p.Charge[0][tt] != 0 || p.Discharge[0][tt] != 0 || p.Export[tt] != 0 {
				t.Fatalf("slot %d: charge %v, discharge %v, export %v kW for nothing", tt, p.Charge[0][tt], p.Discharge[0][tt], p.Export[tt])
			}
		}
	})
	t.Run("EV charges early", func(t *testing.T) {
		avail := make([]bool, 8)
		for i := range avail {
			avail[i] = true
		}
		h := &energy.Home{Name: "ev", Wear: -1, Dt: flat(8, 1), Load: flat(8, 0.5),
			Storage: []energy.Storage{{Name: "ev", Max: 60, Initial: 20, MaxCharge: 7.4, MinCharge: 1.4, EtaC: 0.9, EtaD: 1, Available: avail,
				Goals: []energy.Goal{{Index: 8, Energy: 30, Text: "ev 30 kWh by 08:00"}}}},
			Tariff: energy.Tariff{Import: flat(8, 0.3), Export: flat(8, 0)}}
		p := solve(t, h)
		want := []float64{7.4, 10/0.9 - 7.4, 0, 0, 0, 0, 0, 0}
		for tt, w := range want {
			if math.Abs(p.Charge[0][tt]-w) > 1e-6 {
				t.Fatalf("charges %v, want %v", p.Charge[0], want)
			}
		}
	})
}

// TestGoalAtFull: a hard goal at the top of the range (an EV full by
// departure) is kept: the planner keeps its energies a hair inside the
// range against rounding, and the goal asks for that hair less.
func TestGoalAtFull(t *testing.T) {
	avail := []bool{false, true, true, true}
	h := &energy.Home{Name: "ev", Wear: -1, Dt: flat(4, 1), Load: flat(4, 0.5),
		Storage: []energy.Storage{{Name: "ev", Max: 60, Initial: 40, MaxCharge: 11, MinCharge: 1.4, EtaC: 0.9, EtaD: 1, Available: avail,
			Goals: []energy.Goal{{Index: 4, Energy: 60, Hard: true, Text: "ev full by 04:00"}}}},
		Tariff: energy.Tariff{Import: []float64{0.3, 0.2, 0.3, 0.3}, Export: flat(4, 0)}}
	p := solve(t, h)
	if e := p.Energy[0][4]; e < 60-1e-4 || e > 60 {
		t.Fatalf("the EV ends at %v kWh, want 60", e)
	}
	if len(p.Missed) != 0 {
		t.Fatalf("missed %+v", p.Missed)
	}
}

// TestCancel: a cancelled context stops the planner with its error.
func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h := &energy.Home{Name: "ev", Wear: -1, Dt: flat(4, 1), Load: flat(4, 0.5),
		Storage: []energy.Storage{{Name: "ev", Max: 60, Initial: 40, MaxCharge: 11, MinCharge: 1.4, EtaC: 0.9, EtaD: 1,
			Goals: []energy.Goal{{Index: 4, Energy: 45.5, Text: "ev"}}}},
		Tariff: energy.Tariff{Import: []float64{0.3, 0.2, 0.3, 0.3}, Export: flat(4, 0)}}
	if _, err := energy.Solve(ctx, h, energy.Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

// TestImportSteps: StepCost integrates the step prices (worked by hand),
// and Validate refuses steps whose bands shrink or whose prices fall.
func TestImportSteps(t *testing.T) {
	steps := []energy.Step{{Upto: 2, Price: 0.1}, {Upto: 5, Price: 0.3}, {Upto: 6, Price: 0.7}}
	for _, c := range []struct{ imp, want float64 }{
		{0, 0}, {1, 0.1}, {2, 0.2}, {3, 0.5}, {5, 1.1}, {6, 1.8}, {8, 3.2},
	} {
		if got := energy.StepCost(steps, c.imp); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("StepCost(%g) = %g, want %g", c.imp, got, c.want)
		}
	}
	base := func() *energy.Home {
		return &energy.Home{Name: "h", Dt: []float64{1, 1}, Load: []float64{1, 1}, Tariff: energy.Tariff{Import: []float64{0.2, 0.2}, Export: []float64{0, 0}}}
	}
	for name, s := range map[string][][]energy.Step{
		"one list":      {steps},
		"falling price": {steps, {{Upto: 1, Price: 0.5}, {Upto: 2, Price: 0.4}}},
		"shrinking":     {nil, {{Upto: 3, Price: 0.1}, {Upto: 2, Price: 0.2}}},
		"nan":           {nil, {{Upto: math.NaN(), Price: 0.1}}},
	} {
		h := base()
		h.Grid.ImportSteps = s
		if err := h.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %v", name, s)
		}
	}
	// A home with nothing to shift pays the steps on its fixed load.
	h := base()
	h.Grid.ImportSteps = [][]energy.Step{steps, nil}
	p, err := energy.Solve(context.Background(), h, energy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(p.Coordination-0.1) > 1e-6 || math.Abs(p.Cost()-p.Objective-p.Penalties-0.1) > 1e-9 {
		t.Errorf("coordination %g, cost %g, objective %g: want 0.1 of import steps in the cost, none in the bill", p.Coordination, p.Cost(), p.Objective)
	}
}
