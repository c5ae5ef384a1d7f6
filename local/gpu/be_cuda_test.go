//go:build cuda

package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/format"
)

// thresholds are the MinEntries the BE tests run with: everything on the
// GPU, a mix (small buckets on the CPU, whose outputs GPU buckets read and
// the other way round), and the default.
var thresholds = []int64{-1, 24, DefaultMinEntries}

// compareWhole solves lp (a whole problem) with local.BE and with BE on d
// at every threshold and requires the same cost, bit for bit, and the same
// assignment.
func compareWhole(t *testing.T, d *Device, tag string, lp *mva.LocalProblem) {
	t.Helper()
	ctx := context.Background()
	cpu, err := local.NewBE(lp, local.BEOptions{})
	if err != nil {
		if errors.Is(err, local.ErrTooLarge) {
			t.Logf("%s: skipped: %v", tag, err)
			return
		}
		t.Fatalf("%s: %v", tag, err)
	}
	ni := lp.NumInterior()
	b := make([]int, lp.NB)
	want := make([]int, ni)
	wc, err := cpu.SolveRow(ctx, b, want)
	if err != nil {
		t.Fatalf("%s: cpu: %v", tag, err)
	}
	for _, m := range thresholds {
		g, err := NewBE(lp, d, BEOptions{MinEntries: m})
		if err != nil {
			t.Fatalf("%s: %v", tag, err)
		}
		got := make([]int, ni)
		gc, err := g.SolveRow(ctx, b, got)
		if err != nil {
			t.Fatalf("%s (min %d): gpu: %v", tag, m, err)
		}
		if math.Float64bits(gc) != math.Float64bits(wc) || !slices.Equal(got, want) {
			t.Fatalf("%s (min %d): gpu %v %v, cpu %v %v", tag, m, gc, got, wc, want)
		}
		if g.Checks() != cpu.Checks() {
			t.Fatalf("%s (min %d): gpu counts %d checks, cpu %d", tag, m, g.Checks(), cpu.Checks())
		}
	}
}

// compareTable fills lp's MVA table with local.BE and with BE on d at every
// threshold and requires every row's cost (bit for bit) and interior
// assignment to agree.
func compareTable(t *testing.T, d *Device, tag string, lp *mva.LocalProblem) {
	t.Helper()
	ctx := context.Background()
	cpu, err := local.NewBE(lp, local.BEOptions{})
	if err != nil {
		if errors.Is(err, local.ErrTooLarge) {
			t.Logf("%s: skipped: %v", tag, err)
			return
		}
		t.Fatalf("%s: %v", tag, err)
	}
	want, err := mva.NewTable(lp)
	if err != nil {
		t.Logf("%s: skipped: %v", tag, err)
		return
	}
	if err := cpu.SolveTable(ctx, want); err != nil {
		if errors.Is(err, local.ErrTooLarge) {
			t.Logf("%s: skipped: %v", tag, err)
			return
		}
		t.Fatalf("%s: cpu: %v", tag, err)
	}
	for _, m := range thresholds {
		g, err := NewBE(lp, d, BEOptions{MinEntries: m})
		if err != nil {
			t.Fatalf("%s: %v", tag, err)
		}
		got, _ := mva.NewTable(lp)
		for i := range got.Costs {
			got.Costs[i] = math.NaN()
		}
		if err := g.SolveTable(ctx, got); err != nil {
			t.Fatalf("%s (min %d): gpu: %v", tag, m, err)
		}
		for r := range want.Costs {
			if math.Float64bits(got.Costs[r]) != math.Float64bits(want.Costs[r]) || !got.Known[r] ||
				!slices.Equal(got.Interior(r), want.Interior(r)) {
				t.Fatalf("%s (min %d) row %d: gpu %v %v, cpu %v %v", tag, m, r, got.Costs[r], got.Interior(r), want.Costs[r], want.Interior(r))
			}
		}
	}
}

