package gpu

// The kernels decode an output row index into the output variables'
// values with one division per variable. A 32-bit division by a divisor
// known only at run time costs some twenty instructions on a GPU; the
// fast kernels replace it by a multiply-high with a magic number the host
// computes once per plan: for n and d with n*d <= 2^32,
//
//	n / d = umulhi(n, ceil(2^32/d))   (d >= 2; d = 1 is n itself)
//
// Proof: ceil(2^32/d) = 2^32/d + e with 0 <= e < 1, so
// n*ceil(2^32/d)/2^32 = n/d + n*e/2^32, and n*e/2^32 < n/2^32 <= 1/d,
// which is too little to reach the next multiple of 1/d above n/d's
// fraction (at most (d-1)/d). The host takes the fast kernels only when
// rows × the largest output dim is at most 2^32, which bounds every n*d
// of the decoding.

// magic returns ceil(2^32/d) for d >= 2 and 0 (the kernel's mark for "no
// division") for d = 1.
func magic(d uint32) uint32 {
	if d <= 1 {
		return 0
	}
	return uint32((1<<32 + uint64(d) - 1) / uint64(d))
}

// fastDivmod is the kernels' division (kernels.cu, fdivmod) in Go: the
// quotient and remainder of n by d through m = magic(d).
func fastDivmod(n, d, m uint32) (q, r uint32) {
	if m == 0 {
		return n, 0
	}
	q = uint32((uint64(n) * uint64(m)) >> 32)
	return q, n - q*d
}
