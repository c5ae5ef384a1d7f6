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
	if int(sp[pWords]) != len(sp) || len(mg) != nOut {
		panic("words")
	}
	fast := strings.HasPrefix(pk.kernel, "jp_fast")
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

// TestPackedLayout runs the emulated kernel on thousands of random factor
// sets, in two chunks, and requires the CPU kernel's results bit for bit.
func TestPackedLayout(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(3000) {
		r := rand.New(rand.NewPCG(seed, 1))
		nVars := 1 + r.IntN(7)
		dims := make([]int, nVars)
		for v := range dims {
			dims[v] = 1 + r.IntN(4)
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
		pk, err := pack(p, true)
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
		emulate(pk, in, got[:h], ga[:h], 0, h)
		emulate(pk, in, got[h:], ga[h:], h, int64(p.Rows())-h)
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) || ga[i] != wa[i] {
				t.Fatalf("seed %d row %d: %v %d want %v %d (%s)", seed, i, got[i], ga[i], want[i], wa[i], pk.kernel)
			}
		}
	}
}
