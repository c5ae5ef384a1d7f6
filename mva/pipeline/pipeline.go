// Package pipeline is the one way hearth solves a problem with protocol
// agents, whatever carries their messages: it reformulates the problem,
// decomposes it, builds each agent's node (local problem, MVA table and
// solver), starts the protocol agents, hands them to a Runtime, assembles
// their answers into an assignment and maps it back to the problem's own
// variables.
//
// It sits under mva because it knows only mva's types and the
// reformulations of mva/reform; the runtimes implement its small Runtime
// interface from their own packages — the simulated runtime in mva/sim,
// MQTT in mqtt (a group of agents in one process, or the agents of one
// home in `hearth run`) — so that `hearth solve`, `hearth sim` and `hearth
// run` run the very same agents and count their messages and constraint
// checks the same way, once: a runtime counts the messages it carries,
// and every runtime counts checks with Agent.Checks.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/reform"
)

// ProtocolFactory makes one agent's protocol state machine.
type ProtocolFactory func(n *mva.Node) (mva.Protocol, error)

// CheckCounter is implemented by protocols that count constraint checks of
// their own (on functions between agents) for the NCCC metric; the local
// solver's checks are counted anyway (Agent.Checks).
type CheckCounter interface {
	Checks() int64
}

// Options configure a solve.
type Options struct {
	Protocol ProtocolFactory
	Solver   mva.SolverFactory
	// Eager fills every MVA table before the protocol starts (MVA-eager);
	// otherwise rows are computed when first asked for (MVA-lazy).
	Eager bool
	// Seed is the run's seed; each agent's is derived from it
	// (mva.AgentSeed).
	Seed uint64
	// Params are the protocol's parameters (mva.Node.Params).
	Params map[string]float64
	// Exact and Sampler reach the protocols through their nodes
	// (mva.Node.Exact, mva.Node.Sampler): local.Exact and
	// sampler.NewConditionalSampler, normally.
	Exact   mva.ExactFactory
	Sampler mva.SamplerFactory
	// Reform names the reformulation the protocol runs on (reform.New);
	// empty means "mva", the problem as it is.
	Reform string
	// MaxEntries bounds the compilation reformulation (reform.New).
	MaxEntries int
	// Owned, when not nil, lists the agents of the problem (indices in
	// Problem.Agents) that this process runs: only their nodes are built
	// and run, and the solution holds only their variables' values (a
	// home in `hearth run`). Nil runs every agent.
	Owned []int
	// Progress, when not nil, counts the agents' activity while they run,
	// for a progress line.
	Progress *Progress
}

// Runtime carries the messages of a run's agents until the protocol is
// over. The simulated runtime (mva/sim) and MQTT (mqtt.Group) implement it.
type Runtime interface {
	// Run starts every agent of r, delivers their messages and returns
	// when the run is over, with one result per agent of r (in r.Agents
	// order) and the run's metrics. A runtime counts the messages it
	// carries: those between agents of different owners (r.Owner) in
	// Metrics.Messages and their bytes, the others in InternalMessages.
	// NCCC uses Agent.Checks.
	Run(ctx context.Context, r Run) (Outcome, error)
}

// Run is what a runtime runs: the agents of this process among all the
// agents of the (reformulated) problem.
type Run struct {
	// Problem is the problem the protocol runs on (the reformulated
	// one): NumAgents is len(Problem.Agents).
	Problem *mva.Problem
	// Agents are the agents this process runs; Agents[k].Node.ID is the
	// agent's index in Problem.Agents.
	Agents []Agent
	// Owner gives, for every agent of Problem, the agent of the original
	// problem it belongs to; messages between agents of one owner are
	// internal (a reformulation's pseudo-agents inside one real agent).
	Owner []int
	// Seed is the run's seed (delivery order of the simulated runtime).
	Seed uint64
}

// All reports whether the run's agents are every agent of the problem, in
// order, as a runtime that runs a whole problem needs.
func (r Run) All() bool {
	if len(r.Agents) != len(r.Problem.Agents) {
		return false
	}
	for i, a := range r.Agents {
		if a.Node.ID != i {
			return false
		}
	}
	return true
}

// Agent is one protocol agent of a run.
type Agent struct {
	Node     *mva.Node
	Protocol mva.Protocol
	// SetupMs is the time the agent spent filling its MVA table before
	// the protocol started (eager tables), which the simulated clock
	// charges to it.
	SetupMs float64
}

