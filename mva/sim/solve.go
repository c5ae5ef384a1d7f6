package sim

import (
	"context"
	"errors"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/pipeline"
)

// ProtocolFactory makes one agent's protocol state machine.
type ProtocolFactory = pipeline.ProtocolFactory

// Solution is the outcome of a protocol run on a problem: the complete
// assignment, its true cost (recomputed from the model, Offset included),
// whether every agent claims optimality, and the simulated runtime's full
// outcome.
type Solution struct {
	Assign  []int
	Cost    float64
	Optimal bool
	Outcome Outcome
}

// Options configure Solve.
type Options struct {
	Protocol ProtocolFactory
	Solver   mva.SolverFactory
	// Eager fills every MVA table before the protocol starts (MVA-eager);
	// otherwise rows are computed when first asked for (MVA-lazy).
	Eager  bool
	Seed   uint64
	Params map[string]float64
	// Exact and Sampler are the solver factories protocols receive
	// through their nodes (pipeline.Options).
	Exact   mva.ExactFactory
	Sampler mva.SamplerFactory
	Config  Config
}

// Solve is pipeline.Solve on the simulated runtime, for a problem as it
// is (no reformulation; Config.Owner may say which agents belong
// together).
func Solve(ctx context.Context, p *mva.Problem, o Options) (Solution, error) {
	rt := &Runtime{Config: o.Config}
	sol, err := pipeline.Solve(ctx, p, pipeline.Options{
		Protocol: o.Protocol, Solver: o.Solver, Eager: o.Eager, Seed: o.Seed, Params: o.Params,
		Exact: o.Exact, Sampler: o.Sampler,
	}, rt)
	if err != nil {
		return Solution{}, err
	}
	out := rt.Last
	out.Metrics = sol.Outcome.Metrics
	return Solution{Assign: sol.Assign, Cost: sol.Cost, Optimal: sol.Optimal, Outcome: out}, nil
}

// Runtime is the simulated runtime as a pipeline.Runtime. Config's Owner,
// SetupMs and Seed, when unset, are the run's. A Runtime serves one run at
// a time; Last is that run's full outcome (per-agent figures, injected
// faults).
type Runtime struct {
	Config Config
	Last   Outcome
}

// Run runs every agent of the problem (the simulated runtime has them
// all) with Run.
func (rt *Runtime) Run(ctx context.Context, r pipeline.Run) (pipeline.Outcome, error) {
	if !r.All() {
		return pipeline.Outcome{}, errors.New("sim: the simulated runtime runs every agent of a problem")
	}
	nodes := make([]*mva.Node, len(r.Agents))
	protos := make([]mva.Protocol, len(r.Agents))
	setup := make([]float64, len(r.Agents))
	for i, a := range r.Agents {
		nodes[i], protos[i], setup[i] = a.Node, a.Protocol, a.SetupMs
	}
	cfg := rt.Config
	if cfg.Owner == nil {
		cfg.Owner = r.Owner
	}
	if cfg.SetupMs == nil {
		cfg.SetupMs = setup
	}
	if cfg.Seed == 0 {
		cfg.Seed = r.Seed
	}
	out, err := Run(ctx, nodes, protos, cfg)
	rt.Last = out
	if err != nil {
		return pipeline.Outcome{}, err
	}
	return pipeline.Outcome{Results: out.Results, Metrics: out.Metrics}, nil
}
