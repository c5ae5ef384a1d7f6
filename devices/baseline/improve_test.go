package baseline

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/internal/testhomes"
)

// TestImproveSHDS: on the published 7-home instances, Improve from the
// homes' own schedules keeps every rule, never ends above its start or
// below the lower bound, and gives the same schedule with one worker as
// with several; the SH-MGM-style baseline is above the bound too.
// HEARTH_SHDS_LONG=1 runs the five instances, otherwise dm_7_1_2 only.
func TestImproveSHDS(t *testing.T) {
	names := []string{"dm_7_1_2"}
	if os.Getenv("HEARTH_SHDS_LONG") != "" {
		names = append(names, "dm_7_1_3", "dm_7_1_4", "dm_7_1_5", "dm_7_1_6")
	}
	ctx := context.Background()
	for _, name := range names {
		n := shdsFile(t, name)
		u, err := Uncoordinated(ctx, n, Options{})
		if err != nil {
			t.Fatal(err)
		}
		sh, err := SHMGM(ctx, n, Options{})
		if err != nil {
			t.Fatal(err)
		}
		lb, err := LowerBound(ctx, n, Options{})
		if err != nil {
			t.Fatal(err)
		}
		a, err := Improve(ctx, n, u.Schedule, ImproveOptions{Seed: 1, Kicks: 5})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Improve(ctx, n, u.Schedule, ImproveOptions{Seed: 1, Kicks: 5, Options: Options{Workers: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if !a.Eval.Feasible || a.Flow > a.Start || a.Flow < lb || a.Stopped {
			t.Errorf("%s: improved %v from %v (feasible %v, stopped %v), bound %v", name, a.Flow, a.Start, a.Eval.Feasible, a.Stopped, lb)
		}
		if got := FlowObjective(n, a.Eval); got != a.Flow {
			t.Errorf("%s: reported %v, evaluation says %v", name, a.Flow, got)
		}
		if a.Flow != b.Flow || !slices.EqualFunc(a.Schedule.Homes, b.Schedule.Homes, sameActions) {
			t.Errorf("%s: %v with several workers, %v with one", name, a.Flow, b.Flow)
		}
		shf := FlowObjective(n, sh.Eval)
		if shf < lb {
			t.Errorf("%s: SH-MGM-style %v below the bound %v", name, shf, lb)
		}
		t.Logf("%s: bound %.0f; uncoordinated %.0f; SH-MGM-style %.0f (%+.2f%% over the bound, %d rounds); improved from uncoordinated %.0f (%+.2f%%, %d rounds, %d kicks, %d kept)",
			name, lb, a.Start, shf, 100*(shf-lb)/lb, sh.Rounds, a.Flow, 100*(a.Flow-lb)/lb, a.Rounds, a.Kicks, a.Accepted)
	}
}

// TestWaterFill checks the water filling against closed forms: with no
// prices and no floor the load spreads evenly (E²/n); a high floor in
// one slot is kept and the rest spreads over the others; a price tilts
// the load by b/2a.
func TestWaterFill(t *testing.T) {
	for _, c := range []struct {
		a     float64
		b, lo []float64
		E     float64
		want  float64
	}{
		{1, []float64{0, 0, 0, 0}, []float64{0, 0, 0, 0}, 8, 16},
		{1, []float64{0, 0, 0}, []float64{10, 0, 0}, 4, 100 + 4 + 4},
		// L = (λ − b)/2: b = (0, 2), Σ L = 4 → L = (2.5, 1.5): 6.25 + 2.25 + 3.
		{1, []float64{0, 2}, []float64{0, 0}, 4, 11.5},
	} {
		if got := waterFill(c.a, c.b, c.lo, c.E); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("waterFill(%v, %v, %v, %v) = %v, want %v", c.a, c.b, c.lo, c.E, got, c.want)
		}
	}
}

// TestImproveFeeder: on the example neighbourhood (windows of several
// slots, a 40 kW feeder limit on the committed caps) Improve from the
// SH-MGM-style schedule ends feasible — within the limit, every rule
// kept — and not above its start.
func TestImproveFeeder(t *testing.T) {
	cfg, err := config.Load(filepath.Join("..", "..", "examples", "neighbourhood", "neighbourhood.toml"))
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Neighbourhood
	if n.FeederLimit <= 0 {
		t.Fatal("the example has no feeder limit")
	}
	ctx := context.Background()
	sh, err := SHMGM(ctx, n, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !sh.Eval.Feasible {
		t.Skipf("the SH-MGM-style schedule breaks the limit: %v", sh.Eval.Violations)
	}
	imp, err := Improve(ctx, n, sh.Schedule, ImproveOptions{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := n.Evaluate(imp.Schedule)
	if err != nil {
		t.Fatal(err)
	}
	if !ev.Feasible || imp.Flow > imp.Start || FlowObjective(n, ev) != imp.Flow {
		t.Errorf("improved %v from %v, feasible %v %v", imp.Flow, imp.Start, ev.Feasible, ev.Violations)
	}
	for w, c := range ev.Committed {
		if c > n.FeederLimit+1e-9 {
			t.Errorf("window %d: caps add up to %v, limit %v", w, c, n.FeederLimit)
		}
	}
	t.Logf("flow objective %.3f → %.3f in %d rounds, %d kicks (%d kept)", imp.Start, imp.Flow, imp.Rounds, imp.Kicks, imp.Accepted)
}

// TestLowerBoundBruteForce: on small random neighbourhoods (every slot a
// window, every pair of homes linked) the bound is at most the least flow
// objective of every feasible schedule, found by enumerating them all,
// and Improve from a feasible schedule ends between that optimum and its
// start.
func TestLowerBoundBruteForce(t *testing.T) {
	ctx := context.Background()
	checked := 0
	for seed := uint64(1); seed <= 100; seed++ {
		n := testhomes.Random(seed, testhomes.Options{Homes: 2, Slots: 3, Devices: 2, Actions: 2, Mixed: true})
		n.Links = nil
		n.Windows = nil
		for hi := range n.Homes {
			h := &n.Homes[hi]
			h.OutsideLoad = nil // the bound covers homes without them
			for d := range h.Devices {
				for a := range h.Devices[d].Actions {
					h.Devices[d].Actions[a].Power = math.Abs(h.Devices[d].Actions[a].Power)
				}
			}
		}
		for t := range n.Horizon.Slots {
			n.Windows = append(n.Windows, devices.Window{From: t, To: t + 1})
		}
		if n.Weights.Peak == 0 {
			n.Weights.Peak = 0.5
		}
		if err := n.Validate(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		var all [2][]devices.HomeSchedule
		for h := range 2 {
			testhomes.Schedules(n, h, func(hs devices.HomeSchedule) { all[h] = append(all[h], clone(hs)) })
		}
		best := math.Inf(1)
		var start *devices.Schedule
		for _, a := range all[0] {
			for _, b := range all[1] {
				s := &devices.Schedule{Homes: []devices.HomeSchedule{a, b}}
				ev, err := n.Evaluate(s)
				if err != nil {
					t.Fatal(err)
				}
				if !ev.Feasible {
					continue
				}
				if start == nil {
					start = s
				}
				best = math.Min(best, FlowObjective(n, ev))
			}
		}
		if start == nil {
			continue // no feasible schedule
		}
		lb, err := LowerBound(ctx, n, Options{})
		if errors.Is(err, ErrNoBound) {
			continue
		}
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		checked++
		if lb > best+1e-9*math.Max(1, best) {
			t.Errorf("seed %d: bound %v above the optimum %v", seed, lb, best)
		}
		imp, err := Improve(ctx, n, start, ImproveOptions{Seed: seed, Kicks: 2})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if imp.Flow < best-1e-9*math.Max(1, best) || imp.Flow > imp.Start {
			t.Errorf("seed %d: improved %v from %v; optimum %v", seed, imp.Flow, imp.Start, best)
		}
	}
	if checked < 10 {
		t.Fatalf("only %d neighbourhoods checked", checked)
	}
	t.Logf("%d neighbourhoods checked", checked)
}

// TestImproveFeederPerWindow: FeederLimits equal to n's one limit in
// every window give the very schedule the one limit gives; uneven
// limits (the start's committed caps in even windows, none in odd ones)
// are each kept, read from the evaluation's committed caps, while the
// objective does not rise; a start above a window's limit is refused,
// as are limits that do not match the windows.
func TestImproveFeederPerWindow(t *testing.T) {
	cfg, err := config.Load(filepath.Join("..", "..", "examples", "neighbourhood", "neighbourhood.toml"))
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Neighbourhood
	ctx := context.Background()
	sh, err := SHMGM(ctx, n, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !sh.Eval.Feasible {
		t.Skipf("the SH-MGM-style schedule breaks the limit: %v", sh.Eval.Violations)
	}
	// Two kicks: one leaves the SH-MGM-style start where it is since
	// the oven's counter ends at its goal (a tie its best responses
	// break differently).
	o := ImproveOptions{Seed: 3, Kicks: 2}
	one, err := Improve(ctx, n, sh.Schedule, o)
	if err != nil {
		t.Fatal(err)
	}
	if one.Moves == 0 || one.Flow >= one.Start {
		t.Fatalf("no home moved under the one limit (%v → %v): the comparison tests nothing", one.Start, one.Flow)
	}
	same := o
	same.FeederLimits = make([]float64, len(n.Windows))
	for w := range same.FeederLimits {
		same.FeederLimits[w] = n.FeederLimit
	}
	got, err := Improve(ctx, n, sh.Schedule, same)
	if err != nil {
		t.Fatal(err)
	}
	if got.Flow != one.Flow || !slices.EqualFunc(got.Schedule.Homes, one.Schedule.Homes, sameActions) {
		t.Errorf("one limit per window: %v, the one limit: %v", got.Flow, one.Flow)
	}

	free := *n
	free.FeederLimit = 0
	uneven := o
	uneven.FeederLimits = make([]float64, len(n.Windows))
	for w := range uneven.FeederLimits {
		uneven.FeederLimits[w] = math.Inf(1)
		if w%2 == 0 {
			uneven.FeederLimits[w] = sh.Eval.Committed[w]
		}
	}
	imp, err := Improve(ctx, &free, sh.Schedule, uneven)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := free.Evaluate(imp.Schedule)
	if err != nil {
		t.Fatal(err)
	}
	if !ev.Feasible || imp.Flow > imp.Start {
		t.Errorf("improved %v from %v, feasible %v %v", imp.Flow, imp.Start, ev.Feasible, ev.Violations)
	}
	for w, c := range ev.Committed {
		if !devices.Fits(c, uneven.FeederLimits[w]) {
			t.Errorf("window %d: caps add up to %v, its limit %v", w, c, uneven.FeederLimits[w])
		}
	}
	t.Logf("uneven limits %v: flow objective %.3f → %.3f (one limit %.3f), committed %v", uneven.FeederLimits, imp.Start, imp.Flow, one.Flow, ev.Committed)

	over := o
	over.FeederLimits = slices.Clone(uneven.FeederLimits)
	over.FeederLimits[0] = sh.Eval.Committed[0] / 2
	if _, err := Improve(ctx, &free, sh.Schedule, over); err == nil {
		t.Error("a start above window 0's limit was not refused")
	}
	short := o
	short.FeederLimits = []float64{1}
	if _, err := Improve(ctx, &free, sh.Schedule, short); err == nil {
		t.Errorf("%d limits for %d windows were not refused", len(short.FeederLimits), len(n.Windows))
	}
}

// TestImproveKickedHomes: the escapes' budget of kicked homes stops a run
// exactly where a run asked for that many escapes ends — a budget of
// 4 homes on dm_7_1_2 (two kicked per escape) is Kicks 2 — and the
// default budget leaves a 7-home street its ten escapes.
func TestImproveKickedHomes(t *testing.T) {
	ctx := context.Background()
	n := shdsFile(t, "dm_7_1_2")
	u, err := Uncoordinated(ctx, n, Options{})
	if err != nil {
		t.Fatal(err)
	}
	run := func(o ImproveOptions) *Improvement {
		t.Helper()
		o.Seed = 3
		a, err := Improve(ctx, n, u.Schedule, o)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	same := func(a, b *Improvement) bool {
		return a.Flow == b.Flow && a.Kicks == b.Kicks && a.Rounds == b.Rounds && slices.EqualFunc(a.Schedule.Homes, b.Schedule.Homes, sameActions)
	}
	budget, two := run(ImproveOptions{KickedHomes: 4}), run(ImproveOptions{Kicks: 2, KickedHomes: -1})
	if !budget.Budgeted || two.Budgeted || budget.Kicks != 2 || !same(budget, two) {
		t.Errorf("budget of 4 homes: %d escapes (budgeted %v), flow %v; 2 escapes: flow %v", budget.Kicks, budget.Budgeted, budget.Flow, two.Flow)
	}
	def, all := run(ImproveOptions{}), run(ImproveOptions{KickedHomes: -1})
	if def.Budgeted || def.Kicks != DefaultKicks || !same(def, all) {
		t.Errorf("default budget: %d escapes (budgeted %v), flow %v; unbounded: %d, flow %v", def.Kicks, def.Budgeted, def.Flow, all.Kicks, all.Flow)
	}
	if DefaultKickedHomes/kickCount(109) < DefaultKicks || DefaultKickedHomes/kickCount(110) >= DefaultKicks {
		t.Errorf("the default budget does not start binding at 110 homes")
	}
}
