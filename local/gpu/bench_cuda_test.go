//go:build cuda

package gpu

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// The measurements behind docs/bench/gpu-kernels-<device>.csv. They run
// only when HEARTH_GPU_BENCH names the CSV file to write, on a machine
// with a GPU (scripts/cuda-setup builds the binary):
//
//	HEARTH_GPU_BENCH=out.csv ./local_gpu.test -test.run TestBenchCSV -test.v
//
// Every figure is measured in the same run as its baselines: the device's
// device-to-device copy bandwidth, the CPU kernel on one core and on all
// cores, and local.BE.

// benchRow is one line of the CSV.
type benchRow struct {
	kind, name       string
	rows, esize      int64
	entries          int64   // rows × esize
	minBytes         int64   // inputs read once + dst and argmin written once
	ms               float64 // median wall time
	baselineMS       float64
	baseline, detail string
}

func (r benchRow) record(bw float64) []string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', 5, 64) }
	ratio, gbs, frac := "", "", ""
	if r.baselineMS > 0 && r.ms > 0 {
		ratio = f(r.baselineMS / r.ms)
	}
	if r.minBytes > 0 && r.ms > 0 {
		g := float64(r.minBytes) / (r.ms * 1e6)
		gbs, frac = f(g), f(g/bw)
	}
	return []string{r.kind, r.name, strconv.FormatInt(r.rows, 10), strconv.FormatInt(r.esize, 10),
		strconv.FormatInt(r.entries, 10), f(r.ms), r.baseline, f(r.baselineMS), ratio, gbs, frac, r.detail}
}

// median runs fn n times and returns the median wall time in ms.
func median(n int, fn func() error) (float64, error) {
	ts := make([]float64, n)
	for i := range ts {
		t0 := time.Now()
		if err := fn(); err != nil {
			return 0, err
		}
		ts[i] = float64(time.Since(t0).Nanoseconds()) / 1e6
	}
	slices.Sort(ts)
	return ts[n/2], nil
}

// copyBandwidth measures cuMemcpyDtoD on two buffers of n bytes: bytes
// read plus bytes written per second, median of reps, in GB/s.
func copyBandwidth(d *Device, n int64, reps int) (float64, error) {
	var gbs float64
	err := d.do(context.Background(), func(o *owner) (err error) {
		a, err := cu.MemAlloc(n)
		if err != nil {
			return err
		}
		defer cu.MemFree(a)
		b, err := cu.MemAlloc(n)
		if err != nil {
			return err
		}
		defer cu.MemFree(b)
		if err := cu.MemsetD32(a, 0x3f800000, n/4); err != nil {
			return err
		}
		start, _ := cu.MakeEvent(cu.DefaultEvent)
		stop, _ := cu.MakeEvent(cu.DefaultEvent)
		defer cu.DestroyEvent(&start)
		defer cu.DestroyEvent(&stop)
		ts := make([]float64, reps)
		for i := range ts {
			if err := start.Record(o.streams[0]); err != nil {
				return err
			}
			if err := cu.MemcpyAsync(b, a, n, o.streams[0]); err != nil {
				return err
			}
			if err := stop.Record(o.streams[0]); err != nil {
				return err
			}
			if err := stop.Synchronize(); err != nil {
				return err
			}
			if ts[i], err = start.Elapsed(stop); err != nil {
				return err
			}
		}
		slices.Sort(ts)
		gbs = 2 * float64(n) / (ts[reps/2] * 1e6)
		return nil
	})
	return gbs, err
}

// kernelTime uploads p's inputs, then times the kernel alone over the whole
// output (one launch, output and argmin left on the device), median of
// reps, in ms.
func kernelTime(d *Device, p *local.JoinProject, reps int, choice kernelChoice) (float64, error) {
	pk, err := pack(p, choice)
	if err != nil {
		return 0, err
	}
	inputs := make([]hostSlice, len(pk.slots))
	for s, j := range pk.slots {
		c := p.Inputs()[j].Costs
		inputs[s] = hostSlice{unsafe.Pointer(&c[0]), int64(len(c)) * 8}
	}
	rows := int64(p.Rows())
	var ms float64
	err = d.do(context.Background(), func(o *owner) error {
		ms, err = launchTimed(o, pk.words, inputs, rows, pk.units(rows), o.fns[pk.kernel], len(pk.words)*8, reps, nil)
		return err
	})
	return ms, err
}

