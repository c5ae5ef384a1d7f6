package homesolve

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/mva"
)

// refineStreet is two homes coordinating on a window: ash's 11 kW
// wallbox has automatic levels and a goal its compiled levels meet only
// with a larger current than its exact currents need.
const refineStreet = `[horizon]
slots = 4
[coordination]
windows = [[0, 2], [2, 4]]
[objective]
peak = 0.01
[prices]
per_slot = [0.31, 0.12, 0.15, 0.44]
[[home]]
name = "ash"
background_kw = 0.3
[[home.device]]
name = "ev"
kind = "ev_wallbox_11kw"
power_steps = "auto"
initial = { charge = 20 }
rules = [{ rule = "charge geq 40.2 before 04:00", hard = true }]
[[home]]
name = "elm"
background_kw = [0.5, 1.2, 0.8, 0.4]
`

// TestRefinedPlans: what hearth prints and publishes of a compiled plan
// is refined onto the wallbox's exact currents — the street's report
// (`hearth sim`, `hearth solve`), every home's publications and one
// home's alone (`hearth run`) — each no dearer than the solved plan,
// within the levels the home committed to, and its power per slot the
// current's.
func TestRefinedPlans(t *testing.T) {
	cfg, err := config.Parse("refine.toml", []byte(refineStreet), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := FromConfig("refine.toml", cfg, Overrides{Rounds: -1})
	if err != nil {
		t.Fatal(err)
	}
	assign := r.startAssignment()
	if assign == nil {
		t.Fatalf("no start: %v", r.Notes())
	}
	solved, _, err := r.compiled.Report(assign)
	if err != nil {
		t.Fatal(err)
	}
	cost, err := r.Problem().Eval(assign)
	if err != nil {
		t.Fatal(err)
	}
	h, err := r.Report(assign, mva.Result{Feasible: true, Objective: &cost})
	if err != nil {
		t.Fatal(err)
	}
	if h.Objective == nil || !(*h.Objective < cost-1e-9) {
		t.Fatalf("the report's objective %v is not below the solved plan's %g: %v", h.Objective, cost, h.Notes)
	}
	if !slices.ContainsFunc(h.Notes, func(s string) bool { return strings.Contains(s, "refined onto their exact currents") }) {
		t.Errorf("no note says the plan was refined: %v", h.Notes)
	}
	dev := &r.Model().Homes[0].Devices[0]
	power := map[string]float64{"off": 0}
	for _, a := range dev.Exact {
		power[a.Name] = a.Power
	}
	ev := h.Schedules[0].Devices[0]
	exact := 0
	for t2, a := range ev.Actions {
		p, ok := power[a]
		if !ok {
			t.Fatalf("slot %d: %q is not an exact current of the wallbox (%v)", t2, a, ev.Actions)
		}
		if math.Abs(p-ev.KW[t2]) > 1e-9 {
			t.Errorf("slot %d: %s reported at %g kW, its power is %g kW", t2, a, ev.KW[t2], p)
		}
		if a != "off" {
			exact++
		}
	}
	if exact == 0 {
		t.Fatalf("the refined plan %v charges nowhere", ev.Actions)
	}
	// The committed levels are the solved plan's.
	for hi, p := range h.Schedules {
		if !slices.Equal(solved.Homes[hi].Levels, levelIndices(t, r, hi, p.Levels)) {
			t.Errorf("home %s: levels %v, the solved plan's are %v", p.Home, p.Levels, solved.Homes[hi].Levels)
		}
	}
	// What is published: the street's and ash's alone carry the same
	// refined actions and powers.
	pubs, err := r.Publications(assign, report.PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	one, err := r.HomePublications(assign, 0, report.PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ps := range [][]report.Publication{pubs, one} {
		var got *report.PlanPayload
		for _, p := range ps {
			if strings.HasSuffix(p.Topic, "/home/ash/plan/ev") {
				got = new(report.PlanPayload)
				if err := json.Unmarshal(p.Payload, got); err != nil {
					t.Fatal(err)
				}
			}
		}
		if got == nil {
			t.Fatal("ash's wallbox plan is not published")
		}
		for t2, s := range got.Slots {
			if s.Action != ev.Actions[t2] || math.Abs(s.KW-ev.KW[t2]) > 1e-9 {
				t.Errorf("slot %d published as %s %g kW, the report says %s %g kW", t2, s.Action, s.KW, ev.Actions[t2], ev.KW[t2])
			}
		}
	}
}

// levelIndices returns the indices of home hi's level labels.
func levelIndices(t *testing.T, r *Run, hi int, labels []string) []int {
	t.Helper()
	n := r.Model()
	out := make([]int, len(labels))
	for w, l := range labels {
		out[w] = slices.Index(devices.LevelLabels(n.LevelCaps(hi, w), n.Units), l)
		if out[w] < 0 {
			t.Fatalf("home %d window %d: level %q unknown", hi, w, l)
		}
	}
	return out
}
