package compile_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/compile"
	"github.com/hearth-dcop/hearth/devices/internal/testhomes"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// TestProgrammeEndsAtGoal checks the state spaces that end where nothing
// reads them any more (devices.Space.Last): seeded homes get an oven-like
// programme (a counter that only grows, bounded below, with a goal
// before an early slot), and each is compiled as it is and with a soft
// rule the counter always keeps over the whole horizon, which reads
// every state to the end and so keeps the whole trajectory, as before
// the reduction, at no cost. Both must reach the same optimum (bucket
// elimination; enumeration of every schedule where the home is small)
// with a plan the evaluator prices alike, and the programme's states
// must fall.
func TestProgrammeEndsAtGoal(t *testing.T) {
	homes := uint64(40)
	if raceEnabled {
		homes = 16 // what it checks does not depend on concurrency
	}
	solved, brute, cut := 0, 0, 0
	for seed := range homes {
		slots := 4 + int(seed%3)
		n := testhomes.Random(7000+seed, testhomes.Options{Homes: 1, Slots: slots, Devices: 1, Actions: 3, Mixed: true, Soft: seed%4 < 2})
		rng := rand.New(rand.NewPCG(seed, 7))
		h := &n.Homes[0]
		h.Devices = append(h.Devices, devices.Device{Name: "oven", Location: "oven", Actions: []devices.Action{
			{Name: "off"},
			{Name: "bake", Power: 1.1, Effects: []devices.Effect{{Property: "bake", Delta: 60}}},
			{Name: "grill", Power: 2, Effects: []devices.Effect{{Property: "bake", Delta: 75}}},
		}})
		h.Properties = append(h.Properties, devices.Property{Location: "oven", Name: "bake", Scale: 15})
		goal := devices.Rule{Location: "oven", Property: "bake", Rel: devices.Geq, Goal: 60, Prefix: devices.Before, T1: 2 + rng.IntN(2), Soft: rng.IntN(2) == 0}
		bound := devices.Rule{Location: "oven", Property: "bake", Rel: devices.Geq, Goal: 0}
		for _, r := range []*devices.Rule{&goal, &bound} {
			r.Text = r.String()
			h.Rules = append(h.Rules, *r)
		}
		whole := cloneHome(n)
		keep := devices.Rule{Location: "oven", Property: "bake", Rel: devices.Geq, Goal: -1, Soft: true}
		keep.Text = keep.String()
		whole.Homes[0].Rules = append(whole.Homes[0].Rules, keep)

		want := math.NaN()
		if slots == 4 {
			want = bruteForce(n)
			brute++
		}
		costs := make([]float64, 2)
		states, lasts := make([]int, 2), make([]int, 2)
		feasible := make([]bool, 2)
		for k, nb := range []*devices.Neighbourhood{n, whole} {
			c, ok := compileOrInfeasible(t, nb)
			if feasible[k] = ok; !ok {
				costs[k] = math.Inf(1)
				continue
			}
			lp := mva.NewLocalProblem(c.Problem, mva.Whole(c.Problem))
			s, err := local.New("be", lp)
			if err != nil {
				t.Fatal(err)
			}
			in := make([]int, lp.NumInterior())
			if costs[k], err = s.SolveRow(context.Background(), nil, in); err != nil {
				t.Fatal(err)
			}
			assign := make([]int, len(c.Problem.Variables))
			for j, v := range lp.Vars {
				assign[v] = in[j]
			}
			if _, ev, err := c.Report(assign); err != nil || !ev.Feasible || !same(ev.Cost, costs[k]) {
				t.Fatalf("seed %d (%d): evaluation %v (%v), solver %v", seed, k, ev, err, costs[k])
			}
			states[k], lasts[k] = ovenStates(c)
		}
		if !feasible[0] || !feasible[1] {
			if feasible[0] != feasible[1] || slots == 4 && !math.IsInf(want, 1) {
				t.Fatalf("seed %d: feasible %v with the states cut, %v with the whole trajectory, enumeration %v", seed, feasible[0], feasible[1], want)
			}
			continue
		}
		if !same(costs[0], costs[1]) {
			t.Fatalf("seed %d: optimum %v with the programme's states cut, %v with the whole trajectory", seed, costs[0], costs[1])
		}
		if slots == 4 && !same(costs[0], want) {
			t.Fatalf("seed %d: optimum %v, enumeration %v", seed, costs[0], want)
		}
		if lasts[0] < lasts[1] {
			cut++
		}
		if lasts[0] < lasts[1] && states[0] >= states[1] || lasts[0] > lasts[1] {
			t.Fatalf("seed %d: the programme keeps %d states to index %d, %d to %d with the whole trajectory", seed, states[0], lasts[0], states[1], lasts[1])
		}
		solved++
	}
	if solved < int(homes)*5/8 || brute < int(homes)/5 || cut < int(homes)/2 {
		t.Fatalf("%d homes solved, %d against enumeration, %d programmes cut short", solved, brute, cut)
	}
	t.Logf("%d homes solved, %d against enumeration, %d programmes cut short", solved, brute, cut)
}

// ovenStates counts the states of the oven's programme over the horizon,
// and returns the last index it keeps.
func ovenStates(c *compile.Compiled) (total, last int) {
	for _, m := range c.Homes[0].Models {
		p := c.Model.Homes[0].Properties[m.Space.Model.Property]
		if p.Location != "oven" {
			continue
		}
		for _, st := range m.Space.States {
			total += len(st)
		}
		last = m.Space.Last
	}
	return total, last
}

// cloneHome copies n deeply enough to add rules to its first home.
func cloneHome(n *devices.Neighbourhood) *devices.Neighbourhood {
	out := *n
	out.Homes = slices.Clone(n.Homes)
	out.Homes[0].Rules = slices.Clone(n.Homes[0].Rules)
	return &out
}
