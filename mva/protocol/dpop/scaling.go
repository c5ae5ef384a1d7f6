package dpop

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// This file runs DPOP over the thesis's scaling axes (Figures 3.6 and 3.7:
// the number of agents, and the number of local variables per agent) for
// benchmarks and `hearth bench`.

// ScalePoint is one point of a scaling sweep.
type ScalePoint struct {
	// Axis names the swept quantity: "agents" or "local_vars".
	Axis      string
	Agents    int
	LocalVars int
}

// ThesisSweep returns the two sweeps of thesis Figures 3.6 and 3.7 around
// its defaults (4 agents, 6 local variables): 2–10 agents, then 2–12 local
// variables.
func ThesisSweep() []ScalePoint {
	var pts []ScalePoint
	for a := 2; a <= 10; a += 2 {
		pts = append(pts, ScalePoint{Axis: "agents", Agents: a, LocalVars: 6})
	}
	for l := 2; l <= 12; l += 2 {
		pts = append(pts, ScalePoint{Axis: "local_vars", Agents: 4, LocalVars: l})
	}
	return pts
}

// ScaleOptions shape the problems of a sweep and the runs. Zero fields
// take the defaults in brackets.
type ScaleOptions struct {
	// Domain is every variable's domain size [3; the thesis uses 4].
	Domain int
	// BoundaryRatio is the share of an agent's variables that may take
	// part in functions between agents [1/3; at least one variable].
	BoundaryRatio float64
	// LocalDensity is the thesis's p1^l: the share of pairs of an
	// agent's variables joined by a binary function [0.6].
	LocalDensity float64
	// GlobalDensity is p1^g: the share of pairs of candidate boundary
	// variables of different agents joined by a function [0.1; the thesis
	// uses 0.4, whose separators outgrow memory beyond a few agents].
	GlobalDensity float64
	// MaxCost bounds the costs, drawn uniformly in 1..MaxCost [1000].
	MaxCost int
	// Instances is the number of problems per point [3].
	Instances int
	// Seed selects the problems.
	Seed uint64
	// Solver is the local solver [dfbnb]; Eager fills the MVA tables
	// before the protocol starts.
	Solver string
	Eager  bool
	// Params are DPOP's parameters.
	Params map[string]float64
}

func (o ScaleOptions) withDefaults() ScaleOptions {
	if o.Domain <= 0 {
		o.Domain = 3
	}
	if o.BoundaryRatio <= 0 {
		o.BoundaryRatio = 1.0 / 3
	}
	if o.LocalDensity <= 0 {
		o.LocalDensity = 0.6
	}
	if o.GlobalDensity <= 0 {
		o.GlobalDensity = 0.1
	}
	if o.MaxCost <= 0 {
		o.MaxCost = 1000
	}
	if o.Instances <= 0 {
		o.Instances = 3
	}
	if o.Solver == "" {
		o.Solver = "dfbnb"
	}
	return o
}

