package mva

import (
	"context"
	"fmt"
	"math"
	"time"
)

// Message is what protocol agents exchange. Body is the protocol's own
// binary encoding, so that the simulated runtime counts the same bytes the
// MQTT runtime sends and every decoder can be fuzzed.
type Message struct {
	From, To int
	Kind     string
	Body     []byte
}

// Protocol is one agent's side of a distributed protocol: a pure state
// machine in the shape of etcd's raft. It never touches a network, a clock
// or a goroutine; a driver (the simulated runtime, the MQTT runtime) calls
// Start once, then Step for every message delivered to it, and sends what
// they return. Delivery is exactly-once and FIFO on each sender→receiver
// link, with no order across links.
//
// This is the thesis's four-phase MVA agent loop (Figure 3.3) with the
// phases split between driver and protocol: the driver waits (phase 1) and
// hands each message to Step; the protocol checks whether the message
// completes a new assignment of its boundary variables (phase 2), asks its
// LocalView for that MVA row — the local solver runs here, or ran up front
// for an eager table (phase 3) — and performs the protocol's own step,
// returning the messages to send (phase 4).
type Protocol interface {
	Start(ctx context.Context) ([]Message, error)
	Step(ctx context.Context, m Message) ([]Message, error)
	// Done reports that the agent has its final answer and will send
	// nothing more unless a message arrives.
	Done() bool
	Result() AgentResult
}

// AgentResult is what an agent decided: the values of its boundary
// variables (in Subproblem.Boundary order) and, where the protocol knows
// it, the cost of the global solution it believes in.
type AgentResult struct {
	Boundary []int
	// Cost is the agent's view of the total cost of the solution (NaN when
	// the protocol does not compute it); the runtime recomputes the truth.
	Cost float64
	// Optimal is true when a complete protocol proved optimality.
	Optimal bool
	// Interior, when not nil, holds the values of the agent's interior
	// variables (in Subproblem.Interior order) that go with Boundary: a
	// protocol that samples the interior itself (MVA-D-Gibbs) decided
	// them. Nil means the MVA table's completion of Boundary.
	Interior []int
}

// Node is everything a protocol agent may use: its own subproblem through
// the MVA table (Local), the functions it shares with other agents, and
// who its neighbours are. Protocols read nothing else of the problem.
type Node struct {
	ID        int
	NumAgents int
	Decomp    *Decomposition
	Local     *LocalView
	// External indexes Problem.Functions: the functions between this agent
	// and others.
	External []int
	// Neighbours are the agents this one shares a function with, sorted.
	Neighbours []int
	// Seed is this agent's random seed, derived from the run's seed and ID.
	Seed uint64
	// Params are protocol parameters (name → value) from the command line.
	Params map[string]float64
	// Exact and Sampler build the solvers a protocol needs beyond its
	// local view: exact solvers of problems of its own (MGM's best
	// responses) and the interior's conditional sampler (MVA-D-Gibbs).
	// Nil when the run provides none; a protocol that needs one says so.
	Exact   ExactFactory
	Sampler SamplerFactory
}

// Sub returns the agent's subproblem.
func (n *Node) Sub() *Subproblem { return &n.Decomp.Subs[n.ID] }

// Problem returns the problem being solved.
func (n *Node) Problem() *Problem { return n.Decomp.Problem }

// Param returns a protocol parameter or def when it was not given.
func (n *Node) Param(name string, def float64) float64 {
	if v, ok := n.Params[name]; ok {
		return v
	}
	return def
}

// LocalView is an agent's MVA table together with the local solver that
// fills it, the "row oracle" of the protocols.
type LocalView struct {
	LP     *LocalProblem
	Solver LocalSolver
	Table  *Table
}

