// Experiment (issue 19, item 3), not part of the shipped kernels: jp_fast
// and jp_tile over 32-bit integer keys instead of doubles. Where every
// finite cost is a whole number and the sums stay small, the host turns
// each entry v into v·D (D the eliminated variable's size), folds the
// eliminated value d into the first input that holds it (v·D + d), and
// maps Hard to HARD_IN; a row's minimum key over d is then its minimum cost
// times D plus the smallest d reaching it, one integer add per input and
// one IMNMX per value instead of double adds, a compare and three selects,
// and half the bytes per load. put_key decodes it. Compiled to a cubin by
// hand and loaded by TestI32Experiment (bench_i32_cuda_test.go).
// (Header copied from kernels.cu.)
//
// For every output row r (an assignment of the output variables, mixed
// radix, last variable fastest):
//
//   dst[r]    = min over the eliminated assignments e of c0(r) + sum_j in_j(r, e)
//   argmin[r] = the smallest e reaching that minimum (0 when every sum is +Inf)
//
// where c0(r) sums, in input order, the inputs that hold no eliminated
// variable and the sum over j runs, in input order, over the others. This is
// exactly the order of the CPU kernel's generic loops, so the two agree bit
// for bit whenever the sums are exact (whole costs), +Inf included.
//
// As in GPU-DBE (Fioretto et al., CP 2015), one thread computes one output
// row: it decodes the row index into the output variables' values, loops
// over the eliminated variables' joint domain in registers and keeps the
// minimum, so aggregation and projection are fused and no reduction between
// threads is needed. The plan (scopes as strides, dims, input addresses) is
// staged in shared memory. A launch covers rows [row0, row0+nrows) of the
// output and writes them at dst[0..nrows): the host cuts large tables into
// such chunks.
//
// Build: go generate (nvcc -fatbin, SASS for the common GPUs and PTX; see
// doc.go); the fat binary is committed.
//
// Kernel parameters are device pointers or 8-byte scalars only.

typedef long long i64;

// Plan layout, in 64-bit words (written by plan.go, which must agree):
//   [0] nIn    inputs, in slot order: the NE inputs holding an eliminated
//              variable first, then the others, each group in input order
//   [1] NE
//   [2] nOut   output variables
//   [3] nElim  eliminated variables
//   [4] esize  joint size of the eliminated variables
//   [5] words  length of the whole plan
//   [6]        k2, jp_tile's tiled output variable (others: 0)
//   [7]        reserved
//   then: addr[nIn]           device address of each input table
//         outDim[nOut]
//         elimDim[nElim]
//         ostride[nOut*nIn]   input slot j's stride for output variable k at k*nIn+j
//         estride[nElim*NE]   slot t's stride for eliminated variable k at k*NE+t
//         magic[nOut]         ceil(2^32/outDim[k]), 0 for a dim of 1 (jp_fast)
//         jp_tile only: tdim[nOut], tmagic[nOut], ostr[nOut], TB, B (see jp_tile)
#define P_NIN 0
#define P_NE 1
#define P_NOUT 2
#define P_NELIM 3
#define P_ESIZE 4
#define P_WORDS 5
#define P_HDR 8

// MAXIN bounds the inputs and MAXELIM the eliminated variables of one plan
// (per-thread offset arrays); plan.go refuses larger plans, which then run
// on the CPU.
#define MAXIN 32
#define MAXELIM 32

// load_plan copies the plan into shared memory.
__device__ __forceinline__ void load_plan(const i64 *plan, i64 *sp)
{
	i64 n = plan[P_WORDS];
	for (i64 i = threadIdx.x; i < n; i += blockDim.x)
		sp[i] = plan[i];
	__syncthreads();
}

// divmod splits q by d: 32-bit arithmetic when both fit, which is several
// times cheaper than 64-bit division on the GPU.
__device__ __forceinline__ i64 divmod(i64 *q, i64 d)
{
	i64 r;
	if ((unsigned long long)*q <= 0xffffffffull && d <= 0xffffffffll) {
		unsigned int uq = (unsigned int)*q, ud = (unsigned int)d;
		unsigned int nq = uq / ud;
		r = (i64)(uq - nq * ud);
		*q = (i64)nq;
	} else {
		i64 nq = *q / d;
		r = *q - nq * d;
		*q = nq;
	}
	return r;
}


