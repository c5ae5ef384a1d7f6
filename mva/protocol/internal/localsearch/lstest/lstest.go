// Package lstest holds the test helpers the D-Gibbs, MGM and MGM-2 tests
// share: the random instances, the run configurations (tables, local
// solvers, wire faults), brute-force optima, and global costs and
// k-optimality checks computed from outside the protocols.
package lstest

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// Instance returns the small random problem of seed: 2–5 agents, a few
// variables each, domains 2–3, arities up to 3, some hard entries, integer
// costs (frequent ties) for even seeds and real costs for odd ones.
func Instance(seed int64) *mva.Problem {
	agents := 2 + int(seed%4)
	return randprob.New(seed, randprob.Options{
		Agents: agents, Vars: agents + 1 + int(seed%3),
		MinDomain: 2, MaxDomain: 3, MaxArity: 3,
		Functions: 2*agents + 2, HardProb: 0.05,
		IntCosts: seed%2 == 0, MaxCost: 10, Locality: 0.4,
	})
}

// Solvers are the local solvers and factories the tests run protocols
// with. The tests pass them in (they import local and sampler): lstest
// itself, like everything under mva/, imports no solver.
type Solvers struct {
	// New returns the local solver of that name ("dfbnb", "be",
	// "bruteforce"): local.New.
	New func(name string, lp *mva.LocalProblem) (mva.LocalSolver, error)
	// Exact and Sampler reach the protocols through their nodes:
	// local.Exact and sampler.NewConditionalSampler.
	Exact   mva.ExactFactory
	Sampler mva.SamplerFactory
}

// Optimum returns the optimal cost of p by brute force over the whole
// problem (Offset included).
func Optimum(s Solvers, p *mva.Problem) (float64, error) {
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	bf, err := s.New("bruteforce", lp)
	if err != nil {
		return 0, err
	}
	in := make([]int, lp.NumInterior())
	c, err := bf.SolveRow(context.Background(), nil, in)
	if err != nil {
		return 0, err
	}
	return c + p.Offset, nil
}

// Config is one way of running a protocol.
type Config struct {
	Name   string
	Eager  bool
	Solver string
	Faults sim.Faults
	// Solvers build Solver and the nodes' factories.
	Solvers Solvers
}

// Configs are the variants every protocol is tested under: lazy and eager
// tables, local solvers dfbnb and be, with and without wire faults.
func Configs(s Solvers) []Config {
	faults := sim.Faults{Duplicate: 0.3, Reorder: 0.5}
	return []Config{
		{"lazy-dfbnb", false, "dfbnb", sim.Faults{}, s},
		{"eager-be", true, "be", sim.Faults{}, s},
		{"lazy-dfbnb-faults", false, "dfbnb", faults, s},
		{"eager-dfbnb-faults", true, "dfbnb", faults, s},
	}
}

// Options returns sim options for running proto under c.
func (c Config) Options(proto sim.ProtocolFactory, seed uint64, params map[string]float64) sim.Options {
	solver, s := c.Solver, c.Solvers
	return sim.Options{
		Protocol: proto,
		Solver:   func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return s.New(solver, lp) },
		Eager:    c.Eager, Seed: seed, Params: params,
		Exact: s.Exact, Sampler: s.Sampler,
		Config: sim.Config{Faults: c.Faults, Seed: seed},
	}
}

