package dgibbs

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/hearth-dcop/hearth/internal/fixtures"
	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch/lstest"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// checkReported checks what every run must satisfy: a complete
// assignment, and a reported cost equal at every agent and to the true
// cost of the assembled assignment (NaN only for a disconnected graph).
func checkReported(t *testing.T, name string, p *mva.Problem, sol sim.Solution) {
	t.Helper()
	if len(sol.Assign) != len(p.Variables) {
		t.Fatalf("%s: incomplete assignment", name)
	}
	connected := components(p) == 1
	for i, r := range sol.Outcome.Results {
		if math.IsNaN(r.Cost) {
			if connected {
				t.Errorf("%s: agent %d reports no cost on a connected graph", name, i)
			}
			continue
		}
		if !connected {
			t.Errorf("%s: agent %d reports %v on a disconnected graph", name, i, r.Cost)
		}
		if !lstest.Same(r.Cost, sol.Cost) {
			t.Errorf("%s: agent %d reports %v, true cost of the assignment %v", name, i, r.Cost, sol.Cost)
		}
	}
}

// components counts the connected components of p's agent graph.
func components(p *mva.Problem) int {
	nb := mva.Decompose(p).Neighbours()
	seen := make([]bool, len(nb))
	n := 0
	for s := range nb {
		if seen[s] {
			continue
		}
		n++
		stack := []int{s}
		seen[s] = true
		for len(stack) > 0 {
			a := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, j := range nb[a] {
				if !seen[j] {
					seen[j] = true
					stack = append(stack, j)
				}
			}
		}
	}
	return n
}

func TestRandomInstances(t *testing.T) {
	ctx := context.Background()
	n := 150
	if testing.Short() {
		n = 40
	}
	for _, cfg := range lstest.Configs(testSolvers()) {
		t.Run(cfg.Name, func(t *testing.T) {
			for seed := int64(1); seed <= int64(n); seed++ {
				p := lstest.Instance(seed)
				params := map[string]float64{"iterations": 30, "init": float64(seed % 3)}
				sol, err := sim.Solve(ctx, p, cfg.Options(New, uint64(seed), params))
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				checkReported(t, fmt.Sprint("seed ", seed), p, sol)
			}
		})
	}
}

// TestDeltaBookkeeping checks notes §2.6 iteration by iteration: after
// iteration t the root's Cum equals cost(x^t) − cost(x⁰), where x^t is
// made of every agent's sample of iteration t.
func TestDeltaBookkeeping(t *testing.T) {
	ctx := context.Background()
	for seed := int64(1); seed <= 60; seed++ {
		p := lstest.Instance(seed)
		if components(p) != 1 {
			continue
		}
		var rec lstest.Recorder
		var rows [][]int // rows[t][agent], t = 0..T
		var cums []localsearch.Cost
		const T = 25
		factory := rec.Wrap(func(n *mva.Node) (mva.Protocol, error) {
			pr, err := New(n)
			if err != nil {
				return nil, err
			}
			a := pr.(*Agent)
			if rows == nil {
				rows = make([][]int, T+1)
				for i := range rows {
					rows[i] = make([]int, n.NumAgents)
				}
			}
			a.onSample = func(t, row int) { rows[t][n.ID] = row }
			a.onClose = func(t int, cum localsearch.Cost) { cums = append(cums, cum) }
			return pr, nil
		})
		cfg := lstest.Configs(testSolvers())[int(seed)%4]
		if _, err := sim.Solve(ctx, p, cfg.Options(factory, uint64(seed), map[string]float64{"iterations": T, "temperature": 3})); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if len(cums) != T {
			t.Fatalf("seed %d: root closed %d iterations, want %d", seed, len(cums), T)
		}
		c0, err := lstest.PairCost(ctx, rec.Nodes, rows[0])
		if err != nil {
			t.Fatal(err)
		}
		for it := 1; it <= T; it++ {
			ct, err := lstest.PairCost(ctx, rec.Nodes, rows[it])
			if err != nil {
				t.Fatal(err)
			}
			want := ct.Sub(c0)
			if want.Hard != cums[it-1].Hard || !lstest.Same(want.Soft, cums[it-1].Soft) {
				t.Fatalf("seed %d iteration %d: Cum = %v, true change %v", seed, it, cums[it-1], want)
			}
		}
	}
}

