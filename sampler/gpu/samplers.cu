// Sampling kernels: the GPU form of package sampler's chains (Gibbs and
// Metropolis-Hastings over the interior variables of MVA table rows).
//
// One chain per (row, run), run by a group of G lanes of a warp (G a power
// of two up to 32): the lanes share a Gibbs conditional over the values of
// the variable being drawn, a normal proposal over the interior variables,
// and the evaluation of a sample over the functions. The plan (model and
// cost tables, plan.go) is staged in shared memory once per block, the cost
// tables too when they fit; every chain keeps its current, best and
// previous states and its scratch in shared memory. A block's groups loop
// over the chains of the launch. Each chain writes its best cost and
// interior to its slot; reduce_rows then keeps, per row, the least cost,
// ties to the lowest run, as the CPU merge does.
//
// Everything a chain computes is what package sampler computes, in the same
// order and in double precision (see sampler/doc.go): the same Philox
// counters and conversions, conditional costs added per value in the order
// of the variable's functions, Gibbs weights summed in value order, MH
// Hastings terms in variable order, a sample's cost in function order
// (or in any order when every partial sum is exact: flag F_EXACT), and exp
// as Go's math.Exp computes it on amd64 (go_exp; expDevice falls back to
// CUDA's exp). The file is compiled with -fmad=false so that nvcc fuses no
// multiply-add the CPU rounds twice; go_exp asks for the fused ones it
// needs explicitly.
//
// Build: go generate (nvcc -fatbin -fmad=false: SASS for the common GPUs
// and PTX, as local/gpu's kernels; see doc.go); the fat binary is
// committed. Kernel parameters are device pointers or 8-byte scalars only.

typedef long long i64;
typedef unsigned long long u64;
typedef unsigned int u32;

// Plan header words (plan.go's h* constants, which must agree).
#define H_NB 0
#define H_N 1
#define H_NF 2
#define H_NCONST 3
#define H_MAXD 4
#define H_KIND 5
#define H_G 6
#define H_FLAGS 7
#define H_TRIALS 8
#define H_RUNS 9
#define H_REPAIR 10
#define H_NMOV 11
#define H_EXPMODE 12
#define H_KEY0 13
#define H_KEY1 14
#define H_DOM 15
#define H_FN 16
#define H_SCOPE 17
#define H_STRIDE 18
#define H_TOUCH 19
#define H_TLIST 20
#define H_CONST 21
#define H_MOV 22
#define H_STEP 23
#define H_DBL 24
#define H_NDBL 25
#define H_TAB 26
#define H_TABN 27
#define H_BYTES 28
#define H_SCRATCH 29

#define F_EXACT 1
#define F_FLOAT 2
#define F_NOHASTINGS 4

#define K_GIBBS 0
#define K_NORMAL 1
#define K_DISCRETE 2

#define EXP_FMA 0
#define EXP_NOFMA 1

#define INF __longlong_as_double(0x7ff0000000000000ll)
#define IS_HARD(c) ((c) == INF)
// sampler's expUnderflow.
#define EXP_UNDERFLOW (-746.0)

// ---------------------------------------------------------------- Philox

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

// philox is Philox-4x32-10 (sampler/philox.Block).
__device__ __forceinline__ uint4 philox(uint4 c, u32 k0, u32 k1)
{
#pragma unroll
	for (int r = 0; r < 10; r++) {
		if (r > 0) {
			k0 += PHILOX_W0;
			k1 += PHILOX_W1;
		}
		u32 hi0 = __umulhi(PHILOX_M0, c.x), lo0 = PHILOX_M0 * c.x;
		u32 hi1 = __umulhi(PHILOX_M1, c.z), lo1 = PHILOX_M1 * c.z;
		c = make_uint4(hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0);
	}
	return c;
}

// Rng is philox.Stream: the draws of counter prefix (c0, c1, c2), the last
// block cached.
struct Rng {
	u32 k0, k1, c0, c1, c2, blk;
	uint4 buf;
	bool valid;
};

