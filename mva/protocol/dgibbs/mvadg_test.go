package dgibbs

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/internal/samplertest"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch/lstest"
	"github.com/hearth-dcop/hearth/mva/sim"
	"github.com/hearth-dcop/hearth/sampler"
)

// mvadg is the parameter set of MVA-DG runs.
func mvadg(params map[string]float64) map[string]float64 {
	out := map[string]float64{"interior": InteriorGibbs}
	for k, v := range params {
		out[k] = v
	}
	return out
}

// trace records x^t, the complete assignment of every iteration t = 0..T,
// from outside the protocol: x⁰ is every agent's row 0 with its
// completion (init = 0), and x^t for t ≥ 1 is read in the sample hook —
// boundary values from the row, interior values from the agent's state
// under MVA-DG and from the row's completion otherwise.
type trace struct {
	states [][]int
	cums   []localsearch.Cost
}

func (tr *trace) wrap(T int) sim.ProtocolFactory {
	return func(n *mva.Node) (mva.Protocol, error) {
		pr, err := New(n)
		if err != nil {
			return nil, err
		}
		a := pr.(*Agent)
		if tr.states == nil {
			tr.states = make([][]int, T+1)
			for t := range tr.states {
				tr.states[t] = make([]int, len(n.Problem().Variables))
			}
		}
		sub := n.Sub()
		b := make([]int, len(sub.Boundary))
		record := func(t, row int, interior func(k int) int) {
			n.Local.LP.DecodeRow(row, b)
			for k, v := range sub.Boundary {
				tr.states[t][v] = b[k]
			}
			for k, v := range sub.Interior {
				tr.states[t][v] = interior(k)
			}
		}
		completion := func(row int) func(k int) int {
			_, in, err := n.Local.RowIndex(context.Background(), row)
			if err != nil {
				panic(err) // test-only: exact solvers on valid problems
			}
			return func(k int) int { return int(in[k]) }
		}
		record(0, 0, completion(0))
		a.onSample = func(t, row int) {
			if a.cond != nil {
				record(t, row, func(k int) int { return a.z[len(b)+k] })
			} else {
				record(t, row, completion(row))
			}
		}
		if n.ID == 0 {
			a.onClose = func(t int, cum localsearch.Cost) { tr.cums = append(tr.cums, cum) }
		}
		return pr, nil
	}
}

// pairCost is the cost of a complete assignment as (hard functions, sum of
// the others), the protocol's exact bookkeeping.
func pairCost(p *mva.Problem, x []int) localsearch.Cost {
	var c localsearch.Cost
	for _, f := range p.Functions {
		idx := 0
		for _, v := range f.Scope {
			idx = idx*p.DomainSize(v) + x[v]
		}
		c = c.Add(localsearch.Of(f.Costs[idx]))
	}
	return c
}

// TestMVADGRandomInstances: MVA-DG returns complete assignments whose
// cost every agent reports exactly (the interior comes from the agents,
// through AgentResult.Interior), under every configuration and init.
func TestMVADGRandomInstances(t *testing.T) {
	ctx := context.Background()
	n := 80
	if testing.Short() {
		n = 20
	}
	for _, cfg := range lstest.Configs(testSolvers()) {
		t.Run(cfg.Name, func(t *testing.T) {
			for seed := int64(1); seed <= int64(n); seed++ {
				p := lstest.Instance(seed)
				params := mvadg(map[string]float64{"iterations": 30, "init": float64(seed % 3)})
				sol, err := sim.Solve(ctx, p, cfg.Options(New, uint64(seed), params))
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				checkReported(t, fmt.Sprint("seed ", seed), p, sol)
				for i, r := range sol.Outcome.Results {
					if len(r.Interior) != len(mva.Decompose(p).Subs[i].Interior) {
						t.Fatalf("seed %d: agent %d returned %d interior values", seed, i, len(r.Interior))
					}
				}
			}
		})
	}
}

