// Join-project kernels: the GPU form of local.JoinProject.Run.
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
//   [7]        the word where jp_prod's words start (others: 0)
//   then: addr[nIn]           device address of each input table
//         outDim[nOut]
//         elimDim[nElim]
//         ostride[nOut*nIn]   input slot j's stride for output variable k at k*nIn+j
//         estride[nElim*NE]   slot t's stride for eliminated variable k at k*NE+t
//         magic[nOut]         ceil(2^32/outDim[k]), 0 for a dim of 1 (jp_fast)
//         jp_tile only: tdim[nOut], tmagic[nOut], ostr[nOut], TB, B (see jp_tile)
//         jp_prod only: split, S, side[nIn] (see jp_prod)
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

// Cost types. Every kernel also runs over 32-bit integer costs (issue
// 19): where every finite cost of a step's inputs is a whole number
// and the sums stay far inside 32 bits, the host converts the inputs on the
// device (jp_d2i_k) to int with Hard as I32_HARD, and the kernel adds and
// compares ints: half the bytes per load and integer instead of double
// arithmetic. A sum holding a Hard entry is at least I32_HARD - S, where S
// (< I32_LIMIT, checked by the host) bounds the magnitude of every finite
// sum, so a sum at or above I32_LIMIT is +Inf and every other is exact;
// a sum of n inputs stays below n * I32_HARD + I32_LIMIT, inside 32 bits
// for n up to I32_MAXIN (the host takes doubles for more inputs); the output is written as doubles, +Inf with argmin 0 for Hard, exactly
// what the double kernel writes.
#define I32_HARD (1 << 26)
#define I32_LIMIT (1 << 25)
#define I32_MAXIN 31

template <typename C> struct cost;
template <> struct cost<double> {
	__device__ static __forceinline__ double inf() { return __longlong_as_double(0x7ff0000000000000ll); }
	template <typename I>
	__device__ static __forceinline__ void put(double best, unsigned int arg, double *dst, int *argmin, I r)
	{
		dst[r] = best;
		if (argmin)
			argmin[r] = (int)arg;
	}
};
template <> struct cost<int> {
	__device__ static __forceinline__ int inf() { return 0x7fffffff; }
	template <typename I>
	__device__ static __forceinline__ void put(int best, unsigned int arg, double *dst, int *argmin, I r)
	{
		if (best >= I32_LIMIT) {
			dst[r] = __longlong_as_double(0x7ff0000000000000ll);
			arg = 0;
		} else {
			dst[r] = (double)best;
		}
		if (argmin)
			argmin[r] = (int)arg;
	}
};

// jp_generic handles any number of inputs (up to MAXIN) and eliminated
// variables (up to MAXELIM, an odometer around the loop).
template <typename C>
__device__ void jp_generic(const i64 *sp, double *dst, int *argmin, i64 row0, i64 nrows)
{
	const int nIn = (int)sp[P_NIN], NE = (int)sp[P_NE];
	const int nOut = (int)sp[P_NOUT], nElim = (int)sp[P_NELIM];
	const i64 esize = sp[P_ESIZE];
	const C *const *addr = (const C *const *)(sp + P_HDR);
	const i64 *outDim = sp + P_HDR + nIn;
	const i64 *elimDim = outDim + nOut;
	const i64 *ost = elimDim + nElim;
	const i64 *est = ost + (i64)nOut * nIn;
	const i64 step = (i64)gridDim.x * blockDim.x;
	for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t < nrows; t += step) {
		i64 off[MAXIN];
		for (int j = 0; j < nIn; j++)
			off[j] = 0;
		i64 q = row0 + t;
		for (int k = nOut - 1; k >= 0; k--) {
			i64 d = divmod(&q, outDim[k]);
			const i64 *s = ost + (i64)k * nIn;
			for (int j = 0; j < nIn; j++)
				off[j] += d * s[j];
		}
		C c0 = 0;
		for (int j = NE; j < nIn; j++)
			c0 += addr[j][off[j]];
		int edig[MAXELIM];
		for (int k = 0; k < nElim; k++)
			edig[k] = 0;
		C best = cost<C>::inf();
		i64 arg = 0;
		for (i64 e = 0; e < esize; e++) {
			C s = c0;
			for (int j = 0; j < NE; j++)
				s += addr[j][off[j]];
			if (s < best) {
				best = s;
				arg = e;
			}
			for (int k = nElim - 1; k >= 0; k--) {
				const i64 *st = est + (i64)k * NE;
				if (++edig[k] < elimDim[k]) {
					for (int j = 0; j < NE; j++)
						off[j] += st[j];
					break;
				}
				edig[k] = 0;
				for (int j = 0; j < NE; j++)
					off[j] -= st[j] * (elimDim[k] - 1);
			}
		}
		cost<C>::put(best, (unsigned int)arg, dst, argmin, t);
	}
}

