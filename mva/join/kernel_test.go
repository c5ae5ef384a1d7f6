package join

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/internal/cputime"
)

var hard = math.Inf(1)

// naiveJoinProject is the reference: it enumerates every output row and
// every eliminated assignment and sums the inputs in input order.
func naiveJoinProject(inputs []*Factor, elim, out []int) ([]float64, []int32) {
	dim := make([]int, 64)
	for _, f := range inputs {
		for i, v := range f.Vars {
			dim[v] = f.Dims[i]
		}
	}
	size := func(vs []int) int {
		n := 1
		for _, v := range vs {
			n *= dim[v]
		}
		return n
	}
	decode := func(idx int, vs []int, val []int) {
		for k := len(vs) - 1; k >= 0; k-- {
			val[vs[k]] = idx % dim[vs[k]]
			idx /= dim[vs[k]]
		}
	}
	rows, esize := size(out), size(elim)
	dst := make([]float64, rows)
	arg := make([]int32, rows)
	val := make([]int, 64)
	for r := 0; r < rows; r++ {
		decode(r, out, val)
		best, bi := hard, 0
		for e := 0; e < esize; e++ {
			decode(e, elim, val)
			s := 0.0
			for _, f := range inputs {
				idx := 0
				for i, v := range f.Vars {
					idx = idx*f.Dims[i] + val[v]
				}
				s += f.Costs[idx]
			}
			if s < best {
				best, bi = s, e
			}
		}
		dst[r], arg[r] = best, int32(bi)
	}
	return dst, arg
}

// randomFactors draws 1..maxIn factors of arity 0..maxArity over variables
// 0..nvars-1 with fixed dims, small integer costs (so that sums are exact
// and ties frequent) and some Hard entries, then splits the variables they
// use into out (random order) and up to maxElim eliminated ones.
func randomFactors(r *rand.Rand, nvars, maxIn, maxArity, maxDim, maxElim int) (inputs []*Factor, elim, out []int) {
	dims := make([]int, nvars)
	for v := range dims {
		dims[v] = 1 + r.IntN(maxDim)
	}
	hardProb := []float64{0, 0.1, 0.5, 0.9}[r.IntN(4)]
	used := map[int]bool{}
	for range 1 + r.IntN(maxIn) {
		ar := r.IntN(min(maxArity, nvars) + 1)
		vars := r.Perm(nvars)[:ar]
		f := &Factor{Vars: vars, Dims: make([]int, ar)}
		n := 1
		for i, v := range vars {
			f.Dims[i] = dims[v]
			n *= dims[v]
			used[v] = true
		}
		f.Costs = make([]float64, n)
		for i := range f.Costs {
			if r.Float64() < hardProb {
				f.Costs[i] = hard
			} else {
				f.Costs[i] = float64(r.IntN(6))
			}
		}
		inputs = append(inputs, f)
	}
	var all []int
	for v := range nvars {
		if used[v] {
			all = append(all, v)
		}
	}
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	ne := min(r.IntN(maxElim+1), len(all))
	return inputs, all[:ne], all[ne:]
}

func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestJoinProjectMatchesNaive(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name                                     string
		cases, nvars, maxIn, maxAr, maxDim, maxE int
	}{
		{"small", 600, 6, 4, 4, 5, 3},
		{"no-elim-or-wide", 200, 8, 4, 4, 3, 3},
		{"many-inputs", 200, 5, 8, 3, 3, 2},
		// Outputs above ParallelRows exercise the parallel path.
		{"large", 12, 4, 3, 3, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tc.cases)))
			parallel := 0
			for c := 0; c < tc.cases; c++ {
				inputs, elim, out := randomFactors(r, tc.nvars, tc.maxIn, tc.maxAr, tc.maxDim, tc.maxE)
				if tc.name == "large" {
					// Grow the output past the parallel threshold.
					inputs = append(inputs, bigFactor(r, 20, 5))
					out = append(out, 20, 21, 22, 23, 24)
				}
				p, err := NewJoinProject(inputs, elim, out)
				if err != nil {
					t.Fatalf("case %d: %v", c, err)
				}
				want, wantArg := naiveJoinProject(inputs, elim, out)
				if p.rows >= ParallelRows {
					parallel++
				}
				for _, workers := range []int{1, 3, 0} {
					dst := make([]float64, p.Rows())
					arg := make([]int32, p.Rows())
					if err := p.Run(ctx, dst, arg, workers); err != nil {
						t.Fatalf("case %d: %v", c, err)
					}
					if !sameFloats(dst, want) || !slices.Equal(arg, wantArg) {
						t.Fatalf("case %d workers %d (elim %v out %v): got %v %v, want %v %v",
							c, workers, elim, out, head(dst), head(arg), head(want), head(wantArg))
					}
					// argmin is optional and must not change dst.
					dst2 := make([]float64, p.Rows())
					if err := p.Run(ctx, dst2, nil, workers); err != nil {
						t.Fatal(err)
					}
					if !sameFloats(dst2, want) {
						t.Fatalf("case %d workers %d without argmin differs", c, workers)
					}
				}
				if got, wantReads := p.Reads(), naiveReads(inputs, elim, p); got != wantReads {
					t.Fatalf("case %d: Reads = %d, want %d", c, got, wantReads)
				}
			}
			if tc.name == "large" && parallel == 0 {
				t.Fatal("no case reached the parallel path")
			}
		})
	}
}

