package sim

import (
	"context"
	"fmt"

	"github.com/hearth-dcop/hearth/mva"
)

// ProtocolFactory makes one agent's protocol state machine.
type ProtocolFactory func(n *mva.Node) (mva.Protocol, error)

// Options configure Solve.
type Options struct {
	Protocol ProtocolFactory
	Solver   mva.SolverFactory
	// Eager fills every MVA table before the protocol starts (MVA-eager);
	// otherwise rows are computed when first asked for (MVA-lazy).
	Eager  bool
	Seed   uint64
	Params map[string]float64
	Config Config
}

// Solution is the outcome of a protocol run on a problem: the complete
// assignment, its true cost (recomputed from the model, Offset included)
// and whether every agent claims optimality.
type Solution struct {
	Assign  []int
	Cost    float64
	Optimal bool
	Outcome Outcome
}

// Solve decomposes p, builds one protocol agent per agent of p, runs them
// on the simulated runtime and assembles the answer.
func Solve(ctx context.Context, p *mva.Problem, o Options) (Solution, error) {
	if o.Protocol == nil || o.Solver == nil {
		return Solution{}, fmt.Errorf("sim: a protocol and a local solver are required")
	}
	d := mva.Decompose(p)
	nodes, setup, err := mva.BuildNodes(ctx, d, o.Solver, o.Eager, o.Seed, o.Params)
	if err != nil {
		return Solution{}, err
	}
	protos := make([]mva.Protocol, len(nodes))
	for i, n := range nodes {
		if protos[i], err = o.Protocol(n); err != nil {
			return Solution{}, fmt.Errorf("agent %s: %w", p.Agents[i].Name, err)
		}
	}
	cfg := o.Config
	if cfg.SetupMs == nil {
		cfg.SetupMs = setup
	}
	if cfg.Seed == 0 {
		cfg.Seed = o.Seed
	}
	out, err := Run(ctx, nodes, protos, cfg)
	if err != nil {
		return Solution{}, err
	}
	views := make([]*mva.LocalView, len(nodes))
	for i, n := range nodes {
		views[i] = n.Local
	}
	assign, cost, err := mva.Assemble(ctx, d, views, out.Results)
	if err != nil {
		return Solution{}, err
	}
	optimal := len(out.Results) > 0
	for _, r := range out.Results {
		optimal = optimal && r.Optimal
	}
	return Solution{Assign: assign, Cost: cost, Optimal: optimal, Outcome: out}, nil
}
