package gen

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/hearth-dcop/hearth/mva"
)

// GraphOptions are the settings shared by the one-variable-per-agent
// topologies of GPU-(D)BE (CP 2015, §5, repeated in the thesis §5.2.5)
// and CUBE (ECAI 2016, §4): binary constraint networks in which every
// agent owns one variable of 5 values and every edge is a function with
// whole costs in [0, 100] and tightness p2 = 0.5, "the ratio of entries in
// the utility table different from −∞" (see the package documentation).
// The papers maximise utilities; here the same numbers are costs to
// minimise, which changes nothing in the structure a solver sees.
type GraphOptions struct {
	// Domain is the number of values of every variable.
	Domain int
	// MinCost and MaxCost bound the whole costs of feasible entries.
	MinCost, MaxCost int
	// Tightness is p2, the fraction of every table's entries that are
	// feasible.
	Tightness float64
	// Plant makes a random assignment feasible.
	Plant bool
}

// DefaultGraph returns the papers' settings.
func DefaultGraph() GraphOptions {
	return GraphOptions{Domain: 5, MinCost: 0, MaxCost: 100, Tightness: 0.5, Plant: true}
}

func (o GraphOptions) validate() error {
	switch {
	case o.Domain < 1 || o.Domain > 1<<12:
		return fmt.Errorf("domain %d is outside [1, %d]", o.Domain, 1<<12)
	case o.MinCost > o.MaxCost:
		return fmt.Errorf("cost range [%d, %d] is empty", o.MinCost, o.MaxCost)
	}
	if err := checkUnit("tightness p2", o.Tightness); err != nil {
		return err
	}
	if o.Plant && o.Tightness == 0 {
		return fmt.Errorf("tightness p2 0 makes every entry hard: nothing can be planted")
	}
	return nil
}

// GridOptions shape a regular grid: Rows×Cols agents, each linked to its
// four neighbours (three on a side, two in a corner; the papers print the
// two counts swapped). The papers' default is 9 agents, 3×3.
type GridOptions struct {
	Rows, Cols int
	GraphOptions
}

// DefaultGrid returns a 3×3 grid with the papers' settings.
func DefaultGrid() GridOptions { return GridOptions{Rows: 3, Cols: 3, GraphOptions: DefaultGraph()} }

// ScaleFreeOptions shape a Barabási–Albert network as the papers build it:
// "starting from a connected 2-node network, we repeatedly add a new node,
// randomly connecting it to two existing nodes", chosen with probability
// proportional to their degree, for 2(n−2)+1 edges (Links = 2; the third
// node links to both first ones).
type ScaleFreeOptions struct {
	Agents int
	// Links is the number of existing nodes each new node links to (m).
	Links int
	GraphOptions
}

// DefaultScaleFree returns 10 agents, m = 2, with the papers' settings.
func DefaultScaleFree() ScaleFreeOptions {
	return ScaleFreeOptions{Agents: 10, Links: 2, GraphOptions: DefaultGraph()}
}

// RandGraphOptions shape a random network: round(p1·n(n−1)/2) edges drawn
// uniformly among the pairs of agents (see the package documentation for
// the edge count), drawn again until the graph is connected, as the papers
// ensure. Their default is 10 agents and p1 = 0.3.
type RandGraphOptions struct {
	Agents int
	// Density is p1.
	Density float64
	GraphOptions
}

// DefaultRandGraph returns 10 agents, p1 = 0.3, with the papers' settings.
func DefaultRandGraph() RandGraphOptions {
	return RandGraphOptions{Agents: 10, Density: 0.3, GraphOptions: DefaultGraph()}
}

// maxAgents bounds the one-variable-per-agent topologies.
const maxAgents = 1 << 20

// Grid returns the grid of seed under o: agent "a<r>_<c>" owns variable
// "x<r>_<c>"; functions "f0", "f1", ... follow the edges row by row.
func Grid(seed uint64, o GridOptions) (*mva.Problem, error) {
	if err := o.GraphOptions.validate(); err != nil {
		return nil, fmt.Errorf("gen grid: %w", err)
	}
	if o.Rows < 1 || o.Cols < 1 || o.Rows > maxAgents || o.Cols > maxAgents || o.Rows*o.Cols > maxAgents {
		return nil, fmt.Errorf("gen grid: %dx%d is not a grid of 1 to %d agents", o.Rows, o.Cols, maxAgents)
	}
	var edges []edge
	names := make([]string, o.Rows*o.Cols)
	for row := range o.Rows {
		for c := range o.Cols {
			v := row*o.Cols + c
			names[v] = strconv.Itoa(row) + "_" + strconv.Itoa(c)
			if c+1 < o.Cols {
				edges = append(edges, edge{v, v + 1})
			}
			if row+1 < o.Rows {
				edges = append(edges, edge{v, v + o.Cols})
			}
		}
	}
	name := fmt.Sprintf("grid-%dx%d-%d", o.Rows, o.Cols, seed)
	return binary("grid", name, newRand(seed, 0x6772_6964), names, edges, o.GraphOptions)
}