// TestMVADGBookkeeping: iteration by iteration, the root's Cum is
// cost(x^t) − cost(x⁰) over the whole state, interior included, and the
// reported best is the least cost over x⁰..x^T.
func TestMVADGBookkeeping(t *testing.T) {
	ctx := context.Background()
	const T = 40
	checked := 0
	for seed := int64(1); seed <= 60; seed++ {
		p := lstest.Instance(seed)
		if components(p) != 1 {
			continue
		}
		checked++
		var tr trace
		cfg := lstest.Configs(testSolvers())[int(seed)%4]
		sol, err := sim.Solve(ctx, p, cfg.Options(tr.wrap(T), uint64(seed), mvadg(map[string]float64{"iterations": T, "temperature": 3})))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if len(tr.cums) != T {
			t.Fatalf("seed %d: root closed %d iterations, want %d", seed, len(tr.cums), T)
		}
		c0 := pairCost(p, tr.states[0])
		best := c0
		for it := 1; it <= T; it++ {
			ct := pairCost(p, tr.states[it])
			want := ct.Sub(c0)
			if want.Hard != tr.cums[it-1].Hard || !lstest.Same(want.Soft, tr.cums[it-1].Soft) {
				t.Fatalf("seed %d iteration %d: Cum = %v, true change %v", seed, it, tr.cums[it-1], want)
			}
			if ct.Less(best) {
				best = ct
			}
		}
		if got := sol.Outcome.Results[0].Cost; !lstest.Same(got, best.Float()+p.Offset) {
			t.Errorf("seed %d: reported %v, best sample %v", seed, got, best.Float()+p.Offset)
		}
		checkReported(t, fmt.Sprint("seed ", seed), p, sol)
	}
	if checked < 30 {
		t.Errorf("only %d connected instances checked", checked)
	}
}

// TestMVADGReachesOptimum: on small instances (3 agents, binary domains,
// some hard entries) the best of 600 MVA-DG samples is the brute-force
// optimum on nearly all of them. The interior now moves by single-variable
// Gibbs moves rather than jumping to the row's best completion, so the
// chain is plain D-Gibbs's and can be cut by hard entries as it can.
func TestMVADGReachesOptimum(t *testing.T) {
	reachesOptimum(t, mvadg(map[string]float64{"iterations": 600, "temperature": 2}))
}

// TestMVADGDeterministic: the same seed gives the same run, with an exact
// or a sampling local solver, with or without wire faults.
func TestMVADGDeterministic(t *testing.T) {
	ctx := context.Background()
	gibbs := func(lp *mva.LocalProblem) (mva.LocalSolver, error) {
		return sampler.NewGibbs(lp, sampler.Options{Runs: 2, Trials: 10, Seed: 3, Workers: 2})
	}
	for seed := int64(1); seed <= 10; seed++ {
		p := lstest.Instance(seed)
		for _, cfg := range lstest.Configs(testSolvers()) {
			o := cfg.Options(New, uint64(seed), mvadg(map[string]float64{"iterations": 50, "init": 1}))
			if seed%2 == 0 {
				o.Solver = gibbs
			}
			a, err := sim.Solve(ctx, p, o)
			if err != nil {
				t.Fatal(err)
			}
			b, err := sim.Solve(ctx, p, o)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a.Assign, b.Assign) || a.Outcome.Metrics.NCCC != b.Outcome.Metrics.NCCC {
				t.Errorf("seed %d %s: %v (nccc %d) then %v (nccc %d)", seed, cfg.Name,
					a.Assign, a.Outcome.Metrics.NCCC, b.Assign, b.Outcome.Metrics.NCCC)
			}
		}
	}
}

func TestInteriorParam(t *testing.T) {
	ctx := context.Background()
	for _, v := range []float64{-1, 2, 0.5} {
		_, err := sim.Solve(ctx, lstest.Fixed(), lstest.Configs(testSolvers())[0].Options(New, 1, map[string]float64{"interior": v}))
		if err == nil {
			t.Errorf("interior = %v accepted", v)
		}
	}
}

// domains returns the domain sizes of p's variables, for the state
// numbering of samplertest.StateIndex and samplertest.Boltzmann.
func domains(p *mva.Problem) []int {
	d := make([]int, len(p.Variables))
	for v := range d {
		d[v] = p.DomainSize(v)
	}
	return d
}