// bigFactor returns a factor over k fresh variables first..first+k-1 of
// dimension 7 with small integer costs.
func bigFactor(r *rand.Rand, first, k int) *Factor {
	f := &Factor{}
	n := 1
	for i := range k {
		f.Vars = append(f.Vars, first+i)
		f.Dims = append(f.Dims, 7)
		n *= 7
	}
	f.Costs = make([]float64, n)
	for i := range f.Costs {
		f.Costs[i] = float64(r.IntN(4))
	}
	return f
}

func naiveReads(inputs []*Factor, elim []int, p *JoinProject) int64 {
	var n int64
	for _, f := range inputs {
		has := false
		for _, v := range f.Vars {
			has = has || slices.Contains(elim, v)
		}
		if has {
			n += int64(p.Rows()) * int64(p.ElimSize())
		} else {
			n += int64(p.Rows())
		}
	}
	return n
}

func head[T any](s []T) []T { return s[:min(len(s), 12)] }

func TestJoinProjectHard(t *testing.T) {
	// Every option Hard: Hard and argmin 0; one feasible option wins.
	a := &Factor{Vars: []int{0, 1}, Dims: []int{2, 3}, Costs: []float64{hard, hard, hard, hard, 4, hard}}
	b := &Factor{Vars: []int{1}, Dims: []int{3}, Costs: []float64{1, 2, 3}}
	p, err := NewJoinProject([]*Factor{a, b}, []int{1}, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	dst, arg := make([]float64, 2), make([]int32, 2)
	if err := p.Run(context.Background(), dst, arg, 1); err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(dst[0], 1) || arg[0] != 0 || dst[1] != 6 || arg[1] != 1 {
		t.Fatalf("got %v %v, want [+Inf 6] [0 1]", dst, arg)
	}
	for _, c := range dst {
		if math.IsNaN(c) {
			t.Fatal("NaN")
		}
	}
}

func TestJoinProjectScalarAndEmpty(t *testing.T) {
	ctx := context.Background()
	// A zero factor joins as a no-op but still spans its variables.
	z, err := NewFactor([]int{4, 2}, []int{2, 3})
	if err != nil || len(z.Costs) != 6 {
		t.Fatalf("NewFactor = %v, %v", z, err)
	}
	if _, err := NewFactor([]int{1}, []int{0}); err == nil {
		t.Error("NewFactor with an empty domain: no error")
	}
	// No inputs: one row, cost 0.
	p, err := NewJoinProject(nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dst := []float64{42}
	if err := p.Run(ctx, dst, nil, 1); err != nil || dst[0] != 0 {
		t.Fatalf("empty join = %v, %v; want 0", dst, err)
	}
	// Constants and a full elimination to a scalar.
	c := &Factor{Costs: []float64{2.5}}
	f := &Factor{Vars: []int{7, 3}, Dims: []int{2, 2}, Costs: []float64{5, 4, 3, 9}}
	p, err = NewJoinProject([]*Factor{c, f}, []int{7, 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	arg := []int32{9}
	if err := p.Run(ctx, dst, arg, 1); err != nil || dst[0] != 5.5 || arg[0] != 2 {
		t.Fatalf("scalar = %v %v %v; want 5.5 2", dst, arg, err)
	}
}

func TestJoinProjectErrors(t *testing.T) {
	f := &Factor{Vars: []int{0, 1}, Dims: []int{2, 3}, Costs: make([]float64, 6)}
	g := &Factor{Vars: []int{1}, Dims: []int{4}, Costs: make([]float64, 4)}
	for _, tc := range []struct {
		name      string
		inputs    []*Factor
		elim, out []int
	}{
		{"dims disagree", []*Factor{f, g}, []int{1}, []int{0}},
		{"elim in no input", []*Factor{f}, []int{1, 5}, []int{0}},
		{"out in no input", []*Factor{f}, []int{1}, []int{0, 5}},
		{"variable in neither", []*Factor{f}, []int{1}, nil},
		{"variable in both", []*Factor{f}, []int{1}, []int{0, 1}},
		{"repeated out", []*Factor{f}, []int{1}, []int{0, 0}},
		{"bad table size", []*Factor{{Vars: []int{0}, Dims: []int{2}, Costs: make([]float64, 3)}}, nil, []int{0}},
		{"repeated variable", []*Factor{{Vars: []int{0, 0}, Dims: []int{2, 2}, Costs: make([]float64, 4)}}, nil, []int{0}},
		{"zero dim", []*Factor{{Vars: []int{0}, Dims: []int{0}}}, nil, []int{0}},
		{"nil input", []*Factor{nil}, nil, nil},
	} {
		if _, err := NewJoinProject(tc.inputs, tc.elim, tc.out); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}

	// The size guard: an error wrapping ErrTooLarge, not a panic.
	var vars, dims []int
	for v := range 40 {
		vars = append(vars, v)
		dims = append(dims, 10)
	}
	huge := &Factor{Vars: vars, Dims: dims}
	if _, err := NewJoinProject([]*Factor{huge}, nil, vars); err == nil {
		t.Error("10^40 entries: no error")
	}
	wide := []*Factor{{Vars: []int{0}, Dims: []int{1000}, Costs: make([]float64, 1000)},
		{Vars: []int{1}, Dims: []int{1000}, Costs: make([]float64, 1000)}}
	if _, err := NewJoinProjectLimit(wide, nil, []int{0, 1}, 1<<19); !errors.Is(err, ErrTooLarge) {
		t.Errorf("limit: got %v, want ErrTooLarge", err)
	}
	if _, err := NewJoinProjectLimit(wide, nil, []int{0, 1}, 1<<20); err != nil {
		t.Errorf("within limit: %v", err)
	}

	p, err := NewJoinProject([]*Factor{f}, []int{1}, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := p.Run(ctx, make([]float64, 3), nil, 1); err == nil {
		t.Error("short dst: no error")
	}
	if err := p.Run(ctx, make([]float64, 2), make([]int32, 1), 1); err == nil {
		t.Error("short argmin: no error")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := p.Run(cancelled, make([]float64, 2), nil, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v", err)
	}
	f.Costs = f.Costs[:5]
	if err := p.Run(ctx, make([]float64, 2), nil, 1); err == nil {
		t.Error("shrunk input: no error")
	}
}

// countdownCtx reports cancellation from its n-th call of Err on, so that
// a test can cancel a Run between blocks.
type countdownCtx struct {
	context.Context
	n atomic.Int32
}

func (c *countdownCtx) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func TestJoinProjectCancel(t *testing.T) {
	in, elim, out := benchFactors(3, 6) // 46656 rows: several blocks
	p, err := NewJoinProject(in, elim, out)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{1, 4} {
		for _, n := range []int32{0, 1, 3} {
			ctx := &countdownCtx{Context: context.Background()}
			ctx.n.Store(n)
			if err := p.Run(ctx, make([]float64, p.Rows()), nil, w); !errors.Is(err, context.Canceled) {
				t.Errorf("workers %d, cancelled after %d checks: got %v, want Canceled", w, n, err)
			}
		}
	}
}

func TestJoinProjectAllocs(t *testing.T) {
	ctx := context.Background()
	// Sizes below and above ParallelRows, so that both paths are measured.
	for _, d := range []int{4, 6, 8} {
		in, elim, out := benchFactors(3, d)
		p, err := NewJoinProject(in, elim, out)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]float64, p.Rows())
		arg := make([]int32, p.Rows())
		for _, w := range []int{1, 4} {
			allocs := testing.AllocsPerRun(5, func() {
				if err := p.Run(ctx, dst, arg, w); err != nil {
					t.Fatal(err)
				}
			})
			t.Logf("rows %d workers %d: %v allocations per Run", p.Rows(), w, allocs)
			// Goroutines and their closures only: independent of size.
			if limit := float64(2*w + 4); allocs > limit {
				t.Errorf("rows %d workers %d: %v allocations per Run, want at most %v", p.Rows(), w, allocs, limit)
			}
		}
	}
}

// benchFactors builds the benchmark shape: output variables 0..5 and the
// eliminated variable 6, all with domain d (10^6 output rows for d = 10),
// and three inputs of arity 4 that each hold the eliminated variable:
// (0,1,2,6), (2,3,4,6) and (6,4,5,0).
func benchFactors(seed uint64, d int) (inputs []*Factor, elim, out []int) {
	r := rand.New(rand.NewPCG(seed, 7))
	mk := func(vars ...int) *Factor {
		f := &Factor{Vars: vars}
		n := 1
		for range vars {
			f.Dims = append(f.Dims, d)
			n *= d
		}
		f.Costs = make([]float64, n)
		for i := range f.Costs {
			f.Costs[i] = float64(r.IntN(100))
		}
		return f
	}
	inputs = []*Factor{mk(0, 1, 2, 6), mk(2, 3, 4, 6), mk(6, 4, 5, 0)}
	return inputs, []int{6}, []int{0, 1, 2, 3, 4, 5}
}

func BenchmarkJoinProject(b *testing.B) {
	ctx := context.Background()
	in, elim, out := benchFactors(1, 10)
	p, err := NewJoinProject(in, elim, out)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]float64, p.Rows())
	arg := make([]int32, p.Rows())
	for _, w := range []int{1, 0} {
		name := fmt.Sprintf("workers=%d", w)
		if w == 0 {
			name = "workers=GOMAXPROCS"
		}
		b.Run(name, func(b *testing.B) {
			cpu0 := cputime.Used()
			for b.Loop() {
				if err := p.Run(ctx, dst, arg, w); err != nil {
					b.Fatal(err)
				}
			}
			reportThroughput(b, p, cputime.Used()-cpu0)
		})
	}
}

// reportThroughput reports output entries × eliminated values per second
// of wall time (entries*values/s) and per second of CPU time used by the
// process (entries*values/cpu-s), the per-core figure, which the other load
// of a shared machine does not lower.
func reportThroughput(b *testing.B, p *JoinProject, cpu time.Duration) {
	ev := float64(p.Rows()) * float64(p.ElimSize()) * float64(b.N)
	b.ReportMetric(ev/b.Elapsed().Seconds(), "entries*values/s")
	if cpu > 0 {
		b.ReportMetric(ev/cpu.Seconds(), "entries*values/cpu-s")
	}
}

// BenchmarkJoinProjectShapes covers the other shapes bucket elimination
// and DPOP produce: binary domains with many inputs, two eliminated
// variables, and a plain join.
func BenchmarkJoinProjectShapes(b *testing.B) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 5))
	mk := func(d int, vars ...int) *Factor {
		f := &Factor{Vars: vars}
		n := 1
		for range vars {
			f.Dims = append(f.Dims, d)
			n *= d
		}
		f.Costs = make([]float64, n)
		for i := range f.Costs {
			f.Costs[i] = float64(r.IntN(100))
		}
		return f
	}
	seq := func(n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = i
		}
		return s
	}
	for _, tc := range []struct {
		name      string
		in        []*Factor
		elim, out []int
	}{
		// 2^20 rows, x20 eliminated, six inputs.
		{"binary-6in", []*Factor{mk(2, 0, 1, 2, 3, 20), mk(2, 4, 5, 6, 7, 20), mk(2, 8, 9, 10, 11, 20),
			mk(2, 12, 13, 14, 15, 20), mk(2, 16, 17, 18, 19, 20), mk(2, 19, 0, 20)}, []int{20}, seq(20)},
		// 10^5 rows, two eliminated variables of 10.
		{"two-elim", []*Factor{mk(10, 0, 1, 5, 6), mk(10, 2, 3, 6), mk(10, 3, 4, 5, 0)}, []int{5, 6}, seq(5)},
		// 10^6 rows, no elimination.
		{"join", []*Factor{mk(10, 0, 1, 2), mk(10, 2, 3, 4), mk(10, 4, 5, 0)}, nil, seq(6)},
	} {
		p, err := NewJoinProject(tc.in, tc.elim, tc.out)
		if err != nil {
			b.Fatal(err)
		}
		dst := make([]float64, p.Rows())
		arg := make([]int32, p.Rows())
		b.Run(tc.name, func(b *testing.B) {
			cpu0 := cputime.Used()
			for b.Loop() {
				if err := p.Run(ctx, dst, arg, 1); err != nil {
					b.Fatal(err)
				}
			}
			reportThroughput(b, p, cputime.Used()-cpu0)
		})
	}
}

