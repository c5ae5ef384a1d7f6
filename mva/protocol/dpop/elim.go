package dpop

import (
	"math"
	"math/bits"
)

// This file plans the order in which an agent eliminates its boundary
// variables during the UTIL phase.
//
// The agent's factors are its MVA table, over all of B_i, and factors over
// some boundary variables and some separator variables (the functions it
// is the lowest holder of, its children's UTILs). Because the MVA table
// couples the whole of B_i, the first elimination merges it with the
// factors of the eliminated variable into one table over the rest of B_i
// and their separator variables, and every later step grows that table by
// the separator variables of the next one. Eliminating B_i jointly, as one
// join over |B_i|+|sep| variables, costs |D(B_i)|·|D(sep)| entries;
// eliminating first the boundary variables tied to few separator variables
// keeps every intermediate table small, and a boundary variable tied to
// none costs only |D(B_i)| to remove. The cost of a step therefore depends
// only on the set of variables eliminated before it, which makes the best
// order a dynamic program over subsets of B_i; beyond exactMaxBoundary
// variables, or for joins too small to repay the program (exactWork), a
// greedy order (the cheapest next step, as min-degree does with weights)
// stands in for it.
//
// A plan is an order and a count k: the first k variables are eliminated
// one at a time, the others in one final join-project together with every
// factor still pending, so that the last step's output is exactly the
// separator. k = 0 is the joint elimination, which is also the fallback
// when single steps would build a table over max_util_entries: a plan
// never needs a table larger than the separator's and the MVA table,
// which the caller has already accepted.

// exactMaxBoundary is the largest number of boundary variables whose
// elimination order is optimised exactly: 2^12 subsets plan in about half
// a millisecond.
const exactMaxBoundary = 12

// exactWork is how many join entries the planner may spend per subset and
// boundary variable of the dynamic program: an update costs a few tens of
// nanoseconds, an entry of the join one or two, so with 64 planning the
// order exactly never costs more than a few percent of the joint join.
// Smaller joins take the greedy order.
const exactWork = 64

// smallJoin is the join size (entries) below which the UTIL phase does not
// split its work: planning a join-project costs about as much as summing a
// few thousand entries, so a small join is done in one step.
const smallJoin = 1 << 12

// elimPlan is the planner's answer: eliminate order[:single] one at a time,
// then order[single:] jointly in the final step.
type elimPlan struct {
	order  []int
	single int
	// cost is the plan's join entries, Σ rows × eliminated assignments
	// over its steps.
	cost float64
}

// planElimination plans the elimination of boundary (problem variable ids,
// domain sizes bdims) from the MVA table and factors whose variable sets
// are scopes; sepDims are the domain sizes of the separator, every other
// variable of scopes. No intermediate table has more than maxEntries rows.
func planElimination(boundary, bdims []int, scopes [][]int, sep, sepDims []int, maxEntries int) elimPlan {
	nb := len(boundary)
	if joint := product(bdims) * product(sepDims); nb <= 1 || joint < smallJoin {
		return elimPlan{order: identity(nb), cost: joint}
	}
	m := newElimModel(boundary, bdims, scopes, sep, sepDims, maxEntries)
	switch {
	case nb <= exactMaxBoundary && float64(nb)*float64(int(1)<<nb)*exactWork <= m.final(0):
		return m.exact()
	case nb <= 64:
		return m.greedy()
	default:
		// More boundary variables than a mask holds (only possible with
		// one-value domains, as the MVA table has |D(B_i)| rows).
		return m.joint()
	}
}

// joint is the plan that eliminates every boundary variable in one step.
func (m *elimModel) joint() elimPlan {
	return elimPlan{order: identity(len(m.bdims)), cost: m.final(0)}
}

// identity returns 0, 1, …, n-1.
func identity(n int) []int {
	order := make([]int, n)
	for k := range order {
		order[k] = k
	}
	return order
}

// newElimModel indexes the separator variables each boundary variable
// shares a factor with.
func newElimModel(boundary, bdims []int, scopes [][]int, sep, sepDims []int, maxEntries int) *elimModel {
	bIndex := make(map[int]int, len(boundary))
	for k, v := range boundary {
		bIndex[v] = k
	}
	sIndex := make(map[int]int, len(sep))
	for k, v := range sep {
		sIndex[v] = k
	}
	words := (len(sep) + 63) / 64
	touch := make([]bitset, len(boundary))
	for k := range touch {
		touch[k] = make(bitset, words)
	}
	for _, s := range scopes {
		var bs []int
		for _, v := range s {
			if k, ok := bIndex[v]; ok {
				bs = append(bs, k)
			}
		}
		for _, v := range s {
			if j, ok := sIndex[v]; ok {
				for _, k := range bs {
					touch[k].set(j)
				}
			}
		}
	}
	return &elimModel{bdims: bdims, sepDims: sepDims, sepSize: product(sepDims), touch: touch, max: float64(maxEntries)}
}

// elimModel holds what the cost of a step depends on.
type elimModel struct {
	bdims   []int
	sepDims []int
	sepSize float64
	// touch[k] is the separator variables sharing a factor with boundary
	// variable k.
	touch []bitset
	max   float64
}

