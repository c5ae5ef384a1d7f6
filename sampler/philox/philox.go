// Package philox implements the Philox-4x32-10 counter-based random number
// generator of Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as
// easy as 1, 2, 3" (SC 2011), exactly as Random123 and cuRAND define it.
//
// A counter-based generator has no state to advance: draw number i of a
// stream is a pure function of (key, counter). hearth's samplers derive the
// counter from where a number is used (MVA row, run, step, draw index), so
// that the numbers a chain sees do not depend on which goroutine runs it or
// in which order, and a CUDA kernel can compute the very same numbers for
// the same chain. Block is the whole algorithm; the conversions below fix
// how 32-bit words become floats and small integers, and the GPU kernels
// must do the same arithmetic (in double precision) to stay bit-identical.
//
// Philox is not a cryptographic generator.
package philox

import "math/bits"

// Philox-4x32 constants (Salmon et al. 2011, Table 2; Random123's
// PHILOX_M4x32_0/1 and PHILOX_W32_0/1): the two round multipliers and the
// Weyl key increments (the golden ratio and √3 − 1 in 32-bit fixed point).
const (
	m0 = 0xD2511F53
	m1 = 0xCD9E8D57
	w0 = 0x9E3779B9
	w1 = 0xBB67AE85
)

// Rounds is the number of rounds of Philox-4x32-10, the variant Random123
// and cuRAND (curand_Philox4x32_10) use by default.
const Rounds = 10

// Block returns the Philox-4x32-10 output for counter ctr under key: four
// independent-looking 32-bit words.
func Block(ctr [4]uint32, key [2]uint32) [4]uint32 {
	return block(ctr, key, Rounds)
}

// block runs r rounds; r is a parameter only so that tests can check the
// published 7-round vectors too.
func block(ctr [4]uint32, key [2]uint32, r int) [4]uint32 {
	for i := range r {
		if i > 0 {
			key[0] += w0
			key[1] += w1
		}
		hi0, lo0 := bits.Mul32(m0, ctr[0])
		hi1, lo1 := bits.Mul32(m1, ctr[2])
		ctr = [4]uint32{hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0}
	}
	return ctr
}

// Key splits a 64-bit seed into a Philox key: the low word first.
func Key(seed uint64) [2]uint32 { return [2]uint32{uint32(seed), uint32(seed >> 32)} }

// Float64 maps a 32-bit draw to the open interval (0, 1) as
// (u + 0.5) · 2⁻³². Every result is exact in float64 (33 significant bits),
// lies strictly between 0 and 1 — so log(u) and 1/u are always finite — and
// is the midpoint of one of 2³² equal cells. CUDA code must compute it the
// same way in double: ((double)u + 0.5) * 0x1p-32.
func Float64(u uint32) float64 { return (float64(u) + 0.5) * 0x1p-32 }

// IntN maps a 32-bit draw to [0, n) by the multiply-shift (u·n) >> 32
// (Lemire 2019, without the rejection step). It needs no division and is
// exact integer arithmetic, so CUDA gets the same value with
// __umulhi(u, n). Its bias is below n/2³², negligible for domain sizes.
// n must be positive.
func IntN(u, n uint32) uint32 {
	hi, _ := bits.Mul32(u, n)
	return hi
}

// Stream reads the draws of one counter prefix: draw j of the stream with
// prefix (c0, c1, c2) is word j mod 4 of Block({c0, c1, c2, j/4}, key). It
// caches the last block, so reading draws in increasing order costs one
// Block per four draws. The zero Stream is not usable; call Reset.
type Stream struct {
	key   [2]uint32
	ctr   [4]uint32
	buf   [4]uint32
	valid bool
}

// Reset points s at the stream with counter prefix (c0, c1, c2) under key.
func (s *Stream) Reset(key [2]uint32, c0, c1, c2 uint32) {
	s.key = key
	s.ctr = [4]uint32{c0, c1, c2, 0}
	s.valid = false
}

// Uint32 returns draw j of the stream.
func (s *Stream) Uint32(j uint32) uint32 {
	if blk := j >> 2; !s.valid || s.ctr[3] != blk {
		s.ctr[3] = blk
		s.buf = Block(s.ctr, s.key)
		s.valid = true
	}
	return s.buf[j&3]
}

// Float64 returns draw j of the stream as Float64 converts it.
func (s *Stream) Float64(j uint32) float64 { return Float64(s.Uint32(j)) }
