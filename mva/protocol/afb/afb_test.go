package afb

import (
	"fmt"
	"math"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// variants are the parameter sets the random tests rotate through: the
// defaults, the thesis's configuration, and every option of §1.
var variants = []map[string]float64{
	nil,
	{"afb_candidates": CandidatesLex, "afb_estimate": EstimateDecoupled},
	{"afb_candidates": CandidatesStatic, "afb_estimate": EstimateHybrid},
	{"afb_candidates": CandidatesLex, "afb_order": OrderDegree},
	{"afb_order": OrderLinks, "afb_hplus": 1},
	{"afb_recheck": 1, "afb_zero_stop": 1},
	{"afb_candidates": CandidatesLex, "afb_estimate": EstimateHybrid, "afb_hplus": 1, "afb_order": OrderDegree},
}

// configs is every combination of local solver, table mode, wire faults
// and parameter variant.
func configs() []run {
	var rs []run
	for _, v := range variants {
		for _, solver := range []string{"dfbnb", "be"} {
			for _, eager := range []bool{false, true} {
				for _, f := range []sim.Faults{{}, {Duplicate: 0.3, Reorder: 0.5}} {
					rs = append(rs, run{solver: solver, eager: eager, faults: f, params: v})
				}
			}
		}
	}
	return rs
}

// randomProblem is the seeded random problem of the brief: 2–5 agents with
// 2–4 variables each, domains 2–3, arity ≤ 3, some hard entries.
func randomProblem(seed int64) *mva.Problem {
	agents := 2 + int(seed%4)
	hard := 0.04
	if seed%3 == 0 {
		hard = 0.15
	}
	return randprob.New(seed, randprob.Options{
		Agents: agents, Vars: agents * (2 + int(seed/4%3)),
		MinDomain: 2, MaxDomain: 3, MaxArity: 3,
		Functions: agents*2 + int(seed%5), HardProb: hard,
		IntCosts: true, Locality: 0.5,
	})
}

// smallProblem is a random problem of 2–3 agents, for tests that put
// several problems side by side.
func smallProblem(seed int64) *mva.Problem {
	agents := 2 + int(seed%2)
	return randprob.New(seed, randprob.Options{
		Agents: agents, Vars: agents * (2 + int(seed/2%2)),
		MinDomain: 2, MaxDomain: 3, MaxArity: 3,
		Functions: agents * 2, HardProb: 0.05, IntCosts: true, Locality: 0.5,
	})
}

// checkOptimal runs AFB under r and compares with the reference optimum:
// the assembled assignment's true cost, every agent's reported cost and
// its optimality flag.
func checkOptimal(t *testing.T, p *mva.Problem, r run, want float64) outcome {
	t.Helper()
	o := solveChecked(t, p, r)
	if !sameCost(o.cost, want) {
		t.Fatalf("%v: cost %v, optimum %v", r, o.cost, want)
	}
	for i, res := range o.results {
		if !res.Optimal || !sameCost(res.Cost, o.cost) {
			t.Fatalf("%v: agent %d reports %+v, true cost %v", r, i, res, o.cost)
		}
	}
	return o
}

func TestRandomOptimal(t *testing.T) {
	cs := configs()
	n := 5 * len(cs) // 280 problems, every configuration on five of them
	if testing.Short() {
		n = len(cs)
	}
	for seed := int64(1); seed <= int64(n); seed++ {
		p := randomProblem(seed)
		want := reference(t, p)
		r := cs[int(seed)%len(cs)]
		r.seed = uint64(seed)
		t.Run(fmt.Sprintf("p%d/%v", seed, r), func(t *testing.T) {
			checkOptimal(t, p, r, want)
		})
	}
}

// TestRandomInterleavings runs some problems under many wire seeds: the
// optimum never depends on the delivery order.
func TestRandomInterleavings(t *testing.T) {
	for seed := int64(500); seed < 530; seed++ {
		p := randomProblem(seed)
		want := reference(t, p)
		for s := range uint64(4) {
			r := run{solver: "dfbnb", faults: sim.Faults{Duplicate: 0.3, Reorder: 0.5}, seed: s + 1,
				params: variants[int(s+uint64(seed))%len(variants)]}
			t.Run(fmt.Sprintf("p%d/%v", seed, r), func(t *testing.T) { checkOptimal(t, p, r, want) })
		}
	}
}

// union returns p and q side by side: no function links them, so the
// agent graph has at least two components.
func union(p, q *mva.Problem) *mva.Problem {
	u := &mva.Problem{Name: p.Name + "+" + q.Name, Offset: p.Offset + q.Offset}
	u.Agents = append(append(u.Agents, p.Agents...), q.Agents...)
	for i := range u.Agents {
		u.Agents[i].Name = fmt.Sprintf("a%d", i)
	}
	u.Variables = append(u.Variables, p.Variables...)
	for _, v := range q.Variables {
		v.Agent += len(p.Agents)
		u.Variables = append(u.Variables, v)
	}
	for i := range u.Variables {
		u.Variables[i].Name = fmt.Sprintf("x%d", i)
	}
	u.Functions = append(u.Functions, p.Functions...)
	for _, f := range q.Functions {
		sc := make([]int, len(f.Scope))
		for i, v := range f.Scope {
			sc[i] = v + len(p.Variables)
		}
		f.Scope = sc
		u.Functions = append(u.Functions, f)
	}
	return u
}

// localOnly returns p's functions whose scope lies within one agent.
func localOnly(p *mva.Problem) []mva.Function {
	var fs []mva.Function
	for _, f := range p.Functions {
		one := true
		for _, v := range f.Scope {
			one = one && p.Variables[v].Agent == p.Variables[f.Scope[0]].Agent
		}
		if one {
			fs = append(fs, f)
		}
	}
	return fs
}

// TestDisconnected covers agent graphs with several components and agents
// without boundary variables: one AFB instance over one order solves them.
func TestDisconnected(t *testing.T) {
	cs := configs()
	for seed := int64(1); seed <= 40; seed++ {
		var p *mva.Problem
		switch seed % 3 {
		case 0: // two random problems side by side
			p = union(smallProblem(seed+1000), smallProblem(seed+2000))
		case 1: // only local functions: every agent is isolated, with no boundary
			p = randprob.New(seed, randprob.Options{Agents: 3, Vars: 8, MinDomain: 2, MaxDomain: 3,
				MaxArity: 2, Functions: 8, Locality: 1, IntCosts: true, HardProb: 0.05})
			p.Functions = localOnly(p)
			p = union(p, smallProblem(seed+3000))
		default: // a connected problem plus an agent with no boundary
			q := randprob.New(seed, randprob.Options{Agents: 1, Vars: 3, MinDomain: 2, MaxDomain: 3,
				MaxArity: 3, Functions: 3, IntCosts: true})
			p = union(q, smallProblem(seed+4000))
		}
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		d := mva.Decompose(p)
		if seed%3 != 0 && len(d.Subs[0].Boundary) != 0 {
			t.Fatalf("p%d: agent 0 has boundary %v", seed, d.Subs[0].Boundary)
		}
		want := reference(t, p)
		r := cs[int(seed*5)%len(cs)]
		r.seed = uint64(seed)
		t.Run(fmt.Sprintf("p%d/%v", seed, r), func(t *testing.T) { checkOptimal(t, p, r, want) })
	}
}

// TestShiftedCosts covers negative costs, non-integer costs and a constant
// offset: AFB works on shifted costs and reports the original scale.
func TestShiftedCosts(t *testing.T) {
	cs := configs()
	for seed := int64(1); seed <= 30; seed++ {
		p := randprob.New(seed, randprob.Options{
			Agents: 2 + int(seed%3), Vars: 8, MinDomain: 2, MaxDomain: 3, MaxArity: 3,
			Functions: 10, HardProb: 0.05, Locality: 0.5, IntCosts: seed%2 == 0,
		})
		for i := range p.Functions {
			if i%2 == int(seed%2) {
				for j, c := range p.Functions[i].Costs {
					p.Functions[i].Costs[j] = c - 7.25
				}
			}
		}
		p.Offset = -3.5
		want := reference(t, p)
		r := cs[int(seed*3)%len(cs)]
		r.seed = uint64(seed)
		t.Run(fmt.Sprintf("p%d/%v", seed, r), func(t *testing.T) { checkOptimal(t, p, r, want) })
	}
}

// TestInfeasible: a problem without a finite solution ends with cost +Inf,
// proved (every agent is done), through every mode.
func TestInfeasible(t *testing.T) {
	p := randomProblem(7)
	// An external function that forbids everything.
	ext := mva.Decompose(p).External
	if len(ext) == 0 {
		t.Fatal("no external function")
	}
	for j := range p.Functions[ext[0]].Costs {
		p.Functions[ext[0]].Costs[j] = mva.Hard
	}
	q := randomProblem(8)
	// A local function that forbids everything.
	q.Functions = append(q.Functions, mva.Function{Name: "no", Scope: []int{0}, Costs: make([]float64, q.DomainSize(0))})
	for j := range q.Functions[len(q.Functions)-1].Costs {
		q.Functions[len(q.Functions)-1].Costs[j] = mva.Hard
	}
	for _, prob := range []*mva.Problem{p, q} {
		if want := reference(t, prob); !mva.IsHard(want) {
			t.Fatalf("%s: reference %v, want +Inf", prob.Name, want)
		}
		for i, r := range configs() {
			if i%4 != 0 {
				continue
			}
			r.seed = uint64(i)
			o := checkOptimal(t, prob, r, math.Inf(1))
			if !mva.IsHard(o.results[0].Cost) {
				t.Errorf("%v: cost %v", r, o.results[0].Cost)
			}
		}
	}
}

// TestSingleAgent: with one agent AFB is its local optimum.
func TestSingleAgent(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		p := randprob.New(seed, randprob.Options{Agents: 1, Vars: 5, MinDomain: 2, MaxDomain: 3,
			MaxArity: 3, Functions: 6, IntCosts: true})
		o := checkOptimal(t, p, run{solver: "dfbnb", params: variants[seed%int64(len(variants))]}, reference(t, p))
		if o.metrics.Messages != 0 {
			t.Errorf("p%d: %d messages", seed, o.metrics.Messages)
		}
	}
}

