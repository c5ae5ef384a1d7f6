package compile_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/compile"
	cbcsolve "github.com/hearth-dcop/hearth/internal/cbc"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// milpHome writes a random TOML home with a meter of its own: its own
// two-way tariff (export prices sometimes negative), PV (curtailable or
// not), import and export limits (soft or hard), a demand charge, one or two home
// batteries with grid permissions and end values.
func milpHome(seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 0x111b))
	T := 4 + rng.IntN(3)
	slot := []string{"1h", "30m"}[rng.IntN(2)]
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
	exp := list(func() float64 { v := imp[i]*0.1*float64(rng.IntN(8)) - 0.05*float64(rng.IntN(2)); i++; return v })
	i = 0
	var b strings.Builder
	fmt.Fprintf(&b, "[horizon]\nslots = %d\nslot = %q\n[objective]\npeak = 0\nmiss = 1\n", T, slot)
	fmt.Fprintf(&b, "[[home]]\nname = \"h\"\nbackground_kw = %s\npv_kw = %s\npv_curtailable = %v\n",
		list(func() float64 { return 2 * rng.Float64() }), list(func() float64 { return 5 * rng.Float64() }), rng.IntN(3) != 0)
	fmt.Fprintf(&b, "[home.prices]\nper_slot = %s\nexport_per_slot = %s\n", list(func() float64 { v := imp[i]; i++; return v }), exp)
	b.WriteString("[home.grid]\n")
	if rng.IntN(3) != 0 {
		fmt.Fprintf(&b, "import_limit_kw = %g\n", 1+0.5*float64(rng.IntN(6)))
	}
	if rng.IntN(3) != 0 {
		fmt.Fprintf(&b, "export_limit_kw = %g\n", 0.5+0.5*float64(rng.IntN(6)))
	}
	fmt.Fprintf(&b, "hard = %v\n", rng.IntN(4) == 0)
	if rng.IntN(2) == 0 {
		fmt.Fprintf(&b, "demand_charge = %g\ndemand_threshold_kw = %g\n", 0.1*float64(1+rng.IntN(5)), 0.5*float64(rng.IntN(4)))
	}
	for d := range 1 + rng.IntN(2) {
		capacity := 2 + float64(rng.IntN(5))
		fmt.Fprintf(&b, "[[home.device]]\nname = \"b%d\"\nkind = \"home_battery\"\ncapacity_kwh = %g\nmax_charge_kw = %g\nmax_discharge_kw = %g\npower_steps = %d\ninitial = { soc = %g }\nend_value = %g\ncharge_from_grid = %v\ndischarge_to_grid = %v\n",
			d, capacity, 1+float64(rng.IntN(3)), 1+float64(rng.IntN(3)), 1+rng.IntN(2), math.Round(capacity*rng.Float64()*10)/10, 0.05*float64(rng.IntN(6)), rng.IntN(3) != 0, rng.IntN(3) != 0)
	}
	return b.String()
}

// milp writes home 0 of n as a mixed-integer programme in CPLEX LP
// format, from the model's description alone (not the compiled tables):
// a binary per device, slot and action; each stored property's steps per
// boundary within its range; the meter's import and export split, with
// curtailed PV, slack beyond soft limits, hard limits as bounds and grid
// permissions as big-M rows; the objective is the bill at the home's
// tariff, Weights.Miss per kWh beyond a limit, the devices' cycling
// cost and the demand charge on the highest import, less the end value
// of what is stored.
func milp(n *devices.Neighbourhood) string {
	lengths := make([]int, n.Horizon.Slots)
	for t := range lengths {
		lengths[t] = n.Horizon.SlotMinutes
	}
	return milpOf(n, lengths, nil)
}

