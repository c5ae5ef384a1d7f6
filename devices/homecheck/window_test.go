package homecheck_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/homecheck"
	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/devices/internal/testhomes"
)

// windowStreet is one home whose EV is plugged in from 18:30 to 06:30
// on a night of hourly slots from 17:00, its cheapest slots the ones
// the car is away in.
const windowStreet = `[horizon]
start = "17:00"
slots = 14
[prices]
default = 0.30
periods = [{ from = "17:00", to = "19:00", price = 0.02 }, { from = "06:00", to = "07:00", price = 0.02 }, { from = "23:00", to = "05:00", price = 0.12 }]
[[home]]
name = "alder"
background_kw = 0.4
[[home.device]]
name = "ev"
kind = "ev_wallbox_7kw"
power_steps = "fixed"
arrival = "18:30"
departure = "06:30"
initial = { charge = 15.0 }
rules = ["charge geq 40 before 06:30"]
`

// TestCatchesChargingWhileAway: the solved plan of a home whose EV has
// a plugged-in window charges only while the car is there and passes
// the checker; the same plan charging in a slot the car is away in —
// the cheapest — is rejected, naming the device and slot, by the
// checker and by the model's own evaluation.
func TestCatchesChargingWhileAway(t *testing.T) {
	cfg, err := config.Parse("w.toml", []byte(windowStreet), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Neighbourhood
	sched, ev, ok := solveSchedule(t, n)
	if !ok {
		t.Fatal("no plan")
	}
	good, ok := solve(t, n)
	if !ok {
		t.Fatal("no plan")
	}
	dev := &n.Homes[0].Devices[0]
	for _, s := range []int{0, 1, 13} {
		if !dev.AwayIn(s) {
			t.Fatalf("slot %d is not away: %v", s, dev.Away)
		}
		if a := sched.Homes[0].Actions[0][s]; a != dev.Idle() {
			t.Fatalf("the plan runs %s in slot %d, while the car is away", dev.Act(a).Name, s)
		}
	}
	if !ev.Feasible {
		t.Fatalf("the plan is infeasible: %v", ev.Violations)
	}
	if err := homecheck.Check(n, homesolve.Street(good)).Err(); err != nil {
		t.Fatalf("the solved plan is rejected: %v", err)
	}
	charge := dev.Actions[len(dev.Actions)-1].Name
	for _, s := range []int{0, 13} {
		bad := clone(homesolve.Street(good))
		bad.Plans[0].Actions["ev"][s] = charge
		rep := homecheck.Check(n, bad)
		want := fmt.Sprintf("device ev slot %d:", s)
		if !errors.Is(rep.Err(), homecheck.ErrRejected) || !slices.ContainsFunc(rep.Violations, func(v string) bool {
			return strings.Contains(v, want) && strings.Contains(v, "while away")
		}) {
			t.Errorf("charging in slot %d while away: violations %v", s, rep.Violations)
		}
		// One home alone, as hearth run publishes it.
		p := homesolve.Plan(good.Schedules[0])
		p.Levels = nil
		p.Actions["ev"] = slices.Clone(p.Actions["ev"])
		p.Actions["ev"][s] = charge
		if rep := homecheck.CheckHome(n, 0, p); rep.OK() {
			t.Errorf("one home charging in slot %d while away passes", s)
		}
		bs := &devices.Schedule{Homes: slices.Clone(sched.Homes)}
		bs.Homes[0].Actions = [][]int{slices.Clone(sched.Homes[0].Actions[0])}
		bs.Homes[0].Actions[0][s] = len(dev.Actions) - 1
		if e, err := n.Evaluate(bs); err != nil || e.Feasible || !slices.ContainsFunc(e.Violations, func(v string) bool { return strings.Contains(v, "while away") }) {
			t.Errorf("the model's evaluation of charging in slot %d while away: %v %+v", s, err, e)
		}
	}
}

// TestChecksArrivalCharge: a car that comes back with 5 kWh
// (arrival_charge) where it started the night with 15 is replayed from
// 5 kWh at its arrival: its solved plan passes, and the same plan with
// one charging slot fewer — which would still meet the goal from 15 kWh
// — is rejected for missing it.
func TestChecksArrivalCharge(t *testing.T) {
	text := strings.Replace(windowStreet, "departure = \"06:30\"\n", "departure = \"06:30\"\narrival_charge = 5\n", 1)
	cfg, err := config.Parse("w.toml", []byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Neighbourhood
	good, ok := solve(t, n)
	if !ok {
		t.Fatal("no plan")
	}
	if err := homecheck.Check(n, homesolve.Street(good)).Err(); err != nil {
		t.Fatalf("the solved plan is rejected: %v", err)
	}
	bad := clone(homesolve.Street(good))
	acts := bad.Plans[0].Actions["ev"]
	i := slices.IndexFunc(acts, func(a string) bool { return a != "off" })
	if i < 0 {
		t.Fatalf("the plan never charges: %v", acts)
	}
	acts[i] = "off"
	rep := homecheck.Check(n, bad)
	if rep.OK() || !slices.ContainsFunc(rep.Violations, func(v string) bool {
		return strings.Contains(v, `rule "charge geq 40 before 06:30" holds: true; replayed: false`)
	}) {
		t.Errorf("a plan short of the goal from the arrival charge passes: %v", rep.Violations)
	}
}

// TestRandomHomesAway: seeded random neighbourhoods whose devices leave
// in some slots, some coming back with a charge of their own
// (testhomes.Options.Away), solved exactly: the checker accepts every
// plan, alone and in its street, and finds the same missed goals.
func TestRandomHomesAway(t *testing.T) {
	seeds := 600
	if testing.Short() {
		seeds = 150
	}
	solved, away := 0, 0
	for seed := range uint64(seeds) {
		n := testhomes.Random(90000+seed, testhomes.Options{Homes: 1 + int(seed%2), Slots: 3 + int(seed%2), Devices: 2, Actions: 3, Mixed: true, Feeder: true, Soft: seed%4 != 0, Away: true})
		h, ok := solve(t, n)
		if !ok {
			continue
		}
		solved++
		for _, hm := range n.Homes {
			for _, d := range hm.Devices {
				if slices.Contains(d.Away, true) {
					away++
				}
			}
		}
		rep := homecheck.Check(n, homesolve.Street(h))
		if err := rep.Err(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if len(rep.Misses) != len(h.GoalsMissed) {
			t.Fatalf("seed %d: the checker finds %d missed goals, the plan %d", seed, len(rep.Misses), len(h.GoalsMissed))
		}
		for hi, p := range h.Schedules {
			p.Levels = nil
			if err := homecheck.CheckHome(n, hi, homesolve.Plan(p)).Err(); err != nil {
				t.Fatalf("seed %d home %s alone: %v", seed, p.Home, err)
			}
		}
	}
	if solved < seeds/3 || away < seeds/8 {
		t.Fatalf("%d of %d neighbourhoods solved, %d devices away in them: the generator tests too little", solved, seeds, away)
	}
	t.Logf("%d of %d neighbourhoods solved and checked, %d devices away in them", solved, seeds, away)
}
