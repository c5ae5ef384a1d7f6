package bench

import (
	"fmt"
	"time"
)

// dmcmc returns DMCMC — DPOP over MVA tables filled eagerly by a sampler —
// with R runs of T trials per row.
func dmcmc(group, sampler string, runs, trials int, gpu bool) Algorithm {
	name := map[string]string{"gibbs": "DMCMC-Gibbs", "mh": "DMCMC-MH"}[sampler]
	if gpu {
		name += " GPU"
	}
	return Algorithm{Group: group, Variant: name, Label: name, Global: "dpop", Local: sampler, Table: "eager",
		Runs: runs, Trials: trials, GPU: gpu}
}

// baselines are the comparisons of DMCMC's evaluation: DPOP over MVA
// (exact, hearth's), DPOP over the decomposition (one variable per agent,
// as FRODO's DPOP runs a PEAV or microgrid instance), and, with
// localSearch, MGM and MGM-2 completing each boundary move with the best
// local solution.
func baselines(group string, localSearch bool) []Algorithm {
	out := []Algorithm{
		{Group: group, Variant: "DPOP-DFBnB (MVA)", Label: "DPOP-DFBnB (MVA)", Global: "dpop", Local: "dfbnb", Table: "lazy"},
		{Group: group, Variant: "DPOP (decomposition)", Label: "DPOP (decomposition)", Global: "dpop", Local: "be", Reform: "decomposition"},
	}
	if localSearch {
		out = append(out,
			Algorithm{Group: group, Variant: "MGM", Label: "MGM", Global: "mgm", Local: "dfbnb"},
			Algorithm{Group: group, Variant: "MGM-2", Label: "MGM-2", Global: "mgm2", Local: "dfbnb"})
	}
	return out
}

// sampleSweep makes the points of a sweep over a sampler's R or T.
func sampleSweep(param string, xs []int) []Point {
	out := make([]Point, len(xs))
	for i, x := range xs {
		out[i] = Point{X: float64(x), Label: fmt.Sprint(x), Tune: func(a *Algorithm) {
			if !a.Sampling() {
				return
			}
			if param == "R" {
				a.Runs = x
			} else {
				a.Trials = x
			}
		}}
	}
	return out
}

// temperatureSweep makes the points of a sweep over the samplers' τ; 0 is
// the samplers' default, τ from each agent's cost scale.
func temperatureSweep(taus []float64) []Point {
	out := make([]Point, len(taus))
	for i, tau := range taus {
		label := fmt.Sprint(tau)
		if tau == 0 {
			label = "scale"
		}
		out[i] = Point{X: tau, Label: label, Tune: func(a *Algorithm) {
			if a.Sampling() {
				a.Temperature = tau
			}
		}}
	}
	return out
}

