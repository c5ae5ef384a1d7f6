package baseline

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/internal/testhomes"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// perWindowCase is a street of compiled homes answering a mixed
// street's energy homes: their import as every home's outside load, and
// one feeder limit per window, the street's less the energy homes'
// (seeded) commitments there, binding in some windows and not others.
type perWindowCase struct {
	seed   uint64
	n      *devices.Neighbourhood
	start  *devices.Schedule
	limits []float64
}

// perWindowCases returns up to most seeded cases whose start keeps its
// limits. The start is flat (SH-MGM-style under a heavy peak weight);
// the answer runs under a light one, so the homes crowd the cheap slots
// until a window's limit stops them.
func perWindowCases(t *testing.T, most int, o testhomes.Options) []perWindowCase {
	t.Helper()
	ctx := context.Background()
	var out []perWindowCase
	for seed := uint64(1); seed <= 1000 && len(out) < most; seed++ {
		flat := testhomes.Random(seed, o)
		flat.Links, flat.FeederLimit = nil, 0
		if len(flat.Windows) < 2 {
			continue
		}
		flat.Weights.Peak = 2
		u, err := SHMGM(ctx, flat, Options{})
		if err != nil || !u.Eval.Feasible {
			continue
		}
		n := *flat
		n.Weights.Peak = 0.05
		rng := rand.New(rand.NewPCG(seed, 7))
		n.Homes = slices.Clone(flat.Homes)
		for i := range n.Homes {
			out := make([]float64, n.Horizon.Slots)
			for t := range out {
				out[t] = 0.5 * float64(rng.IntN(4))
			}
			n.Homes[i].OutsideLoad = out
		}
		ev, err := n.Evaluate(u.Schedule)
		if err != nil {
			t.Fatal(err)
		}
		limits := make([]float64, len(n.Windows))
		for w := range limits {
			// The room an energy home's uneven commitments leave:
			// just the start's caps in some windows, more in others.
			limits[w] = ev.Committed[w] + 0.5*float64(rng.IntN(2))
		}
		out = append(out, perWindowCase{seed: seed, n: &n, start: u.Schedule, limits: limits})
	}
	if len(out) < most {
		t.Fatalf("only %d cases", len(out))
	}
	return out
}

// TestDescendFeederPerWindow: the distributed descent with one feeder
// limit per window (`hearth run`'s compiled homes answering the energy
// homes) moves to the in-process Improve's schedule with the same
// limits (`hearth sim`'s answer), keeping every window's limit; on some
// streets the limits change the descent.
func TestDescendFeederPerWindow(t *testing.T) {
	ctx := context.Background()
	bound := 0
	cases := perWindowCases(t, 12, testhomes.Options{Homes: 3, Slots: 4, Devices: 2, Actions: 2, Mixed: true})
	for _, c := range cases {
		o := ImproveOptions{Kicks: -1, FeederLimits: c.limits}
		want, err := Improve(ctx, c.n, c.start, o)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Descend(ctx, c.n, c.start, ImproveOptions{FeederLimits: c.limits}, &sim.Runtime{}, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", c.seed, err)
		}
		if !slices.EqualFunc(got.Schedule.Homes, want.Schedule.Homes, sameActions) {
			t.Errorf("seed %d: distributed and in-process answers differ", c.seed)
		}
		ev, err := c.n.Evaluate(got.Schedule)
		if err != nil {
			t.Fatal(err)
		}
		for w, cm := range ev.Committed {
			if !devices.Fits(cm, c.limits[w]) {
				t.Errorf("seed %d: window %d commits %v, its limit %v", c.seed, w, cm, c.limits[w])
			}
		}
		free, err := Descend(ctx, c.n, c.start, ImproveOptions{}, &sim.Runtime{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got.Schedule.Homes, free.Schedule.Homes, sameActions) {
			bound++
		}
	}
	if bound == 0 {
		t.Errorf("the limits changed none of %d descents: the test shows little", len(cases))
	}
	t.Logf("%d streets, the per-window limits binding on %d", len(cases), bound)
}
