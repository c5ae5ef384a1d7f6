package local

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
)

// orderRule is a greedy elimination rule: the variable eliminated next is
// the one of least score in the graph induced so far, ties broken by a
// random key (seeded) or, without one, by the lowest index.
type orderRule int

const (
	// ruleMinFill: fewest edges added among the neighbours.
	ruleMinFill orderRule = iota
	// ruleMinDegree (min-induced-width): fewest neighbours.
	ruleMinDegree
	// ruleMinWeight: the smallest table, the product of the variable's
	// domain and its neighbours'. Where domains differ (an SHDS home:
	// actions of 2 or 3 values beside counters of up to 182) the width
	// counts a counter as one action.
	ruleMinWeight
	// ruleWeightedFill: fewest added edges, each weighted by the product
	// of its two ends' domains.
	ruleWeightedFill
	// ruleLogFill: fewest added edges, each weighted by the bits of the
	// table over its two ends, log2 of the product of their domains:
	// between min-fill, which counts every edge as one, and
	// weighted-fill, which lets one pair of large domains outweigh any
	// number of small ones.
	ruleLogFill
)

func (r orderRule) String() string {
	switch r {
	case ruleMinFill:
		return "min-fill"
	case ruleMinDegree:
		return "min-degree"
	case ruleMinWeight:
		return "min-weight"
	case ruleWeightedFill:
		return "weighted-fill"
	case ruleLogFill:
		return "log-fill"
	}
	return "unknown"
}

// greedyOrder returns an elimination order of elim (local indices, each
// once) over the graph whose cliques are scopes on nvars variables, by
// rule; variables outside elim are never eliminated but count as
// neighbours. rng, when not nil, breaks ties at random. Each variable's
// neighbours are a bit set, and only the scores an elimination can change
// are recomputed: the eliminated variable's neighbours and, for the fill
// rules, their neighbours.
func greedyOrder(nvars int, scopes [][]int, doms []int, elim []int, rule orderRule, rng *rand.Rand) []int {
	w := (nvars + 63) / 64
	rows := make([]uint64, nvars*w)
	row := func(u int) []uint64 { return rows[u*w : (u+1)*w] }
	for _, sc := range scopes {
		for i, u := range sc {
			for _, v := range sc[i+1:] {
				if u != v {
					rows[u*w+v/64] |= 1 << (v % 64)
					rows[v*w+u/64] |= 1 << (u % 64)
				}
			}
		}
	}
	logd := make([]float64, nvars)
	for v := range nvars {
		logd[v] = math.Log2(float64(max(doms[v], 1)))
	}
	left := make([]uint64, w)
	for _, v := range elim {
		left[v/64] |= 1 << (v % 64)
	}
	tie := make([]float64, nvars)
	if rng != nil {
		for v := range tie {
			tie[v] = rng.Float64()
		}
	}
	score := make([]float64, nvars)
	deg := make([]int, nvars)
	eval := func(v int) {
		rv := row(v)
		deg[v] = popcount(rv)
		switch rule {
		case ruleMinDegree:
			score[v] = float64(deg[v])
		case ruleMinWeight:
			s := logd[v]
			eachBit(rv, func(u int) { s += logd[u] })
			score[v] = s
		case ruleMinFill:
			twice := 0
			eachBit(rv, func(u int) {
				ru := row(u)
				for i, x := range rv {
					twice += bits.OnesCount64(x & ru[i])
				}
			})
			score[v] = float64(deg[v]*(deg[v]-1)/2 - twice/2)
		case ruleWeightedFill:
			s := 0.0
			eachBit(rv, func(a int) {
				ra := row(a)
				eachBit(rv, func(b int) {
					if b > a && ra[b/64]&(1<<(b%64)) == 0 {
						s += float64(doms[a]) * float64(doms[b])
					}
				})
			})
			score[v] = s
		case ruleLogFill:
			s := 0.0
			eachBit(rv, func(a int) {
				ra := row(a)
				eachBit(rv, func(b int) {
					if b > a && ra[b/64]&(1<<(b%64)) == 0 {
						s += logd[a] + logd[b]
					}
				})
			})
			score[v] = s
		}
	}
	eachBit(left, eval)
	fills := rule == ruleMinFill || rule == ruleWeightedFill || rule == ruleLogFill
	dirty := make([]uint64, w)
	nb := make([]uint64, w)
	order := make([]int, 0, len(elim))
	for range len(elim) {
		best := -1
		eachBit(left, func(v int) {
			if best < 0 || score[v] < score[best] ||
				score[v] == score[best] && (deg[v] < deg[best] || deg[v] == deg[best] && tie[v] < tie[best]) {
				best = v
			}
		})
		rb := row(best)
		copy(nb, rb)
		bw, bb := best/64, uint64(1)<<(best%64)
		eachBit(nb, func(a int) {
			ra := row(a)
			for i, x := range nb {
				ra[i] |= x
			}
			ra[a/64] &^= 1 << (a % 64)
			ra[bw] &^= bb
		})
		copy(dirty, nb)
		if fills {
			eachBit(nb, func(a int) {
				for i, x := range row(a) {
					dirty[i] |= x
				}
			})
		}
		clear(rb)
		left[bw] &^= bb
		for i := range dirty {
			dirty[i] &= left[i]
		}
		eachBit(dirty, eval)
		order = append(order, best)
	}
	return order
}

