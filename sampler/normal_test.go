package sampler

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hearth-dcop/hearth/internal/samplertest"
)

// TestNormalStep checks the tabulated normal proposal three ways: its
// probabilities sum to 1, the inverse-CDF sampler reproduces them on a
// fine grid of uniforms, and they match an independent simulation that
// rounds and clamps Gaussian draws.
func TestNormalStep(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, d := range []int{2, 3, 5, 12, 40} {
		for _, sigma := range []float64{math.Sqrt(math.Sqrt(float64(d))), 0.7, 3} {
			s := newNormalStep(d, sigma)
			for x := range d {
				q := make([]float64, d)
				sum := 0.0
				for y := range d {
					q[y] = math.Exp(s.logQ(x, y))
					sum += q[y]
				}
				if math.Abs(sum-1) > 1e-12 {
					t.Fatalf("d=%d σ=%.3f x=%d: probabilities sum to %v", d, sigma, x, sum)
				}

				// Grid of uniforms: the share of each value is its
				// probability up to the grid's resolution.
				const grid = 1 << 14
				hits := make([]float64, d)
				for j := range grid {
					hits[s.sample(x, (float64(j)+0.5)/grid)]++
				}
				for y := range d {
					if got := hits[y] / grid; math.Abs(got-q[y]) > 1.0/grid {
						t.Fatalf("d=%d σ=%.3f x=%d y=%d: sampler gives %v, table %v", d, sigma, x, y, got, q[y])
					}
				}

				// Simulation: clamp(x + round(σ·N(0,1))).
				if x%3 != 0 {
					continue
				}
				const n = 20000
				counts := make([]int, d)
				for range n {
					y := x + int(math.Round(sigma*r.NormFloat64()))
					counts[min(max(y, 0), d-1)]++
				}
				// Pool values of tiny probability into their neighbour
				// so that every expected count is at least 5.
				chi, df := samplertest.ChiSquare(pool(counts, q, 5.0/n))
				if lim := samplertest.ChiLimit(max(df, 1)); chi > lim {
					t.Fatalf("d=%d σ=%.3f x=%d: simulated rounding and clamping differs: χ² = %.1f > %.1f", d, sigma, x, chi, lim)
				}
			}
		}
	}
}

// pool merges cells whose probability is below minP into the next cell
// (the last into the previous), returning the pooled counts and
// probabilities.
func pool(counts []int, p []float64, minP float64) ([]int, []float64) {
	var c []int
	var q []float64
	accC, accP := 0, 0.0
	for i := range p {
		accC += counts[i]
		accP += p[i]
		if accP >= minP {
			c, q = append(c, accC), append(q, accP)
			accC, accP = 0, 0
		}
	}
	if accP > 0 || accC > 0 {
		if len(q) == 0 {
			return []int{accC}, []float64{accP}
		}
		c[len(c)-1] += accC
		q[len(q)-1] += accP
	}
	return c, q
}

// TestNormalStepAsymmetry pins the fact the Hastings correction exists
// for: clamping makes the proposal asymmetric at the ends of a domain.
func TestNormalStepAsymmetry(t *testing.T) {
	d := 12
	sigma := math.Sqrt(math.Sqrt(float64(d)))
	s := newNormalStep(d, sigma)
	stayEnd := math.Exp(s.logQ(0, 0))
	stayIn := math.Exp(s.logQ(5, 5))
	if want := phi(0.5 / sigma); math.Abs(stayEnd-want) > 1e-15 {
		t.Fatalf("q(0 → 0) = %v, want Φ(½/σ) = %v", stayEnd, want)
	}
	if want := 2*phi(0.5/sigma) - 1; math.Abs(stayIn-want) > 1e-15 {
		t.Fatalf("q(5 → 5) = %v, want 2Φ(½/σ) − 1 = %v", stayIn, want)
	}
	// Symmetric away from the ends, not at them.
	if a, b := s.logQ(3, 6), s.logQ(6, 3); a != b {
		t.Fatalf("q(3 → 6) = %v ≠ q(6 → 3) = %v", a, b)
	}
	if a, b := s.logQ(0, 3), s.logQ(3, 0); a >= b {
		t.Fatalf("q(0 → 3) = %v should be below q(3 → 0) = %v (clamped mass)", math.Exp(a), math.Exp(b))
	}
}
