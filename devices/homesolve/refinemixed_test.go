package homesolve

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/mva"
)

// TestRefineMixed: in a street with an energy home (testdata/mixed, oak's
// goal as the table gives it), the compiled home's automatic wallbox is
// refined onto its exact currents after the homes answered each other,
// with the energy home's plan fixed, where that lowers the street's
// objective (at 35 kWh it cannot: the compiled plan is the best of the
// exact currents, and the result is the unrefined plan):
// the street's objective recomputed from the printed result
// (streetObjective: bills, the energy home's stored worth, the peak term
// on the street's load) is strictly below the unrefined plan's, the
// energy home's import is the one it answered, and the compiled home
// draws no more than its unrefined plan in any coordinated slot; the
// home alone (HomePlan, what `hearth run` publishes) refines to the same
// plan. The
// result passes the independent checker (Report runs devices/homecheck
// and the feeder check).
func TestRefineMixed(t *testing.T) {
	for _, c := range []struct {
		goal    string
		refined bool
	}{{"33.1", true}, {"36.9", true}, {"35", false}} {
		t.Run(c.goal, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range []string{"street.toml", "oak.toml", "fir.toml"} {
				b, err := os.ReadFile(filepath.Join("testdata", "mixed", f))
				if err != nil {
					t.Fatal(err)
				}
				text := strings.Replace(string(b), "charge geq 35 before", "charge geq "+c.goal+" before", 1)
				if err := os.WriteFile(filepath.Join(dir, f), []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			refineMixedStreet(t, filepath.Join(dir, "street.toml"), c.refined)
		})
	}
}

func refineMixedStreet(t *testing.T, path string, refined bool) {
	r, err := Load(path, false, Overrides{NoBaselines: true})
	if err != nil {
		t.Fatal(err)
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
	assign, res, err := r.Answer(context.Background(), start, res)
	if err != nil {
		t.Fatal(err)
	}
	h, err := r.Report(assign, res)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Contains(strings.Join(h.Notes, "\n"), "refined onto their exact currents"); got != refined {
		t.Fatalf("refined %v, want %v: %v", got, refined, h.Notes)
	}
	// The unrefined plan, with the energy part Answer left for it.
	s, ev, err := r.compiled.Report(assign)
	if err != nil {
		t.Fatal(err)
	}
	u, err := report.Build(report.Input{Model: n, Result: res, Schedule: s, Eval: ev})
	if err != nil {
		t.Fatal(err)
	}
	u.EnergyHomes = r.answered.part
	got, was := streetObjective(t, h, weight, slots), streetObjective(t, u, weight, slots)
	t.Logf("street objective: unrefined %.6f, refined %.6f", was, got)
	switch {
	case refined && got >= was-1e-9:
		t.Errorf("the refinement took the street's objective %.6f → %.6f; want it strictly lower", was, got)
	case !refined && got != was:
		t.Errorf("nothing refined, yet the street's objective moved %.6f → %.6f", was, got)
	}
	for i, eh := range h.EnergyHomes.Homes {
		if !slices.Equal(eh.ImportKW, u.EnergyHomes.Homes[i].ImportKW) {
			t.Errorf("energy home %s: import %v, it answered %v", eh.Home, eh.ImportKW, u.EnergyHomes.Homes[i].ImportKW)
		}
	}
	for i, p := range h.Schedules {
		// A compiled home of `hearth run`, which knows only its own
		// values, refines its plan to the same.
		one, err := r.HomePlan(assign, i)
		if err != nil {
			t.Fatal(err)
		}
		for d := range p.Devices {
			if !slices.Equal(one.Devices[d].Actions, p.Devices[d].Actions) {
				t.Errorf("home %s, %s: alone refined to %v, in the street to %v", p.Home, p.Devices[d].Device, one.Devices[d].Actions, p.Devices[d].Actions)
			}
		}
		for _, ti := range slots {
			if p.LoadKW[ti] > max(u.Schedules[i].LoadKW[ti], 0)+1e-9 {
				t.Errorf("home %s slot %d: refined draw %.4f kW above the solved %.4f", p.Home, ti, p.LoadKW[ti], u.Schedules[i].LoadKW[ti])
			}
		}
	}
}
