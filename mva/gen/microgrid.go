package gen

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/hearth-dcop/hearth/mva"
)

// MicrogridOptions shape the smart-grid networks of the thesis's DMCMC
// evaluation (§5.3.5, Table 5.1): the Comprehensive Customer-Driven
// Microgrid Optimization Problem (Gupta et al., DCR 2013), buildings that
// generate and consume power and exchange it with neighbouring buildings,
// each with a cost on its generation and consumption, minimising the total
// cost under hard flow-conservation and capacity constraints, on clustered
// scale-free graphs (Tam, Lau & Tse, 2008) "where each cluster has a few
// high density nodes", with a number of local variables per agent that
// depends on its number of neighbours, domains of 11 values and functions
// of arity at most 5. The rest is this package's reading:
//
//   - Topology: the buildings are split into clusters of about
//     ClusterSize; each cluster is a Holme–Kim network (Barabási–Albert
//     growth from an edge, Links links per new building, each link after
//     the first made by triad formation — to a neighbour of the building
//     just linked — with probability Triad), which is the usual scale-free
//     model with adjustable clustering; cluster c > 0 then links its hub
//     (largest degree) to the hub of a uniformly drawn earlier cluster.
//     Degrees are bounded by MaxDegree. The graph is connected.
//   - Variables of building i (agent "b<i>"), with h = (Domain−1)/2:
//     "g<i>", its generation, and "l<i>", its consumption, in 0..Domain−1;
//     "f<i>_<j>" for every neighbour j, the power i sends to j, in −h..h
//     (negative: received); and the partial sums "s<i>_<k>" the balance
//     needs, in −h..h (the building's bus carries at most h either way).
//   - Costs (local, unary): generation costs a·g + b·g² with a uniform in
//     1..10 and b in 0..2, and is Hard above the building's capacity G
//     (0 for a building without generation, which happens with
//     probability 1 − Generators; otherwise uniform in 1..Domain−1);
//     consumption costs p per unit below the building's demand (uniform in
//     0..Domain−1), p uniform in 10..30, and nothing above it.
//   - Capacity (local, hard): |f<i>_<j>| ≤ the line's capacity, uniform in
//     1..h, on both ends' copies.
//   - Flow conservation (local, hard): g − l = Σ_j f<i>_<j>. When the
//     function would exceed MaxArity, the flows are folded into partial
//     sums, MaxArity−1 at a time (s = f1 + f2 + ...), before the final
//     balance; this is why a building's variable count grows with its
//     degree.
//   - Agreement (between agents, hard): f<i>_<j> + f<j>_<i> = 0. The flow
//     copies are the boundary variables.
//
// Every instance is feasible: nothing generated, consumed or sent.
type MicrogridOptions struct {
	// Agents is the number of buildings; the thesis ran 100, 250 and 500.
	Agents int
	// ClusterSize is the size of the clusters.
	ClusterSize int
	// Links is the Holme–Kim m: links per new building in a cluster.
	Links int
	// MaxDegree bounds the lines of a building (0: no bound), and so its
	// boundary variables: an MVA table has Domain^degree rows, which the
	// hubs of an unbounded scale-free graph make astronomical (11^12 on
	// 100 buildings). The thesis solved its instances with DPOP, so its
	// degrees must have been small; it does not say how. Buildings at the
	// bound are left out of the attachment draws; the link between two
	// clusters goes to a building with room, and ignores the bound only if
	// no building anywhere has room. It must be at least 2·Links.
	MaxDegree int
	// Triad is the Holme–Kim probability of triad formation.
	Triad float64
	// Domain is the number of values of every variable: odd, at least 3.
	Domain int
	// MaxArity bounds every function's arity: at least 3.
	MaxArity int
	// Generators is the fraction of buildings that can generate power.
	Generators float64
}

