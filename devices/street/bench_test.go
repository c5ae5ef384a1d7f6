package street_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/hearth-dcop/hearth/devices/street"
)

// benchStreet plans a seeded street of homes energy homes over T hourly
// slots alone and, with coordinate, coordinates it.
func benchStreet(b *testing.B, homes, T int, coordinate, even bool) {
	pk := peakOver(0.02, T)
	hs := genStreet(9, homes, T)
	for b.Loop() {
		ms := make([]*street.Member, len(hs))
		for i, h := range hs {
			ms[i] = &street.Member{Home: h}
		}
		if err := street.PlanAlone(context.Background(), ms, street.Options{}); err != nil {
			b.Fatal(err)
		}
		if coordinate {
			if _, err := street.Coordinate(context.Background(), ms, nil, pk, street.Options{EvenBands: even}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkStreet: planning ten energy homes over a day of 24 and 96
// slots alone (the baseline), coordinated, and coordinated with even
// bands, in one run so that the ratios are on one machine:
// go test -bench Street -run XXX -count 5.
func BenchmarkStreet(b *testing.B) {
	for _, T := range []int{24, 96} {
		b.Run("alone/T="+itoa(T), func(b *testing.B) { benchStreet(b, 10, T, false, false) })
		b.Run("coordinated/T="+itoa(T), func(b *testing.B) { benchStreet(b, 10, T, true, false) })
		b.Run("even-bands/T="+itoa(T), func(b *testing.B) { benchStreet(b, 10, T, true, true) })
	}
}

func itoa(v int) string { return strconv.Itoa(v) }
