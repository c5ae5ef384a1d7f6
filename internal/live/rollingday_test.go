package live

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/homesim"
	"github.com/hearth-dcop/hearth/devices/homesim/tracecheck"
	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// solveRun solves a round exactly (DPOP between the homes, bucket
// elimination inside each), as the example's [solver] asks.
func solveRun(t *testing.T, r *homesolve.Run) []int {
	t.Helper()
	sol, err := sim.Solve(context.Background(), r.Problem(), sim.Options{Protocol: dpop.New, Seed: 1, Eager: true,
		Solver: func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("be", lp) }})
	if err != nil {
		t.Fatal(err)
	}
	return sol.Assign
}

// TestRollingDay closes the live loop in process, without a broker or a
// wall clock: the example street's virtual homes (devices/homesim, base
// load noise σ 5 %, seed 7, as in TestLiveStreetDay) publish their state
// at every slot boundary, a round plans the street on the rolling horizon
// from it (Inputs.Load), and every device runs its slot-0 command for the
// whole slot. tracecheck replays what the homes did — no physical bound
// broken, every goal kept — and the day is priced against the plan made
// with perfect information (the whole night and the base load the homes
// drew known at 17:00): its bill, and the objective the homes plan by
// (bill, committed peak, goals missed; devices.Neighbourhood.Evaluate on
// the drawn base load).
//
// Measured (this test, deterministic), on automatic power levels (the
// default since live streets take them): with the example's weight on
// the committed peak, the day's objective is 15.5 % above the perfect
// plan's (49.27 against 42.67) and its bill 10.9 % (16.85 $ against
// 15.19 $): re-planning every slot, the rounds charge cedar's car from
// 20:00 (the last, dear hour of the 17:00 window, under the cap its oven
// took, then the 21:00 window) and dogwood's battery in the night window,
// where the perfect plan does the other way round; and the base load's
// noise, which only the perfect plan knows, takes dogwood's import in
// the 17:00 window to 0.11 kW, above the nothing it planned, whose
// tightest level is 3.9 kW (peak 32.27 against 27.32). Alder and birch alone (the two-home
// day) and the day with no weight on the peak equal the perfect plan to
// the cent (8.00 $, 13.76 $). On the catalogue's fixed levels the same
// day was 65.94 against 64.22 (+2.7 %) and its bill 19.72 $ against
// 15.65 $ (+26.0 %): the automatic levels lower both. Before a rolling
// round's refinement kept slot 0 at least at the solved plan's charge
// (refine.HomeRolling) the two-home day was 17.08 against 12.21: the
// refinement deferred alder's charging to cheaper slots, the next round's
// quantised levels then found the car behind and bought the goal with
// the top level (8.46 kW in the 21:00 window).
func TestRollingDay(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		// bill and objective are the margins above the perfect plan's.
		bill, objective float64
		// race: run under the race detector too. The four homes' days
		// take about 40 s there (2 s without), which CI's race-only run
		// cannot afford; two of the homes with the example's weights
		// close the same loop through the same code in a few seconds
		// (measured: both the perfect plan's bill and objective, to the
		// cent).
		race bool
	}{
		{name: "example", file: liveStreet, bill: 0.15, objective: 0.20},
		{name: "bill only", file: "testdata/billonly/street.toml", bill: 0.005, objective: 0.005},
		{name: "two homes", file: "testdata/pair/street.toml", bill: 0.005, objective: 0.005, race: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if underRace && !tc.race {
				t.Skip("about 40 s for the four homes under the race detector; go test -run TestRollingDay ./internal/live (2 s)")
			}
			bill, planBill, obj, planObj := rollingDay(t, tc.file)
			t.Logf("bill %.2f against the perfect plan's %.2f (%+.1f%%); objective %.2f against %.2f (%+.1f%%)",
				bill, planBill, 100*(bill/planBill-1), obj, planObj, 100*(obj/planObj-1))
			if bill > planBill*(1+tc.bill) {
				t.Errorf("realised bill %.2f, more than %.1f%% above the perfect plan's %.2f", bill, 100*tc.bill, planBill)
			}
			if obj > planObj*(1+tc.objective) {
				t.Errorf("realised objective %.2f, more than %.1f%% above the perfect plan's %.2f", obj, 100*tc.objective, planObj)
			}
		})
	}
}