#define KEY_HARD (1 << 26)

// I32_MINB is the tiles' blocks per multiprocessor for __launch_bounds__:
// int keys take half the registers of doubles, so more blocks fit than
// jp_tile's 2 (T = 8); the experiment compiles 2, 3 and 4.
#ifndef I32_MINB
#define I32_MINB 2
#endif

__device__ __forceinline__ void put_key(int key, int D, double *dst, int *argmin, unsigned int r)
{
	if (key >= KEY_HARD) {
		dst[r] = __longlong_as_double(0x7ff0000000000000ll);
		if (argmin)
			argmin[r] = 0;
		return;
	}
	int q = key / D, m = key - q * D;
	if (m < 0) {
		q--;
		m += D;
	}
	dst[r] = (double)q;
	if (argmin)
		argmin[r] = m;
}

// fdivmod divides *n by d through m = ceil(2^32/d) (0 for d = 1), exact
// when *n * d <= 2^32 (magic.go proves it; the host picks the kernels that
// use it only then), and returns the remainder.
__device__ __forceinline__ unsigned int fdivmod(unsigned int *n, unsigned int d, unsigned int m)
{
	unsigned int q = m ? __umulhi(*n, m) : *n;
	unsigned int r = *n - q * d;
	*n = q;
	return r;
}

// MAXR bounds the inputs without the eliminated variable in jp_fast.
#define MAXR 4

// jp_fast is jp_one with 32-bit index arithmetic: the row index and every
// offset fit 32 bits (the host checks: every input under 2^31 entries,
// rows × the largest output dim at most 2^32), each output digit costs a
// multiply-high instead of a division (the magic numbers follow the plan:
// magic[k] for output variable k), and the offsets of the inputs without
// the eliminated variable (at most MAXR) stay in registers: their loops
// are unrolled to MAXR with a guard, so no array goes to local memory.
// With EXACT the eliminated variable is in exactly MAXE inputs; without,
// in the plan's NE <= MAXE, the loops guarded in the same way. The sums
// run in the same order as jp_one's, so results are the same.
template <int MAXE, bool EXACT>
__device__ void jp_fast_i32(const i64 *sp, double *dst, int *argmin, i64 row0, i64 nrows)
{
	typedef unsigned int u32;
	const int nIn = (int)sp[P_NIN], nOut = (int)sp[P_NOUT];
	const int ne = EXACT ? MAXE : (int)sp[P_NE];
	const int nR = nIn - ne;
	const int *const *addr = (const int *const *)(sp + P_HDR);
	const i64 *outDim = sp + P_HDR + nIn;
	const u32 D = (u32)outDim[nOut]; // elimDim[0]
	const i64 *ost = outDim + nOut + 1;
	const i64 *est = ost + (i64)nOut * nIn;
	const i64 *magic = est + ne;
	const int *a[MAXE];
	u32 ls[MAXE];
#pragma unroll
	for (int j = 0; j < MAXE; j++) {
		a[j] = j < ne ? addr[j] : 0;
		ls[j] = j < ne ? (u32)est[j] : 0;
	}
	const int *ra[MAXR];
#pragma unroll
	for (int j = 0; j < MAXR; j++)
		ra[j] = j < nR ? addr[ne + j] : 0;
	const i64 step = (i64)gridDim.x * blockDim.x;
	for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t < nrows; t += step) {
		u32 o[MAXE], ro[MAXR];
#pragma unroll
		for (int j = 0; j < MAXE; j++)
			o[j] = 0;
#pragma unroll
		for (int j = 0; j < MAXR; j++)
			ro[j] = 0;
		u32 q = (u32)(row0 + t);
		for (int k = nOut - 1; k >= 0; k--) {
			u32 d = fdivmod(&q, (u32)outDim[k], (u32)magic[k]);
			const i64 *s = ost + k * nIn;
#pragma unroll
			for (int j = 0; j < MAXE; j++)
				if (j < ne)
					o[j] += d * (u32)s[j];
#pragma unroll
			for (int j = 0; j < MAXR; j++)
				if (j < nR)
					ro[j] += d * (u32)s[ne + j];
		}
		int c0 = 0;
#pragma unroll
		for (int j = 0; j < MAXR; j++)
			if (j < nR)
				c0 += ra[j][ro[j]];
		int best = 0x7fffffff;
		// Unrolled so that the loads of several values are in flight at
		// once: the loop is bound by their latency, not by bandwidth.
#pragma unroll 4
		for (u32 d = 0; d < D; d++) {
			int s = c0;
#pragma unroll
			for (int j = 0; j < MAXE; j++)
				if (j < ne)
					s += a[j][o[j] + d * ls[j]];
			best = min(best, s);
		}
		put_key(best, (int)D, dst, argmin, (u32)t);
	}
}