// NewLocalView builds the view; with eager it fills the whole table now
// (MVA-eager), otherwise rows are computed on first use (MVA-lazy).
func NewLocalView(ctx context.Context, lp *LocalProblem, s LocalSolver, eager bool) (*LocalView, error) {
	newTable := NewLazyTable
	if eager {
		newTable = NewTable
	}
	t, err := newTable(lp)
	if err != nil {
		return nil, err
	}
	v := &LocalView{LP: lp, Solver: s, Table: t}
	if eager {
		if err := t.Fill(ctx, s); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// Row returns the best local cost and interior assignment for boundary
// values b (Subproblem.Boundary order).
func (v *LocalView) Row(ctx context.Context, b []int) (float64, []int32, error) {
	return v.Table.Lookup(ctx, v.Solver, v.LP.EncodeRow(b))
}

// RowIndex is Row for a row index.
func (v *LocalView) RowIndex(ctx context.Context, row int) (float64, []int32, error) {
	return v.Table.Lookup(ctx, v.Solver, row)
}

// ExternalOf returns the functions of d.External whose scope holds one of
// agent a's variables.
func (d *Decomposition) ExternalOf(a int) []int {
	var out []int
	for _, fi := range d.External {
		for _, v := range d.Problem.Functions[fi].Scope {
			if d.Problem.Variables[v].Agent == a {
				out = append(out, fi)
				break
			}
		}
	}
	return out
}

// Assemble turns the agents' results into a complete assignment: boundary
// values from the agents, interior values from the agents where they gave
// them (AgentResult.Interior), otherwise from their MVA tables. It returns
// the assignment and its true cost (Offset included).
func Assemble(ctx context.Context, d *Decomposition, views []*LocalView, results []AgentResult) ([]int, float64, error) {
	p := d.Problem
	assign := make([]int, len(p.Variables))
	for i := range d.Subs {
		s := &d.Subs[i]
		r := results[i]
		if len(r.Boundary) != len(s.Boundary) {
			return nil, 0, fmt.Errorf("agent %s returned %d boundary values for %d variables", p.Agents[i].Name, len(r.Boundary), len(s.Boundary))
		}
		for k, v := range s.Boundary {
			if r.Boundary[k] < 0 || r.Boundary[k] >= p.DomainSize(v) {
				return nil, 0, fmt.Errorf("agent %s: value index %d outside the domain of %s", p.Agents[i].Name, r.Boundary[k], p.Variables[v].Name)
			}
			assign[v] = r.Boundary[k]
		}
		if r.Interior != nil {
			if len(r.Interior) != len(s.Interior) {
				return nil, 0, fmt.Errorf("agent %s returned %d interior values for %d variables", p.Agents[i].Name, len(r.Interior), len(s.Interior))
			}
			for k, v := range s.Interior {
				if r.Interior[k] < 0 || r.Interior[k] >= p.DomainSize(v) {
					return nil, 0, fmt.Errorf("agent %s: value index %d outside the domain of %s", p.Agents[i].Name, r.Interior[k], p.Variables[v].Name)
				}
				assign[v] = r.Interior[k]
			}
			continue
		}
		c, interior, err := views[i].Row(ctx, r.Boundary)
		if err != nil {
			return nil, 0, err
		}
		if math.IsInf(c, 1) {
			// No feasible completion: keep the table's (zero) values so
			// the caller still gets a full assignment to report.
			continue
		}
		for k, v := range s.Interior {
			assign[v] = int(interior[k])
		}
	}
	cost, err := p.Eval(assign)
	return assign, cost, err
}

// SolverFactory makes a local solver for a subproblem; package local's New
// with a fixed name is one.
type SolverFactory func(lp *LocalProblem) (LocalSolver, error)

// BuildNodes prepares every agent of d for a protocol run: its local view
// (MVA table and solver; filled now when eager), external functions,
// neighbours and seed. Setup[i] is the time agent i spent filling its
// table, which the simulated clock charges to it.
func BuildNodes(ctx context.Context, d *Decomposition, newSolver SolverFactory, eager bool, seed uint64, params map[string]float64) ([]*Node, []float64, error) {
	nb := d.Neighbours()
	nodes := make([]*Node, len(d.Subs))
	setupMs := make([]float64, len(d.Subs))
	for i := range d.Subs {
		var err error
		if nodes[i], setupMs[i], err = BuildNode(ctx, d, nb, i, newSolver, eager, seed, params); err != nil {
			return nil, nil, err
		}
	}
	return nodes, setupMs, nil
}

// BuildNode is BuildNodes for agent i alone (nb is d.Neighbours()), so
// that a process running some of the agents builds, and when eager fills,
// only their tables; the node is the one BuildNodes gives agent i, and
// setupMs the time spent filling its table.
func BuildNode(ctx context.Context, d *Decomposition, nb [][]int, i int, newSolver SolverFactory, eager bool, seed uint64, params map[string]float64) (*Node, float64, error) {
	lp := NewLocalProblem(d.Problem, &d.Subs[i])
	s, err := newSolver(lp)
	if err != nil {
		return nil, 0, fmt.Errorf("agent %s: %w", d.Problem.Agents[i].Name, err)
	}
	start := time.Now()
	v, err := NewLocalView(ctx, lp, s, eager)
	if err != nil {
		return nil, 0, fmt.Errorf("agent %s: %w", d.Problem.Agents[i].Name, err)
	}
	setupMs := float64(time.Since(start).Nanoseconds()) / 1e6
	return &Node{
		ID: i, NumAgents: len(d.Subs), Decomp: d, Local: v,
		External: d.ExternalOf(i), Neighbours: nb[i],
		Seed: AgentSeed(seed, i), Params: params,
	}, setupMs, nil
}

// AgentSeed derives an agent's seed from the run's seed (SplitMix64), so
// that agents draw independent streams and a run is reproducible.
func AgentSeed(seed uint64, agent int) uint64 {
	z := seed + uint64(agent+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Offer records a completion of row found outside the local solver (a
// protocol's best response by block descent, which optimises boundary and
// interior together) when the row is unknown or the offer is cheaper than
// its known completion, and reports whether it was recorded. A row's cost
// stays the best completion known, so an offer only ever lowers it; the
// interior must be a complete assignment of the interior variables whose
// cost, with the row's boundary values, is cost.
func (v *LocalView) Offer(row int, cost float64, interior []int) bool {
	if row < 0 || row >= v.Table.Rows() || len(interior) != v.LP.NumInterior() {
		return false
	}
	if v.Table.Has(row) && !(cost < v.Table.Cost(row)) {
		return false
	}
	v.Table.Set(row, cost, interior)
	return true
}
