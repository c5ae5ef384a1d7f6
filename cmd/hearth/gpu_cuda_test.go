//go:build cuda

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/local/gpu"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/format"
	"github.com/hearth-dcop/hearth/mva/gen"
)

// openDevice opens the GPU or skips: these tests run on the GPU machine
// (scripts/cuda-setup builds them; README.md, GPU).
func openDevice(t testing.TB) *gpu.Device {
	t.Helper()
	if !gpu.Available() {
		t.Skip("no CUDA device")
	}
	d, err := gpu.Open()
	if err != nil {
		t.Skipf("no usable CUDA device: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func sameResult(t *testing.T, name string, cpu, gpuRes mva.Result) {
	t.Helper()
	if (cpu.Objective == nil) != (gpuRes.Objective == nil) || (cpu.Objective != nil && *cpu.Objective != *gpuRes.Objective) {
		t.Errorf("%s: CPU objective %v, GPU %v", name, cpu.Objective, gpuRes.Objective)
		return
	}
	for k, v := range cpu.Assignment {
		if gpuRes.Assignment[k] != v {
			t.Errorf("%s: %s = %s on the CPU, %s on the GPU", name, k, v, gpuRes.Assignment[k])
			return
		}
	}
}

// TestGPUMatchesCPU: GPU bucket elimination and GPU-DBE (DPOP with its
// UTIL joins on the device) give exactly the CPU's optimum and assignment
// on integer-cost instances: the GPU-DBE topologies at sizes where the
// device takes the joins, and the .wcsp files of testdata.
func TestGPUMatchesCPU(t *testing.T) {
	dev := openDevice(t)
	ctx := context.Background()
	lo := &localOptions{name: "be"}
	var probs []*mva.Problem
	for seed := uint64(1); seed <= 40; seed++ {
		for _, kind := range []struct {
			name   string
			params map[string]string
		}{
			{"grid", map[string]string{"rows": "5", "cols": "5"}},
			{"scalefree", map[string]string{"agents": "20"}},
			{"randgraph", map[string]string{"agents": "16", "p1": "0.3"}},
			{"random", map[string]string{"agents": "3", "vars": "5", "domain": "3"}},
		} {
			p, err := gen.Generate(kind.name, seed, kind.params)
			if err != nil {
				t.Fatal(err)
			}
			p.Name = fmt.Sprintf("%s-%d", kind.name, seed)
			probs = append(probs, p)
		}
	}
	files, _ := filepath.Glob("../../testdata/*.wcsp")
	for _, f := range files {
		p, err := format.ReadFile(f, format.Options{})
		if err != nil {
			t.Fatal(err)
		}
		probs = append(probs, p)
	}
	for _, p := range probs {
		cpu, err := solveCentral(ctx, p, lo, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		g, err := solveCentral(ctx, p, lo, 1, dev)
		if err != nil {
			t.Fatal(err)
		}
		sameResult(t, p.Name+"/be", cpu, g)
		if len(p.Agents) < 2 {
			continue
		}
		o := solveOptions{global: "dpop", local: localOptions{name: "be"}, table: "eager", reform: "mva", seed: 1}
		cpu, err = solveDistributed(ctx, p, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		g, err = solveDistributed(ctx, p, o, dev)
		if err != nil {
			t.Fatal(err)
		}
		sameResult(t, p.Name+"/dpop", cpu, g)
	}
}

// TestGPUDBESpeedup writes, when HEARTH_GPU_DBE_CSV names a file, the
// GPU-DBE comparison (GPU-DBE Figures 4–5): DPOP with CPU UTIL joins
// against DPOP with GPU UTIL joins, and BE against GPU-BE, on the three
// topologies, wall time medians of 3 runs in the same process.
func TestGPUDBESpeedup(t *testing.T) {
	out := os.Getenv("HEARTH_GPU_DBE_CSV")
	if out == "" {
		t.Skip("set HEARTH_GPU_DBE_CSV to write the GPU-DBE comparison")
	}
	dev := openDevice(t)
	ctx := context.Background()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintln(f, "device,topology,agents,domain,algorithm,cpu_ms,gpu_ms,speedup,objective")
	median := func(run func() (mva.Result, error)) (float64, mva.Result, error) {
		var ms []float64
		var r mva.Result
		for range 3 {
			start := time.Now()
			var err error
			if r, err = run(); err != nil {
				return 0, r, err
			}
			ms = append(ms, float64(time.Since(start).Microseconds())/1000)
		}
		slices.Sort(ms)
		return ms[1], r, nil
	}
	cases := []struct {
		kind   string
		params map[string]string
	}{
		{"grid", map[string]string{"rows": "5", "cols": "5"}},
		{"grid", map[string]string{"rows": "6", "cols": "6"}},
		{"grid", map[string]string{"rows": "7", "cols": "7"}},
		{"grid", map[string]string{"rows": "9", "cols": "9"}},
		{"scalefree", map[string]string{"agents": "40"}},
		{"scalefree", map[string]string{"agents": "60"}},
		{"randgraph", map[string]string{"agents": "24", "p1": "0.2"}},
		{"randgraph", map[string]string{"agents": "30", "p1": "0.2"}},
		{"randgraph", map[string]string{"agents": "20", "p1": "0.3", "domain": "6"}},
	}
	lo := &localOptions{name: "be"}
	for _, c := range cases {
		p, err := gen.Generate(c.kind, 1, c.params)
		if err != nil {
			t.Fatal(err)
		}
		o := solveOptions{global: "dpop", local: localOptions{name: "be"}, table: "eager", reform: "mva", seed: 1,
			params: paramFlag{"max_util_entries": 1 << 30}}
		for _, alg := range []string{"be", "dpop"} {
			run := func(d *gpu.Device) func() (mva.Result, error) {
				if alg == "be" {
					return func() (mva.Result, error) { return solveCentral(ctx, p, lo, 1, d) }
				}
				return func() (mva.Result, error) { return solveDistributed(ctx, p, o, d) }
			}
			cms, cr, err := median(run(nil))
			if err != nil {
				// DPOP's pseudo-tree on a large grid has separators far
				// beyond memory: a row says so instead of a time.
				fmt.Fprintf(f, "%s,%s,%d,%d,%s,,,,failed: %s\n", dev.Name(), c.kind, len(p.Agents), p.Stats().MaxDomain, alg, strings.ReplaceAll(err.Error(), ",", ";"))
				t.Logf("%s %v %s: %v", c.kind, c.params, alg, err)
				continue
			}
			gms, gr, err := median(run(dev))
			if err != nil {
				t.Fatalf("GPU failed where the CPU did not: %v", err)
			}
			sameResult(t, c.kind+"/"+alg, cr, gr)
			obj := ""
			if cr.Objective != nil {
				obj = fmt.Sprint(*cr.Objective)
			}
			fmt.Fprintf(f, "%s,%s,%d,%d,%s,%.3f,%.3f,%.2f,%s\n", dev.Name(), c.kind, len(p.Agents), p.Stats().MaxDomain, alg, cms, gms, cms/gms, obj)
			t.Logf("%s %v %s: CPU %.1f ms, GPU %.1f ms (%.1f×)", c.kind, c.params, alg, cms, gms, cms/gms)
		}
	}
}
