//go:build cuda

package solve

import (
	"context"
	"errors"
	"fmt"
	"github.com/hearth-dcop/hearth/internal/solvefile"
	"path/filepath"
	"testing"

	"github.com/hearth-dcop/hearth/local"
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
	lo := &solvefile.Local{Name: "be"}
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
		cpu, err := solvefile.Central(ctx, p, lo, 1, nil)
		if errors.Is(err, local.ErrTooLarge) {
			// testdata also holds search instances (frequency
			// assignment, SHDS responses) beyond bucket elimination's
			// table limit: no CPU answer to compare with.
			t.Logf("%s: %v", p.Name, err)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		g, err := solvefile.Central(ctx, p, lo, 1, dev)
		if err != nil {
			t.Fatal(err)
		}
		sameResult(t, p.Name+"/be", cpu, g)
		if len(p.Agents) < 2 {
			continue
		}
		o := Options{Global: "dpop", Local: solvefile.Local{Name: "be"}, Table: "eager", Reform: "mva", Seed: 1}
		cpu, err = Distributed(ctx, p, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		g, err = Distributed(ctx, p, o, dev)
		if err != nil {
			t.Fatal(err)
		}
		sameResult(t, p.Name+"/dpop", cpu, g)
	}
}