// DMCMCMeeting is thesis Figure 5.7: DMCMC on PEAV meeting scheduling —
// sampling time on CPU (and GPU where built), quality against R and T,
// and DMCMC against DPOP, MGM and MGM-2 from 2 agents up — and the gap
// against the sampling temperature, which chose the samplers' default.
func DMCMCMeeting() *Experiment {
	return &Experiment{
		Name:    "dmcmc-meeting",
		Summary: "thesis Fig. 5.7: DMCMC-Gibbs/MH vs DPOP vs MGM/MGM-2 on PEAV meeting scheduling; quality vs R and T",
		Source:  "Fioretto, PhD thesis, §5.3.5, Figure 5.7 (DMCMC, CP 2016)",
		Metrics: []Metric{SimTime, Gap, WallTime},
		Plan: func(quick bool) Plan {
			const group = "PEAV meeting scheduling"
			// The thesis: D-Gibbs S = 100, R = 10; D-MH S = 500, R = 100.
			// MH's R is cut to 10 here: 100 × 500 samples per row are a
			// GPU budget, over a minute per instance on 2 cores.
			gibbsR, gibbsT, mhR, mhT := 10, 100, 10, 500
			agents := []float64{2, 5, 10, 20, 50}
			rs := []int{1, 10, 50, 100}
			ts := []int{100, 250, 500, 1000, 5000, 10000}
			base := map[string]string{}
			small := map[string]string{"agents": "5"}
			plan := Plan{Seeds: 3, Timeout: 60 * time.Second}
			if quick {
				gibbsR, gibbsT, mhR, mhT = 2, 10, 2, 20
				agents, rs, ts = []float64{2, 3}, []int{1, 2}, []int{5, 20}
				base = map[string]string{"vars": "4", "domain": "4"}
				small = map[string]string{"agents": "2", "vars": "4", "domain": "4"}
				plan.Seeds, plan.Timeout = 1, 10*time.Second
			}
			scale := append([]Algorithm{
				dmcmc(group, "gibbs", gibbsR, gibbsT, false),
				dmcmc(group, "mh", mhR, mhT, false),
			}, baselines(group, true)...)
			// The R and T sweeps: sampling time and quality, on the CPU
			// and on the GPU (rows "unavailable" without CUDA), with
			// DPOP's optimum as the reference.
			samplers := func() []Algorithm {
				return []Algorithm{
					dmcmc(group, "gibbs", gibbsR, gibbsT, false), dmcmc(group, "gibbs", gibbsR, gibbsT, true),
					dmcmc(group, "mh", mhR, mhT, false), dmcmc(group, "mh", mhR, mhT, true),
					baselines(group, false)[0],
				}
			}
			tSweep := samplers()
			for i := range tSweep {
				if tSweep[i].Sampling() {
					tSweep[i].Runs = 1 // T up to 10 000 with one chain per row
				}
			}
			// The temperature sweep: DMCMC-Gibbs at the thesis's R and T
			// for fixed τ and for the default, τ from each agent's cost
			// scale (sampler.ScaleTemperature), drawn at x = 0.
			taus := []float64{0, 1, 2, 5, 10, 20}
			if quick {
				taus = []float64{0, 1}
			}
			tempAlgs := []Algorithm{dmcmc(group, "gibbs", gibbsR, gibbsT, false), baselines(group, false)[0]}
			plan.Sweeps = []Sweep{
				{Name: "agents", Title: "|A| (agents)", Kind: "meeting", Base: base, Points: points("agents", agents...), Algorithms: scale, Monotone: true, LogX: true},
				{Name: "temperature", Title: fmt.Sprintf("τ (temperature; 0: from the cost scale; R = %d, T = %d)", gibbsR, gibbsT), Kind: "meeting", Base: small, Points: temperatureSweep(taus), Algorithms: tempAlgs},
				{Name: "R", Title: fmt.Sprintf("R (runs per row; T = %d Gibbs, %d MH)", gibbsT, mhT), Kind: "meeting", Base: small, Points: sampleSweep("R", rs), Algorithms: samplers(), LogX: true},
				{Name: "T", Title: "T (trials per run; R = 1)", Kind: "meeting", Base: small, Points: sampleSweep("T", ts), Algorithms: tSweep, LogX: true},
			}
			return plan
		},
	}
}

// DMCMCMicrogrid is thesis Table 5.1: DMCMC with Metropolis-Hastings and
// Gibbs against DPOP on microgrids of 100, 250 and 500 buildings.
func DMCMCMicrogrid() *Experiment {
	return &Experiment{
		Name:    "dmcmc-microgrid",
		Summary: "thesis Table 5.1: DMCMC-MH/Gibbs vs DPOP on microgrids of 100, 250, 500 buildings; runtime and error",
		Source:  "Fioretto, PhD thesis, §5.3.5, Table 5.1",
		Metrics: []Metric{SimTime, Gap, WallTime},
		Plan: func(quick bool) Plan {
			const group = "microgrid"
			// Two lines per building (links=1, max_degree=2): an MVA
			// table of 11² rows. The generator's default (degree 4,
			// 11⁴ rows per agent) makes DPOP's UTIL tables exceed
			// memory and sampling every row take minutes on 2 cores;
			// the thesis's 0.025 s for DMCMC-MH says its tables were
			// small too.
			base := map[string]string{"links": "1", "max_degree": "2"}
			agents := []float64{100, 250, 500}
			gR, gT, mR, mT := 10, 100, 10, 500
			plan := Plan{Seeds: 2, Timeout: 120 * time.Second}
			if quick {
				base = map[string]string{"links": "1", "max_degree": "2", "domain": "5", "cluster": "3"}
				agents = []float64{4, 6}
				gR, gT, mR, mT = 2, 10, 2, 20
				plan.Seeds, plan.Timeout = 1, 10*time.Second
			}
			algs := append([]Algorithm{dmcmc(group, "mh", mR, mT, false), dmcmc(group, "gibbs", gR, gT, false)}, baselines(group, false)...)
			plan.Sweeps = []Sweep{{Name: "agents", Title: "|A| (buildings)", Kind: "microgrid", Base: base, Points: points("agents", agents...), Algorithms: algs, Monotone: true}}
			return plan
		},
	}
}
