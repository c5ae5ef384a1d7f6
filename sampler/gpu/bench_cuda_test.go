//go:build cuda

package gpu

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/internal/samplertest"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/sampler"
)

// The measurements behind docs/bench/gpu-samplers-<device>.csv. They run
// only when HEARTH_GPU_BENCH names the CSV file to write, on a machine with
// a GPU (scripts/cuda-setup builds the binary):
//
//	HEARTH_GPU_BENCH=out.csv ./sampler_gpu.test -test.run TestBenchCSV -test.v
//
// Each line is one sampler on one meeting-like agent's MVA table (10
// interior variables of 12 values, 70% of their pairs constrained, whole
// costs; 4096 to 1M rows): the GPU's whole SolveTable (upload, kernels,
// the copy back) against package sampler's CPU sampler on one worker and
// on every core, measured in the same run, as samples (trials: Gibbs
// sweeps or MH proposals, runs × trials per row) per second. The CPU
// samplers run on a prefix of the rows sized for about half a second
// (every row costs the same); their rows are then compared with the GPU's.

type benchLine struct {
	sampler               string
	rows, runs, trials    int
	lanes                 int
	tables                string
	gpuMS                 float64
	gpuRate, cpu1, cpuAll float64
	cpuRows, agree        int
	note                  string
}

func (b benchLine) record(device string) []string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', 5, 64) }
	x1, xa := "", ""
	if b.cpu1 > 0 {
		x1 = f(b.gpuRate / b.cpu1)
	}
	if b.cpuAll > 0 {
		xa = f(b.gpuRate / b.cpuAll)
	}
	return []string{device, b.sampler, strconv.Itoa(b.rows), strconv.Itoa(b.runs), strconv.Itoa(b.trials),
		strconv.Itoa(b.lanes), b.tables, f(b.gpuMS), f(b.gpuRate), f(b.cpu1), f(b.cpuAll),
		strconv.Itoa(runtime.GOMAXPROCS(0)), x1, xa, strconv.Itoa(b.cpuRows), strconv.Itoa(b.agree), b.note}
}

// cpuRate measures the CPU sampler of kinds[k] with the given workers on a
// prefix of lp's rows sized for about target, and returns its samples per
// second and the table (rows past the prefix unknown).
func cpuRate(t *testing.T, k int, lp *mva.LocalProblem, o sampler.Options, workers int, target time.Duration) (float64, *mva.Table, int) {
	t.Helper()
	o.Workers = workers
	s := cpuFor(t, k, lp, o)
	rows, _ := lp.Rows()
	run := func(m int) (time.Duration, *mva.Table) {
		tab, _ := mva.NewTable(lp)
		for r := m; r < rows; r++ {
			tab.Known[r] = true
		}
		t0 := time.Now()
		if err := s.SolveTable(context.Background(), tab); err != nil {
			t.Fatal(err)
		}
		return time.Since(t0), tab
	}
	m := min(rows, 16*max(workers, runtime.GOMAXPROCS(0)))
	el, _ := run(m)
	m = min(rows, max(m, int(float64(m)*target.Seconds()/max(el.Seconds(), 1e-6))))
	el, tab := run(m)
	o = s.Options()
	return float64(m*o.Runs*o.Trials) / el.Seconds(), tab, m
}

// gpuRun times SolveTable of e on lp's whole table: the median of reps
// (fewer when one takes long), and returns the last table.
func gpuRun(t *testing.T, e *engine, lp *mva.LocalProblem) (float64, *mva.Table) {
	t.Helper()
	var ts []float64
	var tab *mva.Table
	for rep := 0; rep < 3; rep++ {
		tab, _ = mva.NewTable(lp)
		t0 := time.Now()
		if err := e.solveTable(context.Background(), tab); err != nil {
			t.Fatal(err)
		}
		ts = append(ts, float64(time.Since(t0).Nanoseconds())/1e6)
		if ts[0] > 1500 {
			break
		}
	}
	slices.Sort(ts)
	return ts[len(ts)/2], tab
}

