package bench

import (
	"fmt"
	"time"
)

// gpuAlgorithms are GPU-DBE's four: BE and DPOP on the CPU and on the GPU.
// BE runs centrally (wall-clock time, the paper's metric for BE); DPOP
// runs between one-variable agents (simulated time). Both report their
// time as sim_time_ms, which for a central run is its wall-clock time.
func gpuAlgorithms() []Algorithm {
	return []Algorithm{
		{Group: "BE (centralised)", Variant: "CPU", Label: "BE", Global: "none", Local: "be"},
		{Group: "BE (centralised)", Variant: "GPU", Label: "GPU-BE", Global: "none", Local: "be", GPU: true},
		{Group: "DPOP (distributed)", Variant: "CPU", Label: "DPOP", Global: "dpop", Local: "be"},
		{Group: "DPOP (distributed)", Variant: "GPU", Label: "GPU-DBE", Global: "dpop", Local: "be", GPU: true},
	}
}

// GPUTime is the time GPU-DBE's figures plot: wall-clock for BE,
// simulated for DPOP (both in the sim_time_ms column).
var GPUTime = Metric{Name: "sim_time_ms", Title: "time (ms): BE wall-clock, DPOP simulated", Log: true, Lower: true,
	Get: func(r Row) float64 { return r.SimTimeMs }}

// GPUDBE is GPU-DBE (CP 2015) Figures 4–5: BE vs GPU-BE and DPOP vs
// GPU-DBE on random, scale-free and grid topologies, varying the number
// of variables, the density and the domain size.
func GPUDBE() *Experiment {
	return &Experiment{
		Name:    "gpu-dbe",
		Summary: "GPU-DBE Figs. 4–5: BE vs GPU-BE, DPOP vs GPU-DBE on random, scale-free and grid graphs; speed-ups",
		Source:  "Fioretto et al., CP 2015, Figures 4–5 (thesis Figures 5.4–5.5)",
		Metrics: []Metric{GPUTime},
		Ratios: []Ratio{
			{Name: "GPU-BE vs BE", Num: "BE", Den: "GPU-BE", Metric: GPUTime},
			{Name: "GPU-DBE vs DPOP", Num: "DPOP", Den: "GPU-DBE", Metric: GPUTime},
		},
		Plan: func(quick bool) Plan {
			plan := Plan{Algorithms: gpuAlgorithms(), Seeds: 3, Timeout: 30 * time.Second}
			randVars := []float64{10, 14, 18, 20, 22, 24}
			sfVars := []float64{20, 40, 60, 80, 100}
			grids := []int{4, 6, 8, 10}
			densities := []float64{0.2, 0.3, 0.4, 0.5, 0.6}
			domains := []float64{3, 5, 7, 9, 11}
			gridDomains := []float64{3, 5, 7, 9}
			if quick {
				randVars, sfVars, grids = []float64{6, 7}, []float64{4, 6}, []int{2, 3}
				densities, domains, gridDomains = []float64{0.3, 0.6}, []float64{2, 3}, []float64{2, 3}
				plan.Seeds, plan.Timeout = 1, 10*time.Second
			}
			var gridPts []Point
			for _, n := range grids {
				l := fmt.Sprintf("%dx%d", n, n)
				gridPts = append(gridPts, Point{X: float64(n * n), Label: l, Gen: map[string]string{"rows": fmt.Sprint(n), "cols": fmt.Sprint(n)}})
			}
			dense := map[string]string{"agents": "14"}
			if quick {
				dense = map[string]string{"agents": "6"}
			}
			plan.Sweeps = []Sweep{
				{Name: "random-vars", Title: "variables (random, p1 = 0.3)", Kind: "randgraph", Points: points("agents", randVars...), Monotone: true},
				{Name: "scalefree-vars", Title: "variables (scale-free)", Kind: "scalefree", Points: points("agents", sfVars...), Monotone: true},
				{Name: "grid-vars", Title: "variables (grid)", Kind: "grid", Points: gridPts, Monotone: true},
				{Name: "random-p1", Title: "p1 (random, 14 variables)", Kind: "randgraph", Base: dense, Points: points("p1", densities...), Monotone: true},
				{Name: "random-domain", Title: "|D| (random, 14 variables)", Kind: "randgraph", Base: dense, Points: points("domain", domains...), Monotone: true},
				{Name: "grid-domain", Title: "|D| (grid 5x5)", Kind: "grid", Base: map[string]string{"rows": "5", "cols": "5"}, Points: points("domain", gridDomains...), Monotone: true},
			}
			if quick {
				plan.Sweeps[5].Base = map[string]string{"rows": "2", "cols": "3"}
			}
			return plan
		},
	}
}
