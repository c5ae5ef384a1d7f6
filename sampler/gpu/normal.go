package gpu

import "math"

// normalStep is sampler's table of the normal proposal on a domain of d
// values (sampler/normal.go, which the kernels must match bit for bit):
// from value x the proposal is clamp(x + round(σ·N(0, 1)), 0, d−1), drawn
// by inverse CDF from one uniform. Package sampler keeps its copy
// unexported; this one computes the same float64s the same way, and the
// CPU/GPU agreement tests (normal proposals included) check that they do.
type normalStep struct {
	d int
	// g[k + d − 1] = G(k) = Φ((k + ½)/σ) for k = −(d−1) .. d−2.
	g []float64
	// logP[k + d − 1] = log(G(k) − G(k−1)) for k = −(d−1) .. d−1.
	logP []float64
	// logLow[x] = log q(x → 0); logHigh[x] = log q(x → d−1).
	logLow, logHigh []float64
}

// phi is the standard normal CDF.
func phi(t float64) float64 { return 0.5 * math.Erfc(-t/math.Sqrt2) }

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
		a := -math.Abs(float64(k))
		s.logP[k+o] = math.Log(phi((a+0.5)/sigma) - phi((a-0.5)/sigma))
	}
	for x := range d {
		s.logLow[x] = math.Log(phi((float64(-x) + 0.5) / sigma))
		s.logHigh[x] = math.Log(phi(-(float64(d-2-x) + 0.5) / sigma))
	}
	return s
}

// flat returns the tables as the kernels read them: g (2d−2 entries),
// logP (2d−1), logLow (d), logHigh (d).
func (s *normalStep) flat() []float64 {
	out := make([]float64, 0, 6*s.d-3)
	out = append(out, s.g...)
	out = append(out, s.logP...)
	out = append(out, s.logLow...)
	return append(out, s.logHigh...)
}
