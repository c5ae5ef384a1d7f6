package baseline

import (
	"context"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/devices/compile"
)

// TestSHMGMPastTheTableLimit: a street whose homes' per-slot tables pass
// the compiler's limit still gets an SH-MGM-style baseline, its coarse
// homes named, every schedule one that brute force finds keeps the home's
// rules.
func TestSHMGMPastTheTableLimit(t *testing.T) {
	ns := randomNeighbourhoods(t, 12)
	tests := []struct {
		maxTable   int
		wantCoarse bool // some street of the twelve has a coarse home
	}{
		{8, true},
		{16, true},
		{64, true},
		{1 << 20, false},
	}
	for _, tc := range tests {
		coarse := false
		for _, n := range ns {
			if _, err := compile.Compile(n, compile.Options{MaxTable: tc.maxTable}); err != nil {
				continue // the street itself does not fit
			}
			out, err := SHMGM(context.Background(), n, Options{Workers: 2, Compile: compile.Options{MaxTable: tc.maxTable}})
			if err != nil {
				t.Fatalf("maxTable %d, %s: %v", tc.maxTable, n.Name, err)
			}
			if len(out.Coarse) > 0 {
				coarse = true
			}
			if out.Approximate < len(out.Coarse) {
				t.Errorf("maxTable %d, %s: %d coarse homes but %d approximate", tc.maxTable, n.Name, len(out.Coarse), out.Approximate)
			}
			for hi := range n.Homes {
				ok := slices.ContainsFunc(enumerate(t, n, hi), func(sc scheduleCost) bool {
					return sameActions(sc.s, out.Schedule.Homes[hi])
				})
				if !ok {
					t.Errorf("maxTable %d, %s: home %d's schedule breaks its rules", tc.maxTable, n.Name, hi)
				}
			}
		}
		if coarse != tc.wantCoarse {
			t.Errorf("maxTable %d: coarse homes %v, want %v", tc.maxTable, coarse, tc.wantCoarse)
		}
	}
}
