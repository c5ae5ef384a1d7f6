package mva

import "slices"

// Graph is an undirected primal graph over n vertices: two vertices are
// adjacent when some function's scope holds both.
type Graph struct {
	Adj []map[int]bool
}

// NewGraph returns a graph with n vertices and no edges.
func NewGraph(n int) *Graph {
	g := &Graph{Adj: make([]map[int]bool, n)}
	for i := range g.Adj {
		g.Adj[i] = map[int]bool{}
	}
	return g
}

// AddClique connects every pair of vertices in vs.
func (g *Graph) AddClique(vs []int) {
	for i, u := range vs {
		for _, v := range vs[i+1:] {
			if u != v {
				g.Adj[u][v] = true
				g.Adj[v][u] = true
			}
		}
	}
}

// PrimalGraph returns the primal graph of a local problem over its local
// indices.
func (lp *LocalProblem) PrimalGraph() *Graph {
	g := NewGraph(len(lp.Vars))
	for _, f := range lp.Funcs {
		g.AddClique(f.Scope)
	}
	return g
}

// PrimalGraph returns the primal graph of the whole problem.
func (p *Problem) PrimalGraph() *Graph {
	g := NewGraph(len(p.Variables))
	for _, f := range p.Functions {
		g.AddClique(f.Scope)
	}
	return g
}

// MinFill returns an elimination order of the vertices in elim using the
// min-fill heuristic (ties broken by smaller degree, then lower index, so
// the order is deterministic), and the induced width of that order: the
// largest number of neighbours a vertex has when it is eliminated. Vertices
// outside elim are never eliminated but do count as neighbours; that is how
// an MVA table keeps its boundary variables. g is not modified.
func (g *Graph) MinFill(elim []int) (order []int, width int) {
	adj := make([]map[int]bool, len(g.Adj))
	for i, a := range g.Adj {
		adj[i] = make(map[int]bool, len(a))
		for v := range a {
			adj[i][v] = true
		}
	}
	left := make(map[int]bool, len(elim))
	for _, v := range elim {
		left[v] = true
	}
	nb := make([]int, 0, 16)
	for len(left) > 0 {
		best, bestFill, bestDeg := -1, 0, 0
		for v := range left {
			fill := 0
			nb = nb[:0]
			for u := range adj[v] {
				nb = append(nb, u)
			}
			for i, a := range nb {
				for _, b := range nb[i+1:] {
					if !adj[a][b] {
						fill++
					}
				}
			}
			deg := len(nb)
			if best == -1 || fill < bestFill || (fill == bestFill && (deg < bestDeg || (deg == bestDeg && v < best))) {
				best, bestFill, bestDeg = v, fill, deg
			}
		}
		nb = nb[:0]
		for u := range adj[best] {
			nb = append(nb, u)
		}
		slices.Sort(nb)
		width = max(width, len(nb))
		for i, a := range nb {
			for _, b := range nb[i+1:] {
				adj[a][b] = true
				adj[b][a] = true
			}
			delete(adj[a], best)
		}
		adj[best] = nil
		delete(left, best)
		order = append(order, best)
	}
	return order, width
}
