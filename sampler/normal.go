package sampler

import (
	"math"
)

// normalStep is the law of the DMCMC paper's normal proposal on one
// variable with a domain of d values: from value x, the proposal is
// y = clamp(x + round(σ·N(0, 1)), 0, d−1).
//
// It is sampled exactly, by inverse CDF with one uniform u: with
// G(k) = Φ((k + ½)/σ) the probability that the rounded step is at most k,
// P(y ≤ v) = G(v − x) for v < d−1, so y is the smallest v < d−1 with
// u < G(v − x), or d−1 when there is none. This is the same distribution
// as drawing a Gaussian and rounding it, but it needs one uniform instead
// of a Box-Muller pair and no logarithm or cosine per draw, so the CPU and
// a GPU reading the same tables propose bit-identical moves.
//
// The proposal probability q(x → y), needed for the Hastings correction,
// is G(−x) for y = 0 (every step that lands at or below 0), 1 − G(d−2−x)
// for y = d−1, and G(y−x) − G(y−x−1) in between.
type normalStep struct {
	d int
	// g[k + d − 1] = G(k) for k = −(d−1) .. d−2.
	g []float64
	// logP[k + d − 1] = log(G(k) − G(k−1)), the step k landing inside the
	// domain, for k = −(d−1) .. d−1.
	logP []float64
	// logLow[x] = log q(x → 0); logHigh[x] = log q(x → d−1).
	logLow, logHigh []float64
}

// phi is the standard normal CDF, Φ(t) = erfc(−t/√2)/2, accurate in both
// tails.
func phi(t float64) float64 { return 0.5 * math.Erfc(-t/math.Sqrt2) }

// newNormalStep tabulates the proposal for a domain of d ≥ 2 values and a
// step of standard deviation sigma.
func newNormalStep(d int, sigma float64) *normalStep {
	s := &normalStep{
		d:       d,
		g:       make([]float64, 2*d-2),
		logP:    make([]float64, 2*d-1),
		logLow:  make([]float64, d),
		logHigh: make([]float64, d),
	}
	o := d - 1
	for k := -o; k <= d-2; k++ {
		s.g[k+o] = phi((float64(k) + 0.5) / sigma)
	}
	for k := -o; k <= o; k++ {
		// The mass of the step k, computed on the negative side where
		// both CDF values are small and their difference is accurate.
		a := -math.Abs(float64(k))
		s.logP[k+o] = math.Log(phi((a+0.5)/sigma) - phi((a-0.5)/sigma))
	}
	for x := range d {
		s.logLow[x] = math.Log(phi((float64(-x) + 0.5) / sigma))
		// 1 − G(d−2−x) = Φ(−(d−2−x+½)/σ).
		s.logHigh[x] = math.Log(phi(-(float64(d-2-x) + 0.5) / sigma))
	}
	return s
}

// sample returns the proposed value from x for the uniform u ∈ (0, 1).
func (s *normalStep) sample(x int, u float64) int {
	// Smallest v in [0, d−1) with u < G(v − x); d−1 if none.
	lo, hi := 0, s.d-1
	off := s.d - 1 - x
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if u < s.g[mid+off] {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// logQ returns log q(x → y).
func (s *normalStep) logQ(x, y int) float64 {
	switch y {
	case 0:
		return s.logLow[x]
	case s.d - 1:
		return s.logHigh[x]
	}
	return s.logP[y-x+s.d-1]
}

// NormalTables returns the normal proposal's tables for a domain of d ≥ 2
// values and a step of standard deviation sigma, flattened as the GPU
// kernels read them: g (2d−2 entries), logP (2d−1), logLow (d), logHigh
// (d). Sharing the CPU's own tables is what lets both propose bit-identical
// moves.
func NormalTables(d int, sigma float64) []float64 {
	s := newNormalStep(d, sigma)
	out := make([]float64, 0, 6*d-3)
	out = append(out, s.g...)
	out = append(out, s.logP...)
	out = append(out, s.logLow...)
	return append(out, s.logHigh...)
}
