package compile_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/internal/testhomes"
)

// meterHomes draws random neighbourhoods whose homes have meters: own
// tariffs, limits, demand charges, curtailable PV, grid permissions and
// end values.
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
	finite, broken, curtailed, over, demand := 0, 0, 0, 0, 0
	for seed := range uint64(80) {
		n := meterHomes(500+seed, 1+int(seed%3), 3+int(seed%3))
		c, ok := compileOrInfeasible(t, n)
		if !ok {
			continue
		}
		for range 30 {
			ev, _, got, ok := randomEval(t, rng, n, c)
			if !ok {
				continue
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
				if he.Demand > 0 {
					demand++
				}
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
	if finite < 300 || broken < 30 || curtailed < 30 || over < 30 || demand < 30 {
		t.Fatalf("only %d finite, %d broken schedules, %d curtailed slots, %d slots over a limit, %d homes charged for demand: the generator tests too little", finite, broken, curtailed, over, demand)
	}
}

// TestMeterSingleHomeExact: bucket elimination's optimum of a metered
// home is enumeration's, and its plan is the evaluation's.
func TestMeterSingleHomeExact(t *testing.T) {
	solved, seeds := 0, 60
	if raceEnabled {
		seeds = 20
	}
	for seed := range uint64(seeds) {
		n := meterHomes(2400+seed, 1, 3)
		if solveExact(t, 2400+seed, n) == nil {
			continue
		}
		solved++
	}
	if solved < seeds/3 {
		t.Fatalf("only %d feasible homes", solved)
	}
}
