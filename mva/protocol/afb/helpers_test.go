package afb

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// sameCost compares costs exactly for +Inf and up to rounding otherwise.
func sameCost(a, b float64) bool {
	if mva.IsHard(a) || mva.IsHard(b) {
		return mva.IsHard(a) && mva.IsHard(b)
	}
	return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b))
}

// reference returns the optimum of p, solved centrally: by brute force when
// the whole space is small enough to enumerate quickly, otherwise by bucket
// elimination (itself tested against brute force in package local).
func reference(t testing.TB, p *mva.Problem) float64 {
	t.Helper()
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	space := 1.0
	for _, d := range lp.Domains {
		space *= float64(d)
	}
	name := "bruteforce"
	if space > 1<<18 {
		name = "be"
	}
	s, err := local.New(name, lp)
	if err != nil {
		t.Fatal(err)
	}
	in := make([]int, lp.NumInterior())
	c, err := s.SolveRow(context.Background(), nil, in)
	if err != nil {
		t.Fatal(err)
	}
	return c + p.Offset
}

// run is one protocol run's configuration.
type run struct {
	solver string
	eager  bool
	faults sim.Faults
	seed   uint64
	params map[string]float64
}

func (r run) String() string {
	var ps []string
	for k, v := range r.params {
		ps = append(ps, fmt.Sprintf("%s=%g", strings.TrimPrefix(k, "afb_"), v))
	}
	slices.Sort(ps)
	table := "lazy"
	if r.eager {
		table = "eager"
	}
	return fmt.Sprintf("%s/%s/dup%g-reo%g/seed%d/%s", r.solver, table, r.faults.Duplicate, r.faults.Reorder, r.seed, strings.Join(ps, ","))
}

// outcome is a checked run's result.
type outcome struct {
	cost    float64 // true cost of the assembled assignment
	results []mva.AgentResult
	metrics mva.Metrics
	agents  []*agent
}

// solveChecked runs AFB on p under r on the simulated runtime, with every
// agent wrapped in an invariant checker (notes §1.9), and assembles the
// answer as sim.Solve does.
func solveChecked(t testing.TB, p *mva.Problem, r run) outcome {
	t.Helper()
	ctx := context.Background()
	d := mva.Decompose(p)
	newSolver := func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New(r.solver, lp) }
	nodes, setup, err := mva.BuildNodes(ctx, d, newSolver, r.eager, r.seed, r.params)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := newInvariants(p, d)
	if err != nil {
		t.Fatal(err)
	}
	protos := make([]mva.Protocol, len(nodes))
	for i, n := range nodes {
		pr, err := New(n)
		if err != nil {
			t.Fatal(err)
		}
		inv.agents = append(inv.agents, pr.(*agent))
		protos[i] = &checked{agent: pr.(*agent), inv: inv}
	}
	out, err := sim.Run(ctx, nodes, protos, sim.Config{Faults: r.faults, Seed: r.seed, SetupMs: setup})
	if err != nil {
		t.Fatalf("%v: %v", r, err)
	}
	if inv.err != nil {
		t.Fatalf("%v: invariant: %v", r, inv.err)
	}
	if err := inv.final(); err != nil {
		t.Fatalf("%v: %v", r, err)
	}
	views := make([]*mva.LocalView, len(nodes))
	for i, n := range nodes {
		views[i] = n.Local
	}
	_, cost, err := mva.Assemble(ctx, d, views, out.Results)
	if err != nil {
		t.Fatal(err)
	}
	return outcome{cost: cost, results: out.Results, metrics: out.Metrics, agents: inv.agents}
}

// invariants checks notes §1.9 after every Start and Step of every agent,
// against its own eager reference tables, so that checking never computes
// a row of the agents' (possibly lazy) tables.
type invariants struct {
	p      *mva.Problem
	d      *mva.Decomposition
	ref    []*mva.LocalView
	agents []*agent
	err    error
	state  map[*agent]*agentTrace
}

// agentTrace is what the checker remembers of one agent between calls.
type agentTrace struct {
	b      float64
	known  []uint64
	liveTS []uint64
	tried  map[string]map[int]bool // prefix stamps → rows assigned under it
}

func newInvariants(p *mva.Problem, d *mva.Decomposition) (*invariants, error) {
	inv := &invariants{p: p, d: d, state: map[*agent]*agentTrace{}}
	for i := range d.Subs {
		lp := mva.NewLocalProblem(p, &d.Subs[i])
		s, err := local.New("dfbnb", lp)
		if err != nil {
			return nil, err
		}
		v, err := mva.NewLocalView(context.Background(), lp, s, true)
		if err != nil {
			return nil, err
		}
		inv.ref = append(inv.ref, v)
	}
	return inv, nil
}

func (inv *invariants) fail(format string, args ...any) {
	if inv.err == nil {
		inv.err = fmt.Errorf(format, args...)
	}
}

