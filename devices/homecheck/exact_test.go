package homecheck_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/homecheck"
	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/devices/refine"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/mva"
)

// exactHome is a home whose wallbox plan the refinement moves onto its
// exact currents: 20.2 kWh to store at 89 % from an 11 kW three-phase
// box over four hours (the compiled levels' quanta fall short of what 11
// A and 6 A store, so the solved plan takes a larger current).
const exactHome = `[horizon]
slots = 4
[coordination]
windows = []
[objective]
peak = 0
[prices]
per_slot = [0.31, 0.12, 0.15, 0.44]
[[home]]
name = "h"
background_kw = 0.3
[[home.device]]
name = "ev"
kind = "ev_wallbox_11kw"
power_steps = "auto"
initial = { charge = 20 }
rules = [{ rule = "charge geq 40.2 before 04:00", hard = true }]
`

// refinedReport solves text's neighbourhood, refines its plan and
// returns the model and the report hearth would print.
func refinedReport(t *testing.T, text string) (*devices.Neighbourhood, *report.Homes) {
	t.Helper()
	cfg, err := config.Parse("exact.toml", []byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Neighbourhood
	sched, ev, ok := solveSchedule(t, n)
	if !ok {
		t.Fatal("no schedule keeps the hard rules")
	}
	refined, ev2, err := refine.Schedule(n, sched, ev)
	if err != nil {
		t.Fatal(err)
	}
	if refined == sched || !(ev2.Cost < ev.Cost) {
		t.Fatalf("the refinement did not lower the plan's cost (%g → %g)", ev.Cost, ev2.Cost)
	}
	h, err := report.Build(report.Input{Model: n, Result: mva.Result{Feasible: true}, Schedule: refined, Eval: ev2})
	if err != nil {
		t.Fatal(err)
	}
	return n, h
}

// TestExactActions: the checker accepts a plan refined onto a wallbox's
// exact currents, replaying what each current stores, and rejects one
// whose claims or whose exact actions break the physics: a power other
// than the current's, a current the wallbox does not have, and an exact
// action that would store more energy than it draws.
func TestExactActions(t *testing.T) {
	n, h := refinedReport(t, exactHome)
	if err := homecheck.Check(n, homesolve.Street(h)).Err(); err != nil {
		t.Fatalf("the checker rejects the refined plan: %v", err)
	}
	dev := &n.Homes[0].Devices[0]
	var slot int
	exact := ""
	for t2, a := range h.Schedules[0].Devices[0].Actions {
		for _, x := range dev.Exact {
			if x.Name == a {
				slot, exact = t2, a
			}
		}
	}
	if exact == "" {
		t.Fatalf("the refined plan %v names no exact current", h.Schedules[0].Devices[0].Actions)
	}
	for _, c := range []struct {
		name, want string
		tamper     func(p *homecheck.Plan, n *devices.Neighbourhood)
	}{
		{"another power", "the plan says", func(p *homecheck.Plan, _ *devices.Neighbourhood) { p.KW["ev"][slot] += 0.23 }},
		{"no such current", "is not one of its actions", func(p *homecheck.Plan, _ *devices.Neighbourhood) { p.Actions["ev"][slot] = "17a" }},
		{"more than it draws", "stores", func(_ *homecheck.Plan, n *devices.Neighbourhood) {
			d := &n.Homes[0].Devices[0]
			for k := range d.Exact {
				if d.Exact[k].Name == exact {
					d.Exact[k].Effects[0].Delta = d.Exact[k].Power * 1.05
				}
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, h := refinedReport(t, exactHome)
			st := homesolve.Street(h)
			c.tamper(&st.Plans[0], n)
			err := homecheck.Check(n, st).Err()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("checker: %v, want a violation that says %q", err, c.want)
			}
		})
	}
}

// exactBattery is a home whose battery plan the refinement moves onto its
// exact actions: 6 kW of background against a dear, a cheap and a dear
// hour, the battery to end at 8 kWh or more: its compiled levels
// deliver at most 4.845 kW (17 quanta of 0.3 kWh at 95 %), its exact
// actions 4.987 kW.
const exactBattery = `[horizon]
slots = 3
[coordination]
windows = []
[objective]
peak = 0
[prices]
per_slot = [0.45, 0.11, 0.41]
[[home]]
name = "h"
background_kw = 6
[[home.device]]
name = "b"
kind = "home_battery"
power_steps = "auto"
initial = { soc = 7 }
rules = [{ rule = "soc geq 8 at 03:00", hard = true }]
`

// TestExactBatteryActions: the checker accepts a plan refined onto a
// battery's exact actions and rejects one whose exact discharging action
// breaks the physics (delivers more than it takes) or that names an
// action the battery does not have.
func TestExactBatteryActions(t *testing.T) {
	n, h := refinedReport(t, exactBattery)
	if err := homecheck.Check(n, homesolve.Street(h)).Err(); err != nil {
		t.Fatalf("the checker rejects the refined plan: %v", err)
	}
	dev := &n.Homes[0].Devices[0]
	slot, exact := -1, ""
	for t2, a := range h.Schedules[0].Devices[0].Actions {
		for _, x := range dev.Exact {
			if x.Name == a && x.Power < 0 && !slices.ContainsFunc(dev.Actions, func(l devices.Action) bool { return l.Power == x.Power }) {
				slot, exact = t2, a
			}
		}
	}
	if exact == "" {
		t.Fatalf("the refined plan %v discharges at no exact power beyond the levels", h.Schedules[0].Devices[0].Actions)
	}
	for _, c := range []struct {
		name, want string
		tamper     func(p *homecheck.Plan, n *devices.Neighbourhood)
	}{
		{"another power", "the plan says", func(p *homecheck.Plan, _ *devices.Neighbourhood) { p.KW["b"][slot] -= 0.05 }},
		{"no such action", "is not one of its actions", func(p *homecheck.Plan, _ *devices.Neighbourhood) { p.Actions["b"][slot] = "out_4.999kw" }},
		{"delivers more than it takes", "takes", func(_ *homecheck.Plan, n *devices.Neighbourhood) {
			d := &n.Homes[0].Devices[0]
			for k := range d.Exact {
				if d.Exact[k].Name == exact {
					d.Exact[k].Effects[0].Delta = d.Exact[k].Power * 0.95
				}
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, h := refinedReport(t, exactBattery)
			st := homesolve.Street(h)
			c.tamper(&st.Plans[0], n)
			err := homecheck.Check(n, st).Err()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("checker: %v, want a violation that says %q", err, c.want)
			}
		})
	}
}
