package compile_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/compile"
	"github.com/hearth-dcop/hearth/devices/refine"
	cbcsolve "github.com/hearth-dcop/hearth/internal/cbc"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// stepsHome writes a random home with one catalogue EV charger (7.4 or
// 11 kW, 60 kWh) and a hard goal by the horizon's end under random
// hourly prices, its levels given by steps (a power_steps line:
// `power_steps = "fixed"` for the catalogue's two; "" for the default,
// automatic levels), and the goal's figures for the LP.
func stepsHome(seed uint64, steps string) (text string, T int, prices []float64, maxKW, eff, need float64) {
	return stepsHomeAt(seed, steps, 1)
}

// stepsHomeAt is stepsHome on slots of 1/perHour hours (1, 2 or 4): T
// is then the number of slots, each with its own price.
func stepsHomeAt(seed uint64, steps string, perHour int) (text string, T int, prices []float64, maxKW, eff, need float64) {
	rng := rand.New(rand.NewPCG(seed, 0x57e9))
	hours := 6 + rng.IntN(3)
	T = hours * perHour
	kind, maxKW := "ev_wallbox_7kw", 7.4
	if rng.IntN(2) == 0 {
		kind, maxKW = "ev_wallbox_11kw", 11
	}
	eff = 0.89
	initial := float64(10 + rng.IntN(20))
	// Up to half of what the greatest power stores over the horizon,
	// in kWh with one decimal: rarely a whole number of any level.
	need = math.Round(math.Min((0.15+0.35*rng.Float64())*maxKW*eff*float64(hours), 55-initial)*10) / 10
	prices = make([]float64, T)
	var ps []string
	for t := range prices {
		prices[t] = float64(10+rng.IntN(40)) / 100
		ps = append(ps, strconv.FormatFloat(prices[t], 'f', -1, 64))
	}
	var b strings.Builder
	slot := ""
	if perHour > 1 {
		slot = fmt.Sprintf("slot = \"%dm\"\n", 60/perHour)
	}
	fmt.Fprintf(&b, "[horizon]\nslots = %d\n%s[coordination]\nwindows = []\n[objective]\npeak = 0\n[prices]\nper_slot = [%s]\n", T, slot, strings.Join(ps, ", "))
	fmt.Fprintf(&b, "[[home]]\nname = \"h\"\nbackground_kw = 0\n[[home.device]]\nname = \"ev\"\nkind = %q\n%s\ninitial = { charge = %g }\n", kind, steps, initial)
	fmt.Fprintf(&b, "rules = [{ rule = \"charge geq %g before %02d:00\", hard = true }]\n", initial+need, hours)
	return b.String(), T, prices, maxKW, eff, need
}

// batteryHome writes a random home with the catalogue's home battery
// under random hourly prices and a background load above its discharging
// power (so it never feeds back and the bill is linear), with a hard
// goal for its charge at the horizon's end, and the LP of its continuous
// optimum: any charging power up to 5 kW storing 95 %, any discharging
// power up to 5 kW taking 1/0.95, the range [0, 13.5] kWh, and the
// catalogue's cycle cost of 0.01 per kWh through the battery.
func batteryHome(seed uint64, steps string) (text, lp string, background float64) {
	return batteryHomeAt(seed, steps, 1)
}

