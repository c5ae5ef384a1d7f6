package devices

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestAutoLevels checks the automatic levels of every sizable kind on
// hourly and quarter-hour slots against the physics written out here: a
// wallbox's levels are whole currents from 6 A at 230 V on its phases,
// every level moves whole quanta no more than the wall gives, the
// quantum is a multiple of the resolution and the least within the
// table budget, and each kind gets more levels than the catalogue's two.
func TestAutoLevels(t *testing.T) {
	for _, tc := range []struct {
		kind      string
		sz        Sizing
		volts     float64 // per level: power = amps × volts / 1000
		phases    []int   // the phase counts a level may use
		minLevels int     // at least this many charging levels
	}{
		{kind: "ev_wallbox_7kw", sz: Sizing{SlotHours: 1}, phases: []int{1}, minLevels: 4},
		{kind: "ev_wallbox_7kw", sz: Sizing{SlotHours: 0.5}, phases: []int{1}, minLevels: 3},
		{kind: "ev_wallbox_11kw", sz: Sizing{SlotHours: 1}, phases: []int{3}, minLevels: 4},
		// min_charge_kw below the three-phase least: one phase too.
		{kind: "ev_wallbox_11kw", sz: Sizing{SlotHours: 1, MinChargeKW: 1.4, CapacityKWh: 30}, phases: []int{1, 3}, minLevels: 6},
		{kind: "ev_wallbox_7kw", sz: Sizing{SlotHours: 1, MaxChargeKW: 5, CapacityKWh: 20}, phases: []int{1}, minLevels: 6},
		{kind: "home_battery", sz: Sizing{SlotHours: 1}, minLevels: 4},
		{kind: "home_battery", sz: Sizing{SlotHours: 0.25, CapacityKWh: 5, MaxChargeKW: 3, MaxDischargeKW: 2}, minLevels: 3},
		// A small battery on long slots: levels a few watts apart.
		{kind: "home_battery", sz: Sizing{SlotHours: 24, CapacityKWh: 3, MaxChargeKW: 0.1, MaxDischargeKW: 0.1}, minLevels: 10},
		// A three-phase wallbox capped below its three-phase least
		// charges on one phase.
		{kind: "ev_wallbox_11kw", sz: Sizing{SlotHours: 1, MaxChargeKW: 3}, phases: []int{1, 3}, minLevels: 4},
	} {
		name := tc.kind + "/" + strconv.FormatFloat(tc.sz.SlotHours, 'g', -1, 64) + "h"
		t.Run(name, func(t *testing.T) {
			e, err := Lookup(tc.kind, "")
			if err != nil {
				t.Fatal(err)
			}
			sz := tc.sz
			sz.Auto = true
			out, err := e.Sized(sz)
			if err != nil {
				t.Fatal(err)
			}
			// The figures Sized fills in, written out apart.
			def := sizable[tc.kind]
			pick := func(v, d float64) float64 {
				if v == 0 {
					return d
				}
				return v
			}
			capacity := pick(sz.CapacityKWh, def.CapacityKWh)
			maxC, eff := pick(sz.MaxChargeKW, def.MaxChargeKW), def.ChargeEff
			maxD, effD := pick(sz.MaxDischargeKW, def.MaxDischargeKW), def.DischargeEff
			dt := sz.SlotHours
			// The stored energy of a wallbox and of a battery has its
			// own resolution (ExactResolution), at which their exact
			// actions are whole.
			scale := out.Properties[0].Scale
			if scale != ExactResolution {
				t.Fatalf("resolution %g, want %g", scale, ExactResolution)
			}
			if tc.kind == "home_battery" {
				checkExactBattery(t, out, maxC, eff, maxD, effD, dt)
			}
			var charge, discharge []Action
			for _, a := range out.Actions {
				switch {
				case a.Power > 0:
					charge = append(charge, a)
				case a.Power < 0:
					discharge = append(discharge, a)
				}
			}
			if len(charge) < tc.minLevels || len(charge) > MaxAutoLevels || len(discharge) > MaxAutoLevels {
				t.Fatalf("%d charging and %d discharging levels, want %d to %d", len(charge), len(discharge), tc.minLevels, MaxAutoLevels)
			}
			// The quantum: the greatest multiple of the resolution that
			// divides every level's stored energy.
			stored := func(a Action) float64 { v, _ := a.Effect(e.Properties[0].Name); return v * dt }
			q := gcdQuanta(append(charge, discharge...), stored, scale)
			states := math.Floor(capacity/q+1e-9) + 1
			if k := q / scale; math.Abs(k-math.Round(k)) > 1e-6 {
				t.Fatalf("quantum %g is not a multiple of the resolution %g", q, scale)
			}
			if acts := float64(len(out.Actions)); states*states*acts > AutoTableBudget {
				t.Fatalf("S²·A = %g·%g·%g over the budget %d", states, states, acts, AutoTableBudget)
			}
			prevP, prevS := 0.0, 0.0
			for _, a := range charge {
				s := stored(a)
				if a.Power > maxC+1e-9 || s > a.Power*eff*dt+1e-9 {
					t.Errorf("%s: %g kW storing %g kWh: over the limit %g kW or the physics %g kWh", a.Name, a.Power, s, maxC, a.Power*eff*dt)
				}
				if a.Power <= prevP || s <= prevS {
					t.Errorf("%s: levels not ascending in power and stored energy", a.Name)
				}
				prevP, prevS = a.Power, s
				if tc.kind == "home_battery" {
					// Exact: the power that stores s, rounded up to 1 W.
					if a.Power-s/(eff*dt) > 0.001+1e-9 {
						t.Errorf("%s: %g kW for %g kWh, want %g", a.Name, a.Power, s, s/(eff*dt))
					}
					continue
				}
				amps, ok := strings.CutSuffix(strings.TrimPrefix(strings.TrimPrefix(a.Name, "charge_"), "1p"), "a")
				n, err := strconv.Atoi(amps)
				if !ok || err != nil || n < 6 {
					t.Fatalf("%s: want charge_<amps>a from 6 A", a.Name)
				}
				ph := tc.phases[len(tc.phases)-1]
				if strings.HasPrefix(a.Name, "charge_1p") || tc.phases[0] == 1 && len(tc.phases) == 1 {
					ph = 1
				}
				if want := math.Min(float64(n*230*ph)/1000, maxC); math.Abs(a.Power-want) > 1e-9 {
					t.Errorf("%s: %g kW, want %d A × 230 V × %d = %g kW", a.Name, a.Power, n, ph, want)
				}
				// The rounding loses less than one current step a slot,
				// except at the top (capped, or past the last quantum).
				if a.Power*eff*dt-s > q+1e-9 {
					t.Errorf("%s loses %g kWh a slot, more than a quantum", a.Name, a.Power*eff*dt-s)
				}
			}
			for _, a := range discharge {
				s := -stored(a)
				if -a.Power > maxD+1e-9 || -a.Power*dt > s*effD+1e-9 || s*effD-(-a.Power*dt) > 0.001*dt+1e-9 {
					t.Errorf("%s: delivers %g kW taking %g kWh (efficiency %g, limit %g kW)", a.Name, -a.Power, s, effD, maxD)
				}
			}
			if len(discharge) > 0 && (discharge[0].Power != out.Actions[0].Power || out.Actions[len(discharge)].Name != "idle") {
				t.Errorf("actions not sorted by power around idle: %v", out.Actions)
			}
		})
	}
}