// Same reports whether two costs are equal up to rounding (1e-9
// relative), infinities included.
func Same(a, b float64) bool {
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// Recorder wraps a protocol factory to keep the nodes it was given, so
// that tests can evaluate global costs of the agents' rows.
type Recorder struct {
	Nodes  []*mva.Node
	Protos []mva.Protocol
}

// Wrap returns a factory that records every node and protocol made by f.
func (r *Recorder) Wrap(f sim.ProtocolFactory) sim.ProtocolFactory {
	return func(n *mva.Node) (mva.Protocol, error) {
		p, err := f(n)
		if err != nil {
			return nil, err
		}
		r.Nodes = append(r.Nodes, n)
		r.Protos = append(r.Protos, p)
		return p, nil
	}
}

// Rows returns every agent's result as its MVA table row.
func Rows(nodes []*mva.Node, results []mva.AgentResult) []int {
	rows := make([]int, len(nodes))
	for i, n := range nodes {
		rows[i] = n.Local.LP.EncodeRow(results[i].Boundary)
	}
	return rows
}

// PairCost returns the global cost, as a pair, of the assignment in which
// agent i takes row rows[i] with the row's completion: the protocols'
// own model of the total, which MGM's gains are exact in.
func PairCost(ctx context.Context, nodes []*mva.Node, rows []int) (localsearch.Cost, error) {
	if len(nodes) == 0 {
		return localsearch.Cost{}, nil
	}
	d := nodes[0].Decomp
	p := d.Problem
	assign := make([]int, len(p.Variables))
	var total localsearch.Cost
	for i, n := range nodes {
		c, err := localsearch.RowCost(ctx, n.Local, rows[i])
		if err != nil {
			return localsearch.Cost{}, err
		}
		total = total.Add(c)
		b := make([]int, len(n.Sub().Boundary))
		n.Local.LP.DecodeRow(rows[i], b)
		for k, v := range n.Sub().Boundary {
			assign[v] = b[k]
		}
	}
	for _, fi := range d.External {
		f := &p.Functions[fi]
		idx := 0
		for _, v := range f.Scope {
			idx = idx*p.DomainSize(v) + assign[v]
		}
		total = total.Add(localsearch.Of(f.Costs[idx]))
	}
	return total, nil
}

// Improvable looks for a change of the rows of at most k neighbouring
// agents (k = 1 or 2) that lowers PairCost, and describes the first one
// found; "" means the assignment is k-optimal.
func Improvable(ctx context.Context, nodes []*mva.Node, rows []int, k int) (string, error) {
	cur, err := PairCost(ctx, nodes, rows)
	if err != nil {
		return "", err
	}
	try := append([]int(nil), rows...)
	numRows := func(i int) int { r, _ := nodes[i].Local.LP.Rows(); return r }
	for i := range nodes {
		for ri := range numRows(i) {
			try[i] = ri
			c, err := PairCost(ctx, nodes, try)
			if err != nil {
				return "", err
			}
			if lower(c, cur) {
				return fmt.Sprintf("agent %d: row %d→%d lowers %v to %v", i, rows[i], ri, cur, c), nil
			}
			if k < 2 {
				continue
			}
			for _, j := range nodes[i].Neighbours {
				if j < i {
					continue
				}
				for rj := range numRows(j) {
					try[j] = rj
					c, err := PairCost(ctx, nodes, try)
					if err != nil {
						return "", err
					}
					if lower(c, cur) {
						return fmt.Sprintf("agents %d,%d: rows %d,%d→%d,%d lower %v to %v", i, j, rows[i], rows[j], ri, rj, cur, c), nil
					}
				}
				try[j] = rows[j]
			}
		}
		try[i] = rows[i]
	}
	return "", nil
}

// lower reports c < cur by more than rounding: equal costs summed in a
// different order must not count as an improvement.
func lower(c, cur localsearch.Cost) bool {
	if c.Hard != cur.Hard {
		return c.Hard < cur.Hard
	}
	return c.Soft < cur.Soft-1e-9*math.Max(1, math.Abs(cur.Soft))
}

// Fixed returns the fixed instance of the message-count tests: four
// agents, each owning a boundary variable b_i and an interior variable
// y_i (binary), with external functions b0–b1, b0–b2, b0–b3 and b1–b2, and
// local functions b_i–y_i. Neighbours: 0:{1,2,3} 1:{0,2} 2:{0,1} 3:{0},
// so Σ|N_i| = 8.
func Fixed() *mva.Problem {
	p := &mva.Problem{Name: "fixed-4"}
	for i := range 4 {
		p.Agents = append(p.Agents, mva.Agent{Name: fmt.Sprint("a", i)})
		p.Variables = append(p.Variables,
			mva.Variable{Name: fmt.Sprint("b", i), Domain: []string{"0", "1"}, Agent: i},
			mva.Variable{Name: fmt.Sprint("y", i), Domain: []string{"0", "1"}, Agent: i})
	}
	b := func(i int) int { return 2 * i }
	for k, e := range [][2]int{{0, 1}, {0, 2}, {0, 3}, {1, 2}} {
		p.Functions = append(p.Functions, mva.Function{
			Name: fmt.Sprint("e", k), Scope: []int{b(e[0]), b(e[1])},
			Costs: []float64{float64(k + 1), 4, 3, float64(2 * k)},
		})
	}
	for i := range 4 {
		p.Functions = append(p.Functions, mva.Function{
			Name: fmt.Sprint("l", i), Scope: []int{b(i), b(i) + 1},
			Costs: []float64{float64(i), 2, 5, 1},
		})
	}
	return p
}

// Fuzz runs a fuzz target that feeds random messages to Step: it builds
// the agents of p, delivers the first warm messages of a clean run (FIFO)
// to reach a state in the middle of the protocol, then hands one agent a
// message with a random sender, kind (one of kinds) and body. Step may
// return an error, never panic. The corpus is seeded with every message
// of a clean run at its place.
func Fuzz(f *testing.F, s Solvers, p *mva.Problem, proto sim.ProtocolFactory, params map[string]float64, kinds []string) {
	ctx := context.Background()
	setup := func() ([]mva.Protocol, []mva.Message, error) {
		solver := func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return s.New("dfbnb", lp) }
		nodes, _, err := mva.BuildNodes(ctx, mva.Decompose(p), solver, false, 1, params)
		if err != nil {
			return nil, nil, err
		}
		protos := make([]mva.Protocol, len(nodes))
		var queue []mva.Message
		for i, n := range nodes {
			n.Exact, n.Sampler = s.Exact, s.Sampler
			if protos[i], err = proto(n); err != nil {
				return nil, nil, err
			}
		}
		for _, pr := range protos {
			out, err := pr.Start(ctx)
			if err != nil {
				return nil, nil, err
			}
			queue = append(queue, out...)
		}
		return protos, queue, nil
	}
	// deliver runs the first n messages of the queue, FIFO.
	deliver := func(protos []mva.Protocol, queue []mva.Message, n int, seen func(int, mva.Message)) ([]mva.Message, error) {
		for i := 0; i < n && len(queue) > 0; i++ {
			m := queue[0]
			queue = queue[1:]
			if seen != nil {
				seen(i, m)
			}
			out, err := protos[m.To].Step(ctx, m)
			if err != nil {
				return nil, err
			}
			queue = append(queue, out...)
		}
		return queue, nil
	}
	protos, queue, err := setup()
	if err != nil {
		f.Fatal(err)
	}
	kindIndex := func(k string) uint8 {
		for i, x := range kinds {
			if x == k {
				return uint8(i)
			}
		}
		return 0
	}
	if _, err := deliver(protos, queue, 400, func(i int, m mva.Message) {
		f.Add(uint8(m.To), uint8(m.From), kindIndex(m.Kind), m.Body, uint16(i))
	}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, to, from, kind uint8, body []byte, warm uint16) {
		protos, queue, err := setup()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := deliver(protos, queue, int(warm)%400, nil); err != nil {
			t.Fatal(err)
		}
		n := len(protos)
		m := mva.Message{From: int(from) % n, To: int(to) % n, Kind: kinds[int(kind)%len(kinds)], Body: body}
		_, _ = protos[m.To].Step(ctx, m)
	})
}