// batteryHomeAt is batteryHome on perHour slots an hour (the same hours,
// a price per slot).
func batteryHomeAt(seed uint64, steps string, perHour int) (text, lp string, background float64) {
	rng := rand.New(rand.NewPCG(seed, 0xba77))
	hours := 5 + rng.IntN(3)
	T := hours * perHour
	dt := 1 / float64(perHour)
	initial := float64(2 + rng.IntN(8))
	// At most 13.5 − 4.7: the catalogue battery can always reach it.
	goal := math.Round((1+7.8*rng.Float64())*10) / 10
	var ps []string
	var p cbcsolve.Program
	for t := range T {
		price := float64(10+rng.IntN(40)) / 100
		ps = append(ps, strconv.FormatFloat(price, 'f', -1, 64))
		background += 6 * price * dt
		p.Objective = append(p.Objective, fmt.Sprintf("+ %.12g c%d - %.12g d%d", (price+0.01)*dt, t, (price-0.01)*dt, t))
		p.Bounds = append(p.Bounds, fmt.Sprintf("0 <= c%d <= 5", t), fmt.Sprintf("0 <= d%d <= 5", t), fmt.Sprintf("0 <= s%d <= 13.5", t))
		if t == 0 {
			p.Rows = append(p.Rows, fmt.Sprintf("s0 - %.12g c0 + %.12g d0 = %g", 0.95*dt, dt/0.95, initial))
		} else {
			p.Rows = append(p.Rows, fmt.Sprintf("s%d - s%d - %.12g c%d + %.12g d%d = 0", t, t-1, 0.95*dt, t, dt/0.95, t))
		}
	}
	p.Rows = append(p.Rows, fmt.Sprintf("s%d >= %g", T-1, goal))
	var b strings.Builder
	horizon := fmt.Sprintf("slots = %d", T)
	if perHour > 1 {
		horizon = fmt.Sprintf("slot = \"%dm\"\nslots = %d", 60/perHour, T)
	}
	fmt.Fprintf(&b, "[horizon]\n%s\n[coordination]\nwindows = []\n[objective]\npeak = 0\n[prices]\nper_slot = [%s]\n", horizon, strings.Join(ps, ", "))
	fmt.Fprintf(&b, "[[home]]\nname = \"h\"\nbackground_kw = 6\n[[home.device]]\nname = \"b\"\nkind = \"home_battery\"\n%s\ninitial = { soc = %g }\n", steps, initial)
	fmt.Fprintf(&b, "rules = [{ rule = \"soc geq %g at %02d:00\", hard = true }]\n", goal, hours)
	return b.String(), p.String(), background
}

// continuousLP is the continuous optimum of a stepsHome, a MILP written
// from the home's figures alone: in each slot the charger is off or at
// any power from its least current (6 A at 230 V on its phases: 1.38 kW
// for the 7.4 kW box, 4.14 kW for the 11 kW) to its greatest, the goal's
// energy is stored at the efficiency, and each kWh costs its slot's
// price.
func continuousLP(T int, dt float64, prices []float64, maxKW, eff, need float64) string {
	least := 6 * 0.23
	if maxKW > 7.4 {
		least *= 3
	}
	var p cbcsolve.Program
	var stored []string
	for t := range T {
		p.Objective = append(p.Objective, fmt.Sprintf("+ %.12g p%d", prices[t]*dt, t))
		stored = append(stored, fmt.Sprintf("+ %.12g p%d", eff*dt, t))
		p.Rows = append(p.Rows, fmt.Sprintf("p%d - %g u%d >= 0", t, least, t), fmt.Sprintf("p%d - %g u%d <= 0", t, maxKW, t))
		p.Bounds = append(p.Bounds, fmt.Sprintf("0 <= p%d <= %g", t, maxKW))
		p.Binaries = append(p.Binaries, fmt.Sprintf("u%d", t))
	}
	p.Rows = append(p.Rows, strings.Join(stored, " ")+fmt.Sprintf(" >= %g", need))
	return p.String()
}

// currentsMILP is the optimum of a stepsHome on the wallbox's own
// physics, a MILP written from the home's figures alone: in each slot
// the charger is off or at one whole current from 6 A (IEC 61851's
// least) to its greatest at 230 V on its phases (the 7.4 kW box one
// phase up to 32 A, the 11 kW box three phases up to 16 A), its power
// capped at the box's kW; the goal's energy is stored at the
// efficiency and each kWh costs its slot's price. It is what any plan
// of the physical charger costs at least; the continuous optimum
// (continuousLP) is below it by what whole currents cannot match.
func currentsMILP(T int, dt float64, prices []float64, maxKW, eff, need float64) string {
	return currentsMILPAway(T, dt, prices, maxKW, eff, need, nil)
}

// currentsMILPAway is currentsMILP for a car that is away in the slots
// away marks (nil: none): no current there.
func currentsMILPAway(T int, dt float64, prices []float64, maxKW, eff, need float64, away []bool) string {
	phases, top := 1, 32
	if maxKW > 7.4 {
		phases, top = 3, 16
	}
	var p cbcsolve.Program
	var stored []string
	for t := range T {
		if away != nil && away[t] {
			continue
		}
		var one []string
		for amps := 6; amps <= top; amps++ {
			kw := math.Min(float64(amps*230*phases)/1000, maxKW)
			y := fmt.Sprintf("y%d_%d", t, amps)
			p.Objective = append(p.Objective, fmt.Sprintf("+ %.12g %s", prices[t]*kw*dt, y))
			stored = append(stored, fmt.Sprintf("+ %.12g %s", eff*kw*dt, y))
			one = append(one, "+ "+y)
			p.Binaries = append(p.Binaries, y)
		}
		p.Rows = append(p.Rows, strings.Join(one, " ")+" <= 1")
	}
	p.Rows = append(p.Rows, strings.Join(stored, " ")+fmt.Sprintf(" >= %g", need))
	return p.String()
}

