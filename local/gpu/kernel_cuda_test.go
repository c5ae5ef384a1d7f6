//go:build cuda

package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// openDevice opens device 0 for a test, or skips the test when the machine
// has none. The device is closed, and Close's error checked, at cleanup.
func openDevice(t testing.TB, o Options) *Device {
	t.Helper()
	if !Available() {
		t.Skip("no usable CUDA device")
	}
	d, err := OpenWith(o)
	if err != nil {
		t.Fatalf("OpenWith(%+v): %v", o, err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d
}

// factorSet is a random join-project instance.
type factorSet struct {
	inputs    []*local.Factor
	elim, out []int
}

// randomSet draws a factor set: variables with domains of minDom to maxDom,
// split into output and eliminated ones, and inputs over random scopes in
// random variable order that cover every variable, some holding no
// eliminated variable. Costs are whole numbers 0..9 (sums exact, ties
// frequent) with Hard entries at rate hard; one input may repeat.
func randomSet(r *rand.Rand, nVars, minDom, maxDom, nElim, nIn int, hard float64) factorSet {
	dims := make([]int, nVars)
	for v := range dims {
		dims[v] = minDom + r.IntN(maxDom-minDom+1)
	}
	perm := r.Perm(nVars)
	nElim = min(nElim, nVars)
	s := factorSet{elim: perm[:nElim], out: perm[nElim:]}
	r.Shuffle(len(s.out), func(i, j int) { s.out[i], s.out[j] = s.out[j], s.out[i] })
	covered := make([]bool, nVars)
	newFactor := func(vars []int) *local.Factor {
		fd := make([]int, len(vars))
		for i, v := range vars {
			fd[i] = dims[v]
			covered[v] = true
		}
		f, err := local.NewFactor(vars, fd)
		if err != nil {
			panic(err)
		}
		for i := range f.Costs {
			if r.Float64() < hard {
				f.Costs[i] = mva.Hard
			} else {
				f.Costs[i] = float64(r.IntN(10))
			}
		}
		return f
	}
	for range nIn {
		k := 1 + r.IntN(min(4, nVars))
		s.inputs = append(s.inputs, newFactor(r.Perm(nVars)[:k]))
	}
	for v := range nVars {
		if !covered[v] {
			s.inputs = append(s.inputs, newFactor([]int{v}))
		}
	}
	if len(s.inputs) > 0 && r.IntN(8) == 0 {
		s.inputs = append(s.inputs, s.inputs[r.IntN(len(s.inputs))])
	}
	return s
}

// manySet draws a bucket of n inputs that all hold the eliminated variable
// 0 (domain 2 to 4) and up to two of four output variables 1..4 (domains
// 1 to 3), plus up to two inputs without it, with costs as randomSet's.
func manySet(r *rand.Rand, n int, hard float64) factorSet {
	dims := []int{2 + r.IntN(3), 1 + r.IntN(3), 1 + r.IntN(3), 1 + r.IntN(3), 1 + r.IntN(3)}
	s := factorSet{elim: []int{0}, out: []int{1, 2, 3, 4}}
	r.Shuffle(len(s.out), func(i, j int) { s.out[i], s.out[j] = s.out[j], s.out[i] })
	add := func(vars []int) {
		r.Shuffle(len(vars), func(i, j int) { vars[i], vars[j] = vars[j], vars[i] })
		fd := make([]int, len(vars))
		for i, v := range vars {
			fd[i] = dims[v]
		}
		f, err := local.NewFactor(vars, fd)
		if err != nil {
			panic(err)
		}
		for i := range f.Costs {
			if r.Float64() < hard {
				f.Costs[i] = mva.Hard
			} else {
				f.Costs[i] = float64(r.IntN(10))
			}
		}
		s.inputs = append(s.inputs, f)
	}
	for j := range n {
		vars := []int{0}
		for _, v := range r.Perm(4)[:r.IntN(3)] {
			vars = append(vars, 1+v)
		}
		if j < 4 {
			vars = append(vars, 1+j) // every output variable in some input
		}
		add(slices.Compact(slices.Sorted(slices.Values(vars))))
	}
	for range r.IntN(3) {
		add([]int{1 + r.IntN(4)})
	}
	return s
}

// poison fills dst and argmin with values no kernel writes, so that an
// unwritten entry shows.
func poison(dst []float64, argmin []int32) {
	for i := range dst {
		dst[i] = math.NaN()
	}
	for i := range argmin {
		argmin[i] = -7
	}
}

// sameBits compares two result tables bit for bit.
func sameBits(tag string, got, want []float64, gotArg, wantArg []int32) error {
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			return fmt.Errorf("%s: row %d: gpu %v, cpu %v", tag, i, got[i], want[i])
		}
		if gotArg != nil && gotArg[i] != wantArg[i] {
			return fmt.Errorf("%s: row %d (cost %v): gpu argmin %d, cpu %d", tag, i, want[i], gotArg[i], wantArg[i])
		}
	}
	return nil
}