// TestZeroStop: with afb_zero_stop a zero-cost solution ends the search
// at once, and the answer is still common and optimal.
func TestZeroStop(t *testing.T) {
	found := 0
	for seed := int64(1); seed <= 40 && found < 5; seed++ {
		p := randprob.New(seed, randprob.Options{Agents: 3, Vars: 6, MinDomain: 2, MaxDomain: 2,
			MaxArity: 2, Functions: 6, IntCosts: true, MaxCost: 2})
		if reference(t, p) != 0 {
			continue
		}
		found++
		o := checkOptimal(t, p, run{solver: "dfbnb", params: map[string]float64{"afb_zero_stop": 1}}, 0)
		plain := checkOptimal(t, p, run{solver: "dfbnb"}, 0)
		if o.metrics.Messages > plain.metrics.Messages {
			t.Errorf("p%d: %d messages with afb_zero_stop, %d without", seed, o.metrics.Messages, plain.metrics.Messages)
		}
	}
	if found == 0 {
		t.Fatal("no problem with optimum 0")
	}
}

func TestParams(t *testing.T) {
	p := randomProblem(1)
	d := mva.Decompose(p)
	nodes, _, err := mva.BuildNodes(t.Context(), d, func(lp *mva.LocalProblem) (mva.LocalSolver, error) {
		return nil, nil
	}, false, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []map[string]float64{
		{"afb_order": 3}, {"afb_candidates": -1}, {"afb_estimate": 0.5}, {"afb_hplus": 2},
		{"afb_zero_stop": math.NaN()}, {"afb_recheck": math.Inf(1)},
	} {
		nodes[0].Params = bad
		if _, err := New(nodes[0]); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if _, err := New(&mva.Node{}); err == nil {
		t.Error("empty node accepted")
	}
}

// TestLazyRows checks the MVA-lazy claims of the package comment: the
// lexicographic pre-test takes the same decisions whether LB is known
// (eager) or not (lazy), and with hybrid estimates the search computes
// only some of the rows.
func TestLazyRows(t *testing.T) {
	var computed, total int
	for seed := int64(1); seed <= 20; seed++ {
		p := randomProblem(seed)
		want := reference(t, p)
		for _, est := range []float64{EstimateExact, EstimateHybrid} {
			params := map[string]float64{"afb_candidates": CandidatesLex, "afb_estimate": est}
			lazy := checkOptimal(t, p, run{solver: "dfbnb", params: params}, want)
			eager := checkOptimal(t, p, run{solver: "dfbnb", eager: true, params: params}, want)
			if est == EstimateExact && lazy.metrics.Messages != eager.metrics.Messages {
				t.Errorf("p%d: %d messages lazy, %d eager", seed, lazy.metrics.Messages, eager.metrics.Messages)
			}
			if est == EstimateHybrid {
				for _, a := range lazy.agents {
					for _, k := range a.n.Local.Table.Known {
						if k {
							computed++
						}
						total++
					}
				}
			}
		}
	}
	t.Logf("lazy, lexicographic, hybrid: %d of %d rows computed", computed, total)
	if computed >= total {
		t.Errorf("every row was computed (%d)", total)
	}
}