// gcdQuanta is the greatest multiple of the resolution that divides
// every level's stored energy.
func gcdQuanta(acts []Action, stored func(Action) float64, scale float64) float64 {
	g := int64(0)
	for _, a := range acts {
		k := int64(math.Abs(math.Round(stored(a) / scale)))
		for k != 0 {
			g, k = k, g%k
		}
	}
	return float64(g) * scale
}

// TestAutoLevelsWallboxSteps pins the 7.4 kW wallbox on hourly slots,
// worked out by hand: 1 A at 230 V stores 0.2047 kWh an hour at 89 %,
// 32 A (7.36 kW) 6.5504 kWh. The candidate quanta are 6.5504/K and
// m·0.2047 kWh (rounded down to 0.1 Wh); the finest with
// (60/Q + 1)²·(1 + levels) ≤ 2^17 is the quantum.
func TestAutoLevelsWallboxSteps(t *testing.T) {
	e, _ := Lookup("ev_wallbox_7kw", "")
	_, charge, q := AutoLevels(e.Kind, Sizing{CapacityKWh: 60, MaxChargeKW: 7.4, ChargeEff: 0.89, SlotHours: 1, Auto: true}, 0.1)
	// By hand: Q = 6.5504/11 = 0.5954: S = 101, the currents 6..32 A
	// store 2.06..11.002 quanta, i.e. 2..11 whole ones: 11 actions,
	// 101²·11 = 112,211 ≤ 131,072. Q = 6.5504/12 = 0.5458: S = 110,
	// 2..12 quanta: 12 actions, 110²·12 = 145,200; Q = 2·0.2047: S = 147.
	if math.Abs(q-0.5954) > 1e-9 {
		t.Fatalf("quantum %g, want 0.5954", q)
	}
	// The least current storing k quanta: k·0.5954 / 0.89 / 0.23 A,
	// rounded up, and at least 6 A; 32 A is credited in full (11 quanta
	// are 6.5494 of its 6.5504 kWh), where a quantum of 0.6 credited it
	// with 6.0.
	var want []string
	for k := 2; k <= 11; k++ {
		amps := max(6, int(math.Ceil(float64(k)*0.5954/0.89/0.23-1e-9)))
		want = append(want, "charge_"+strconv.Itoa(amps)+"a")
	}
	var got []string
	for _, l := range charge {
		got = append(got, l.Name)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("levels %v, want %v", got, want)
	}
	if top := charge[len(charge)-1]; top.Name != "charge_32a" || math.Abs(top.Stored-6.5494) > 1e-9 {
		t.Fatalf("top level %s storing %g, want charge_32a storing 6.5494", top.Name, top.Stored)
	}
}

