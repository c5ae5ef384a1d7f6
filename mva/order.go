package mva

import (
	"math"
	"math/bits"
)

// Graph is an undirected primal graph over n vertices: two vertices are
// adjacent when some function's scope holds both. Each vertex's neighbours
// are a row of a bit matrix, so that the set operations min-fill repeats
// (intersections, unions, counts) are word-wide rather than map look-ups;
// min-fill ran at about a fifth of bucket elimination's time on maps. The
// matrix takes n²/8 bytes (12.5 MB at 10 000 vertices); min-fill's scans
// are quadratic in n on any representation.
type Graph struct {
	n     int      // vertices
	words int      // uint64 words in a row
	rows  []uint64 // n rows of words: bit v of row u is set when u–v is an edge
}

// NewGraph returns a graph with n vertices and no edges; a negative n gives
// the empty graph.
func NewGraph(n int) *Graph {
	n = max(n, 0)
	w := (n + 63) / 64
	return &Graph{n: n, words: w, rows: make([]uint64, n*w)}
}

// Adjacent reports whether u–v is an edge; out-of-range vertices are
// adjacent to nothing.
func (g *Graph) Adjacent(u, v int) bool {
	if u < 0 || v < 0 || u >= g.n || v >= g.n {
		return false
	}
	return g.rows[u*g.words+v/64]&(1<<(v%64)) != 0
}

// AddClique connects every pair of distinct vertices in vs. Vertices out of
// range are skipped rather than trusted, so that a bad scope cannot corrupt
// another row.
func (g *Graph) AddClique(vs []int) {
	for i, u := range vs {
		if u < 0 || u >= g.n {
			continue
		}
		for _, v := range vs[i+1:] {
			if v < 0 || v >= g.n || u == v {
				continue
			}
			g.rows[u*g.words+v/64] |= 1 << (v % 64)
			g.rows[v*g.words+u/64] |= 1 << (u % 64)
		}
	}
}

// Clone returns an independent copy of g.
func (g *Graph) Clone() *Graph {
	c := *g
	c.rows = append([]uint64(nil), g.rows...)
	return &c
}

