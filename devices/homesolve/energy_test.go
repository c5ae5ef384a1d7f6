package homesolve

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/mva"
)

var mixedTOML = filepath.Join("testdata", "mixed", "street.toml")

// streetObjective recomputes a mixed street's objective from its result:
// the compiled homes' bills, the energy homes' bills less their stored
// energy's worth, and the peak weight times the squared street load
// (the compiled homes' positive draws plus the energy homes' import) over
// the coordinated slots. It also checks that the energy part's street
// load is that sum.
func streetObjective(t *testing.T, h *report.Homes, weight float64, slots []int) float64 {
	t.Helper()
	e := h.EnergyHomes
	total := h.EnergyCost
	load := make([]float64, len(h.Slots))
	for _, p := range h.Schedules {
		for t, v := range p.LoadKW {
			load[t] += math.Max(v, 0)
		}
	}
	for _, eh := range e.Homes {
		total += eh.Bill - eh.StoredValue
		for t, v := range eh.ImportKW {
			load[t] += v
		}
	}
	for ti, v := range load {
		if math.Abs(v-e.LoadKW[ti]) > 1e-6 {
			t.Fatalf("slot %d: the result's street load %.6f kW, its homes' %.6f", ti, e.LoadKW[ti], v)
		}
	}
	for _, ti := range slots {
		total += weight * load[ti] * load[ti]
	}
	return total
}

// TestAnswer: on a small mixed street (testdata/mixed), letting the
// compiled homes answer the energy homes (Answer) ends at a street
// objective below that of the energy homes answering the compiled homes'
// own plans alone, both recomputed from the printed result.
func TestAnswer(t *testing.T) {
	r, err := Load(mixedTOML, false, Overrides{NoBaselines: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.EnergyHomes() != 1 || len(r.Model().Homes) != 1 {
		t.Fatalf("%d energy homes, %d compiled", r.EnergyHomes(), len(r.Model().Homes))
	}
	n := r.Model()
	var slots []int
	for _, w := range n.Windows {
		for ti := w.From; ti < w.To; ti++ {
			slots = append(slots, ti)
		}
	}
	weight := n.Weights.Peak / n.Weights.Price
	start := r.startAssignment()
	cost, err := r.Problem().Eval(start)
	if err != nil {
		t.Fatal(err)
	}
	res := mva.Result{Feasible: true, Objective: &cost, Status: mva.StatusFeasible, Assignment: r.Problem().Labels(start)}
	one, err := r.Report(start, res)
	if err != nil {
		t.Fatal(err)
	}
	before := streetObjective(t, one, weight, slots)
	assign, res2, err := r.Answer(context.Background(), start, res)
	if err != nil {
		t.Fatal(err)
	}
	both, err := r.Report(assign, res2)
	if err != nil {
		t.Fatal(err)
	}
	after := streetObjective(t, both, weight, slots)
	t.Logf("street objective: energy homes answering %.4f, both sides answering %.4f; notes %v", before, after, res2.Notes)
	// The street is made so that they must move: the energy home's
	// night heater sits in the cheap hours where oak's EV would charge.
	if after > before-1e-3 {
		t.Errorf("the compiled homes' answers took the street's objective %.5f → %.5f; want it lower", before, after)
	}
}