// TestBEWholeRandom compares centralised solving on hundreds of seeded
// random problems, large enough that buckets reach the GPU.
func TestBEWholeRandom(t *testing.T) {
	d32 := openI32(t, Options{})
	for _, d := range []*Device{openDevice(t, Options{}), d32} {
		beWholeRandom(t, d)
	}
	if i32Steps(t, d32) == 0 {
		t.Fatal("no step on integer costs")
	}
}

func beWholeRandom(t *testing.T, d *Device) {
	for seed := range int64(300) {
		o := randprob.Options{
			Agents: 1, Vars: 4 + int(seed%12), MinDomain: 2, MaxDomain: 2 + int(seed%5),
			MaxArity: 1 + int(seed%4), Functions: 3 + int(seed%20),
			HardProb: []float64{0, 0.05, 0.3}[seed%3], IntCosts: true, MaxCost: 9,
		}
		p := randprob.New(seed, o)
		compareWhole(t, d, fmt.Sprintf("seed %d", seed), mva.NewLocalProblem(p, mva.Whole(p)))
	}
}

// TestBETablesRandom compares every agent's eager MVA table on hundreds of
// seeded random decomposed problems.
func TestBETablesRandom(t *testing.T) {
	for _, d := range []*Device{openDevice(t, Options{}), openI32(t, Options{})} {
		beTablesRandom(t, d)
	}
}

func beTablesRandom(t *testing.T, d *Device) {
	checked := 0
	for seed := range int64(200) {
		o := randprob.Options{
			Agents: 2 + int(seed%3), Vars: 6 + int(seed%14), MinDomain: 2, MaxDomain: 2 + int(seed%4),
			MaxArity: 1 + int(seed%4), Functions: 4 + int(seed%24),
			HardProb: []float64{0, 0.1, 0.25}[seed%3], IntCosts: true, MaxCost: 9,
			Locality: 0.7,
		}
		p := randprob.New(seed, o)
		dec := mva.Decompose(p)
		for i := range dec.Subs {
			compareTable(t, d, fmt.Sprintf("seed %d agent %d", seed, i), mva.NewLocalProblem(p, &dec.Subs[i]))
			checked++
		}
	}
	if checked < 400 {
		t.Fatalf("only %d subproblems checked", checked)
	}
}

// TestBEChunked runs BE with a device budget so small that large buckets
// are computed in chunks and cannot stay on the device.
func TestBEChunked(t *testing.T) {
	d32 := openI32(t, Options{Budget: 1 << 20})
	for _, d := range []*Device{openDevice(t, Options{Budget: 1 << 20}), d32} {
		beChunked(t, d)
	}
	if i32Steps(t, d32) == 0 {
		t.Fatal("no step on integer costs")
	}
}

func beChunked(t *testing.T, d *Device) {
	for seed := range int64(20) {
		p := randprob.New(1000+seed, randprob.Options{
			Agents: 1, Vars: 16, MinDomain: 3, MaxDomain: 5, MaxArity: 3, Functions: 30,
			HardProb: 0.05, IntCosts: true, MaxCost: 20,
		})
		compareWhole(t, d, fmt.Sprintf("seed %d", seed), mva.NewLocalProblem(p, mva.Whole(p)))
	}
}

// TestBETestdata compares the whole-problem optimum and every row of every
// agent's MVA table (three agents by mva.Partition) on the .wcsp files of
// testdata/.
func TestBETestdata(t *testing.T) {
	for _, d := range []*Device{openDevice(t, Options{}), openI32(t, Options{})} {
		beTestdata(t, d)
		t.Logf("%d steps on integer costs", i32Steps(t, d))
	}
}