// hostSlice is a host buffer to upload: where it starts and its bytes.
type hostSlice struct {
	p     unsafe.Pointer
	bytes int64
}

// launchTimed uploads inputs[s] into the plan's slot s and the plan,
// allocates an output and an argmin of rows entries, and launches fn over
// them reps+1 times, the first to warm caches; it returns the median of
// the others in ms. read, when not nil, is given the output and the argmin
// before they go back to the pool.
func launchTimed(o *owner, words []int64, inputs []hostSlice, rows, units int64, fn cu.Function, shared, reps int, read func(dst, arg cu.DevicePtr) error) (float64, error) {
	var bufs []devBuf
	defer func() {
		for _, b := range bufs {
			o.pool.put(b)
		}
	}()
	get := func(n int64) (cu.DevicePtr, error) {
		b, err := o.pool.get(n)
		bufs = append(bufs, b)
		return b.ptr, err
	}
	words = slices.Clone(words)
	for s, in := range inputs {
		ptr, err := get(in.bytes)
		if err != nil {
			return 0, err
		}
		if err := cu.MemcpyHtoD(ptr, in.p, in.bytes); err != nil {
			return 0, err
		}
		words[pHdr+s] = int64(ptr)
	}
	plan, err := get(int64(len(words)) * 8)
	if err != nil {
		return 0, err
	}
	if err := cu.MemcpyHtoD(plan, unsafe.Pointer(&words[0]), int64(len(words))*8); err != nil {
		return 0, err
	}
	dst, err := get(rows * 8)
	if err != nil {
		return 0, err
	}
	arg, err := get(rows * 4)
	if err != nil {
		return 0, err
	}
	start, _ := cu.MakeEvent(cu.DefaultEvent)
	stop, _ := cu.MakeEvent(cu.DefaultEvent)
	defer cu.DestroyEvent(&start)
	defer cu.DestroyEvent(&stop)
	var r0 int64
	blocks := int(min((units+blockThreads-1)/blockThreads, int64(o.sms*blocksPerSM)))
	args := []unsafe.Pointer{unsafe.Pointer(&plan), unsafe.Pointer(&dst), unsafe.Pointer(&arg), unsafe.Pointer(&r0), unsafe.Pointer(&rows)}
	s := o.streams[0]
	ts := make([]float64, reps+1)
	for i := range ts {
		start.Record(s)
		if err := fn.Launch(blocks, 1, 1, blockThreads, 1, 1, shared, s, args); err != nil {
			return 0, err
		}
		stop.Record(s)
		if err := stop.Synchronize(); err != nil {
			return 0, err
		}
		if ts[i], err = start.Elapsed(stop); err != nil {
			return 0, err
		}
	}
	ts = ts[1:] // the first launch JIT-loads nothing but warms caches
	slices.Sort(ts)
	if read != nil {
		if err := read(dst, arg); err != nil {
			return 0, err
		}
	}
	return ts[reps/2], nil
}

