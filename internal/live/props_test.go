package live

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/homecheck"
	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// liveStreet is the example street with [live] (README, ./scripts/run).
const liveStreet = "../../examples/live/street.toml"

// TestLiveProperties plans the example street at 19:10 from live state
// that is not the files': dogwood's room at 18.2 °C (published under the
// radiator that heats it) in the middle of its 18:00–21:00 comfort
// window, alder's dishwasher half-way through its programme. Worked by
// hand: the room snaps to 18.0 (0.5 °C steps); the window has begun, so
// it keeps the boundaries 20:00 and 21:00 (1 and 2) and the plan must
// lift the room from 18.0 to 19.5 by 20:00 against 0.5 °C/h of drift —
// only "high" (+2 °C) does — and hold it at 21:00 — "low" (+1 °C) is the
// cheapest that does; the dishwasher needs one more hour of its
// programme, not two; dogwood's dryer, stopped at 11.76 % a few minutes
// into a slot, is planned from 0: finishing it takes two whole slots of
// 50 %, and from 12 % the second would pass 100 %. The plan is then
// replayed by homecheck.
func TestLiveProperties(t *testing.T) {
	now := time.Date(2026, 11, 26, 19, 10, 0, 0, time.Local)
	cfg, err := config.Load(liveStreet)
	if err != nil {
		t.Fatal(err)
	}
	in := NewInputs(cfg, "hearth", "dogwood", fixedClock(t, now), nil)
	stamp := now.Format(time.RFC3339)
	for topic, payload := range map[string]string{
		StateTopic("hearth", "dogwood", "radiator"):  fmt.Sprintf(`{"time":%q,"temperature":18.2}`, stamp),
		StateTopic("hearth", "alder", "dishwasher"):  fmt.Sprintf(`{"time":%q,"progress":50}`, stamp),
		StateTopic("hearth", "dogwood", "battery"):   fmt.Sprintf(`{"time":%q,"soc":8}`, stamp),
		StateTopic("hearth", "alder", "ev"):          fmt.Sprintf(`{"time":%q,"charge":20,"plugged":true}`, stamp),
		StateTopic("hearth", "cedar", "ev"):          fmt.Sprintf(`{"time":%q,"charge":30,"plugged":true}`, stamp),
		StateTopic("hearth", "birch", "boiler"):      fmt.Sprintf(`{"time":%q,"water_temp":500}`, stamp), // out of range: ignored
		StateTopic("hearth", "cedar", "nonexistent"): `{"progress":1}`,                                   // no such topic routed
		StateTopic("hearth", "dogwood", "dryer"):     fmt.Sprintf(`{"time":%q,"progress":11.76}`, stamp),
		StateTopic("hearth", "birch", "washer"):      `not json`, // logged, ignored
	} {
		in.Handle(topic, []byte(payload))
	}
	r, hz, _, err := in.Load(liveStreet, homesolve.Overrides{}, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 11, 26, 19, 0, 0, 0, time.Local); !hz.Start.Equal(want) {
		t.Fatalf("slot 0 at %v, want %v", hz.Start, want)
	}
	n := r.Model()
	hi := map[string]int{}
	for i, h := range n.Homes {
		hi[h.Name] = i
	}
	dog, alder, birch := &n.Homes[hi["dogwood"]], &n.Homes[hi["alder"]], &n.Homes[hi["birch"]]
	for _, c := range []struct {
		h    *devices.Home
		prop string
		want float64
	}{{dog, "temperature", 18.0}, {alder, "progress", 50}, {birch, "water_temp", 48}, {dog, "soc", 8}, {dog, "progress", 0}, {birch, "progress", 0}} {
		if got := initial(c.h, c.prop); got != c.want {
			t.Errorf("%s %s starts at %g, want %g", c.h.Name, c.prop, got, c.want)
		}
	}
	i := slices.IndexFunc(dog.Rules, func(r devices.Rule) bool { return strings.HasPrefix(r.Text, "living temperature geq 19.5 within") })
	if i < 0 || dog.Rules[i].T1 != 1 || dog.Rules[i].T2 != 2 {
		t.Fatalf("the begun comfort window: %+v", dog.Rules)
	}
	sol, err := sim.Solve(context.Background(), r.Problem(), sim.Options{Protocol: dpop.New, Seed: 1, Eager: true,
		Solver: func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("be", lp) }})
	if err != nil {
		t.Fatal(err)
	}
	plans := map[string]homecheck.Plan{}
	for _, name := range []string{"dogwood", "alder"} {
		hp, err := r.HomePlan(sol.Assign, hi[name])
		if err != nil {
			t.Fatal(err)
		}
		p := homesolve.Plan(hp)
		rep := homecheck.CheckHome(n, hi[name], p)
		if !rep.OK() || len(rep.Misses) > 0 {
			t.Errorf("%s: the checker finds violations %v, misses %v", name, rep.Violations, rep.Misses)
		}
		plans[name] = p
	}
	if got := plans["dogwood"].Actions["radiator"][:2]; !slices.Equal(got, []string{"high", "low"}) {
		t.Errorf("radiator's first two slots %v, want [high low]", got)
	}
	runs := 0
	for _, a := range plans["alder"].Actions["dishwasher"] {
		if a == "run" {
			runs++
		}
	}
	if runs != 1 {
		t.Errorf("dishwasher half-way runs %d slots, want 1: %v", runs, plans["alder"].Actions["dishwasher"])
	}
	runs = 0
	for _, a := range plans["dogwood"].Actions["dryer"] {
		if a == "run" {
			runs++
		}
	}
	if runs != 2 {
		t.Errorf("dryer at 11.76 %% runs %d slots, want 2: %v", runs, plans["dogwood"].Actions["dryer"])
	}
}
