package philox

import (
	"math"
	"testing"
)

// kat holds the Philox-4x32 lines of Random123's tests/kat_vectors
// (github.com/DEShawResearch/random123): counter (4 words), key (2 words),
// expected output (4 words), for 7 and 10 rounds.
var kat = []struct {
	rounds int
	ctr    [4]uint32
	key    [2]uint32
	want   [4]uint32
}{
	{7, [4]uint32{0, 0, 0, 0}, [2]uint32{0, 0},
		[4]uint32{0x5f6fb709, 0x0d893f64, 0x4f121f81, 0x4f730a48}},
	{7, [4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff},
		[4]uint32{0x5207ddc2, 0x45165e59, 0x4d8ee751, 0x8c52f662}},
	{7, [4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0},
		[4]uint32{0x4dfccaba, 0x190a87f0, 0xc47362ba, 0xb6b5242a}},
	{10, [4]uint32{0, 0, 0, 0}, [2]uint32{0, 0},
		[4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
	{10, [4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff},
		[4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
	{10, [4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0},
		[4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
}

func TestKnownAnswers(t *testing.T) {
	for _, c := range kat {
		if got := block(c.ctr, c.key, c.rounds); got != c.want {
			t.Errorf("philox4x32-%d(%08x, %08x) = %08x, want %08x", c.rounds, c.ctr, c.key, got, c.want)
		}
		if c.rounds == Rounds {
			if got := Block(c.ctr, c.key); got != c.want {
				t.Errorf("Block(%08x, %08x) = %08x, want %08x", c.ctr, c.key, got, c.want)
			}
		}
	}
}

func TestKey(t *testing.T) {
	if got, want := Key(0x299f31d0a4093822), [2]uint32{0xa4093822, 0x299f31d0}; got != want {
		t.Fatalf("Key = %08x, want %08x", got, want)
	}
}

func TestFloat64(t *testing.T) {
	for _, c := range []struct {
		u    uint32
		want float64
	}{
		{0, 0x1p-33},
		{1, 3 * 0x1p-33},
		{1 << 31, 0.5 + 0x1p-33},
		{math.MaxUint32, 1 - 0x1p-33},
	} {
		got := Float64(c.u)
		if got != c.want {
			t.Errorf("Float64(%#x) = %v, want %v", c.u, got, c.want)
		}
		if !(got > 0 && got < 1) || math.IsInf(math.Log(got), 0) {
			t.Errorf("Float64(%#x) = %v is not strictly inside (0, 1)", c.u, got)
		}
	}
}

func TestIntN(t *testing.T) {
	for _, n := range []uint32{1, 2, 3, 12, 1000, math.MaxUint32} {
		for _, u := range []uint32{0, 1, 1 << 31, math.MaxUint32 - 1, math.MaxUint32} {
			if got := IntN(u, n); got >= n {
				t.Errorf("IntN(%#x, %d) = %d, out of range", u, n, got)
			}
		}
		if got := IntN(math.MaxUint32, n); got != n-1 {
			t.Errorf("IntN(max, %d) = %d, want %d", n, got, n-1)
		}
	}
	// The 4096 words k·2²⁰ split into n nearly equal shares.
	const n = 3
	var hist [n]int
	for k := uint32(0); k < 1<<12; k++ {
		hist[IntN(k<<20, n)]++
	}
	if hist != [n]int{1366, 1365, 1365} {
		t.Errorf("IntN histogram %v, want [1366 1365 1365]", hist)
	}
}

func TestStream(t *testing.T) {
	key := Key(42)
	var s Stream
	s.Reset(key, 7, 8, 9)
	// Random access, with block changes in both directions.
	for _, j := range []uint32{0, 1, 5, 4, 3, 100, 2, 1<<32 - 1} {
		want := Block([4]uint32{7, 8, 9, j / 4}, key)[j%4]
		if got := s.Uint32(j); got != want {
			t.Fatalf("draw %d = %#x, want %#x", j, got, want)
		}
		if got := s.Float64(j); got != Float64(want) {
			t.Fatalf("draw %d as float = %v, want %v", j, got, Float64(want))
		}
	}
	// Reset to another prefix drops the cache.
	s.Reset(key, 7, 8, 10)
	if got, want := s.Uint32(0), Block([4]uint32{7, 8, 10, 0}, key)[0]; got != want {
		t.Fatalf("after Reset: %#x, want %#x", got, want)
	}
}

// TestUniformity is a coarse sanity check of the whole pipeline (counter →
// Block → Float64): 2¹⁶ draws into 16 bins, chi-square below the 1e-6
// quantile of 15 degrees of freedom (about 51).
func TestUniformity(t *testing.T) {
	var s Stream
	s.Reset(Key(1), 0, 0, 0)
	const n, bins = 1 << 16, 16
	var hist [bins]float64
	for j := range uint32(n) {
		hist[int(s.Float64(j)*bins)]++
	}
	chi := 0.0
	for _, h := range hist {
		d := h - n/bins
		chi += d * d / (n / bins)
	}
	if chi > 51 {
		t.Fatalf("chi-square %.1f over 16 bins: draws are not uniform", chi)
	}
}

func BenchmarkBlock(b *testing.B) {
	var x [4]uint32
	k := Key(1)
	for b.Loop() {
		x = Block(x, k)
	}
	_ = x
}
