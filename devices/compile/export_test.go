package compile_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/internal/testhomes"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// withExport gives random homes PV (a lower, often negative background)
// and an export price below the price, so that feeding back earns less
// than drawing (issue 17: every exported kWh earned the import price).
func withExport(n *devices.Neighbourhood, rng *rand.Rand) {
	n.ExportPrices = make([]float64, len(n.Prices))
	for t, p := range n.Prices {
		n.ExportPrices[t] = p * rng.Float64() * 0.6
	}
	for h := range n.Homes {
		for t := range n.Homes[h].Background {
			n.Homes[h].Background[t] -= 3 * rng.Float64()
		}
	}
}

// TestExportEvalMatchesEvaluate: with export prices, the compiled
// problem's cost of every random schedule is the model's own evaluation
// (which bills each slot's net draw at the price or the export price).
func TestExportEvalMatchesEvaluate(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 17))
	encoded, exported := 0, 0
	for seed := range uint64(80) {
		n := testhomes.Random(300+seed, testhomes.Options{Homes: 1 + int(seed%3), Slots: 3 + int(seed%3), Devices: 2, Actions: 3, Mixed: true, Feeder: true})
		withExport(n, rng)
		c, ok := compileOrInfeasible(t, n)
		if !ok {
			continue
		}
		for range 30 {
			ev, _, got, ok := randomEval(t, rng, n, c)
			if !ok {
				continue
			}
			if !same(got, ev.Cost) {
				t.Fatalf("seed %d: Problem.Eval = %v, Evaluate = %v", seed, got, ev.Cost)
			}
			encoded++
			for _, he := range ev.Homes {
				for _, l := range he.Load {
					if l < 0 {
						exported++
					}
				}
			}
		}
	}
	if encoded < 300 || exported < 100 {
		t.Fatalf("only %d schedules encoded, %d slots exporting", encoded, exported)
	}
}

// TestExportSingleHomeExact: bucket elimination's optimum of a home with
// an export price is enumeration's.
func TestExportSingleHomeExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 18))
	solved := 0
	for seed := range uint64(60) {
		n := testhomes.Random(1400+seed, testhomes.Options{Homes: 1, Slots: 3, Devices: 2, Actions: 3, Mixed: true, Feeder: true})
		withExport(n, rng)
		want := bruteForce(n)
		c, ok := compileOrInfeasible(t, n)
		if !ok {
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
		if !math.IsInf(got, 1) {
			solved++
		}
	}
	if solved < 20 {
		t.Fatalf("only %d feasible homes", solved)
	}
}