// TestAutoStepsAgainstLP: on seeded homes with an EV and a goal, the
// automatic power levels (power_steps = "auto"), their plan refined onto
// the wallbox's exact currents after the solve (devices/refine, as hearth
// refines every plan it reports), cost within 1 % of the wallbox's own
// optimum (currentsMILP, CBC) on every home, and no plan beats it; they
// bring the compiled optimum closer to the continuous optimum than the
// catalogue's two fixed levels do. Every refined plan passes the
// independent checker and costs no more than the solved one.
// HEARTH_STEPS_HOMES sets the number of homes (default 12, 4 under the
// race detector); HEARTH_STEPS_QUARTER=1 also runs them on quarter-hour
// slots.
func TestAutoStepsAgainstLP(t *testing.T) {
	cbcsolve.Require(t)
	homes := 12
	if raceEnabled {
		homes = 4
	}
	if s := os.Getenv("HEARTH_STEPS_HOMES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("HEARTH_STEPS_HOMES=%q: want a positive number", s)
		}
		homes = n
	}
	perHour := []int{1}
	if os.Getenv("HEARTH_STEPS_QUARTER") == "1" {
		perHour = append(perHour, 4)
	}
	for _, ph := range perHour {
		g := stepsGaps(t, homes, ph)
		t.Logf("%d slots an hour: mean gap to the continuous optimum: two levels %.2f%%, automatic %.2f%%; automatic to the wallbox's optimum: mean %.4f%%, max %.4f%%, %d of %d homes above 1%%", ph, 100*g.fixed, 100*g.auto, 100*g.device, 100*g.worst, g.over, homes)
		if g.auto >= g.fixed {
			t.Fatalf("%d slots an hour: automatic levels' mean gap %.2f%% is not below the two levels' %.2f%%", ph, 100*g.auto, 100*g.fixed)
		}
		if g.device > 0.01 {
			t.Fatalf("%d slots an hour: automatic levels cost %.2f%% more than the wallbox's optimum on average, want at most 1%%", ph, 100*g.device)
		}
	}
}

// autoStepsWorst bounds the refined plan's gap to the wallbox's own
// optimum on every home of perHour slots an hour: issue 17's 1 %. (Before
// the refinement the compiled levels' worst of 40 seeded homes was 2.81 %
// hourly and 3.86 % on quarter-hours.)
func autoStepsWorst(int) float64 { return 0.01 }

// gaps are stepsGaps' figures: the mean relative gaps to the continuous
// optimum (the catalogue's two levels, automatic ones), the automatic
// levels' mean and worst gap to the wallbox's own optimum, and the
// number of homes where that gap is above 1 %.
type gaps struct {
	fixed, auto, device, worst float64
	over                       int
}

