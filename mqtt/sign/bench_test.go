package sign

import (
	"strconv"
	"testing"
)

// BenchmarkSeal and BenchmarkOpen measure a signature on a small envelope
// (a VALUE message) and on a 256 KiB fragment (a UTIL table's), the
// runtime's two ends.
func BenchmarkSeal(b *testing.B) {
	s := seeded(b, "alder", 1)
	for _, n := range []int{64, 256 << 10} {
		content := make([]byte, n)
		b.Run(size(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				s.Seal("hearth/r1/inbox/birch/alder", content)
			}
		})
	}
}

// BenchmarkOpen opens messages never opened before (a keyring remembers
// what it has checked; BenchmarkOpenAgain measures that).
func BenchmarkOpen(b *testing.B) {
	s := seeded(b, "alder", 1)
	ring := NewKeyring()
	if err := ring.AddSigner(s); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{64, 256 << 10} {
		b.Run(size(n), func(b *testing.B) {
			sealed := make([][]byte, b.N)
			for i := range sealed {
				sealed[i] = s.Seal("hearth/r1/inbox/birch/alder", make([]byte, n))
			}
			b.SetBytes(int64(n))
			b.ResetTimer()
			for i := range b.N {
				if _, err := ring.Open("hearth/r1/inbox/birch/alder", sealed[i], nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOpenAgain opens one status again and again, as the agents of
// one process do with every status.
func BenchmarkOpenAgain(b *testing.B) {
	s := seeded(b, "alder", 1)
	ring := NewKeyring()
	if err := ring.AddSigner(s); err != nil {
		b.Fatal(err)
	}
	sealed := s.Seal("hearth/r1/status/alder", []byte(`{"v":2,"agent":"alder","state":"running"}`))
	for b.Loop() {
		if _, err := ring.Open("hearth/r1/status/alder", sealed, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func size(n int) string {
	if n >= 1<<10 {
		return "KiB=" + strconv.Itoa(n>>10)
	}
	return "B=" + strconv.Itoa(n)
}