// ScaleProblem returns instance number inst of a point, after the thesis's
// random MVA generator (§3.7) with two simplifications: every function is
// binary or unary (the thesis merges cliques into n-ary functions), and a
// chain of functions a0–a1–…–a(n−1) between random boundary candidates
// keeps the agent graph connected, so that a sweep measures one tree. Each
// variable also gets a unary cost. Agent a owns variables
// a·LocalVars … a·LocalVars+LocalVars−1; the first
// max(1, round(LocalVars·BoundaryRatio)) of them are its boundary
// candidates.
func ScaleProblem(pt ScalePoint, inst int, o ScaleOptions) *mva.Problem {
	o = o.withDefaults()
	agents, lv := max(pt.Agents, 1), max(pt.LocalVars, 1)
	r := rand.New(rand.NewPCG(o.Seed, uint64(agents)<<40|uint64(lv)<<20|uint64(inst)))
	p := &mva.Problem{Name: fmt.Sprintf("dpop-scale-a%d-l%d-%d", agents, lv, inst)}
	dom := make([]string, o.Domain)
	for i := range dom {
		dom[i] = strconv.Itoa(i)
	}
	cost := func() float64 { return float64(1 + r.IntN(o.MaxCost)) }
	add := func(scope ...int) {
		n := 1
		for range scope {
			n *= o.Domain
		}
		costs := make([]float64, n)
		for i := range costs {
			costs[i] = cost()
		}
		p.Functions = append(p.Functions, mva.Function{Name: "f" + strconv.Itoa(len(p.Functions)), Scope: scope, Costs: costs})
	}
	nb := max(1, min(lv, int(float64(lv)*o.BoundaryRatio+0.5)))
	var cands []int
	for a := range agents {
		p.Agents = append(p.Agents, mva.Agent{Name: "a" + strconv.Itoa(a)})
		base := a * lv
		for k := range lv {
			p.Variables = append(p.Variables, mva.Variable{Name: "x" + strconv.Itoa(base+k), Domain: dom, Agent: a})
			add(base + k)
		}
		var pairs [][2]int
		for u := range lv {
			for v := u + 1; v < lv; v++ {
				pairs = append(pairs, [2]int{base + u, base + v})
			}
		}
		for _, e := range pick(r, pairs, o.LocalDensity) {
			add(e[0], e[1])
		}
		for k := range nb {
			cands = append(cands, base+k)
		}
	}
	for a := 1; a < agents; a++ {
		add((a-1)*lv+r.IntN(nb), a*lv+r.IntN(nb))
	}
	var pairs [][2]int
	for i, u := range cands {
		for _, v := range cands[i+1:] {
			if u/lv != v/lv {
				pairs = append(pairs, [2]int{u, v})
			}
		}
	}
	for _, e := range pick(r, pairs, o.GlobalDensity) {
		add(e[0], e[1])
	}
	return p
}

// pick returns ⌊len(pairs)·share⌋ distinct pairs drawn uniformly.
func pick(r *rand.Rand, pairs [][2]int, share float64) [][2]int {
	n := min(len(pairs), int(float64(len(pairs))*share))
	r.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
	return pairs[:n]
}

// ScaleRun is the outcome of one run of a sweep.
type ScaleRun struct {
	Point    ScalePoint
	Instance int
	Cost     float64
	Metrics  mva.Metrics
}

// RunScale solves instance inst of a point with DPOP on the simulated
// runtime.
func RunScale(ctx context.Context, pt ScalePoint, inst int, o ScaleOptions) (ScaleRun, error) {
	o = o.withDefaults()
	p := ScaleProblem(pt, inst, o)
	sol, err := sim.Solve(ctx, p, sim.Options{
		Protocol: New,
		Solver:   func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New(o.Solver, lp) },
		Eager:    o.Eager,
		Seed:     o.Seed + uint64(inst),
		Params:   o.Params,
	})
	if err != nil {
		return ScaleRun{}, fmt.Errorf("%s: %w", p.Name, err)
	}
	return ScaleRun{Point: pt, Instance: inst, Cost: sol.Cost, Metrics: sol.Outcome.Metrics}, nil
}

// WriteScalingCSV runs every point o.Instances times and writes one CSV
// row per run: axis, agents, local_vars, instance, solver, table, cost,
// sim_ms, wall_ms, messages, total_bytes, max_message_bytes, nccc.
func WriteScalingCSV(ctx context.Context, w io.Writer, points []ScalePoint, o ScaleOptions) error {
	o = o.withDefaults()
	cw := csv.NewWriter(w)
	table := "lazy"
	if o.Eager {
		table = "eager"
	}
	if err := cw.Write([]string{"axis", "agents", "local_vars", "instance", "solver", "table", "cost",
		"sim_ms", "wall_ms", "messages", "total_bytes", "max_message_bytes", "nccc"}); err != nil {
		return err
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	i := func(x int64) string { return strconv.FormatInt(x, 10) }
	for _, pt := range points {
		for inst := range o.Instances {
			run, err := RunScale(ctx, pt, inst, o)
			if err != nil {
				return err
			}
			m := run.Metrics
			if err := cw.Write([]string{pt.Axis, strconv.Itoa(pt.Agents), strconv.Itoa(pt.LocalVars), strconv.Itoa(inst),
				o.Solver, table, f(run.Cost), f(m.SimTimeMs), f(m.WallMs), i(m.Messages), i(m.TotalMessageBytes),
				i(m.MaxMessageBytes), i(m.NCCC)}); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