// checkSet runs s on the CPU and on d and requires identical results.
func checkSet(t *testing.T, d *Device, tag string, s factorSet) {
	t.Helper()
	ctx := context.Background()
	p, err := local.NewJoinProject(s.inputs, s.elim, s.out)
	if err != nil {
		t.Fatalf("%s: %v", tag, err)
	}
	want := make([]float64, p.Rows())
	wantArg := make([]int32, p.Rows())
	if err := p.Run(ctx, want, wantArg, 1); err != nil {
		t.Fatalf("%s: cpu: %v", tag, err)
	}
	got := make([]float64, p.Rows())
	gotArg := make([]int32, p.Rows())
	poison(got, gotArg)
	if err := d.JoinProject(ctx, p, got, gotArg); err != nil {
		t.Fatalf("%s: gpu: %v", tag, err)
	}
	if err := sameBits(tag, got, want, gotArg, wantArg); err != nil {
		t.Fatal(err)
	}
	// Without argmin, the costs alone.
	poison(got, nil)
	if err := d.JoinProject(ctx, p, got, nil); err != nil {
		t.Fatalf("%s: gpu without argmin: %v", tag, err)
	}
	if err := sameBits(tag+" (no argmin)", got, want, nil, nil); err != nil {
		t.Fatal(err)
	}
}