// jp_one is the common bucket-elimination shape: one eliminated variable
// held by NE inputs, NE known at compile time so that their offsets and
// strides stay in registers.
template <typename C, int NE>
__device__ void jp_one(const i64 *sp, double *dst, int *argmin, i64 row0, i64 nrows)
{
	const int nIn = (int)sp[P_NIN], nOut = (int)sp[P_NOUT];
	const C *const *addr = (const C *const *)(sp + P_HDR);
	const i64 *outDim = sp + P_HDR + nIn;
	const i64 D = outDim[nOut]; // elimDim[0]
	const i64 *ost = outDim + nOut + 1;
	const i64 *est = ost + (i64)nOut * nIn;
	const C *a[NE];
	i64 ls[NE];
#pragma unroll
	for (int j = 0; j < NE; j++) {
		a[j] = addr[j];
		ls[j] = est[j];
	}
	const i64 step = (i64)gridDim.x * blockDim.x;
	for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t < nrows; t += step) {
		i64 o[NE];
		i64 ro[MAXIN - NE];
#pragma unroll
		for (int j = 0; j < NE; j++)
			o[j] = 0;
		for (int j = NE; j < nIn; j++)
			ro[j - NE] = 0;
		i64 q = row0 + t;
		for (int k = nOut - 1; k >= 0; k--) {
			i64 d = divmod(&q, outDim[k]);
			const i64 *s = ost + (i64)k * nIn;
#pragma unroll
			for (int j = 0; j < NE; j++)
				o[j] += d * s[j];
			for (int j = NE; j < nIn; j++)
				ro[j - NE] += d * s[j];
		}
		C c0 = 0;
		for (int j = NE; j < nIn; j++)
			c0 += addr[j][ro[j - NE]];
		C best = cost<C>::inf();
		i64 arg = 0;
		for (i64 d = 0; d < D; d++) {
			C s = c0;
#pragma unroll
			for (int j = 0; j < NE; j++)
				s += a[j][o[j] + d * ls[j]];
			if (s < best) {
				best = s;
				arg = d;
			}
		}
		cost<C>::put(best, (unsigned int)arg, dst, argmin, t);
	}
}