// target is π(x) ∝ exp(−cost(x)/τ) over every complete assignment of p,
// by enumeration.
func target(t testing.TB, p *mva.Problem, tau float64) []float64 {
	return samplertest.Boltzmann(domains(p), func(x []int) float64 {
		c, err := p.Eval(x)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}, tau)
}

// chainProblem has three agents: agent 0 owns boundary b0 (2 values) and
// interior i0 (3), i1 (2); agent 1 boundary b1 (3) and interior i2 (2);
// agent 2 only boundary b2 (2), linked to both others, so the pseudo-tree
// has a back edge. Soft costs lie in [0, 1.2) (a fixed irregular pattern)
// so that every state has a fair probability, and one Hard entry (i0 = 2,
// i1 = 1) removes 24 of the 144 states without cutting the chain.
func chainProblem() *mva.Problem {
	p := &mva.Problem{Name: "mvadg-chain"}
	doms := []int{2, 3, 2, 3, 2, 2}
	owners := []int{0, 0, 0, 1, 1, 2}
	names := []string{"b0", "i0", "i1", "b1", "i2", "b2"}
	for a := range 3 {
		p.Agents = append(p.Agents, mva.Agent{Name: fmt.Sprint("a", a)})
	}
	for v, d := range doms {
		dom := make([]string, d)
		for j := range dom {
			dom[j] = fmt.Sprint(j)
		}
		p.Variables = append(p.Variables, mva.Variable{Name: names[v], Domain: dom, Agent: owners[v]})
	}
	fn := func(mult float64, scope ...int) mva.Function {
		n := 1
		for _, v := range scope {
			n *= doms[v]
		}
		c := make([]float64, n)
		for i := range c {
			c[i] = 1.2 * math.Mod(float64(i+1)*mult, 1)
		}
		return mva.Function{Name: fmt.Sprint("f", scope), Scope: scope, Costs: c}
	}
	p.Functions = []mva.Function{
		fn(0.3, 0, 3), fn(0.77, 0, 5), fn(0.59, 3, 5), // between agents
		fn(0.414, 0, 1), fn(0.618, 1, 2), fn(0.236, 2), fn(0.173, 0, 2),
		fn(0.732, 3, 4), fn(0.866, 4),
	}
	p.Functions[4].Costs[5] = mva.Hard // i0 = 2, i1 = 1
	return p
}

// perVariable returns p with every variable its own agent: D-Gibbs on it
// is plain D-Gibbs on the original problem (no interior to decide).
func perVariable(p *mva.Problem) *mva.Problem {
	q := &mva.Problem{Name: p.Name + "-per-variable", Functions: p.Functions}
	for v, x := range p.Variables {
		q.Agents = append(q.Agents, mva.Agent{Name: "v" + x.Name})
		x.Agent = v
		q.Variables = append(q.Variables, x)
	}
	return q
}

// visits runs D-Gibbs on p with params for T iterations and counts the
// complete states x^t it visits after burn iterations, every thin-th.
func visits(t *testing.T, p *mva.Problem, params map[string]float64, seed uint64, T, burn, thin int) []int {
	t.Helper()
	var tr trace
	params["iterations"] = float64(T)
	if _, err := sim.Solve(context.Background(), p, lstest.Configs(testSolvers())[1].Options(tr.wrap(T), seed, params)); err != nil {
		t.Fatal(err)
	}
	doms := domains(p)
	counts := make([]int, len(target(t, p, 1)))
	for it := burn + 1; it <= T; it++ {
		if it%thin == 0 {
			counts[samplertest.StateIndex(doms, tr.states[it])]++
		}
	}
	return counts
}

