package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/sampler"
)

// localNames lists every --local solver: the exact ones of package local,
// the samplers, then auto.
var localNames = append(append(local.Names(), sampler.Names()...), localAuto)

// localAuto chooses per subproblem. With one row (no boundary: `hearth
// solve --global none`, its default) it is exact: local.Auto picks bucket
// elimination or AOBB and says why in the result's notes. An agent whose
// rows a protocol asks keeps bucket elimination where its tables stay
// within autoEntries and Gibbs sampling where they would not: in a
// neighbourhood where a few homes have many rules (SHDS dm_251_1_4: 31 of
// 251), the others keep exact rows instead of all being sampled.
const localAuto = homesolve.AutoLocal

// autoEntries bounds the tables of bucket elimination under --local auto.
// Lazy MVA rows are each one elimination of the interior, so the bound is
// on a row's cost: on SHDS dm_251_1_4, D-Gibbs delivered 2 700 messages/s
// with this bound, 1 500 with every home sampled (--local gibbs) and 600
// with 2^22 (the bound of "fast" elimination of a whole home), on 2 cores.
const autoEntries = 1 << 16

// localOptions are the flags that choose and tune the local solver.
type localOptions struct {
	name     string
	runs     int
	trials   int
	temp     float64
	proposal string
	alpha    float64
	memory   int64 // MiB for the exact solvers; 0: local.DefaultMemory
}

func (o *localOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.name, "local", "be", "local solver: be (bucket elimination), dfbnb (depth-first branch and bound), aobb (AND/OR branch and bound), bruteforce, gibbs, mh (Metropolis-Hastings), auto (one row: be or aobb, chosen per subproblem, the default of solve --global none; agents: be where its tables fit 2^16 entries, else gibbs)")
	fs.Int64Var(&o.memory, "memory", 0, "memory budget of the exact local solvers in MiB (aobb's heuristics and caches, auto's choice); 0 means a quarter of physical memory")
	fs.IntVar(&o.runs, "runs", sampler.DefaultRuns, "gibbs/mh: independent chains R per MVA row")
	fs.IntVar(&o.trials, "trials", sampler.DefaultTrials, "gibbs/mh: samples T per chain (Gibbs sweeps or MH proposals)")
	fs.Float64Var(&o.temp, "temperature", 0, "gibbs/mh: temperature τ of exp(−cost/τ); 0: a tenth of each agent's cost scale (sampler.ScaleTemperature)")
	fs.StringVar(&o.proposal, "proposal", sampler.ProposalNormal, "mh: proposal, normal (the DMCMC paper's) or discrete")
	fs.Float64Var(&o.alpha, "alpha", 0.05, "gibbs/mh: the top fraction α the quality guarantee is reported for")
}

func (o *localOptions) validate() error {
	if !slices.Contains(localNames, o.name) {
		return fmt.Errorf("unknown --local %q (valid: %s)", o.name, strings.Join(localNames, ", "))
	}
	if o.memory < 0 {
		return fmt.Errorf("--memory %d must not be negative", o.memory)
	}
	if o.alpha <= 0 || o.alpha > 1 {
		return fmt.Errorf("--alpha %v must be in (0, 1]", o.alpha)
	}
	return nil
}

// sampling reports whether rows may be sampled: a sampler, or auto (which
// samples the agents too wide for bucket elimination). Such runs are not
// reported optimal, and their results carry the sampling parameters.
func (o *localOptions) sampling() bool {
	return o.name == localAuto || slices.Contains(sampler.Names(), o.name)
}

// samplerName is the sampler o runs for the rows it samples.
func (o *localOptions) samplerName() string {
	if o.name == localAuto {
		return "gibbs"
	}
	return o.name
}

// factory returns the solver factory; samplers draw from a stream keyed by
// the run's seed and the agent, so agents never share chains.
func (o *localOptions) factory(seed uint64) mva.SolverFactory {
	return func(lp *mva.LocalProblem) (mva.LocalSolver, error) {
		if o.name == localAuto && lp.NB == 0 {
			s, _, err := local.Auto(lp, local.AutoOptions{Memory: o.memoryBytes()})
			return s, err
		}
		if o.name == localAuto {
			be, err := local.NewBE(lp, local.BEOptions{MaxEntries: autoEntries})
			if !errors.Is(err, local.ErrTooLarge) {
				return be, err
			}
		} else if o.name == "aobb" {
			return local.NewAOBB(lp, local.AOBBOptions{Memory: o.memoryBytes()}), nil
		} else if o.name == "be" && o.memory > 0 {
			return local.NewBEWithin(lp, o.memoryBytes())
		} else if !o.sampling() {
			return local.New(o.name, lp)
		}
		s := seed
		if lp.Sub != nil && lp.Sub.Agent >= 0 {
			s = mva.AgentSeed(seed, lp.Sub.Agent)
		}
		temp := o.temp
		if temp == 0 {
			temp = sampler.ScaleTemperature(lp)
		}
		return sampler.New(o.samplerName(), lp, sampler.Options{
			Runs: o.runs, Trials: o.trials, Temperature: temp, Proposal: o.proposal, Seed: s,
		})
	}
}

// memoryBytes is --memory in bytes (0: the solvers' default).
func (o *localOptions) memoryBytes() int64 { return o.memory << 20 }

// report describes the sampling parameters and their quality bound for
// the result object, or nil for exact solvers.
func (o *localOptions) report(seed uint64) *mva.Sampling {
	if !o.sampling() {
		return nil
	}
	n := o.runs * o.trials
	s := &mva.Sampling{
		Runs: o.runs, Trials: o.trials, Temperature: o.temp, Seed: seed,
		SamplesPerRow: n, Alpha: o.alpha, Epsilon: math.Min(1, 1/(o.alpha*float64(n))),
	}
	if o.samplerName() == "mh" {
		s.Proposal = o.proposal
	}
	return s
}

// startSolver makes every agent's local solver an mva.Starter of start, a
// full assignment of the problem (homes: the schedules each home plans
// alone): it suggests the agent's boundary values in start, and answers
// that row with start's interior whenever its own completion is worse, so
// the row is as good as start's even where a sampler finds nothing
// feasible. With start nil it returns next.
func startSolver(start []int, next mva.SolverFactory) mva.SolverFactory {
	if start == nil {
		return next
	}
	return func(lp *mva.LocalProblem) (mva.LocalSolver, error) {
		s, err := next(lp)
		if err != nil || len(start) != len(lp.Problem.Variables) {
			return s, err
		}
		full := make([]int, len(lp.Vars))
		for k, v := range lp.Vars {
			full[k] = start[v]
		}
		return &startingSolver{LocalSolver: s, nb: lp.NB, full: full, cost: lp.Eval(full)}, nil
	}
}

// startingSolver is startSolver's wrapper of one agent's solver.
type startingSolver struct {
	mva.LocalSolver
	nb   int
	full []int   // the agent's local variables in start
	cost float64 // their local cost
}

func (s *startingSolver) Start() ([]int, bool) { return slices.Clone(s.full[:s.nb]), true }

func (s *startingSolver) SolveRow(ctx context.Context, boundary, interior []int) (float64, error) {
	c, err := s.LocalSolver.SolveRow(ctx, boundary, interior)
	if err != nil || !slices.Equal(boundary, s.full[:s.nb]) {
		return c, err
	}
	if (mva.IsHard(c) && !mva.IsHard(s.cost)) || s.cost < c {
		copy(interior, s.full[s.nb:])
		return s.cost, nil
	}
	return c, nil
}
