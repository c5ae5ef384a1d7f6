package compile_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/compile"
	"github.com/hearth-dcop/hearth/devices/internal/testhomes"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// meterHomes draws random neighbourhoods whose homes have meters: own
// tariffs, limits, curtailable PV, grid permissions and end values.
func meterHomes(seed uint64, homes, slots int) *devices.Neighbourhood {
	n := testhomes.Random(seed, testhomes.Options{Homes: homes, Slots: slots, Devices: 2, Actions: 3, Mixed: true, Feeder: true, Soft: true})
	testhomes.WithMeters(rand.New(rand.NewPCG(seed, 0x3e7e)), n)
	return n
}

// TestMeterEvalMatchesEvaluate: the compiled problem's cost of random
// schedules of metered homes is the model's own evaluation, +Inf exactly
// where the evaluation finds a hard limit or a grid permission broken.
func TestMeterEvalMatchesEvaluate(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 23))
	finite, broken, curtailed, over := 0, 0, 0, 0
	for seed := range uint64(80) {
		n := meterHomes(500+seed, 1+int(seed%3), 3+int(seed%3))
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
			got, err := c.Problem.Eval(assign)
			if err != nil {
				t.Fatal(err)
			}
			if math.IsInf(ev.Cost, 1) {
				if !math.IsInf(got, 1) {
					t.Fatalf("seed %d: Problem.Eval = %v for a schedule the evaluation rejects: %v", seed, got, ev.Violations)
				}
				broken++
				continue
			}
			if !same(got, ev.Cost) {
				t.Fatalf("seed %d: Problem.Eval = %v, Evaluate = %v", seed, got, ev.Cost)
			}
			finite++
			for _, he := range ev.Homes {
				for t := range he.Curtail {
					if he.Curtail[t] > 0 {
						curtailed++
					}
					if he.Over[t] > 0 {
						over++
					}
				}
			}
		}
	}
	if finite < 300 || broken < 30 || curtailed < 30 || over < 30 {
		t.Fatalf("only %d finite, %d broken schedules, %d curtailed slots, %d slots over a limit: the generator tests too little", finite, broken, curtailed, over)
	}
}

// TestMeterSingleHomeExact: bucket elimination's optimum of a metered
// home is enumeration's, and its plan is the evaluation's.
func TestMeterSingleHomeExact(t *testing.T) {
	solved := 0
	for seed := range uint64(60) {
		n := meterHomes(2400+seed, 1, 3+int(seed%2))
		want := bruteForce(n)
		c, ok := compileOrInfeasible(t, n)
		if !ok {
			if !math.IsInf(want, 1) {
				t.Fatalf("seed %d: compiler says infeasible, enumeration finds %v", seed, want)
			}
			continue
		}
		lp := mva.NewLocalProblem(c.Problem, mva.Whole(c.Problem))
		s, err := local.New("be", lp)
		if err != nil {
			t.Fatal(err)
		}
		in := make([]int, lp.NumInterior())
		got, err := s.SolveRow(context.Background(), nil, in)
		if err != nil {
			t.Fatal(err)
		}
		if !same(got, want) {
			t.Fatalf("seed %d: optimum %v, enumeration %v", seed, got, want)
		}
		if math.IsInf(got, 1) {
			continue
		}
		assign := make([]int, len(c.Problem.Variables))
		for k, v := range lp.Vars {
			assign[v] = in[k]
		}
		_, ev, err := c.Report(assign)
		if err != nil {
			t.Fatal(err)
		}
		if !ev.Feasible || !same(ev.Cost, got) {
			t.Fatalf("seed %d: solver cost %v, evaluation %v (%v)", seed, got, ev.Cost, ev.Violations)
		}
		solved++
	}
	if solved < 25 {
		t.Fatalf("only %d feasible homes", solved)
	}
}
