package baseline

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
)

// TestSlotPeakMatchesLevels: a home's best response with its peak term
// on the slot's actions (newSlotPeakSolver) costs what it costs with a
// level variable per slot, the tightest of one level per distinct draw
// (the formulation before it), for seeded neighbour loads — on random
// streets and on the README's example street with automatic power
// levels (dogwood, whose battery and PV feed back, with one load, to keep
// the test short; not under -race) — and the
// schedule it returns costs that under the other formulation too.
func TestSlotPeakMatchesLevels(t *testing.T) {
	streets := randomNeighbourhoods(t, 6)
	var example *devices.Neighbourhood
	if !raceEnabled {
		example = exampleStreet(t, `power_steps = "auto"`)
		streets = append(streets, example)
	}
	rng := rand.New(rand.NewPCG(17, 3))
	ctx := context.Background()
	for _, n := range streets {
		if n.Weights.Peak == 0 || len(coordinated(n)) == 0 {
			continue
		}
		for hi := range n.Homes {
			if n == example && n.Homes[hi].Name != "dogwood" {
				continue
			}
			slot, err := newHomeSolver(n, n.Homes[hi], true, &Options{})
			if err != nil {
				t.Fatalf("%s home %d: %v", n.Name, hi, err)
			}
			level, err := newHomeSolver(n, n.Homes[hi], true, &Options{levelPeak: true})
			if err != nil {
				t.Fatalf("%s home %d: %v", n.Name, hi, err)
			}
			if slot.base == nil || level.base != nil || level.coarse {
				t.Fatalf("%s home %d: want one solver of each formulation, exact", n.Name, hi)
			}
			for k := range 3 {
				if n == example && k != 1 {
					continue
				}
				N := make([]float64, n.Horizon.Slots)
				if k > 0 {
					for t := range N {
						N[t] = 6*rng.Float64() - 1 // negative: neighbours feeding back
					}
				}
				slot.setOutside(N)
				level.setOutside(N)
				a, got, err := slot.solve(ctx)
				if err != nil {
					t.Fatalf("%s home %d: %v", n.Name, hi, err)
				}
				_, want, err := level.solve(ctx)
				if err != nil {
					t.Fatalf("%s home %d: %v", n.Name, hi, err)
				}
				if !near(got, want) {
					t.Errorf("%s home %d, loads %d: optimum %.9g on the slots' actions, %.9g on levels", n.Name, hi, k, got, want)
				}
				// The schedule, its levels the tightest, under the
				// level formulation.
				hs := slot.schedule(a)
				assign, err := level.c.Encode(&devices.Schedule{Homes: []devices.HomeSchedule{hs}})
				if err != nil {
					t.Fatal(err)
				}
				for w, v := range level.c.Homes[0].Levels {
					draw := n.Homes[hi].Draw(level.slots[w], func(d int) int { return hs.Actions[d][level.slots[w]] })
					assign[v] = devices.Tightest(level.c.Homes[0].Caps[w], draw)
				}
				if c, err := level.eval(assign); err != nil || !near(c, want) {
					t.Errorf("%s home %d, loads %d: its schedule costs %.9g on levels (%v), want %.9g", n.Name, hi, k, c, err, want)
				}
			}
		}
	}
}