// benchSet builds a join-project of about entries output rows × eliminated
// values: output variables of domain 10, one eliminated variable of domain
// 10. Shape "bucket" has two inputs over halves of the output plus the
// eliminated variable, a unary on it and a binary without it (small
// inputs: the arithmetic bound); "wide" has one input over the output but
// its first variable plus the eliminated one, as large as the output (the
// memory bound), and one small one.
func benchSet(shape string, entries int64, seed uint64) (*local.JoinProject, int64, error) {
	r := rand.New(rand.NewPCG(seed, 1))
	nOut := int(math.Round(math.Log10(float64(entries)))) - 1
	out := make([]int, nOut)
	for i := range out {
		out[i] = i
	}
	e := nOut
	fill := func(vars []int) *local.Factor {
		dims := make([]int, len(vars))
		for i := range dims {
			dims[i] = 10
		}
		f, _ := local.NewFactor(vars, dims)
		for i := range f.Costs {
			f.Costs[i] = float64(r.IntN(100))
		}
		return f
	}
	var in []*local.Factor
	switch shape {
	case "bucket":
		h := nOut / 2
		in = []*local.Factor{
			fill(append(slices.Clone(out[:h]), e)),
			fill(append(slices.Clone(out[h:]), e)),
			fill([]int{e}),
			fill(out[:min(2, nOut)]),
		}
	case "wide":
		in = []*local.Factor{fill(append(slices.Clone(out[1:]), e)), fill([]int{out[0], e})}
	case "many":
		// The public SPOT5 files' large buckets: a dozen small inputs,
		// each over one or two output variables and the eliminated one
		// (jp_generic).
		for j := range 12 {
			vars := []int{out[j%nOut], e}
			if j%2 == 1 && nOut > 1 {
				vars = []int{out[j%nOut], out[(j+1)%nOut], e}
			}
			in = append(in, fill(vars))
		}
	}
	p, err := local.NewJoinProjectLimit(in, []int{e}, out, 1<<31)
	if err != nil {
		return nil, 0, err
	}
	bytes := int64(p.Rows()) * 12
	for _, f := range in {
		bytes += int64(len(f.Costs)) * 8
	}
	return p, bytes, nil
}

// gridProblem is an n×n grid of variables of domain dom with random whole
// costs in [0, 100] on every edge and vertex (the GPU-DBE papers' grids),
// its columns split evenly between agents.
func gridProblem(n, dom, agents int, seed uint64) *mva.Problem {
	r := rand.New(rand.NewPCG(seed, 2))
	p := &mva.Problem{Name: fmt.Sprintf("grid-%dx%d", n, n)}
	for a := range agents {
		p.Agents = append(p.Agents, mva.Agent{Name: "a" + strconv.Itoa(a)})
	}
	labels := make([]string, dom)
	for i := range labels {
		labels[i] = strconv.Itoa(i)
	}
	for v := range n * n {
		p.Variables = append(p.Variables, mva.Variable{Name: "x" + strconv.Itoa(v), Domain: labels, Agent: v % n * agents / n})
	}
	costs := func(k int) []float64 {
		c := make([]float64, k)
		for i := range c {
			c[i] = float64(r.IntN(101))
		}
		return c
	}
	for i := range n {
		for j := range n {
			v := i*n + j
			p.Functions = append(p.Functions, mva.Function{Scope: []int{v}, Costs: costs(dom)})
			if j+1 < n {
				p.Functions = append(p.Functions, mva.Function{Scope: []int{v, v + 1}, Costs: costs(dom * dom)})
			}
			if i+1 < n {
				p.Functions = append(p.Functions, mva.Function{Scope: []int{v, v + n}, Costs: costs(dom * dom)})
			}
		}
	}
	return p
}

