package homesolve

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/baseline"
)

// wallboxStreet writes a seeded street of two or three homes with
// automatic 7.4 kW wallboxes on three hourly slots, one coordination
// window over them and a peak term: the street devices/refine's
// TestScheduleOnLoad draws, small enough for a brute force over every
// plan of a wallbox's exact currents.
func wallboxStreet(seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 0x51ee7))
	const T = 3
	var b strings.Builder
	peak := float64(1+rng.IntN(20)) / 100
	fmt.Fprintf(&b, "[horizon]\nslots = %d\n[coordination]\nwindows = [[0, %d]]\n[objective]\npeak = %g\n", T, T, peak)
	ps := []string{fmt.Sprint(float64(5+rng.IntN(5)) / 100)}
	for range T - 1 {
		ps = append(ps, fmt.Sprint(float64(20+rng.IntN(30))/100))
	}
	fmt.Fprintf(&b, "[prices]\nper_slot = [%s]\n", strings.Join(ps, ", "))
	for h := range 2 + rng.IntN(2) {
		initial := float64(rng.IntN(200)) / 10
		fmt.Fprintf(&b, "[[home]]\nname = \"h%d\"\nbackground_kw = %g\n", h, float64(rng.IntN(10))/10)
		fmt.Fprintf(&b, "[[home.device]]\nname = \"ev\"\nkind = \"ev_wallbox_7kw\"\npower_steps = \"auto\"\ninitial = { charge = %g }\n", initial)
		fmt.Fprintf(&b, "rules = [\"charge geq %g before %02d:00\"]\n", initial+float64(20+rng.IntN(80))/10, T-1)
	}
	return b.String()
}

// bruteOnLoad is the least objective of home hi alone (its committed
// levels hs.Levels kept) over every plan of its wallbox d — off or one of
// its exact currents in every slot — whose draw in no slot exceeds
// bound, each plan evaluated by the model: what refine.HomeOnLoad must
// reach for the baseline's plan.
func bruteOnLoad(n *devices.Neighbourhood, hi int, hs devices.HomeSchedule, d int, bound []float64) float64 {
	one := *n
	one.Homes = n.Homes[hi : hi+1]
	one.Links, one.FeederLimit = nil, 0
	dev := &n.Homes[hi].Devices[d]
	opts := []int{0}
	for k := range dev.Exact {
		opts = append(opts, len(dev.Actions)+k)
	}
	T := n.Horizon.Slots
	cur := hs
	cur.Actions = slices.Clone(hs.Actions)
	row := make([]int, T)
	cur.Actions[d] = row
	best := math.Inf(1)
	var walk func(t int)
	walk = func(t int) {
		if t == T {
			ev, err := one.Evaluate(&devices.Schedule{Homes: []devices.HomeSchedule{cur}})
			if err != nil || !ev.Feasible {
				return
			}
			for s, v := range ev.Homes[0].Load {
				if v > bound[s]+1e-9 {
					return
				}
			}
			best = math.Min(best, ev.Cost)
			return
		}
		for _, a := range opts {
			row[t] = a
			// A slot whose draw is past the bound already: no plan
			// through it counts.
			if n.Homes[hi].Draw(t, func(d2 int) int { return cur.Actions[d2][t] }) > bound[t]+1e-9 {
				continue
			}
			walk(t + 1)
		}
	}
	walk(0)
	return best
}

// homeCost is home hi's own objective alone with levels committed.
func homeCost(n *devices.Neighbourhood, hi int, hs devices.HomeSchedule) float64 {
	one := *n
	one.Homes = n.Homes[hi : hi+1]
	one.Links, one.FeederLimit = nil, 0
	ev, err := one.Evaluate(&devices.Schedule{Homes: []devices.HomeSchedule{hs}})
	if err != nil || !ev.Feasible {
		return math.Inf(1)
	}
	return ev.Cost
}

// TestBaselineRefined: on seeded wallbox streets the SH-MGM-style
// baseline the report prints is its plan refined as the coordinated plan
// is: every home's wallbox at the least objective of the home (its
// committed level kept) over every plan of its exact currents whose draw
// stays at most the baseline's in every slot (brute force through the
// model's evaluator), and the reported objective on the load that flows
// — recomputed here from the printed load and bill — at most the
// unrefined plan's. The improved plan (Improve, then Report, as `hearth
// solve` and `hearth sim` run them) is never above that refined baseline
// on the load that flows.
func TestBaselineRefined(t *testing.T) {
	// Ten streets take a quarter of a second (about two under the race
	// detector); three of them have a baseline the refinement lowers.
	const streets = 10
	refined := 0
	for seed := range uint64(streets) {
		text := wallboxStreet(seed)
		cfg, err := config.Parse("street.toml", []byte(text), nil)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, text)
		}
		r, err := FromConfig("street.toml", cfg, Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Baselines(context.Background()); err != nil {
			t.Fatal(err)
		}
		n := r.Model()
		raw := r.shmgm
		if raw == nil || !raw.Eval.Feasible {
			t.Fatalf("seed %d: no feasible SH-MGM-style baseline", seed)
		}
		got := r.refinedSHMGM()
		if got != raw {
			refined++
		}
		for hi := range n.Homes {
			hs := raw.Schedule.Homes[hi]
			hs.Levels = raw.Eval.Homes[hi].Levels
			bound := make([]float64, n.Horizon.Slots)
			for s, v := range raw.Eval.Homes[hi].Load {
				bound[s] = math.Max(v, 0)
			}
			want := math.Min(homeCost(n, hi, hs), bruteOnLoad(n, hi, hs, 0, bound))
			gs := got.Schedule.Homes[hi]
			gs.Levels = hs.Levels
			if c := homeCost(n, hi, gs); math.Abs(c-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Fatalf("seed %d, home %d: the refined baseline's home costs %.9g, the best plan of its exact currents %.9g\n%s", seed, hi, c, want, text)
			}
		}
		// Independent of the report: the bill plus the weighted squared
		// load of the hourly slots.
		w := n.Weights.Peak
		flow := func(load []float64, bill float64) float64 {
			sq := 0.0
			for _, l := range load {
				sq += l * l
			}
			return bill + w*sq
		}
		start, res, ok := r.Fallback()
		if !ok {
			t.Fatalf("seed %d: no feasible start", seed)
		}
		assign, improved, _, err := r.Improve(context.Background(), start, res)
		if err != nil {
			t.Fatal(err)
		}
		h, err := r.Report(assign, improved)
		if err != nil {
			t.Fatal(err)
		}
		b := h.Baselines.SHMGM
		bf, hf := flow(b.LoadKW, b.EnergyCost), flow(h.LoadKW, h.EnergyCost)
		if rf := baseline.FlowObjective(n, raw.Eval); bf > rf+1e-6 {
			t.Errorf("seed %d: the reported baseline's objective on the load that flows %.6f, above its unrefined plan's %.6f", seed, bf, rf)
		}
		if math.Abs(bf-baseline.FlowObjective(n, got.Eval)) > 1e-6 {
			t.Errorf("seed %d: the report prints a baseline at %.6f, the refined one is at %.6f", seed, bf, baseline.FlowObjective(n, got.Eval))
		}
		if hf > bf+1e-6 {
			t.Errorf("seed %d: the improved plan's objective on the load that flows %.6f, above the refined baseline's %.6f\n%s", seed, hf, bf, strings.Join(h.Notes, "\n"))
		}
	}
	t.Logf("the baseline's plan refined on %d of %d streets", refined, streets)
	if refined == 0 {
		t.Fatal("no street's baseline was refined: the streets do not test it")
	}
}
