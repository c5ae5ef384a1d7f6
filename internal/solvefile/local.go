package solvefile

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/sampler"
)

// LocalNames lists every --local solver: the exact ones of package local,
// the samplers, then auto.
var LocalNames = append(append(local.Names(), sampler.Names()...), LocalAuto)

// LocalAuto chooses per subproblem. With one row (no boundary: `hearth
// solve --global none`, its default, and hearth-solve's) it is exact:
// local.Auto picks bucket elimination, EDAC or AOBB and says why in the
// result's notes. An agent whose rows a protocol asks keeps bucket
// elimination where its tables stay within autoEntries and Gibbs sampling
// where they would not: in a neighbourhood where a few homes have many
// rules (SHDS dm_251_1_4: 31 of 251), the others keep exact rows instead
// of all being sampled. The name is devices/homesolve's AutoLocal too (a
// neighbourhood's [solver] local); it is spelled here rather than taken
// from there so that this package links no homes code
// (internal/solve's TestLocalAutoName keeps the two equal).
const LocalAuto = "auto"

// autoEntries bounds the tables of bucket elimination under --local auto.
// Lazy MVA rows are each one elimination of the interior, so the bound is
// on a row's cost: on SHDS dm_251_1_4, D-Gibbs delivered 2 700 messages/s
// with this bound, 1 500 with every home sampled (--local gibbs) and 600
// with 2^22 (the bound of "fast" elimination of a whole home), on 2 cores.
const autoEntries = 1 << 16

// Local is the choice and tuning of the local solver (the --local,
// --memory, --runs, --trials, --temperature, --proposal and --alpha
// flags).
type Local struct {
	Name        string  // one of LocalNames
	Runs        int     // gibbs/mh: independent chains R per MVA row
	Trials      int     // gibbs/mh: samples T per chain
	Temperature float64 // gibbs/mh: τ; 0: sampler.ScaleTemperature of each agent
	Proposal    string  // mh: sampler.ProposalNormal or discrete
	Alpha       float64 // gibbs/mh: the top fraction the quality guarantee is reported for
	Memory      int64   // MiB for the exact solvers; 0: local.DefaultMemory
}

// Validate reports the first option out of range, worded for the
// command line.
func (o *Local) Validate() error {
	if !slices.Contains(LocalNames, o.Name) {
		return fmt.Errorf("unknown --local %q (valid: %s)", o.Name, strings.Join(LocalNames, ", "))
	}
	if o.Memory < 0 {
		return fmt.Errorf("--memory %d must not be negative", o.Memory)
	}
	if o.Alpha <= 0 || o.Alpha > 1 {
		return fmt.Errorf("--alpha %v must be in (0, 1]", o.Alpha)
	}
	return nil
}

// Sampling reports whether rows may be sampled: a sampler, or auto (which
// samples the agents too wide for bucket elimination). Such runs are not
// reported optimal, and their results carry the sampling parameters.
func (o *Local) Sampling() bool {
	return o.Name == LocalAuto || slices.Contains(sampler.Names(), o.Name)
}

// SamplerName is the sampler o runs for the rows it samples.
func (o *Local) SamplerName() string {
	if o.Name == LocalAuto {
		return "gibbs"
	}
	return o.Name
}

// Factory returns the solver factory; samplers draw from a stream keyed by
// the run's seed and the agent, so agents never share chains.
func (o *Local) Factory(seed uint64) mva.SolverFactory {
	return func(lp *mva.LocalProblem) (mva.LocalSolver, error) {
		if o.Name == LocalAuto && lp.NB == 0 {
			s, _, err := local.Auto(lp, local.AutoOptions{Memory: o.MemoryBytes()})
			return s, err
		}
		if o.Name == LocalAuto {
			be, err := local.NewBE(lp, local.BEOptions{MaxEntries: autoEntries})
			if !errors.Is(err, local.ErrTooLarge) {
				return be, err
			}
		} else if o.Name == "aobb" {
			return local.NewAOBB(lp, local.AOBBOptions{Memory: o.MemoryBytes()}), nil
		} else if o.Name == "be" && o.Memory > 0 {
			return local.NewBEWithin(lp, o.MemoryBytes())
		} else if !o.Sampling() {
			return local.New(o.Name, lp)
		}
		s := seed
		if lp.Sub != nil && lp.Sub.Agent >= 0 {
			s = mva.AgentSeed(seed, lp.Sub.Agent)
		}
		temp := o.Temperature
		if temp == 0 {
			temp = sampler.ScaleTemperature(lp)
		}
		return sampler.New(o.SamplerName(), lp, sampler.Options{
			Runs: o.Runs, Trials: o.Trials, Temperature: temp, Proposal: o.Proposal, Seed: s,
		})
	}
}

// MemoryBytes is --memory in bytes (0: the solvers' default).
func (o *Local) MemoryBytes() int64 { return o.Memory << 20 }

// Report describes the sampling parameters and their quality bound for
// the result object, or nil for exact solvers.
func (o *Local) Report(seed uint64) *mva.Sampling {
	if !o.Sampling() {
		return nil
	}
	n := o.Runs * o.Trials
	s := &mva.Sampling{
		Runs: o.Runs, Trials: o.Trials, Temperature: o.Temperature, Seed: seed,
		SamplesPerRow: n, Alpha: o.Alpha, Epsilon: math.Min(1, 1/(o.Alpha*float64(n))),
	}
	if o.SamplerName() == "mh" {
		s.Proposal = o.Proposal
	}
	return s
}
