package local_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// fakeRunner is a BucketRunner on the CPU that honours the contract
// strictly, as the device does: a kept output lives only in its store (the
// host table is poisoned, or left nil, unless host is set), a kept input
// is read from the store and consumed, host memory it hands out is
// poisoned first, and ArgminAny tables are kept in the runner.
type fakeRunner struct {
	min                   int64
	store                 map[*local.Factor][]float64
	args                  map[*local.JoinProject][]int32
	steps, kept, consumed int
}

func (f *fakeRunner) Offload(p *local.JoinProject) bool {
	return int64(p.Rows())*int64(p.ElimSize()) >= f.min
}

func (f *fakeRunner) Step(ctx context.Context, p *local.JoinProject, out *local.Factor, keep, host bool, arg local.ArgminMode) ([]int32, error) {
	f.steps++
	ins := p.Inputs()
	saved := make([][]float64, len(ins))
	for j, in := range ins {
		if v, ok := f.store[in]; ok {
			saved[j] = in.Costs
			in.Costs = v
			delete(f.store, in)
			f.consumed++
		}
	}
	dst := out.Costs
	if dst == nil {
		dst = make([]float64, p.Rows())
	}
	argmin := make([]int32, p.Rows())
	for i := range dst {
		dst[i], argmin[i] = math.NaN(), -7
	}
	err := p.Run(ctx, dst, argmin, 1)
	for j, in := range ins {
		if saved[j] != nil {
			in.Costs = saved[j]
		}
	}
	if keep {
		f.store[out] = slices.Clone(dst)
		f.kept++
	}
	if host {
		out.Costs = dst
	} else {
		for i := range dst {
			dst[i] = math.NaN()
		}
	}
	switch arg {
	case local.ArgminHost:
		return argmin, err
	case local.ArgminAny:
		f.args[p] = argmin
	}
	return nil, err
}

func (f *fakeRunner) Argmin(p *local.JoinProject, i int) (int32, error) {
	a, ok := f.args[p]
	if !ok {
		return 0, fmt.Errorf("no argmin table kept for %v", p.Out())
	}
	return a[i], nil
}

// TestRunnerContract solves random whole problems and MVA tables with
// BE through fakeRunner at several thresholds: results must be those
// of BE and every kept table consumed, which proves that
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
				r := &fakeRunner{min: m, store: map[*local.Factor][]float64{}, args: map[*local.JoinProject][]int32{}}
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