// jp_d2i_k converts n doubles at src to jp_fast's integer costs at dst and
// records in stat[0] whether any is not exact (a fraction, -0, NaN, -Inf,
// or a magnitude of I32_LIMIT or more) and in stat[1] the largest
// magnitude of a finite one.
extern "C" __global__ void jp_d2i_k(const double *src, int *dst, i64 n, unsigned long long *stat)
{
	unsigned long long bad = 0, mx = 0;
	const i64 step = (i64)gridDim.x * blockDim.x;
	for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
		double v = src[i];
		int k;
		if (v == __longlong_as_double(0x7ff0000000000000ll)) {
			k = I32_HARD;
		} else if (v == trunc(v) && fabs(v) < (double)I32_LIMIT && !(v == 0.0 && signbit(v))) {
			k = (int)v;
			mx = max(mx, (unsigned long long)abs(k));
		} else {
			k = 0;
			bad = 1;
		}
		dst[i] = k;
	}
	// One atomic per warp, not per thread: a million threads updating one
	// address would serialise for about a millisecond.
	for (int d = 16; d > 0; d /= 2) {
		bad |= __shfl_down_sync(0xffffffffu, bad, d);
		mx = max(mx, __shfl_down_sync(0xffffffffu, mx, d));
	}
	if ((threadIdx.x & 31) == 0) {
		if (bad)
			atomicOr(&stat[0], 1ull);
		if (mx)
			atomicMax(&stat[1], mx);
	}
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
template <typename C, int MAXE, bool EXACT>
__device__ void jp_fast(const i64 *sp, double *dst, int *argmin, i64 row0, i64 nrows)
{
	typedef unsigned int u32;
	const int nIn = (int)sp[P_NIN], nOut = (int)sp[P_NOUT];
	const int ne = EXACT ? MAXE : (int)sp[P_NE];
	const int nR = nIn - ne;
	const C *const *addr = (const C *const *)(sp + P_HDR);
	const i64 *outDim = sp + P_HDR + nIn;
	const u32 D = (u32)outDim[nOut]; // elimDim[0]
	const i64 *ost = outDim + nOut + 1;
	const i64 *est = ost + (i64)nOut * nIn;
	const i64 *magic = est + ne;
	const C *a[MAXE];
	u32 ls[MAXE];
#pragma unroll
	for (int j = 0; j < MAXE; j++) {
		a[j] = j < ne ? addr[j] : 0;
		ls[j] = j < ne ? (u32)est[j] : 0;
	}
	const C *ra[MAXR];
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
		C c0 = 0;
#pragma unroll
		for (int j = 0; j < MAXR; j++)
			if (j < nR)
				c0 += ra[j][ro[j]];
		C best = cost<C>::inf();
		u32 arg = 0;
		// Unrolled so that the loads of several values are in flight at
		// once: the loop is bound by their latency, not by bandwidth.
#pragma unroll 4
		for (u32 d = 0; d < D; d++) {
			C s = c0;
#pragma unroll
			for (int j = 0; j < MAXE; j++)
				if (j < ne)
					s += a[j][o[j] + d * ls[j]];
			if (s < best) {
				best = s;
				arg = d;
			}
		}
		cost<C>::put(best, arg, dst, argmin, (u32)t);
	}
}

// jp_tile is jp_fast with a register tile: each thread computes T output
// rows, the values x2, x2+1, …, x2+T-1 of one output variable k2 (the
// plan's header word 6, never the last output variable), so that an input
// that does not hold k2 is read once for the T rows instead of once per
// row. Neighbouring threads still take neighbouring values of the last
// output variable, as in jp_fast, so that their loads coalesce. In a
// bucket whose inputs split the output variables between them (a (min,+)
// product), the input that holds the last variable — read a domain apart
// by neighbouring threads, the costly gather — is read T times less; in a
// bucket with one large input, that input is swept once per T values of
// k2 instead of once per value. A tile at the end of k2's domain is
// partial: its missing rows read a valid row's entries (clamped) and
// write nothing. The thread decodes its tile index over the tile grid
// (the output dims, k2's divided by T, rounded up) with the grid's own
// magic numbers. A launch covers whole blocks of B rows (the rows of one
// assignment of the variables before k2), which the host's chunks
// respect, so every row of a tile is in the launch. The sums run in
// jp_fast's order, so the results are the same.
//
// Extra plan words after magic[nOut]: tdim[nOut] (the tile grid), tmagic[nOut],
// ostr[nOut] (the output's strides), then TB (tiles per B-block) and B.
template <typename C, int MAXE, int T>
__device__ void jp_tile(const i64 *sp, double *dst, int *argmin, i64 row0, i64 nrows)
{
	typedef unsigned int u32;
	const int nIn = (int)sp[P_NIN], nOut = (int)sp[P_NOUT];
	const int ne = MAXE;
	const int nR = nIn - ne;
	const C *const *addr = (const C *const *)(sp + P_HDR);
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
	const C *a[MAXE];
	u32 ls[MAXE], s2[MAXE];
#pragma unroll
	for (int j = 0; j < MAXE; j++) {
		a[j] = addr[j];
		ls[j] = (u32)est[j];
		s2[j] = (u32)ost[k2 * nIn + j];
	}
	const C *ra[MAXR];
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
		C c[T];
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
		C best[T];
		u32 arg[T];
#pragma unroll
		for (int k = 0; k < T; k++) {
			best[k] = cost<C>::inf();
			arg[k] = 0;
		}
		// The clamped tile rows, and each input's entries at the current
		// eliminated value (pointers stepped by its stride), so that the
		// loop over the values adds no index arithmetic of its own.
		u32 kk[T];
#pragma unroll
		for (int k = 0; k < T; k++)
			kk[k] = min((u32)k, n2 - 1);
		const C *p[MAXE];
#pragma unroll
		for (int j = 0; j < MAXE; j++)
			p[j] = a[j] + o[j];
		for (u32 d = 0; d < D; d++) {
			C s[T];
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
					const C v = p[j][0];
#pragma unroll
					for (int k = 0; k < T; k++)
						s[k] += v;
				}
				p[j] += ls[j];
			}