template <int MAXE, int T>
__device__ void jp_tile_i32(const i64 *sp, double *dst, int *argmin, i64 row0, i64 nrows)
{
	typedef unsigned int u32;
	const int nIn = (int)sp[P_NIN], nOut = (int)sp[P_NOUT];
	const int ne = MAXE;
	const int nR = nIn - ne;
	const int *const *addr = (const int *const *)(sp + P_HDR);
	const i64 *outDim = sp + P_HDR + nIn;
	const u32 D = (u32)outDim[nOut]; // elimDim[0]
	const i64 *ost = outDim + nOut + 1;
	const i64 *est = ost + (i64)nOut * nIn;
	const i64 *magic = est + ne;
	const i64 *tdim = magic + nOut;
	const i64 *tmag = tdim + nOut;
	const i64 *ostr = tmag + nOut;
	const u32 TB = (u32)ostr[nOut], B = (u32)ostr[nOut + 1];
	const int k2 = (int)sp[6];
	const u32 dim2 = (u32)outDim[k2], ostr2 = (u32)ostr[k2];
	const int *a[MAXE];
	u32 ls[MAXE], s2[MAXE];
#pragma unroll
	for (int j = 0; j < MAXE; j++) {
		a[j] = addr[j];
		ls[j] = (u32)est[j];
		s2[j] = (u32)ost[k2 * nIn + j];
	}
	const int *ra[MAXR];
	u32 rs2[MAXR];
#pragma unroll
	for (int j = 0; j < MAXR; j++) {
		ra[j] = j < nR ? addr[ne + j] : 0;
		rs2[j] = j < nR ? (u32)ost[k2 * nIn + ne + j] : 0;
	}
	const u32 tile0 = (u32)(row0 / B) * TB;
	const i64 ntiles = (nrows + B - 1) / B * TB;
	const i64 step = (i64)gridDim.x * blockDim.x;
	for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t < ntiles; t += step) {
		u32 o[MAXE], ro[MAXR];
#pragma unroll
		for (int j = 0; j < MAXE; j++)
			o[j] = 0;
#pragma unroll
		for (int j = 0; j < MAXR; j++)
			ro[j] = 0;
		u32 q = tile0 + (u32)t, row = 0, x2 = 0;
		for (int k = nOut - 1; k >= 0; k--) {
			u32 d = fdivmod(&q, (u32)tdim[k], (u32)tmag[k]);
			if (k == k2) {
				d *= T;
				x2 = d;
			}
			const i64 *s = ost + k * nIn;
#pragma unroll
			for (int j = 0; j < MAXE; j++)
				o[j] += d * (u32)s[j];
#pragma unroll
			for (int j = 0; j < MAXR; j++)
				if (j < nR)
					ro[j] += d * (u32)s[ne + j];
			row += d * (u32)ostr[k];
		}
		const u32 n2 = min((u32)T, dim2 - x2);
		// c[k]: the sum of the inputs without the eliminated variable,
		// for row x2+k.
		int c[T];
#pragma unroll
		for (int k = 0; k < T; k++)
			c[k] = 0;
#pragma unroll
		for (int j = 0; j < MAXR; j++)
			if (j < nR) {
#pragma unroll
				for (int k = 0; k < T; k++)
					c[k] += ra[j][ro[j] + min((u32)k, n2 - 1) * rs2[j]];
			}
		int best[T];
#pragma unroll
		for (int k = 0; k < T; k++)
			best[k] = 0x7fffffff;
		// The clamped tile rows, and each input's entries at the current
		// eliminated value (pointers stepped by its stride), so that the
		// loop over the values adds no index arithmetic of its own.
		u32 kk[T];
#pragma unroll
		for (int k = 0; k < T; k++)
			kk[k] = min((u32)k, n2 - 1);
		const int *p[MAXE];
#pragma unroll
		for (int j = 0; j < MAXE; j++)
			p[j] = a[j] + o[j];
		for (u32 d = 0; d < D; d++) {
			int s[T];
#pragma unroll
			for (int k = 0; k < T; k++)
				s[k] = c[k];
#pragma unroll
			for (int j = 0; j < MAXE; j++) {
				if (s2[j]) {
#pragma unroll
					for (int k = 0; k < T; k++)
						s[k] += p[j][kk[k] * s2[j]];
				} else {
					const int v = p[j][0];
#pragma unroll
					for (int k = 0; k < T; k++)
						s[k] += v;
				}
				p[j] += ls[j];
			}
#pragma unroll
			for (int k = 0; k < T; k++)
				best[k] = min(best[k], s[k]);
		}
		const u32 base = row - (u32)row0;
#pragma unroll
		for (int k = 0; k < T; k++)
			if ((u32)k < n2) {
				const u32 r = base + (u32)k * ostr2;
				put_key(best[k], (int)D, dst, argmin, r);
			}
	}
}