// DefaultMicrogrid returns the thesis's smallest configuration (100
// buildings, 11 values, arity 5) with this package's choices for the
// rest: clusters of 10 buildings, m = 2, triad probability 0.5, at most 4
// lines per building, half the buildings generating.
func DefaultMicrogrid() MicrogridOptions {
	return MicrogridOptions{
		Agents: 100, ClusterSize: 10, Links: 2, MaxDegree: 4, Triad: 0.5,
		Domain: 11, MaxArity: 5, Generators: 0.5,
	}
}

func (o MicrogridOptions) validate() error {
	switch {
	case o.Agents < 1 || o.Agents > 1<<16:
		return fmt.Errorf("agents %d is outside [1, %d]", o.Agents, 1<<16)
	case o.ClusterSize < 2:
		return fmt.Errorf("cluster size %d: a cluster needs at least 2 buildings", o.ClusterSize)
	case o.Links < 1:
		return fmt.Errorf("links %d: each new building links to at least one", o.Links)
	case o.MaxDegree != 0 && o.MaxDegree < 2*o.Links:
		return fmt.Errorf("max degree %d is below 2·links = %d: buildings would run out of room to connect", o.MaxDegree, 2*o.Links)
	case o.MaxDegree < 0:
		return fmt.Errorf("max degree %d: 0 means no bound, otherwise it must be positive", o.MaxDegree)
	case o.Domain < 3 || o.Domain%2 == 0:
		return fmt.Errorf("domain %d: it must be odd and at least 3, flows running from −h to h", o.Domain)
	case o.MaxArity < 3:
		return fmt.Errorf("max arity %d: a balance needs at least generation, consumption and one flow", o.MaxArity)
	}
	for _, c := range []struct {
		name string
		x    float64
	}{{"triad", o.Triad}, {"generators", o.Generators}} {
		if err := checkUnit(c.name, c.x); err != nil {
			return err
		}
	}
	if _, err := tableSize(o.Domain, o.MaxArity); err != nil {
		return fmt.Errorf("max arity %d: %w", o.MaxArity, err)
	}
	return nil
}

// Microgrid returns the microgrid instance of seed under o (see
// MicrogridOptions).
func Microgrid(seed uint64, o MicrogridOptions) (*mva.Problem, error) {
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("gen microgrid: %w", err)
	}
	r := newRand(seed, 0x6772_6964_6e65_74) // "gridnet"
	n := o.Agents
	adj := clusteredScaleFree(r, n, o)
	h := (o.Domain - 1) / 2
	m := &microgrid{p: &mva.Problem{Name: "microgrid-" + strconv.FormatUint(seed, 10)}, d: o.Domain, h: h}
	p := m.p
	caps := map[edge]int{}
	flow := make([]map[int]int, n) // flow[i][j]: variable of f<i>_<j>
	for i := range n {
		p.Agents = append(p.Agents, mva.Agent{Name: "b" + strconv.Itoa(i)})
		g := m.variable("g"+strconv.Itoa(i), i, false)
		l := m.variable("l"+strconv.Itoa(i), i, false)

		capacity := 0
		if r.Float64() < o.Generators {
			capacity = 1 + r.IntN(o.Domain-1)
		}
		a, b := 1+r.IntN(10), r.IntN(3)
		m.unary("gen"+strconv.Itoa(i), g, func(x int) float64 {
			if x > capacity {
				return mva.Hard
			}
			return float64(a*x + b*x*x)
		})
		demand, price := r.IntN(o.Domain), 10+r.IntN(21)
		m.unary("use"+strconv.Itoa(i), l, func(x int) float64 { return float64(price * max(demand-x, 0)) })

		flow[i] = map[int]int{}
		var terms []int
		for _, j := range adj[i] {
			f := m.variable("f"+strconv.Itoa(i)+"_"+strconv.Itoa(j), i, true)
			flow[i][j] = f
			terms = append(terms, f)
			e := newEdge(i, j)
			if _, ok := caps[e]; !ok {
				caps[e] = 1 + r.IntN(h)
			}
			c := caps[e]
			m.unary("cap"+strconv.Itoa(i)+"_"+strconv.Itoa(j), f, func(x int) float64 {
				if abs(x-h) > c {
					return mva.Hard
				}
				return 0
			})
		}
		for k := 0; 2+len(terms) > o.MaxArity; k++ {
			s := m.variable("s"+strconv.Itoa(i)+"_"+strconv.Itoa(k), i, true)
			fold := terms[:o.MaxArity-1]
			m.equation("sum"+strconv.Itoa(i)+"_"+strconv.Itoa(k), s, -1, fold)
			terms = append([]int{s}, terms[o.MaxArity-1:]...)
		}
		m.balance("bal"+strconv.Itoa(i), g, l, terms)
	}
	for i := range n {
		for _, j := range adj[i] {
			if i < j {
				m.equation("line"+strconv.Itoa(i)+"_"+strconv.Itoa(j), flow[i][j], 1, []int{flow[j][i]})
			}
		}
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("gen microgrid: %w", err)
	}
	return p, nil
}