// TestKernelMatchesCPU compares the GPU kernel with the CPU kernel on
// hundreds of random factor sets covering every kernel variant: no
// eliminated variable, one held by 1 to 6 or 9 to 30 inputs, several (the generic
// odometer), scalar outputs, inputs without eliminated variables, Hard
// rows and ties, each on double and on integer costs.
func TestKernelMatchesCPU(t *testing.T) {
	fast := openDevice(t, Options{}) // skips without a device
	devs := []*Device{fast}
	for _, c := range []kernelChoice{kernelsTileAlways, kernelsNoTile, kernelsNoFast, kernelsI32Always, kernelsI32NoFast, kernelsI32Wide} {
		d, err := openWith(Options{}, c)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := d.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		devs = append(devs, d)
	}
	kinds := map[string]int{}
	for seed := range uint64(1800) {
		r := rand.New(rand.NewPCG(seed, 42))
		nVars := 1 + r.IntN(8)
		nElim, nIn := r.IntN(4), 1+r.IntN(7)
		minDom, maxDom := 1, 1+r.IntN(5)
		switch {
		case seed >= 800:
			// One eliminated variable, larger domains (jp_tile's
			// tiles of 4 and 8).
			nVars, nElim, nIn, minDom = 3+r.IntN(3), 1, 2+r.IntN(6), 2+6*int(seed%2)
			maxDom = minDom + r.IntN(5)
		case seed >= 600:
			// One eliminated variable in many inputs (jp_fastn_k).
			nVars, nElim, nIn = 2+r.IntN(3), 1, 5+r.IntN(8)
		}
		var s factorSet
		if seed >= 1600 {
			// One eliminated variable in 9 to 30 inputs (the
			// jp_fastn16 and jp_fastn32 kernels; jp_generic without
			// jp_fast).
			nVars, nElim, nIn = 5, 1, 9+r.IntN(22)
			s = manySet(r, nIn, []float64{0, 0.05, 0.4}[seed%3])
		} else {
			s = randomSet(r, nVars, minDom, maxDom, nElim, nIn, []float64{0, 0.05, 0.4}[seed%3])
		}
		if seed%5 == 4 {
			// A fraction: no integer costs for this set.
			s.inputs[0].Costs[0] += 0.5
		}
		p, err := local.NewJoinProject(s.inputs, s.elim, s.out)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range devs {
			pk, err := pack(p, d.kernels)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			kinds[pk.kernel]++
			before := i32Steps(t, d)
			checkSet(t, d, fmt.Sprintf("seed %d (%d vars, elim %v, %d inputs, %s)", seed, nVars, s.elim, len(s.inputs), pk.kernel), s)
			if i32Steps(t, d) > before {
				kinds[i32Name(pk.kernel)]++
			}
		}
	}
	for _, k := range append(slices.Clone(kernelNames), i32Kernels()[1:]...) {
		if kinds[k] < 10 {
			t.Errorf("kernel %s ran on %d sets only: %v", k, kinds[k], kinds)
		}
	}
	for _, d := range devs[len(devs)-2:] {
		if n := i32Steps(t, d); n < 500 {
			t.Errorf("integer costs in %d steps only", n)
		}
	}
}

// TestI32ManyInputs checks the integer kernels' bound on inputs: a row
// where each of n inputs is Hard sums to n*i32Hard, which fits an int32
// for n = maxI32Inputs (integer costs, +Inf as on the CPU) and not for
// one more (doubles).
func TestI32ManyInputs(t *testing.T) {
	for _, d := range []*Device{openI32(t, Options{}), openWithT(t, kernelsI32NoFast)} {
		for _, n := range []int{maxI32Inputs, maxI32Inputs + 1} {
			// Inputs over (output variable j%5, the eliminated variable
			// 5), Hard wherever their output variable is 0: the output
			// rows with variables 0..4 all 0 sum n Hard entries.
			r := rand.New(rand.NewPCG(uint64(n), 5))
			s := factorSet{elim: []int{5}, out: []int{0, 1, 2, 3, 4}}
			for j := range n {
				f, err := local.NewFactor([]int{j % 5, 5}, []int{2, 3})
				if err != nil {
					t.Fatal(err)
				}
				for i := range f.Costs {
					f.Costs[i] = float64(r.IntN(20) - 5)
					if i < 3 {
						f.Costs[i] = mva.Hard
					}
				}
				s.inputs = append(s.inputs, f)
			}
			before := i32Steps(t, d)
			checkSet(t, d, fmt.Sprintf("%d inputs", n), s)
			if got, want := i32Steps(t, d) > before, n <= maxI32Inputs; got != want {
				t.Errorf("%d inputs: integer costs %v, want %v", n, got, want)
			}
		}
	}
}

