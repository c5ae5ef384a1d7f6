package gen

import (
	"math/rand/v2"
	"slices"
)

// graph is an undirected simple graph over variables, kept as sorted
// adjacency lists with an edge set for constant-time tests, in the order
// edges were added (so that everything built from it is deterministic).
type graph struct {
	adj   [][]int
	set   map[edge]bool
	edges []edge
}

func newGraph(n int) *graph {
	return &graph{adj: make([][]int, n), set: map[edge]bool{}}
}

func (g *graph) has(u, v int) bool { return g.set[newEdge(u, v)] }

// add adds the edge {u, v} unless it is a loop or already there.
func (g *graph) add(u, v int) {
	e := newEdge(u, v)
	if u == v || g.set[e] {
		return
	}
	g.set[e] = true
	g.edges = append(g.edges, e)
	for _, x := range [2][2]int{{u, v}, {v, u}} {
		a := g.adj[x[0]]
		i, _ := slices.BinarySearch(a, x[1])
		g.adj[x[0]] = slices.Insert(a, i, x[1])
	}
}

// cliqueCover partitions the edges into cliques, each the scope of one
// function (sorted), as RandomOptions.MaxArity describes: for k from
// maxArity down to 3, the nodes are visited in random order and each takes
// k-cliques of uncovered edges through itself while it has any; the
// uncovered edges left are returned as pairs, in the order they were added.
func (g *graph) cliqueCover(r *rand.Rand, maxArity int) [][]int {
	// free[v] lists, sorted, the neighbours of v across uncovered edges.
	free := make([][]int, len(g.adj))
	for v, a := range g.adj {
		free[v] = slices.Clone(a)
	}
	isFree := func(u, v int) bool { _, ok := slices.BinarySearch(free[u], v); return ok }
	cover := func(u, v int) {
		for _, x := range [2][2]int{{u, v}, {v, u}} {
			if i, ok := slices.BinarySearch(free[x[0]], x[1]); ok {
				free[x[0]] = slices.Delete(free[x[0]], i, i+1)
			}
		}
	}
	var out [][]int
	for k := maxArity; k >= 3; k-- {
		for _, v := range r.Perm(len(g.adj)) {
			for {
				c := findClique(v, k, free[v], isFree)
				if c == nil {
					break
				}
				for i, a := range c {
					for _, b := range c[i+1:] {
						cover(a, b)
					}
				}
				slices.Sort(c)
				out = append(out, c)
			}
		}
	}
	for _, e := range g.edges {
		if isFree(e.u, e.v) {
			out = append(out, []int{e.u, e.v})
		}
	}
	return out
}

// findClique returns a k-clique containing v whose other members are
// among cand (v's neighbours, in increasing order) and whose edges are all
// free, found by depth-first search, or nil.
func findClique(v, k int, cand []int, free func(u, v int) bool) []int {
	clique := []int{v}
	var grow func(from int) bool
	grow = func(from int) bool {
		if len(clique) == k {
			return true
		}
		for i := from; i <= len(cand)-(k-len(clique)); i++ {
			u := cand[i]
			ok := true
			for _, w := range clique[1:] {
				if !free(w, u) {
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			clique = append(clique, u)
			if grow(i + 1) {
				return true
			}
			clique = clique[:len(clique)-1]
		}
		return false
	}
	if grow(0) {
		return slices.Clone(clique)
	}
	return nil
}