// TestReachesOptimum: on small instances (3 agents, binary domains, some
// hard entries) 500 samples find the brute-force optimum almost always, and
// the reported best cost is the true cost of the reported assignment.
//
// τ = 2 because these costs (0–10 per function, 8 functions) make τ = 1
// nearly greedy (93 of these 100 at τ = 1, 95 without hard entries); the
// misses left are instances whose hard entries cut the chain into parts
// it cannot cross (probability 0), the irreducibility that the quality
// guarantee assumes (notes §2.8).
func TestReachesOptimum(t *testing.T) {
	reachesOptimum(t, map[string]float64{"iterations": 500, "temperature": 2})
}

// reachesOptimum runs D-Gibbs with params on 100 small random instances
// (30 with -short), each under one of lstest's configurations, checks the
// reported cost of each against its assignment and the brute-force
// optimum, and requires the optimum on at least 95% of them.
func reachesOptimum(t *testing.T, params map[string]float64) {
	t.Helper()
	ctx := context.Background()
	n := 100
	if testing.Short() {
		n = 30
	}
	hits := 0
	for seed := int64(1); seed <= int64(n); seed++ {
		p := randprob.New(seed, randprob.Options{
			Agents: 3, Vars: 5 + int(seed%3), MinDomain: 2, MaxDomain: 2, MaxArity: 3,
			Functions: 8, HardProb: 0.05, IntCosts: seed%2 == 0, MaxCost: 10, Locality: 0.4,
		})
		opt, err := lstest.Optimum(testSolvers(), p)
		if err != nil {
			t.Fatal(err)
		}
		cfg := lstest.Configs(testSolvers())[int(seed)%4]
		sol, err := sim.Solve(ctx, p, cfg.Options(New, uint64(seed), params))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		checkReported(t, fmt.Sprint("seed ", seed), p, sol)
		if sol.Cost < opt && !lstest.Same(sol.Cost, opt) {
			t.Fatalf("seed %d: cost %v below the optimum %v", seed, sol.Cost, opt)
		}
		if lstest.Same(sol.Cost, opt) {
			hits++
		} else {
			t.Logf("seed %d: cost %v, optimum %v, components %d", seed, sol.Cost, opt, components(p))
		}
	}
	t.Logf("optimum reached on %d of %d instances", hits, n)
	if hits < n*95/100 {
		t.Errorf("optimum reached on %d of %d instances, want ≥ 95%%", hits, n)
	}
}

// TestMessageCounts checks notes §5 with exact numbers: the DFS (one
// starter: 2·(|A|−1)), Σ|N_i| VALUE + (|A|−1) BACKTRACK per iteration,
// |A|−1 FINAL, and Σ|N_i| VALUE of iteration 0 when init ≠ 0.
func TestMessageCounts(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		p      *mva.Problem
		params map[string]float64
		want   int64
	}{
		{"thesis31", fixtures.Thesis31(), map[string]float64{"iterations": 10}, 2 + 10*(2+1) + 1},
		{"fixed4", lstest.Fixed(), map[string]float64{"iterations": 20}, 6 + 20*(8+3) + 3},
		{"fixed4-random-init", lstest.Fixed(), map[string]float64{"iterations": 20, "init": 1}, 8 + 6 + 20*(8+3) + 3},
		// α = ε = 0.1: N = 1/(α·ε) = 100 samples.
		{"fixed4-alpha-epsilon", lstest.Fixed(), map[string]float64{"alpha": 0.1, "epsilon": 0.1}, 6 + 100*(8+3) + 3},
		{"fixed4-default", lstest.Fixed(), nil, 6 + DefaultIterations*(8+3) + 3},
	}
	for _, tc := range tests {
		for _, cfg := range lstest.Configs(testSolvers()) {
			t.Run(tc.name+"/"+cfg.Name, func(t *testing.T) {
				sol, err := sim.Solve(ctx, tc.p, cfg.Options(New, 2, tc.params))
				if err != nil {
					t.Fatal(err)
				}
				if got := sol.Outcome.Metrics.Messages; got != tc.want {
					t.Errorf("messages = %d, want %d", got, tc.want)
				}
				checkReported(t, tc.name, tc.p, sol)
			})
		}
	}
}

