package dgibbs

import (
	"math"
	"testing"

	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
)

func TestPick(t *testing.T) {
	c := func(hard int64, soft float64) localsearch.Cost { return localsearch.Cost{Hard: hard, Soft: soft} }
	// freq returns how often each index is drawn over an even grid of u.
	freq := func(costs []localsearch.Cost, tau float64) []float64 {
		const n = 100000
		f := make([]float64, len(costs))
		for i := range n {
			f[pick(costs, tau, (float64(i)+0.5)/n)]++
		}
		for i := range f {
			f[i] /= n
		}
		return f
	}
	near := func(got, want []float64) bool {
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-3 {
				return false
			}
		}
		return true
	}
	tests := []struct {
		name  string
		costs []localsearch.Cost
		tau   float64
		want  []float64
	}{
		// exp(−0) : exp(−ln 2) = 2 : 1.
		{"gibbs", []localsearch.Cost{c(0, 5), c(0, 5+math.Ln2)}, 1, []float64{2. / 3, 1. / 3}},
		// τ = 2 halves the exponent: 1 : exp(−ln 4 / 2) = 2 : 1.
		{"temperature", []localsearch.Cost{c(0, 1), c(0, 1+2*math.Ln2)}, 2, []float64{2. / 3, 1. / 3}},
		{"hard never", []localsearch.Cost{c(0, 9), c(1, 0), c(0, 9)}, 1, []float64{0.5, 0, 0.5}},
		// Every value hard: uniform over the fewest violations.
		{"all hard", []localsearch.Cost{c(2, 0), c(1, 3), c(1, 900)}, 1, []float64{0, 0.5, 0.5}},
		// Huge differences underflow to 0 without NaN.
		{"greedy", []localsearch.Cost{c(0, 1e6), c(0, 0)}, 1, []float64{0, 1}},
		{"single", []localsearch.Cost{c(0, 4)}, 1, []float64{1}},
	}
	for _, tc := range tests {
		if got := freq(tc.costs, tc.tau); !near(got, tc.want) {
			t.Errorf("%s: frequencies %v, want %v", tc.name, got, tc.want)
		}
	}
	if v := pick([]localsearch.Cost{c(0, 0), c(0, 0), c(1, 0)}, 1, math.Nextafter(1, 0)); v != 1 {
		t.Errorf("u → 1 picked %d, want the last feasible value 1", v)
	}
}