__device__ __forceinline__ void rng_reset(Rng &s, u32 k0, u32 k1, u32 c0, u32 c1, u32 c2)
{
	s.k0 = k0;
	s.k1 = k1;
	s.c0 = c0;
	s.c1 = c1;
	s.c2 = c2;
	s.valid = false;
	// The cache too, although rng_u32 reads it only once valid: left
	// undefined, CUDA 11.8's ptxas (-O1 and above, sm_90) compiled
	// normal_trial's per-lane draws (rng_u32(own, i), i = lane, lane+G, …)
	// so that chains left the CPU's (TestAgreesWithCPU, MH with the normal
	// proposal); initialised, its machine code runs the CPU's chains, as
	// the driver's JIT and CUDA 13's ptxas did either way.
	s.blk = 0;
	s.buf = make_uint4(0, 0, 0, 0);
}

// rng_u32 is draw j: word j mod 4 of Block({c0, c1, c2, j/4}, key).
__device__ __forceinline__ u32 rng_u32(Rng &s, u32 j)
{
	u32 b = j >> 2;
	if (!s.valid || s.blk != b) {
		s.buf = philox(make_uint4(s.c0, s.c1, s.c2, b), s.k0, s.k1);
		s.blk = b;
		s.valid = true;
	}
	switch (j & 3) {
	case 0:
		return s.buf.x;
	case 1:
		return s.buf.y;
	case 2:
		return s.buf.z;
	}
	return s.buf.w;
}

// u01 is philox.Float64: (u + 0.5)·2⁻³², exact.
__device__ __forceinline__ double u01(u32 u)
{
	return ((double)u + 0.5) * 2.3283064365386962890625e-10;
}

// intn is philox.IntN: (u·n) >> 32.
__device__ __forceinline__ u32 intn(u32 u, u32 n) { return __umulhi(u, n); }

// ---------------------------------------------------------------- exp

// go_exp is math.Exp as Go's amd64 assembly computes it (goexp.go's
// goExpAMD64, which the tests check against math.Exp and this function
// against, bit for bit), with fused multiply-adds (EXP_FMA) or without
// (EXP_NOFMA); any other mode uses CUDA's exp.
__device__ double go_exp(double x, int mode)
{
	if (mode != EXP_FMA && mode != EXP_NOFMA)
		return exp(x);
	const double LOG2E = 1.4426950408889634073599246810018920;
	const double LN2U = 0.69314718055966295651160180568695068359375;
	const double LN2L = 0.28235290563031577122588448175013436025525412068e-12;
	const double OVERFLOW = 7.09782712893384e+02;
	const double C64 = 2.4801587301587301587e-5, C56 = 1.9841269841269841270e-4;
	const double C48 = 1.3888888888888888889e-3, C40 = 8.3333333333333333333e-3;
	const double C32 = 4.1666666666666666667e-2, C24 = 1.6666666666666666667e-1;
	i64 b = __double_as_longlong(x);
	if ((b & 0x7fffffffffffffffll) >= 0x7ff0000000000000ll) {
		if ((u64)b == 0xfff0000000000000ull)
			return 0.0;
		return x;
	}
	if (x > OVERFLOW)
		return INF;
	int k = __double2int_rn(__dmul_rn(LOG2E, x));
	double fk = (double)k;
	double r, p;
	if (mode == EXP_FMA) {
		r = __fma_rn(-fk, LN2U, x);
		r = __fma_rn(-fk, LN2L, r);
		r = __dmul_rn(r, 0.0625);
		p = C64;
		p = __fma_rn(p, r, C56);
		p = __fma_rn(p, r, C48);
		p = __fma_rn(p, r, C40);
		p = __fma_rn(p, r, C32);
		p = __fma_rn(p, r, C24);
		p = __fma_rn(p, r, 0.5);
		p = __fma_rn(p, r, 1.0);
		r = __dmul_rn(r, p);
		for (int i = 0; i < 3; i++)
			r = __dmul_rn(r, __dadd_rn(r, 2.0));
		r = __fma_rn(r, __dadd_rn(r, 2.0), 1.0);
	} else {
		r = __dsub_rn(x, __dmul_rn(LN2U, fk));
		r = __dsub_rn(r, __dmul_rn(LN2L, fk));
		r = __dmul_rn(r, 0.0625);
		p = C64;
		p = __dadd_rn(__dmul_rn(p, r), C56);
		p = __dadd_rn(__dmul_rn(p, r), C48);
		p = __dadd_rn(__dmul_rn(p, r), C40);
		p = __dadd_rn(__dmul_rn(p, r), C32);
		p = __dadd_rn(__dmul_rn(p, r), C24);
		p = __dadd_rn(__dmul_rn(p, r), 0.5);
		p = __dadd_rn(__dmul_rn(p, r), 1.0);
		r = __dmul_rn(r, p);
		for (int i = 0; i < 4; i++)
			r = __dmul_rn(r, __dadd_rn(r, 2.0));
		r = __dadd_rn(r, 1.0);
	}
	int bx = k + 0x3ff;
	if (bx <= 0) {
		if (bx < -52)
			return 0.0;
		bx += 0x3fe;
		r = __dmul_rn(r, __longlong_as_double((i64)bx << 52));
		bx = 1;
	} else if (bx >= 0x7ff) {
		return INF;
	}
	return __dmul_rn(r, __longlong_as_double((i64)bx << 52));
}

