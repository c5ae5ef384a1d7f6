package energy_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/energy/internal/homegen"
	"github.com/hearth-dcop/hearth/devices/energy/internal/milp"
	"github.com/hearth-dcop/hearth/devices/plancheck"
	"github.com/hearth-dcop/hearth/internal/cbc"
)

// gap is the planner's excess over the continuous MILP optimum relative
// to the optimum's magnitude, or to 1 currency when the optimum is within
// 1 currency of zero (a relative gap means nothing there).
func gap(hearth, opt float64) float64 {
	return (hearth - opt) / math.Max(math.Abs(opt), 1)
}

// TestAgainstMILP is the truth test of issue 17: seeded homes with PV, one
// to three batteries, an EV with goals, two-way prices, limits,
// permissions and demand charges, in hourly, quarter-hour and mixed slots,
// solved by the planner and by CBC as a MILP of the same description
// (package internal/milp). Every plan passes the independent checker,
// never costs less than CBC's optimum beyond rounding (that would mean
// the two models differ), and stays within milp.GapBound of it in cost
// and in economic objective (import cost − export revenue − stored
// value + demand charge), the
// median within milp.MedianBound: issue 17's 1% on every home.
// HEARTH_MILP_HOMES sets the number of homes (default 50, 2 under the
// race detector; 60 or more for the long run) and HEARTH_MILP_DAY=1 adds
// 96-slot days.
func TestAgainstMILP(t *testing.T) {
	cbc.Require(t)
	n := 50
	if raceEnabled {
		n = 2
	}
	if s := os.Getenv("HEARTH_MILP_HOMES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	shapes := []homegen.Shape{homegen.Hourly, homegen.Quarter, homegen.Mixed}
	if os.Getenv("HEARTH_MILP_DAY") == "1" {
		shapes = append(shapes, homegen.Day96)
	}
	var gaps []float64
	for i := range n {
		seed := uint64(i + 1)
		shape := shapes[i%len(shapes)]
		h := homegen.Home(seed, shape)
		p, st, err := energy.SolveStats(h, energy.Options{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		rep := plancheck.Check(h, p)
		if err := rep.Err(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		opt, err := milp.Solve(context.Background(), h, t.TempDir())
		if errors.Is(err, milp.ErrNoSolver) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		g := gap(p.Cost(), opt.Cost)
		gaps = append(gaps, g)
		t.Logf("seed %d shape %d: hearth %.4f (economic %.4f), cbc %.4f (economic %.4f), gap %.3f%%, missed %d; %d LPs, relaxation %.4f", seed, shape, p.Cost(), p.Objective, opt.Cost, opt.Objective, 100*g, len(p.Missed), st.LPs, st.Root)
		if st.Root > opt.Cost+1e-5*math.Max(math.Abs(opt.Cost), 1) {
			t.Errorf("seed %d: the relaxation's optimum %.5f is above CBC's %.5f: it is no relaxation", seed, st.Root, opt.Cost)
		}
		if g > milp.GapBound {
			t.Errorf("seed %d: hearth's cost %.5f is %.2f%% above CBC's optimum %.5f", seed, p.Cost(), 100*g, opt.Cost)
		}
		// The measure: the economic objective (bill − stored
		// value) alone, which the penalties could shift.
		if ge := gap(p.Objective, opt.Objective); math.Abs(ge) > milp.GapBound {
			t.Errorf("seed %d: hearth's economic objective %.5f is %.2f%% off CBC's %.5f", seed, p.Objective, 100*ge, opt.Objective)
		}
		if g < -1e-5 {
			t.Errorf("seed %d: hearth's cost %.5f is below CBC's optimum %.5f: the models differ", seed, p.Cost(), opt.Cost)
		}
	}
	slices.Sort(gaps)
	if len(gaps) > 0 {
		med := gaps[len(gaps)/2]
		t.Logf("gap median %.3f%%, max %.3f%% over %d homes", 100*med, 100*gaps[len(gaps)-1], len(gaps))
		if med > milp.MedianBound && len(gaps) >= 10 {
			t.Errorf("median gap %.3f%% above %.1f%%", 100*med, 100*milp.MedianBound)
		}
	}
}

// TestHardTermsAgainstMILP: homes with hard goals, hard import and export
// limits and committed import caps (seeded, drawn tight enough that some
// cannot be kept) are refused by the planner exactly when CBC proves the
// MILP infeasible, and otherwise planned within 1% of CBC's optimum.
func TestHardTermsAgainstMILP(t *testing.T) {
	cbc.Require(t)
	n := 24
	if raceEnabled {
		n = 2
	}
	refused := 0
	for i := range n {
		seed := uint64(1000 + i)
		h := homegen.Home(seed, []homegen.Shape{homegen.Hourly, homegen.Mixed}[i%2])
		r := rand.New(rand.NewPCG(seed, 99))
		for s := range h.Storage {
			for k := range h.Storage[s].Goals {
				h.Storage[s].Goals[k].Hard = r.IntN(2) == 0
			}
		}
		if r.IntN(2) == 0 {
			h.Grid.HardLimits = true
			h.Grid.ImportLimit = 3 + 6*r.Float64()
		}
		if r.IntN(2) == 0 {
			h.Grid.Cap = make([]float64, len(h.Dt))
			for t := range h.Grid.Cap {
				h.Grid.Cap[t] = math.NaN()
				if r.IntN(3) == 0 {
					h.Grid.Cap[t] = 2 + 6*r.Float64()
				}
			}
		}
		p, opt, ok := planAndCBC(t, seed, h, &refused)
		if !ok {
			continue
		}
		g := gap(p.Cost(), opt.Cost)
		t.Logf("seed %d: hearth %.4f, cbc %.4f, gap %.3f%%", seed, p.Cost(), opt.Cost, 100*g)
		if g > milp.GapBound || g < -1e-5 {
			t.Errorf("seed %d: gap %.3f%% outside [0, %.0f%%]", seed, 100*g, 100*milp.GapBound)
		}
	}
	t.Logf("%d of %d homes infeasible", refused, n)
}

// TestCapWindowsAgainstMILP: homes whose highest import per window is
// priced above a budget (a street's soft feeder limit, Grid.Windows),
// with budgets that the home can keep, that it cannot, and negative ones,
// and prices from below the tariff's to far above it, are planned within
// milp.GapBound of CBC's optimum of the same description, every plan
// passing the checker.
func TestCapWindowsAgainstMILP(t *testing.T) {
	cbc.Require(t)
	cases := []struct {
		name  string
		seed  uint64
		shape homegen.Shape
		price float64
		// over: the rest of the street is already over the limit
		// (negative budgets).
		over bool
	}{
		{"cheap", 2001, homegen.Hourly, 0.05, false},
		{"miss", 2002, homegen.Hourly, 100, false},
		{"mixed slots", 2003, homegen.Mixed, 5, false},
		{"quarter hours", 2004, homegen.Quarter, 20, false},
		{"street over", 2005, homegen.Hourly, 3, true},
	}
	for i, c := range cases {
		if raceEnabled && i%2 == 0 {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			h := homegen.Home(c.seed, c.shape)
			r := rand.New(rand.NewPCG(c.seed, 5))
			T := len(h.Dt)
			cut := T/3 + r.IntN(T/3)
			for _, w := range [][2]int{{0, cut}, {cut, T}} {
				b := -1 + 7*r.Float64()
				if c.over {
					b = -1 - r.Float64()
				}
				h.Grid.Windows = append(h.Grid.Windows, energy.CapWindow{From: w[0], To: w[1], Budget: b, Price: c.price})
			}
			p, err := energy.Solve(context.Background(), h, energy.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := plancheck.Check(h, p).Err(); err != nil {
				t.Fatal(err)
			}
			opt, err := milp.Solve(context.Background(), h, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			g := gap(p.Cost(), opt.Cost)
			t.Logf("windows %+v: hearth %.4f (windows %.4f), cbc %.4f, gap %.3f%%", h.Grid.Windows, p.Cost(), energy.WindowCost(h.Grid.Windows, p.Import), opt.Cost, 100*g)
			if g > milp.GapBound || g < -1e-5 {
				t.Errorf("gap %.3f%% outside [0, %.0f%%]", 100*g, 100*milp.GapBound)
			}
		})
	}
}

// TestBudgetAtForcedLoad: a street's feeder budget within rounding of a
// load the home cannot avoid (hazel of examples/energy-street under a
// 9 kW soft limit: its battery is empty when its 1.6 kW load comes, and
// the budget is 1.59999997 kW) is a degenerate optimum, where the
// interior-point method's primal residual stalls just above its
// tolerance; the plan must still come, at CBC's optimum.
func TestBudgetAtForcedLoad(t *testing.T) {
	b, err := os.ReadFile("testdata/feeder-budget-at-load.json")
	if err != nil {
		t.Fatal(err)
	}
	var h energy.Home
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	p, err := energy.Solve(context.Background(), &h, energy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := plancheck.Check(&h, p).Err(); err != nil {
		t.Fatal(err)
	}
	cbc.Require(t)
	opt, err := milp.Solve(context.Background(), &h, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if g := gap(p.Cost(), opt.Cost); g > milp.GapBound || g < -1e-5 {
		t.Errorf("hearth %.5f, cbc %.5f: gap %.3f%%", p.Cost(), opt.Cost, 100*g)
	}
}

// TestArrivalsAgainstMILP: homes whose EV leaves twice and comes back
// each time with a charge of its own (Storage.Arrivals), with soft and
// hard goals at each departure counting from what it came back with, are
// planned within milp.GapBound of CBC's optimum of the same description
// (the MILP fixes the energy at each arrival, package internal/milp),
// refused exactly where CBC proves them infeasible; every plan holds the
// arrival's charge at each arrival, never charges while the car is away,
// and passes the checker. The arrivals bind: they move the car's energy
// away from what it left with.
func TestArrivalsAgainstMILP(t *testing.T) {
	cbc.Require(t)
	n := 12
	if raceEnabled {
		n = 2
	}
	shapes := []homegen.Shape{homegen.Hourly, homegen.Quarter, homegen.Mixed}
	refused, jumps, missed := 0, 0, 0
	for i := range n {
		seed := uint64(3000 + i)
		h := homegen.Trips(seed, shapes[i%len(shapes)])
		ev := &h.Storage[len(h.Storage)-1]
		p, opt, ok := planAndCBC(t, seed, h, &refused)
		if !ok {
			continue
		}
		s := len(h.Storage) - 1
		for _, a := range ev.Arrivals {
			if got := p.Energy[s][a.Index]; math.Abs(got-a.Energy) > 1e-9 {
				t.Errorf("seed %d: the car holds %g kWh at its arrival (boundary %d), it comes back with %g", seed, got, a.Index, a.Energy)
			}
			// What it held when it left, which a planner that
			// ignored the arrival would carry on with.
			if math.Abs(p.Energy[s][a.Index-1]-a.Energy) > 1e-3 {
				jumps++
			}
		}
		for tt, on := range ev.Available {
			if !on && p.Charge[s][tt] != 0 {
				t.Errorf("seed %d: the car charges %g kW in slot %d, while away", seed, p.Charge[s][tt], tt)
			}
		}
		missed += len(p.Missed)
		g := gap(p.Cost(), opt.Cost)
		if g > milp.GapBound || g < -1e-5 {
			t.Errorf("seed %d: hearth %.5f, cbc %.5f: gap %.3f%% outside [0, %.0f%%]", seed, p.Cost(), opt.Cost, 100*g, 100*milp.GapBound)
		}
		if ge := gap(p.Objective, opt.Objective); math.Abs(ge) > milp.GapBound {
			t.Errorf("seed %d: hearth's economic objective %.5f is %.2f%% off CBC's %.5f", seed, p.Objective, 100*ge, opt.Objective)
		}
		t.Logf("seed %d: arrivals %+v, goals %d, hearth %.4f, cbc %.4f, gap %.3f%%, missed %d", seed, ev.Arrivals, len(ev.Goals), p.Cost(), opt.Cost, 100*g, len(p.Missed))
	}
	t.Logf("%d of %d homes infeasible, %d soft misses, %d arrivals that move the car's energy", refused, n, missed, jumps)
	if jumps == 0 {
		t.Errorf("no arrival moves the car's energy: the test cannot tell a planner that ignores them")
	}
}

// planAndCBC plans h and asks CBC for its optimum. It reports false when
// there is nothing to compare: both refuse the home (counted in refused)
// or one refuses what the other plans (an error). A plan it returns has
// passed plancheck.
func planAndCBC(t *testing.T, seed uint64, h *energy.Home, refused *int) (*energy.Plan, *milp.Result, bool) {
	t.Helper()
	p, err := energy.Solve(context.Background(), h, energy.Options{})
	opt, cerr := milp.Solve(context.Background(), h, t.TempDir())
	switch {
	case errors.Is(cerr, milp.ErrInfeasible):
		if !errors.Is(err, energy.ErrInfeasible) {
			t.Errorf("seed %d: CBC proves the home infeasible, the planner says %v", seed, err)
		}
		*refused++
		return nil, nil, false
	case cerr != nil:
		t.Fatalf("seed %d: %v", seed, cerr)
	case err != nil:
		t.Errorf("seed %d: CBC plans at %.4f, the planner refuses: %v", seed, opt.Cost, err)
		return nil, nil, false
	}
	if err := plancheck.Check(h, p).Err(); err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	return p, opt, true
}