#pragma unroll
			for (int k = 0; k < T; k++)
				if (s[k] < best[k]) {
					best[k] = s[k];
					arg[k] = d;
				}
		}
		const u32 base = row - (u32)row0;
#pragma unroll
		for (int k = 0; k < T; k++)
			if ((u32)k < n2) {
				const u32 r = base + (u32)k * ostr2;
				cost<C>::put(best[k], arg[k], dst, argmin, r);
			}
	}
}

// jp_prod is the integer kernel of a (min,+) product: the output
// variables split at `split` into a prefix P and a suffix S (the plan's
// jp_prod words: split, S = the rows per assignment of P, side[nIn]),
// and every input holds variables of one side only (side 1: P, 2: S, 0:
// neither, counted with P). A row (p, s) is then
//
//   min over e of  A[p][e] + B[s][e],  A = the sum of the P inputs (and
//   those of neither side) at (p, e), B = the sum of the S inputs at (s, e)
//
// and both are small tables: CUBE's layout (Bistaffa et al.), where a
// thread finds its inputs from its own indices, with the inputs staged in
// shared memory. A block computes a tile of PROD_NP assignments of P by
// PROD_NS of S: it first stages A and B for the tile, the eliminated
// value outermost (As[e][p], Bs[e][s]: a warp reads one word of As for
// all its lanes and consecutive words of Bs), then each thread keeps
// PROD_TP × PROD_TS rows in registers (rows p = its warp's PROD_TP, s =
// its lane + 32k), and writes them so that a warp's stores cover
// consecutive rows. Integer costs only (cost<int>): sums are exact, so the
// order in which jp_prod adds the inputs gives the other kernels' sums.
// The argmin costs no compare: a staged entry holds the partial sum times
// 16 and, in As, the value e in the low four bits (so the eliminated
// variable has at most PROD_MAXD values), and min over the packed sums is
// the least sum with the smallest e, the CPU's tie rule. Ranges: every
// finite partial sum has a magnitude below I32_LIMIT (the host's check),
// a partial sum is clamped to I32_HARD (it then holds a Hard entry and
// every row summing it is at least I32_LIMIT, as in cost<int>), and As
// adds I32_LIMIT, so (A + B + I32_LIMIT)·16 + e lies in [0, 2^32). The
// host cuts chunks into whole assignments of P (multiples of S rows), so
// a launch covers whole assignments of P.
#define PROD_TP 8
#define PROD_TS 4
#define PROD_NP (8 * PROD_TP)
#define PROD_NS (32 * PROD_TS)
#define PROD_MAXD 16
#define PROD_MAXIN 8