// exp_probe writes go_exp(in[i], mode) to out[i], for the tests.
extern "C" __global__ void exp_probe(const double *in, double *out, i64 n, i64 mode)
{
	for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x)
		out[i] = go_exp(in[i], (int)mode);
}

// ---------------------------------------------------------------- model

// Model is the plan in shared memory (tables possibly in global memory).
template <typename C>
struct Model {
	int nb, n, nf, nconst, kind, flags, trials, runs, repair, nmov, expmode, scratch;
	u32 key0, key1;
	const int *dom, *fn, *scope, *stride, *touch, *tlist, *cons, *mov, *step;
	const double *dbl;
	double beta;
	const C *tab;
};

template <typename C>
__device__ __forceinline__ void model_init(Model<C> &m, const int *h, const C *tab)
{
	m.nb = h[H_NB];
	m.n = h[H_N];
	m.nf = h[H_NF];
	m.nconst = h[H_NCONST];
	m.kind = h[H_KIND];
	m.flags = h[H_FLAGS];
	m.trials = h[H_TRIALS];
	m.runs = h[H_RUNS];
	m.repair = h[H_REPAIR];
	m.nmov = h[H_NMOV];
	m.expmode = h[H_EXPMODE];
	m.scratch = h[H_SCRATCH];
	m.key0 = (u32)h[H_KEY0];
	m.key1 = (u32)h[H_KEY1];
	m.dom = h + h[H_DOM];
	m.fn = h + h[H_FN];
	m.scope = h + h[H_SCOPE];
	m.stride = h + h[H_STRIDE];
	m.touch = h + h[H_TOUCH];
	m.tlist = h + h[H_TLIST];
	m.cons = h + h[H_CONST];
	m.mov = h + h[H_MOV];
	m.step = h + h[H_STEP];
	m.dbl = (const double *)((const char *)h + h[H_DBL]);
	m.beta = m.dbl[0];
	m.tab = tab;
}

// findex is function f's table index for the local assignment z.
template <typename C>
__device__ __forceinline__ int findex(const Model<C> &m, int f, const int *z)
{
	int len = m.fn[3 * f], s0 = m.fn[3 * f + 1];
	int idx = 0;
	for (int j = 0; j < len; j++)
		idx += z[m.scope[s0 + j]] * m.stride[s0 + j];
	return idx;
}

template <typename C>
__device__ __forceinline__ double fcost(const Model<C> &m, int f, int idx)
{
	return (double)m.tab[m.fn[3 * f + 2] + idx];
}

// ---------------------------------------------------------------- groups

// Group is one chain's lanes and its state in shared memory.
struct Group {
	int lane, G, base; // lane in the group, group size, first lane in the warp
	unsigned mask;     // the group's lanes
	int *z;            // boundary then interior values
	int *best;         // best interior values
	int *old;          // interior values before a normal proposal
	double *sd;        // scratch
	int *si;
};

__device__ __forceinline__ int gmin_i(const Group &g, int v)
{
	for (int o = g.G >> 1; o > 0; o >>= 1)
		v = min(v, __shfl_xor_sync(g.mask, v, o, g.G));
	return v;
}

__device__ __forceinline__ double gmin_d(const Group &g, double v)
{
	for (int o = g.G >> 1; o > 0; o >>= 1) {
		double w = __shfl_xor_sync(g.mask, v, o, g.G);
		v = w < v ? w : v;
	}
	return v;
}