// rest returns |D(B \ T)| for the eliminated set T (a bitmask).
func (m *elimModel) rest(t uint64) float64 {
	n := 1.0
	for k, d := range m.bdims {
		if t&(1<<k) == 0 {
			n *= float64(d)
		}
	}
	return n
}

// final returns the cost of the last step after T: every separator row
// times every joint assignment of the boundary variables left.
func (m *elimModel) final(t uint64) float64 { return m.sepSize * m.rest(t) }

// exact finds the cheapest plan by dynamic programming over the subsets T
// of single-eliminated variables: reaching T∪{v} from T costs
// |D(B\T)|·|D(S(T∪{v}))|, S being the separator variables tied to the
// eliminated set, and builds a table of |D(B\T\{v})|·|D(S(T∪{v}))| rows.
func (m *elimModel) exact() elimPlan {
	nb := len(m.bdims)
	full := uint64(1)<<nb - 1
	states := 1 << nb
	inf := math.Inf(1)
	best := make([]float64, states)
	from := make([]int8, states)
	union := make([]bitset, states)
	for t := range best {
		best[t] = inf
		from[t] = -1
	}
	union[0] = make(bitset, len(m.touch[0]))
	best[0] = 0
	for t := uint64(0); t < full; t++ {
		if best[t] == inf {
			continue
		}
		rest := m.rest(t)
		for k := range nb {
			if t&(1<<k) != 0 {
				continue
			}
			u := t | 1<<k
			if u == full {
				continue // the last variable goes in the final step
			}
			if union[u] == nil {
				union[u] = union[t].or(m.touch[k])
			}
			s := m.sepProduct(union[u])
			rows := rest / float64(m.bdims[k]) * s
			if rows > m.max {
				continue
			}
			if c := best[t] + rest*s; c < best[u] {
				best[u], from[u] = c, int8(k)
			}
		}
	}
	// The answer: the cheapest reachable T followed by the final step,
	// ties to the fewest steps.
	bestT, bestCost := uint64(0), m.final(0)
	for t := uint64(1); t < full; t++ {
		if best[t] == inf {
			continue
		}
		c := best[t] + m.final(t)
		if c < bestCost || c == bestCost && bits.OnesCount64(t) < bits.OnesCount64(bestT) {
			bestT, bestCost = t, c
		}
	}
	var order []int
	for t := bestT; t != 0; t &^= 1 << from[t] {
		order = append(order, int(from[t]))
	}
	single := len(order)
	for i, j := 0, single-1; i < j; i, j = i+1, j-1 {
		order[i], order[j] = order[j], order[i]
	}
	for k := range nb {
		if bestT&(1<<k) == 0 {
			order = append(order, k)
		}
	}
	return elimPlan{order: order, single: single, cost: bestCost}
}

// greedy builds the order one cheapest step at a time and stops single
// steps where the prefix followed by the final step is cheapest.
func (m *elimModel) greedy() elimPlan {
	nb := len(m.bdims)
	var (
		t     uint64
		order []int
		cum   float64
		union = make(bitset, len(m.touch[0]))
	)
	bestSingle, bestCost := 0, m.final(0)
	for len(order) < nb-1 {
		rest := m.rest(t)
		pick, pickCost := -1, 0.0
		var pickUnion bitset
		for k := range nb {
			if t&(1<<k) != 0 {
				continue
			}
			u := union.or(m.touch[k])
			s := m.sepProduct(u)
			if rest/float64(m.bdims[k])*s > m.max {
				continue
			}
			if c := rest * s; pick < 0 || c < pickCost {
				pick, pickCost, pickUnion = k, c, u
			}
		}
		if pick < 0 {
			break
		}
		t |= 1 << pick
		order = append(order, pick)
		cum += pickCost
		union = pickUnion
		if c := cum + m.final(t); c < bestCost {
			bestSingle, bestCost = len(order), c
		}
	}
	order = order[:bestSingle]
	var done uint64
	for _, k := range order {
		done |= 1 << k
	}
	for k := range nb {
		if done&(1<<k) == 0 {
			order = append(order, k)
		}
	}
	return elimPlan{order: order, single: bestSingle, cost: bestCost}
}

// sepProduct returns |D(S)| for a set of separator variables.
func (m *elimModel) sepProduct(s bitset) float64 {
	n := 1.0
	for w, word := range s {
		for word != 0 {
			j := bits.TrailingZeros64(word)
			word &^= 1 << j
			n *= float64(m.sepDims[w*64+j])
		}
	}
	return n
}

// bitset is a set of small non-negative integers.
type bitset []uint64

func (b bitset) set(i int) { b[i/64] |= 1 << (i % 64) }

// or returns a new set, the union of b and c (of the same length).
func (b bitset) or(c bitset) bitset {
	u := make(bitset, len(b))
	for i := range b {
		u[i] = b[i] | c[i]
	}
	return u
}

func product(dims []int) float64 {
	n := 1.0
	for _, d := range dims {
		n *= float64(d)
	}
	return n
}
