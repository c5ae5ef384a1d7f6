package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"github.com/hearth-dcop/hearth/internal/solvefile"
	"io"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/internal/bench"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/gen"
)

func benchEnv() (*env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &env{stdout: &out, stderr: &errb, log: slog.New(slog.NewTextHandler(io.Discard, nil))}, &out, &errb
}

// numericColumns must parse as numbers, and not be NaN, in every row of
// status ok.
var numericColumns = []string{"x", "seed", "objective", "reference", "gap_pct", "sim_time_ms", "wall_ms",
	"nccc", "messages", "internal_messages", "max_message_bytes", "total_message_bytes", "agents", "variables"}

// TestBenchQuick runs every experiment's --quick version end to end, as CI
// does, and checks its CSV: the header, one row per (sweep point, seed,
// algorithm), numbers where numbers are expected, exact algorithms
// agreeing on every instance's optimum, and that optimum equal to the one
// centralised bucket elimination (or enumeration) finds on its own.
func TestBenchQuick(t *testing.T) {
	for _, x := range bench.Experiments() {
		t.Run(x.Name, func(t *testing.T) {
			dir := t.TempDir()
			e, out, errb := benchEnv()
			args := []string{x.Name, "--quick", "-o", dir}
			// Rendering is slow under the race detector (half a second a
			// file): one experiment draws its plots, the rest skip them.
			plots := x.Name == "dmcmc-microgrid"
			if !plots {
				args = append(args, "--plots=false")
			}
			code := runBench(context.Background(), e, args)
			if x.Unavailable != "" {
				if code != exitUsage || !strings.Contains(errb.String(), x.Unavailable) {
					t.Fatalf("unavailable experiment: exit %d, stderr %q", code, errb.String())
				}
				return
			}
			if code != exitOK {
				t.Fatalf("exit %d; stderr:\n%s", code, errb.String())
			}
			recs := readCSV(t, filepath.Join(dir, "results.csv"))
			if !slices.Equal(recs[0], bench.Header) {
				t.Fatalf("header %v, want %v", recs[0], bench.Header)
			}
			plan := x.Plan(true)
			want := 0
			for _, s := range plan.Sweeps {
				algs := s.Algorithms
				if algs == nil {
					algs = plan.Algorithms
				}
				want += len(s.Points) * plan.Seeds * len(algs)
			}
			if len(recs)-1 != want {
				t.Fatalf("%d rows, want %d", len(recs)-1, want)
			}
			col := map[string]int{}
			for i, h := range recs[0] {
				col[h] = i
			}
			optimum := map[string]float64{}
			finished := 0
			for i, r := range recs[1:] {
				st := r[col["status"]]
				switch st {
				case bench.StatusOK, bench.StatusInfeasible, bench.StatusTimeout, bench.StatusMemory,
					bench.StatusUnavailable, bench.StatusSkipped:
				default:
					t.Errorf("row %d: status %q (%s)", i+2, st, r[col["error"]])
				}
				if st != bench.StatusOK {
					continue
				}
				finished++
				for _, c := range numericColumns {
					v, err := strconv.ParseFloat(r[col[c]], 64)
					if err != nil || math.IsNaN(v) {
						t.Errorf("row %d: column %s = %q, want a number", i+2, c, r[col[c]])
					}
				}
				if r[col["optimal"]] != "true" {
					continue
				}
				key := strings.Join([]string{r[col["sweep"]], r[col["x_label"]], r[col["seed"]]}, " ")
				obj, _ := strconv.ParseFloat(r[col["objective"]], 64)
				if prev, ok := optimum[key]; ok && prev != obj {
					t.Errorf("%s: %s proves %v, another exact algorithm %v", key, r[col["algorithm"]], obj, prev)
				}
				optimum[key] = obj
			}
			if finished == 0 {
				t.Error("no run finished")
			}
			checkOptimaCentrally(t, x, optimum)
			sum, err := os.ReadFile(filepath.Join(dir, "summary.md"))
			if err != nil || len(sum) == 0 || out.String() != string(sum) {
				t.Errorf("summary.md (%v) is empty or differs from the printed summary", err)
			}
			for _, ext := range []string{"*.png", "*.svg"} {
				if m, _ := filepath.Glob(filepath.Join(dir, ext)); (len(m) > 0) != plots {
					t.Errorf("%d %s plots; plots drawn: %v", len(m), ext, plots)
				}
			}
		})
	}
}

