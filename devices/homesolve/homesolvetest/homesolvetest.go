// Package homesolvetest holds the check that the tests of the homes'
// solve path (internal/solve, and cmd/hearth's commands over it) apply to
// every schedule they get back, so that both ask the same of a plan.
package homesolvetest

import (
	"testing"

	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/mva"
)

// CheckSchedule checks what is asked of every returned schedule: every
// rule kept (the model's own simulation, independent of the compiled
// problem), and with peak the coordinated peak no higher than the homes'
// peak when each optimises alone. (That is not a theorem: the objective
// prices committed caps per window, not the maximum load, so random
// neighbourhoods with coarse levels may trade some peak for price.) It
// returns the report it checked.
func CheckSchedule(t testing.TB, r *homesolve.Run, res mva.Result, assign []int, peak bool) *report.Homes {
	t.Helper()
	if !res.Feasible {
		t.Fatalf("%s: no schedule found", r.Path())
	}
	h, err := r.Report(assign, res)
	if err != nil {
		t.Fatal(err)
	}
	if h.RulesSatisfied != h.RulesTotal {
		for _, p := range h.Schedules {
			for _, rr := range p.Rules {
				if !rr.OK {
					t.Errorf("%s: home %s breaks %q", r.Path(), p.Home, rr.Rule)
				}
			}
		}
	}
	if h.BaselinePeakKW == nil {
		t.Fatalf("%s: no uncoordinated baseline: %v", r.Path(), h.Notes)
	}
	if peak && h.PeakKW > *h.BaselinePeakKW+1e-9 {
		t.Errorf("%s: coordinated peak %v kW above the uncoordinated %v kW", r.Path(), h.PeakKW, *h.BaselinePeakKW)
	}
	return h
}
