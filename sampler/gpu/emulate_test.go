package gpu

import (
	"encoding/binary"
	"math"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/sampler/philox"
)

// emulator is samplers.cu transcribed into Go over the packed plan: the
// same header reads, the same per-group phases (lanes as loops, in the
// kernel's order where the order matters: the chunked running sums, the
// butterfly of exact sums), the same reductions, and scratch arrays of
// the plan's size, which Go's bounds checks hold the kernels' use to. It needs no GPU: the
// tests check it against package sampler bit for bit, which checks the
// plan's layout and the kernels' algorithm; the device tests then check
// the kernels against the same CPU.
type emulator struct {
	w                                            []int32 // header and int section
	dbl                                          []float64
	tab                                          []float64
	nb, n, nf, nconst, kind, g, flags            int
	trials, runs, repair, nmov, expmode, scratch int
	key                                          [2]uint32
	dom, fn, scope, stride, touch, tlist, cons   []int32
	mov, step                                    []int32
	beta                                         float64
	checks                                       int64
	hist                                         []uint64
	burn, thin                                   int
}

func newEmulator(pl *plan) *emulator {
	b := pl.blob
	word := func(i int) int32 { return int32(binary.LittleEndian.Uint32(b[4*i:])) }
	nw := int(word(hDbl)) / 4
	w := make([]int32, nw)
	for i := range w {
		w[i] = word(i)
	}
	em := &emulator{w: w}
	em.nb, em.n, em.nf, em.nconst = int(w[hNB]), int(w[hN]), int(w[hNF]), int(w[hNConst])
	em.kind, em.g, em.flags = int(w[hKind]), int(w[hG]), int(w[hFlags])
	em.trials, em.runs, em.repair = int(w[hTrials]), int(w[hRuns]), int(w[hRepair])
	em.nmov, em.expmode, em.scratch = int(w[hNMov]), int(w[hExpMode]), int(w[hScratch])
	em.key = [2]uint32{uint32(w[hKey0]), uint32(w[hKey1])}
	sec := func(h, n int) []int32 { return w[w[h] : int(w[h])+n] }
	em.dom = sec(hDom, em.nb+em.n)
	em.fn = sec(hFn, 3*em.nf)
	nsc := 0
	for f := range em.nf {
		nsc += int(em.fn[3*f])
	}
	em.scope = sec(hScope, nsc)
	em.stride = sec(hStride, nsc)
	em.touch = sec(hTouch, 2*em.n)
	nt := 0
	for i := range em.n {
		nt += int(em.touch[2*i+1])
	}
	em.tlist = sec(hTList, 2*nt)
	em.cons = sec(hConst, em.nconst)
	em.mov = sec(hMov, em.nmov)
	em.step = sec(hStep, em.n)
	off := int(w[hDbl])
	em.dbl = make([]float64, w[hNDbl])
	for i := range em.dbl {
		em.dbl[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[off+8*i:]))
	}
	em.beta = em.dbl[0]
	off = int(w[hTab])
	em.tab = make([]float64, w[hTabN])
	for i := range em.tab {
		if em.flags&fFloat != 0 {
			em.tab[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[off+4*i:])))
		} else {
			em.tab[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[off+8*i:]))
		}
	}
	return em
}

// egroup is one chain's state.
type egroup struct {
	z, best, old []int
	sd           []float64
	si           []int
}

func (em *emulator) findex(f int, z []int) int {
	l, s0 := int(em.fn[3*f]), int(em.fn[3*f+1])
	idx := 0
	for j := range l {
		idx += z[em.scope[s0+j]] * int(em.stride[s0+j])
	}
	return idx
}

func (em *emulator) fcost(f, idx int) float64 { return em.tab[int(em.fn[3*f+2])+idx] }

func (em *emulator) exp(x float64) float64 {
	switch em.expmode {
	case expFMA:
		return goExpAMD64(x, true)
	case expNoFMA:
		return goExpAMD64(x, false)
	}
	return math.Exp(x)
}

func (em *emulator) localAt(z []int, i, y int) (int, float64) {
	x := z[em.nb+i]
	t0, tl := int(em.touch[2*i]), int(em.touch[2*i+1])
	viol, cost := 0, 0.0
	for t := t0; t < t0+tl; t++ {
		f, st := int(em.tlist[2*t]), int(em.tlist[2*t+1])
		c := em.fcost(f, em.findex(f, z)+(y-x)*st)
		if mva.IsHard(c) {
			viol++
		} else {
			cost += c
		}
	}
	return viol, cost
}

