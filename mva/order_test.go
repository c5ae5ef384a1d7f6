package mva_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
)

// refGraph is the map-based primal graph that mva.Graph used before it was
// rewritten on bitsets. It is kept, unoptimised, as the reference the
// bitset MinFill must reproduce order for order.
type refGraph []map[int]bool

func newRefGraph(n int) refGraph {
	g := make(refGraph, n)
	for i := range g {
		g[i] = map[int]bool{}
	}
	return g
}

func (g refGraph) addClique(vs []int) {
	for i, u := range vs {
		for _, v := range vs[i+1:] {
			if u != v {
				g[u][v] = true
				g[v][u] = true
			}
		}
	}
}

// minFill is the former mva.Graph.MinFill, verbatim but for the receiver:
// min fill, then smaller degree, then lower index.
func (g refGraph) minFill(elim []int) (order []int, width int) {
	adj := make([]map[int]bool, len(g))
	for i, a := range g {
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

// randomCliques draws m cliques of size 1..maxK over n vertices; repeated
// vertices within a clique are allowed, as AddClique must ignore them.
func randomCliques(r *rand.Rand, n, m, maxK int) [][]int {
	cs := make([][]int, m)
	for i := range cs {
		k := 1 + r.IntN(maxK)
		for range k {
			cs[i] = append(cs[i], r.IntN(n))
		}
	}
	return cs
}

// TestMinFillMatchesReference checks the bitset MinFill against the
// map-based reference on seeded random graphs of every density, from
// empty to complete, with elimination sets ranging from nothing to every
// vertex (in shuffled order and with repeats), and across the 64-vertex
// word boundary.
func TestMinFillMatchesReference(t *testing.T) {
	sizes := []int{0, 1, 2, 5, 13, 40, 63, 64, 65, 130}
	for _, n := range sizes {
		for seed := range uint64(60) {
			r := rand.New(rand.NewPCG(seed, uint64(n)))
			maxK := 1 + r.IntN(min(n, 8)+1)
			m := r.IntN(2*n + 1)
			cliques := randomCliques(r, n, m, maxK)
			g, ref := mva.NewGraph(n), newRefGraph(n)
			for _, c := range cliques {
				g.AddClique(c)
				if n > 0 {
					ref.addClique(c)
				}
			}
			var elim []int
			switch seed % 3 {
			case 0: // everything, shuffled
				elim = r.Perm(n)
			case 1: // a random subset, the rest kept as a boundary
				for v := range n {
					if r.IntN(3) > 0 {
						elim = append(elim, v)
					}
				}
			case 2: // a random multiset
				for range r.IntN(n + 1) {
					elim = append(elim, r.IntN(n))
				}
			}
			wantOrder, wantWidth := ref.minFill(elim)
			before := g.Clone()
			order, width := g.MinFill(elim)
			if !slices.Equal(order, wantOrder) || width != wantWidth {
				t.Fatalf("n=%d seed=%d: order %v width %d, reference %v width %d",
					n, seed, order, width, wantOrder, wantWidth)
			}
			if !g.Equal(before) {
				t.Fatalf("n=%d seed=%d: MinFill modified the graph", n, seed)
			}
			for u := range n {
				for v := range n {
					if g.Adjacent(u, v) != ref[u][v] {
						t.Fatalf("n=%d seed=%d: Adjacent(%d, %d) = %v, reference %v", n, seed, u, v, g.Adjacent(u, v), ref[u][v])
					}
				}
			}
		}
	}
}

// TestMinFillPrimalGraphsMatchReference runs the comparison on the
// primal graphs of the random problems the solvers are benchmarked on.
func TestMinFillPrimalGraphsMatchReference(t *testing.T) {
	for seed := range int64(40) {
		p := randprob.New(seed, randprob.Options{
			Agents: 1 + int(seed%4), Vars: 10 + int(seed%50), MinDomain: 2, MaxDomain: 3,
			MaxArity: 2 + int(seed%5), Functions: 10 + int(seed%80), Locality: 0.6,
		})
		ref := newRefGraph(len(p.Variables))
		for _, f := range p.Functions {
			ref.addClique(f.Scope)
		}
		all := make([]int, len(p.Variables))
		for i := range all {
			all[i] = i
		}
		wantOrder, wantWidth := ref.minFill(all)
		order, width := p.PrimalGraph().MinFill(all)
		if !slices.Equal(order, wantOrder) || width != wantWidth {
			t.Fatalf("seed %d: order %v width %d, reference %v width %d", seed, order, width, wantOrder, wantWidth)
		}
	}
}

func TestGraphIgnoresOutOfRange(t *testing.T) {
	g := mva.NewGraph(3)
	g.AddClique([]int{0, 5, -1, 2})
	if !g.Adjacent(0, 2) || g.Adjacent(0, 1) || g.Adjacent(0, 5) || g.Adjacent(-1, 0) {
		t.Fatal("out-of-range vertices changed the graph")
	}
	order, width := g.MinFill([]int{7, 0, -3, 1, 2})
	if !slices.Equal(order, []int{1, 0, 2}) || width != 1 {
		t.Fatalf("MinFill = %v, %d; want [1 0 2], 1", order, width)
	}
}

// BenchmarkMinFill orders the primal graphs that bucket elimination sees:
// fabe-like whole problems (20 variables, arity up to 6) and larger sparse
// ones.
func BenchmarkMinFill(b *testing.B) {
	cases := []struct {
		name string
		o    randprob.Options
	}{
		{"fabe20", randprob.Options{Agents: 1, Vars: 20, MinDomain: 2, MaxDomain: 2, MaxArity: 6, Functions: 35}},
		{"sparse60", randprob.Options{Agents: 1, Vars: 60, MinDomain: 2, MaxDomain: 3, MaxArity: 3, Functions: 90}},
		{"sparse200", randprob.Options{Agents: 1, Vars: 200, MinDomain: 2, MaxDomain: 2, MaxArity: 3, Functions: 260}},
	}
	for _, c := range cases {
		var gs []*mva.Graph
		for seed := range int64(8) {
			gs = append(gs, randprob.New(seed, c.o).PrimalGraph())
		}
		all := make([]int, c.o.Vars)
		for i := range all {
			all[i] = i
		}
		b.Run(c.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				gs[i%len(gs)].MinFill(all)
				i++
			}
		})
	}
}