// TestJoinProjectManyInputs covers the loops for many inputs: every input
// holds the eliminated variable 0 and, for some, the innermost output
// variable 1, so that both the plain and the run-invariant forms run with
// up to 20 inputs (past the stack buffers).
func TestJoinProjectManyInputs(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(9, 9))
	for c := range 200 {
		dims := []int{1 + r.IntN(5), 1 + r.IntN(5), 1 + r.IntN(4), 1 + r.IntN(4)}
		var inputs []*Factor
		allVary := c%2 == 0
		for range 5 + r.IntN(16) {
			vars := []int{0}
			if allVary || r.IntN(2) == 0 {
				vars = append(vars, 1)
			}
			for _, v := range []int{2, 3} {
				if r.IntN(2) == 0 {
					vars = append(vars, v)
				}
			}
			r.Shuffle(len(vars), func(i, j int) { vars[i], vars[j] = vars[j], vars[i] })
			f := &Factor{Vars: vars}
			n := 1
			for _, v := range vars {
				f.Dims = append(f.Dims, dims[v])
				n *= dims[v]
			}
			for range n {
				if r.IntN(10) == 0 {
					f.Costs = append(f.Costs, hard)
				} else {
					f.Costs = append(f.Costs, float64(r.IntN(4)))
				}
			}
			inputs = append(inputs, f)
		}
		out := []int{2, 3, 1}
		used := map[int]bool{}
		for _, f := range inputs {
			for _, v := range f.Vars {
				used[v] = true
			}
		}
		out = slices.DeleteFunc(out, func(v int) bool { return !used[v] })
		p, err := NewJoinProject(inputs, []int{0}, out)
		if err != nil {
			t.Fatal(err)
		}
		want, wantArg := naiveJoinProject(inputs, []int{0}, out)
		dst, arg := make([]float64, p.Rows()), make([]int32, p.Rows())
		if err := p.Run(ctx, dst, arg, 1); err != nil {
			t.Fatal(err)
		}
		if !sameFloats(dst, want) || !slices.Equal(arg, wantArg) {
			t.Fatalf("case %d: got %v %v, want %v %v", c, dst, arg, want, wantArg)
		}
	}
}