func TestBenchCSV(t *testing.T) {
	path := os.Getenv("HEARTH_GPU_BENCH")
	if path == "" {
		t.Skip("set HEARTH_GPU_BENCH to the CSV file to write")
	}
	ctx := context.Background()
	d := openDevice(t, Options{})
	cores := runtime.GOMAXPROCS(0)
	var rows []benchRow
	emit := func(r benchRow) {
		rows = append(rows, r)
		t.Logf("%-10s %-28s entries %-11d %9.3f ms  %s %9.3f ms", r.kind, r.name, r.entries, r.ms, r.baseline, r.baselineMS)
	}

	bw, err := copyBandwidth(d, 1<<30, 9)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s, %d SMs, %d CPU cores; DtoD copy %.1f GB/s (read + write)", d.Name(), d.sms, cores, bw)
	emit(benchRow{kind: "copy", name: "MemcpyDtoD 1GiB", minBytes: 2 << 30, ms: 2 * float64(1<<30) / (bw * 1e6), detail: d.Name()})

	// Kernel: GPU (kernel alone, and end to end with the copies) against
	// the CPU kernel on one core and on all cores.
	for _, shape := range []string{"bucket", "wide"} {
		for _, entries := range []int64{1e6, 1e7, 1e8, 1e9} {
			p, minBytes, err := benchSet(shape, entries, uint64(entries))
			if err != nil {
				t.Fatal(err)
			}
			n := int64(p.Rows())
			base := benchRow{kind: "kernel", rows: n, esize: int64(p.ElimSize()), entries: n * int64(p.ElimSize()), minBytes: minBytes}
			want := make([]float64, n)
			wantArg := make([]int32, n)
			reps := 5
			if entries >= 1e9 {
				reps = 3
			}
			cpuAll, err := median(reps, func() error { return p.Run(ctx, want, wantArg, cores) })
			if err != nil {
				t.Fatal(err)
			}
			cpu1reps := 3
			if entries >= 1e8 {
				cpu1reps = 1
			}
			cpu1, err := median(cpu1reps, func() error { return p.Run(ctx, want, wantArg, 1) })
			if err != nil {
				t.Fatal(err)
			}
			got := make([]float64, n)
			gotArg := make([]int32, n)
			poison(got, gotArg)
			if err := d.JoinProject(ctx, p, got, gotArg); err != nil { // warm-up and check
				t.Fatal(err)
			}
			if err := sameBits(shape, got, want, gotArg, wantArg); err != nil {
				t.Fatal(err)
			}
			e2e, err := median(reps, func() error { return d.JoinProject(ctx, p, got, gotArg) })
			if err != nil {
				t.Fatal(err)
			}
			kern, err := kernelTime(d, p, reps, kernelsAll)
			if err != nil {
				t.Fatal(err)
			}
			untiled, err := kernelTime(d, p, reps, kernelsNoTile)
			if err != nil {
				t.Fatal(err)
			}
			pk, err := pack(p, kernelsAll)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%s 1e%d", shape, int(math.Round(math.Log10(float64(entries)))))
			for _, r := range []benchRow{
				{name: name + " cpu 1 core", ms: cpu1},
				{name: name + fmt.Sprintf(" cpu %d cores", cores), ms: cpuAll, baseline: "cpu 1 core", baselineMS: cpu1},
				{name: name + " gpu kernel untiled", ms: untiled, baseline: "cpu all cores", baselineMS: cpuAll, detail: "jp_fast/jp_one: inputs and output on the device"},
				{name: name + " gpu kernel", ms: kern, baseline: "gpu kernel untiled", baselineMS: untiled, detail: pk.kernel + ": inputs and output on the device"},
				{name: name + " gpu end-to-end", ms: e2e, baseline: "cpu all cores", baselineMS: cpuAll, detail: "upload inputs, kernel, download dst and argmin"},
			} {
				b := base
				b.name, b.ms, b.baseline, b.baselineMS, b.detail = r.name, r.ms, r.baseline, r.baselineMS, r.detail
				emit(b)
			}
		}
	}

	// Crossover: single join-projects from 4^4 to 4^12 entries (domains
	// of 4), GPU end to end against the CPU kernel on all cores. Shape
	// "big-input" reads an input as large as the table (row × eliminated
	// value), the worst case for copies; "small-input" reads inputs over
	// half the output variables each, like most buckets.
	for _, shape := range []string{"big-input", "small-input"} {
		var sizes, gpus, cpus []float64
		for lg := 8; lg <= 24; lg += 2 {
			r := rand.New(rand.NewPCG(uint64(lg), 5))
			nOut := lg/2 - 1
			mk := func(vars []int) *local.Factor {
				dims := make([]int, len(vars))
				for i := range dims {
					dims[i] = 4
				}
				f, _ := local.NewFactor(vars, dims)
				for i := range f.Costs {
					f.Costs[i] = float64(r.IntN(50))
				}
				return f
			}
			out := make([]int, nOut)
			for i := range out {
				out[i] = i + 1
			}
			var in []*local.Factor
			if shape == "big-input" {
				in = append(in, mk(append(slices.Clone(out), 0)))
				in = append(in, mk([]int{out[0], 0}), mk([]int{out[len(out)-1], 0}))
			} else {
				h := nOut / 2
				in = append(in, mk(append(slices.Clone(out[:h]), 0)), mk(append(slices.Clone(out[h:]), 0)), mk([]int{0}))
			}
			p, err := local.NewJoinProject(in, []int{0}, out)
			if err != nil {
				t.Fatal(err)
			}
			n := int64(p.Rows())
			dst := make([]float64, n)
			arg := make([]int32, n)
			reps := 31
			cpu, err := median(reps, func() error { return p.Run(ctx, dst, arg, cores) })
			if err != nil {
				t.Fatal(err)
			}
			if err := d.JoinProject(ctx, p, dst, arg); err != nil {
				t.Fatal(err)
			}
			gpu, err := median(reps, func() error { return d.JoinProject(ctx, p, dst, arg) })
			if err != nil {
				t.Fatal(err)
			}
			entries := n * int64(p.ElimSize())
			sizes, gpus, cpus = append(sizes, float64(entries)), append(gpus, gpu), append(cpus, cpu)
			emit(benchRow{kind: "crossover", name: fmt.Sprintf("%s 4^%d", shape, lg/2), rows: n, esize: int64(p.ElimSize()), entries: entries,
				ms: gpu, baseline: "cpu all cores", baselineMS: cpu, detail: "gpu end-to-end"})
		}
		// The crossover: the smallest size from which the GPU wins at
		// every larger size measured.
		cross := int64(-1)
		for i := len(sizes) - 1; i >= 0 && gpus[i] < cpus[i]; i-- {
			cross = int64(sizes[i])
		}
		emit(benchRow{kind: "crossover", name: shape + " gpu wins from", entries: cross})
	}

	// Bucket elimination: centralised solve (whole problem) of grids and
	// random problems, GPU BE at the default threshold against local.BE
	// on all cores; the optimum and assignment must agree.
	type beCase struct {
		name string
		p    *mva.Problem
	}
	var cases []beCase
	for _, n := range []int{7, 8, 9} {
		cases = append(cases, beCase{fmt.Sprintf("grid %dx%d d5", n, n), gridProblem(n, 5, 1, uint64(n))})
	}
	for _, c := range []struct{ seed, vars int }{{1, 40}, {1, 30}} {
		cases = append(cases, beCase{fmt.Sprintf("random %d v%d d4 a3 f90", c.seed, c.vars), randprob.New(int64(c.seed), randprob.Options{
			Agents: 1, Vars: c.vars, MinDomain: 4, MaxDomain: 4, MaxArity: 3, Functions: 90, IntCosts: true, MaxCost: 100})})
	}
	for _, c := range cases {
		lp := mva.NewLocalProblem(c.p, mva.Whole(c.p))
		opts := local.BEOptions{MaxEntries: 1 << 28}
		probe, err := local.NewBE(lp, opts)
		if err != nil {
			t.Logf("%s: skipped: %v", c.name, err)
			continue
		}
		in := make([]int, lp.NumInterior())
		var want float64
		cpu, err := median(3, func() error {
			b, err := local.NewBE(lp, opts)
			if err != nil {
				return err
			}
			want, err = b.SolveRow(ctx, nil, in)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		wantIn := slices.Clone(in)
		var got float64
		gpuRun := func() error {
			b, err := NewBE(lp, d, BEOptions{BEOptions: opts})
			if err != nil {
				return err
			}
			got, err = b.SolveRow(ctx, nil, in)
			return err
		}
		if err := gpuRun(); err != nil {
			t.Fatal(err)
		}
		gpu, err := median(3, gpuRun)
		if err != nil {
			t.Fatal(err)
		}
		if got != want || !slices.Equal(in, wantIn) {
			t.Fatalf("%s: gpu %v, cpu %v", c.name, got, want)
		}
		emit(benchRow{kind: "be", name: c.name, ms: gpu, baseline: "local.BE all cores", baselineMS: cpu,
			detail: fmt.Sprintf("induced width %d; optimum %v", probe.RowWidth(), want)})
	}

	// The BE threshold: the same solves at several MinEntries.
	for _, c := range []beCase{cases[2], cases[4]} {
		lp := mva.NewLocalProblem(c.p, mva.Whole(c.p))
		opts := local.BEOptions{MaxEntries: 1 << 28}
		in := make([]int, lp.NumInterior())
		for _, m := range []int64{1 << 8, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 40} {
			ms, err := median(3, func() error {
				b, err := NewBE(lp, d, BEOptions{BEOptions: opts, MinEntries: m})
				if err != nil {
					return err
				}
				_, err = b.SolveRow(ctx, nil, in)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			emit(benchRow{kind: "be-threshold", name: fmt.Sprintf("%s min %d", c.name, m), entries: m, ms: ms, detail: "MinEntries; 1<<40 = all on the CPU"})
		}
	}

	// Eager MVA tables: a grid split between two agents, each agent's
	// table over its boundary column filled by SolveTable.
	for _, n := range []int{8, 9} {
		p := gridProblem(n, 5, 2, uint64(100+n))
		dec := mva.Decompose(p)
		for i := range dec.Subs {
			lp := mva.NewLocalProblem(p, &dec.Subs[i])
			want, err := mva.NewTable(lp)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := mva.NewTable(lp)
			opts := local.BEOptions{MaxEntries: 1 << 28}
			cpu, err := median(3, func() error {
				b, err := local.NewBE(lp, opts)
				if err != nil {
					return err
				}
				return b.SolveTable(ctx, want)
			})
			if err != nil {
				t.Fatal(err)
			}
			gpuRun := func() error {
				b, err := NewBE(lp, d, BEOptions{BEOptions: opts})
				if err != nil {
					return err
				}
				return b.SolveTable(ctx, got)
			}
			if err := gpuRun(); err != nil {
				t.Fatal(err)
			}
			gpu, err := median(3, gpuRun)
			if err != nil {
				t.Fatal(err)
			}
			for r := range want.Costs {
				if got.Costs[r] != want.Costs[r] || !slices.Equal(got.Interior(r), want.Interior(r)) {
					t.Fatalf("grid %d agent %d row %d: gpu %v, cpu %v", n, i, r, got.Costs[r], want.Costs[r])
				}
			}
			emit(benchRow{kind: "be-table", name: fmt.Sprintf("grid %dx%d d5 agent %d of 2", n, n, i), rows: int64(len(want.Costs)),
				ms: gpu, baseline: "local.BE all cores", baselineMS: cpu, detail: fmt.Sprintf("%d boundary variables", lp.NB)})
		}
	}

	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	w.Write([]string{"kind", "name", "rows", "elim_size", "entries", "ms", "baseline", "baseline_ms", "speedup", "gb_per_s", "fraction_of_dtod", "detail"})
	for _, r := range rows {
		w.Write(r.record(bw))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestProfileShape runs one kernel shape of TestBenchCSV, tiled and
// untiled, for a profiler: HEARTH_GPU_PROFILE=bucket:1e8 (or wide:1e9)
// under `ncu --kernel-name regex:jp_`.
func TestProfileShape(t *testing.T) {
	spec := os.Getenv("HEARTH_GPU_PROFILE")
	if spec == "" {
		t.Skip("set HEARTH_GPU_PROFILE to shape:entries")
	}
	shape, n, ok := strings.Cut(spec, ":")
	entries, err := strconv.ParseFloat(n, 64)
	if !ok || err != nil {
		t.Fatalf("HEARTH_GPU_PROFILE=%q: want shape:entries", spec)
	}
	d := openDevice(t, Options{})
	p, _, err := benchSet(shape, int64(entries), uint64(entries))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []kernelChoice{kernelsAll, kernelsNoTile} {
		ms, err := kernelTime(d, p, 1, c)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s choice %d: %.3f ms", spec, c, ms)
	}
}