func ExampleGraph_MinFill() {
	// A 4-cycle 0-1-2-3-0 with a pendant vertex 4 on 0: the pendant goes
	// first (no fill), then each remaining vertex of the cycle needs one
	// fill edge or none.
	g := mva.NewGraph(5)
	for _, e := range [][]int{{0, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 4}} {
		g.AddClique(e)
	}
	fmt.Println(g.MinFill([]int{0, 1, 2, 3, 4}))
	// Output: [4 0 1 2 3] 2
}

// refSizes replays order on the reference graph and returns, step by
// step, the width so far, the table entries (product of doms over the
// eliminated vertex's neighbours) so far and the AND/OR search space
// (doms of the vertex times that product) so far.
func (g refGraph) refSizes(order, doms []int) (widths []int, entries, space []float64) {
	adj := make([]map[int]bool, len(g))
	for i, a := range g {
		adj[i] = make(map[int]bool, len(a))
		for v := range a {
			adj[i][v] = true
		}
	}
	w, e, s := 0, 0.0, 0.0
	for _, v := range order {
		nb := slices.Sorted(func(yield func(int) bool) {
			for u := range adj[v] {
				if !yield(u) {
					return
				}
			}
		})
		t := 1.0
		for _, u := range nb {
			t *= float64(doms[u])
		}
		w, e, s = max(w, len(nb)), e+t, s+float64(doms[v])*t
		widths, entries, space = append(widths, w), append(entries, e), append(space, s)
		for i, a := range nb {
			for _, b := range nb[i+1:] {
				adj[a][b], adj[b][a] = true, true
			}
			delete(adj[a], v)
		}
		adj[v] = nil
	}
	return widths, entries, space
}

// TestMinFillSizedMatchesReference checks MinFillSized on the reference
// graph's min-fill order: the width and entries where the entries first
// pass maxEntries (else the whole order's), and the search space at the
// step it reaches maxSpace, or the whole order's, for limits from none
// to past everything.
func TestMinFillSizedMatchesReference(t *testing.T) {
	for _, n := range []int{5, 40, 65, 130} {
		for seed := range uint64(30) {
			r := rand.New(rand.NewPCG(seed, uint64(n)+7))
			g, ref := mva.NewGraph(n), newRefGraph(n)
			for _, c := range randomCliques(r, n, r.IntN(2*n+1), 1+r.IntN(5)) {
				g.AddClique(c)
				ref.addClique(c)
			}
			doms := make([]int, n)
			for i := range doms {
				doms[i] = 2 + r.IntN(3)
			}
			elim := r.Perm(n)
			order, _ := ref.minFill(elim)
			widths, entries, space := ref.refSizes(order, doms)
			last := len(order) - 1
			for _, lim := range [][2]float64{{0, 0}, {entries[last] / 3, 0}, {entries[last] / 3, space[last] / 2}, {entries[last] / 3, 2 * space[last]}, {2 * entries[last], 1}} {
				got := g.MinFillSized(elim, doms, lim[0], func() float64 { return lim[1] })
				stop := slices.IndexFunc(entries, func(e float64) bool { return e > lim[0] })
				wantW, wantE, wantDone := widths[last], entries[last], stop < 0
				if stop >= 0 {
					wantW, wantE = widths[stop], entries[stop]
				}
				k := last
				if stop >= 0 {
					k = stop
					if lim[1] > 0 {
						if s := slices.IndexFunc(space, func(s float64) bool { return s >= lim[1] }); s >= 0 {
							k = max(stop, s)
						} else {
							k = last
						}
					}
				}
				if got.Width != wantW || got.Entries != wantE || got.Done != wantDone || got.Space != space[k] || got.SpaceWhole != (k == last && (stop < 0 || lim[1] > 0 && space[last] < lim[1])) || !slices.Equal(got.Order, order[:len(got.Order)]) {
					t.Fatalf("n=%d seed=%d limits %v: %+v; want width %d entries %v done %v space %v", n, seed, lim, got, wantW, wantE, wantDone, space[k])
				}
			}
		}
	}
}
