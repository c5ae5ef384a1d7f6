package street_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices/compile"
	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/internal/checkedplan"
	"github.com/hearth-dcop/hearth/devices/plancheck"
	"github.com/hearth-dcop/hearth/devices/street"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// TestWindowEnergyHome: an energy home's EV with a plugged-in window
// (arrival 18:30, departure 06:30 on hourly slots from 17:00) is
// unavailable in the slots it is away in, whole slots it arrives or
// leaves in included (0, 1 and 13); its plan charges only while it is
// there and meets its goal by the departure, passing the checker, and
// the same plan charging in an away slot (the cheapest) is rejected.
func TestWindowEnergyHome(t *testing.T) {
	const text = `[horizon]
start = "17:00"
slots = 14
[prices]
default = 0.30
periods = [{ from = "17:00", to = "19:00", price = 0.02 }, { from = "06:00", to = "07:00", price = 0.02 }, { from = "23:00", to = "05:00", price = 0.12 }]
[[home]]
name = "fir"
planner = "energy"
background_kw = 0.4
[[home.device]]
name = "ev"
kind = "ev_wallbox_11kw"
arrival = "18:30"
departure = "06:30"
initial = { charge = 15.0 }
rules = ["charge geq 40 before 06:30"]
`
	cfg, err := config.Parse("w.toml", []byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, ms, err := street.Split(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || len(ms[0].Home.Storage) != 1 {
		t.Fatalf("split: %d energy homes", len(ms))
	}
	h := ms[0].Home
	st := &h.Storage[0]
	var away []int
	for s, ok := range st.Available {
		if !ok {
			away = append(away, s)
		}
	}
	if !slices.Equal(away, []int{0, 1, 13}) {
		t.Fatalf("unavailable in %v, want [0 1 13]", away)
	}
	p, err := energy.Solve(context.Background(), h, energy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range away {
		if p.Charge[0][s] > 1e-6 {
			t.Errorf("the plan charges %g kW in slot %d, while the car is away", p.Charge[0][s], s)
		}
	}
	if p.Energy[0][14] < 40-1e-6 || len(p.Missed) > 0 {
		t.Errorf("the car holds %g kWh at 07:00 (missed %v), want at least 40", p.Energy[0][14], p.Missed)
	}
	if err := plancheck.Check(h, p).Err(); err != nil {
		t.Fatalf("the plan is rejected: %v", err)
	}
	p.Charge[0][0] = 2
	rep := plancheck.Check(h, p)
	if rep.OK() || !slices.ContainsFunc(rep.Violations, func(v string) bool { return strings.Contains(v, "slot 0: acts while unavailable") }) {
		t.Errorf("charging in slot 0 while away passes: %v", rep.Violations)
	}
}

// arrivalStreet writes a one-home street from 08:00 over a day of hourly
// slots whose EV is away until an evening arrival, comes back with a
// charge of its own (arrival_charge, in kWh or % on odd seeds) below
// what it held while away, and has a hard goal at its departure above
// what it comes back with (on some seeds below what it held while
// away), under random prices that are cheapest while the car is away:
// a plan that charged while away, or counted the charge the car left
// with, would cost less. planner is "" (compiled) or "energy".
func arrivalStreet(seed uint64, planner string) (text string, back, goal float64) {
	r := rand.New(rand.NewPCG(seed, 0xa7))
	// The least power is the compiled lattice's least current, 6 A on
	// the wallbox's phases (the energy mapping's default is half the
	// maximum).
	kind, maxKW, minKW := "ev_wallbox_7kw", 7.4, 1.38
	if r.IntN(2) == 0 {
		kind, maxKW, minKW = "ev_wallbox_11kw", 11, 4.14
	}
	arrive := []string{"17:30", "18:00", "19:00"}[r.IntN(3)]
	depart := []string{"06:00", "07:00", "07:30"}[r.IntN(3)]
	initial := float64(30 + r.IntN(28))
	back = float64(5 + r.IntN(20))
	charge := strconv.FormatFloat(back, 'g', -1, 64)
	if seed%2 == 1 {
		back = math.Round(back/60*100) * 60 / 100
		charge = fmt.Sprintf("%q", strconv.Itoa(int(math.Round(back/60*100)))+"%")
	}
	// At least two hours at full power beyond what it comes back with,
	// at most six.
	goal = math.Round(math.Min(back+maxKW*(2+4*r.Float64())*0.9, 58)*10) / 10
	var ps []string
	for t := range 24 {
		p := float64(10+r.IntN(40)) / 100
		if t < 9 {
			p = 0.01 // 08:00–17:00, the car is away
		}
		ps = append(ps, strconv.FormatFloat(p, 'f', -1, 64))
	}
	if planner != "" {
		planner = fmt.Sprintf("planner = %q\n", planner)
	}
	return fmt.Sprintf(`[horizon]
start = "08:00"
slots = 24
[coordination]
windows = []
[objective]
peak = 0
[prices]
per_slot = [%s]
[[home]]
name = "h"
background_kw = 0
%s[[home.device]]
name = "ev"
kind = %q
min_charge_kw = %g
arrival = %q
departure = %q
arrival_charge = %s
initial = { charge = %g }
rules = [{ rule = "charge geq %g before %s", hard = true }]
`, strings.Join(ps, ", "), planner, kind, minKW, arrive, depart, charge, initial, goal, depart), back, goal
}

// TestArrivalChargeEnergyHome: an energy home's EV that comes back with
// a charge of its own (arrival_charge) holds it at its arrival and
// meets its goal from there, charging only while plugged in, and the
// plan passes the checker; the compiled home of the same file (solved by
// bucket elimination and refined onto the wallbox's currents) agrees,
// also where the car held more than the goal before its trip (a
// "before" goal counts from the arrival in both).
// The energy plan's continuous power relaxes the compiled lattice (whole
// amperes from the wallbox's least current, effects rounded down to the
// charge's steps), so it costs no more than the compiled plan, and at
// most 3% less: a whole-current plan rounds at most one slot's power
// up by less than a step, at up to five times the cheapest plugged-in
// price on these homes.
func TestArrivalChargeEnergyHome(t *testing.T) {
	homes := 8
	if raceEnabled {
		homes = 2
	}
	for seed := range uint64(homes) {
		text, back, goal := arrivalStreet(seed, "energy")
		cfg, err := config.Parse("e.toml", []byte(text), nil)
		if err != nil {
			t.Fatal(err)
		}
		_, ms, err := street.Split(cfg)
		if err != nil {
			t.Fatal(err)
		}
		h := ms[0].Home
		st := &h.Storage[0]
		if len(st.Arrivals) != 1 || math.Abs(st.Arrivals[0].Energy-back) > 1e-9 || st.Available[st.Arrivals[0].Index-1] || !st.Available[st.Arrivals[0].Index] {
			t.Fatalf("seed %d: arrivals %+v (available %v), want one with %g kWh at the first plugged-in slot", seed, st.Arrivals, st.Available, back)
		}
		p, err := energy.Solve(context.Background(), h, energy.Options{})
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, text)
		}
		if err := plancheck.Check(h, p).Err(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		a := st.Arrivals[0].Index
		if math.Abs(p.Energy[0][a]-back) > 1e-9 || p.Energy[0][len(h.Dt)] < goal-1e-4 {
			t.Errorf("seed %d: the car holds %g kWh at its arrival and %g at the end, want %g and at least %g", seed, p.Energy[0][a], p.Energy[0][len(h.Dt)], back, goal)
		}
		for s, on := range st.Available {
			if !on && p.Charge[0][s] != 0 {
				t.Errorf("seed %d: charges %g kW in slot %d, while away", seed, p.Charge[0][s], s)
			}
		}
		ctext, _, _ := arrivalStreet(seed, "")
		compiled := compiledCost(t, ctext)
		t.Logf("seed %d: left with %g kWh, back with %g at boundary %d, goal %g: energy %.4f, compiled %.4f (%.2f%%)", seed, h.Storage[0].Initial, back, a, goal, p.Objective, compiled, 100*(compiled-p.Objective)/compiled)
		if p.Objective > compiled+1e-6 {
			t.Errorf("seed %d: the energy plan (%.5f) costs more than the compiled plan (%.5f), which it relaxes", seed, p.Objective, compiled)
		}
		if (compiled-p.Objective)/compiled > 0.03 {
			t.Errorf("seed %d: the compiled plan (%.5f) costs %.2f%% more than the energy plan (%.5f)", seed, compiled, 100*(compiled-p.Objective)/compiled, p.Objective)
		}
	}
}

// compiledCost plans a one-home street compiled, by bucket elimination,
// refines the plan onto the devices' exact powers and returns its cost,
// after the independent checker accepts it.
func compiledCost(t *testing.T, text string) float64 {
	t.Helper()
	cfg, err := config.Parse("c.toml", []byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Neighbourhood
	c, err := compile.Compile(n, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lp := mva.NewLocalProblem(c.Problem, mva.Whole(c.Problem))
	s, err := local.New("be", lp)
	if err != nil {
		t.Fatal(err)
	}
	in := make([]int, lp.NumInterior())
	if got, err := s.SolveRow(context.Background(), nil, in); err != nil || math.IsInf(got, 1) {
		t.Fatalf("compiled: %v %v\n%s", got, err, text)
	}
	_, cost, check, err := checkedplan.Report(c, n, lp, in)
	if err != nil {
		t.Fatal(err)
	}
	if check != nil {
		t.Fatalf("compiled: the checker rejects the plan: %v", check)
	}
	return cost
}