// stepsGaps solves homes seeded EV homes of perHour slots an hour with
// the catalogue's two levels and with automatic ones, passes every
// automatic plan through the checker, fails t where an automatic plan
// costs more than autoStepsWorst above the wallbox's own optimum, and
// returns the gaps.
func stepsGaps(t *testing.T, homes, perHour int) gaps {
	t.Helper()
	dt := 1 / float64(perHour)
	var g gaps
	for seed := range uint64(homes) {
		var got [2]float64
		var lpText, milpText string
		for i, steps := range []string{`power_steps = "fixed"`, `power_steps = "auto"`} {
			text, T, prices, maxKW, eff, need := stepsHomeAt(seed, steps, perHour)
			lpText = continuousLP(T, dt, prices, maxKW, eff, need)
			milpText = currentsMILP(T, dt, prices, maxKW, eff, need)
			name := fmt.Sprintf("steps%d_%d.toml", seed, perHour)
			if i == 0 {
				got[i] = optimumOf(t, name, text)
				continue
			}
			// The automatic levels' plan passes the independent
			// checker, and its charger's power per slot stores the
			// goal's energy at the physical efficiency.
			var kw []float64
			got[i], kw = checkedPlan(t, name, text, "ev")
			stored := 0.0
			for _, p := range kw {
				stored += p * eff * dt
			}
			if stored < need-1e-9 {
				t.Fatalf("%s: the plan's %v kW store %g kWh at %g, short of the %g kWh goal", name, kw, stored, eff, need)
			}
		}
		want, ok := cbcsolve.Solve(t, lpText)
		if !ok {
			t.Fatalf("seed %d: the continuous LP is infeasible\n%s", seed, lpText)
		}
		device, ok := cbcsolve.Solve(t, milpText)
		if !ok {
			t.Fatalf("seed %d: the currents' MILP is infeasible\n%s", seed, milpText)
		}
		if device < want-1e-6 {
			t.Fatalf("seed %d: whole currents (%g) beat the continuous optimum %g", seed, device, want)
		}
		// The catalogue's two levels are neither whole currents (3.7 kW
		// for 16 A's 3.68) nor 89 % (7.4 kW stores 6.6 kWh, not 6.586),
		// so only the automatic ones are held to either optimum; the
		// two levels beat the continuous one on seed 19.
		if got[0] < want-1e-6 {
			t.Logf("seed %d: the catalogue's two levels (%g) beat the continuous optimum %g: their figures round in the plan's favour", seed, got[0], want)
		}
		if got[1] < device-1e-6 {
			t.Fatalf("seed %d: the automatic levels' plan (%g) beats the wallbox's optimum %g", seed, got[1], device)
		}
		gf, ga, gd := (got[0]-want)/want, (got[1]-want)/want, (got[1]-device)/device
		t.Logf("seed %d, %d slots an hour: continuous %.4f, whole currents %.4f, two levels %.4f (+%.1f%%), automatic %.4f (+%.2f%% over the continuous, +%.2f%% over whole currents)", seed, perHour, want, device, got[0], 100*gf, got[1], 100*ga, 100*gd)
		if gd > autoStepsWorst(perHour) {
			t.Errorf("seed %d, %d slots an hour: the automatic levels' plan (%g) costs %.2f%% more than the wallbox's optimum %g, want at most %g%%", seed, perHour, got[1], 100*gd, device, 100*autoStepsWorst(perHour))
		}
		g.fixed += gf
		g.auto += ga
		g.device += gd
		g.worst = max(g.worst, gd)
		if gd > 0.01 {
			g.over++
		}
	}
	n := float64(homes)
	g.fixed, g.auto, g.device = g.fixed/n, g.auto/n, g.device/n
	return g
}

