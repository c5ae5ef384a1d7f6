package mva

import (
	"fmt"
	"slices"
)

// Partition gives the variables of p to n new agents named a0..a{n-1},
// replacing any ownership the file had. Formats without agents (WCSP, UAI)
// use it for `--agents N`.
//
// The aim is the MVA sweet spot: agents of equal size (⌊|X|/n⌋ or ⌈|X|/n⌉
// variables) whose variables are tightly connected inside and loosely
// connected to other agents, so that few variables end up on the boundary.
// It works in two deterministic steps:
//
//  1. Region growing: each agent starts from the unassigned variable with
//     the fewest unassigned neighbours (a peripheral one, lowest index on
//     ties) and repeatedly takes the unassigned variable with the most
//     function links into the region (then the nearest to the seed, then
//     the lowest index) until it has its
//     size; when the region has no unassigned neighbour left it restarts from
//     a new seed, so disconnected graphs are handled.
//  2. Refinement: passes of pairwise swaps between agents (Kernighan–Lin
//     style) that strictly reduce the weight of cut links, a link's weight
//     being the number of functions whose scope holds both variables; at
//     most 20 passes. Swaps keep the sizes, so balance is exact.
func Partition(p *Problem, n int) error {
	nv := len(p.Variables)
	if n <= 0 {
		return fmt.Errorf("partition into %d agents: the number of agents must be at least 1", n)
	}
	if n > nv {
		return fmt.Errorf("partition into %d agents: the problem has only %d variables", n, nv)
	}
	w := make([]map[int]int, nv)
	for i := range w {
		w[i] = map[int]int{}
	}
	for _, f := range p.Functions {
		for i, u := range f.Scope {
			for _, v := range f.Scope[i+1:] {
				w[u][v]++
				w[v][u]++
			}
		}
	}
	part := make([]int, nv)
	for i := range part {
		part[i] = -1
	}
	sizes := make([]int, n)
	for a := range n {
		sizes[a] = nv / n
		if a < nv%n {
			sizes[a]++
		}
	}
	links := make([]int, nv) // links into the region being grown
	dist := make([]int, nv)  // hops from the region's seed
	for a := range n {
		clear(links)
		frontier := map[int]bool{}
		for taken := 0; taken < sizes[a]; taken++ {
			best := -1
			for v := range frontier {
				if best == -1 || links[v] > links[best] ||
					(links[v] == links[best] && (dist[v] < dist[best] || (dist[v] == dist[best] && v < best))) {
					best = v
				}
			}
			if best == -1 {
				best = seed(part, w)
				hops(best, part, w, dist)
			}
			delete(frontier, best)
			part[best] = a
			for u, c := range w[best] {
				if part[u] == -1 {
					links[u] += c
					frontier[u] = true
				}
			}
		}
	}
	refine(part, w, n)
	p.Agents = make([]Agent, n)
	for a := range n {
		p.Agents[a] = Agent{Name: fmt.Sprintf("a%d", a)}
	}
	for v := range p.Variables {
		p.Variables[v].Agent = part[v]
	}
	return nil
}

// seed returns the unassigned variable with the fewest unassigned
// neighbours, lowest index first.
func seed(part []int, w []map[int]int) int {
	best, bestDeg := -1, 0
	for v, a := range part {
		if a != -1 {
			continue
		}
		deg := 0
		for u := range w[v] {
			if part[u] == -1 {
				deg++
			}
		}
		if best == -1 || deg < bestDeg {
			best, bestDeg = v, deg
		}
	}
	return best
}

// hops writes into dist the number of links between s and every unassigned
// variable (breadth-first), so that regions grow compact, layer by layer.
func hops(s int, part []int, w []map[int]int, dist []int) {
	for i := range dist {
		dist[i] = len(dist)
	}
	dist[s] = 0
	queue := []int{s}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, u := range sortedKeys(w[v]) {
			if part[u] == -1 && dist[u] == len(dist) {
				dist[u] = dist[v] + 1
				queue = append(queue, u)
			}
		}
	}
}

// refine swaps pairs of variables between agents while that strictly lowers
// the cut weight.
func refine(part []int, w []map[int]int, n int) {
	nv := len(part)
	// gainTo is what moving v into agent a saves in cut weight.
	gainTo := func(v, a int) int {
		s := 0
		for u, c := range w[v] {
			if part[u] == a {
				s += c
			} else if part[u] == part[v] {
				s -= c
			}
		}
		return s
	}
	order := make([]int, nv)
	for i := range order {
		order[i] = i
	}
	for range 20 {
		improved := false
		for _, u := range order {
			for _, v := range sortedKeys(w[u]) {
				if part[u] == part[v] {
					continue
				}
				pu, pv := part[u], part[v]
				g := gainTo(u, pv) + gainTo(v, pu) - 2*w[u][v]
				if g > 0 {
					part[u], part[v] = pv, pu
					improved = true
				}
			}
			// Swaps with non-neighbours in a neighbouring agent; quadratic,
			// so only on problems small enough for it to stay cheap.
			if nv > 2000 {
				continue
			}
			for a := range n {
				if a == part[u] || gainTo(u, a) <= 0 {
					continue
				}
				for v := range nv {
					if part[v] != a {
						continue
					}
					g := gainTo(u, a) + gainTo(v, part[u]) - 2*w[u][v]
					if g > 0 {
						part[u], part[v] = a, part[u]
						improved = true
						break
					}
				}
			}
		}
		if !improved {
			return
		}
	}
}

func sortedKeys(m map[int]int) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// CutWeight returns the number of (function, variable pair) links whose two
// variables belong to different agents; Partition tries to keep it small.
func (p *Problem) CutWeight() int {
	cut := 0
	for _, f := range p.Functions {
		for i, u := range f.Scope {
			for _, v := range f.Scope[i+1:] {
				if p.Variables[u].Agent != p.Variables[v].Agent {
					cut++
				}
			}
		}
	}
	return cut
}
