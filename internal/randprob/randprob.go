// Package randprob generates seeded random problems for tests and
// benchmarks across hearth. The same seed and options always give the same
// problem, so a failing case can be replayed from its seed alone.
package randprob

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/hearth-dcop/hearth/mva"
)

// Options shapes a random problem. Zero or out-of-range fields fall back to
// the smallest sensible value (one agent, domains of size 1, arity 1), so
// that any Options gives a valid problem.
type Options struct {
	// Agents and Vars count agents ("a0", "a1", …) and variables ("x0",
	// "x1", …). Owners are drawn at random, but every agent owns at least
	// one variable when Vars ≥ Agents.
	Agents, Vars int
	// Each variable's domain size is uniform in [MinDomain, MaxDomain];
	// the labels are "0".."d-1".
	MinDomain, MaxDomain int
	// MaxArity bounds the functions' arity, drawn uniformly from
	// 1..MaxArity (and at most Vars).
	MaxArity int
	// Functions is the number of cost functions. Their scopes are distinct
	// random variables in random order.
	Functions int
	// HardProb is the probability that an entry is Hard.
	HardProb float64
	// IntCosts draws whole costs in 0..MaxCost, so that sums are exact and
	// ties frequent; otherwise costs are uniform in [0, MaxCost).
	IntCosts bool
	// MaxCost bounds the costs; 0 means 10.
	MaxCost float64
	// Locality is the probability that a function's scope is drawn from
	// the variables of a single agent (when it has enough), which gives
	// MVA decompositions with interiors to solve. 0 draws every scope from
	// all variables.
	Locality float64
}

// New returns the problem of seed under o. It always passes
// mva.Problem.Validate.
func New(seed int64, o Options) *mva.Problem {
	r := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
	o.Agents = max(o.Agents, 1)
	o.Vars = max(o.Vars, 0)
	o.MinDomain = max(o.MinDomain, 1)
	o.MaxDomain = max(o.MaxDomain, o.MinDomain)
	o.MaxArity = max(min(o.MaxArity, o.Vars), min(1, o.Vars))
	if o.MaxCost <= 0 {
		o.MaxCost = 10
	}

	p := &mva.Problem{Name: fmt.Sprintf("random-%d", seed), Sense: mva.Minimize}
	for a := range o.Agents {
		p.Agents = append(p.Agents, mva.Agent{Name: "a" + strconv.Itoa(a)})
	}
	owners := make([][]int, o.Agents)
	perm := r.Perm(o.Vars)
	for v := range o.Vars {
		d := o.MinDomain + r.IntN(o.MaxDomain-o.MinDomain+1)
		dom := make([]string, d)
		for i := range dom {
			dom[i] = strconv.Itoa(i)
		}
		// The first Agents variables of a random permutation go one to
		// each agent; the rest to random agents.
		a := r.IntN(o.Agents)
		if perm[v] < o.Agents {
			a = perm[v]
		}
		owners[a] = append(owners[a], v)
		p.Variables = append(p.Variables, mva.Variable{Name: "x" + strconv.Itoa(v), Domain: dom, Agent: a})
	}
	if o.Vars == 0 {
		return p
	}
	for fi := range max(o.Functions, 0) {
		arity := 1 + r.IntN(o.MaxArity)
		pool := o.Vars
		var from []int
		if r.Float64() < o.Locality {
			if own := owners[r.IntN(o.Agents)]; len(own) >= arity {
				from, pool = own, len(own)
			}
		}
		scope := r.Perm(pool)[:arity]
		if from != nil {
			for i, k := range scope {
				scope[i] = from[k]
			}
		}
		n := 1
		for _, v := range scope {
			n *= p.DomainSize(v)
		}
		costs := make([]float64, n)
		for i := range costs {
			switch {
			case r.Float64() < o.HardProb:
				costs[i] = mva.Hard
			case o.IntCosts:
				costs[i] = float64(r.IntN(int(o.MaxCost) + 1))
			default:
				costs[i] = r.Float64() * o.MaxCost
			}
		}
		p.Functions = append(p.Functions, mva.Function{Name: "f" + strconv.Itoa(fi), Scope: scope, Costs: costs})
	}
	return p
}
