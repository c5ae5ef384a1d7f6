//go:build cuda

package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/hearth-dcop/hearth/internal/samplertest"
	"github.com/hearth-dcop/hearth/local"
	lgpu "github.com/hearth-dcop/hearth/local/gpu"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/sampler"
)

// The tests of this file need a GPU; scripts/cuda-setup builds them into
// .gpu/sampler_gpu.test. One device serves every test (a context and the
// module's JIT compilation per test would cost more than the tests).

var (
	devOnce sync.Once
	testDev *lgpu.Device
	devErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if testDev != nil {
		if err := testDev.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "closing the device:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// device returns the shared device, skipping the test without one.
func device(t testing.TB) *lgpu.Device {
	t.Helper()
	if !lgpu.Available() {
		t.Skip("no usable CUDA device")
	}
	devOnce.Do(func() { testDev, devErr = lgpu.Open() })
	if devErr != nil {
		t.Fatal(devErr)
	}
	return testDev
}

// gpuEngine returns the GPU sampler of kinds[k] for lp under o, with g
// lanes per chain (0: the default) and the cost tables kept in global
// memory when global is set.
func gpuEngine(t testing.TB, k int, lp *mva.LocalProblem, o sampler.Options, g int, global bool) *engine {
	t.Helper()
	e, err := newEngine(kinds[k].name, lp, device(t), kinds[k].opts(o), kinds[k].kind)
	if err != nil {
		t.Fatal(err)
	}
	if g > 0 {
		pl, err := newPlan(lp, e.o, kinds[k].kind, g)
		if err != nil {
			t.Fatal(err)
		}
		e.pl = pl
	}
	if e.pl == nil {
		t.Fatalf("%s: the problem runs on the CPU", kinds[k].name)
	}
	e.forceGlobal = global
	return e
}

// gpuTable fills lp's table with e.
func gpuTable(t testing.TB, e *engine, lp *mva.LocalProblem) *mva.Table {
	t.Helper()
	tab, err := mva.NewTable(lp)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.solveTable(context.Background(), tab); err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestExpKernel: go_exp on the device is goExpAMD64 bit for bit, in both
// modes, on the probes and a million random arguments; goExpAMD64 is
// math.Exp on this host (TestExpTranscription), so the kernels' exp is the
// CPU's.
func TestExpKernel(t *testing.T) {
	d := device(t)
	xs := expProbes()
	r := rand.New(rand.NewPCG(3, 4))
	for range 1 << 20 {
		xs = append(xs, -760+780*r.Float64())
	}
	for _, mode := range []int{expFMA, expNoFMA} {
		got := make([]float64, len(xs))
		err := d.Do(context.Background(), func(w *lgpu.Owner) error {
			fn, err := w.Function(moduleKey, ptx, "exp_probe")
			if err != nil {
				return err
			}
			in, err := w.Alloc(int64(8 * len(xs)))
			if err != nil {
				return err
			}
			defer w.Free(in)
			out, err := w.Alloc(int64(8 * len(xs)))
			if err != nil {
				return err
			}
			defer w.Free(out)
			ip, op := in.Ptr(), out.Ptr()
			if err := upload(ip, xs); err != nil {
				return err
			}
			n, m := int64(len(xs)), int64(mode)
			if err := fn.Launch(256, 1, 1, 256, 1, 1, 0, w.Stream(), ptrs(&ip, &op, &n, &m)); err != nil {
				return err
			}
			if err := w.Stream().Synchronize(); err != nil {
				return err
			}
			return download(got, op)
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, x := range xs {
			want := goExpAMD64(x, mode == expFMA)
			if math.Float64bits(got[i]) != math.Float64bits(want) && !(math.IsNaN(got[i]) && math.IsNaN(want)) {
				t.Fatalf("mode %d: exp(%v) on the device %v, transcription %v", mode, x, got[i], want)
			}
		}
	}
}

// agreeCase is a problem and options on which the GPU must run the CPU's
// chains.
type agreeCase struct {
	name string
	lp   *mva.LocalProblem
	o    sampler.Options
}

func agreeCases(t testing.TB) []agreeCase {
	var cases []agreeCase
	for i, lp := range randomLocals(10) {
		cases = append(cases, agreeCase{fmt.Sprintf("random %d", i), lp, sampler.Options{Seed: uint64(i), Runs: 4, Trials: 50}})
	}
	for _, repair := range []int{0, -1} {
		cases = append(cases, agreeCase{fmt.Sprintf("hard rows repair %d", repair), samplertest.HardRows(t),
			sampler.Options{Seed: 3, Runs: 4, Trials: 300, RepairSweeps: repair}})
	}
	return append(cases,
		agreeCase{"dist σ=0.7", samplertest.DistProblem(t), sampler.Options{Seed: 4, Runs: 8, Trials: 200, StdDev: 0.7}},
		// The benchmarks' agent: 4096 rows, whole costs (exact sums).
		agreeCase{"meeting 4096 rows", samplertest.MeetingAgent(1, 4, 8, false), sampler.Options{Seed: 11, Runs: 10, Trials: 20}},
		// Fractional costs (sums in function order) at a temperature
		// where the chains move: 512 rows.
		agreeCase{"meeting fractional τ=200", samplertest.MeetingAgent(2, 3, 8, true), sampler.Options{Seed: 12, Runs: 4, Trials: 20, Temperature: 200}},
	)
}

// TestAgreesWithCPU: with the same seed the GPU runs the CPU's chains:
// every row of every table, cost and assignment, is the CPU sampler's bit
// for bit, and so are the checks, for every kind, on random problems
// (whole and fractional costs, Hard entries), the hard-rows agent with
// and without repair, and meeting-like agents of 512 and 4096 rows — over
// 20000 rows in all. Group sizes 1 to 32 and tables in global memory run
// the same chains too.
func TestAgreesWithCPU(t *testing.T) {
	rows := 0
	for _, c := range agreeCases(t) {
		for k := range kinds {
			o := withDefaults(t, c.lp, k, kinds[k].opts(c.o))
			want, checks := cpuTable(t, k, c.lp, o)
			variants := []struct {
				g      int
				global bool
			}{{0, false}, {0, true}, {1, false}, {2, false}, {8, false}, {32, true}}
			if len(want.Costs) > 100 {
				variants = variants[:2] // large: the default lanes only
			}
			for _, v := range variants {
				e := gpuEngine(t, k, c.lp, o, v.g, v.global)
				got := gpuTable(t, e, c.lp)
				if r := sameTable(got, want); r >= 0 {
					t.Fatalf("%s %s G=%d global=%v row %d: GPU %v %v, CPU %v %v", c.name, kinds[k].name, e.pl.g, v.global, r,
						got.Costs[r], got.Interior(r), want.Costs[r], want.Interior(r))
				}
				if e.checksSoFar() != checks {
					t.Fatalf("%s %s G=%d: %d checks, CPU %d", c.name, kinds[k].name, e.pl.g, e.checksSoFar(), checks)
				}
				rows += got.Rows()
			}
		}
	}
	t.Logf("%d rows agree bit for bit (exp mode %d)", rows, detectExp())
}

// TestDeviceExpDivergence bounds what happens on hosts where the kernels
// cannot use the CPU's exp (expDevice, e.g. arm64): with CUDA's exp the
// GPU's chains may leave the CPU's when a last-bit difference flips a
// draw. The test forces that mode on the 4096-row meeting agent and on
// fractional costs at a high temperature (every weight matters), and
// requires that rows which differ are still correct samples — cost equal
// to lp.Eval of the assignment — and that at most 1% differ.
func TestDeviceExpDivergence(t *testing.T) {
	cases := agreeCases(t)
	for _, c := range cases[len(cases)-2:] {
		for k := range kinds {
			o := withDefaults(t, c.lp, k, kinds[k].opts(c.o))
			want, _ := cpuTable(t, k, c.lp, o)
			e := gpuEngine(t, k, c.lp, o, 0, false)
			e.pl.setWord(hExpMode, expDevice)
			got := gpuTable(t, e, c.lp)
			diff, worse := 0, 0
			for r := range got.Costs {
				if sameTable(rowTable(got, r), rowTable(want, r)) < 0 {
					continue
				}
				diff++
				if e := evalRow(c.lp, r, got.Interior(r)); e != got.Costs[r] {
					t.Fatalf("%s %s row %d: reports %v, its assignment costs %v", c.name, kinds[k].name, r, got.Costs[r], e)
				}
				if got.Costs[r] > want.Costs[r] {
					worse++
				}
			}
			t.Logf("%s %s with CUDA's exp: %d of %d rows differ from the CPU (%d worse)", c.name, kinds[k].name, diff, len(got.Costs), worse)
			if diff*100 > len(got.Costs) {
				t.Errorf("%s %s: %d of %d rows differ", c.name, kinds[k].name, diff, len(got.Costs))
			}
		}
	}
}

// rowTable returns a one-row view of row r of t, for sameTable.
func rowTable(t *mva.Table, r int) *mva.Table {
	n := t.Local.NumInterior()
	return &mva.Table{Local: t.Local, Costs: t.Costs[r : r+1], Assign: t.Assign[r*n : (r+1)*n], Known: t.Known[r : r+1]}
}

// evalRow returns lp.Eval of a row's boundary values and an interior.
func evalRow(lp *mva.LocalProblem, row int, interior []int32) float64 {
	a := make([]int, len(lp.Vars))
	lp.DecodeRow(row, a[:lp.NB])
	for i, v := range interior {
		a[lp.NB+i] = int(v)
	}
	return lp.Eval(a)
}

// TestOptimalOnSmallProblems: enough samples find brute force's optimum on
// every row of small random agents, Hard rows included (as sampler's test
// of the same name).
func TestOptimalOnSmallProblems(t *testing.T) {
	for i, lp := range randomLocals(8) {
		if lp.NumInterior() > 5 {
			continue
		}
		want, err := mva.NewTable(lp)
		if err != nil {
			t.Fatal(err)
		}
		if err := want.Fill(context.Background(), local.NewBruteForce(lp)); err != nil {
			t.Fatal(err)
		}
		for k := range kinds {
			e := gpuEngine(t, k, lp, sampler.Options{Seed: uint64(i), Runs: 10, Trials: 300}, 0, false)
			got := gpuTable(t, e, lp)
			for r := range got.Costs {
				if got.Costs[r] != want.Costs[r] {
					t.Fatalf("problem %d %s row %d: cost %v, optimum %v", i, kinds[k].name, r, got.Costs[r], want.Costs[r])
				}
				if !mva.IsHard(got.Costs[r]) && evalRow(lp, r, got.Interior(r)) != got.Costs[r] {
					t.Fatalf("problem %d %s row %d: assignment does not cost %v", i, kinds[k].name, r, got.Costs[r])
				}
			}
		}
	}
}

// TestSolveRowAndPartialTables: SolveRow gives the table's row (the same
// chains); a table with known rows keeps them and fills the others as the
// CPU does; an agent whose boundary space no table could hold is solved
// row by row as on the CPU.
func TestSolveRowAndPartialTables(t *testing.T) {
	ctx := context.Background()
	lp := samplertest.MeetingAgent(5, 2, 6, false)
	for k := range kinds {
		o := sampler.Options{Seed: 21, Runs: 5, Trials: 40}
		e := gpuEngine(t, k, lp, o, 0, false)
		full := gpuTable(t, e, lp)
		b := make([]int, lp.NB)
		in := make([]int, lp.NumInterior())
		for _, r := range []int{0, 7, 35} {
			lp.DecodeRow(r, b)
			c, err := e.solveRow(ctx, b, in)
			if err != nil {
				t.Fatal(err)
			}
			if c != full.Costs[r] || !slices.Equal(toInt32(in), full.Interior(r)) {
				t.Fatalf("%s row %d: SolveRow %v %v, table %v %v", kinds[k].name, r, c, in, full.Costs[r], full.Interior(r))
			}
		}
		part, _ := mva.NewTable(lp)
		for r := 0; r < part.Rows(); r += 3 {
			part.Set(r, -1, make([]int, lp.NumInterior()))
		}
		if err := e.solveTable(ctx, part); err != nil {
			t.Fatal(err)
		}
		for r := range part.Costs {
			want := full.Costs[r]
			if r%3 == 0 {
				want = -1
			}
			if part.Costs[r] != want || !part.Known[r] {
				t.Fatalf("%s partial table row %d: %v, want %v", kinds[k].name, r, part.Costs[r], want)
			}
		}
	}

	// 2⁴⁰ boundary rows: the counter word is folded, as on the CPU.
	const nb = samplertest.HugeNB
	huge := samplertest.HugeBoundary(t)
	b := make([]int, nb)
	for k := range b {
		b[k] = (k*7/3 + 1) % 2
	}
	for k := range kinds {
		o := sampler.Options{Seed: 2, Runs: 3, Trials: 30}
		cpu := cpuFor(t, k, huge, o)
		wantIn := make([]int, 3)
		want, err := cpu.SolveRow(ctx, b, wantIn)
		if err != nil {
			t.Fatal(err)
		}
		e := gpuEngine(t, k, huge, o, 0, false)
		in := make([]int, 3)
		got, err := e.solveRow(ctx, b, in)
		if err != nil {
			t.Fatal(err)
		}
		if got != want || !slices.Equal(in, wantIn) || e.checksSoFar() != cpu.Checks() {
			t.Fatalf("%s huge boundary: GPU %v %v (%d checks), CPU %v %v (%d)", kinds[k].name, got, in, e.checksSoFar(), want, wantIn, cpu.Checks())
		}
	}
}

func toInt32(a []int) []int32 {
	out := make([]int32, len(a))
	for i, v := range a {
		out[i] = int32(v)
	}
	return out
}

// TestBadInputAndCancel: errors, not panics, for bad arguments; a
// cancelled context stops a solve with its error.
func TestBadInputAndCancel(t *testing.T) {
	d := device(t)
	lp := samplertest.MeetingAgent(1, 2, 4, false)
	if _, err := NewGibbs(lp, nil, sampler.Options{}); err == nil {
		t.Error("nil device accepted")
	}
	if _, err := NewMH(lp, d, sampler.Options{Proposal: "cauchy"}); err == nil {
		t.Error("unknown proposal accepted")
	}
	if _, err := NewGibbs(lp, d, sampler.Options{Temperature: -1}); err == nil {
		t.Error("negative temperature accepted")
	}
	if _, err := New("annealing", lp, d, sampler.Options{}); err == nil {
		t.Error("unknown sampler accepted")
	}
	g, err := NewGibbs(lp, d, sampler.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !g.OnDevice() {
		t.Fatal("the meeting agent runs on the CPU")
	}
	ctx := context.Background()
	in := make([]int, lp.NumInterior())
	for _, b := range [][]int{{0}, {0, 4}, {-1, 0}} {
		if _, err := g.SolveRow(ctx, b, in); err == nil {
			t.Errorf("boundary %v accepted", b)
		}
	}
	if _, err := g.SolveRow(ctx, []int{0, 0}, in[:2]); err == nil {
		t.Error("short interior accepted")
	}
	other, _ := mva.NewTable(samplertest.MeetingAgent(1, 1, 4, false))
	if err := g.SolveTable(ctx, other); err == nil {
		t.Error("another problem's table accepted")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	tab, _ := mva.NewTable(lp)
	if err := g.SolveTable(cctx, tab); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	// A closed device reports ErrClosed.
	d2, err := lgpu.Open()
	if err != nil {
		t.Fatal(err)
	}
	g2, err := NewGibbs(lp, d2, sampler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := d2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := g2.SolveTable(ctx, tab); !errors.Is(err, lgpu.ErrClosed) {
		t.Errorf("closed device: %v", err)
	}
}

// TestConcurrentCalls: a sampler is safe for concurrent use; calls from
// several goroutines (queued on the device goroutine) give the tables and
// rows of sequential calls, and the checks add up.
func TestConcurrentCalls(t *testing.T) {
	d := device(t)
	lp := samplertest.MeetingAgent(3, 2, 6, false)
	ctx := context.Background()
	for k := range kinds {
		o := kinds[k].opts(sampler.Options{Seed: 8, Runs: 4, Trials: 30})
		var s interface {
			mva.LocalSolver
			mva.TableSolver
		}
		var err error
		if k == 0 {
			s, err = NewGibbs(lp, d, o)
		} else {
			s, err = NewMH(lp, d, o)
		}
		if err != nil {
			t.Fatal(err)
		}
		want, err := mva.NewTable(lp)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SolveTable(ctx, want); err != nil {
			t.Fatal(err)
		}
		c0 := s.Checks()
		const workers = 8
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Go(func() {
				tab, _ := mva.NewTable(lp)
				if err := s.SolveTable(ctx, tab); err != nil {
					errs <- err
					return
				}
				if r := sameTable(tab, want); r >= 0 {
					errs <- fmt.Errorf("worker %d: row %d differs", w, r)
					return
				}
				b := make([]int, lp.NB)
				in := make([]int, lp.NumInterior())
				r := (w * 5) % tab.Rows()
				lp.DecodeRow(r, b)
				c, err := s.SolveRow(ctx, b, in)
				if err != nil {
					errs <- err
					return
				}
				if c != want.Costs[r] || !slices.Equal(toInt32(in), want.Interior(r)) {
					errs <- fmt.Errorf("worker %d: SolveRow(%d) %v %v, table %v %v", w, r, c, in, want.Costs[r], want.Interior(r))
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("%s: %v", kinds[k].name, err)
		}
		if got := s.Checks(); got <= workers*c0 {
			t.Errorf("%s: %d checks after %d tables and rows, one table reads %d", kinds[k].name, got, workers+1, c0)
		}
	}
}
