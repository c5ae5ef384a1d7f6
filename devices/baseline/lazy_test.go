package baseline

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/internal/testhomes"
)

// TestGainBoundHolds checks the invariant lazyMGM relies on: on seeded
// random homes, with the peak term on the draw and on level caps, the
// gain a home's exact response finds at a second neighbour load never
// exceeds gainBound's bound from the first load's gain; and the bound is
// the gain itself when the load does not change.
func TestGainBoundHolds(t *testing.T) {
	ctx := context.Background()
	checked := 0
	for seed := uint64(1); seed <= 40; seed++ {
		n := testhomes.Random(seed, testhomes.Options{Homes: 2, Slots: 5, Devices: 3, Actions: 3, Mixed: true})
		if n.Weights.Peak == 0 {
			n.Weights.Peak = 0.5
		}
		rng := rand.New(rand.NewPCG(seed, 7))
		T := n.Horizon.Slots
		for _, levels := range []bool{false, true} {
			o := Options{levelPeak: levels}
			u, err := Uncoordinated(ctx, n, o)
			if err != nil {
				continue // a home with no schedule: nothing to bound
			}
			for hi := range n.Homes {
				r, exact, err := newResponder(n, hi, &o)
				if err != nil {
					t.Fatal(err)
				}
				b, ok := r.(gainBounder)
				if !exact || !ok {
					continue
				}
				if err := r.set(u.Schedule.Homes[hi]); err != nil {
					t.Fatal(err)
				}
				load := func() []float64 {
					N := make([]float64, T)
					for t := range N {
						N[t] = 4 * rng.Float64()
					}
					return N
				}
				from := load()
				g, err := r.respond(ctx, from)
				if err != nil {
					t.Fatal(err)
				}
				if same, _ := b.gainBound(g, from, slices.Clone(from)); same < g {
					t.Errorf("seed %d home %d: bound %v at the same load below the gain %v", seed, hi, same, g)
				}
				for range 5 {
					to := load()
					bound, ok := b.gainBound(g, from, to)
					if !ok {
						t.Fatalf("seed %d home %d: no bound", seed, hi)
					}
					g2, err := r.respond(ctx, to)
					if err != nil {
						t.Fatal(err)
					}
					if g2 > bound {
						t.Errorf("seed %d home %d (levels %v): gain %v at the new load above the bound %v", seed, hi, levels, g2, bound)
					}
					checked++
					// Bound the next load from this one.
					from, g = to, g2
				}
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d bounds checked", checked)
	}
}

// TestLazySHMGMMatchesEager: on complete streets (seeded random ones and
// the published dm_7_1_2), SH-MGM with lazyMGM's bounded rounds moves the
// same homes to the same schedules in the same rounds as the eager rounds
// that re-solve every home, with at most as many solves.
func TestLazySHMGMMatchesEager(t *testing.T) {
	ctx := context.Background()
	var streets []*devices.Neighbourhood
	for seed := uint64(1); seed <= 12; seed++ {
		n := testhomes.Random(seed, testhomes.Options{Homes: 6, Slots: 5, Devices: 3, Actions: 3, Mixed: true, Soft: true})
		n.Links = nil // complete
		for hi := range n.Homes {
			for ri := range n.Homes[hi].Rules {
				n.Homes[hi].Rules[ri].Soft = true // every home has a schedule
			}
		}
		n.Weights.Peak = 0.25 + 0.25*float64(seed%3)
		streets = append(streets, n)
	}
	streets = append(streets, shdsFile(t, "dm_7_1_2"), shdsFile(t, "dm_21_1_2"))
	fewer := false
	for _, n := range streets {
		for _, levels := range []bool{false, true} {
			lazy, err := SHMGM(ctx, n, Options{levelPeak: levels})
			if err != nil {
				t.Logf("%s: %v", n.Name, err)
				continue // a home with no schedule alone
			}
			eager, err := SHMGM(ctx, n, Options{levelPeak: levels, eager: true})
			if err != nil {
				t.Fatal(err)
			}
			if lazy.Rounds != eager.Rounds || lazy.Moves != eager.Moves || lazy.Converged != eager.Converged ||
				!slices.EqualFunc(lazy.Schedule.Homes, eager.Schedule.Homes, sameActions) {
				t.Errorf("%s (levels %v): lazy rounds %d moves %d converged %v, eager %d %d %v, same schedules %v", n.Name, levels,
					lazy.Rounds, lazy.Moves, lazy.Converged, eager.Rounds, eager.Moves, eager.Converged,
					slices.EqualFunc(lazy.Schedule.Homes, eager.Schedule.Homes, sameActions))
			}
			if lazy.Solves > eager.Solves {
				t.Errorf("%s: lazy %d solves, eager %d", n.Name, lazy.Solves, eager.Solves)
			}
			fewer = fewer || lazy.Solves < eager.Solves
			t.Logf("%s (levels %v): %d rounds, %d moves; solves lazy %d, eager %d", n.Name, levels, lazy.Rounds, lazy.Moves, lazy.Solves, eager.Solves)
		}
	}
	if !fewer {
		t.Error("the bounds never saved a solve")
	}
}
