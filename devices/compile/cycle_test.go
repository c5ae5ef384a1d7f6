package compile_test

import (
	"context"
	"math"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/compile"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// tieHome is a home with a lossless battery at a flat tariff that pays
// feed-in at the price: charging in one slot and discharging in another
// costs nothing, so without a cycling cost every such flip ties with
// leaving the battery idle.
func tieHome(t *testing.T, cycle float64) *devices.Neighbourhood {
	t.Helper()
	e, err := devices.Lookup("home_battery", "")
	if err != nil {
		t.Fatal(err)
	}
	if e, err = e.Sized(devices.Sizing{ChargeEff: 1, DischargeEff: 1}); err != nil {
		t.Fatal(err)
	}
	const slots = 4
	dev, props := e.Instantiate("battery", "", 60)
	dev.CycleCost = cycle
	props[0].Initial = 5
	h := devices.Home{Name: "h", Devices: []devices.Device{dev}, Properties: props}
	for range slots {
		h.Background = append(h.Background, 1)
	}
	h.Rules = append(h.Rules, e.Bounds("soc", "battery")...)
	h.Rules = append(h.Rules, devices.Rule{Text: "soc geq 5 at 4", Location: "battery", Property: "soc", Rel: devices.Geq, Goal: 5, Prefix: devices.At, T1: slots})
	n := &devices.Neighbourhood{Name: "tie", Horizon: devices.Horizon{Slots: slots, SlotMinutes: 60}, Levels: 1,
		Weights: devices.Weights{Price: 1}, Homes: []devices.Home{h}}
	for range slots {
		n.Prices = append(n.Prices, 0.2)
	}
	return n
}

// TestCycleCostBreaksTies shows the tie (a charge-then-discharge plan
// costs what the idle plan costs without a cycling cost) and that with
// the home_battery's default cycle cost the optimum never cycles.
func TestCycleCostBreaksTies(t *testing.T) {
	idle, flip := make([]int, 4), make([]int, 4)
	free := tieHome(t, 0)
	bat := &free.Homes[0].Devices[0]
	for k, a := range bat.Actions {
		switch {
		case a.Power == 0:
			idle[0], idle[1], idle[2], idle[3] = k, k, k, k
		case a.Power > 0:
			flip[0] = k
		default:
			flip[1] = k
		}
	}
	flip[2], flip[3] = idle[2], idle[3]
	cost := func(n *devices.Neighbourhood, acts []int) float64 {
		ev, err := n.Evaluate(&devices.Schedule{Homes: []devices.HomeSchedule{{Actions: [][]int{acts}}}})
		if err != nil || !ev.Feasible {
			t.Fatalf("evaluate %v: %v %v", acts, err, ev.Violations)
		}
		return ev.Cost
	}
	if a, b := cost(free, idle), cost(free, flip); math.Abs(a-b) > 1e-12 {
		t.Fatalf("no tie to break: idle %v, flip %v", a, b)
	}
	n := tieHome(t, devices.DefaultBatteryCycleCost)
	if cost(n, flip) <= cost(n, idle) {
		t.Fatalf("the cycling cost does not price the flip: idle %v, flip %v", cost(n, idle), cost(n, flip))
	}
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
	if _, err := s.SolveRow(context.Background(), nil, in); err != nil {
		t.Fatal(err)
	}
	assign := make([]int, len(c.Problem.Variables))
	for k, v := range lp.Vars {
		assign[v] = in[k]
	}
	sched, _, err := c.Report(assign)
	if err != nil {
		t.Fatal(err)
	}
	for slot, a := range sched.Homes[0].Actions[0] {
		if a != idle[slot] {
			t.Fatalf("slot %d: the battery runs %s; with a cycling cost the optimum leaves it idle", slot, bat.Actions[a].Name)
		}
	}
}
