package compile_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	cbcsolve "github.com/hearth-dcop/hearth/internal/cbc"
)

// windowHome writes a random home with one catalogue EV charger that is
// plugged in only from an arrival after midnight (00:30 to 02:15) to a
// departure half an hour before the horizon's end, and a hard goal at
// the departure, under random hourly prices that are cheapest while the
// car is away: a plan that ignored the window would charge there. It
// returns the text with and without the window, and the figures of the
// MILP: prices, the slots away, the wallbox's power and efficiency and
// the energy the goal needs.
func windowHome(seed uint64) (text, always string, prices []float64, away []bool, maxKW, eff, need float64) {
	rng := rand.New(rand.NewPCG(seed, 0x91d0))
	T := 6 + rng.IntN(3)
	kind := "ev_wallbox_7kw"
	maxKW, eff = 7.4, 0.89
	if rng.IntN(2) == 0 {
		kind, maxKW = "ev_wallbox_11kw", 11
	}
	arrivals := []int{30, 60, 90, 135}
	arrival := arrivals[rng.IntN(len(arrivals))]
	departure := (T-1)*60 + 30
	away = make([]bool, T)
	plugged := 0
	for t := range T {
		// A slot the car arrives or leaves in is away as a whole.
		away[t] = t*60 < arrival || (t+1)*60 > departure
		if !away[t] {
			plugged++
		}
	}
	initial := float64(10 + rng.IntN(20))
	need = math.Round(math.Min((0.15+0.3*rng.Float64())*maxKW*eff*float64(plugged), 55-initial)*10) / 10
	prices = make([]float64, T)
	var ps []string
	for t := range prices {
		prices[t] = float64(10+rng.IntN(40)) / 100
		if away[t] {
			prices[t] = 0.01
		}
		ps = append(ps, strconv.FormatFloat(prices[t], 'f', -1, 64))
	}
	clock := func(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }
	var b strings.Builder
	fmt.Fprintf(&b, "[horizon]\nslots = %d\n[coordination]\nwindows = []\n[objective]\npeak = 0\n[prices]\nper_slot = [%s]\n", T, strings.Join(ps, ", "))
	fmt.Fprintf(&b, "[[home]]\nname = \"h\"\nbackground_kw = 0\n[[home.device]]\nname = \"ev\"\nkind = %q\nWINDOW\ninitial = { charge = %g }\n", kind, initial)
	fmt.Fprintf(&b, "rules = [{ rule = \"charge geq %g before %s\", hard = true }]\n", initial+need, clock(departure))
	text = strings.Replace(b.String(), "WINDOW", fmt.Sprintf("arrival = %q\ndeparture = %q", clock(arrival), clock(departure)), 1)
	always = strings.Replace(b.String(), "WINDOW", "", 1)
	return text, always, prices, away, maxKW, eff, need
}

// TestWindowAgainstMILP: on seeded EV homes with a plugged-in window,
// the compiled plan (automatic levels, refined onto the wallbox's
// currents) never charges while the car is away, passes the independent
// checker, and costs within 1 % of the wallbox's own optimum with the
// window (currentsMILP with no current while away, CBC), never below it;
// the same homes without the window cost less, since their cheapest
// slots are the ones the car is away in.
func TestWindowAgainstMILP(t *testing.T) {
	cbcsolve.Require(t)
	homes := 6
	if raceEnabled {
		homes = 3
	}
	for seed := range uint64(homes) {
		text, always, prices, away, maxKW, eff, need := windowHome(seed)
		name := fmt.Sprintf("window%d.toml", seed)
		got, kw := checkedPlan(t, name, text, "ev")
		stored := 0.0
		for s, p := range kw {
			if away[s] && p != 0 {
				t.Fatalf("%s: the plan charges %g kW in slot %d, while the car is away\n%s", name, p, s, text)
			}
			stored += p * eff
		}
		if stored < need-1e-9 {
			t.Fatalf("%s: the plan's %v kW store %g kWh, short of the %g kWh goal", name, kw, stored, need)
		}
		milp := currentsMILPAway(len(prices), 1, prices, maxKW, eff, need, away)
		want, ok := cbcsolve.Solve(t, milp)
		if !ok {
			t.Fatalf("%s: the MILP is infeasible\n%s", name, milp)
		}
		if got < want-1e-6 {
			t.Fatalf("%s: the plan (%g) beats the wallbox's optimum with the window %g", name, got, want)
		}
		if gap := (got - want) / want; gap > 0.01 {
			t.Errorf("%s: the plan (%g) costs %.2f%% more than the wallbox's optimum %g, want at most 1%%", name, got, 100*gap, want)
		}
		free := optimumOf(t, name, always)
		if free >= got-1e-9 {
			t.Errorf("%s: without the window the optimum is %g, not below the window's %g: the window does not bind", name, free, got)
		}
		t.Logf("%s: away %v, plan %.4f, MILP %.4f, without the window %.4f", name, away, got, want, free)
	}
}