// checkOptimaCentrally solves every generated instance that an exact
// protocol solved with centralised bucket elimination, and by enumeration
// where that is small, and compares.
func checkOptimaCentrally(t *testing.T, x *bench.Experiment, optimum map[string]float64) {
	t.Helper()
	plan := x.Plan(true)
	for _, s := range plan.Sweeps {
		if s.Build != nil {
			continue
		}
		for _, pt := range s.Points {
			for seed := uint64(1); seed <= uint64(plan.Seeds); seed++ {
				want, ok := optimum[strings.Join([]string{s.Name, pt.Label, strconv.FormatUint(seed, 10)}, " ")]
				if !ok {
					continue
				}
				params := maps.Clone(s.Base)
				if params == nil {
					params = map[string]string{}
				}
				maps.Copy(params, pt.Gen)
				p, err := gen.Generate(s.Kind, seed, params)
				if err != nil {
					t.Fatal(err)
				}
				solvers := []string{"be"}
				if space(p) <= 1<<16 {
					solvers = append(solvers, "bruteforce")
				}
				for _, name := range solvers {
					r, err := solvefile.Central(context.Background(), p, &solvefile.Local{Name: name, Alpha: 0.05}, seed, nil)
					if err != nil || r.Objective == nil {
						t.Fatalf("%s %s=%s seed %d: central %s: %v", x.Name, s.Name, pt.Label, seed, name, err)
					}
					if *r.Objective != want {
						t.Errorf("%s %s=%s seed %d: protocols prove %v, central %s %v", x.Name, s.Name, pt.Label, seed, want, name, *r.Objective)
					}
				}
			}
		}
	}
}

// space is the number of complete assignments of p, capped.
func space(p *mva.Problem) float64 {
	n := 1.0
	for v := range p.Variables {
		n *= float64(p.DomainSize(v))
	}
	return n
}

func readCSV(t *testing.T, name string) [][]string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestBenchList(t *testing.T) {
	e, out, _ := benchEnv()
	if code := runBench(context.Background(), e, []string{"--list"}); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(bench.Experiments()) {
		t.Fatalf("--list printed %d lines for %d experiments:\n%s", len(lines), len(bench.Experiments()), out.String())
	}
	for i, x := range bench.Experiments() {
		if f := strings.Fields(lines[i]); len(f) < 2 || f[0] != x.Name {
			t.Errorf("line %d: %q, want %s and its description", i, lines[i], x.Name)
		}
	}
}

func TestBenchUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"nope"}, {"radar", "extra"}, {"radar", "--seeds", "x"}} {
		e, _, errb := benchEnv()
		if code := runBench(context.Background(), e, args); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, errb.String())
		}
	}
}

// TestBenchMerge runs a sweep, then merges its CSV with GPU rows made
// elsewhere, as the GPU machine's rows are merged into the CPU ones.
func TestBenchMerge(t *testing.T) {
	dir := t.TempDir()
	e, _, errb := benchEnv()
	if code := runBench(context.Background(), e, []string{"gpu-dbe", "--quick", "--sweep", "grid-vars", "--plots=false", "-o", dir}); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	f, err := os.Open(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := bench.ReadCSV(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var gpuRows []bench.Row
	for _, r := range rows {
		if r.Algorithm == "BE" {
			g := r
			g.Algorithm, g.Variant, g.Device, g.Host = "GPU-BE", "GPU", "gpu", "a GPU machine"
			g.SimTimeMs /= 4
			gpuRows = append(gpuRows, g)
		}
	}
	gpuCSV := filepath.Join(t.TempDir(), "gpu.csv")
	var buf bytes.Buffer
	if err := bench.WriteCSV(&buf, gpuRows); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gpuCSV, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	merged := t.TempDir()
	e, out, errb := benchEnv()
	args := []string{"gpu-dbe", "--merge", filepath.Join(dir, "results.csv") + "," + gpuCSV, "--plots=false", "-o", merged}
	if code := runBench(context.Background(), e, args); code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "| GPU-BE vs BE (sim_time_ms) | 4× | 4× |") {
		t.Errorf("merged summary lacks the 4× speed-ups:\n%s", out.String())
	}
	if got := readCSV(t, filepath.Join(merged, "results.csv")); len(got)-1 != len(rows) {
		t.Errorf("merged CSV has %d rows, want %d (GPU rows replace the unavailable ones)", len(got)-1, len(rows))
	}
}