__device__ __forceinline__ int gsum_i(const Group &g, int v)
{
	for (int o = g.G >> 1; o > 0; o >>= 1)
		v += __shfl_xor_sync(g.mask, v, o, g.G);
	return v;
}

// gsum_d adds across the group in a butterfly: only for exact sums.
__device__ __forceinline__ double gsum_d(const Group &g, double v)
{
	for (int o = g.G >> 1; o > 0; o >>= 1)
		v = __dadd_rn(v, __shfl_xor_sync(g.mask, v, o, g.G));
	return v;
}

// gfirst returns the first value y in [0, d) for which this lane's hit
// (for y = cs + lane, chunk by chunk) is true, −1 if none. hit is called
// by every lane for every chunk.
template <typename F>
__device__ __forceinline__ int gfirst(const Group &g, int d, F hit)
{
	for (int cs = 0; cs < d; cs += g.G) {
		int y = cs + g.lane;
		bool h = y < d && hit(y);
		unsigned bal = (__ballot_sync(g.mask, h) & g.mask) >> g.base;
		if (bal)
			return cs + __ffs(bal) - 1;
	}
	return -1;
}

// ---------------------------------------------------------------- model ops

// local_at is sampler's model.local for one value y of interior variable
// i: the Hard entries and the sum of the others over the functions that
// hold it, with x_i = y and the other variables as in z, in touch order.
template <typename C>
__device__ __forceinline__ void local_at(const Model<C> &m, const int *z, int i, int y, int &viol, double &cost)
{
	int x = z[m.nb + i];
	int t0 = m.touch[2 * i], tl = m.touch[2 * i + 1];
	viol = 0;
	cost = 0.0;
	for (int t = t0; t < t0 + tl; t++) {
		int f = m.tlist[2 * t], st = m.tlist[2 * t + 1];
		double c = fcost(m, f, findex(m, f, z) + (y - x) * st);
		if (IS_HARD(c))
			viol++;
		else
			cost = __dadd_rn(cost, c);
	}
}

// eval is sampler's model.eval over the group: Hard entries and the sum
// of the others of the sample in z, in function order (or in a butterfly
// when the sums are exact). Every lane returns the same values.
template <typename C>
__device__ void eval(const Model<C> &m, const Group &g, int &viol, double &cost)
{
	if (m.flags & F_EXACT) {
		int v = 0;
		double c = 0.0;
		for (int f = g.lane; f < m.nf; f += g.G) {
			double e = fcost(m, f, findex(m, f, g.z));
			if (IS_HARD(e))
				v++;
			else
				c = __dadd_rn(c, e);
		}
		viol = gsum_i(g, v);
		cost = gsum_d(g, c);
		return;
	}
	for (int f = g.lane; f < m.nf; f += g.G)
		g.sd[f] = fcost(m, f, findex(m, f, g.z));
	__syncwarp(g.mask);
	int v = 0;
	double c = 0.0;
	for (int f = 0; f < m.nf; f++) {
		double e = g.sd[f];
		if (IS_HARD(e))
			v++;
		else
			c = __dadd_rn(c, e);
	}
	__syncwarp(g.mask);
	viol = v;
	cost = c;
}

// const_hard reports whether a function without interior variables is
// Hard under the boundary values (then the row is infeasible).
template <typename C>
__device__ bool const_hard(const Model<C> &m, const Group &g)
{
	bool h = false;
	for (int j = g.lane; j < m.nconst; j += g.G) {
		int f = m.cons[j];
		if (IS_HARD(fcost(m, f, findex(m, f, g.z))))
			h = true;
	}
	return __any_sync(g.mask, h);
}

// ---------------------------------------------------------------- repair

