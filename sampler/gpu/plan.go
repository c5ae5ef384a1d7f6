package gpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/sampler"
	"github.com/hearth-dcop/hearth/sampler/philox"
)

// Transition kinds, as samplers.cu numbers them.
const (
	kindGibbs    = 0
	kindNormal   = 1
	kindDiscrete = 2
)

// Header words of a plan (int32), as samplers.cu reads them (H_* there).
const (
	hNB      = iota // boundary variables
	hN              // interior variables
	hNF             // functions
	hNConst         // functions without interior variables
	hMaxD           // largest interior domain
	hKind           // kindGibbs, kindNormal or kindDiscrete
	hG              // lanes per chain (a power of two, at most 32)
	hFlags          // fExact | fFloat | fNoHastings
	hTrials         // T
	hRuns           // R
	hRepair         // repair sweeps, ≤ 0 for none
	hNMov           // movable interior variables (discrete proposal)
	hExpMode        // expFMA, expNoFMA or expDevice
	hKey0           // Philox key, low word
	hKey1           // Philox key, high word
	hDom            // word offset of dom[nb+n]
	hFn             // word offset of fn[3·nf]: scope length, scope start, table offset
	hScope          // word offset of the scopes' local variables
	hStride         // word offset of their strides
	hTouch          // word offset of touch[2·n]: start and length in the touch list
	hTList          // word offset of the touch list: (function, stride) pairs
	hConst          // word offset of the constant functions' indices
	hMov            // word offset of the movable variables
	hStep           // word offset of step[n]: double offset of the normal tables, −1 for none
	hDbl            // byte offset of the doubles: β, then the normal tables
	hNDbl           // doubles
	hTab            // byte offset of the cost tables
	hTabN           // cost entries
	hBytes          // plan bytes
	hScratch        // scratch entries per chain (see plan.scratch)
	hdrWords = 32
)

// Flags of hFlags.
const (
	// fExact: every partial sum of the costs is exact (see exactSums), so
	// a sample's cost may be summed in any order; otherwise the kernels
	// add in lp.Funcs order, as the CPU does.
	fExact = 1
	// fFloat: the cost tables are stored as float32, which holds every
	// entry exactly (halving the shared memory they take).
	fFloat = 2
	// fNoHastings: accept normal proposals without the Hastings ratio
	// (the negative control of the distribution test).
	fNoHastings = 4
)

// Exp modes: which exp the kernels compute (see goexp.go).
const (
	expFMA    = 0 // Go's amd64 assembly, FMA path
	expNoFMA  = 1 // Go's amd64 assembly, SSE2 path
	expDevice = 2 // CUDA's exp: may differ from math.Exp in the last bit
)

// expUnderflow is sampler's: a Gibbs weight whose exponent is not above
// it is 0 without calling exp.
const expUnderflow = -746.0

// plan is a local problem and sampler options packed for the kernels:
// one little-endian blob, int32 words first (header and index arrays),
// then float64s from byte hDbl, then the cost tables from byte hTab. The
// kernels copy the blob up to hTab into shared memory, and the tables too
// when they fit.
type plan struct {
	blob      []byte
	kind      int
	nb, n, nf int
	g         int // lanes per chain
	// scratch is the entries of a chain's scratch arrays: a conditional
	// or repair move over the largest domain, the normal proposal's
	// steps (n), and a sample's costs for the ordered sum (nf) unless
	// sums are exact. It is most of a chain's shared memory, which
	// bounds the chains resident per multiprocessor.
	scratch int
	float   bool
	exact   bool
	expMode int
	o       sampler.Options
}

// metaBytes returns the bytes before the cost tables.
func (p *plan) metaBytes() int { return int(p.word(hTab)) }

// word returns header word i.
func (p *plan) word(i int) int32 { return int32(binary.LittleEndian.Uint32(p.blob[4*i:])) }

// groupBytes returns the shared memory one chain's state takes: the
// current, best and previous interior values (with the boundary values
// first), and the scratch doubles and ints (samplers.cu, group_state).
func (p *plan) groupBytes() int {
	ints := align8(4 * (p.nb + 3*p.n))
	return ints + 8*p.scratch + align8(4*p.scratch)
}

func align8(n int) int { return (n + 7) &^ 7 }

// maxTableEntries bounds the cost entries of a plan: table offsets are
// int32 in the kernels.
const maxTableEntries = math.MaxInt32

