//go:build cuda

package gpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/local"
)

// This test needs no device: it checks, in Go, the plan layout the kernels
// read. (The contract between local.BE and its BucketRunner is checked in
// package local, by TestRunnerContract.)

// emulate is the kernels' algorithm (kernels.cu, jp_generic, which every
// variant specialises) transcribed into Go over the packed words, with the
// input addresses replaced by the tables. It checks the layout of pack
// against the CPU kernel without a GPU.
func emulate(pk *packed, in [][]float64, dst []float64, argmin []int32, row0, nrows int64) {
	sp := pk.words
	nIn, NE := int(sp[pNIn]), int(sp[pNE])
	nOut, nElim := int(sp[pNOut]), int(sp[pNElim])
	esize := sp[pESize]
	outDim := sp[pHdr+nIn:]
	elimDim := outDim[nOut:]
	ost := elimDim[nElim:]
	est := ost[nOut*nIn:]
	mg := est[nElim*NE:]
	extra := 0
	if pk.block > 0 {
		extra = 3*nOut + 2 // jp_tile's words
	}
	if int(sp[pWords]) != len(sp) || len(mg) != nOut+extra {
		panic("words")
	}
	fast := strings.HasPrefix(pk.kernel, "jp_fast") || strings.HasPrefix(pk.kernel, "jp_tile")
	addr := make([][]float64, nIn)
	for s, j := range pk.slots {
		addr[s] = in[j]
	}
	for t := int64(0); t < nrows; t++ {
		off := make([]int64, nIn)
		q := row0 + t
		for k := nOut - 1; k >= 0; k-- {
			n := q
			d := q % outDim[k]
			q /= outDim[k]
			if fast { // the kernel divides through the magic number
				fq, fr := fastDivmod(uint32(n), uint32(outDim[k]), uint32(mg[k]))
				if int64(fq) != q || int64(fr) != d {
					panic(fmt.Sprintf("fast division of %d by %d: %d rem %d", n, outDim[k], fq, fr))
				}
			}
			for j := 0; j < nIn; j++ {
				off[j] += d * ost[k*nIn+j]
			}
		}
		c0 := 0.0
		for j := NE; j < nIn; j++ {
			c0 += addr[j][off[j]]
		}
		edig := make([]int64, nElim)
		best, arg := math.Inf(1), int64(0)
		for e := int64(0); e < esize; e++ {
			s := c0
			for j := 0; j < NE; j++ {
				s += addr[j][off[j]]
			}
			if s < best {
				best, arg = s, e
			}
			for k := nElim - 1; k >= 0; k-- {
				edig[k]++
				if edig[k] < elimDim[k] {
					for j := 0; j < NE; j++ {
						off[j] += est[k*NE+j]
					}
					break
				}
				edig[k] = 0
				for j := 0; j < NE; j++ {
					off[j] -= est[k*NE+j] * (elimDim[k] - 1)
				}
			}
		}
		dst[t] = best
		if argmin != nil {
			argmin[t] = int32(arg)
		}
	}
}