// repair is sampler's chain.repair: min-conflict sweeps from an infeasible
// start, each variable moving to the value of least (Hard entries, other
// costs), keeping its value on ties, else the first such value.
template <typename C>
__device__ void repair(const Model<C> &m, const Group &g, int &v, double &c, i64 &checks)
{
	for (int s = 0; s < m.repair && v > 0; s++) {
		bool changed = false;
		for (int i = 0; i < m.n && v > 0; i++) {
			int k = m.nb + i, d = m.dom[k];
			if (d < 2)
				continue;
			checks += (i64)m.touch[2 * i + 1] * d;
			int vm = 0x7fffffff;
			double cm = INF;
			for (int y = g.lane; y < d; y += g.G) {
				int vy;
				double cy;
				local_at(m, g.z, i, y, vy, cy);
				g.si[y] = vy;
				g.sd[y] = cy;
				if (vy < vm || (vy == vm && cy < cm)) {
					vm = vy;
					cm = cy;
				}
			}
			for (int o = g.G >> 1; o > 0; o >>= 1) {
				int vo = __shfl_xor_sync(g.mask, vm, o, g.G);
				double co = __shfl_xor_sync(g.mask, cm, o, g.G);
				if (vo < vm || (vo == vm && co < cm)) {
					vm = vo;
					cm = co;
				}
			}
			__syncwarp(g.mask);
			int x = g.z[k];
			int b = x;
			if (!(g.si[x] == vm && g.sd[x] == cm))
				b = gfirst(g, d, [&](int y) { return g.si[y] == vm && g.sd[y] == cm; });
			if (b != x) {
				v += g.si[b] - g.si[x];
				changed = true;
			}
			__syncwarp(g.mask);
			if (b != x && g.lane == 0)
				g.z[k] = b;
			__syncwarp(g.mask);
		}
		if (!changed)
			break;
	}
	eval(m, g, v, c);
	checks += m.nf;
}

// ---------------------------------------------------------------- transitions

// gibbs_sweep is sampler's chain.gibbs: every interior variable in order
// drawn from its conditional, the lanes sharing its values.
template <typename C>
__device__ void gibbs_sweep(const Model<C> &m, const Group &g, Rng &rng, int &v, double &c, i64 &checks)
{
	for (int i = 0; i < m.n; i++) {
		int k = m.nb + i, d = m.dom[k];
		if (d < 2)
			continue;
		checks += (i64)m.touch[2 * i + 1] * d;
		int vmin = 0x7fffffff;
		for (int y = g.lane; y < d; y += g.G) {
			int vy;
			double cy;
			local_at(m, g.z, i, y, vy, cy);
			g.si[y] = vy;
			g.sd[y] = cy;
			vmin = min(vmin, vy);
		}
		vmin = gmin_i(g, vmin);
		double cmin = INF;
		for (int y = g.lane; y < d; y += g.G)
			if (g.si[y] == vmin && g.sd[y] < cmin)
				cmin = g.sd[y];
		cmin = gmin_d(g, cmin);
		// Weights, in place of the costs (each lane its own values).
		for (int y = g.lane; y < d; y += g.G) {
			double a = __dmul_rn(__dsub_rn(cmin, g.sd[y]), m.beta);
			double w = 0.0;
			if (g.si[y] == vmin && a > EXP_UNDERFLOW)
				w = go_exp(a, m.expmode);
			g.sd[y] = w;
		}
		__syncwarp(g.mask);
		// Running sums in value order, in place of the weights: lane l of
		// a chunk adds the chunk's weights up to its own to the carry,
		// one by one, so that every sum is the CPU's, bit for bit.
		double carry = 0.0;
		for (int cs = 0; cs < d; cs += g.G) {
			int y = cs + g.lane;
			double acc = carry;
			if (y < d)
				for (int q = cs; q <= y; q++)
					acc = __dadd_rn(acc, g.sd[q]);
			carry = __shfl_sync(g.mask, acc, min(g.G, d - cs) - 1, g.G);
			__syncwarp(g.mask);
			if (y < d)
				g.sd[y] = acc;
		}
		__syncwarp(g.mask);
		// The CPU picks the first value of nonzero weight whose running
		// sum exceeds u: the first running sum above u is one (it rose).
		double u = __dmul_rn(u01(rng_u32(rng, (u32)i)), carry);
		int pick = gfirst(g, d, [&](int y) { return u < g.sd[y]; });
		if (pick < 0)
			pick = g.z[k]; // only with NaN costs
		__syncwarp(g.mask);
		if (g.lane == 0)
			g.z[k] = pick;
		__syncwarp(g.mask);
	}
	eval(m, g, v, c);
	checks += m.nf;
}

