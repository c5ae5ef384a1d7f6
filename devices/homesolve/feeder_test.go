package homesolve

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/homecheck"
	"github.com/hearth-dcop/hearth/devices/plancheck"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/mva"
)

// TestAnswerFeederPerWindow: on a mixed street under a hard feeder limit
// where the energy home commits unevenly (testdata/windows: most of the
// limit in the first window, little in the second), one limit for every
// window — the feeder less the energy home's largest commitment — is
// below what oak already commits in the second window, so the compiled
// homes could not answer; with a limit per window they do, the street's
// objective (recomputed from the printed result) falls, and every
// window keeps the limit: the compiled homes' caps as devices/homecheck
// reads them from their levels plus the energy home's highest import,
// summed by plancheck.CheckFeeder.
func TestAnswerFeederPerWindow(t *testing.T) {
	r, err := Load(filepath.Join("testdata", "windows", "street.toml"), false, Overrides{NoBaselines: true})
	if err != nil {
		t.Fatal(err)
	}
	full := r.cfg.Neighbourhood
	limit := full.FeederLimit * full.Units.PowerScale
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
	before := streetObjective(t, one, weight, slots) + missedCost(one)

	// The energy homes answering oak's start: one limit for every
	// window leaves oak less than it commits in some window.
	energyKW := make([]float64, len(n.Windows))
	for _, eh := range one.EnergyHomes.Homes {
		for w, c := range eh.CommittedKW {
			energyKW[w] += c
		}
	}
	oneRoom := limit - slices.Max(energyKW)
	compiledKW := homecheck.Check(n, compiledStreet(one)).CommittedKW
	if !slices.ContainsFunc(compiledKW, func(c float64) bool { return c > oneRoom+plancheck.Tolerance }) {
		t.Fatalf("the street does not test the change: oak commits %v kW, one limit for every window leaves it %.3g kW (energy homes %v kW)", compiledKW, oneRoom, energyKW)
	}

	assign, res2, err := r.Answer(context.Background(), start, res)
	if err != nil {
		t.Fatal(err)
	}
	both, err := r.Report(assign, res2)
	if err != nil {
		t.Fatal(err)
	}
	after := streetObjective(t, both, weight, slots) + missedCost(both)
	t.Logf("limit %g kW; energy homes commit %v kW, oak %v kW (one limit would leave it %.3g kW); street objective %.4f → %.4f (missed goals %.4f → %.4f); notes %v", limit, energyKW, compiledKW, oneRoom, before, after, missedCost(one), missedCost(both), res2.Notes)
	if !slices.ContainsFunc(res2.Notes, func(s string) bool { return strings.Contains(s, "compiled homes answered") }) {
		t.Errorf("the compiled homes did not answer: %v", res2.Notes)
	}
	if after > before-1e-3 {
		t.Errorf("the compiled homes' answers took the street's objective %.5f → %.5f; want it lower", before, after)
	}
	plans := make([]*energy.Plan, len(both.EnergyHomes.Homes))
	for i, eh := range both.EnergyHomes.Homes {
		plans[i] = &energy.Plan{Import: eh.ImportKW}
	}
	chk := homecheck.Check(n, compiledStreet(both))
	if err := chk.Err(); err != nil {
		t.Fatal(err)
	}
	fr := plancheck.CheckFeeder(limit, true, n.Windows, chk.CommittedKW, plans)
	if len(fr.Violations) > 0 {
		t.Errorf("the feeder limit is broken: %v", fr.Violations)
	}
	for w, c := range fr.CommittedKW {
		if c > limit+plancheck.Tolerance {
			t.Errorf("window %d: committed caps %.4f kW, limit %g kW", w, c, limit)
		}
	}
}

// missedCost is what the energy homes' missed goals cost in the street's
// objective: energy.DefaultGoalPenalty per kWh (the test's homes set no
// penalty of their own).
func missedCost(h *report.Homes) float64 {
	total := 0.0
	for _, eh := range h.EnergyHomes.Homes {
		for _, g := range eh.GoalsMissed {
			total += energy.DefaultGoalPenalty * g.Missed
		}
	}
	return total
}

// compiledStreet is what devices/homecheck checks of result h: the
// compiled homes' part, without the energy homes' missed goals.
func compiledStreet(h *report.Homes) homecheck.Street {
	c := *h
	c.GoalsMissed = slices.DeleteFunc(slices.Clone(h.GoalsMissed), func(g report.GoalMissed) bool {
		return slices.ContainsFunc(h.EnergyHomes.Homes, func(eh report.EnergyHome) bool { return eh.Home == g.Home })
	})
	return Street(&c)
}

// TestHomePublicationsCaps: on a mixed street each compiled home's
// published load carries its committed caps (committed_kw, kW per
// window), which `hearth run`'s energy homes take for their share of the
// feeder limit when they answer it outside a phase; summed over the
// compiled homes they are the caps devices/homecheck reads from the
// levels of the printed result, window by window.
func TestHomePublicationsCaps(t *testing.T) {
	r, err := Load(filepath.Join("testdata", "windows", "street.toml"), false, Overrides{NoBaselines: true})
	if err != nil {
		t.Fatal(err)
	}
	n := r.Model()
	start := r.startAssignment()
	cost, err := r.Problem().Eval(start)
	if err != nil {
		t.Fatal(err)
	}
	res := mva.Result{Feasible: true, Objective: &cost, Status: mva.StatusFeasible, Assignment: r.Problem().Labels(start)}
	rep, err := r.Report(start, res)
	if err != nil {
		t.Fatal(err)
	}
	want := homecheck.Check(n, compiledStreet(rep)).CommittedKW
	got := make([]float64, len(n.Windows))
	for home, h := range n.Homes {
		pubs, err := r.HomePublications(start, home, report.PublishOptions{})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(pubs, func(p report.Publication) bool { return p.Topic == "hearth/home/"+h.Name+"/load" })
		if i < 0 {
			t.Fatalf("%s: no load published", h.Name)
		}
		var lp report.LoadPayload
		if err := json.Unmarshal(pubs[i].Payload, &lp); err != nil {
			t.Fatal(err)
		}
		if len(lp.CommittedKW) != len(n.Windows) {
			t.Fatalf("%s: committed_kw %v for %d windows", h.Name, lp.CommittedKW, len(n.Windows))
		}
		for w, c := range lp.CommittedKW {
			got[w] += c
		}
	}
	if slices.Max(want) <= 0 {
		t.Fatalf("the compiled homes commit %v kW: the test would show nothing", want)
	}
	for w := range want {
		if math.Abs(got[w]-want[w]) > 1e-9 {
			t.Errorf("window %d: the published caps add up to %g kW, homecheck reads %g kW", w, got[w], want[w])
		}
	}
}