extern "C" __global__ void __launch_bounds__(256, 2) i32_jp_prod_k(const i64 *plan, double *dst, int *argmin, i64 row0, i64 nrows)
{
	typedef unsigned int u32;
	extern __shared__ i64 sp[];
	load_plan(plan, sp);
	if (nrows <= 0)
		return;
	const int nIn = (int)sp[P_NIN], ne = (int)sp[P_NE], nOut = (int)sp[P_NOUT];
	const int *const *addr = (const int *const *)(sp + P_HDR);
	const i64 *outDim = sp + P_HDR + nIn;
	const u32 D = (u32)outDim[nOut]; // elimDim[0]
	const i64 *ost = outDim + nOut + 1;
	const i64 *est = ost + (i64)nOut * nIn;
	const i64 *magic = est + ne;
	const i64 *pw = sp + sp[7];
	const int split = (int)pw[0];
	const u32 S = (u32)pw[1];
	const i64 *side = pw + 2;
	u32 *As = (u32 *)(sp + ((sp[P_WORDS] + 1) & ~1ll));
	u32 *Bs = As + PROD_NP * D;
	const u32 p0 = (u32)(row0 / S), p1 = (u32)((row0 + nrows) / S);
	const u32 nst = (S + PROD_NS - 1) / PROD_NS;
	const u32 ntiles = (p1 - p0 + PROD_NP - 1) / PROD_NP * nst;
	const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
	for (u32 t = blockIdx.x; t < ntiles; t += gridDim.x) {
		const u32 pt = t / nst, st = t - pt * nst;
		const u32 pb = p0 + pt * PROD_NP, sb = st * PROD_NS;
		__syncthreads(); // the previous tile's reads of As and Bs are done
		if (threadIdx.x < PROD_NP + PROD_NS) {
			// Stage A for p = pb + threadIdx.x or B for s = sb +
			// threadIdx.x - PROD_NP (clamped: a partial tile's
			// missing rows read a valid one and are not written).
			const bool isP = threadIdx.x < PROD_NP;
			u32 q = isP ? min(pb + threadIdx.x, p1 - 1) : min(sb + threadIdx.x - PROD_NP, S - 1);
			const int k0 = isP ? 0 : split, k1 = isP ? split : nOut;
			u32 off[PROD_MAXIN];
			bool use[PROD_MAXIN];
#pragma unroll
			for (int j = 0; j < PROD_MAXIN; j++) {
				off[j] = 0;
				use[j] = j < nIn && (isP ? side[j] != 2 : side[j] == 2);
			}
			for (int k = k1 - 1; k >= k0; k--) {
				u32 d = fdivmod(&q, (u32)outDim[k], (u32)magic[k]);
#pragma unroll
				for (int j = 0; j < PROD_MAXIN; j++)
					if (j < nIn)
						off[j] += d * (u32)ost[k * nIn + j];
			}
			int c = 0;
#pragma unroll
			for (int j = 0; j < PROD_MAXIN; j++)
				if (j >= ne && use[j])
					c += addr[j][off[j]];
			u32 *to = isP ? As + threadIdx.x : Bs + (threadIdx.x - PROD_NP);
			const u32 step = isP ? PROD_NP : PROD_NS;
			for (u32 e = 0; e < D; e++) {
				int v = c;
#pragma unroll
				for (int j = 0; j < PROD_MAXIN; j++)
					if (j < ne && use[j])
						v += addr[j][off[j] + e * (u32)est[j]];
				v = min(v, I32_HARD);
				to[e * step] = isP ? (((u32)(v + I32_LIMIT)) << 4) | e : ((u32)v) << 4;
			}
		}
		__syncthreads();
		u32 key[PROD_TP][PROD_TS];
#pragma unroll
		for (int i = 0; i < PROD_TP; i++)
#pragma unroll
			for (int k = 0; k < PROD_TS; k++)
				key[i][k] = 0xffffffffu;
		const u32 *ap = As + warp * PROD_TP, *bp = Bs + lane;
#pragma unroll 2
		for (u32 e = 0; e < D; e++) {
			const uint4 a0 = *(const uint4 *)(ap + e * PROD_NP), a1 = *(const uint4 *)(ap + e * PROD_NP + 4);
			const u32 a[PROD_TP] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
			u32 b[PROD_TS];
#pragma unroll
			for (int k = 0; k < PROD_TS; k++)
				b[k] = bp[e * PROD_NS + 32 * k];
#pragma unroll
			for (int i = 0; i < PROD_TP; i++)
#pragma unroll
				for (int k = 0; k < PROD_TS; k++)
					key[i][k] = min(key[i][k], a[i] + b[k]);
		}
#pragma unroll
		for (int i = 0; i < PROD_TP; i++) {
			const u32 p = pb + warp * PROD_TP + i;
			if (p < p1) {
				const u32 base = p * S - (u32)row0;
#pragma unroll
				for (int k = 0; k < PROD_TS; k++) {
					const u32 s = sb + lane + 32 * k;
					if (s < S)
						cost<int>::put((int)(key[i][k] >> 4) - I32_LIMIT, key[i][k] & 15u, dst, argmin, base + s);
				}
			}
		}
	}
}

