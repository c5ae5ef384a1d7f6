package sampler_test

import (
	"context"
	"math"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/gen"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
	"github.com/hearth-dcop/hearth/mva/sim"
	"github.com/hearth-dcop/hearth/sampler"
)

// These tests check DMCMC (Fioretto, Yeoh and Pontelli, CP 2016), which is
// not a protocol of its own but DPOP over MVA tables that a sampler of
// this package fills eagerly, as `hearth solve --global dpop --local
// gibbs|mh` runs it; `hearth bench dmcmc-meeting` and `dmcmc-microgrid`
// reproduce the thesis's figures.

// dmcmcOptions is DMCMC with the named sampler: every agent keyed by its
// own seed, as the command line keys it, and at temperature tau, or at
// sampler.ScaleTemperature of the agent's problem when tau is 0 (the
// command line's default).
func dmcmcOptions(name string, o sampler.Options, tau float64, seed uint64) sim.Options {
	return sim.Options{Protocol: dpop.New, Eager: true, Seed: seed,
		Solver: func(lp *mva.LocalProblem) (mva.LocalSolver, error) {
			so := o
			so.Seed, so.Temperature = mva.AgentSeed(seed, lp.Sub.Agent), tau
			if tau == 0 {
				so.Temperature = sampler.ScaleTemperature(lp)
			}
			return sampler.New(name, lp, so)
		}}
}

// exactOptions is DPOP with an exact local solver: the optimum.
func exactOptions(name string, seed uint64) sim.Options {
	return sim.Options{Protocol: dpop.New, Eager: true, Seed: seed,
		Solver: func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New(name, lp) }}
}

func simSolve(t *testing.T, p *mva.Problem, o sim.Options) sim.Solution {
	t.Helper()
	sol, err := sim.Solve(context.Background(), p, o)
	if err != nil {
		t.Fatal(err)
	}
	return sol
}

// countingSolver counts the rows a local solver is asked for.
type countingSolver struct {
	mva.LocalSolver
	rows *atomic.Int64
}

func (c countingSolver) SolveRow(ctx context.Context, b, in []int) (float64, error) {
	c.rows.Add(1)
	return c.LocalSolver.SolveRow(ctx, b, in)
}

func (c countingSolver) SolveTable(ctx context.Context, t *mva.Table) error {
	c.rows.Add(int64(t.Rows()))
	return c.LocalSolver.(mva.TableSolver).SolveTable(ctx, t)
}

// TestDMCMCIsDPOPOverSampledTables checks what DMCMC is, against brute
// force: every agent's table is complete (sampled) before any agent
// starts, DPOP asks the sampler for nothing more, and the answer is the
// optimum of the problem in which every agent's local cost is its sampled
// table — enumerated here over every joint boundary assignment — and no
// better than the true optimum.
func TestDMCMCIsDPOPOverSampledTables(t *testing.T) {
	mo := gen.MeetingOptions{Agents: 3, Vars: 4, Slots: 5, LocalDensity: 0.7, Meetings: 1, Span: 1}
	for _, name := range sampler.Names() {
		for seed := uint64(1); seed <= 6; seed++ {
			p, err := gen.Meeting(seed, mo)
			if err != nil {
				t.Fatal(err)
			}
			o := dmcmcOptions(name, sampler.Options{Runs: 2, Trials: 5}, 5, seed)
			var rows atomic.Int64
			inner := o.Solver
			o.Solver = func(lp *mva.LocalProblem) (mva.LocalSolver, error) {
				s, err := inner(lp)
				return countingSolver{s, &rows}, err
			}
			var tables []*mva.Table
			var before int64
			proto := o.Protocol
			o.Protocol = func(n *mva.Node) (mva.Protocol, error) {
				if slices.Contains(n.Local.Table.Known, false) {
					t.Fatalf("%s seed %d: agent %d's table is not full when the protocol starts", name, seed, n.ID)
				}
				tables = append(tables, n.Local.Table)
				before = rows.Load()
				return proto(n)
			}
			sol := simSolve(t, p, o)
			if after := rows.Load(); after != before {
				t.Errorf("%s seed %d: DPOP asked for %d more rows after the tables were sampled", name, seed, after-before)
			}
			want := sampledOptimum(p, tables)
			if math.Abs(sol.Cost-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("%s seed %d: DMCMC cost %v, optimum over the sampled tables %v", name, seed, sol.Cost, want)
			}
			if opt := simSolve(t, p, exactOptions("bruteforce", seed)).Cost; sol.Cost < opt {
				t.Errorf("%s seed %d: DMCMC cost %v below the optimum %v", name, seed, sol.Cost, opt)
			}
		}
	}
}

// sampledOptimum enumerates every joint boundary assignment of p: the
// agents' table rows plus the functions between agents.
func sampledOptimum(p *mva.Problem, tables []*mva.Table) float64 {
	d := mva.Decompose(p)
	x := make([]int, len(p.Variables))
	rows := make([]int, len(tables))
	best := math.Inf(1)
	for {
		cost := p.Offset
		for i, tb := range tables {
			b := make([]int, tb.Local.NB)
			tb.Local.DecodeRow(rows[i], b)
			for k, v := range d.Subs[i].Boundary {
				x[v] = b[k]
			}
			cost += tb.Costs[rows[i]]
		}
		for _, fi := range d.External {
			f := &p.Functions[fi]
			idx := 0
			for _, v := range f.Scope {
				idx = idx*p.DomainSize(v) + x[v]
			}
			cost += f.Costs[idx]
		}
		best = min(best, cost)
		i := 0
		for ; i < len(rows); i++ {
			if rows[i]++; rows[i] < tables[i].Rows() {
				break
			}
			rows[i] = 0
		}
		if i == len(rows) {
			return best
		}
	}
}