// popcount returns the number of set bits in s.
func popcount(s []uint64) int {
	c := 0
	for _, x := range s {
		c += bits.OnesCount64(x)
	}
	return c
}

// eachBit calls f with the index of every set bit of s, ascending.
func eachBit(s []uint64, f func(int)) {
	for i, x := range s {
		for x != 0 {
			f(i*64 + bits.TrailingZeros64(x))
			x &= x - 1
		}
	}
}

// treeCandidate is a pseudo-tree with the rule and seed of its order.
type treeCandidate struct {
	pt   *pseudoTree
	rule orderRule
	seed int // 0: ties by the lowest index
}

// pseudoTreeCandidates returns the pseudo-trees of tries orders by rule
// (the first with ties by index, the others seeded 1, 2, …).
func pseudoTreeCandidates(nv, nb int, doms []int, scopes [][]int, interior []int, rule orderRule, tries int) []treeCandidate {
	var out []treeCandidate
	for seed := range tries {
		var rng *rand.Rand
		if seed > 0 {
			rng = rand.New(rand.NewPCG(uint64(seed), uint64(rule)))
		}
		order := greedyOrder(nv, scopes, doms, interior, rule, rng)
		out = append(out, treeCandidate{newPseudoTree(nv, nb, scopes, order), rule, seed})
	}
	return out
}

// Bucket elimination's order.
//
// Min-fill counts edges, not entries: a compiled home's storages have
// dozens of states per slot beside actions of two or three values, and
// min-fill, blind to that, eliminates an EV's charge chain and an oven's
// programme chain from both ends until they meet in buckets that hold
// both (cedar of the README's street with automatic levels: 1.3·10^8
// entries in one bucket). Which greedy order is best differs from one
// problem to the next and with the ties, and an order's cost is cheap to
// know before any table is built: the entries its buckets join,
// Σ over eliminated v of Π domains of v and its neighbours then
// (orderCost). So beOrder computes min-fill's order, the one bucket
// elimination always ran, and where its joins are large enough for the
// search to pay, also the orders of the rules below with seeded ties,
// keeps the cheapest of those whose tables take no more memory in all
// than min-fill's, and improves it by a local search within a budget of
// moves in proportion to its joins. Every choice is seeded: the same
// problem always gets the same order. The optimum is the same whatever
// the order (exact elimination); only which of equal optima is decoded
// may differ, so an order replaces min-fill's only where it joins fewer
// entries, and problems below beSearchFrom keep min-fill's.

// beSearchFrom is the joined entries from which beOrder searches other
// orders than min-fill's: below it a problem's buckets take about a
// millisecond, about what the search costs.
const beSearchFrom = 1 << 20

// beSearchRules are the rules beOrder tries, each with beSearchSeeds ties
// (the first by index). Measured on the README's street with automatic
// levels (its whole problem and each home's MVA table, 64 seeds each):
// log-fill found the cheapest greedy orders on most, min-fill with seeded
// ties and min-degree on some; min-weight and weighted-fill, which weigh
// domains as products, were 1.1 to 3000 times dearer than the best.
var beSearchRules = []orderRule{ruleMinFill, ruleLogFill, ruleMinDegree}

// beSearchSeeds is the orders per rule beOrder tries, fewer past
// beSearchVars variables (orderCandidates).
const (
	beSearchSeeds = 8
	beSearchVars  = 256
)

// problemOrder returns the elimination order of interior (over scopes,
// lp's functions as BE reads them) bucket elimination runs on lp, its
// induced width and the entries of its tables in all: beOrder's where
// lp's problem allows a search (mva.Problem.SearchOrder) and minFill is
// false, else min-fill's, as always before.
func problemOrder(lp *mva.LocalProblem, scopes [][]int, interior []int, minFill bool) ([]int, int, float64) {
	if !minFill && lp.Problem != nil && lp.Problem.SearchOrder {
		order, width, cost := beOrder(len(lp.Vars), scopes, lp.Domains, interior)
		return order, width, cost.entries
	}
	g := mva.NewGraph(len(lp.Vars))
	for _, sc := range scopes {
		g.AddClique(sc)
	}
	order, width := g.MinFill(interior)
	return order, width, costOf(len(lp.Vars), scopes, lp.Domains, order).entries
}