// newPlan packs lp for transition kind k with options o (defaults filled
// in) and g lanes per chain. It fails for problems the kernels do not
// handle (the caller then samples on the CPU).
func newPlan(lp *mva.LocalProblem, o sampler.Options, k, g int) (*plan, error) {
	if g < 1 || g > 32 || g&(g-1) != 0 {
		return nil, fmt.Errorf("%d lanes per chain: want a power of two up to 32", g)
	}
	nb, n, nf := lp.NB, lp.NumInterior(), len(lp.Funcs)
	maxD := 1
	for _, d := range lp.Domains[nb:] {
		maxD = max(maxD, d)
	}
	p := &plan{kind: k, nb: nb, n: n, nf: nf, g: g, o: o, expMode: detectExp()}
	p.float = floatTables(lp)
	p.exact = exactSums(lp)
	p.scratch = maxD
	if k == kindNormal {
		p.scratch = max(p.scratch, n)
	}
	if !p.exact {
		p.scratch = max(p.scratch, nf)
	}

	// Int section.
	w := make([]int32, hdrWords)
	at := func() int32 { return int32(len(w)) }
	put := func(h int, vals ...int32) {
		w[h] = at()
		w = append(w, vals...)
	}
	dom := make([]int32, len(lp.Domains))
	for k, d := range lp.Domains {
		dom[k] = int32(d)
	}
	put(hDom, dom...)

	// Functions: scope, strides (last position fastest) and table offset.
	fn := make([]int32, 0, 3*nf)
	var scope, stride []int32
	touch := make([][]int32, n) // (function, stride) pairs per interior variable
	var consts []int32
	tabN := 0
	for fi, f := range lp.Funcs {
		if tabN > maxTableEntries-len(f.Costs) {
			return nil, fmt.Errorf("cost tables of more than %d entries", maxTableEntries)
		}
		fn = append(fn, int32(len(f.Scope)), int32(len(scope)), int32(tabN))
		tabN += len(f.Costs)
		st := make([]int32, len(f.Scope))
		size := 1
		for j := len(f.Scope) - 1; j >= 0; j-- {
			st[j] = int32(size)
			size *= lp.Domains[f.Scope[j]]
		}
		interior := false
		for j, v := range f.Scope {
			scope = append(scope, int32(v))
			if v >= nb {
				interior = true
				touch[v-nb] = append(touch[v-nb], int32(fi), st[j])
			}
		}
		stride = append(stride, st...)
		if !interior {
			consts = append(consts, int32(fi))
		}
	}
	put(hFn, fn...)
	put(hScope, scope...)
	put(hStride, stride...)
	tidx := make([]int32, 0, 2*n)
	var tlist []int32
	for _, t := range touch {
		tidx = append(tidx, int32(len(tlist)/2), int32(len(t)/2))
		tlist = append(tlist, t...)
	}
	put(hTouch, tidx...)
	put(hTList, tlist...)
	put(hConst, consts...)
	var mov []int32
	for i := range n {
		if lp.Domains[nb+i] >= 2 {
			mov = append(mov, int32(i))
		}
	}
	put(hMov, mov...)

	// Doubles: β, then the normal proposal's tables, one set per domain
	// size, as sampler computes them.
	dbl := []float64{1 / o.Temperature}
	step := make([]int32, n)
	for i := range step {
		step[i] = -1
	}
	if k == kindNormal {
		bySize := map[int]int32{}
		for i := range n {
			d := lp.Domains[nb+i]
			if d < 2 {
				continue
			}
			off, ok := bySize[d]
			if !ok {
				sigma := o.StdDev
				if sigma == 0 {
					sigma = math.Sqrt(math.Sqrt(float64(d)))
				}
				off = int32(len(dbl))
				dbl = append(dbl, sampler.NormalTables(d, sigma)...)
				bySize[d] = off
			}
			step[i] = off
		}
	}
	put(hStep, step...)

	// Header.
	w[hNB], w[hN], w[hNF], w[hNConst] = int32(nb), int32(n), int32(nf), int32(len(consts))
	w[hMaxD], w[hKind], w[hG] = int32(maxD), int32(k), int32(g)
	w[hTrials], w[hRuns] = int32(o.Trials), int32(uint32(o.Runs))
	w[hRepair] = int32(max(o.RepairSweeps, 0))
	w[hNMov] = int32(len(mov))
	w[hExpMode] = int32(p.expMode)
	key := philox.Key(o.Seed)
	w[hKey0], w[hKey1] = int32(key[0]), int32(key[1])
	w[hScratch] = int32(p.scratch)
	if p.float {
		w[hFlags] |= fFloat
	}
	if p.exact {
		w[hFlags] |= fExact
	}

	dblOff := align8(4 * len(w))
	tabOff := align8(dblOff + 8*len(dbl))
	esize := 8
	if p.float {
		esize = 4
	}
	total := align8(tabOff + esize*tabN)
	w[hDbl], w[hNDbl] = int32(dblOff), int32(len(dbl))
	w[hTab], w[hTabN], w[hBytes] = int32(tabOff), int32(tabN), int32(total)
	if int64(tabOff)+int64(esize)*int64(tabN) > math.MaxInt32 {
		return nil, fmt.Errorf("a plan of more than 2 GiB")
	}

	b := make([]byte, total)
	for i, v := range w {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	for i, v := range dbl {
		binary.LittleEndian.PutUint64(b[dblOff+8*i:], math.Float64bits(v))
	}
	at2 := tabOff
	for _, f := range lp.Funcs {
		for _, c := range f.Costs {
			if p.float {
				binary.LittleEndian.PutUint32(b[at2:], math.Float32bits(float32(c)))
			} else {
				binary.LittleEndian.PutUint64(b[at2:], math.Float64bits(c))
			}
			at2 += esize
		}
	}
	p.blob = b
	return p, nil
}

// floatTables reports whether every cost entry is exactly a float32
// (+Inf, Hard, included): whole costs below 2²⁴ are, as in most
// benchmarks, and then the tables take half the shared memory.
func floatTables(lp *mva.LocalProblem) bool {
	for _, f := range lp.Funcs {
		for _, c := range f.Costs {
			if float64(float32(c)) != c {
				return false
			}
		}
	}
	return true
}

// exactSums reports whether every sum of costs of a sample is exact
// whatever the order of the additions: whether, for some k, every finite
// entry is a multiple of 2⁻ᵏ and the functions' largest magnitudes add up
// to at most 2⁵³·2⁻ᵏ. Then every partial sum is a multiple of 2⁻ᵏ below
// 2⁵³·2⁻ᵏ in magnitude, so representable: whole costs (the usual case)
// qualify up to 2⁵³ in total. The kernels then add a sample's costs in
// parallel; otherwise one lane adds them in lp.Funcs order, as the CPU.
// -Inf and NaN entries disqualify a problem.
func exactSums(lp *mva.LocalProblem) bool {
	k := 0 // the common exponent so far
	maxes := make([]float64, len(lp.Funcs))
	for fi, f := range lp.Funcs {
		for _, c := range f.Costs {
			if mva.IsHard(c) || c == 0 {
				continue
			}
			if math.IsInf(c, -1) || math.IsNaN(c) {
				return false
			}
			k = max(k, fracBits(c))
			maxes[fi] = max(maxes[fi], math.Abs(c))
		}
	}
	if k > 1074 {
		return false
	}
	var total uint64
	for _, m := range maxes {
		s := math.Ldexp(m, k) // exact: a power-of-two scaling of an integer multiple
		if s > 1<<53 {
			return false
		}
		total += uint64(s)
		if total > 1<<53 {
			return false
		}
	}
	return true
}

// fracBits returns the least k ≥ 0 such that c·2ᵏ is an integer, for a
// finite nonzero c.
func fracBits(c float64) int {
	b := math.Float64bits(c)
	e := int(b>>52) & 0x7ff
	m := b & (1<<52 - 1)
	if e == 0 {
		e = 1 // subnormal: m·2⁻¹⁰⁷⁴
	} else {
		m |= 1 << 52
	}
	// c = ±m·2^(e−1075).
	exp := e - 1075 + bits.TrailingZeros64(m)
	return max(0, -exp)
}

// defaultLanes is the group size of kind k for lp: a quarter of the
// largest interior domain for Gibbs (12 values: 4 lanes, each computing
// the conditional of three values) and a quarter of the interior
// variables for the normal proposal (10 variables: 4 lanes), rounded up
// to a power of two, at most 32; one lane for the discrete proposal,
// which changes one variable. Measured on an H200 against 1 to 16 lanes
// (docs/bench/gpu-samplers-h200.csv, the "variant" lines): more lanes per
// chain leave lanes idle in the serial steps (running sums, acceptance)
// and keep fewer chains resident; fewer leave each lane more serial work.
func defaultLanes(lp *mva.LocalProblem, k int) int {
	switch k {
	case kindGibbs:
		maxD := 1
		for _, d := range lp.Domains[lp.NB:] {
			maxD = max(maxD, d)
		}
		return pow2(min((maxD+3)/4, 32))
	case kindNormal:
		return pow2(min((max(lp.NumInterior(), 1)+3)/4, 32))
	}
	return 1
}

// pow2 rounds n ≥ 1 up to a power of two.
func pow2(n int) int { return 1 << bits.Len(uint(n-1)) }