func beTestdata(t *testing.T, d *Device) {
	files, err := filepath.Glob("../../testdata/*.wcsp")
	if err != nil || len(files) == 0 {
		t.Fatalf("no .wcsp files in testdata: %v", err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		p, err := format.ReadFile(f, format.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		compareWhole(t, d, name, mva.NewLocalProblem(p, mva.Whole(p)))
		pa, err := format.ReadFile(f, format.Options{Agents: 3})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		dec := mva.Decompose(pa)
		for i := range dec.Subs {
			compareTable(t, d, fmt.Sprintf("%s agent %d", name, i), mva.NewLocalProblem(pa, &dec.Subs[i]))
		}
	}
}

// TestBEPublicFiles compares the whole-problem optimum and assignment on
// the .wcsp files of the folder HEARTH_GPU_WCSP (../shared/data/wcsp: the
// public FABE and GpuBE instances, too large for the default suite) at
// every threshold: on the default device, with integer costs at every
// size (jp_prod, or jp_prodw wherever it fits), and with a 64 MiB budget
// that forces large buckets through chunks.
func TestBEPublicFiles(t *testing.T) {
	dir := os.Getenv("HEARTH_GPU_WCSP")
	if dir == "" {
		t.Skip("set HEARTH_GPU_WCSP to a folder of .wcsp files")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.wcsp"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no .wcsp files in %s: %v", dir, err)
	}
	devs := map[string]*Device{
		"default": openDevice(t, Options{}), "i32": openI32(t, Options{}),
		"chunked": openDevice(t, Options{Budget: 64 << 20}), "chunked i32": openI32(t, Options{Budget: 64 << 20}),
		"i32 wide": openWithT(t, kernelsI32Wide),
	}
	for _, f := range files {
		p, err := format.ReadFile(f, format.Options{})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for name, d := range devs {
			before, prodBefore, wideBefore := i32Steps(t, d), prodSteps(t, d), prodWSteps(t, d)
			compareWhole(t, d, filepath.Base(f)+" "+name, mva.NewLocalProblem(p, mva.Whole(p)))
			t.Logf("%s %s: %d steps on integer costs, %d of them products (jp_prod), %d small-P products (jp_prodw)",
				filepath.Base(f), name, i32Steps(t, d)-before, prodSteps(t, d)-prodBefore, prodWSteps(t, d)-wideBefore)
		}
	}
}

// TestStartup logs what a process pays on the device: Open (context,
// module load, warm-up), three whole solves of two testdata files in a
// row (the first must cost what the later ones do: the warm-up took the
// lazy costs), and Close. It asserts the solves' agreement with the CPU,
// not their times.
func TestStartup(t *testing.T) {
	if testing.Short() {
		t.Skip("timing log")
	}
	if !Available() {
		t.Skip("no usable CUDA device")
	}
	t0 := time.Now()
	d, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Open %v on %s", time.Since(t0), d.Name())
	ctx := context.Background()
	for _, name := range []string{"gpube_8queens.wcsp", "fabe_spot5_29.wcsp", "fabe_spot5_404.wcsp"} {
		p, err := format.ReadFile(filepath.Join("../../testdata", name), format.Options{})
		if err != nil {
			t.Fatal(err)
		}
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		cpu, err := local.NewBE(lp, local.BEOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := make([]int, lp.NumInterior())
		wc, err := cpu.SolveRow(ctx, nil, want)
		if err != nil {
			t.Fatal(err)
		}
		var times []time.Duration
		for range 3 {
			t1 := time.Now()
			g, err := NewBE(lp, d, BEOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := make([]int, lp.NumInterior())
			gc, err := g.SolveRow(ctx, nil, got)
			if err != nil {
				t.Fatal(err)
			}
			times = append(times, time.Since(t1))
			if math.Float64bits(gc) != math.Float64bits(wc) || !slices.Equal(got, want) {
				t.Fatalf("%s: gpu %v, cpu %v", name, gc, wc)
			}
		}
		t.Logf("%s: solves %v", name, times)
	}
	t2 := time.Now()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Close %v", time.Since(t2))
}