// ScaleFree returns the Barabási–Albert network of seed under o: agent
// "a<k>" owns "x<k>"; functions "f0", "f1", ... in order of creation.
func ScaleFree(seed uint64, o ScaleFreeOptions) (*mva.Problem, error) {
	if err := o.GraphOptions.validate(); err != nil {
		return nil, fmt.Errorf("gen scalefree: %w", err)
	}
	switch {
	case o.Agents < 2 || o.Agents > maxAgents:
		return nil, fmt.Errorf("gen scalefree: agents %d is outside [2, %d]", o.Agents, maxAgents)
	case o.Links < 1:
		return nil, fmt.Errorf("gen scalefree: links %d: each new node links to at least one", o.Links)
	}
	r := newRand(seed, 0x7363_616c_65) // "scale"
	return binary("scalefree", "scalefree-"+strconv.FormatUint(seed, 10), r, indexNames(o.Agents),
		barabasiAlbert(r, o.Agents, o.Links), o.GraphOptions)
}

// barabasiAlbert grows a network from the edge 0–1: node t links to
// min(m, t) distinct earlier nodes drawn with probability proportional to
// their degree (from the list of edge ends, each node once per edge).
func barabasiAlbert(r *rand.Rand, n, m int) []edge {
	edges := []edge{{0, 1}}
	ends := []int{0, 1}
	for t := 2; t < n; t++ {
		picked := map[int]bool{}
		var order []int
		for len(order) < min(m, t) {
			u := ends[r.IntN(len(ends))]
			if !picked[u] {
				picked[u] = true
				order = append(order, u)
			}
		}
		for _, u := range order {
			edges = append(edges, edge{u, t})
			ends = append(ends, u, t)
		}
	}
	return edges
}

// RandGraph returns the random network of seed under o: agent "a<k>" owns
// "x<k>"; functions "f0", "f1", ... in the order drawn.
func RandGraph(seed uint64, o RandGraphOptions) (*mva.Problem, error) {
	if err := o.GraphOptions.validate(); err != nil {
		return nil, fmt.Errorf("gen randgraph: %w", err)
	}
	if o.Agents < 1 || o.Agents > 1<<13 {
		return nil, fmt.Errorf("gen randgraph: agents %d is outside [1, %d]", o.Agents, 1<<13)
	}
	if err := checkUnit("density p1", o.Density); err != nil {
		return nil, fmt.Errorf("gen randgraph: %w", err)
	}
	n := o.Agents
	pairs := n * (n - 1) / 2
	k := round(o.Density * float64(pairs))
	if k < n-1 {
		return nil, fmt.Errorf("gen randgraph: density %v gives %d edges, fewer than the %d that connect %d agents", o.Density, k, n-1, n)
	}
	r := newRand(seed, 0x7261_6e64_6772) // "randgr"
	const tries = 1000
	for range tries {
		edges := make([]edge, 0, k)
		for _, e := range choose(r, pairs, k) {
			u, v := pairOf(e)
			edges = append(edges, edge{u, v})
		}
		if connected(n, edges) {
			return binary("randgraph", "randgraph-"+strconv.FormatUint(seed, 10), r, indexNames(n), edges, o.GraphOptions)
		}
	}
	return nil, fmt.Errorf("gen randgraph: no connected graph in %d draws at density %v: raise the density", tries, o.Density)
}

func indexNames(n int) []string { return intLabels(0, n) }

// binary builds a problem with one agent "a<name>" and one variable
// "x<name>" per node and one tight function per edge.
// The options have been validated.
func binary(kind, name string, r *rand.Rand, names []string, edges []edge, o GraphOptions) (*mva.Problem, error) {
	p := &mva.Problem{Name: name}
	for k, n := range names {
		p.Agents = append(p.Agents, mva.Agent{Name: "a" + n})
		p.Variables = append(p.Variables, mva.Variable{Name: "x" + n, Domain: intLabels(0, o.Domain), Agent: k})
	}
	var planted []int
	if o.Plant {
		planted = make([]int, len(names))
		for v := range planted {
			planted[v] = r.IntN(o.Domain)
		}
	}
	for _, e := range edges {
		pl := -1
		if o.Plant {
			pl = index(o.Domain, []int{planted[e.u], planted[e.v]})
		}
		p.Functions = append(p.Functions, mva.Function{
			Name:  "f" + strconv.Itoa(len(p.Functions)),
			Scope: []int{e.u, e.v},
			Costs: tight(r, o.Domain*o.Domain, o.Tightness, o.MinCost, o.MaxCost, pl),
		})
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("gen %s: %w", kind, err)
	}
	return p, nil
}