func (em *emulator) eval(g *egroup) (int, float64) {
	if em.flags&fExact != 0 {
		// Per-lane partial sums, then the butterfly (lane 0's result).
		vs := make([]int, em.g)
		cs := make([]float64, em.g)
		for l := range em.g {
			for f := l; f < em.nf; f += em.g {
				if e := em.fcost(f, em.findex(f, g.z)); mva.IsHard(e) {
					vs[l]++
				} else {
					cs[l] += e
				}
			}
		}
		for o := em.g >> 1; o > 0; o >>= 1 {
			nv, nc := make([]int, em.g), make([]float64, em.g)
			for l := range em.g {
				nv[l], nc[l] = vs[l]+vs[l^o], cs[l]+cs[l^o]
			}
			vs, cs = nv, nc
		}
		return vs[0], cs[0]
	}
	// The lanes' entries to the scratch, then one ordered sum.
	for f := range em.nf {
		g.sd[f] = em.fcost(f, em.findex(f, g.z))
	}
	v, c := 0, 0.0
	for f := range em.nf {
		if e := g.sd[f]; mva.IsHard(e) {
			v++
		} else {
			c += e
		}
	}
	return v, c
}

// first is gfirst: the first y in [0, d) with hit(y).
func (em *emulator) first(d int, hit func(int) bool) int {
	for y := range d {
		if hit(y) {
			return y
		}
	}
	return -1
}

func (em *emulator) repairChain(g *egroup, v *int, c *float64) {
	for s := 0; s < em.repair && *v > 0; s++ {
		changed := false
		for i := 0; i < em.n && *v > 0; i++ {
			k := em.nb + i
			d := int(em.dom[k])
			if d < 2 {
				continue
			}
			em.checks += int64(em.touch[2*i+1]) * int64(d)
			vm, cm := math.MaxInt32, math.Inf(1)
			for y := range d {
				g.si[y], g.sd[y] = em.localAt(g.z, i, y)
				if g.si[y] < vm || g.si[y] == vm && g.sd[y] < cm {
					vm, cm = g.si[y], g.sd[y]
				}
			}
			x := g.z[k]
			b := x
			if !(g.si[x] == vm && g.sd[x] == cm) {
				b = em.first(d, func(y int) bool { return g.si[y] == vm && g.sd[y] == cm })
			}
			if b != x {
				*v += g.si[b] - g.si[x]
				changed = true
				g.z[k] = b
			}
		}
		if !changed {
			break
		}
	}
	*v, *c = em.eval(g)
	em.checks += int64(em.nf)
}

func (em *emulator) gibbs(g *egroup, rng *philox.Stream, v *int, c *float64) {
	for i := range em.n {
		k := em.nb + i
		d := int(em.dom[k])
		if d < 2 {
			continue
		}
		em.checks += int64(em.touch[2*i+1]) * int64(d)
		vmin := math.MaxInt32
		for y := range d {
			g.si[y], g.sd[y] = em.localAt(g.z, i, y)
			vmin = min(vmin, g.si[y])
		}
		cmin := math.Inf(1)
		for y := range d {
			if g.si[y] == vmin && g.sd[y] < cmin {
				cmin = g.sd[y]
			}
		}
		for y := range d {
			a := (cmin - g.sd[y]) * em.beta
			w := 0.0
			if g.si[y] == vmin && a > expUnderflow {
				w = em.exp(a)
			}
			g.sd[y] = w
		}
		// The chunked running sums, lane by lane.
		carry := 0.0
		for cs := 0; cs < d; cs += em.g {
			accs := make([]float64, em.g)
			for l := range em.g {
				y := cs + l
				acc := carry
				if y < d {
					for q := cs; q <= y; q++ {
						acc += g.sd[q]
					}
				}
				accs[l] = acc
			}
			carry = accs[min(em.g, d-cs)-1]
			for l := range em.g {
				if y := cs + l; y < d {
					g.sd[y] = accs[l]
				}
			}
		}
		u := rng.Float64(uint32(i)) * carry
		pick := em.first(d, func(y int) bool { return u < g.sd[y] })
		if pick < 0 {
			pick = g.z[k]
		}
		g.z[k] = pick
	}
	*v, *c = em.eval(g)
	em.checks += int64(em.nf)
}

func (em *emulator) accept(dv int, dc, h float64, rng *philox.Stream, j uint32) bool {
	switch {
	case dv < 0:
		return true
	case dv > 0:
		return false
	}
	a := float64(-dc*em.beta) + h
	return a >= 0 || rng.Float64(j) < em.exp(a)
}

func (em *emulator) normal(g *egroup, rng *philox.Stream, v *int, c *float64) {
	moved := false
	for i := range em.n {
		k := em.nb + i
		x := g.z[k]
		g.old[i] = x
		g.si[i] = 0
		so := int(em.step[i])
		if so < 0 {
			continue
		}
		d := int(em.dom[k])
		s := em.dbl[so:]
		y := nstepSample(s, d, x, rng.Float64(uint32(i)))
		if y != x {
			g.sd[i] = nstepLogQ(s, d, y, x) - nstepLogQ(s, d, x, y)
			g.si[i] = 1
			g.z[k] = y
			moved = true
		}
	}
	if !moved {
		return
	}
	h := 0.0
	for i := range em.n {
		if g.si[i] != 0 {
			h += g.sd[i]
		}
	}
	if em.flags&fNoHastings != 0 {
		h = 0
	}
	v2, c2 := em.eval(g)
	em.checks += int64(em.nf)
	if em.accept(v2-*v, c2-*c, h, rng, uint32(em.n)) {
		*v, *c = v2, c2
		return
	}
	for i := range em.n {
		g.z[em.nb+i] = g.old[i]
	}
}

