package devices_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
)

// TestMeterCurtailment checks Neighbourhood.Meter's curtailment against
// brute force: on random slots (two-way prices, some negative, soft or
// hard limits, permissions), no curtailment on a fine grid of the
// allowed range [0, min(PV, feed-in)] costs less than the one Meter
// picks, and Meter's figures are those of its curtailment.
func TestMeterCurtailment(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 17))
	curtailed := 0
	for i := range 20000 {
		imp := 0.05 + 0.5*rng.Float64()
		exp := imp*rng.Float64() - 0.2*rng.Float64()
		m := &devices.Meter{Prices: []float64{imp}, ExportPrices: []float64{exp}, Curtail: []float64{6 * rng.Float64()}, HardLimits: rng.IntN(4) == 0}
		if rng.IntN(2) == 0 {
			m.ImportLimit = 3 * rng.Float64()
		}
		if rng.IntN(2) == 0 {
			m.ExportLimit = 3 * rng.Float64()
		}
		n := &devices.Neighbourhood{Horizon: devices.Horizon{Slots: 1, SlotMinutes: 15 * (1 + rng.IntN(4))}, Prices: []float64{0.3},
			Weights: devices.Weights{Price: 0.5 + rng.Float64(), Miss: 2 * rng.Float64()}, Homes: []devices.Home{{Name: "h", Meter: m}}}
		x := 8*rng.Float64() - 6
		noImport, noExport := rng.IntN(5) == 0, rng.IntN(5) == 0
		got := n.Meter(0, 0, x, noImport, noExport)
		dt := n.Horizon.Hours()
		cost := func(c float64) float64 {
			y := x + c
			price := imp
			if y < 0 {
				price = exp
			}
			v := n.Weights.Price * price * y * dt
			if noImport && y > 1e-9 || noExport && y < -1e-9 {
				return math.Inf(1)
			}
			for _, l := range [][2]float64{{m.ImportLimit, y}, {m.ExportLimit, -y}} {
				if l[0] > 0 && l[1] > l[0]+1e-9 {
					if m.HardLimits {
						return math.Inf(1)
					}
					v += n.Weights.Miss * (l[1] - l[0]) * dt
				}
			}
			return v
		}
		most := math.Max(0, math.Min(m.Curtail[0], -x))
		if got.Curtail < 0 || got.Curtail > most+1e-12 || math.Abs(got.Draw-(x+got.Curtail)) > 1e-12 {
			t.Fatalf("case %d: x %g: curtails %g of at most %g, draws %g", i, x, got.Curtail, most, got.Draw)
		}
		mine := cost(got.Curtail)
		if got.Broken != "" {
			mine = math.Inf(1)
		} else if want := n.Weights.Price*got.Bill + n.Weights.Miss*got.Over; math.Abs(want-mine) > 1e-9 {
			t.Fatalf("case %d: Meter's figures cost %g, its curtailment %g", i, want, mine)
		}
		for k := 0; k <= 400; k++ {
			c := most * float64(k) / 400
			if v := cost(c); v < mine-1e-9 {
				t.Fatalf("case %d: x %g %+v: curtailing %g costs %g, Meter's %g (%+v)", i, x, m, c, v, mine, got)
			}
		}
		if got.Curtail > 0 {
			curtailed++
		}
	}
	if curtailed < 2000 {
		t.Fatalf("only %d slots curtail", curtailed)
	}
}