// emulateTile is jp_tile (kernels.cu) transcribed into Go: tiles of T
// rows over output variable k2, partial tiles clamped, over the launch's
// whole blocks of rows. It checks the tile words of pack and the tile
// arithmetic against the CPU kernel.
func emulateTile(pk *packed, in [][]float64, dst []float64, argmin []int32, row0, nrows int64) {
	sp := pk.words
	nIn, ne, nOut := int(sp[pNIn]), int(sp[pNE]), int(sp[pNOut])
	outDim := sp[pHdr+nIn:]
	D := outDim[nOut]
	ost := outDim[nOut+1:]
	est := ost[nOut*nIn:]
	mg := est[ne:]
	tdim := mg[nOut:]
	tmag := tdim[nOut:]
	ostr := tmag[nOut:]
	tb, b := ostr[nOut], ostr[nOut+1]
	k2 := int(sp[6])
	T := int64(tileSides[tileSide(int(outDim[k2]))])
	if !strings.HasSuffix(pk.kernel, fmt.Sprintf("_%d_k", T)) || tdim[k2] != (outDim[k2]+T-1)/T {
		panic(fmt.Sprintf("kernel %s for a tile of %d", pk.kernel, T))
	}
	if row0%b != 0 || nrows%b != 0 || b != pk.block || tb != pk.tiles {
		panic(fmt.Sprintf("launch [%d, +%d) not in blocks of %d", row0, nrows, b))
	}
	addr := make([][]float64, nIn)
	for s, j := range pk.slots {
		addr[s] = in[j]
	}
	tile0 := row0 / b * tb
	for t := range nrows / b * tb {
		off := make([]int64, nIn)
		q := uint32(tile0 + t)
		var row, x2 int64
		for k := nOut - 1; k >= 0; k-- {
			nq, r := fastDivmod(q, uint32(tdim[k]), uint32(tmag[k]))
			if int64(nq) != int64(q)/tdim[k] {
				panic("tile division")
			}
			q = nq
			d := int64(r)
			if k == k2 {
				d *= T
				x2 = d
			}
			for j := range nIn {
				off[j] += d * ost[k*nIn+j]
			}
			row += d * ostr[k]
		}
		n2 := min(T, outDim[k2]-x2)
		// at reads input slot j for tile row k, clamped as the kernel
		// does, at eliminated value e.
		at := func(j int, k, e int64) float64 {
			o := off[j] + min(k, n2-1)*ost[k2*nIn+j]
			if j < ne {
				o += e * est[j]
			}
			return addr[j][o]
		}
		for k := range n2 {
			c := 0.0
			for j := ne; j < nIn; j++ {
				c += at(j, k, 0)
			}
			best, arg := math.Inf(1), int64(0)
			for e := range D {
				s := c
				for j := range ne {
					s += at(j, k, e)
				}
				if s < best {
					best, arg = s, e
				}
			}
			r := row + k*ostr[k2] - row0
			dst[r] = best
			if argmin != nil {
				argmin[r] = int32(arg)
			}
		}
	}
}

// TestPackedLayout runs the emulated kernel on thousands of random factor
// sets, in two chunks, and requires the CPU kernel's results bit for bit.
func TestPackedLayout(t *testing.T) {
	ctx := context.Background()
	tiled := 0
	defer func() {
		if tiled < 100 {
			t.Errorf("jp_tile's layout checked on %d sets only", tiled)
		}
	}()
	for seed := range uint64(3400) {
		r := rand.New(rand.NewPCG(seed, 1))
		nVars, maxDim := 1+r.IntN(7), 4
		if seed >= 3000 { // larger domains: jp_tile's tiles of 8
			nVars, maxDim = 2+r.IntN(3), 12
		}
		dims := make([]int, nVars)
		for v := range dims {
			dims[v] = 1 + r.IntN(maxDim)
		}
		perm := r.Perm(nVars)
		ne := min(r.IntN(4), nVars)
		elim, out := perm[:ne], perm[ne:]
		covered := make([]bool, nVars)
		var ins []*local.Factor
		mk := func(vars []int) {
			fd := make([]int, len(vars))
			for i, v := range vars {
				fd[i] = dims[v]
				covered[v] = true
			}
			f, _ := local.NewFactor(vars, fd)
			for i := range f.Costs {
				if r.IntN(10) == 0 {
					f.Costs[i] = math.Inf(1)
				} else {
					f.Costs[i] = float64(r.IntN(5))
				}
			}
			ins = append(ins, f)
		}
		for range 1 + r.IntN(6) {
			mk(r.Perm(nVars)[:1+r.IntN(min(4, nVars))])
		}
		for v := range nVars {
			if !covered[v] {
				mk([]int{v})
			}
		}
		p, err := local.NewJoinProject(ins, elim, out)
		if err != nil {
			t.Fatal(err)
		}
		pk, err := pack(p, kernelsTileAlways)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, p.Rows())
		wa := make([]int32, p.Rows())
		if err := p.Run(ctx, want, wa, 1); err != nil {
			t.Fatal(err)
		}
		got := make([]float64, p.Rows())
		ga := make([]int32, p.Rows())
		in := make([][]float64, len(ins))
		for j, f := range ins {
			in[j] = f.Costs
		}
		h := int64(p.Rows()) / 2
		run := emulate
		if pk.block > 0 {
			run = emulateTile
			h = h / pk.block * pk.block // launches cover whole blocks
			tiled++
		}
		run(pk, in, got[:h], ga[:h], 0, h)
		run(pk, in, got[h:], ga[h:], h, int64(p.Rows())-h)
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) || ga[i] != wa[i] {
				t.Fatalf("seed %d row %d: %v %d want %v %d (%s)", seed, i, got[i], ga[i], want[i], wa[i], pk.kernel)
			}
		}
	}
}