// Checks returns the agent's constraint checks so far: its local solver's
// and, where the protocol counts its own (CheckCounter), the protocol's.
// Every runtime counts NCCC with it.
func (a Agent) Checks() int64 {
	var c int64
	if l := a.Node.Local; l != nil && l.Solver != nil {
		c += l.Solver.Checks()
	}
	if cc, ok := a.Protocol.(CheckCounter); ok {
		c += cc.Checks()
	}
	return c
}

// Outcome is what a runtime returns: one result per agent it ran, and
// the run's metrics.
type Outcome struct {
	Results []mva.AgentResult
	Metrics mva.Metrics
}

// Solution is the outcome of a solve, in the original problem's terms.
type Solution struct {
	// Assign is the assignment of the original problem's variables. For a
	// run of some agents (Options.Owned) only their variables' values are
	// meaningful; the others are 0.
	Assign []int
	// Cost is Assign's true cost, recomputed from the original problem
	// (Offset included); NaN for a run of some agents, which cannot know
	// the others' values.
	Cost float64
	// Reported is the total cost as the agents run here believe it (the
	// first mva.AgentResult.Cost that is not NaN): NaN when the protocol
	// does not tell agents.
	Reported float64
	// Optimal is true when every agent run here claims optimality.
	Optimal bool
	// HardRow is true, for a run of some agents (Options.Owned), when one
	// of them ended on a row of its MVA table with no feasible completion.
	HardRow bool
	// Outcome is the runtime's outcome (results in the order of the
	// agents run, those of the reformulated problem).
	Outcome Outcome
}

// Plan is a problem prepared for protocol runs: reformulated, decomposed
// and with the nodes of the agents this process runs built. A plan can be
// run many times (`hearth run` runs a round on it for every command); the
// nodes, and the MVA rows their tables have computed, are kept between
// runs, and every run starts fresh protocol agents.
type Plan struct {
	// Original is the problem as given.
	Original *mva.Problem
	// Reform is the reformulation the protocol runs on.
	Reform *reform.Reformulation
	// Decomp is the decomposition of Reform.Problem.
	Decomp *mva.Decomposition
	// Agents are the agents of Reform.Problem this process runs, and
	// Nodes their nodes (same order).
	Agents  []int
	Nodes   []*mva.Node
	setupMs []float64
	o       Options
}

// Problem is the problem the protocol runs on (the reformulated one).
func (pl *Plan) Problem() *mva.Problem { return pl.Reform.Problem }

// Prepare reformulates p, decomposes it and builds the nodes of the agents
// o.Owned (all by default).
func Prepare(ctx context.Context, p *mva.Problem, o Options) (*Plan, error) {
	if o.Protocol == nil || o.Solver == nil {
		return nil, errors.New("pipeline: a protocol and a local solver are required")
	}
	name := o.Reform
	if name == "" {
		name = "mva"
	}
	rf, err := reform.New(name, p, o.MaxEntries)
	if err != nil {
		return nil, err
	}
	pl := &Plan{Original: p, Reform: rf, Decomp: mva.Decompose(rf.Problem), o: o}
	for _, h := range o.Owned {
		if h < 0 || h >= len(p.Agents) {
			return nil, fmt.Errorf("pipeline: agent %d outside 0..%d", h, len(p.Agents)-1)
		}
	}
	for k, owner := range rf.Owner {
		if o.Owned == nil || slices.Contains(o.Owned, owner) {
			pl.Agents = append(pl.Agents, k)
		}
	}
	nb := pl.Decomp.Neighbours()
	for _, k := range pl.Agents {
		n, setup, err := mva.BuildNode(ctx, pl.Decomp, nb, k, o.Solver, o.Eager, o.Seed, o.Params)
		if err != nil {
			return nil, err
		}
		n.Exact, n.Sampler = o.Exact, o.Sampler
		pl.Nodes = append(pl.Nodes, n)
		pl.setupMs = append(pl.setupMs, setup)
	}
	return pl, nil
}