// jp_prodw is jp_prod for a product whose P side is small: at most
// PW_MAXP assignments of P, as in the "wide" bucket, where one input as
// large as the output holds S and the eliminated variable and a small one
// holds P (jp_prod's tile of PROD_NP assignments of P would be mostly
// empty there). Each block stages A for every assignment of P in the
// launch once (As[e][p], PW_MAXP words a value, read as uint4 by the
// whole warp at one address); each thread then takes PW_TS assignments of
// S (s = its index + 256k within the block's tile: neighbouring threads,
// neighbouring s, so that the stores coalesce), reads the S inputs' D
// values of each into registers (every load issued before the first
// compare) and keeps NP4 × 4 × PW_TS packed sums. The packing, the
// ranges and the tie rule are jp_prod's: a staged A entry holds
// ((A + I32_LIMIT) << 4) | e, a B value B << 4, and one unsigned min
// keeps the least sum with the smallest e. The S inputs are listed in
// the plan's jp_prodw words after side[nIn]: nB, the slots of the S
// inputs holding the eliminated variable (PW_MAXB), nBR, the slots of
// those that do not (PW_MAXBR). The host cuts chunks into whole
// assignments of P, so a launch covers whole assignments of P.
#define PW_MAXP 16
#define PW_TS 2
#define PW_MAXB 4
#define PW_MAXBR 2

template <int NP4>
__device__ void jp_prodw(const i64 *sp, double *dst, int *argmin, i64 row0, i64 nrows)
{
	typedef unsigned int u32;
	const int nIn = (int)sp[P_NIN], ne = (int)sp[P_NE], nOut = (int)sp[P_NOUT];
	const int *const *addr = (const int *const *)(sp + P_HDR);
	const i64 *outDim = sp + P_HDR + nIn;
	const u32 D = (u32)outDim[nOut]; // elimDim[0], at most PROD_MAXD
	const i64 *ost = outDim + nOut + 1;
	const i64 *est = ost + (i64)nOut * nIn;
	const i64 *magic = est + ne;
	const i64 *pw = sp + sp[7];
	const int split = (int)pw[0];
	const u32 S = (u32)pw[1];
	const i64 *side = pw + 2;
	const i64 *bw = side + nIn;
	const int nB = (int)bw[0], nBR = (int)bw[1 + PW_MAXB];
	u32 *As = (u32 *)(sp + ((sp[P_WORDS] + 1) & ~1ll));
	const u32 p0 = (u32)(row0 / S), np = (u32)((row0 + nrows) / S) - p0;
	if (np == 0)
		return; // uniform: before any barrier
	if (threadIdx.x < 4 * NP4) {
		// A for p = p0 + threadIdx.x (clamped: rows past the launch's
		// last assignment of P read a valid one and are not written).
		u32 q = p0 + min((u32)threadIdx.x, np - 1);
		u32 off[PROD_MAXIN];
		bool use[PROD_MAXIN];
#pragma unroll
		for (int j = 0; j < PROD_MAXIN; j++) {
			off[j] = 0;
			use[j] = j < nIn && side[j] != 2;
		}
		for (int k = split - 1; k >= 0; k--) {
			u32 d = fdivmod(&q, (u32)outDim[k], (u32)magic[k]);
#pragma unroll
			for (int j = 0; j < PROD_MAXIN; j++)
				if (j < nIn)
					off[j] += d * (u32)ost[k * nIn + j];
		}
		int c = 0;
#pragma unroll
		for (int j = 0; j < PROD_MAXIN; j++)
			if (j >= ne && use[j])
				c += addr[j][off[j]];
		for (u32 e = 0; e < D; e++) {
			int v = c;
#pragma unroll
			for (int j = 0; j < PROD_MAXIN; j++)
				if (j < ne && use[j])
					v += addr[j][off[j] + e * (u32)est[j]];
			v = min(v, I32_HARD);
			As[e * PW_MAXP + threadIdx.x] = (((u32)(v + I32_LIMIT)) << 4) | e;
		}
	}
	__syncthreads();
	// The S inputs in registers: pointers and eliminated strides.
	const int *bp[PW_MAXB], *brp[PW_MAXBR];
	int bj[PW_MAXB], brj[PW_MAXBR];
	u32 bst[PW_MAXB];
#pragma unroll
	for (int b = 0; b < PW_MAXB; b++) {
		bj[b] = b < nB ? (int)bw[1 + b] : 0;
		bp[b] = addr[bj[b]];
		bst[b] = b < nB ? (u32)est[bj[b]] : 0;
	}
#pragma unroll
	for (int b = 0; b < PW_MAXBR; b++) {
		brj[b] = b < nBR ? (int)bw[2 + PW_MAXB + b] : 0;
		brp[b] = addr[brj[b]];
	}
	const u32 NS = 256 * PW_TS;
	const u32 nst = (S + NS - 1) / NS;
	for (u32 t = blockIdx.x; t < nst; t += gridDim.x) {
		const u32 s0 = t * NS + threadIdx.x;
		// B for each of the thread's PW_TS values of S, every value of
		// the eliminated variable, shifted by 4.
		u32 bv[PW_TS][PROD_MAXD];
#pragma unroll
		for (int u = 0; u < PW_TS; u++) {
			u32 q = min(s0 + 256 * u, S - 1);
			u32 o[PW_MAXB], ro[PW_MAXBR];
#pragma unroll
			for (int b = 0; b < PW_MAXB; b++)
				o[b] = 0;
#pragma unroll
			for (int b = 0; b < PW_MAXBR; b++)
				ro[b] = 0;
			for (int k = nOut - 1; k >= split; k--) {
				u32 d = fdivmod(&q, (u32)outDim[k], (u32)magic[k]);
				const i64 *st = ost + k * nIn;
#pragma unroll
				for (int b = 0; b < PW_MAXB; b++)
					if (b < nB)
						o[b] += d * (u32)st[bj[b]];
#pragma unroll
				for (int b = 0; b < PW_MAXBR; b++)
					if (b < nBR)
						ro[b] += d * (u32)st[brj[b]];
			}
			int c = 0;
#pragma unroll
			for (int b = 0; b < PW_MAXBR; b++)
				if (b < nBR)
					c += brp[b][ro[b]];
#pragma unroll
			for (u32 e = 0; e < PROD_MAXD; e++) {
				int v = c;
#pragma unroll
				for (int b = 0; b < PW_MAXB; b++)
					if (b < nB && e < D)
						v += bp[b][o[b] + e * bst[b]];
				bv[u][e] = ((u32)min(v, I32_HARD)) << 4;
			}
		}
		u32 key[4 * NP4][PW_TS];
#pragma unroll
		for (int i = 0; i < 4 * NP4; i++)
#pragma unroll
			for (int u = 0; u < PW_TS; u++)
				key[i][u] = 0xffffffffu;
#pragma unroll
		for (u32 e = 0; e < PROD_MAXD; e++) {
			if (e < D) {
				u32 a[4 * NP4];
#pragma unroll
				for (int i = 0; i < NP4; i++) {
					const uint4 x = *(const uint4 *)(As + e * PW_MAXP + 4 * i);
					a[4 * i] = x.x;
					a[4 * i + 1] = x.y;
					a[4 * i + 2] = x.z;
					a[4 * i + 3] = x.w;
				}
#pragma unroll
				for (int i = 0; i < 4 * NP4; i++)
#pragma unroll
					for (int u = 0; u < PW_TS; u++)
						key[i][u] = min(key[i][u], a[i] + bv[u][e]);
			}
		}
#pragma unroll
		for (int i = 0; i < 4 * NP4; i++) {
			if ((u32)i < np) {
#pragma unroll
				for (int u = 0; u < PW_TS; u++) {
					const u32 s = s0 + 256 * u;
					if (s < S)
						cost<int>::put((int)(key[i][u] >> 4) - I32_LIMIT, key[i][u] & 15u, dst, argmin, (u32)i * S + s);
				}
			}
		}
	}
}