// TestAutoBatteryStepsAgainstLP: the same for a home battery that
// charges and discharges against random prices towards a goal: the
// automatic levels' plans, refined onto the battery's exact actions
// (devices/refine, as hearth refines every plan it reports; each refined
// plan passes the independent checker and costs no more than the solved
// one), cost within autoBatteryWorst of the continuous optimum (an LP
// written from the home's figures alone, CBC) on every home and less
// above it, on average, than the catalogue's single ±5 kW level.
// HEARTH_STEPS_HOMES sets the number of homes (default 12, 4 under the
// race detector); HEARTH_STEPS_QUARTER=1 also runs them on quarter-hour
// slots.
func TestAutoBatteryStepsAgainstLP(t *testing.T) {
	cbcsolve.Require(t)
	homes := 12
	if raceEnabled {
		homes = 4
	}
	if s := os.Getenv("HEARTH_STEPS_HOMES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("HEARTH_STEPS_HOMES=%q: want a positive number", s)
		}
		homes = n
	}
	perHour := []int{1}
	if os.Getenv("HEARTH_STEPS_QUARTER") == "1" {
		perHour = append(perHour, 4)
	}
	for _, ph := range perHour {
		var gapFixed, gapAuto, worst float64
		for seed := range uint64(homes) {
			var got [2]float64
			var lpText string
			var background float64
			for i, steps := range []string{`power_steps = "fixed"`, `power_steps = "auto"`} {
				var text string
				text, lpText, background = batteryHomeAt(seed, steps, ph)
				name := fmt.Sprintf("battery%d_%d.toml", seed, ph)
				if i == 0 {
					got[i] = optimumOf(t, name, text)
					continue
				}
				got[i], _ = checkedPlan(t, name, text, "b")
			}
			want, ok := cbcsolve.Solve(t, lpText)
			if !ok {
				t.Fatalf("seed %d: the continuous LP is infeasible\n%s", seed, lpText)
			}
			want += background
			if got[0] < want-1e-6 || got[1] < want-1e-6 {
				t.Fatalf("seed %d, %d slots an hour: a discrete plan (%g fixed, %g auto) beats the continuous optimum %g", seed, ph, got[0], got[1], want)
			}
			gf, ga := (got[0]-want)/want, (got[1]-want)/want
			t.Logf("seed %d, %d slots an hour: continuous %.4f, one level %.4f (+%.2f%%), automatic refined %.4f (+%.3f%%)", seed, ph, want, got[0], 100*gf, got[1], 100*ga)
			if ga > autoBatteryWorst {
				t.Errorf("seed %d, %d slots an hour: the refined plan (%g) costs %.3f%% more than the continuous optimum %g, want at most %g%%", seed, ph, got[1], 100*ga, want, 100*autoBatteryWorst)
			}
			gapFixed += gf
			gapAuto += ga
			worst = max(worst, ga)
		}
		gapFixed /= float64(homes)
		gapAuto /= float64(homes)
		t.Logf("%d slots an hour: gap to the continuous optimum: one level mean %.3f%%; automatic refined mean %.3f%%, max %.3f%%", ph, 100*gapFixed, 100*gapAuto, 100*worst)
		if gapAuto >= gapFixed {
			t.Fatalf("%d slots an hour: automatic levels' mean gap %.3f%% is not below one level's %.3f%%", ph, 100*gapAuto, 100*gapFixed)
		}
	}
}

// autoBatteryWorst bounds the refined battery plan's gap to the
// continuous optimum on every home: issue 17's 1 %. (Before the
// refinement the compiled levels were 0.6–2.3 % above it, mean 1.4 %, on
// the 12 default homes.)
const autoBatteryWorst = 0.01

// BenchmarkPowerSteps compiles and solves the seeded EV and battery homes
// of the tests above with the catalogue's fixed levels and with
// automatic ones: the ratio is what the finer levels cost one home.
func BenchmarkPowerSteps(b *testing.B) {
	for _, v := range []struct{ name, steps string }{{"fixed", `power_steps = "fixed"`}, {"auto", `power_steps = "auto"`}} {
		var texts []string
		for seed := range uint64(4) {
			ev, _, _, _, _, _ := stepsHome(seed, v.steps)
			bat, _, _ := batteryHome(seed, v.steps)
			texts = append(texts, ev, bat)
		}
		b.Run(v.name, func(b *testing.B) {
			for b.Loop() {
				for _, text := range texts {
					cfg, err := config.Parse("bench.toml", []byte(text), nil)
					if err != nil {
						b.Fatal(err)
					}
					c, err := compile.Compile(cfg.Neighbourhood, compile.Options{})
					if err != nil {
						b.Fatal(err)
					}
					lp := mva.NewLocalProblem(c.Problem, mva.Whole(c.Problem))
					s, err := local.New("be", lp)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := s.SolveRow(context.Background(), nil, make([]int, lp.NumInterior())); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// optimumOf compiles the TOML home text (named name) and returns its
// optimum by bucket elimination, failing t where it has none.
func optimumOf(t *testing.T, name, text string) float64 {
	t.Helper()
	cfg, err := config.Parse(name, []byte(text), nil)
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, text)
	}
	c, err := compile.Compile(cfg.Neighbourhood, compile.Options{})
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, text)
	}
	lp := mva.NewLocalProblem(c.Problem, mva.Whole(c.Problem))
	s, err := local.New("be", lp)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.SolveRow(context.Background(), nil, make([]int, lp.NumInterior()))
	if err != nil || math.IsInf(got, 1) {
		t.Fatalf("%s: %v %v\n%s", name, got, err, text)
	}
	return got
}

// checkedPlan compiles and solves the TOML home text (named name) as
// optimumOf does, passes its plan through the independent checker
// (devices/homecheck) and returns its optimum and device dev's power per
// slot (kW) as the result reports it.
func checkedPlan(t *testing.T, name, text, dev string) (float64, []float64) {
	t.Helper()
	cfg, err := config.Parse(name, []byte(text), nil)
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, text)
	}
	n := cfg.Neighbourhood
	c, err := compile.Compile(n, compile.Options{})
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, text)
	}
	lp := mva.NewLocalProblem(c.Problem, mva.Whole(c.Problem))
	s, err := local.New("be", lp)
	if err != nil {
		t.Fatal(err)
	}
	in := make([]int, lp.NumInterior())
	got, err := s.SolveRow(context.Background(), nil, in)
	if err != nil || math.IsInf(got, 1) {
		t.Fatalf("%s: %v %v\n%s", name, got, err, text)
	}
	h, refined, err := reportChecked(t, c, n, lp, in)
	if err != nil {
		t.Fatalf("%s: the checker rejects the plan: %v\n%s", name, err, text)
	}
	if refined > got+1e-9*math.Max(1, math.Abs(got)) {
		t.Fatalf("%s: the refined plan costs %g, more than the solved plan's %g", name, refined, got)
	}
	for _, d := range h.Schedules[0].Devices {
		if d.Device == dev {
			return refined, d.KW
		}
	}
	t.Fatalf("%s: no device %s in the plan", name, dev)
	return 0, nil
}

