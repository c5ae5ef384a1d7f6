package gpu

import (
	"math/rand/v2"
	"testing"
)

// TestFastDivmod checks the kernels' multiply-high division against Go's
// division on the edges of its range (n*d = 2^32 and just below, powers of
// two, n = 0) and on a million random pairs within it.
func TestFastDivmod(t *testing.T) {
	check := func(n, d uint32) {
		t.Helper()
		q, r := fastDivmod(n, d, magic(d))
		if q != n/d || r != n%d {
			t.Fatalf("%d / %d: got %d rem %d, want %d rem %d", n, d, q, r, n/d, n%d)
		}
	}
	for d := uint32(1); d <= 1<<16; d++ {
		limit := uint32((uint64(1) << 32) / uint64(d)) // n*d <= 2^32
		if d == 1 {
			limit = 1<<32 - 1
		}
		for _, n := range []uint32{0, 1, d - 1, d, d + 1, limit, limit - 1, limit / 2, limit / d * d, limit/d*d - 1} {
			if uint64(n)*uint64(d) <= 1<<32 {
				check(n, d)
			}
		}
	}
	r := rand.New(rand.NewPCG(7, 7))
	for range 1_000_000 {
		d := uint32(1 + r.IntN(1<<20))
		n := uint32(r.Uint64N((uint64(1)<<32)/uint64(d) + 1))
		check(n, d)
	}
}
