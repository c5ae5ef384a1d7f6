package envelope

import (
	"fmt"
	"testing"
	"time"
)

// roundTrip is what a large message costs on the wire path: split, encode
// every fragment, decode it, reassemble.
func roundTrip(b *testing.B, body []byte, lim Limits) {
	var ra Reassembler
	h := sample().Header
	for _, e := range Split(h, body, lim.MaxPayload) {
		enc, err := e.Encode(lim)
		if err != nil {
			b.Fatal(err)
		}
		d, err := Decode(enc, lim)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := ra.Add(Key{}, &d, true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFragmentRoundTrip reports, beside the throughput, the ratio of
// a round trip's time to that of copying the body twice (the encoder's
// and the reassembler's unavoidable copies), measured in the same run.
func BenchmarkFragmentRoundTrip(b *testing.B) {
	for _, size := range []int{64 << 10, 16 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			body := make([]byte, size)
			for i := range body {
				body[i] = byte(i * 7)
			}
			lim := Limits{}
			dst := make([]byte, size)
			twoCopies := func() {
				copy(dst, body)
				_ = append([]byte(nil), dst...)
			}
			twoCopies() // warm up
			reps := max(20, (256<<20)/size)
			start := time.Now()
			for range reps {
				twoCopies()
			}
			base := float64(time.Since(start).Nanoseconds()) / float64(reps)
			b.SetBytes(int64(size))
			for b.Loop() {
				roundTrip(b, body, lim)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/base, "x-2copies")
		})
	}
}