func abs(x int) int { return max(x, -x) }

// microgrid builds the problem: every variable has d values; signed ones
// (flows, partial sums) mean index − h, the others their index.
type microgrid struct {
	p      *mva.Problem
	d, h   int
	signed []bool
}

func (m *microgrid) variable(name string, agent int, signed bool) int {
	lo := 0
	if signed {
		lo = -m.h
	}
	m.p.Variables = append(m.p.Variables, mva.Variable{Name: name, Domain: intLabels(lo, m.d), Agent: agent})
	m.signed = append(m.signed, signed)
	return len(m.p.Variables) - 1
}

func (m *microgrid) value(v, x int) int {
	if m.signed[v] {
		return x - m.h
	}
	return x
}

func (m *microgrid) unary(name string, v int, cost func(x int) float64) {
	t := make([]float64, m.d)
	for x := range t {
		t[x] = cost(x)
	}
	m.p.Functions = append(m.p.Functions, mva.Function{Name: name, Scope: []int{v}, Costs: t})
}

// equation adds the hard function sign·v + Σ terms = 0 over (v, terms...).
func (m *microgrid) equation(name string, v, sign int, terms []int) {
	m.linear(name, append([]int{v}, terms...), append([]int{sign}, ones(len(terms))...))
}

// balance adds the hard function g − l − Σ flows = 0.
func (m *microgrid) balance(name string, g, l int, flows []int) {
	coef := append([]int{1, -1}, ones(len(flows))...)
	for k := range flows {
		coef[2+k] = -1
	}
	m.linear(name, append([]int{g, l}, flows...), coef)
}

func ones(n int) []int {
	o := make([]int, n)
	for i := range o {
		o[i] = 1
	}
	return o
}

// linear adds the hard function Σ coef·value = 0 over scope, every coef
// ±1. Each assignment of all but the last variable allows at most one
// value of the last, so the table is filled Hard and the feasible entries
// are computed directly, one per prefix.
func (m *microgrid) linear(name string, scope, coef []int) {
	size, _ := tableSize(m.d, len(scope)) // validated
	t := make([]float64, size)
	for e := range t {
		t[e] = mva.Hard
	}
	last := len(scope) - 1
	vals := make([]int, last)
	for prefix := range size / m.d {
		sum := 0
		for j, x := range vals {
			sum += coef[j] * m.value(scope[j], x)
		}
		// coef[last]·value = −sum, and value = x − h for a signed variable.
		x := -sum * coef[last]
		if m.signed[scope[last]] {
			x += m.h
		}
		if x >= 0 && x < m.d {
			t[prefix*m.d+x] = 0
		}
		for j := last - 1; j >= 0; j-- {
			vals[j]++
			if vals[j] < m.d {
				break
			}
			vals[j] = 0
		}
	}
	m.p.Functions = append(m.p.Functions, mva.Function{Name: name, Scope: scope, Costs: t})
}