// milpOf is milp with each slot's length in minutes given apart from the
// model (lengths) and soft goals: goals maps the index of a soft rule
// "geq … before" on a property that never falls (an EV's charge) to the
// boundary it is checked at, where the shortfall costs Weights.Miss per
// unit. A slot's effects are an action's own for its length
// (devices.Action.ByLength) or its per-slot effects scaled to the
// length, as is the drift.
func milpOf(n *devices.Neighbourhood, lengths []int, goals map[int]int) string {
	h := &n.Homes[0]
	m := h.Meter
	T := n.Horizon.Slots
	first := lengths[0]
	imp, exp := m.Prices, m.ExportPrices
	var obj, rows, bounds, bins []string
	term := func(c float64, v string) string {
		if c < 0 {
			return fmt.Sprintf("- %.12g %s", -c, v)
		}
		return fmt.Sprintf("+ %.12g %s", c, v)
	}
	z := func(d, t, a int) string { return fmt.Sprintf("z_%d_%d_%d", d, t, a) }
	for t := range T {
		dt := float64(lengths[t]) / 60
		obj = append(obj, term(imp[t]*dt, fmt.Sprintf("imp%d", t)), term(-exp[t]*dt, fmt.Sprintf("exp%d", t)))
		meter := []string{fmt.Sprintf("imp%d - exp%d", t, t)}
		if m.Curtail != nil {
			meter = append(meter, fmt.Sprintf("- cur%d", t))
			bounds = append(bounds, fmt.Sprintf("0 <= cur%d <= %.12g", t, m.Curtail[t]))
		}
		for d := range h.Devices {
			dev := &h.Devices[d]
			one := []string{}
			var charge, discharge []string
			for a, act := range dev.Actions {
				one = append(one, "+ "+z(d, t, a))
				bins = append(bins, z(d, t, a))
				meter = append(meter, term(-act.Power, z(d, t, a)))
				if c := dev.CycleCost * math.Abs(act.Power) * dt; c != 0 {
					obj = append(obj, term(c, z(d, t, a)))
				}
				if act.Power > 0 {
					charge = append(charge, term(100, z(d, t, a)))
				}
				if act.Power < 0 {
					discharge = append(discharge, term(100, z(d, t, a)))
				}
			}
			rows = append(rows, strings.Join(one, " ")+" = 1")
			if dev.NoGridCharge && len(charge) > 0 {
				rows = append(rows, fmt.Sprintf("imp%d %s <= 100", t, strings.Join(charge, " ")))
			}
			if dev.NoGridDischarge && len(discharge) > 0 {
				rows = append(rows, fmt.Sprintf("exp%d %s <= 100", t, strings.Join(discharge, " ")))
			}
		}
		rows = append(rows, strings.Join(meter, " ")+fmt.Sprintf(" = %.12g", h.Background[t]))
		for _, lim := range []struct {
			v     string
			limit float64
		}{{fmt.Sprintf("imp%d", t), m.ImportLimit}, {fmt.Sprintf("exp%d", t), m.ExportLimit}} {
			switch {
			case lim.limit <= 0:
			case m.HardLimits:
				rows = append(rows, fmt.Sprintf("%s <= %.12g", lim.v, lim.limit))
			default:
				rows = append(rows, fmt.Sprintf("o%s - %s >= %.12g", lim.v, lim.v, -lim.limit))
				obj = append(obj, term(n.Weights.Miss*dt, "o"+lim.v))
			}
		}
	}
	if m.DemandCharge > 0 {
		// dem ≥ import − threshold in every slot, dem ≥ 0.
		for t := range T {
			rows = append(rows, fmt.Sprintf("dem - imp%d >= %.12g", t, -m.DemandThreshold))
		}
		obj = append(obj, term(m.DemandCharge, "dem"))
	}
	for pi, p := range h.Properties {
		init := devices.Steps(p.Initial, p.Scale)
		for i := 1; i <= T; i++ {
			f := float64(lengths[i-1]) / float64(first)
			row := []string{fmt.Sprintf("v%d_%d", pi, i)}
			rhs := float64(devices.Steps(p.Drift*f, p.Scale))
			if i == 1 {
				rhs += float64(init)
			} else {
				row = append(row, fmt.Sprintf("- v%d_%d", pi, i-1))
			}
			for d := range h.Devices {
				if !h.Devices[d].Affects(p.Location, p.Name) {
					continue
				}
				for a, act := range h.Devices[d].Actions {
					delta, ok := act.Effect(p.Name)
					delta *= f
					if own, has := act.ByLength[lengths[i-1]]; has && lengths[i-1] != first {
						ok = false
						for _, e := range own {
							if e.Property == p.Name {
								delta, ok = e.Delta, true
							}
						}
					}
					if ok && delta != 0 {
						row = append(row, term(-float64(devices.Steps(delta, p.Scale)), z(d, i-1, a)))
					}
				}
			}
			rows = append(rows, strings.Join(row, " ")+fmt.Sprintf(" = %g", rhs))
			bounds = append(bounds, fmt.Sprintf("%d <= v%d_%d <= %d", devices.Steps(*p.Min, p.Scale), pi, i, devices.Steps(*p.Max, p.Scale)))
		}
		if p.EndValue != 0 {
			obj = append(obj, term(-p.EndValue*p.Scale, fmt.Sprintf("v%d_%d", pi, T)))
		}
	}
	for ri, b := range goals {
		r := &h.Rules[ri]
		pi := h.Property(r.Location, r.Property)
		p := &h.Properties[pi]
		// s ≥ goal − v_b, s ≥ 0 (steps).
		rows = append(rows, fmt.Sprintf("s%d + v%d_%d >= %d", ri, pi, b, devices.Steps(r.Goal, p.Scale)))
		obj = append(obj, term(n.Weights.Miss*p.Scale, fmt.Sprintf("s%d", ri)))
	}
	return cbcsolve.Program{Objective: obj, Rows: rows, Bounds: bounds, Binaries: bins}.String()
}