// Equal reports whether g and h have the same vertices and edges.
func (g *Graph) Equal(h *Graph) bool {
	if g.n != h.n {
		return false
	}
	for i, w := range g.rows {
		if h.rows[i] != w {
			return false
		}
	}
	return true
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
// an MVA table keeps its boundary variables. Repeats in elim count once and
// out-of-range vertices are ignored. g is not modified.
//
// Each vertex's fill (the non-adjacent pairs among its neighbours) is kept
// and recomputed only where an elimination can change it: at the
// eliminated vertex's neighbours, whose neighbourhoods change, and, when
// the elimination added fill edges (all between those neighbours), at the
// vertices adjacent to two or more of them, the only ones that may see a
// new edge between two of their own.
func (g *Graph) MinFill(elim []int) (order []int, width int) {
	r := g.minFill(elim, nil, 0, nil)
	return r.Order, r.Width
}

// MinFillWithin is MinFill that also returns the order's table entries,
// the sum over its eliminations of the product of doms (indexed like the
// vertices) over the eliminated vertex's neighbours, and stops as soon as
// they pass maxEntries, with the order and width so far and done false:
// a caller that only needs to know whether they stay within a bound (a
// solver's choice) is spared the rest, which on wide graphs (a 40×40
// grid) costs most.
func (g *Graph) MinFillWithin(elim, doms []int, maxEntries float64) (order []int, width int, entries float64, done bool) {
	r := g.minFill(elim, doms, maxEntries, nil)
	return r.Order, r.Width, r.Entries, r.Done
}

// FillSizes is what MinFillSized measures of a min-fill order.
type FillSizes struct {
	// Order, Width, Entries and Done are MinFillWithin's answers: the
	// width and entries when the entries passed maxEntries (then lower
	// bounds, Done false), else the whole order's. Order is whole when
	// Done; else it may hold more than the eliminations up to that point.
	Order   []int
	Width   int
	Entries float64
	Done    bool
	// Space is the sum over the eliminations so far of doms of the
	// eliminated vertex times the product of doms over its neighbours:
	// the context-minimal AND/OR search space of the order's pseudo-tree
	// when the order is whole (SpaceWhole), else a lower bound that has
	// reached maxSpace.
	Space      float64
	SpaceWhole bool
}

// MinFillSized is MinFillWithin that also sums the order's AND/OR search
// space (FillSizes.Space) in the same pass, going on past maxEntries
// until that space reaches maxSpace or the order is whole: a solver's
// choice that needs both (local.Choose) eliminates once instead of twice
// (on the ISCAS89 circuits the two min-fill orders were three quarters of
// a whole solve's instructions), and only as far as its rules need.
// maxSpace is called once, when the entries pass maxEntries, and not at
// all if they never do: a caller whose need of the space takes work of
// its own to know (0: none) does that work only then.
func (g *Graph) MinFillSized(elim, doms []int, maxEntries float64, maxSpace func() float64) FillSizes {
	return g.minFill(elim, doms, maxEntries, maxSpace)
}

// minFill is MinFill, MinFillWithin when doms is not nil and MinFillSized
// when maxSpace is not nil too.
func (g *Graph) minFill(elim, doms []int, maxEntries float64, maxSpace func() float64) (r FillSizes) {
	n, w := g.n, g.words
	rows := append([]uint64(nil), g.rows...)
	row := func(u int) []uint64 { return rows[u*w : (u+1)*w] }
	// left, then dirty and nb, are bit sets over the vertices.
	sets := make([]uint64, 3*w)
	left, dirty, nb := sets[:w], sets[w:2*w], sets[2*w:]
	count := 0
	for _, v := range elim {
		if v >= 0 && v < n && left[v/64]&(1<<(v%64)) == 0 {
			left[v/64] |= 1 << (v % 64)
			count++
		}
	}
	fill := make([]int, n)
	deg := make([]int, n)
	// h holds every vertex of left by (fill, degree, index), the order the
	// choice below needs, each once, moved when it is scored again: a
	// heap instead of a scan of left at every step, which made the choice
	// quadratic (a fifth of the time of a 900-variable grid's solve).
	h := fillHeap{e: make([]fillEntry, 0, count), at: make([]int32, n)}
	// score sets v's degree and fill from the current rows: fill is the
	// k(k-1)/2 pairs of its k neighbours less the edges among them. It
	// counts them the cheaper way: pair by pair with one bit test each
	// when the neighbours are few against the words their rows span (a
	// grid's frontier: a dozen neighbours over fifty words), else as the
	// sum over neighbours u of |N(u) ∩ N(v)|, which counts each edge twice.
	var nbuf []int
	score := func(v int) {
		rv := row(v)
		// Only the words from v's first neighbour to its last can
		// intersect (on sparse graphs, a few of the row's words).
		lo, hi := span(rv)
		rv = rv[lo:hi]
		k := 0
		for _, x := range rv {
			k += bits.OnesCount64(x)
		}
		edges := 0
		if k-1 < 2*(hi-lo) {
			nbuf = nbuf[:0]
			for i, x := range rv { // forEach, without a call per neighbour
				for x != 0 {
					nbuf = append(nbuf, (lo+i)*64+bits.TrailingZeros64(x))
					x &= x - 1
				}
			}
			for i, a := range nbuf {
				ra := row(a)
				for _, b := range nbuf[i+1:] {
					edges += int(ra[b/64] >> (b % 64) & 1)
				}
			}
		} else {
			// Spans of one to three words (graphs of up to 192
			// vertices: AOBB's pseudo-tree tries score their vertices
			// thousands of times) get unrolled loops. The neighbours
			// are walked in v's row itself, not listed first: listing
			// them was a tenth of the tries' time on the SHDS
			// responses.
			twice := 0
			switch len(rv) {
			case 1:
				x0 := rv[0]
				base := lo
				for x := x0; x != 0; x &= x - 1 {
					u := lo*64 + bits.TrailingZeros64(x)
					twice += bits.OnesCount64(x0 & rows[u*w+base])
				}
			case 2:
				x0, x1 := rv[0], rv[1]
				for i, x := range rv {
					for ; x != 0; x &= x - 1 {
						u := (lo+i)*64 + bits.TrailingZeros64(x)
						ru := rows[u*w+lo : u*w+lo+2]
						twice += bits.OnesCount64(x0&ru[0]) + bits.OnesCount64(x1&ru[1])
					}
				}
			case 3:
				x0, x1, x2 := rv[0], rv[1], rv[2]
				for i, x := range rv {
					for ; x != 0; x &= x - 1 {
						u := (lo+i)*64 + bits.TrailingZeros64(x)
						ru := rows[u*w+lo : u*w+lo+3]
						twice += bits.OnesCount64(x0&ru[0]) + bits.OnesCount64(x1&ru[1]) + bits.OnesCount64(x2&ru[2])
					}
				}
			default:
				for i, x := range rv {
					for ; x != 0; x &= x - 1 {
						ru := row((lo+i)*64 + bits.TrailingZeros64(x))[lo:hi]
						for j, y := range rv {
							twice += bits.OnesCount64(y & ru[j])
						}
					}
				}
			}
			edges = twice / 2
		}
		deg[v], fill[v] = k, k*(k-1)/2-edges
		h.set(fillEntry{uint64(min(fill[v], math.MaxUint32))<<32 | uint64(uint32(deg[v])), int32(v)})
	}
	forEach(left, score)

	order := make([]int, 0, count)
	width, entries, space := 0, 0.0, 0.0
	// passed: the entries passed maxEntries, r then holding the width
	// and entries at that step.
	passed, spaceMax := false, 0.0
	for range count {
		// The least fill, then degree, then index (the lowest index wins
		// ties of fill and degree).
		best := int(h.pop().v)
		rb := row(best)
		copy(nb, rb)
		width = max(width, deg[best])
		if doms != nil {
			t := 1.0
			forEach(nb, func(u int) { t *= float64(doms[u]) })
			entries += t
			space += float64(doms[best]) * t
			if !passed && entries > maxEntries {
				passed = true
				r = FillSizes{Width: width, Entries: entries}
				if maxSpace != nil {
					spaceMax = maxSpace()
				}
			}
			if passed && (spaceMax <= 0 || space >= spaceMax) {
				r.Order, r.Space = append(order, best), space
				return r
			}
		}
		bw, bb := best/64, uint64(1)<<(best%64)
		// Every word loop runs over the words the rows span only.
		nlo, nhi := span(nb)
		// A vertex v outside nb keeps its neighbours; its fill loses one
		// for each fill edge a–b (a pair of nb not yet adjacent) with a
		// and b both its neighbours: it is counted down here, from the
		// rows before the edges are added, rather than scored again
		// (rescoring every vertex adjacent to two or more of nb was
		// three quarters of Choose's time on the ISCAS89 circuits, whose
		// gates make most vertices such).
		clear(dirty)
		dlo, dhi := w, 0
		if fill[best] > 0 {
			left[bw] &^= bb // best is a common neighbour of every pair
			forEach(nb[nlo:nhi], func(a int) {
				a += nlo * 64
				ra := row(a)
				lo, hi := span(ra)
				for i := a / 64; i < nhi; i++ {
					miss := nb[i] &^ ra[i]
					if i == a/64 {
						miss &= ^uint64(0) << (a%64 + 1) // b > a
					}
					for miss != 0 {
						b := i*64 + bits.TrailingZeros64(miss)
						miss &= miss - 1
						rb := row(b)
						for k := lo; k < hi; k++ {
							c := ra[k] & rb[k] & left[k] &^ nb[k]
							if c == 0 {
								continue
							}
							dirty[k] |= c
							dlo, dhi = min(dlo, k), max(dhi, k+1)
							for c != 0 {
								fill[k*64+bits.TrailingZeros64(c)]--
								c &= c - 1
							}
						}
					}
				}
			})
		}
		forEach(nb[nlo:nhi], func(a int) {
			a += nlo * 64
			ra := row(a)
			aw, ab := a/64, uint64(1)<<(a%64)
			for i := nlo; i < nhi; i++ {
				ra[i] |= nb[i]
			}
			ra[aw] &^= ab
			ra[bw] &^= bb
		})
		clear(rb)
		left[bw] &^= bb
		for i := nlo; i < nhi; i++ {
			nb[i] &= left[i]
		}
		if fill[best] == 0 {
			// best was simplicial: its neighbours form a clique and no
			// edge was added, so a neighbour v only loses best, and
			// with it the pairs (best, u) for its neighbours u outside
			// that clique: deg[v]-k of them (k = best's degree; v is
			// adjacent to the k-1 others). Counted, not scored again:
			// on the SHDS responses most eliminations are of such
			// vertices, and scoring them was half of min-fill.
			k := deg[best]
			forEach(nb[nlo:nhi], func(v int) {
				v += nlo * 64
				fill[v] -= deg[v] - k
				deg[v]--
				h.set(fillEntry{uint64(min(fill[v], math.MaxUint32))<<32 | uint64(uint32(deg[v])), int32(v)})
			})
		} else {
			forEach(nb[nlo:nhi], func(v int) { score(v + nlo*64) })
		}
		if dlo < dhi {
			forEach(dirty[dlo:dhi], func(v int) {
				v += dlo * 64
				h.set(fillEntry{uint64(min(fill[v], math.MaxUint32))<<32 | uint64(uint32(deg[v])), int32(v)})
			})
		}
		order = append(order, best)
	}
	if !passed {
		r = FillSizes{Width: width, Entries: entries, Done: true}
	}
	r.Order, r.Space, r.SpaceWhole = order, space, true
	return r
}

// fillEntry is a vertex's fill and degree when it was scored, packed
// into one key (fill in the high half, so that one comparison orders by
// fill, then degree), and its index. A fill past 2^32-1 (a vertex with
// over 92 000 neighbours, whose graph alone takes a gigabyte) counts as
// 2^32-1. Half the size of three ints, the heap's moves and comparisons
// cost less.
type fillEntry struct {
	key uint64
	v   int32
}

func (a fillEntry) less(b fillEntry) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return a.v < b.v
}