// TestDMCMCDefaultTemperature: on 5-agent meeting scheduling (the
// thesis's settings otherwise), DMCMC-Gibbs with the thesis's R = 10,
// T = 100 at the command line's default temperature (ScaleTemperature)
// is within the DMCMC paper's 1–3% of DPOP's optimum on average. At the
// papers' τ = 1 the same runs are 4.1% above over 20 instances; the
// temperature sweep of `hearth bench dmcmc-meeting` has the figures.
func TestDMCMCDefaultTemperature(t *testing.T) {
	mo := gen.DefaultMeeting()
	mo.Agents = 5
	seeds := 8
	switch {
	case raceEnabled:
		seeds = 2
	case testing.Short():
		seeds = 3
	}
	sum := 0.0
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		p, err := gen.Meeting(seed, mo)
		if err != nil {
			t.Fatal(err)
		}
		opt := simSolve(t, p, exactOptions("dfbnb", seed)).Cost
		c := simSolve(t, p, dmcmcOptions("gibbs", sampler.Options{Runs: 10, Trials: 100}, 0, seed)).Cost
		if c < opt || math.IsInf(c, 1) {
			t.Fatalf("seed %d: DMCMC cost %v, optimum %v", seed, c, opt)
		}
		gap := (c - opt) / math.Abs(opt)
		sum += gap
		t.Logf("seed %d: optimum %v, DMCMC-Gibbs %v (%.2f%%)", seed, opt, c, 100*gap)
	}
	if mean := sum / float64(seeds); mean > 0.03 {
		t.Errorf("DMCMC-Gibbs's mean gap over %d instances is %.2f%%, above the paper's 3%%", seeds, 100*mean)
	}
}

// TestDMCMCDeterministic: the same seed gives the same answer, whatever
// the number of sampler workers; another seed samples other chains.
func TestDMCMCDeterministic(t *testing.T) {
	mo := gen.DefaultMeeting()
	mo.Agents = 3
	p, err := gen.Meeting(4, mo)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range sampler.Names() {
		so := sampler.Options{Runs: 3, Trials: 20, Workers: 1}
		a := simSolve(t, p, dmcmcOptions(name, so, 0, 7))
		so.Workers = 3
		b := simSolve(t, p, dmcmcOptions(name, so, 0, 7))
		if !slices.Equal(a.Assign, b.Assign) || a.Cost != b.Cost || a.Outcome.Metrics.Messages != b.Outcome.Metrics.Messages ||
			a.Outcome.Metrics.NCCC != b.Outcome.Metrics.NCCC {
			t.Errorf("%s: seed 7 gave %v (cost %v) then %v (cost %v)", name, a.Assign, a.Cost, b.Assign, b.Cost)
		}
		if c := simSolve(t, p, dmcmcOptions(name, so, 0, 8)); slices.Equal(a.Assign, c.Assign) {
			t.Errorf("%s: seeds 7 and 8 gave the same assignment", name)
		}
	}
}

// TestScaleTemperature checks the rule on a hand-made local problem: the
// mean spread of the functions that hold an interior variable, Hard
// entries left out, times TemperatureFraction.
func TestScaleTemperature(t *testing.T) {
	h := mva.Hard
	p := &mva.Problem{
		Agents: []mva.Agent{{Name: "a"}, {Name: "b"}},
		Variables: []mva.Variable{
			{Name: "x", Domain: []string{"0", "1"}, Agent: 0},
			{Name: "y", Domain: []string{"0", "1"}, Agent: 0},
			{Name: "z", Domain: []string{"0", "1"}, Agent: 1},
		},
		Functions: []mva.Function{
			{Name: "xy", Scope: []int{0, 1}, Costs: []float64{0, 40, h, 10}},  // spread 40
			{Name: "y", Scope: []int{1}, Costs: []float64{5, 25}},             // spread 20
			{Name: "flat", Scope: []int{1}, Costs: []float64{7, 7}},           // no spread
			{Name: "xz", Scope: []int{0, 2}, Costs: []float64{0, 1000, 0, 0}}, // boundary only for a
		},
	}
	d := mva.Decompose(p)
	lp := mva.NewLocalProblem(p, &d.Subs[0])
	if lp.NB != 1 || lp.NumInterior() != 1 {
		t.Fatalf("agent a: %d boundary, %d interior variables", lp.NB, lp.NumInterior())
	}
	if got, want := sampler.ScaleTemperature(lp), sampler.TemperatureFraction*30; math.Abs(got-want) > 1e-12 {
		t.Errorf("ScaleTemperature = %v, want %v (a tenth of the mean spread 30)", got, want)
	}
	// Agent b's only function holds no interior variable: no scale.
	if got := sampler.ScaleTemperature(mva.NewLocalProblem(p, &d.Subs[1])); got != sampler.DefaultTemperature {
		t.Errorf("no interior function: ScaleTemperature = %v, want %v", got, sampler.DefaultTemperature)
	}
}
