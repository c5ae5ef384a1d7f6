package bench

import (
	"maps"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/mva/gen"
)

// TestPlans checks every experiment's full and quick plans: names and
// labels unique where rows are keyed by them, algorithms that `hearth
// solve` knows, and quick instances that generate.
func TestPlans(t *testing.T) {
	globals := map[string]bool{"none": true, "dpop": true, "afb": true, "dgibbs": true, "mgm": true, "mgm2": true}
	locals := map[string]bool{"be": true, "dfbnb": true, "bruteforce": true, "gibbs": true, "mh": true}
	seen := map[string]bool{}
	for _, e := range Experiments() {
		if seen[e.Name] || e.Summary == "" || strings.Contains(e.Summary, "\n") {
			t.Errorf("%s: duplicate name or bad summary %q", e.Name, e.Summary)
		}
		seen[e.Name] = true
		if e.Unavailable != "" {
			continue
		}
		for _, quick := range []bool{false, true} {
			plan := e.Plan(quick)
			if plan.Seeds < 1 || plan.Timeout <= 0 || len(plan.Sweeps) == 0 {
				t.Errorf("%s quick=%v: seeds %d, timeout %v, %d sweeps", e.Name, quick, plan.Seeds, plan.Timeout, len(plan.Sweeps))
			}
			sweeps := map[string]bool{}
			for _, s := range plan.Sweeps {
				if sweeps[s.Name] || s.Name == "" || len(s.Points) == 0 {
					t.Errorf("%s: sweep %q duplicate, unnamed or empty", e.Name, s.Name)
				}
				sweeps[s.Name] = true
				labels := map[string]bool{}
				for _, pt := range s.Points {
					if labels[pt.Label] {
						t.Errorf("%s %s: point label %q twice", e.Name, s.Name, pt.Label)
					}
					labels[pt.Label] = true
					if s.LogX && pt.X <= 0 {
						t.Errorf("%s %s: x %v on a log axis", e.Name, s.Name, pt.X)
					}
				}
				names := map[string]bool{}
				for _, a := range algorithmsOf(s, plan) {
					if names[a.Name()+a.Device()] {
						t.Errorf("%s %s: algorithm %q twice", e.Name, s.Name, a.Name())
					}
					names[a.Name()+a.Device()] = true
					if !globals[a.Global] || !locals[a.Local] {
						t.Errorf("%s: %s: unknown global %q or local %q", e.Name, a.Name(), a.Global, a.Local)
					}
				}
				if !quick || s.Build != nil {
					continue
				}
				for _, pt := range s.Points {
					params := maps.Clone(s.Base)
					if params == nil {
						params = map[string]string{}
					}
					maps.Copy(params, pt.Gen)
					if _, err := gen.Generate(s.Kind, 1, params); err != nil {
						t.Errorf("%s %s=%s: %v", e.Name, s.Name, pt.Label, err)
					}
				}
			}
		}
	}
}

func TestLookup(t *testing.T) {
	if e, err := Lookup("radar"); err != nil || e.Name != "radar" {
		t.Errorf("Lookup(radar) = %v, %v", e, err)
	}
	if _, err := Lookup("nope"); err == nil || !strings.Contains(err.Error(), "mva-random") {
		t.Errorf("Lookup(nope) = %v, want the valid names", err)
	}
}
