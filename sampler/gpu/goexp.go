package gpu

import (
	"math"
	"sync"
)

// The samplers' only transcendental function is exp (Gibbs weights, MH
// acceptance), and a draw can flip when the GPU's exp and the CPU's
// math.Exp differ in the last bit. To run the very same chains, the
// kernels compute exp the way math.Exp does on the host: on amd64 that is
// Go's assembly (src/math/exp_amd64.s, after Shibata's SLEEF), with fused
// multiply-adds when the processor has AVX and FMA and plain SSE2
// arithmetic otherwise. goExpAMD64 transcribes both paths operation by
// operation (math.FMA where the assembly fuses), and detectExp checks at
// run time which one math.Exp is, so that the kernels use that one. On
// other hosts (arm64 has its own assembly, others Go's exp.go) neither
// matches, and the kernels fall back to CUDA's exp: then a chain can
// differ from the CPU's after a last-bit difference flips a draw.

// Constants of exp_amd64.s, as its assembler reads them.
const (
	amd64Log2e    = 1.4426950408889634073599246810018920
	amd64Ln2U     = 0.69314718055966295651160180568695068359375
	amd64Ln2L     = 0.28235290563031577122588448175013436025525412068e-12
	amd64Overflow = 7.09782712893384e+02
)

// amd64Taylor holds the Taylor coefficients of exp_amd64.s's exprodata
// in the order the evaluation uses them: 1/8!, 1/7!, … 1/3!, 1/2, 1.
var amd64Taylor = [8]float64{
	2.4801587301587301587e-5, 1.9841269841269841270e-4, 1.3888888888888888889e-3,
	8.3333333333333333333e-3, 4.1666666666666666667e-2, 1.6666666666666666667e-1,
	0.5, 1.0,
}

// cvtsd2sl is the x86 conversion CVTSD2SL under the default rounding
// mode: to the nearest int32, ties to even, 0x80000000 when out of range.
func cvtsd2sl(t float64) int32 {
	r := math.RoundToEven(t)
	if !(r >= math.MinInt32 && r <= math.MaxInt32) {
		return math.MinInt32
	}
	return int32(r)
}

// goExpAMD64 is math.Exp as Go's amd64 assembly computes it, with (fma)
// or without fused multiply-adds. Explicit float64 conversions keep Go
// from fusing what the assembly rounds separately.
func goExpAMD64(x float64, fma bool) float64 {
	b := math.Float64bits(x)
	if b&^(1<<63) >= 0x7ff0000000000000 {
		if b == 0xfff0000000000000 {
			return 0 // −Inf
		}
		return x // NaN or +Inf
	}
	if x > amd64Overflow {
		return math.Inf(1)
	}
	k := cvtsd2sl(amd64Log2e * x)
	fk := float64(k)
	var r float64
	if fma {
		r = math.FMA(-fk, amd64Ln2U, x)
		r = math.FMA(-fk, amd64Ln2L, r)
	} else {
		r = x - float64(amd64Ln2U*fk)
		r = r - float64(amd64Ln2L*fk)
	}
	r *= 0.0625
	p := amd64Taylor[0]
	for _, c := range amd64Taylor[1:] {
		if fma {
			p = math.FMA(p, r, c)
		} else {
			p = float64(p*r) + c
		}
	}
	r *= p
	if fma {
		for range 3 {
			r *= r + 2
		}
		r = math.FMA(r, r+2, 1)
	} else {
		for range 4 {
			r *= r + 2
		}
		r += 1
	}
	bx := k + 0x3ff // 32-bit, as ADDL; k ≥ MinInt32 cannot wrap
	if bx <= 0 {
		if bx < -52 {
			return 0
		}
		bx += 0x3fe
		r *= math.Float64frombits(uint64(bx) << 52)
		bx = 1
	} else if bx >= 0x7ff {
		return math.Inf(1)
	}
	return r * math.Float64frombits(uint64(bx)<<52)
}

// expProbes returns arguments that exercise exp over the range the
// samplers use (Gibbs weights and MH acceptance: (−746, 0]) and beyond:
// a deterministic sweep plus the edges of every branch.
func expProbes() []float64 {
	xs := []float64{0, math.Copysign(0, -1), 1e-300, -1e-300, 0.5, -0.5, 1, -1,
		amd64Overflow, math.Nextafter(amd64Overflow, 0), -708, -708.5, -709, -744, -745, -745.13,
		-745.2, -746, -1000, -1e10, 700, math.Inf(1), math.Inf(-1), math.NaN()}
	// An irregular sweep: 4096 points spread over [−750, 10].
	u := uint64(0x9e3779b97f4a7c15)
	for range 4096 {
		u ^= u << 13
		u ^= u >> 7
		u ^= u << 17
		xs = append(xs, -750+760*float64(u>>11)/(1<<53))
	}
	return xs
}

// detectExp returns the exp mode whose transcription is math.Exp on
// every probe, expDevice when none is.
var detectExp = sync.OnceValue(func() int {
	for _, m := range []struct {
		mode int
		fma  bool
	}{{expFMA, true}, {expNoFMA, false}} {
		same := true
		for _, x := range expProbes() {
			a, b := goExpAMD64(x, m.fma), math.Exp(x)
			if math.Float64bits(a) != math.Float64bits(b) && !(math.IsNaN(a) && math.IsNaN(b)) {
				same = false
				break
			}
		}
		if same {
			return m.mode
		}
	}
	return expDevice
})