// TestJoinProjectTilesMatchRuns: sumRows and the minimisation by tiles
// (short innermost output variables) give, bit for bit, what the run-by-run walk gives on the same
// plan with tiles off, on seeded binary and ternary inputs with fractional
// costs (so that a different order of the sums would show), with outputs
// past ParallelRows whose blocks start inside a tile.
func TestJoinProjectTilesMatchRuns(t *testing.T) {
	ctx := context.Background()
	tiled, minTiled := 0, 0
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 64))
		nv := 4 + r.IntN(6)
		if seed%10 == 0 {
			nv = 16 // rows past ParallelRows
		}
		dims := make([]int, nv)
		for v := range dims {
			dims[v] = 2 + r.IntN(2)*int(seed%3/2)
		}
		var inputs []*Factor
		covered := make([]bool, nv)
		for range 2 + r.IntN(5) {
			k := 1 + r.IntN(min(5, nv))
			vars := r.Perm(nv)[:k]
			f := &Factor{Vars: vars, Dims: make([]int, k)}
			n := 1
			for i, v := range vars {
				f.Dims[i] = dims[v]
				n *= dims[v]
				covered[v] = true
			}
			f.Costs = make([]float64, n)
			for i := range f.Costs {
				f.Costs[i] = r.Float64() * 10
				if r.IntN(20) == 0 {
					f.Costs[i] = hard
				}
			}
			inputs = append(inputs, f)
		}
		var all []int
		for v := range nv {
			if covered[v] {
				all = append(all, v)
			}
		}
		r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		ne := min(r.IntN(3), len(all))
		elim, out := all[:ne], all[ne:]
		p, err := NewJoinProject(inputs, elim, out)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if p.tileB == 0 {
			continue
		}
		tiled++
		runs := *p
		runs.tileB, runs.tileM, runs.rel, runs.minTiles = 0, 0, nil, false
		if p.minTiles {
			minTiled++
		}
		for _, workers := range []int{1, 3} {
			got, want := make([]float64, p.Rows()), make([]float64, p.Rows())
			gotArg, wantArg := make([]int32, p.Rows()), make([]int32, p.Rows())
			if err := p.Run(ctx, got, gotArg, workers); err != nil {
				t.Fatal(err)
			}
			if err := runs.Run(ctx, want, wantArg, workers); err != nil {
				t.Fatal(err)
			}
			if !sameFloats(got, want) || !slices.Equal(gotArg, wantArg) {
				t.Fatalf("seed %d workers %d (elim %v out %v): tiles %v %v, runs %v %v", seed, workers, elim, out, head(got), head(gotArg), head(want), head(wantArg))
			}
		}
	}
	if tiled < 60 || minTiled < 10 {
		t.Errorf("only %d of 200 plans used tiles, %d in the minimisation", tiled, minTiled)
	}
}