// Run starts a protocol agent on every node of the plan, runs them on rt,
// assembles their answers and maps them back to the original problem.
func (pl *Plan) Run(ctx context.Context, rt Runtime) (Solution, error) {
	q := pl.Problem()
	r := Run{Problem: q, Owner: pl.Reform.Owner, Seed: pl.o.Seed, Agents: make([]Agent, len(pl.Nodes))}
	if pl.o.Progress != nil {
		pl.o.Progress.begin(len(pl.Nodes))
	}
	for i, n := range pl.Nodes {
		proto, err := pl.o.Protocol(n)
		if err != nil {
			return Solution{}, fmt.Errorf("agent %s: %w", q.Agents[n.ID].Name, err)
		}
		if pl.o.Progress != nil {
			proto = pl.o.Progress.wrap(proto, i)
		}
		r.Agents[i] = Agent{Node: n, Protocol: proto, SetupMs: pl.setupMs[i]}
	}
	out, err := rt.Run(ctx, r)
	if err != nil {
		return Solution{Outcome: out}, err
	}
	if len(out.Results) != len(r.Agents) {
		return Solution{}, fmt.Errorf("pipeline: the runtime returned %d results for %d agents", len(out.Results), len(r.Agents))
	}
	sol := Solution{Outcome: out, Reported: math.NaN(), Optimal: len(out.Results) > 0}
	for _, res := range out.Results {
		sol.Optimal = sol.Optimal && res.Optimal
		if math.IsNaN(sol.Reported) {
			sol.Reported = res.Cost
		}
	}
	var assign []int
	if len(pl.Agents) == len(q.Agents) {
		views := make([]*mva.LocalView, len(pl.Nodes))
		for i, n := range pl.Nodes {
			views[i] = n.Local
		}
		if assign, _, err = mva.Assemble(ctx, pl.Decomp, views, out.Results); err != nil {
			return Solution{}, err
		}
	} else if assign, sol.HardRow, err = pl.assemblePart(ctx, out.Results); err != nil {
		return Solution{}, err
	}
	if sol.Assign, err = pl.Reform.Back(assign); err != nil {
		return Solution{}, fmt.Errorf("internal error: mapping the solution back: %w", err)
	}
	sol.Cost = math.NaN()
	if len(pl.Agents) == len(q.Agents) {
		if sol.Cost, err = pl.Original.Eval(sol.Assign); err != nil {
			return Solution{}, fmt.Errorf("internal error: %w", err)
		}
	}
	return sol, nil
}

// assemblePart is mva.Assemble for the agents of the plan alone: the
// values of their variables (boundary from the results, interior from
// the results or their tables), zeros for everyone else's. Reformulations
// decode each agent's values from its own pseudo-variables, so mapping the
// assignment back is right for those agents whatever the others' values.
func (pl *Plan) assemblePart(ctx context.Context, results []mva.AgentResult) ([]int, bool, error) {
	q := pl.Problem()
	assign := make([]int, len(q.Variables))
	hard := false
	for i, k := range pl.Agents {
		s, r := &pl.Decomp.Subs[k], results[i]
		if len(r.Boundary) != len(s.Boundary) {
			return nil, false, fmt.Errorf("agent %s returned %d boundary values for %d variables", q.Agents[k].Name, len(r.Boundary), len(s.Boundary))
		}
		for j, v := range s.Boundary {
			if r.Boundary[j] < 0 || r.Boundary[j] >= q.DomainSize(v) {
				return nil, false, fmt.Errorf("agent %s: value index %d outside the domain of %s", q.Agents[k].Name, r.Boundary[j], q.Variables[v].Name)
			}
			assign[v] = r.Boundary[j]
		}
		if r.Interior != nil {
			if len(r.Interior) != len(s.Interior) {
				return nil, false, fmt.Errorf("agent %s returned %d interior values for %d variables", q.Agents[k].Name, len(r.Interior), len(s.Interior))
			}
			for j, v := range s.Interior {
				if r.Interior[j] < 0 || r.Interior[j] >= q.DomainSize(v) {
					return nil, false, fmt.Errorf("agent %s: value index %d outside the domain of %s", q.Agents[k].Name, r.Interior[j], q.Variables[v].Name)
				}
				assign[v] = r.Interior[j]
			}
			continue
		}
		c, interior, err := pl.Nodes[i].Local.Row(ctx, r.Boundary)
		if err != nil {
			return nil, false, err
		}
		if mva.IsHard(c) {
			hard = true
			continue
		}
		for j, v := range s.Interior {
			assign[v] = int(interior[j])
		}
	}
	return assign, hard, nil
}

// Solve is Prepare and Run: it solves p with the protocol of o on rt and
// returns the solution in p's terms. Metrics.WallMs covers the whole
// solve, the building of the MVA tables included.
func Solve(ctx context.Context, p *mva.Problem, o Options, rt Runtime) (Solution, error) {
	start := time.Now()
	pl, err := Prepare(ctx, p, o)
	if err != nil {
		return Solution{}, err
	}
	sol, err := pl.Run(ctx, rt)
	if err != nil {
		return sol, err
	}
	sol.Outcome.Metrics.WallMs = float64(time.Since(start).Microseconds()) / 1000
	return sol, nil
}
