package local

import (
	"math"
	"math/bits"
	"math/rand/v2"
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
		}
	}
	eachBit(left, eval)
	fills := rule == ruleMinFill || rule == ruleWeightedFill
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
