package gen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/hearth-dcop/hearth/mva"
)

// RandomOptions shape the multi-variable-agent random graphs of the
// thesis's chapter 3 (§3.5, "Random Graph Instances", Figures 3.6–3.11),
// whose defaults are 4 agents, 6 local variables, 4 values, p1ˡ = 0.6,
// p1ᵍ = 0.4 and p2 = 0.4.
type RandomOptions struct {
	// Agents is |A|.
	Agents int
	// Vars is |L_i|, the number of variables of every agent.
	Vars int
	// Domain is |D_i|, the number of values of every variable.
	Domain int
	// LocalDensity is p1ˡ: each agent's local constraint graph has
	// round(p1ˡ·|L_i|(|L_i|−1)/2) edges among its own variables, drawn
	// uniformly.
	LocalDensity float64
	// BoundaryRatio is |B_i|/|L_i| (the thesis's Figure 3.8): every agent
	// has exactly round(ratio·|L_i|) boundary variables (at least one when
	// the ratio is positive), drawn uniformly among its variables. The
	// thesis defines p1ᵍ over "the boundary variables" without saying how
	// they are chosen or how many there are by default; 0.5 is this
	// package's choice: half the variables face other agents, which keeps
	// an interior for MVA to exploit.
	BoundaryRatio float64
	// GlobalDensity is p1ᵍ: the global constraint graph has
	// round(p1ᵍ·P) edges, where P is the number of pairs of boundary
	// variables of different agents (the thesis's b(b−1) counts pairs in
	// the same agent too, but those would be local edges). The edges are
	// drawn in two steps: first every boundary variable still without an
	// edge to another agent gets one, to a uniformly drawn boundary
	// variable of another agent — so that the boundary variables are
	// exactly the chosen ones, "as many inter-agent constraints as
	// necessary to reach the desired ratio" (Figure 3.8) — then uniform
	// new pairs up to the count. With p1ᵍ = 0 there are no global edges
	// and no boundary variables.
	GlobalDensity float64
	// Tightness is p2, the fraction of every table's entries that are
	// feasible (see the package documentation).
	Tightness float64
	// MaxArity is the highest function arity. The thesis turns "each
	// clique involving k variables" into a k-ary function "starting from
	// the highest function arity" without printing that arity; 3 is this
	// package's default. From k = MaxArity down to 3 the generator visits
	// the variables in random order and, for each, repeatedly takes a
	// k-clique of not yet covered edges through it and makes it a k-ary
	// function; the edges left become binary functions. The functions
	// partition the edges, so the primal graph of the problem is exactly
	// the generated graph, and after the arity-k pass no k-clique of
	// uncovered edges remains.
	MaxArity int
	// MinCost and MaxCost bound the whole costs of feasible entries,
	// [1, 1000] in the thesis.
	MinCost, MaxCost int
	// Plant makes a random assignment feasible (see the package
	// documentation). At the defaults, unplanted instances are nearly
	// always infeasible.
	Plant bool
}

// DefaultRandom returns the thesis's defaults.
func DefaultRandom() RandomOptions {
	return RandomOptions{
		Agents: 4, Vars: 6, Domain: 4,
		LocalDensity: 0.6, GlobalDensity: 0.4, BoundaryRatio: 0.5, Tightness: 0.4,
		MaxArity: 3, MinCost: 1, MaxCost: 1000, Plant: true,
	}
}

// maxBoundaryPairs bounds the pairs of boundary variables the generator
// lists to draw the global edges from.
const maxBoundaryPairs = 1 << 22

// maxEdges bounds the local edges of a random instance.
const maxEdges = 1 << 24

func (o RandomOptions) validate() error {
	switch {
	case o.Agents < 1:
		return fmt.Errorf("agents %d: at least one agent is needed", o.Agents)
	case o.Vars < 1:
		return fmt.Errorf("vars %d: every agent needs at least one variable", o.Vars)
	case o.Domain < 1:
		return fmt.Errorf("domain %d: a domain needs at least one value", o.Domain)
	case o.MaxArity < 2:
		return fmt.Errorf("max arity %d: functions are built from edges, so the arity is at least 2", o.MaxArity)
	case o.MinCost > o.MaxCost:
		return fmt.Errorf("cost range [%d, %d] is empty", o.MinCost, o.MaxCost)
	case o.Agents > 1<<20 || o.Vars > 1<<20 || o.Agents*o.Vars > 1<<22:
		return fmt.Errorf("%d agents × %d variables is too large", o.Agents, o.Vars)
	}
	for _, c := range []struct {
		name string
		x    float64
	}{{"local density p1l", o.LocalDensity}, {"global density p1g", o.GlobalDensity},
		{"boundary ratio", o.BoundaryRatio}, {"tightness p2", o.Tightness}} {
		if err := checkUnit(c.name, c.x); err != nil {
			return err
		}
	}
	if edges := o.LocalDensity * float64(o.Agents) * float64(o.Vars) * float64(o.Vars-1) / 2; edges > maxEdges {
		return fmt.Errorf("%.0f local edges are too many (at most %d): lower agents, vars or p1l", edges, maxEdges)
	}
	if o.Plant && o.Tightness == 0 {
		return fmt.Errorf("tightness p2 0 makes every entry hard: nothing can be planted")
	}
	if _, err := tableSize(o.Domain, o.MaxArity); err != nil {
		return fmt.Errorf("max arity %d: %w", o.MaxArity, err)
	}
	return nil
}

