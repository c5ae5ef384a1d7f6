package compile_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/compile"
	"github.com/hearth-dcop/hearth/devices/internal/checkedplan"
	"github.com/hearth-dcop/hearth/devices/report"
	cbcsolve "github.com/hearth-dcop/hearth/internal/cbc"
	"github.com/hearth-dcop/hearth/mva"
)

// unevenHome is a random compiled TOML home on a horizon of uneven slots
// ([horizon] segments: quarter or half hours first, then hours), with
// its own tariff (a default price and a cheap period on the uneven
// boundaries, export prices per slot), PV, limits, a home battery and an
// EV whose soft goal is at a clock time, often inside an hour slot. It
// returns the TOML text, each slot's length in minutes, the goal's
// boundary worked out here (the first boundary at or after the goal's
// time: a goal inside a slot applies at its end) and whether the time is
// inside a slot.
func unevenHome(seed uint64) (text string, lengths []int, goal int, inside bool) {
	rng := rand.New(rand.NewPCG(seed, 0x0e7e))
	fine := []int{15, 30}[rng.IntN(2)]
	nf, nc := 1+rng.IntN(3), 2+rng.IntN(2)
	for range nf {
		lengths = append(lengths, fine)
	}
	for range nc {
		lengths = append(lengths, 60)
	}
	T := len(lengths)
	bounds := []int{0}
	for _, m := range lengths {
		bounds = append(bounds, bounds[len(bounds)-1]+m)
	}
	start := 60 * rng.IntN(24)
	clock := func(m int) string { m %= 1440; return fmt.Sprintf("%02d:%02d", m/60, m%60) }
	list := func(f func() float64) string {
		var b []string
		for range T {
			b = append(b, strconv.FormatFloat(math.Round(f()*100)/100, 'f', -1, 64))
		}
		return "[" + strings.Join(b, ", ") + "]"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[horizon]\nstart = %q\nsegments = [{ slot = \"%dm\", count = %d }, { slot = \"1h\", count = %d }]\n[objective]\npeak = 0\nmiss = 1\n", clock(start), fine, nf, nc)
	fmt.Fprintf(&b, "[[home]]\nname = \"h\"\nbackground_kw = %s\npv_kw = %s\npv_curtailable = %v\n",
		list(func() float64 { return 2 * rng.Float64() }), list(func() float64 { return 4 * rng.Float64() }), rng.IntN(2) == 0)
	from := rng.IntN(T)
	to := from + 1 + rng.IntN(T-from)
	fmt.Fprintf(&b, "[home.prices]\ndefault = %g\nperiods = [{ from = %q, to = %q, price = %g }]\nexport_per_slot = %s\n",
		0.2+0.05*float64(rng.IntN(5)), clock(start+bounds[from]), clock(start+bounds[to]), 0.1+0.05*float64(rng.IntN(3)), list(func() float64 { return 0.01 * float64(rng.IntN(8)) }))
	b.WriteString("[home.grid]\n")
	if rng.IntN(2) == 0 {
		fmt.Fprintf(&b, "import_limit_kw = %g\n", 6+float64(rng.IntN(6)))
	}
	if rng.IntN(2) == 0 {
		fmt.Fprintf(&b, "export_limit_kw = %g\n", 1+0.5*float64(rng.IntN(4)))
	}
	if rng.IntN(2) == 0 {
		capacity := 2 + float64(rng.IntN(4))
		fmt.Fprintf(&b, "[[home.device]]\nname = \"bat\"\nkind = \"home_battery\"\ncapacity_kwh = %g\nmax_charge_kw = %g\nmax_discharge_kw = %g\ninitial = { soc = %g }\nend_value = %g\n",
			capacity, 1+float64(rng.IntN(3)), 1+float64(rng.IntN(3)), math.Round(capacity*rng.Float64()*10)/10, 0.05*float64(rng.IntN(4)))
	}
	// The goal's time: a boundary, or inside a slot (half way through an
	// hour, or 5 minutes into a fine slot).
	k := 1 + rng.IntN(T)
	at := bounds[k]
	if rng.IntN(3) != 0 {
		at -= min(lengths[k-1]-5, 30)
	}
	fmt.Fprintf(&b, "[[home.device]]\nname = \"ev\"\nkind = \"ev_wallbox_7kw\"\ninitial = { charge = %g }\nrules = [\"charge geq %g before %s\"]\n",
		10+float64(rng.IntN(20)), 15+float64(rng.IntN(15)), clock(start+at))
	for goal < T && bounds[goal] < at {
		goal++
	}
	return b.String(), lengths, goal, at != bounds[goal]
}

// TestUnevenAgainstMILP: random compiled TOML homes on uneven slots,
// planned exactly by hearth (bucket elimination on the compiled tables),
// cost what CBC finds optimal for the same description written as a
// MILP with each slot's own length taken from the generator, not the
// loader: the bill of each slot at its hours, the penalty beyond soft
// limits, cycling, the EV goal's shortfall at the boundary the
// generator worked out, less the stored energy's end value. The goal's
// boundary is the loader's too, and every plan passes the checker.
func TestUnevenAgainstMILP(t *testing.T) {
	cbcsolve.Require(t)
	homes := 24
	if raceEnabled {
		homes = 6
	}
	solved, inside := 0, 0
	for seed := range uint64(homes) {
		text, lengths, goal, within := unevenHome(seed)
		if within {
			inside++
		}
		cfg, err := config.Parse(fmt.Sprintf("uneven%d.toml", seed), []byte(text), nil)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, text)
		}
		n := cfg.Neighbourhood
		h := &n.Homes[0]
		goals := map[int]int{}
		for ri := range h.Rules {
			r := &h.Rules[ri]
			if r.Property != "charge" || r.Prefix != devices.Before {
				continue
			}
			if r.T1 != goal {
				t.Fatalf("seed %d: the loader checks %q at boundary %d, want %d\n%s", seed, r.Text, r.T1, goal, text)
			}
			goals[ri] = goal
		}
		if len(goals) != 1 {
			t.Fatalf("seed %d: %d EV goals", seed, len(goals))
		}
		want, feasible := cbcsolve.Solve(t, milpOf(n, lengths, goals))
		c, lp, in, _, ok := againstMILP(t, seed, text, n, want, feasible)
		if !ok {
			continue
		}
		if _, _, err := reportChecked(t, c, n, lp, in); err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, text)
		}
		solved++
	}
	if solved < homes*2/3 || inside < homes/3 {
		t.Fatalf("only %d of %d homes feasible, %d goals inside a slot", solved, homes, inside)
	}
	t.Logf("%d of %d homes equal to CBC's optimum, %d with the goal inside a slot", solved, homes, inside)
}

// reportChecked is checkedplan.Report for a test: a plan that cannot be
// reported fails the test at once, and the checker's verdict is returned.
func reportChecked(t *testing.T, c *compile.Compiled, n *devices.Neighbourhood, lp *mva.LocalProblem, in []int) (*report.Homes, float64, error) {
	t.Helper()
	res, cost, check, err := checkedplan.Report(c, n, lp, in)
	if err != nil {
		t.Fatal(err)
	}
	return res, cost, check
}