// BenchmarkRefine is the CPU cost of refining a compiled plan onto the
// wallbox's exact currents (devices/refine) against that of compiling and
// solving the home, on the seeded EV homes of TestAutoStepsAgainstLP
// (eight homes, hourly and on quarter-hours): "solve" compiles and solves
// them, "refine" refines their solved plans; "battery-solve" and
// "battery-refine" the same for the battery homes of
// TestAutoBatteryStepsAgainstLP, refined onto the battery's exact
// actions.
func BenchmarkRefine(b *testing.B) {
	for _, kind := range []string{"", "battery-"} {
		for _, perHour := range []int{1, 4} {
			benchmarkRefine(b, kind, perHour)
		}
	}
}

// benchmarkRefine is BenchmarkRefine's runs for kind ("" for the EV
// homes, "battery-") on perHour slots an hour.
func benchmarkRefine(b *testing.B, kind string, perHour int) {
	{
		type solved struct {
			n     *devices.Neighbourhood
			s     *devices.Schedule
			ev    *devices.Evaluation
			texts string
		}
		var homes []solved
		for seed := range uint64(8) {
			text, _, _, _, _, _ := stepsHomeAt(seed, `power_steps = "auto"`, perHour)
			if kind != "" {
				text, _, _ = batteryHomeAt(seed, `power_steps = "auto"`, perHour)
			}
			cfg, err := config.Parse("bench.toml", []byte(text), nil)
			if err != nil {
				b.Fatal(err)
			}
			c, assign := solveCentrally(b, cfg.Neighbourhood)
			s, ev, err := c.Report(assign)
			if err != nil {
				b.Fatal(err)
			}
			homes = append(homes, solved{cfg.Neighbourhood, s, ev, text})
		}
		b.Run(fmt.Sprintf("%ssolve/%dperhour", kind, perHour), func(b *testing.B) {
			for b.Loop() {
				for _, h := range homes {
					cfg, err := config.Parse("bench.toml", []byte(h.texts), nil)
					if err != nil {
						b.Fatal(err)
					}
					solveCentrally(b, cfg.Neighbourhood)
				}
			}
		})
		b.Run(fmt.Sprintf("%srefine/%dperhour", kind, perHour), func(b *testing.B) {
			for b.Loop() {
				for _, h := range homes {
					if _, _, err := refine.Schedule(h.n, h.s, h.ev); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// solveCentrally compiles n and solves it by bucket elimination, as
// optimumOf does, and returns the compiled problem and its optimal
// assignment.
func solveCentrally(tb testing.TB, n *devices.Neighbourhood) (*compile.Compiled, []int) {
	tb.Helper()
	c, err := compile.Compile(n, compile.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	lp := mva.NewLocalProblem(c.Problem, mva.Whole(c.Problem))
	s, err := local.New("be", lp)
	if err != nil {
		tb.Fatal(err)
	}
	in := make([]int, lp.NumInterior())
	if _, err := s.SolveRow(context.Background(), nil, in); err != nil {
		tb.Fatal(err)
	}
	assign := make([]int, len(c.Problem.Variables))
	for k, v := range lp.Vars {
		assign[v] = in[k]
	}
	return c, assign
}
