package homecheck_test

import (
	"testing"

	"github.com/hearth-dcop/hearth/devices/homecheck"
	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/devices/internal/testhomes"
)

// TestRandomUnevenHomes solves seeded random neighbourhoods on horizons
// of uneven slots (devices.Horizon.Lengths, some actions with effects of
// their own for a length) and passes every plan through the checker,
// which replays each slot with its own length; the same plans checked as
// if every slot lasted the first's are rejected where a slot's length
// changes what the plan claims.
func TestRandomUnevenHomes(t *testing.T) {
	seeds := 600
	if testing.Short() {
		seeds = 150
	}
	solved, caught := 0, 0
	for seed := range uint64(seeds) {
		n := testhomes.Random(90000+seed, testhomes.Options{Homes: 1 + int(seed%3), Slots: 3 + int(seed%2), Devices: 2, Actions: 3, Feeder: true, Soft: seed%4 != 0, Uneven: true})
		h, ok := solve(t, n)
		if !ok {
			continue
		}
		solved++
		rep := homecheck.Check(n, homesolve.Street(h))
		if err := rep.Err(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if len(rep.Misses) != len(h.GoalsMissed) {
			t.Fatalf("seed %d: the checker finds %d missed goals, the plan %d", seed, len(rep.Misses), len(h.GoalsMissed))
		}
		even := *n
		even.Horizon.Lengths = nil
		if homecheck.Check(&even, homesolve.Street(h)).Err() != nil {
			caught++
		}
	}
	if solved < seeds/4 || caught < solved/2 {
		t.Fatalf("%d of %d solved, %d rejected when read as even slots: the generator tests too little", solved, seeds, caught)
	}
	t.Logf("%d of %d solved and checked; %d rejected when read as even slots", solved, seeds, caught)
}