// beOrder returns bucket elimination's order of elim over the graph of
// scopes on nvars variables (variables outside elim are never eliminated:
// an MVA table's boundary), its induced width and its cost; see above.
func beOrder(nvars int, scopes [][]int, doms []int, elim []int) ([]int, int, orderCost) {
	g := mva.NewGraph(nvars)
	for _, sc := range scopes {
		g.AddClique(sc)
	}
	order, width := g.MinFill(elim)
	cost := costOf(nvars, scopes, doms, order)
	if cost.joins < beSearchFrom {
		return order, width, cost
	}
	k := newCoster(nvars, scopes, doms)
	limit := cost.entries
	for _, rule := range beSearchRules {
		for seed := range orderCandidates(len(elim)) {
			var rng *rand.Rand
			if seed > 0 {
				rng = rand.New(rand.NewPCG(uint64(seed), uint64(rule)))
			}
			o := greedyOrder(nvars, scopes, doms, elim, rule, rng)
			if c := k.cost(o); c.joins < cost.joins && c.entries <= limit {
				order, cost = o, c
			}
		}
	}
	if n := int(min(cost.joins/(beJoinsPerMove*float64(len(order))), beMaxMoves)); n > 0 && len(order) > 1 {
		// Kept only if cheaper: moves between equal costs change the
		// order (and which of equal optima is decoded) for nothing.
		if o, c := k.improve(order, cost, limit, n, rand.New(rand.NewPCG(uint64(len(order)), 1))); c.joins < cost.joins {
			order, cost = o, c
		}
	}
	return order, cost.width, cost
}

// Local search after the greedy orders (coster.improve): on the README's
// street with automatic levels it lowers the best greedy order's joins by
// a further 5 % to 40 % (cedar's MVA table 5.9·10^7 → 3.6·10^7, the
// street's 7.6·10^7 → 6.4·10^7; devices/compile BenchmarkBEOrder). A move costs one
// evaluation of the order, about 0.2 µs per variable (10 µs at 60
// variables on the loaded 2-core machine), what about 2^5 joined entries
// take bucket elimination per variable; beJoinsPerMove allows a move per
// 2^8 joined entries and variable, so the search costs at most about an
// eighth of one elimination (rows after the first reuse the order), and
// at most beMaxMoves moves.
const (
	beJoinsPerMove = 1 << 8
	beMaxMoves     = 4096
)

// improve moves one variable of order at a time to another place (rng
// picks both), keeping each move whose order joins no more entries than
// the current one and keeps tables of at most limit entries in all; moves
// tries in all. It returns the order kept and its cost.
func (k *coster) improve(order []int, cur orderCost, limit float64, moves int, rng *rand.Rand) ([]int, orderCost) {
	order = slices.Clone(order)
	try := make([]int, len(order))
	for range moves {
		i, j := rng.IntN(len(order)), rng.IntN(len(order)-1)
		if j >= i {
			j++
		}
		copy(try, order)
		v := try[i]
		if i < j {
			copy(try[i:j], try[i+1:j+1])
		} else {
			copy(try[j+1:i+1], try[j:i])
		}
		try[j] = v
		if c := k.cost(try); c.joins <= cur.joins && c.entries <= limit {
			order, try, cur = try, order, c
		}
	}
	return order, cur
}

// orderCandidates returns the orders per rule beOrder tries for n
// variables to eliminate: beSearchSeeds up to beSearchVars, then fewer in
// proportion to n², down to one (greedyOrder is quadratic in n).
func orderCandidates(n int) int {
	if n <= beSearchVars {
		return beSearchSeeds
	}
	return max(1, beSearchSeeds*beSearchVars*beSearchVars/(n*n))
}

// orderCost is what an elimination order costs bucket elimination, as
// float64 so that no width overflows: joins, the entries its buckets
// join (Π of the domains of the variable and its neighbours when it is
// eliminated, summed), which is the time; entries, those of the tables
// it keeps (the same without the variable), which is the memory; width,
// the most neighbours a variable has when eliminated.
type orderCost struct {
	joins, entries float64
	width          int
}

// costOf returns the cost of eliminating order on the graph of scopes.
func costOf(nvars int, scopes [][]int, doms []int, order []int) orderCost {
	return newCoster(nvars, scopes, doms).cost(order)
}

// coster computes orders' costs on one graph, its rows built once.
type coster struct {
	w          int
	doms       []int
	base, rows []uint64
	nb         []uint64
}

func newCoster(nvars int, scopes [][]int, doms []int) *coster {
	w := (nvars + 63) / 64
	c := &coster{w: w, doms: doms, base: make([]uint64, nvars*w), rows: make([]uint64, nvars*w), nb: make([]uint64, w)}
	for _, sc := range scopes {
		for i, u := range sc {
			for _, v := range sc[i+1:] {
				if u != v {
					c.base[u*w+v/64] |= 1 << (v % 64)
					c.base[v*w+u/64] |= 1 << (u % 64)
				}
			}
		}
	}
	return c
}

// cost returns the cost of eliminating order.
func (k *coster) cost(order []int) orderCost {
	w, rows, nb := k.w, k.rows, k.nb
	copy(rows, k.base)
	var c orderCost
	for _, v := range order {
		rv := rows[v*w : (v+1)*w]
		copy(nb, rv)
		n, deg := 1.0, 0
		eachBit(nb, func(u int) {
			n *= float64(k.doms[u])
			deg++
			ru := rows[u*w : (u+1)*w]
			for i, x := range nb {
				ru[i] |= x
			}
			ru[u/64] &^= 1 << (u % 64)
			ru[v/64] &^= 1 << (v % 64)
		})
		clear(rv)
		c.entries += n
		c.joins += n * float64(max(k.doms[v], 1))
		c.width = max(c.width, deg)
	}
	return c
}