// TestTree checks the pseudo-tree of the fixed instance: 0 is the root
// with children 1 and 3, 2 is 1's child with pseudo-parent 0.
func TestTree(t *testing.T) {
	ctx := context.Background()
	var rec lstest.Recorder
	if _, err := sim.Solve(ctx, lstest.Fixed(), lstest.Configs(testSolvers())[2].Options(rec.Wrap(New), 1, map[string]float64{"iterations": 3})); err != nil {
		t.Fatal(err)
	}
	want := []string{"P=-1 C=[1 3] PP=[] PC=[2]", "P=0 C=[2] PP=[] PC=[]", "P=1 C=[] PP=[0] PC=[]", "P=0 C=[] PP=[] PC=[]"}
	for i, pr := range rec.Protos {
		tr := pr.(*Agent).tree
		pp, pc := tr.roles()
		got := fmt.Sprintf("P=%d C=%v PP=%v PC=%v", tr.parent, ids(tr.children), ids(pp), ids(pc))
		if got != want[i] {
			t.Errorf("agent %d: %s, want %s", i, got, want[i])
		}
	}
}

func ids(s []int) string {
	if len(s) == 0 {
		return "[]"
	}
	return fmt.Sprint(s)
}

// TestElection: ids that do not grow along the graph give several DFS
// starters; only the lowest id's wave completes, under any interleaving.
func TestElection(t *testing.T) {
	ctx := context.Background()
	// Path 2 – 0 – 3 – 1 – 4 plus the edge 1 – 5: starters 0 and 1.
	p := &mva.Problem{Name: "election"}
	for i := range 6 {
		p.Agents = append(p.Agents, mva.Agent{Name: fmt.Sprint("a", i)})
		p.Variables = append(p.Variables, mva.Variable{Name: fmt.Sprint("x", i), Domain: []string{"0", "1", "2"}, Agent: i})
	}
	for k, e := range [][2]int{{2, 0}, {0, 3}, {3, 1}, {1, 4}, {1, 5}} {
		p.Functions = append(p.Functions, mva.Function{Scope: []int{e[0], e[1]}, Costs: []float64{0, 3, 1, 2, float64(k), 4, 1, 1, 5}})
	}
	opt, err := lstest.Optimum(testSolvers(), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range lstest.Configs(testSolvers()) {
		for seed := uint64(1); seed <= 10; seed++ {
			var rec lstest.Recorder
			sol, err := sim.Solve(ctx, p, cfg.Options(rec.Wrap(New), seed, map[string]float64{"iterations": 200}))
			if err != nil {
				t.Fatalf("%s seed %d: %v", cfg.Name, seed, err)
			}
			checkReported(t, cfg.Name, p, sol)
			if !lstest.Same(sol.Cost, opt) {
				t.Errorf("%s seed %d: cost %v, optimum %v", cfg.Name, seed, sol.Cost, opt)
			}
			for i, pr := range rec.Protos {
				if tr := pr.(*Agent).tree; tr.label != 0 {
					t.Errorf("%s seed %d: agent %d ended in wave %d", cfg.Name, seed, i, tr.label)
				}
			}
		}
	}
}

// TestDisconnected: each component has its own root; nobody knows the
// total, so the reported cost is NaN, and the assignment is still valid.
func TestDisconnected(t *testing.T) {
	ctx := context.Background()
	p := &mva.Problem{Name: "two-pairs"}
	for i := range 5 {
		p.Agents = append(p.Agents, mva.Agent{Name: fmt.Sprint("a", i)})
		p.Variables = append(p.Variables, mva.Variable{Name: fmt.Sprint("x", i), Domain: []string{"0", "1"}, Agent: i})
	}
	p.Functions = []mva.Function{
		{Scope: []int{0, 3}, Costs: []float64{5, 1, 1, 5}},
		{Scope: []int{1, 2}, Costs: []float64{0, 2, 2, mva.Hard}},
		{Scope: []int{4}, Costs: []float64{3, 1}}, // agent 4 alone
	}
	sol, err := sim.Solve(ctx, p, lstest.Configs(testSolvers())[2].Options(New, 1, map[string]float64{"iterations": 50}))
	if err != nil {
		t.Fatal(err)
	}
	checkReported(t, "two-pairs", p, sol)
	if sol.Cost != 2 {
		t.Errorf("cost %v, want 2", sol.Cost)
	}
}

func TestSingleAgent(t *testing.T) {
	ctx := context.Background()
	p := randprob.New(3, randprob.Options{Agents: 1, Vars: 4, MinDomain: 2, MaxDomain: 3, MaxArity: 2, Functions: 5})
	sol, err := sim.Solve(ctx, p, lstest.Configs(testSolvers())[0].Options(New, 1, map[string]float64{"iterations": 5}))
	if err != nil {
		t.Fatal(err)
	}
	opt, err := lstest.Optimum(testSolvers(), p)
	if err != nil {
		t.Fatal(err)
	}
	if sol.Outcome.Metrics.Messages != 0 || !lstest.Same(sol.Cost, opt) || !lstest.Same(sol.Outcome.Results[0].Cost, opt) {
		t.Errorf("single agent: %d messages, cost %v (reported %v), want 0 and %v", sol.Outcome.Metrics.Messages, sol.Cost, sol.Outcome.Results[0].Cost, opt)
	}
}

func TestParameters(t *testing.T) {
	good := []struct {
		params map[string]float64
		want   int
	}{
		{nil, DefaultIterations},
		{map[string]float64{"iterations": 7}, 7},
		{map[string]float64{"alpha": 0.1, "epsilon": 0.1}, 100},
		{map[string]float64{"alpha": 0.05, "epsilon": 0.3}, 67},
		{map[string]float64{"alpha": 1, "epsilon": 1}, 1},
	}
	for _, tc := range good {
		got, err := iterations(tc.params)
		if err != nil || got != tc.want {
			t.Errorf("iterations(%v) = %d, %v; want %d", tc.params, got, err, tc.want)
		}
	}
	bad := []map[string]float64{
		{"iterations": 0}, {"iterations": 1.5}, {"alpha": 0.1}, {"epsilon": 0.1},
		{"alpha": 0.1, "epsilon": 0.1, "iterations": 100}, {"alpha": 0, "epsilon": 0.5},
		{"alpha": 1e-9, "epsilon": 1e-9}, {"alpha": math.NaN(), "epsilon": 0.5},
	}
	for _, params := range bad {
		if _, err := iterations(params); err == nil {
			t.Errorf("iterations(%v) accepted", params)
		}
	}
	for _, tau := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if _, err := temperature(map[string]float64{"temperature": tau}); err == nil {
			t.Errorf("temperature %v accepted", tau)
		}
	}
	if _, err := sim.Solve(context.Background(), fixtures.Thesis31(), lstest.Configs(testSolvers())[0].Options(New, 1, map[string]float64{"init": 5})); err == nil {
		t.Error("init 5 accepted")
	}
}

func TestDeterministic(t *testing.T) {
	ctx := context.Background()
	p := lstest.Instance(13)
	cfg := lstest.Configs(testSolvers())[3]
	a, err := sim.Solve(ctx, p, cfg.Options(New, 21, nil))
	if err != nil {
		t.Fatal(err)
	}
	b, err := sim.Solve(ctx, p, cfg.Options(New, 21, nil))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(a.Assign) != fmt.Sprint(b.Assign) || a.Outcome.Metrics.Messages != b.Outcome.Metrics.Messages ||
		a.Outcome.Metrics.TotalMessageBytes != b.Outcome.Metrics.TotalMessageBytes {
		t.Error("two runs with one seed differ")
	}
}
