//go:build cuda

package gpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// These tests need no device: they check, in Go, the plan layout the
// kernels read and the contract between local.BE and its BucketRunner.

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
	if int(sp[pWords]) != len(sp) {
		panic("words")
	}
	addr := make([][]float64, nIn)
	for s, j := range pk.slots {
		addr[s] = in[j]
	}
	for t := int64(0); t < nrows; t++ {
		off := make([]int64, nIn)
		q := row0 + t
		for k := nOut - 1; k >= 0; k-- {
			d := q % outDim[k]
			q /= outDim[k]
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
		pk, err := pack(p)
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

// fakeRunner is a local.BucketRunner on the CPU that honours the contract
// strictly, as the device does: a kept output lives only in its store (the
// host copy is poisoned unless host is set), and a kept input is read from
// the store and consumed.
type fakeRunner struct {
	min                   int64
	store                 map[*float64][]float64
	steps, kept, consumed int
}

func (f *fakeRunner) Offload(p *local.JoinProject) bool {
	return int64(p.Rows())*int64(p.ElimSize()) >= f.min
}

func (f *fakeRunner) Step(ctx context.Context, p *local.JoinProject, dst []float64, argmin []int32, keep, host bool) error {
	f.steps++
	ins := p.Inputs()
	saved := make([][]float64, len(ins))
	for j, in := range ins {
		if v, ok := f.store[&in.Costs[0]]; ok {
			saved[j] = slices.Clone(in.Costs)
			copy(in.Costs, v)
			delete(f.store, &in.Costs[0])
			f.consumed++
		}
	}
	err := p.Run(ctx, dst, argmin, 1)
	for j, in := range ins {
		if saved[j] != nil {
			copy(in.Costs, saved[j])
		}
	}
	if keep {
		f.store[&dst[0]] = slices.Clone(dst)
		f.kept++
	}
	if !host {
		for i := range dst {
			dst[i] = math.NaN()
		}
	}
	return err
}

// TestRunnerContract solves random whole problems and MVA tables with
// local.BE through fakeRunner at several thresholds: results must be those
// of local.BE and every kept table consumed, which proves that
// SolveRowWith and SolveTableWith ask for the host copies they read.
func TestRunnerContract(t *testing.T) {
	ctx := context.Background()
	var total fakeRunner
	for seed := range int64(300) {
		o := randprob.Options{
			Agents: 1 + int(seed%3), Vars: 4 + int(seed%12), MinDomain: 2, MaxDomain: 2 + int(seed%4),
			MaxArity: 1 + int(seed%4), Functions: 3 + int(seed%20),
			HardProb: []float64{0, 0.05, 0.3}[seed%3], IntCosts: true, MaxCost: 9, Locality: 0.7,
		}
		p := randprob.New(seed, o)
		subs := []*mva.Subproblem{mva.Whole(p)}
		dec := mva.Decompose(p)
		for i := range dec.Subs {
			subs = append(subs, &dec.Subs[i])
		}
		for si, sub := range subs {
			lp := mva.NewLocalProblem(p, sub)
			for _, m := range []int64{-1, 8, 64, 1 << 40} {
				cpu, err := local.NewBE(lp, local.BEOptions{Workers: 1})
				if err != nil {
					t.Fatal(err)
				}
				g, _ := local.NewBE(lp, local.BEOptions{Workers: 1})
				r := &fakeRunner{min: m, store: map[*float64][]float64{}}
				tag := fmt.Sprintf("seed %d sub %d min %d", seed, si, m)
				if si == 0 {
					w := make([]int, lp.NumInterior())
					gi := make([]int, lp.NumInterior())
					wc, _ := cpu.SolveRow(ctx, nil, w)
					gc, err := g.SolveRowWith(ctx, nil, gi, r)
					if err != nil || math.Float64bits(wc) != math.Float64bits(gc) || !slices.Equal(w, gi) {
						t.Fatalf("%s: %v %v vs %v %v (%v)", tag, gc, gi, wc, w, err)
					}
				} else {
					want, err := mva.NewTable(lp)
					if err != nil {
						continue
					}
					got, _ := mva.NewTable(lp)
					if err := cpu.SolveTable(ctx, want); err != nil {
						t.Fatal(err)
					}
					if err := g.SolveTableWith(ctx, got, r); err != nil {
						t.Fatal(err)
					}
					for i := range want.Costs {
						if math.Float64bits(want.Costs[i]) != math.Float64bits(got.Costs[i]) || !slices.Equal(want.Interior(i), got.Interior(i)) {
							t.Fatalf("%s row %d", tag, i)
						}
					}
				}
				if cpu.Checks() != g.Checks() {
					t.Fatalf("%s: checks %d vs %d", tag, g.Checks(), cpu.Checks())
				}
				if len(r.store) != 0 {
					t.Fatalf("%s: %d tables left kept", tag, len(r.store))
				}
				total.steps += r.steps
				total.kept += r.kept
				total.consumed += r.consumed
			}
		}
	}
	t.Logf("steps %d kept %d consumed %d", total.steps, total.kept, total.consumed)
}
