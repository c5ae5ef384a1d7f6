package compile_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	cbcsolve "github.com/hearth-dcop/hearth/internal/cbc"
)

// autoMeterHome writes a random home whose meter is not linear (PV, an
// export price below the import price, sometimes import and export
// limits and a demand charge) with one or two batteries in automatic
// levels, a flexible load of three levels, and coordination windows: its
// meter, level and demand links read the batteries' actions from their
// states (compile's slotScope).
func autoMeterHome(seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 0xa070))
	T := 3 + rng.IntN(2)
	list := func(f func() float64) string {
		var b []string
		for range T {
			b = append(b, strconv.FormatFloat(math.Round(f()*100)/100, 'f', -1, 64))
		}
		return "[" + strings.Join(b, ", ") + "]"
	}
	imp := make([]float64, T)
	for t := range imp {
		imp[t] = 0.1 + 0.05*float64(rng.IntN(9))
	}
	i := 0
	exp := list(func() float64 { v := imp[i] * 0.1 * float64(rng.IntN(8)); i++; return v })
	i = 0
	var b strings.Builder
	fmt.Fprintf(&b, "[horizon]\nslots = %d\n[coordination]\nwindows = [[\"00:00\", \"%02d:00\"], [\"%02d:00\", \"%02d:00\"]]\nlevels = 3\n[objective]\npeak = 0\nmiss = 1\n", T, T/2, T/2, T)
	fmt.Fprintf(&b, "[[home]]\nname = \"h\"\nbackground_kw = %s\npv_kw = %s\npv_curtailable = %v\n",
		list(func() float64 { return 2 * rng.Float64() }), list(func() float64 { return 5 * rng.Float64() }), rng.IntN(2) == 0)
	fmt.Fprintf(&b, "[home.prices]\nper_slot = %s\nexport_per_slot = %s\n", list(func() float64 { v := imp[i]; i++; return v }), exp)
	b.WriteString("[home.grid]\n")
	if rng.IntN(2) == 0 {
		fmt.Fprintf(&b, "import_limit_kw = %g\n", 2+0.5*float64(rng.IntN(6)))
	}
	if rng.IntN(2) == 0 {
		fmt.Fprintf(&b, "export_limit_kw = %g\n", 1+0.5*float64(rng.IntN(6)))
	}
	if rng.IntN(2) == 0 {
		fmt.Fprintf(&b, "demand_charge = %g\ndemand_threshold_kw = %g\n", 0.1*float64(1+rng.IntN(5)), 0.5*float64(rng.IntN(4)))
	}
	for d := range 1 + rng.IntN(2) {
		capacity := 2 + float64(rng.IntN(3))
		fmt.Fprintf(&b, "[[home.device]]\nname = \"b%d\"\nkind = \"home_battery\"\ncapacity_kwh = %g\nmax_charge_kw = %g\nmax_discharge_kw = %g\npower_steps = \"auto\"\ninitial = { soc = %g }\nend_value = %g\n",
			d, capacity, 1.5+0.5*float64(rng.IntN(2)), 1.5+0.5*float64(rng.IntN(2)), math.Round(capacity*rng.Float64()*10)/10, 0.05*float64(rng.IntN(6)))
	}
	fmt.Fprintf(&b, "[[home.device]]\nname = \"heater\"\nactions = [{ name = \"off\", power_kw = 0 }, { name = \"low\", power_kw = %g }, { name = \"high\", power_kw = %g }]\n",
		0.5+0.5*float64(rng.IntN(2)), 1.5+0.5*float64(rng.IntN(2)))
	return b.String()
}

// TestAutoMeterAgainstMILP: homes whose slot functions read automatic
// battery levels from the batteries' states cost what CBC finds optimal
// for the same description written as a MILP (milp: a binary per device,
// slot and action, from the model alone), and the compiled problem does
// read states in some slot function (else the test would not test it).
func TestAutoMeterAgainstMILP(t *testing.T) {
	cbcsolve.Require(t)
	homes := 8
	if raceEnabled {
		homes = 3
	}
	solved := 0
	for seed := range uint64(homes) {
		text := autoMeterHome(seed)
		cfg, err := config.Parse(fmt.Sprintf("auto%d.toml", seed), []byte(text), nil)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, text)
		}
		n := cfg.Neighbourhood
		want, feasible := cbcsolve.Solve(t, milp(n))
		c, lp, in, got, ok := againstMILP(t, seed, text, n, want, feasible)
		if c == nil {
			continue
		}
		reads := 0
		for _, f := range c.Problem.Functions {
			if !strings.Contains(f.Name, "/meter@") && !strings.Contains(f.Name, "/link@") && !strings.Contains(f.Name, "/demand@") {
				continue
			}
			for _, v := range f.Scope {
				if strings.Contains(c.Problem.Variables[v].Name, ".soc#") {
					reads++
					break
				}
			}
		}
		if reads == 0 {
			t.Fatalf("seed %d: no slot function reads a battery's states\n%s", seed, text)
		}
		if !ok {
			continue
		}
		// The optimum's actions, encoded again from the schedule alone,
		// cost the same.
		assign := make([]int, len(c.Problem.Variables))
		for k, v := range in {
			assign[lp.Vars[lp.NB+k]] = v
		}
		sched, err := c.Decode(assign)
		if err != nil {
			t.Fatal(err)
		}
		again, err := c.Encode(sched)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if cost, err := c.Problem.Eval(again); err != nil || math.Abs(cost-got) > 1e-9*math.Max(1, math.Abs(got)) {
			t.Fatalf("seed %d: the optimum's schedule encodes to cost %g (%v), the solver's %g", seed, cost, err, got)
		}
		t.Logf("seed %d: %.6g", seed, got)
		solved++
	}
	if solved < homes*2/3 {
		t.Fatalf("only %d of %d homes feasible", solved, homes)
	}
}