// TestMeterAgainstMILP: random TOML homes with their own tariff, PV,
// limits, batteries with grid permissions and end values, planned
// exactly by hearth (bucket elimination on the compiled tables), cost
// what CBC finds optimal for the same description written as a MILP: the
// bill at the home's tariff, the penalty beyond soft limits, cycling,
// less the stored energy's end value; infeasible (hard limits and
// permissions) for both or neither.
func TestMeterAgainstMILP(t *testing.T) {
	cbcsolve.Require(t)
	homes := 30
	if raceEnabled {
		homes = 6
	}
	solved := 0
	for seed := range uint64(homes) {
		text := milpHome(seed)
		cfg, err := config.Parse(fmt.Sprintf("milp%d.toml", seed), []byte(text), nil)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, text)
		}
		n := cfg.Neighbourhood
		want, feasible := cbcsolve.Solve(t, milp(n))
		if _, _, _, _, ok := againstMILP(t, seed, text, n, want, feasible); ok {
			solved++
		}
	}
	if solved < homes*2/3 {
		t.Fatalf("only %d of %d homes feasible", solved, homes)
	}
}

// againstMILP compiles n (the home of text, seed) and solves it exactly
// by bucket elimination, failing t unless the result agrees with CBC's
// optimum want and feasibility. c is nil where the compiler refused a
// home CBC also finds infeasible; ok says whether there is an optimum to
// check further: the local problem, its interior values and its cost.
func againstMILP(t *testing.T, seed uint64, text string, n *devices.Neighbourhood, want float64, feasible bool) (c *compile.Compiled, lp *mva.LocalProblem, in []int, got float64, ok bool) {
	t.Helper()
	c, err := compile.Compile(n, compile.Options{})
	if err != nil {
		if feasible {
			t.Fatalf("seed %d: %v; CBC finds %g", seed, err, want)
		}
		return nil, nil, nil, 0, false
	}
	lp = mva.NewLocalProblem(c.Problem, mva.Whole(c.Problem))
	s, err := local.New("be", lp)
	if err != nil {
		t.Fatal(err)
	}
	in = make([]int, lp.NumInterior())
	got, err = s.SolveRow(context.Background(), nil, in)
	if err != nil {
		t.Fatal(err)
	}
	if math.IsInf(got, 1) != !feasible {
		t.Fatalf("seed %d: hearth %v, CBC feasible %v\n%s", seed, got, feasible, text)
	}
	if !feasible {
		return c, nil, nil, 0, false
	}
	if math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
		t.Fatalf("seed %d: hearth's optimum %.9g, CBC's %.9g\n%s", seed, got, want, text)
	}
	return c, lp, in, got, true
}
