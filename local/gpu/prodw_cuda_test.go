//go:build cuda

package gpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// prodWSteps returns the steps d ran with jp_prodw.
func prodWSteps(t testing.TB, d *Device) int {
	t.Helper()
	var n int
	if err := d.do(context.Background(), func(o *owner) error {
		n = o.prodWSteps
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// openChoice is openWithT with options.
func openChoice(t testing.TB, o Options, c kernelChoice) *Device {
	t.Helper()
	openDevice(t, o) // skips without a device
	d, err := openWith(o, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d
}

// wideSet is the wide bucket (benchSet's "wide"): output variables 1..n
// (dims), the eliminated variable 0 of d values, one input over the
// output variables but the first and the eliminated one, one over the
// first and the eliminated one; costs drawn by cost.
func wideSet(dims []int, d int, cost func() float64) factorSet {
	s := factorSet{elim: []int{0}}
	var big, bigDims []int
	for i, dim := range dims {
		s.out = append(s.out, 1+i)
		if i > 0 {
			big, bigDims = append(big, 1+i), append(bigDims, dim)
		}
	}
	for _, sc := range []struct{ vars, dims []int }{
		{append(big, 0), append(bigDims, d)},
		{[]int{1, 0}, []int{dims[0], d}},
	} {
		f, err := local.NewFactor(sc.vars, sc.dims)
		if err != nil {
			panic(err)
		}
		for i := range f.Costs {
			f.Costs[i] = cost()
		}
		s.inputs = append(s.inputs, f)
	}
	return s
}

// TestProdWideMatchesCPU compares jp_prodw with the CPU kernel, bit for
// bit, costs and argmins: on random product buckets whose P side has at
// most pwMaxP assignments (partial tiles, one-row sides, ties, Hard rows,
// negative costs, magnitudes at the edge of the integer range, up to 20
// eliminated values, where 17 and more take the tiled kernel); on wide
// buckets whose costs sit at the packed sums' edges (the most negative
// and positive costs the host's range check lets through, Hard, every
// value tied, 1 and 16 eliminated values); through several chunks on a
// small budget; and at the default settings on the wide shape, where
// jp_prodw must be the kernel.
func TestProdWideMatchesCPU(t *testing.T) {
	all := openChoice(t, Options{}, kernelsI32Wide)
	ran := 0
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 23))
		nP, nS := 1+r.IntN(2), 1+r.IntN(4)
		d := 1 + r.IntN(20)
		mag := 9
		if seed%4 == 3 {
			mag = i32Limit/12 - 1
		}
		s := prodSet(r, nP, nS, 1+r.IntN(4), d, mag, []float64{0, 0.05, 0.4}[seed%3])
		before := prodWSteps(t, all)
		tag := fmt.Sprintf("seed %d (P %d vars, S %d, %d values, %d inputs)", seed, nP, nS, d, len(s.inputs))
		checkSet(t, all, tag, s)
		if prodWSteps(t, all) > before {
			ran++
			if d > prodMaxD {
				t.Errorf("%s: jp_prodw ran with %d eliminated values", tag, d)
			}
		}
	}
	if ran < 100 {
		t.Errorf("jp_prodw ran on %d of 300 sets only", ran)
	}

	// The packed path's edges: two inputs, so the host lets through
	// magnitudes up to i32Limit/2 - 1; sums of the most negative costs
	// are the smallest packed keys, of the most positive the largest
	// finite ones, and Hard entries clamp.
	const m = i32Limit/2 - 1
	r := rand.New(rand.NewPCG(5, 23))
	for _, c := range []struct {
		name  string
		dims  []int
		d     int
		costs []float64
	}{
		{"most negative", []int{16, 3, 5}, 16, []float64{-m}},
		{"most positive", []int{16, 3, 5}, 16, []float64{m}},
		{"both ends", []int{13, 7, 4}, 16, []float64{-m, -m + 1, m - 1, m}},
		{"ends and Hard", []int{9, 6, 6}, 15, []float64{-m, m, mva.Hard}},
		{"mostly Hard", []int{4, 4, 4, 4}, 7, []float64{-m, 0, mva.Hard, mva.Hard, mva.Hard}},
		{"one value", []int{11, 9, 9}, 1, []float64{-m, m, mva.Hard}},
		{"ties", []int{16, 8, 8}, 16, []float64{0, 1}},
	} {
		s := wideSet(c.dims, c.d, func() float64 { return c.costs[r.IntN(len(c.costs))] })
		before := prodWSteps(t, all)
		checkSet(t, all, c.name, s)
		if prodWSteps(t, all) == before {
			t.Errorf("%s: jp_prodw did not run", c.name)
		}
	}

	// 16 × 4^6 rows on a budget of 1 MiB: several chunks, each whole
	// assignments of P.
	chunked := openChoice(t, Options{Budget: 1 << 20}, kernelsI32Wide)
	for i := range 3 {
		s := wideSet([]int{16, 4, 4, 4, 4, 4, 4}, 4+i, func() float64 { return float64(r.IntN(19) - 9) })
		before := prodWSteps(t, chunked)
		checkSet(t, chunked, fmt.Sprintf("chunked set %d", i), s)
		if prodWSteps(t, chunked) == before {
			t.Errorf("chunked set %d: jp_prodw did not run", i)
		}
	}

	// The default settings: the wide shape of 10^6 rows takes jp_prodw.
	def := openDevice(t, Options{})
	for i, dims := range [][]int{{10, 10, 10, 10, 10, 10}, {7, 12, 9, 11, 10, 9}} {
		s := wideSet(dims, 10, func() float64 { return float64(r.IntN(100)) })
		before := prodWSteps(t, def)
		checkSet(t, def, fmt.Sprintf("large set %d", i), s)
		if prodWSteps(t, def) == before {
			t.Errorf("large set %d: jp_prodw did not run", i)
		}
	}
}

// emulateProdW is jp_prodw (kernels.cu) transcribed into Go over the
// packed words and the integer costs (keys, in slot order): A staged with
// the packed argmin, B per assignment of S from the listed S inputs, one
// unsigned min per value, over a launch of whole assignments of P. It
// checks the plan words and the packing against the CPU kernel without a
// GPU.
func emulateProdW(pk *packed, keys [][]int32, dst []float64, argmin []int32, row0, nrows int64) {
	sp := pk.words
	nIn, ne, nOut := int(sp[pNIn]), int(sp[pNE]), int(sp[pNOut])
	outDim := sp[pHdr+nIn:]
	D := uint32(outDim[nOut])
	ost := outDim[nOut+1:]
	est := ost[nOut*nIn:]
	mg := est[ne:]
	pw := sp[sp[7]:]
	split, S := int(pw[0]), uint32(pw[1])
	side := pw[2:]
	bw := side[nIn:]
	nB, nBR := int(bw[0]), int(bw[1+pwMaxB])
	if int(sp[pWords]) != len(sp) || len(bw) != 2+pwMaxB+pwMaxBR || D > prodMaxD {
		panic("words")
	}
	if row0%int64(S) != 0 || nrows%int64(S) != 0 {
		panic(fmt.Sprintf("launch [%d, +%d) not in assignments of P (%d rows)", row0, nrows, S))
	}
	np4 := slices.Index(kProdW[:], pk.prodKernel)
	p0 := uint32(row0 / int64(S))
	np := uint32((row0+nrows)/int64(S)) - p0
	if np4 < 1 || np > uint32(4*np4) {
		panic(fmt.Sprintf("%s for %d assignments of P", pk.prodKernel, np))
	}
	div := func(q *uint32, k int) uint32 {
		nq, r := fastDivmod(*q, uint32(outDim[k]), uint32(mg[k]))
		if nq != *q/uint32(outDim[k]) {
			panic("division")
		}
		*q = nq
		return r
	}
	as := make([]uint32, D*pwMaxP)
	for i := range uint32(4 * np4) {
		q := p0 + min(i, np-1)
		off := make([]uint32, nIn)
		for k := split - 1; k >= 0; k-- {
			d := div(&q, k)
			for j := range nIn {
				off[j] += d * uint32(ost[k*nIn+j])
			}
		}
		var c int32
		for j := ne; j < nIn; j++ {
			if side[j] != 2 {
				c += keys[j][off[j]]
			}
		}
		for e := range D {
			v := c
			for j := range ne {
				if side[j] != 2 {
					v += keys[j][off[j]+e*uint32(est[j])]
				}
			}
			v = min(v, i32Hard)
			as[e*pwMaxP+i] = uint32(v+i32Limit)<<4 | e
		}
	}
	bv := make([]uint32, D)
	for s := range S {
		q := s
		o, ro := make([]uint32, nB), make([]uint32, nBR)
		for k := nOut - 1; k >= split; k-- {
			d := div(&q, k)
			for b := range nB {
				o[b] += d * uint32(ost[k*nIn+int(bw[1+b])])
			}
			for b := range nBR {
				ro[b] += d * uint32(ost[k*nIn+int(bw[2+pwMaxB+b])])
			}
		}
		var c int32
		for b := range nBR {
			c += keys[bw[2+pwMaxB+b]][ro[b]]
		}
		for e := range D {
			v := c
			for b := range nB {
				j := bw[1+b]
				v += keys[j][o[b]+e*uint32(est[j])]
			}
			bv[e] = uint32(min(v, i32Hard)) << 4
		}
		for i := range np {
			key := ^uint32(0)
			for e := range D {
				key = min(key, as[e*pwMaxP+i]+bv[e])
			}
			r := i*S + s
			best, arg := int32(key>>4)-i32Limit, int32(key&15)
			if best >= i32Limit {
				dst[r], arg = math.Inf(1), 0
			} else {
				dst[r] = float64(best)
			}
			argmin[r] = arg
		}
	}
}

// TestProdWideLayout runs the emulated jp_prodw on random product buckets
// with a small P side and on wide buckets at the packed sums' edges, in
// two launches, and requires the CPU kernel's results bit for bit. It
// needs no device.
func TestProdWideLayout(t *testing.T) {
	ctx := context.Background()
	const m = i32Limit/2 - 1
	var sets []factorSet
	for seed := range uint64(600) {
		r := rand.New(rand.NewPCG(seed, 29))
		mag := 9
		if seed%4 == 3 {
			mag = i32Limit/12 - 1
		}
		sets = append(sets, prodSet(r, 1+r.IntN(2), 1+r.IntN(4), 1+r.IntN(4), 1+r.IntN(20), mag, []float64{0, 0.05, 0.4}[seed%3]))
	}
	r := rand.New(rand.NewPCG(1, 29))
	for _, c := range []struct {
		dims  []int
		d     int
		costs []float64
	}{
		{[]int{16, 3, 5}, 16, []float64{-m}},
		{[]int{16, 3, 5}, 16, []float64{m}},
		{[]int{13, 7, 4}, 16, []float64{-m, -m + 1, m - 1, m}},
		{[]int{9, 6, 6}, 15, []float64{-m, m, mva.Hard}},
		{[]int{4, 4, 4, 4}, 7, []float64{-m, 0, mva.Hard, mva.Hard, mva.Hard}},
		{[]int{11, 9, 9}, 1, []float64{-m, m, mva.Hard}},
		{[]int{16, 8, 8}, 16, []float64{0, 1}},
	} {
		sets = append(sets, wideSet(c.dims, c.d, func() float64 { return c.costs[r.IntN(len(c.costs))] }))
	}
	ran := 0
	for i, s := range sets {
		p, err := local.NewJoinProject(s.inputs, s.elim, s.out)
		if err != nil {
			t.Fatal(err)
		}
		pk, err := pack(p, kernelsI32Wide)
		if err != nil {
			t.Fatal(err)
		}
		if pk.prodRows == 0 || pk.prodKernel == kProd {
			continue
		}
		keys, err := i32Costs(p, pk)
		if err != nil {
			continue // the host would take doubles
		}
		ran++
		rows := int64(p.Rows())
		want := make([]float64, rows)
		wa := make([]int32, rows)
		if err := p.Run(ctx, want, wa, 1); err != nil {
			t.Fatal(err)
		}
		got := make([]float64, rows)
		ga := make([]int32, rows)
		h := rows / 2 / pk.prodRows * pk.prodRows
		emulateProdW(pk, keys, got[:h], ga[:h], 0, h)
		emulateProdW(pk, keys, got[h:], ga[h:], h, rows-h)
		for k := range want {
			if math.Float64bits(got[k]) != math.Float64bits(want[k]) || ga[k] != wa[k] {
				t.Fatalf("set %d row %d: %v %d want %v %d (%s)", i, k, got[k], ga[k], want[k], wa[k], pk.prodKernel)
			}
		}
	}
	if ran < 200 {
		t.Errorf("jp_prodw's layout checked on %d sets only", ran)
	}
}