// accept is sampler's chain.accept (every lane decides the same).
__device__ __forceinline__ bool accept(int dv, double dc, double h, Rng &rng, u32 j, double beta, int expmode)
{
	if (dv < 0)
		return true;
	if (dv > 0)
		return false;
	double a = __dadd_rn(__dmul_rn(-dc, beta), h);
	return a >= 0.0 || u01(rng_u32(rng, j)) < go_exp(a, expmode);
}

// nstep_sample is normalStep.sample for the tables at s.
__device__ __forceinline__ int nstep_sample(const double *s, int d, int x, double u)
{
	int lo = 0, hi = d - 1, off = d - 1 - x;
	while (lo < hi) {
		int mid = (int)((unsigned)(lo + hi) >> 1);
		if (u < s[mid + off])
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

// nstep_logq is normalStep.logQ(x, y) for the tables at s.
__device__ __forceinline__ double nstep_logq(const double *s, int d, int x, int y)
{
	const double *logP = s + (2 * d - 2);
	const double *logLow = logP + (2 * d - 1);
	const double *logHigh = logLow + d;
	if (y == 0)
		return logLow[x];
	if (y == d - 1)
		return logHigh[x];
	return logP[y - x + d - 1];
}

// normal_trial is sampler's chain.normal: the lanes share the interior
// variables' steps, then the evaluation of the proposal.
template <typename C>
__device__ void normal_trial(const Model<C> &m, const Group &g, Rng &rng, Rng &own, int &v, double &c, i64 &checks)
{
	bool movedL = false;
	for (int i = g.lane; i < m.n; i += g.G) {
		int k = m.nb + i, x = g.z[k];
		g.old[i] = x;
		g.si[i] = 0;
		int so = m.step[i];
		if (so < 0)
			continue;
		int d = m.dom[k];
		const double *s = m.dbl + so;
		int y = nstep_sample(s, d, x, u01(rng_u32(own, (u32)i)));
		if (y != x) {
			g.sd[i] = __dsub_rn(nstep_logq(s, d, y, x), nstep_logq(s, d, x, y));
			g.si[i] = 1;
			g.z[k] = y;
			movedL = true;
		}
	}
	bool moved = __any_sync(g.mask, movedL);
	__syncwarp(g.mask);
	if (!moved)
		return;
	double h = 0.0;
	for (int i = 0; i < m.n; i++)
		if (g.si[i])
			h = __dadd_rn(h, g.sd[i]);
	if (m.flags & F_NOHASTINGS)
		h = 0.0;
	__syncwarp(g.mask);
	int v2;
	double c2;
	eval(m, g, v2, c2);
	checks += m.nf;
	if (accept(v2 - v, __dsub_rn(c2, c), h, rng, (u32)m.n, m.beta, m.expmode)) {
		v = v2;
		c = c2;
		return;
	}
	for (int i = g.lane; i < m.n; i += g.G)
		g.z[m.nb + i] = g.old[i];
	__syncwarp(g.mask);
}

// discrete_trial is sampler's chain.discrete, on the group's first lane
// (the host runs it with one lane per chain: the proposal has one
// dimension). ch.c is kept by differences, as on the CPU.
template <typename C>
__device__ void discrete_trial(const Model<C> &m, const Group &g, Rng &rng, int &v, double &c, i64 &checks)
{
	if (m.nmov == 0)
		return;
	if (g.lane == 0) {
		int i = m.mov[intn(rng_u32(rng, 0), (u32)m.nmov)];
		int k = m.nb + i, x = g.z[k];
		int y = (int)intn(rng_u32(rng, 1), (u32)(m.dom[k] - 1));
		if (y >= x)
			y++;
		int t0 = m.touch[2 * i], tl = m.touch[2 * i + 1];
		int dv = 0;
		double oldC = 0.0, newC = 0.0;
		for (int t = t0; t < t0 + tl; t++) {
			int f = m.tlist[2 * t], st = m.tlist[2 * t + 1];
			int base = findex(m, f, g.z) - x * st;
			double co = fcost(m, f, base + x * st);
			if (IS_HARD(co))
				dv--;
			else
				oldC = __dadd_rn(oldC, co);
			double cn = fcost(m, f, base + y * st);
			if (IS_HARD(cn))
				dv++;
			else
				newC = __dadd_rn(newC, cn);
		}
		double dc = __dsub_rn(newC, oldC);
		checks += 2 * (i64)tl;
		if (accept(dv, dc, 0.0, rng, 2, m.beta, m.expmode)) {
			g.z[k] = y;
			v += dv;
			c = __dadd_rn(c, dc);
		}
	}
	__syncwarp(g.mask);
	v = __shfl_sync(g.mask, v, 0, g.G);
	c = __shfl_sync(g.mask, c, 0, g.G);
}

// ---------------------------------------------------------------- chains

// sample runs chains [0, np·R) of a launch: chain q is run q mod R of row
// position p0 + q/R, whose row index is rows[p] (p itself when rows is
// null), or, when bvals is set, the one row of boundary values bvals with
// counter word `word`. Chain q's best cost and interior go to
// chainCost[q] and chainAssign[q·n..]; checks adds the entries read. With
// hist set (tests), the state after every trial t > burn with t % thin ==
// 0 is counted in hist (mixed radix over the interior, last fastest).
template <typename C, int KIND>
__device__ void sample(const char *plan, i64 tablesShared, const u32 *rows, const int *bvals, i64 word,
		       i64 p0, i64 np, double *chainCost, int *chainAssign, u64 *checksOut,
		       u64 *hist, i64 burn, i64 thin)
{
	extern __shared__ double smem[];
	__shared__ u64 blockChecks;
	const int *hp = (const int *)plan;
	int tabOff = hp[H_TAB];
	int bytes = tablesShared ? hp[H_BYTES] : tabOff;
	{
		const i64 *src = (const i64 *)plan;
		i64 *dst = (i64 *)smem;
		for (int w = threadIdx.x; w < bytes / 8; w += blockDim.x)
			dst[w] = src[w];
	}
	if (threadIdx.x == 0)
		blockChecks = 0;
	__syncthreads();
	const int *h = (const int *)smem;
	Model<C> m;
	model_init(m, h, (const C *)((tablesShared ? (const char *)smem : plan) + tabOff));

	Group g;
	g.G = h[H_G];
	int wl = threadIdx.x & 31;
	g.lane = wl & (g.G - 1);
	g.base = wl & ~(g.G - 1);
	g.mask = g.G == 32 ? 0xffffffffu : ((1u << g.G) - 1) << g.base;
	{
		int ints = ((4 * (m.nb + 3 * m.n)) + 7) & ~7;
		int per = ints + 8 * m.scratch + ((4 * m.scratch + 7) & ~7);
		char *st = (char *)smem + bytes + (threadIdx.x / g.G) * per;
		g.z = (int *)st;
		g.best = g.z + m.nb + m.n;
		g.old = g.best + m.n;
		g.sd = (double *)(st + ints);
		g.si = (int *)(st + ints + 8 * m.scratch);
	}

	const i64 R = m.runs;
	const i64 nch = np * R;
	const i64 ngroups = (i64)gridDim.x * (blockDim.x / g.G);
	i64 checks = 0;
	for (i64 q = (i64)blockIdx.x * (blockDim.x / g.G) + threadIdx.x / g.G; q < nch; q += ngroups) {
		i64 p = p0 + q / R;
		u32 run = (u32)(q % R);
		u32 rw;
		if (g.lane == 0) {
			if (bvals) {
				for (int k = 0; k < m.nb; k++)
					g.z[k] = bvals[k];
			} else {
				u32 row = rows ? rows[p] : (u32)p;
				for (int k = m.nb - 1; k >= 0; k--) {
					g.z[k] = (int)(row % (u32)m.dom[k]);
					row /= (u32)m.dom[k];
				}
			}
		}
		rw = bvals ? (u32)word : (rows ? rows[p] : (u32)p);
		for (int i = g.lane; i < m.n; i += g.G)
			g.best[i] = 0;
		__syncwarp(g.mask);

		double best = INF;
		checks += m.nconst;
		if (!const_hard(m, g)) {
			Rng rng, own;
			rng_reset(rng, m.key0, m.key1, rw, run, 0);
			for (int i = g.lane; i < m.n; i += g.G)
				g.z[m.nb + i] = (int)intn(rng_u32(rng, (u32)i), (u32)m.dom[m.nb + i]);
			__syncwarp(g.mask);
			int v;
			double c;
			eval(m, g, v, c);
			checks += m.nf;
			if (v > 0 && m.repair > 0)
				repair(m, g, v, c, checks);
			if (v == 0) {
				best = c;
				for (int i = g.lane; i < m.n; i += g.G)
					g.best[i] = g.z[m.nb + i];
			}
			for (int t = 1; t <= m.trials; t++) {
				rng_reset(rng, m.key0, m.key1, rw, run, (u32)t);
				if (KIND == K_GIBBS) {
					gibbs_sweep(m, g, rng, v, c, checks);
				} else if (KIND == K_NORMAL) {
					rng_reset(own, m.key0, m.key1, rw, run, (u32)t);
					normal_trial(m, g, rng, own, v, c, checks);
				} else {
					discrete_trial(m, g, rng, v, c, checks);
				}
				if (v == 0 && c < best) {
					if (KIND == K_DISCRETE) {
						eval(m, g, v, c);
						checks += m.nf;
					}
					if (c < best) {
						best = c;
						for (int i = g.lane; i < m.n; i += g.G)
							g.best[i] = g.z[m.nb + i];
					}
				}
				if (hist && t > burn && t % thin == 0 && g.lane == 0) {
					i64 s = 0;
					for (int i = 0; i < m.n; i++)
						s = s * m.dom[m.nb + i] + g.z[m.nb + i];
					atomicAdd(&hist[s], 1ull);
				}
				__syncwarp(g.mask);
			}
		}
		__syncwarp(g.mask);
		if (g.lane == 0)
			chainCost[q] = best;
		for (int i = g.lane; i < m.n; i += g.G)
			chainAssign[q * m.n + i] = g.best[i];
		__syncwarp(g.mask);
	}
	if (g.lane == 0 && checks)
		atomicAdd(&blockChecks, (u64)checks);
	__syncthreads();
	if (threadIdx.x == 0 && blockChecks)
		atomicAdd(checksOut, blockChecks);
}

#define SAMPLE_ARGS const char *plan, i64 tablesShared, const u32 *rows, const int *bvals, i64 word, \
		    i64 p0, i64 np, double *chainCost, int *chainAssign, u64 *checks, u64 *hist, i64 burn, i64 thin
#define SAMPLE_PASS plan, tablesShared, rows, bvals, word, p0, np, chainCost, chainAssign, checks, hist, burn, thin

extern "C" __global__ void sample_gibbs_d(SAMPLE_ARGS) { sample<double, K_GIBBS>(SAMPLE_PASS); }
extern "C" __global__ void sample_gibbs_f(SAMPLE_ARGS) { sample<float, K_GIBBS>(SAMPLE_PASS); }
extern "C" __global__ void sample_normal_d(SAMPLE_ARGS) { sample<double, K_NORMAL>(SAMPLE_PASS); }
extern "C" __global__ void sample_normal_f(SAMPLE_ARGS) { sample<float, K_NORMAL>(SAMPLE_PASS); }
extern "C" __global__ void sample_discrete_d(SAMPLE_ARGS) { sample<double, K_DISCRETE>(SAMPLE_PASS); }
extern "C" __global__ void sample_discrete_f(SAMPLE_ARGS) { sample<float, K_DISCRETE>(SAMPLE_PASS); }

// reduce_rows keeps, for each row position p0 + t (t < np), the chain of
// least cost, ties to the lowest run (the CPU merge), and writes its cost
// and interior to rowCost[p] and rowAssign[p·n..].
extern "C" __global__ void reduce_rows(const double *chainCost, const int *chainAssign, i64 np, i64 R, i64 n,
				       double *rowCost, int *rowAssign, i64 p0)
{
	for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t < np; t += (i64)gridDim.x * blockDim.x) {
		i64 b = 0;
		double bc = chainCost[t * R];
		for (i64 r = 1; r < R; r++) {
			double c = chainCost[t * R + r];
			if (c < bc) {
				bc = c;
				b = r;
			}
		}
		rowCost[p0 + t] = bc;
		for (i64 i = 0; i < n; i++)
			rowAssign[(p0 + t) * n + i] = chainAssign[(t * R + b) * n + i];
	}
}