// origCost returns the original-scale cost of the assigned prefix of rows
// (positions 0..last, in a's order): each agent's row plus every external
// function whose agents are all assigned; and the shift the protocol should
// have accumulated for it.
func (inv *invariants) origCost(a *agent, rows []int, last int) (cost, shift float64) {
	p := inv.p
	assigned := map[int]bool{}
	assign := make([]int, len(p.Variables))
	for pos := 0; pos <= last; pos++ {
		id := a.order[pos]
		assigned[id] = true
		c, _, _ := inv.ref[id].RowIndex(context.Background(), rows[pos])
		cost += c
		b := make([]int, len(inv.d.Subs[id].Boundary))
		inv.ref[id].LP.DecodeRow(rows[pos], b)
		for j, v := range inv.d.Subs[id].Boundary {
			assign[v] = b[j]
		}
		for _, fi := range inv.d.Subs[id].Functions {
			shift += negShift(p.Functions[fi].Costs)
		}
	}
	for _, fi := range inv.d.External {
		f := &p.Functions[fi]
		all := true
		for _, v := range f.Scope {
			all = all && assigned[p.Variables[v].Agent]
		}
		if !all {
			continue
		}
		idx := 0
		for _, v := range f.Scope {
			idx = idx*p.DomainSize(v) + assign[v]
		}
		cost += f.Costs[idx]
		shift += negShift(f.Costs)
	}
	return cost, shift
}

// after checks agent a after one of its calls and the messages it sent.
func (inv *invariants) after(a *agent, sent []mva.Message) {
	st := inv.state[a]
	if st == nil {
		st = &agentTrace{b: math.Inf(1), known: make([]uint64, a.m), tried: map[string]map[int]bool{}}
		inv.state[a] = st
	}
	k := a.k
	// 1. Cost accounting of the working CPA.
	if last := a.cpa.last; last >= 0 {
		cost, shift := inv.origCost(a, a.cpa.vals, last)
		if !sameCost(a.cpa.shift, shift) || !sameCost(a.cpa.cost+a.cpa.shift, cost) || a.cpa.cost < 0 {
			inv.fail("agent %d: CPA %v cost %v shift %v, want %v and %v", a.id, a.cpa.vals, a.cpa.cost, a.cpa.shift, cost-shift, shift)
		}
	}
	// 5. B never increases and is witnessed by best.
	if a.best.cost > st.b {
		inv.fail("agent %d: B went up from %v to %v", a.id, st.b, a.best.cost)
	}
	st.b = a.best.cost
	if a.best.rows != nil {
		cost, shift := inv.origCost(a, a.best.rows, a.m-1)
		if !sameCost(a.best.shift, shift) || !sameCost(a.best.cost+a.best.shift, cost) {
			inv.fail("agent %d: best %v claims %v+%v, costs %v", a.id, a.best.rows, a.best.cost, a.best.shift, cost)
		}
	} else if !mva.IsHard(a.best.cost) {
		inv.fail("agent %d: B = %v without a witness", a.id, a.best.cost)
	}
	// 3. Timestamps only move forward.
	if compareTS(a.known, st.known, k) < 0 {
		inv.fail("agent %d: known went back from %v to %v", a.id, st.known, a.known)
	}
	st.known = slices.Clone(a.known)
	if a.cpa.vals[k] >= 0 {
		if st.liveTS != nil && compareTS(a.cpa.ts, st.liveTS, k+1) < 0 {
			inv.fail("agent %d: live stamps went back from %v to %v", a.id, st.liveTS, a.cpa.ts)
		}
		st.liveTS = slices.Clone(a.cpa.ts)
	}
	// 4. Each row is assigned at most once per prefix: read it off the
	// CPAs and solutions the agent sent.
	for _, m := range sent {
		var key string
		var row int
		switch {
		case m.Kind == kindCPA && a.position(m.To) == k+1:
			c, _, err := decodeCPA(m.Body, a.rows, false)
			if err != nil {
				inv.fail("agent %d sent a bad CPA: %v", a.id, err)
				continue
			}
			key, row = fmt.Sprint(c.ts[:k]), c.vals[k]
		case m.Kind == kindNewSolution && m.To == a.order[0]:
			// One Step handles one prefix: the current one.
			s, err := decodeSolution(m.Body, a.rows)
			if err != nil {
				inv.fail("agent %d sent a bad solution: %v", a.id, err)
				continue
			}
			key, row = fmt.Sprint(a.cpa.ts[:k]), s.rows[k]
		default:
			continue
		}
		if st.tried[key] == nil {
			st.tried[key] = map[int]bool{}
		}
		if st.tried[key][row] {
			inv.fail("agent %d: row %d assigned twice under prefix %s", a.id, row, key)
		}
		st.tried[key][row] = true
	}
}

// final checks that every agent ended with the same answer (invariant 7).
func (inv *invariants) final() error {
	first := inv.agents[0]
	for _, a := range inv.agents {
		if !a.done {
			return fmt.Errorf("agent %d not done", a.id)
		}
		if a.best.cost != first.best.cost && !(mva.IsHard(a.best.cost) && mva.IsHard(first.best.cost)) ||
			!slices.Equal(a.best.rows, first.best.rows) {
			return fmt.Errorf("agents %d and %d disagree: %v %v vs %v %v", first.id, a.id, first.best.cost, first.best.rows, a.best.cost, a.best.rows)
		}
	}
	return nil
}

// checked wraps an agent with the invariant checker.
type checked struct {
	*agent
	inv *invariants
}

func (c *checked) Start(ctx context.Context) ([]mva.Message, error) {
	out, err := c.agent.Start(ctx)
	c.inv.after(c.agent, out)
	return out, err
}

func (c *checked) Step(ctx context.Context, m mva.Message) ([]mva.Message, error) {
	out, err := c.agent.Step(ctx, m)
	c.inv.after(c.agent, out)
	return out, err
}