#define PW_ENTRY(N)                                                                                                          \
	extern "C" __global__ void __launch_bounds__(256, 2) i32_jp_prodw##N##_k(const i64 *plan, double *dst, int *argmin, i64 row0, i64 nrows) \
	{                                                                                                                        \
		extern __shared__ i64 sp[];                                                                                          \
		load_plan(plan, sp);                                                                                                 \
		jp_prodw<N>(sp, dst, argmin, row0, nrows);                                                                           \
	}
PW_ENTRY(1)
PW_ENTRY(2)
PW_ENTRY(3)
PW_ENTRY(4)

// The kernels' entry points. Each loads its plan into shared memory and
// runs one of the templates above for one cost type: doubles under the
// plain names, integer costs (see cost<int>) under the same names with
// i32_ in front. JP_ENTRY writes one entry point; CALL is the template
// call in parentheses (its commas would split a macro argument).
#define JP_ENTRY(NAME, BOUNDS, CALL)                                                              \
	extern "C" __global__ void BOUNDS NAME(const i64 *plan, double *dst, int *argmin, i64 row0, i64 nrows) \
	{                                                                                             \
		extern __shared__ i64 sp[];                                                               \
		load_plan(plan, sp);                                                                      \
		CALL;                                                                                     \
	}

// jp_fastn_k serves 5 to MAXE_N inputs holding the eliminated variable;
// jp_fastn16_k and jp_fastn32_k serve 9 to 16 and 17 to 32: the large
// buckets of the public SPOT5 files (10 to 23 inputs), which jp_generic
// served with its offsets in local memory and 64-bit index arithmetic.
#define MAXE_N 8

