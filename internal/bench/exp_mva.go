package bench

import "time"

// mvaVariants are the four ways of running a protocol over multi-variable
// agents that the thesis's chapter 3 compares.
var mvaVariants = []struct{ variant, table, reform string }{
	{"MVA-lazy", "lazy", "mva"},
	{"MVA-eager", "eager", "mva"},
	{"Compilation", "lazy", "compilation"},
	{"Decomposition", "lazy", "decomposition"},
}

// mvaAlgorithms crosses protocols (group, global, local) with the variants.
// D-Gibbs with Gibbs inside the agents is MVA-D-Gibbs (parameter
// interior = 1: one local Gibbs sweep of the interior per iteration), the
// thesis's D-Gibbs-Gibbs.
func mvaAlgorithms(protocols ...[3]string) []Algorithm {
	var out []Algorithm
	for _, p := range protocols {
		for _, v := range mvaVariants {
			a := Algorithm{Group: p[0], Variant: v.variant, Global: p[1], Local: p[2], Table: v.table, Reform: v.reform}
			if p[1] == "dgibbs" && p[2] == "gibbs" {
				a.Params = map[string]float64{"interior": 1}
			}
			out = append(out, a)
		}
	}
	return out
}

var (
	afbDFBnB     = [3]string{"AFB-DFBnB", "afb", "dfbnb"}
	dpopDFBnB    = [3]string{"DPOP-DFBnB", "dpop", "dfbnb"}
	dgibbsGibbs  = [3]string{"D-Gibbs-Gibbs", "dgibbs", "gibbs"}
	randomTitles = map[string]string{
		"agents": "|A| (agents)", "vars": "|L_i| (local variables per agent)", "ratio": "|B_i|/|L_i|",
		"p1g": "p1 global (density among boundary variables)", "p1l": "p1 local (density inside agents)",
		"p2": "p2 (tightness: fraction of feasible entries)",
	}
)

// MVARandom is thesis Figures 3.6–3.11: AFB-DFBnB, DPOP-DFBnB and
// D-Gibbs-Gibbs under MVA (lazy, eager), compilation and decomposition on
// the chapter's random graphs, one sweep per generator parameter.
func MVARandom() *Experiment {
	return &Experiment{
		Name:    "mva-random",
		Summary: "thesis Figs. 3.6–3.11: AFB, DPOP, D-Gibbs × MVA lazy/eager, compilation, decomposition on random graphs",
		Source:  "Fioretto, PhD thesis, §3.5, Figures 3.6–3.11",
		Metrics: []Metric{SimTime, Messages, Internal, MaxBytes, Gap},
		Plan: func(quick bool) Plan {
			// The thesis's defaults are the generator's: |A| 4, |L_i| 6,
			// |D| 4, p1ˡ 0.6, p1ᵍ 0.4, p2 0.4.
			base := map[string]string{}
			values := map[string][]float64{
				"agents": {2, 3, 4, 5, 6},
				"vars":   {2, 4, 6, 8, 10},
				"ratio":  {0.2, 0.4, 0.6, 0.8, 1},
				"p1g":    {0.2, 0.4, 0.6, 0.8},
				"p1l":    {0.2, 0.4, 0.6, 0.8},
				"p2":     {0.2, 0.4, 0.6, 0.8},
			}
			plan := Plan{Algorithms: mvaAlgorithms(afbDFBnB, dpopDFBnB, dgibbsGibbs), Seeds: 3, Timeout: 5 * time.Second}
			if quick {
				base = map[string]string{"agents": "3", "vars": "3", "domain": "2"}
				values = map[string][]float64{
					"agents": {2, 3}, "vars": {2, 3}, "ratio": {0.4, 1},
					"p1g": {0.2, 0.6}, "p1l": {0.2, 0.8}, "p2": {0.4, 0.8},
				}
				plan.Seeds, plan.Timeout = 1, 10*time.Second
			}
			for _, name := range []string{"agents", "vars", "ratio", "p1g", "p1l", "p2"} {
				plan.Sweeps = append(plan.Sweeps, Sweep{
					Name: name, Title: randomTitles[name], Kind: "random", Base: base,
					Points: points(name, values[name]...),
					// More agents, variables or edges only make
					// instances harder; the ratio and the tightness
					// change what is hard for whom.
					Monotone: name != "ratio" && name != "p2",
				})
			}
			return plan
		},
	}
}

// radarConfigs are the columns of thesis Table 3.1, with 12x4 and 16x4
// (one row of 3 and 4 controllers) added between its first two, where
// our instances go from seconds to out of reach.
var radarConfigs = []string{"8x4", "12x4", "16x4", "8x8", "12x8", "16x8", "20x8"}

// Radar is thesis Table 3.1: AFB-DFBnB and DPOP-DFBnB under MVA (lazy,
// eager), decomposition and compilation on the radar coordination
// instances.
func Radar() *Experiment {
	return &Experiment{
		Name:    "radar",
		Summary: "thesis Table 3.1: AFB and DPOP × MVA lazy/eager, decomposition, compilation on radar coordination 8x4 … 20x8",
		Source:  "Fioretto, PhD thesis, §3.5, Table 3.1",
		Metrics: []Metric{SimTime, Messages, Internal},
		Plan: func(quick bool) Plan {
			plan := Plan{Algorithms: mvaAlgorithms(afbDFBnB, dpopDFBnB), Seeds: 2, Timeout: 20 * time.Second}
			// Ordered by difficulty; x is the position, the label the grid.
			sweep := Sweep{Name: "grid", Title: "radar grid (4x4 radars per agent)", Kind: "radar", Monotone: true}
			for i, c := range radarConfigs {
				sweep.Points = append(sweep.Points, Point{X: float64(i + 1), Label: c, Gen: map[string]string{"grid": c}})
			}
			if quick {
				// 2×2 radars per controller instead of 4×4.
				sweep.Base = map[string]string{"block": "2x2"}
				sweep.Points = []Point{
					{X: 1, Label: "4x2", Gen: map[string]string{"grid": "4x2"}},
					{X: 2, Label: "6x2", Gen: map[string]string{"grid": "6x2"}},
				}
				plan.Seeds, plan.Timeout = 1, 10*time.Second
			}
			plan.Sweeps = []Sweep{sweep}
			return plan
		},
	}
}