func nstepSample(s []float64, d, x int, u float64) int {
	lo, hi, off := 0, d-1, d-1-x
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if u < s[mid+off] {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

func nstepLogQ(s []float64, d, x, y int) float64 {
	logP := s[2*d-2:]
	logLow := logP[2*d-1:]
	logHigh := logLow[d:]
	switch y {
	case 0:
		return logLow[x]
	case d - 1:
		return logHigh[x]
	}
	return logP[y-x+d-1]
}

func (em *emulator) discrete(g *egroup, rng *philox.Stream, v *int, c *float64) {
	if em.nmov == 0 {
		return
	}
	i := int(em.mov[philox.IntN(rng.Uint32(0), uint32(em.nmov))])
	k := em.nb + i
	x := g.z[k]
	y := int(philox.IntN(rng.Uint32(1), uint32(em.dom[k]-1)))
	if y >= x {
		y++
	}
	t0, tl := int(em.touch[2*i]), int(em.touch[2*i+1])
	dv, oldC, newC := 0, 0.0, 0.0
	for t := t0; t < t0+tl; t++ {
		f, st := int(em.tlist[2*t]), int(em.tlist[2*t+1])
		base := em.findex(f, g.z) - x*st
		if co := em.fcost(f, base+x*st); mva.IsHard(co) {
			dv--
		} else {
			oldC += co
		}
		if cn := em.fcost(f, base+y*st); mva.IsHard(cn) {
			dv++
		} else {
			newC += cn
		}
	}
	dc := newC - oldC
	em.checks += 2 * int64(tl)
	if em.accept(dv, dc, 0, rng, 2) {
		g.z[k] = y
		*v += dv
		*c += dc
	}
}

// chain runs chain (row, run) of boundary values b and returns its best
// cost and interior.
func (em *emulator) chain(b []int, word, run uint32) (float64, []int) {
	g := &egroup{
		z: make([]int, em.nb+em.n), best: make([]int, em.n), old: make([]int, em.n),
		sd: make([]float64, em.scratch), si: make([]int, em.scratch),
	}
	copy(g.z, b)
	best := math.Inf(1)
	em.checks += int64(em.nconst)
	for j := range em.nconst {
		f := int(em.cons[j])
		if mva.IsHard(em.fcost(f, em.findex(f, g.z))) {
			return best, g.best
		}
	}
	var rng philox.Stream
	rng.Reset(em.key, word, run, 0)
	for i := range em.n {
		g.z[em.nb+i] = int(philox.IntN(rng.Uint32(uint32(i)), uint32(em.dom[em.nb+i])))
	}
	v, c := em.eval(g)
	em.checks += int64(em.nf)
	if v > 0 && em.repair > 0 {
		em.repairChain(g, &v, &c)
	}
	if v == 0 {
		best = c
		copy(g.best, g.z[em.nb:])
	}
	for t := 1; t <= em.trials; t++ {
		rng.Reset(em.key, word, run, uint32(t))
		switch em.kind {
		case kindGibbs:
			em.gibbs(g, &rng, &v, &c)
		case kindNormal:
			em.normal(g, &rng, &v, &c)
		default:
			em.discrete(g, &rng, &v, &c)
		}
		if v == 0 && c < best {
			if em.kind == kindDiscrete {
				v, c = em.eval(g)
				em.checks += int64(em.nf)
			}
			if c < best {
				best = c
				copy(g.best, g.z[em.nb:])
			}
		}
		if em.hist != nil && t > em.burn && t%em.thin == 0 {
			s := 0
			for i := range em.n {
				s = s*int(em.dom[em.nb+i]) + g.z[em.nb+i]
			}
			em.hist[s]++
		}
	}
	return best, g.best
}

// table fills every row of lp's table: the chains, then reduce_rows.
func (em *emulator) table(lp *mva.LocalProblem) *mva.Table {
	t, err := mva.NewTable(lp)
	if err != nil {
		panic(err)
	}
	b := make([]int, lp.NB)
	for r := range t.Rows() {
		lp.DecodeRow(r, b)
		bc := math.NaN()
		for run := range em.runs {
			c, in := em.chain(b, uint32(r), uint32(run))
			if run == 0 || c < bc {
				bc = c
				for i, v := range in {
					t.Assign[r*em.n+i] = int32(v)
				}
			}
		}
		t.Costs[r] = bc
		t.Known[r] = true
	}
	return t
}