// TestMVADGStationaryDistribution is thesis Theorem 4 measured: the
// states MVA-DG visits (boundary by D-Gibbs, interior by local Gibbs)
// follow π(x) ∝ exp(−cost(x)/τ) over the whole problem — the stationary
// distribution of plain D-Gibbs, which the same test confirms by running
// D-Gibbs with one agent per variable. A chi-square test at level 10⁻⁶,
// with negative controls that must fail it: the MVA-DG counts against π
// at a temperature 50% off, and D-Gibbs over agents with the interior
// taken from the MVA rows (interior = 0), which samples only the states
// whose interior is the row's best completion.
func TestMVADGStationaryDistribution(t *testing.T) {
	p := chainProblem()
	// The negative control's χ² grows with the number of samples, so the
	// smaller runs (-short, -race) ask it for less.
	T, thin, taus, power := 60000, 3, []float64{1, 0.5}, 4.0
	if testing.Short() || raceEnabled {
		T, taus, power = 15000, []float64{1}, 1.5
	}
	for _, tau := range taus {
		pi := target(t, p, tau)
		cases := []struct {
			name   string
			p      *mva.Problem
			params map[string]float64
		}{
			{"MVA-DG", p, mvadg(map[string]float64{"temperature": tau})},
			{"plain D-Gibbs", perVariable(p), map[string]float64{"temperature": tau}},
		}
		for i, c := range cases {
			counts := visits(t, c.p, c.params, uint64(7+i), T, 100, thin)
			chi, df := samplertest.ChiSquare(counts, pi)
			lim := samplertest.ChiLimit(df)
			wrong, _ := samplertest.ChiSquare(counts, target(t, p, 1.5*tau))
			t.Logf("%s τ=%v: χ² = %.1f (df %d, limit %.1f); against τ×1.5: %.1f", c.name, tau, chi, df, lim, wrong)
			if df != 119 {
				t.Fatalf("%d feasible states, want 120", df+1)
			}
			if chi > lim {
				t.Errorf("%s τ=%v: χ² = %.1f > %.1f: not sampling π", c.name, tau, chi, lim)
			}
			if wrong < power*lim {
				t.Errorf("%s τ=%v: negative control χ² = %.1f, not above %v×%.1f: the test lacks power", c.name, tau, wrong, power, lim)
			}
		}
		counts := visits(t, p, map[string]float64{"temperature": tau}, 9, T/4, 100, thin)
		chi, _ := samplertest.ChiSquare(counts, pi)
		t.Logf("D-Gibbs with MVA rows τ=%v: χ² = %.1f", tau, chi)
		if chi < 10*samplertest.ChiLimit(119) {
			t.Errorf("D-Gibbs with MVA rows τ=%v: χ² = %.1f, expected far above %.1f", tau, chi, samplertest.ChiLimit(119))
		}
	}
}

// TestAssembleInterior: mva.Assemble takes an agent's interior values
// from AgentResult.Interior when given (instead of its MVA row) and
// rejects ones that do not fit the subproblem.
func TestAssembleInterior(t *testing.T) {
	ctx := context.Background()
	p := chainProblem()
	d := mva.Decompose(p)
	nodes, _, err := mva.BuildNodes(ctx, d, lstest.Configs(testSolvers())[1].Options(New, 1, nil).Solver, true, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	views := make([]*mva.LocalView, len(nodes))
	for i, n := range nodes {
		views[i] = n.Local
	}
	results := []mva.AgentResult{
		{Boundary: []int{1}, Interior: []int{2, 0}},
		{Boundary: []int{2}}, // from the table
		{Boundary: []int{0}, Interior: []int{}},
	}
	assign, cost, err := mva.Assemble(ctx, d, views, results)
	if err != nil {
		t.Fatal(err)
	}
	_, in, err := views[1].Row(ctx, []int{2})
	if err != nil {
		t.Fatal(err)
	}
	want := []int{1, 2, 0, 2, int(in[0]), 0}
	if !slices.Equal(assign, want) {
		t.Fatalf("assignment %v, want %v", assign, want)
	}
	if c, _ := p.Eval(want); c != cost {
		t.Errorf("cost %v, want %v", cost, c)
	}
	for _, bad := range [][]int{{2}, {2, 0, 1}, {3, 0}, {0, -1}} {
		results[0].Interior = bad
		if _, _, err := mva.Assemble(ctx, d, views, results); err == nil {
			t.Errorf("interior %v accepted", bad)
		}
	}
}