// JP_KERNELS writes every entry point for cost type T under prefix P.
// TILE8 is the blocks a multiprocessor fits at tile T = 8: integer tiles
// take half the registers of double ones, so four fit (measured on an
// H100: 1.2x faster than two at 10^9 entries).
#define JP_KERNELS(P, T, TILE8)                                                                   \
	JP_ENTRY(P##jp_generic_k, , (jp_generic<T>(sp, dst, argmin, row0, nrows)))                  \
	JP_ENTRY(P##jp_one1_k, , (jp_one<T, 1>(sp, dst, argmin, row0, nrows)))                      \
	JP_ENTRY(P##jp_one2_k, , (jp_one<T, 2>(sp, dst, argmin, row0, nrows)))                      \
	JP_ENTRY(P##jp_one3_k, , (jp_one<T, 3>(sp, dst, argmin, row0, nrows)))                      \
	JP_ENTRY(P##jp_one4_k, , (jp_one<T, 4>(sp, dst, argmin, row0, nrows)))                      \
	JP_ENTRY(P##jp_fast1_k, , (jp_fast<T, 1, true>(sp, dst, argmin, row0, nrows)))              \
	JP_ENTRY(P##jp_fast2_k, , (jp_fast<T, 2, true>(sp, dst, argmin, row0, nrows)))              \
	JP_ENTRY(P##jp_fast3_k, , (jp_fast<T, 3, true>(sp, dst, argmin, row0, nrows)))              \
	JP_ENTRY(P##jp_fast4_k, , (jp_fast<T, 4, true>(sp, dst, argmin, row0, nrows)))              \
	JP_ENTRY(P##jp_fastn_k, , (jp_fast<T, MAXE_N, false>(sp, dst, argmin, row0, nrows)))        \
	JP_ENTRY(P##jp_fastn16_k, , (jp_fast<T, 16, false>(sp, dst, argmin, row0, nrows)))         \
	JP_ENTRY(P##jp_fastn32_k, , (jp_fast<T, 32, false>(sp, dst, argmin, row0, nrows)))         \
	JP_ENTRY(P##jp_tile1_4_k, __launch_bounds__(256, 4), (jp_tile<T, 1, 4>(sp, dst, argmin, row0, nrows)))     \
	JP_ENTRY(P##jp_tile2_4_k, __launch_bounds__(256, 4), (jp_tile<T, 2, 4>(sp, dst, argmin, row0, nrows)))     \
	JP_ENTRY(P##jp_tile3_4_k, __launch_bounds__(256, 4), (jp_tile<T, 3, 4>(sp, dst, argmin, row0, nrows)))     \
	JP_ENTRY(P##jp_tile4_4_k, __launch_bounds__(256, 4), (jp_tile<T, 4, 4>(sp, dst, argmin, row0, nrows)))     \
	JP_ENTRY(P##jp_tile1_8_k, __launch_bounds__(256, TILE8), (jp_tile<T, 1, 8>(sp, dst, argmin, row0, nrows))) \
	JP_ENTRY(P##jp_tile2_8_k, __launch_bounds__(256, TILE8), (jp_tile<T, 2, 8>(sp, dst, argmin, row0, nrows))) \
	JP_ENTRY(P##jp_tile3_8_k, __launch_bounds__(256, TILE8), (jp_tile<T, 3, 8>(sp, dst, argmin, row0, nrows))) \
	JP_ENTRY(P##jp_tile4_8_k, __launch_bounds__(256, TILE8), (jp_tile<T, 4, 8>(sp, dst, argmin, row0, nrows)))

JP_KERNELS(, double, 2)
JP_KERNELS(i32_, int, 4)