// fillHeap is a binary min-heap of fillEntry holding each vertex at most
// once: at[v] is 1 + v's place in e, 0 when v is not in it.
type fillHeap struct {
	e  []fillEntry
	at []int32
}

// set puts e in the heap, replacing e.v's entry if it has one.
func (h *fillHeap) set(e fillEntry) {
	i := int(h.at[e.v]) - 1
	if i < 0 {
		h.e = append(h.e, e)
		h.up(len(h.e) - 1)
		return
	}
	old := h.e[i]
	h.e[i] = e
	if e.less(old) {
		h.up(i)
	} else {
		h.down(i)
	}
}

// pop removes and returns the least entry; the heap must not be empty.
func (h *fillHeap) pop() fillEntry {
	top := h.e[0]
	h.at[top.v] = 0
	last := len(h.e) - 1
	if last > 0 {
		h.e[0] = h.e[last]
		h.e = h.e[:last]
		h.down(0)
	} else {
		h.e = h.e[:0]
	}
	return top
}

// up moves the entry at i towards the root to its place.
func (h *fillHeap) up(i int) {
	e := h.e[i]
	for i > 0 {
		p := (i - 1) / 2
		if !e.less(h.e[p]) {
			break
		}
		h.e[i] = h.e[p]
		h.at[h.e[i].v] = int32(i + 1)
		i = p
	}
	h.e[i] = e
	h.at[e.v] = int32(i + 1)
}

// down moves the entry at i towards the leaves to its place.
func (h *fillHeap) down(i int) {
	e := h.e[i]
	n := len(h.e)
	for {
		m := 2*i + 1
		if m >= n {
			break
		}
		if r := m + 1; r < n && h.e[r].less(h.e[m]) {
			m = r
		}
		if !h.e[m].less(e) {
			break
		}
		h.e[i] = h.e[m]
		h.at[h.e[i].v] = int32(i + 1)
		i = m
	}
	h.e[i] = e
	h.at[e.v] = int32(i + 1)
}

// span returns the range of words of s from its first non-zero word to
// its last (lo == hi when s is all zeros).
func span(s []uint64) (lo, hi int) {
	hi = len(s)
	for lo < hi && s[lo] == 0 {
		lo++
	}
	for hi > lo && s[hi-1] == 0 {
		hi--
	}
	return lo, hi
}

// forEach calls f with the index of every set bit of s, in ascending
// order.
func forEach(s []uint64, f func(int)) {
	for i, x := range s {
		for x != 0 {
			f(i*64 + bits.TrailingZeros64(x))
			x &= x - 1
		}
	}
}
