package mgm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch/lstest"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// brCheck checks that the global cost, as the protocols' pair, never
// rises from round to round, and that a run whose last round moved nobody
// ended 1-optimal by brute force; it returns whether the run converged.
func brCheck(ctx context.Context, t *testing.T, where string, nodes []*mva.Node, rows [][]int, lastMoved []bool) bool {
	t.Helper()
	var prev localsearch.Cost
	for r, rs := range rows {
		c, err := lstest.PairCost(ctx, nodes, rs)
		if err != nil {
			t.Fatal(err)
		}
		if r > 0 && (c.Hard > prev.Hard || c.Hard == prev.Hard && c.Soft > prev.Soft+1e-9*math.Max(1, math.Abs(prev.Soft))) {
			t.Errorf("%s: round %d: global cost rose from %v to %v", where, r, prev, c)
		}
		prev = c
	}
	if slices.Contains(lastMoved, true) {
		return false
	}
	why, err := lstest.Improvable(ctx, nodes, rows[len(rows)-1], 1)
	if err != nil {
		t.Fatal(err)
	}
	if why != "" {
		t.Errorf("%s: fixed point is not 1-optimal: %s", where, why)
	}
	return true
}

// tieInstance is lstest's instance of seed, except every fourth seed: a
// larger one with costs 0..2, where equally good rows abound and the tie
// rule decides most moves.
func tieInstance(seed int64) *mva.Problem {
	if seed%4 != 0 {
		return lstest.Instance(seed)
	}
	return randprob.New(seed, randprob.Options{
		Agents: 3, Vars: 9, MinDomain: 2, MaxDomain: 3, MaxArity: 2,
		Functions: 10, HardProb: 0.05, IntCosts: true, MaxCost: 2, Locality: 0.5,
	})
}

// TestSolvedResponses runs MGM with the best responses solved (response =
// 2) and enumerated (response = 1) on the same seeded instances: the
// solved runs must be monotone and end 1-optimal, and on integer-cost
// instances, where the solver's sums are exact, both runs must take the
// same rows in every round (the tie rule does not depend on the path).
func TestSolvedResponses(t *testing.T) {
	ctx := context.Background()
	n := int64(120)
	if testing.Short() {
		n = 30
	}
	for _, cfg := range lstest.Configs(testSolvers())[:3] {
		t.Run(cfg.Name, func(t *testing.T) {
			converged, same := 0, 0
			for seed := int64(1); seed <= n; seed++ {
				p := tieInstance(seed)
				var trs [2]*trace
				for i, mode := range []localsearch.Response{localsearch.ResponseSolve, localsearch.ResponseEnumerate} {
					params := map[string]float64{"rounds": 30, "response": float64(mode)}
					if seed%3 == 0 {
						params["response_entries"] = 0 // the memory-bounded solver (AOBB)
					}
					trs[i], _ = runTrace(ctx, t, p, cfg, uint64(seed), params)
				}
				where := fmt.Sprintf("seed %d", seed)
				if brCheck(ctx, t, where, trs[0].rec.Nodes, trs[0].rows, trs[0].lastMoved()) {
					converged++
				}
				if fmt.Sprint(trs[0].rows) == fmt.Sprint(trs[1].rows) {
					same++
				} else if seed%2 == 0 { // integer costs
					t.Errorf("%s: solved and enumerated runs differ:\n%v\n%v", where, trs[0].rows, trs[1].rows)
				}
			}
			t.Logf("%d of %d solved runs converged; %d ran exactly as the enumerated ones", converged, n, same)
			if converged < int(n)*9/10 {
				t.Errorf("only %d of %d runs reached a fixed point", converged, n)
			}
		})
	}
}

// wideProblem returns three agents, each with 7 boundary variables of 4
// values (16384 rows, more than localsearch.EnumerateRows) chained by
// local functions through 2 interior variables, and external functions
// between the agents' boundary variables: the default path solves.
func wideProblem(seed uint64) *mva.Problem {
	rng := rand.New(rand.NewPCG(seed, 5))
	p := &mva.Problem{Name: "wide"}
	dom := []string{"0", "1", "2", "3"}
	const agents, nb = 3, 7
	v := func(a, k int) int { return a*(nb+2) + k }
	table := func(n int) []float64 {
		t := make([]float64, n)
		for i := range t {
			t[i] = float64(rng.IntN(6))
			if rng.IntN(25) == 0 {
				t[i] = mva.Hard
			}
		}
		return t
	}
	for a := range agents {
		p.Agents = append(p.Agents, mva.Agent{Name: fmt.Sprint("a", a)})
		for k := range nb + 2 {
			p.Variables = append(p.Variables, mva.Variable{Name: fmt.Sprintf("x%d_%d", a, k), Domain: dom, Agent: a})
		}
		for k := range nb + 1 {
			p.Functions = append(p.Functions, mva.Function{Name: fmt.Sprintf("l%d_%d", a, k), Scope: []int{v(a, k), v(a, k+1)}, Costs: table(16)})
		}
	}
	for a := range agents {
		for b := a + 1; b < agents; b++ {
			for k := range nb {
				p.Functions = append(p.Functions, mva.Function{Name: fmt.Sprintf("e%d_%d_%d", a, b, k), Scope: []int{v(a, k), v(b, (k+a+b)%nb)}, Costs: table(16)})
			}
		}
	}
	return p
}