template <int MAXE, int T>
__device__ void jp_tile_i32u(const i64 *sp, double *dst, int *argmin, i64 row0, i64 nrows)
{
	typedef unsigned int u32;
	const int nIn = (int)sp[P_NIN], nOut = (int)sp[P_NOUT];
	const int ne = MAXE;
	const int nR = nIn - ne;
	const int *const *addr = (const int *const *)(sp + P_HDR);
	const i64 *outDim = sp + P_HDR + nIn;
	const u32 D = (u32)outDim[nOut]; // elimDim[0]
	const i64 *ost = outDim + nOut + 1;
	const i64 *est = ost + (i64)nOut * nIn;
	const i64 *magic = est + ne;
	const i64 *tdim = magic + nOut;
	const i64 *tmag = tdim + nOut;
	const i64 *ostr = tmag + nOut;
	const u32 TB = (u32)ostr[nOut], B = (u32)ostr[nOut + 1];
	const int k2 = (int)sp[6];
	const u32 dim2 = (u32)outDim[k2], ostr2 = (u32)ostr[k2];
	const int *a[MAXE];
	u32 ls[MAXE], s2[MAXE];
#pragma unroll
	for (int j = 0; j < MAXE; j++) {
		a[j] = addr[j];
		ls[j] = (u32)est[j];
		s2[j] = (u32)ost[k2 * nIn + j];
	}
	const int *ra[MAXR];
	u32 rs2[MAXR];
#pragma unroll
	for (int j = 0; j < MAXR; j++) {
		ra[j] = j < nR ? addr[ne + j] : 0;
		rs2[j] = j < nR ? (u32)ost[k2 * nIn + ne + j] : 0;
	}
	const u32 tile0 = (u32)(row0 / B) * TB;
	const i64 ntiles = (nrows + B - 1) / B * TB;
	const i64 step = (i64)gridDim.x * blockDim.x;
	for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t < ntiles; t += step) {
		u32 o[MAXE], ro[MAXR];
#pragma unroll
		for (int j = 0; j < MAXE; j++)
			o[j] = 0;
#pragma unroll
		for (int j = 0; j < MAXR; j++)
			ro[j] = 0;
		u32 q = tile0 + (u32)t, row = 0, x2 = 0;
		for (int k = nOut - 1; k >= 0; k--) {
			u32 d = fdivmod(&q, (u32)tdim[k], (u32)tmag[k]);
			if (k == k2) {
				d *= T;
				x2 = d;
			}
			const i64 *s = ost + k * nIn;
#pragma unroll
			for (int j = 0; j < MAXE; j++)
				o[j] += d * (u32)s[j];
#pragma unroll
			for (int j = 0; j < MAXR; j++)
				if (j < nR)
					ro[j] += d * (u32)s[ne + j];
			row += d * (u32)ostr[k];
		}
		const u32 n2 = min((u32)T, dim2 - x2);
		// c[k]: the sum of the inputs without the eliminated variable,
		// for row x2+k.
		int c[T];
#pragma unroll
		for (int k = 0; k < T; k++)
			c[k] = 0;
#pragma unroll
		for (int j = 0; j < MAXR; j++)
			if (j < nR) {
#pragma unroll
				for (int k = 0; k < T; k++)
					c[k] += ra[j][ro[j] + min((u32)k, n2 - 1) * rs2[j]];
			}
		int best[T];
#pragma unroll
		for (int k = 0; k < T; k++)
			best[k] = 0x7fffffff;
		// Unit stride for the eliminated variable in every input that
		// holds it (the host checks): one pointer per input and tile row,
		// the loop over the values unrolled, so that the loads take their
		// offsets as immediates and the pointers step once per 4 values.
		const int *ptr[MAXE][T];
#pragma unroll
		for (int j = 0; j < MAXE; j++)
#pragma unroll
			for (int k = 0; k < T; k++)
				ptr[j][k] = a[j] + o[j] + min((u32)k, n2 - 1) * s2[j];
		u32 d = 0;
		for (; d + 4 <= D; d += 4) {
#pragma unroll
			for (int u = 0; u < 4; u++) {
				int s[T];
#pragma unroll
				for (int k = 0; k < T; k++)
					s[k] = c[k];
#pragma unroll
				for (int j = 0; j < MAXE; j++) {
					if (s2[j]) {
#pragma unroll
						for (int k = 0; k < T; k++)
							s[k] += ptr[j][k][u];
					} else {
						const int v = ptr[j][0][u];
#pragma unroll
						for (int k = 0; k < T; k++)
							s[k] += v;
					}
				}
#pragma unroll
				for (int k = 0; k < T; k++)
					best[k] = min(best[k], s[k]);
			}
#pragma unroll
			for (int j = 0; j < MAXE; j++)
#pragma unroll
				for (int k = 0; k < T; k++)
					ptr[j][k] += 4;
		}
		for (; d < D; d++) {
			int s[T];
#pragma unroll
			for (int k = 0; k < T; k++)
				s[k] = c[k];
#pragma unroll
			for (int j = 0; j < MAXE; j++) {
#pragma unroll
				for (int k = 0; k < T; k++)
					s[k] += ptr[j][k][0];
#pragma unroll
				for (int k = 0; k < T; k++)
					ptr[j][k]++;
			}
#pragma unroll
			for (int k = 0; k < T; k++)
				best[k] = min(best[k], s[k]);
		}
		const u32 base = row - (u32)row0;
#pragma unroll
		for (int k = 0; k < T; k++)
			if ((u32)k < n2) {
				const u32 r = base + (u32)k * ostr2;
				put_key(best[k], (int)D, dst, argmin, r);
			}
	}
}