// rollingDay lives the night of street file (TestRollingDay) and returns
// the realised bill and objective and the perfect plan's.
func rollingDay(t *testing.T, file string) (bill, planBill, obj, planObj float64) {
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Neighbourhood
	hz := n.Horizon
	slot := time.Duration(hz.SlotMinutes) * time.Minute
	day := time.Date(2026, 11, 26, 0, hz.Start, 0, 0, time.Local)
	now := day
	clk, err := NewClock(day, day, 1, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	opts := homesim.Options{Noise: 0.05, Seed: 7}
	var homes []*homesim.Home
	for hi := range n.Homes {
		o := opts
		o.PV, o.Trips = cfg.PV[hi], homesim.DefaultTrips(n, hi)
		h, err := homesim.NewHome(n, hi, day, day, o)
		if err != nil {
			t.Fatal(err)
		}
		homes = append(homes, h)
	}
	in := NewInputs(cfg, "hearth", n.Homes[0].Name, clk, nil)
	for k := range hz.Slots {
		now = day.Add(time.Duration(k) * slot)
		// Every device's state, as home-sim publishes it.
		for hi, h := range homes {
			for d, dev := range n.Homes[hi].Devices {
				props, plugged := h.State(d)
				m := map[string]any{"time": now.Format(time.RFC3339)}
				for p, v := range props {
					m[p] = math.Round(v*1000) / 1000
				}
				if plugged != nil {
					m["plugged"] = *plugged
				}
				b, err := json.Marshal(m)
				if err != nil {
					t.Fatal(err)
				}
				in.Handle(StateTopic("hearth", n.Homes[hi].Name, dev.Name), b)
			}
		}
		r, _, _, err := in.Load(file, homesolve.Overrides{}, now)
		if err != nil {
			t.Fatalf("round at %s: %v", now.Format("15:04"), err)
		}
		assign := solveRun(t, r)
		for hi := range n.Homes {
			hp, err := r.HomePlan(assign, hi)
			if err != nil {
				t.Fatal(err)
			}
			for _, dp := range hp.Devices {
				c := homesim.Command{Round: now.Format("1504"), Created: now, SlotStart: now, SlotEnd: now.Add(slot), Expires: now.Add(slot),
					Action: dp.Actions[0], PowerKW: dp.KW[0]}
				if err := homes[hi].Command(dp.Device, c); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, h := range homes {
			h.Advance(now.Add(slot))
		}
	}
	drawn := homesim.AsSimulated(n, opts, cfg.PV)
	pr, err := homesolve.New(file, drawn, homesolve.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	passign := solveRun(t, pr)
	var done, planned devices.Schedule
	for hi, h := range homes {
		tr := h.Trace()
		rep := tracecheck.Check(n, hi, cfg.PV[hi], tr)
		for _, v := range rep.Violations {
			t.Errorf("%s: %s", h.Name(), v)
		}
		for _, m := range rep.Missed {
			t.Errorf("%s: goal missed: %s", h.Name(), m)
		}
		hp, err := pr.HomePlan(passign, hi)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: realised bill %.2f, perfect plan %.2f", h.Name(), rep.Bill, hp.EnergyCost)
		bill += rep.Bill
		planBill += hp.EnergyCost
		done.Homes = append(done.Homes, tr.Schedule(&n.Homes[hi]))
		planned.Homes = append(planned.Homes, homesim.PlanSchedule(&n.Homes[hi], hp))
	}
	evDone, err := drawn.Evaluate(&done)
	if err != nil {
		t.Fatal(err)
	}
	evPlan, err := drawn.Evaluate(&planned)
	if err != nil {
		t.Fatal(err)
	}
	if !evDone.Feasible || !evPlan.Feasible {
		t.Fatalf("the model refuses the day (%v) or the plan (%v)", evDone.Violations, evPlan.Violations)
	}
	t.Logf("objective realised %.2f (bill %.2f, peak %.2f), perfect plan %.2f (bill %.2f, peak %.2f)",
		evDone.Cost, evDone.PriceCost, evDone.PeakCost, evPlan.Cost, evPlan.PriceCost, evPlan.PeakCost)
	return bill, planBill, evDone.Cost, evPlan.Cost
}