// TestAutoLevelsNeeds: told what its goals need, a wallbox chooses a
// quantum that meets each need with less than a tenth of a kWh to spare
// (the finest quantum, 0.5954 kWh for the 7.4 kW box on hourly slots,
// needs 15 quanta, 8.93 kWh, for 8.5), within the same budget and
// physics (TestAutoLevels' checks, run here on the chosen levels).
func TestAutoLevelsNeeds(t *testing.T) {
	for _, tc := range []struct {
		kind  string
		needs []float64
	}{
		{"ev_wallbox_7kw", []float64{8.5}},
		{"ev_wallbox_7kw", []float64{15.7}},
		{"ev_wallbox_11kw", []float64{20.2}},
		{"ev_wallbox_11kw", []float64{12.3, 30}},
	} {
		sz := Sizing{CapacityKWh: 60, MaxChargeKW: sizable[tc.kind].MaxChargeKW, ChargeEff: 0.89, SlotHours: 1, Auto: true}
		_, _, fine := AutoLevels(tc.kind, sz, 0.1)
		sz.Needs = tc.needs
		_, charge, q := AutoLevels(tc.kind, sz, 0.1)
		over, overFine := 0.0, 0.0
		for _, n := range tc.needs {
			over += math.Ceil(n/q-1e-9)*q - n
			overFine += math.Ceil(n/fine-1e-9)*fine - n
		}
		t.Logf("%s needs %v: quantum %g (%d levels) stores %.4f kWh beyond them, the finest %g %.4f", tc.kind, tc.needs, q, len(charge), over, fine, overFine)
		if over > 0.1*float64(len(tc.needs)) || over > overFine+1e-9 {
			t.Errorf("%s needs %v: quantum %g overshoots by %g kWh (the finest %g by %g)", tc.kind, tc.needs, q, over, fine, overFine)
		}
		if states := math.Floor(60/q+1e-9) + 1; states*states*float64(1+len(charge)) > AutoTableBudget {
			t.Errorf("%s: S²·A = %g²·%d over the budget", tc.kind, states, 1+len(charge))
		}
		for _, l := range charge {
			if k := l.Stored / q; math.Abs(k-math.Round(k)) > 1e-6 || l.Stored > l.Power*0.89+1e-9 || l.Power > sz.MaxChargeKW+1e-9 {
				t.Errorf("%s: %s stores %g kWh at %g kW: not whole quanta of %g, or more than the physics", tc.kind, l.Name, l.Stored, l.Power, q)
			}
		}
	}
}

// checkExactBattery checks a battery's exact actions (Device.Exact)
// against its physics written out apart: each charging action stores at
// most its power × efficiency × slot and within 1 W of it, each
// discharging one takes at least what it delivers ÷ efficiency and within
// 1 W of it, all within the power limits and on one lattice of stored
// energy that holds every compiled level (so that a refined plan can
// always keep the solved one), and their number within
// ExactBatteryBudget.
func checkExactBattery(t *testing.T, out Entry, maxC, eff, maxD, effD, dt float64) {
	t.Helper()
	if len(out.Exact) == 0 {
		t.Fatal("a battery with automatic levels has no exact actions")
	}
	prop := out.Properties[0].Name
	stored := func(a Action) float64 { v, _ := a.Effect(prop); return v * dt }
	var lattice int64
	for _, a := range out.Exact {
		s := stored(a)
		switch {
		case a.Power > 0:
			if a.Power > maxC+1e-9 || s > a.Power*eff*dt+1e-9 || a.Power*eff*dt-s > 0.001*eff*dt+1e-9 {
				t.Errorf("exact %s: %g kW storing %g kWh (efficiency %g, limit %g kW)", a.Name, a.Power, s, eff, maxC)
			}
		case a.Power < 0:
			if -a.Power > maxD+1e-9 || -a.Power*dt > -s*effD+1e-9 || -s*effD-(-a.Power*dt) > 0.001*dt+1e-9 {
				t.Errorf("exact %s: delivers %g kW taking %g kWh (efficiency %g, limit %g kW)", a.Name, -a.Power, -s, effD, maxD)
			}
		default:
			t.Errorf("exact %s draws and stores nothing", a.Name)
		}
		lattice = gcdInt(lattice, int64(math.Round(s/ExactResolution)))
	}
	states := (*out.Properties[0].Max - *out.Properties[0].Min) / (float64(lattice) * ExactResolution)
	if (states+1)*float64(len(out.Exact)+1) > ExactBatteryBudget {
		t.Errorf("%g states × %d exact actions over the budget %d", states+1, len(out.Exact)+1, ExactBatteryBudget)
	}
	for _, l := range out.Actions {
		if l.Power == 0 {
			continue
		}
		if !slices.ContainsFunc(out.Exact, func(a Action) bool {
			return math.Abs(a.Power-l.Power) < 1e-9 && math.Abs(stored(a)-stored(l)) < 1e-9
		}) {
			t.Errorf("level %s (%g kW, %g kWh) is no exact action", l.Name, l.Power, stored(l))
		}
	}
}

func gcdInt(a, b int64) int64 {
	a, b = max(a, -a), max(b, -b)
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
