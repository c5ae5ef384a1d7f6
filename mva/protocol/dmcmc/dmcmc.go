package dmcmc

import (
	"fmt"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
	"github.com/hearth-dcop/hearth/mva/sim"
	"github.com/hearth-dcop/hearth/sampler"
)

// SolverFactory returns the factory of the named sampler ("gibbs" or
// "mh") with options o, keyed per agent by mva.AgentSeed(seed, agent), as
// the command line does, so that agents never share chains. A local
// problem without an agent (the whole problem) is keyed by seed itself.
func SolverFactory(name string, o sampler.Options, seed uint64) (mva.SolverFactory, error) {
	if !slices.Contains(sampler.Names(), name) {
		return nil, fmt.Errorf("dmcmc: unknown sampler %q (valid: gibbs, mh)", name)
	}
	return func(lp *mva.LocalProblem) (mva.LocalSolver, error) {
		so := o
		so.Seed = seed
		if lp.Sub != nil && lp.Sub.Agent >= 0 {
			so.Seed = mva.AgentSeed(seed, lp.Sub.Agent)
		}
		return sampler.New(name, lp, so)
	}, nil
}

// SimOptions returns the sim.Solve options of DMCMC with the named
// sampler: DPOP over eager MVA tables that the sampler fills. params are
// DPOP's (nil for its defaults).
func SimOptions(name string, o sampler.Options, seed uint64, params map[string]float64) (sim.Options, error) {
	f, err := SolverFactory(name, o, seed)
	if err != nil {
		return sim.Options{}, err
	}
	return sim.Options{Protocol: dpop.New, Solver: f, Eager: true, Seed: seed, Params: params}, nil
}
