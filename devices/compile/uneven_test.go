package compile_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/compile"
	"github.com/hearth-dcop/hearth/devices/internal/testhomes"
)

// TestUnevenExact solves random homes on horizons of uneven slots (slot
// lengths of one, two and half the first's; some actions with effects of
// their own for the double length) with bucket elimination and compares
// the optimum with enumeration of every schedule through the model's
// evaluator: the per-slot hours of the bill, the scaled drift and
// effects and the peak term's per-slot weights the compiler puts in its
// tables are the ones Evaluate charges.
func TestUnevenExact(t *testing.T) {
	solved, seeds, own := 0, 240, 0
	if raceEnabled {
		seeds = 60
	}
	for seed := range uint64(seeds) {
		k := int(seed % 2)
		n := testhomes.Random(9000+seed, testhomes.Options{Homes: 1 + k, Slots: 3, Devices: 2 - k, Actions: 3 - k, Feeder: true, Soft: seed%3 != 0, Uneven: true})
		if !n.Horizon.Uneven() {
			t.Fatalf("seed %d: an even horizon", seed)
		}
		for _, h := range n.Homes {
			for _, d := range h.Devices {
				for _, a := range d.Actions {
					if a.ByLength != nil {
						own++
					}
				}
			}
		}
		if solveExact(t, seed, n) != nil {
			solved++
		}
	}
	if solved < seeds/3 || own < seeds/4 {
		t.Fatalf("%d of %d solved, %d actions with effects of their own: the generator tests too little", solved, seeds, own)
	}
	t.Logf("%d of %d neighbourhoods solved, %d actions with effects of their own", solved, seeds, own)
}

// TestUnevenEvalMatchesEvaluate: the compiled problem's cost of random
// schedules of homes on uneven slots is the model's own evaluation, and
// Decode inverts Encode.
func TestUnevenEvalMatchesEvaluate(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 17))
	encoded := 0
	for seed := range uint64(60) {
		n := testhomes.Random(9500+seed, testhomes.Options{Homes: 1 + int(seed%3), Slots: 3 + int(seed%4), Devices: 3, Actions: 3, Feeder: true, Soft: seed%2 == 0, Uneven: true})
		c, ok := compileOrInfeasible(t, n)
		if !ok {
			continue
		}
		for range 30 {
			s := testhomes.RandomSchedule(rng, n)
			ev, err := n.Evaluate(s)
			if err != nil {
				t.Fatal(err)
			}
			assign, err := c.Encode(s)
			if errors.Is(err, compile.ErrBreaksRules) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			encoded++
			got, err := c.Problem.Eval(assign)
			if err != nil {
				t.Fatal(err)
			}
			if !same(got, ev.Cost) {
				t.Fatalf("seed %d: Problem.Eval = %v, Evaluate = %v (%v)", seed, got, ev.Cost, ev.Violations)
			}
			back, err := c.Decode(assign)
			if err != nil {
				t.Fatal(err)
			}
			ev2, err := n.Evaluate(back)
			if err != nil || !same(ev2.Cost, ev.Cost) {
				t.Fatalf("seed %d: decoded schedule costs %v, want %v (%v)", seed, ev2.Cost, ev.Cost, err)
			}
		}
	}
	if encoded < 200 {
		t.Fatalf("only %d encodable schedules", encoded)
	}
}

// TestUnevenPeakByHand works the peak term of uneven slots by hand: a
// home with a 1 kW background and a 1 kW heater that must make 2 units
// of heat (1 per half hour), on slots of 30, 60 and 30 minutes, and on
// four half-hour slots. The one window's committed level is the 2 kW
// the home draws while the heater runs; the peak term weighs each slot's
// squared power by its hours times the first slot's
// (Horizon.PeakHours), so the window costs 2²·0.5·(0.5+1+0.5) = 4 on
// both horizons: a level costs the same whatever the cut of the time it
// lasts.
func TestUnevenPeakByHand(t *testing.T) {
	build := func(lengths []int) *devices.Neighbourhood {
		T := len(lengths)
		n := &devices.Neighbourhood{
			Name:    "hand",
			Horizon: devices.Horizon{Slots: T, SlotMinutes: lengths[0], Lengths: lengths},
			Prices:  make([]float64, T),
			Windows: []devices.Window{{From: 0, To: T}},
			Levels:  1,
			Weights: devices.Weights{Price: 1, Peak: 1},
			Units:   devices.Units{Power: "kW", PowerScale: 1, Currency: "$", PriceScale: 1},
		}
		bg := make([]float64, T)
		for t := range bg {
			bg[t] = 1
		}
		n.Homes = []devices.Home{{
			Name:       "h",
			Background: bg,
			Devices: []devices.Device{{Name: "heater", Location: "heater", Actions: []devices.Action{
				{Name: "off"}, {Name: "on", Power: 1, Effects: []devices.Effect{{Property: "heat", Delta: 1}}},
			}}},
			Properties: []devices.Property{{Location: "heater", Name: "heat", Scale: 1}},
			// Heat per half hour is 1: the hour slot makes 2 of the 2.
			Rules: []devices.Rule{{Location: "heater", Property: "heat", Rel: devices.Geq, Goal: 2, Prefix: devices.Before, T1: T, Text: "heat geq 2"}},
		}}
		if err := n.Validate(); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, tc := range []struct {
		lengths []int
		peak    float64
	}{
		// One level for the window: the cap is the window's top draw,
		// 2 kW, over 2 h weighed by the first slot's 0.5 h.
		{[]int{30, 60, 30}, 4 * 0.5 * 2},
		{[]int{30, 30, 30, 30}, 4 * 0.5 * 2},
	} {
		n := build(tc.lengths)
		ev := solveExact(t, 0, n)
		if ev == nil {
			t.Fatalf("%v: infeasible", tc.lengths)
		}
		if !same(ev.PeakCost, tc.peak) {
			t.Errorf("%v: peak cost %v, want %v", tc.lengths, ev.PeakCost, tc.peak)
		}
		// The heater runs for one hour in all: 1 kWh at price 0, and
		// the energy is 2 h of background plus that hour.
		if e := ev.Homes[0].Energy; !same(e, 3) {
			t.Errorf("%v: energy %v kWh, want 3", tc.lengths, e)
		}
		on := 0.0
		for t, l := range ev.Homes[0].Load {
			if l > 1 {
				on += n.Horizon.SlotHours(t)
			}
		}
		if !same(on, 1) {
			t.Errorf("%v: the heater runs %v h, want 1 (loads %v)", tc.lengths, on, ev.Homes[0].Load)
		}
	}
}