// Random returns the random instance of seed under o: agents "a0", "a1",
// ..., agent i owning variables "x<i>_0" ... "x<i>_<|L_i|−1>" with values
// "0" ... "<|D|−1>", and functions "f0", "f1", ... (see RandomOptions).
func Random(seed uint64, o RandomOptions) (*mva.Problem, error) {
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("gen random: %w", err)
	}
	r := newRand(seed, 0x7261_6e64_6f6d) // "random"
	n := o.Agents * o.Vars
	p := &mva.Problem{Name: "random-" + strconv.FormatUint(seed, 10)}
	for i := range o.Agents {
		p.Agents = append(p.Agents, mva.Agent{Name: "a" + strconv.Itoa(i)})
		for k := range o.Vars {
			p.Variables = append(p.Variables, mva.Variable{
				Name: "x" + strconv.Itoa(i) + "_" + strconv.Itoa(k), Domain: intLabels(0, o.Domain), Agent: i,
			})
		}
	}
	var planted []int
	if o.Plant {
		planted = make([]int, n)
		for v := range planted {
			planted[v] = r.IntN(o.Domain)
		}
	}
	g := newGraph(n)
	// Local edges.
	pairs := o.Vars * (o.Vars - 1) / 2
	k := round(o.LocalDensity * float64(pairs))
	for i := range o.Agents {
		base := i * o.Vars
		for _, e := range choose(r, pairs, k) {
			u, v := pairOf(e)
			g.add(base+u, base+v)
		}
	}
	if err := globalEdges(r, g, o); err != nil {
		return nil, fmt.Errorf("gen random: %w", err)
	}
	for _, scope := range g.cliqueCover(r, o.MaxArity) {
		size, _ := tableSize(o.Domain, len(scope)) // checked by validate
		pl := -1
		if o.Plant {
			vals := make([]int, len(scope))
			for j, v := range scope {
				vals[j] = planted[v]
			}
			pl = index(o.Domain, vals)
		}
		p.Functions = append(p.Functions, mva.Function{
			Name:  "f" + strconv.Itoa(len(p.Functions)),
			Scope: scope,
			Costs: tight(r, size, o.Tightness, o.MinCost, o.MaxCost, pl),
		})
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("gen random: %w", err)
	}
	return p, nil
}

// pairOf decodes the index of an unordered pair {u < v} of 0..n-1 listed
// as (0,1), (0,2), (1,2), (0,3), (1,3), (2,3), ...: pair e has v the
// largest with v(v−1)/2 ≤ e.
func pairOf(e int) (u, v int) {
	v = int((1 + math.Sqrt(1+8*float64(e))) / 2)
	for v*(v-1)/2 > e { // correct the float estimate either way
		v--
	}
	for (v+1)*v/2 <= e {
		v++
	}
	return e - v*(v-1)/2, v
}

// globalEdges draws the edges between boundary variables of different
// agents (see RandomOptions.GlobalDensity).
func globalEdges(r *rand.Rand, g *graph, o RandomOptions) error {
	if o.Agents < 2 || o.GlobalDensity == 0 || o.BoundaryRatio == 0 {
		return nil
	}
	nb := min(max(round(o.BoundaryRatio*float64(o.Vars)), 1), o.Vars)
	var cand []int // boundary variables, agent by agent
	for i := range o.Agents {
		for _, k := range slices.Sorted(slices.Values(choose(r, o.Vars, nb))) {
			cand = append(cand, i*o.Vars+k)
		}
	}
	agent := func(v int) int { return v / o.Vars }
	total := nb * nb * o.Agents * (o.Agents - 1) / 2
	if total > maxBoundaryPairs {
		return fmt.Errorf("%d pairs of boundary variables are too many to draw from (at most %d): lower agents, vars or ratio",
			total, maxBoundaryPairs)
	}
	target := round(o.GlobalDensity * float64(total))
	if target == 0 {
		return nil
	}
	external := make(map[int]bool, len(cand))
	count := 0
	for _, c := range r.Perm(len(cand)) {
		u := cand[c]
		if external[u] {
			continue
		}
		v := cand[r.IntN(len(cand))]
		for agent(v) == agent(u) {
			v = cand[r.IntN(len(cand))]
		}
		g.add(u, v)
		external[u], external[v] = true, true
		count++
	}
	if target <= count {
		return nil
	}
	var free []edge
	for a, u := range cand {
		for _, v := range cand[a+1:] {
			if agent(u) != agent(v) && !g.has(u, v) {
				free = append(free, edge{u, v})
			}
		}
	}
	for _, e := range choose(r, len(free), min(target-count, len(free))) {
		g.add(free[e].u, free[e].v)
	}
	return nil
}