func TestBenchCSV(t *testing.T) {
	path := os.Getenv("HEARTH_GPU_BENCH")
	if path == "" {
		t.Skip("set HEARTH_GPU_BENCH to the CSV file to write")
	}
	d := device(t)
	t.Logf("%s, %d CPU cores, exp mode %d", d.Name(), runtime.GOMAXPROCS(0), detectExp())
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := csv.NewWriter(f)
	write := func(rec []string) {
		// Line by line, so that a run cut short keeps what it measured.
		_ = w.Write(rec)
		w.Flush()
		if err := w.Error(); err != nil {
			t.Fatal(err)
		}
	}
	write([]string{"device", "sampler", "rows", "runs", "trials", "lanes", "tables", "gpu_ms",
		"gpu_samples_per_s", "cpu_1core_samples_per_s", "cpu_allcores_samples_per_s", "cpu_cores",
		"x_over_1core", "x_over_allcores", "cpu_rows_measured", "cpu_rows_identical", "note"})

	type variant struct {
		g      int
		global bool
	}
	measure := func(k int, lp *mva.LocalProblem, o sampler.Options, vs []variant, note string) {
		rows, _ := lp.Rows()
		var c1, ca float64
		var cpuTab *mva.Table
		var m int
		for vi, v := range vs {
			e := gpuEngine(t, k, lp, o, v.g, v.global)
			ms, tab := gpuRun(t, e, lp)
			threads, shared, tables := e.geo.threads, e.geo.shared, e.geo.tables
			if vi == 0 {
				c1, cpuTab, m = cpuRate(t, k, lp, o, 1, 500*time.Millisecond)
				ca, _, _ = cpuRate(t, k, lp, o, 0, 500*time.Millisecond)
			}
			agree := 0
			for r := range m {
				if sameTable(rowTable(tab, r), rowTable(cpuTab, r)) < 0 {
					agree++
				}
			}
			place := "global"
			if tables {
				place = "shared"
			}
			o := e.o
			b := benchLine{
				sampler: kinds[k].name, rows: rows, runs: o.Runs, trials: o.Trials, lanes: e.pl.g, tables: place,
				gpuMS: ms, gpuRate: float64(rows*o.Runs*o.Trials) / (ms / 1e3), cpu1: c1, cpuAll: ca,
				cpuRows: m, agree: agree, note: note,
			}
			if v.g != 0 || v.global {
				b.note = "variant"
			}
			write(b.record(d.Name()))
			t.Logf("%-11s %8d rows R=%d T=%-3d G=%-2d %s (%d threads, %d B shared): GPU %8.1f ms, %.3g samples/s; CPU 1 core %.3g/s, all cores %.3g/s: ×%.0f, ×%.1f; %d/%d CPU rows identical",
				b.sampler, rows, o.Runs, o.Trials, e.pl.g, place, threads, shared, ms, b.gpuRate, c1, ca, b.gpuRate/c1, b.gpuRate/ca, agree, m)
			if agree != m {
				t.Errorf("%s %d rows: %d of %d rows differ from the CPU's", b.sampler, rows, m-agree, m)
			}
		}
	}

	// Load the module (JIT) and warm up.
	for k := range kinds {
		lp := samplertest.MeetingAgent(1, 4, 8, false)
		gpuTable(t, gpuEngine(t, k, lp, kinds[k].opts(sampler.Options{Seed: 1, Runs: 1, Trials: 2}), 0, false), lp)
	}
	// The default lanes on 4096 to 1M rows.
	sizes := []struct{ nb, db, trials int }{{4, 8, 100}, {5, 8, 100}, {6, 8, 20}, {5, 16, 10}}
	for _, sz := range sizes {
		lp := samplertest.MeetingAgent(1, sz.nb, sz.db, false)
		for k := range kinds {
			measure(k, lp, kinds[k].opts(sampler.Options{Seed: 1, Runs: 10, Trials: sz.trials}), []variant{{0, false}}, "default")
		}
	}
	// Other group sizes, and the tables kept in global memory, on 32768
	// and 1M rows.
	lanes := [][]variant{
		{{0, false}, {1, false}, {2, false}, {8, false}, {16, false}, {0, true}},
		{{0, false}, {2, false}, {8, false}, {16, false}, {0, true}},
		{{0, false}, {2, false}, {0, true}},
	}
	for _, sz := range []struct{ nb, db, trials int }{{5, 8, 20}, {5, 16, 5}} {
		lp := samplertest.MeetingAgent(1, sz.nb, sz.db, false)
		for k := range kinds {
			measure(k, lp, kinds[k].opts(sampler.Options{Seed: 2, Runs: 10, Trials: sz.trials}), lanes[k], "default")
		}
	}
	fmt.Println("wrote", path)
}