// clusteredScaleFree returns the sorted adjacency lists of the clustered
// Holme–Kim network described in MicrogridOptions.
func clusteredScaleFree(r *rand.Rand, n int, o MicrogridOptions) [][]int {
	adj := make([][]int, n)
	room := func(u int) bool { return o.MaxDegree == 0 || len(adj[u]) < o.MaxDegree }
	link := func(u, v int) {
		adj[u] = append(adj[u], v)
		adj[v] = append(adj[v], u)
	}
	clusters := (n + o.ClusterSize - 1) / o.ClusterSize
	bounds := make([]int, clusters+1)
	for c := range bounds {
		bounds[c] = c * n / clusters
	}
	// hub returns the node of cluster c with the largest degree that has
	// room for one more line, or -1.
	hub := func(c int) int {
		h := -1
		for v := bounds[c]; v < bounds[c+1]; v++ {
			if room(v) && (h < 0 || len(adj[v]) > len(adj[h])) {
				h = v
			}
		}
		return h
	}
	for c := range clusters {
		holmeKim(r, bounds[c], bounds[c+1], o, adj, room, link)
		if c == 0 {
			continue
		}
		u, v := hub(c), hub(r.IntN(c))
		for e := 0; v < 0 && e < c; e++ { // that cluster is full: the first with room
			v = hub(e)
		}
		if u < 0 || v < 0 { // no room anywhere: connect anyway
			u, v = bounds[c], bounds[0]
		}
		link(u, v)
	}
	for v := range adj {
		slices.Sort(adj[v])
	}
	return adj
}

// holmeKim grows nodes lo..hi-1 into a Holme–Kim network: from the edge
// lo–(lo+1), node t makes min(Links, t−lo) links, the first by
// preferential attachment and each other one by triad formation with
// probability Triad (to a neighbour of the node linked last by
// preferential attachment, when one is free) or else by preferential
// attachment. Nodes without room (MaxDegree) are never chosen; a node
// finding none makes fewer links, but always at least one while
// MaxDegree ≥ 2·Links, which validate ensures.
func holmeKim(r *rand.Rand, lo, hi int, o MicrogridOptions, adj [][]int, room func(int) bool, link func(u, v int)) {
	if hi-lo < 2 {
		return
	}
	link(lo, lo+1)
	ends := []int{lo, lo + 1} // every node once per line in the cluster
	for t := lo + 2; t < hi; t++ {
		linked := map[int]bool{}
		free := func(u int) bool { return !linked[u] && room(u) }
		add := func(u int) {
			link(u, t)
			linked[u] = true
			ends = append(ends, u)
		}
		// attach links t to a free node drawn with probability
		// proportional to its degree: by rejection, then, when free
		// nodes are rare, by a scan.
		attach := func() int {
			for range 64 {
				if u := ends[r.IntN(len(ends))]; free(u) {
					add(u)
					return u
				}
			}
			total := 0
			for u := lo; u < t; u++ {
				if free(u) {
					total += len(adj[u])
				}
			}
			if total == 0 {
				return -1
			}
			x := r.IntN(total)
			for u := lo; u < t; u++ {
				if free(u) {
					if x -= len(adj[u]); x < 0 {
						add(u)
						return u
					}
				}
			}
			return -1
		}
		last := attach()
		for range min(o.Links, t-lo) - 1 {
			if last < 0 {
				break
			}
			if r.Float64() < o.Triad {
				var cand []int
				for _, w := range adj[last] {
					if w != t && w >= lo && w < hi && free(w) {
						cand = append(cand, w)
					}
				}
				if len(cand) > 0 {
					add(cand[r.IntN(len(cand))])
					continue
				}
			}
			if u := attach(); u >= 0 {
				last = u
			}
		}
		ends = append(ends, slices.Repeat([]int{t}, len(linked))...)
	}
}