// openWithT opens a device with kernel choice c for a test (which
// openDevice skips without a device) and closes it at cleanup.
func openWithT(t testing.TB, c kernelChoice) *Device {
	t.Helper()
	openDevice(t, Options{}) // skips without a device
	d, err := openWith(Options{}, c)
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

// i32Steps returns the steps d ran on integer costs.
func i32Steps(t testing.TB, d *Device) int {
	t.Helper()
	var n int
	if err := d.do(context.Background(), func(o *owner) error {
		n = o.i32Steps
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// openI32 is openDevice with integer costs at every size.
func openI32(t testing.TB, o Options) *Device {
	t.Helper()
	openDevice(t, o) // skips without a device
	d, err := openWith(o, kernelsI32Always)
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

// TestI32Fallback checks which steps take integer costs: whole costs in
// range do, a fraction, -0, or costs whose sums could leave the range
// fall back to doubles; either way the results equal the CPU's.
func TestI32Fallback(t *testing.T) {
	d := openI32(t, Options{})
	for _, c := range []struct {
		name string
		edit func(f []*local.Factor)
		i32  bool
	}{
		{"whole", func([]*local.Factor) {}, true},
		{"negative", func(f []*local.Factor) { f[0].Costs[1] = -7 }, true},
		{"fraction", func(f []*local.Factor) { f[1].Costs[2] = 2.25 }, false},
		{"minus zero", func(f []*local.Factor) { f[0].Costs[0] = math.Copysign(0, -1) }, false},
		{"large", func(f []*local.Factor) { f[0].Costs[3] = 1 << 24 }, false},
		{"too large", func(f []*local.Factor) { f[0].Costs[3] = 1 << 40 }, false},
	} {
		r := rand.New(rand.NewPCG(11, 11))
		s := randomSet(r, 4, 3, 5, 1, 3, 0.1)
		c.edit(s.inputs)
		before := i32Steps(t, d)
		checkSet(t, d, c.name, s)
		if got := i32Steps(t, d) > before; got != c.i32 {
			t.Errorf("%s: integer costs %v, want %v", c.name, got, c.i32)
		}
	}
}

// TestKernelLargeRows checks rows past one grid (the grid-stride loop)
// and 64-bit row decoding with large domains.
func TestKernelLargeRows(t *testing.T) {
	d := openDevice(t, Options{})
	r := rand.New(rand.NewPCG(7, 7))
	for i, shape := range []struct{ vars, dom, elim, in int }{
		{12, 4, 1, 6}, {8, 9, 2, 5}, {6, 20, 1, 3},
	} {
		s := randomSet(r, shape.vars, 1, shape.dom, shape.elim, shape.in, 0.1)
		checkSet(t, d, fmt.Sprintf("shape %d", i), s)
	}
}

// TestChunked forces a budget far below the output size, so that the
// table is computed in many chunks through the two-stream pipeline, and
// compares with the CPU and with an unchunked device run.
func TestChunked(t *testing.T) {
	ctx := context.Background()
	whole := openDevice(t, Options{})
	const budget = 1 << 20
	small := openDevice(t, Options{Budget: budget})
	wholeI32, smallI32 := openI32(t, Options{}), openI32(t, Options{Budget: budget})
	r := rand.New(rand.NewPCG(3, 3))
	for i := range 6 {
		// 4^10 rows, 12 times the budget: some 50 chunks.
		s := randomSet(r, 11+i%3, 4, 4, 1+i%3, 4, 0.05)
		p, err := local.NewJoinProject(s.inputs, s.elim, s.out)
		if err != nil {
			t.Fatal(err)
		}
		if int64(p.Rows())*12 < 4*budget {
			t.Fatalf("set %d: %d rows fit the budget; the test wants many chunks", i, p.Rows())
		}
		want := make([]float64, p.Rows())
		wantArg := make([]int32, p.Rows())
		if err := p.Run(ctx, want, wantArg, 0); err != nil {
			t.Fatal(err)
		}
		devs := map[string]*Device{"whole": whole, "chunked": small, "whole i32": wholeI32, "chunked i32": smallI32}
		for name, d := range devs {
			got := make([]float64, p.Rows())
			gotArg := make([]int32, p.Rows())
			poison(got, gotArg)
			if err := d.JoinProject(ctx, p, got, gotArg); err != nil {
				t.Fatalf("set %d %s: %v", i, name, err)
			}
			if err := sameBits(fmt.Sprintf("set %d %s", i, name), got, want, gotArg, wantArg); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestErrors covers the refusals: inputs beyond the budget, plans the
// kernel does not take, wrong buffer sizes, a cancelled context and a
// closed device.
func TestErrors(t *testing.T) {
	ctx := context.Background()
	d := openDevice(t, Options{Budget: 64 << 10})
	big, err := local.NewFactor([]int{0, 1}, []int{100, 100})
	if err != nil {
		t.Fatal(err)
	}
	p, err := local.NewJoinProject([]*local.Factor{big}, []int{1}, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.JoinProject(ctx, p, make([]float64, 100), nil); !errors.Is(err, local.ErrTooLarge) {
		t.Errorf("inputs over the budget: %v, want ErrTooLarge", err)
	}
	if err := d.JoinProject(ctx, p, make([]float64, 99), nil); err == nil {
		t.Error("short dst accepted")
	}

	var many []*local.Factor
	for v := range MaxInputs + 1 {
		f, _ := local.NewFactor([]int{v}, []int{1})
		many = append(many, f)
	}
	out := make([]int, MaxInputs+1)
	for v := range out {
		out[v] = v
	}
	pm, err := local.NewJoinProject(many, nil, out)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.JoinProject(ctx, pm, make([]float64, pm.Rows()), nil); !errors.Is(err, ErrUnsupported) {
		t.Errorf("%d inputs: %v, want ErrUnsupported", len(many), err)
	}
	if Supported(pm) {
		t.Error("Supported = true for a plan with too many inputs")
	}

	small, _ := local.NewFactor([]int{0, 1}, []int{3, 3})
	ps, err := local.NewJoinProject([]*local.Factor{small}, []int{1}, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := d.JoinProject(cctx, ps, make([]float64, 3), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
	d2, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	if err := d2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d2.JoinProject(ctx, ps, make([]float64, 3), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("closed device: %v, want ErrClosed", err)
	}
	if _, err := OpenWith(Options{Ordinal: 1 << 20}); !errors.Is(err, ErrNoDevice) {
		t.Errorf("absent ordinal: %v, want ErrNoDevice", err)
	}
}

// TestChainEvicts drives a chain on a 4 MiB budget: a kept table that
// crowds out the next step's input is copied back to the host and the step
// retried on the device; a step whose input alone exceeds the budget runs
// on the CPU; and the step reading the evicted table uploads it again.
// Every result must be the CPU kernel's.
func TestChainEvicts(t *testing.T) {
	ctx := context.Background()
	d := openDevice(t, Options{Budget: 4 << 20})
	r := rand.New(rand.NewPCG(11, 11))
	factor := func(vars, dims []int) *local.Factor {
		f, err := local.NewFactor(vars, dims)
		if err != nil {
			t.Fatal(err)
		}
		for i := range f.Costs {
			f.Costs[i] = float64(r.IntN(20))
		}
		return f
	}
	plan := func(in []*local.Factor, elim, out []int) *local.JoinProject {
		p, err := local.NewJoinProject(in, elim, out)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// check runs p on the CPU over the host copies and compares.
	check := func(tag string, p *local.JoinProject, got []float64, gotArg []int32) {
		want := make([]float64, p.Rows())
		wantArg := make([]int32, p.Rows())
		if err := p.Run(ctx, want, wantArg, 0); err != nil {
			t.Fatal(err)
		}
		if err := sameBits(tag, got, want, gotArg, wantArg); err != nil {
			t.Fatal(err)
		}
	}
	c := newChain(d, -1, 0)
	// step runs p through the chain into out, the argmin table to the
	// host, and copies that table to arg.
	step := func(p *local.JoinProject, out *local.Factor, arg []int32, keep, host bool) {
		t.Helper()
		a, err := c.Step(ctx, p, out, keep, host, local.ArgminHost)
		if err != nil {
			t.Fatal(err)
		}
		copy(arg, a)
	}
	// A: a 2 MiB output kept on the device.
	pa := plan([]*local.Factor{factor([]int{0, 2}, []int{512, 2}), factor([]int{1, 2}, []int{512, 2})}, []int{2}, []int{0, 1})
	outA, argA := make([]float64, pa.Rows()), make([]int32, pa.Rows())
	fa := pa.Output(outA)
	step(pa, fa, argA, true, false)
	if len(c.res) != 1 || c.evictions != 0 {
		t.Fatalf("after A: %d kept, %d evictions", len(c.res), c.evictions)
	}
	// B: a 2 MiB input, which fits only once A's table is evicted.
	pb := plan([]*local.Factor{factor([]int{3, 4}, []int{512, 512})}, []int{4}, []int{3})
	outB, argB := make([]float64, pb.Rows()), make([]int32, pb.Rows())
	step(pb, pb.Output(outB), argB, false, true)
	if len(c.res) != 0 || c.evictions != 1 || c.onCPU != 0 {
		t.Fatalf("after B: %d kept, %d evictions, %d on the CPU", len(c.res), c.evictions, c.onCPU)
	}
	check("B", pb, outB, argB)
	check("A", pa, outA, argA) // evict copied it to the host
	// C reads A's table, from the host now.
	pc := plan([]*local.Factor{fa}, []int{1}, []int{0})
	outC, argC := make([]float64, pc.Rows()), make([]int32, pc.Rows())
	step(pc, pc.Output(outC), argC, false, true)
	check("C", pc, outC, argC)
	// D: a 4 MiB input, over the budget by itself: the CPU computes it,
	// into host memory of the chain's.
	pd := plan([]*local.Factor{factor([]int{5, 6}, []int{512, 1024})}, []int{6}, []int{5})
	fd := pd.Output(nil)
	argD := make([]int32, pd.Rows())
	step(pd, fd, argD, false, true)
	if c.onCPU != 1 {
		t.Fatalf("D: %d steps on the CPU, want 1", c.onCPU)
	}
	check("D", pd, fd.Costs, argD)
	// E: the argmin table left on the device and read entry by entry.
	pe := plan([]*local.Factor{factor([]int{7, 8}, []int{64, 16})}, []int{8}, []int{7})
	fe := pe.Output(nil)
	a, err := c.Step(ctx, pe, fe, false, true, local.ArgminAny)
	if err != nil {
		t.Fatal(err)
	}
	if a != nil || len(c.args) != 1 {
		t.Fatalf("E: argmin table on the host (%d entries), %d on the device", len(a), len(c.args))
	}
	argE := make([]int32, pe.Rows())
	for i := range argE {
		if argE[i], err = c.Argmin(pe, i); err != nil {
			t.Fatal(err)
		}
	}
	check("E", pe, fe.Costs, argE)
	if err := c.end(); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentCallers has several goroutines share one Device, as
// solvers of different agents do; run it under -race.
func TestConcurrentCallers(t *testing.T) {
	d := openDevice(t, Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			ctx := context.Background()
			for i := range 40 {
				r := rand.New(rand.NewPCG(uint64(g), uint64(i)))
				s := randomSet(r, 2+r.IntN(6), 1, 5, r.IntN(3), 1+r.IntN(5), 0.1)
				p, err := local.NewJoinProject(s.inputs, s.elim, s.out)
				if err != nil {
					errs <- err
					return
				}
				want := make([]float64, p.Rows())
				wantArg := make([]int32, p.Rows())
				if err := p.Run(ctx, want, wantArg, 1); err != nil {
					errs <- err
					return
				}
				got := make([]float64, p.Rows())
				gotArg := make([]int32, p.Rows())
				poison(got, gotArg)
				if err := d.JoinProject(ctx, p, got, gotArg); err != nil {
					errs <- err
					return
				}
				if err := sameBits(fmt.Sprintf("goroutine %d call %d", g, i), got, want, gotArg, wantArg); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