#define I32_FAST(N)                                                                                       \
	extern "C" __global__ void i32_jp_fast##N##_k(const i64 *plan, double *dst, int *argmin, i64 row0, i64 nrows) \
	{                                                                                                \
		extern __shared__ i64 sp[];                                                                  \
		load_plan(plan, sp);                                                                         \
		jp_fast_i32<N, true>(sp, dst, argmin, row0, nrows);                                          \
	}
I32_FAST(1)
I32_FAST(2)
I32_FAST(3)
I32_FAST(4)

#define I32_TILE(N, T)                                                                                       \
	extern "C" __global__ void __launch_bounds__(256, I32_MINB) i32_jp_tile##N##_##T##_k(const i64 *plan, double *dst, int *argmin, i64 row0, i64 nrows) \
	{                                                                                                           \
		extern __shared__ i64 sp[];                                                                             \
		load_plan(plan, sp);                                                                                    \
		jp_tile_i32<N, T>(sp, dst, argmin, row0, nrows);                                                        \
	}
I32_TILE(1, 4)
I32_TILE(2, 4)
I32_TILE(3, 4)
I32_TILE(4, 4)
I32_TILE(1, 8)
I32_TILE(2, 8)
I32_TILE(3, 8)
I32_TILE(4, 8)

#define I32U_TILE(N, T)                                                                                       \
	extern "C" __global__ void __launch_bounds__(256, I32_MINB) i32u_jp_tile##N##_##T##_k(const i64 *plan, double *dst, int *argmin, i64 row0, i64 nrows) \
	{                                                                                                           \
		extern __shared__ i64 sp[];                                                                             \
		load_plan(plan, sp);                                                                                    \
		jp_tile_i32u<N, T>(sp, dst, argmin, row0, nrows);                                                       \
	}
I32U_TILE(1, 4)
I32U_TILE(2, 4)
I32U_TILE(3, 4)
I32U_TILE(4, 4)
I32U_TILE(1, 8)
I32U_TILE(2, 8)
I32U_TILE(3, 8)
I32U_TILE(4, 8)