// TestSolvedResponsesWide runs MGM with the default (automatic) path on
// agents too large to enumerate by default, and checks monotonicity and
// 1-optimality by brute force.
func TestSolvedResponsesWide(t *testing.T) {
	ctx := context.Background()
	converged := 0
	seeds := uint64(4)
	for seed := uint64(1); seed <= seeds; seed++ {
		p := wideProblem(seed)
		tr, _ := runTrace(ctx, t, p, lstest.Configs(testSolvers())[1], seed, map[string]float64{"rounds": 40})
		for _, pr := range tr.rec.Protos {
			if !pr.(*Agent).resp.Solving() {
				t.Fatalf("seed %d: an agent with %d rows enumerates", seed, pr.(*Agent).nb.Rows())
			}
		}
		if brCheck(ctx, t, fmt.Sprintf("seed %d", seed), tr.rec.Nodes, tr.rows, tr.lastMoved()) {
			converged++
		}
	}
	if converged < int(seeds)-1 {
		t.Errorf("only %d of %d runs reached a fixed point", converged, seeds)
	}
}

func TestResponseParameters(t *testing.T) {
	ctx := context.Background()
	for _, params := range []map[string]float64{
		{"response": 4}, {"response": -1}, {"response": 1.5}, {"response_entries": -1},
		{"block_entries": 0}, {"block_entries": 2.5},
	} {
		if _, err := sim.Solve(ctx, lstest.Fixed(), lstest.Configs(testSolvers())[0].Options(New, 1, params)); err == nil {
			t.Errorf("params %v accepted", params)
		}
	}
}

// TestBlockResponses runs MGM with block-descent responses (response = 3,
// forced on every agent by response_entries = 1) on the wide instances,
// lazily tabled so that the descent's completions are offered to the
// agents' tables. Each round's global cost is summed from the costs the
// agents held for their rows at that round (an offer may later lower a
// row's cost) and must never rise; the assembled answer must be the last
// round's rows at that cost, no worse than the start.
func TestBlockResponses(t *testing.T) {
	ctx := context.Background()
	moved := 0
	for _, cfg := range []lstest.Config{lstest.Configs(testSolvers())[0], lstest.Configs(testSolvers())[2]} {
		for seed := uint64(1); seed <= 4; seed++ {
			where := fmt.Sprintf("%s seed %d", cfg.Name, seed)
			p := wideProblem(seed)
			params := map[string]float64{"rounds": 30, "response": 3, "response_entries": 1, "init": 2}
			var rec lstest.Recorder
			var rows [][]int
			var local [][]localsearch.Cost
			factory := rec.Wrap(func(n *mva.Node) (mva.Protocol, error) {
				pr, err := New(n)
				if err != nil {
					return nil, err
				}
				a := pr.(*Agent)
				a.onRound = func(round, row int, _ bool) {
					for len(rows) <= round {
						rows = append(rows, make([]int, n.NumAgents))
						local = append(local, make([]localsearch.Cost, n.NumAgents))
					}
					c, err := localsearch.RowCost(ctx, n.Local, row)
					if err != nil {
						t.Error(err)
					}
					rows[round][n.ID], local[round][n.ID] = row, c
				}
				return pr, nil
			})
			zero, err := sim.Solve(ctx, p, cfg.Options(New, seed, map[string]float64{"rounds": 0, "init": 2}))
			if err != nil {
				t.Fatal(err)
			}
			sol, err := sim.Solve(ctx, p, cfg.Options(factory, seed, params))
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			for _, pr := range rec.Protos {
				if !pr.(*Agent).resp.Blocks() {
					t.Fatalf("%s: an agent did not answer by block descent", where)
				}
			}
			prev := localsearch.Of(zero.Cost)
			start := prev
			for r := 1; r < len(rows); r++ {
				c := externalCost(p, rec.Nodes, rows[r])
				for _, l := range local[r] {
					c = c.Add(l)
				}
				if c.Hard > prev.Hard || c.Hard == prev.Hard && c.Soft > prev.Soft+1e-9*math.Max(1, math.Abs(prev.Soft)) {
					t.Errorf("%s: round %d: global cost rose from %v to %v", where, r, prev, c)
				}
				if !slices.Equal(rows[r], rows[r-1]) {
					moved++
				}
				prev = c
			}
			if final := localsearch.Of(sol.Cost); final.Hard != prev.Hard || math.Abs(final.Soft-prev.Soft) > 1e-9*math.Max(1, math.Abs(prev.Soft)) || start.Less(final) {
				t.Errorf("%s: answer costs %v, the last round %v, the start %v", where, final, prev, start)
			}
		}
	}
	if moved < 8 {
		t.Errorf("only %d rounds moved anyone", moved)
	}
}

// externalCost sums the functions between agents with every agent's
// boundary at its row.
func externalCost(p *mva.Problem, nodes []*mva.Node, rows []int) localsearch.Cost {
	assign := make([]int, len(p.Variables))
	for i, n := range nodes {
		b := make([]int, len(n.Sub().Boundary))
		n.Local.LP.DecodeRow(rows[i], b)
		for k, v := range n.Sub().Boundary {
			assign[v] = b[k]
		}
	}
	var total localsearch.Cost
	for _, fi := range nodes[0].Decomp.External {
		f := &p.Functions[fi]
		idx := 0
		for _, v := range f.Scope {
			idx = idx*p.DomainSize(v) + assign[v]
		}
		total = total.Add(localsearch.Of(f.Costs[idx]))
	}
	return total
}
