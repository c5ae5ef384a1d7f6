package local

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
)

// pseudoTree is a pseudo-tree of the interior variables of a local problem
// with the boundary fixed, built from an elimination order: the parent of
// a variable is the first variable eliminated after it among its
// neighbours in the induced graph. Every function's variables then lie on
// one root-to-leaf path, so that the subproblems below the children of a
// node are independent once the path to it is assigned: the AND/OR search
// space of Marinescu and Dechter.
//
// Variables are local indices (lp.NB and up); the slices are indexed by
// local index too, boundary entries unused.
type pseudoTree struct {
	order []int // elimination order: leaves first
	pos   []int // pos[v] = place of v in order
	// parent[v] is v's parent, or -1 for a root.
	parent []int
	// ctx[v] is v's context: its later neighbours in the induced graph,
	// the ancestors on which the subproblem below v depends. A search
	// node's value depends on the path only through them.
	ctx [][]int
	// children[v] and roots in the order search visits them.
	children [][]int
	roots    []int
	// depth[v]: roots have depth 0.
	depth []int
	// subtree[v] is v and its descendants in preorder.
	subtree [][]int
	// width is the induced width of order: the largest context.
	width int
}

// newPseudoTree builds the pseudo-tree of order over the graph whose
// cliques are scopes (local indices; boundary variables, below nb, are
// ignored) on nvars local variables.
func newPseudoTree(nvars, nb int, scopes [][]int, order []int) *pseudoTree {
	pt := &pseudoTree{
		order:    order,
		pos:      make([]int, nvars),
		parent:   make([]int, nvars),
		ctx:      make([][]int, nvars),
		children: make([][]int, nvars),
		depth:    make([]int, nvars),
		subtree:  make([][]int, nvars),
	}
	for i, v := range order {
		pt.pos[v] = i
	}
	// Later neighbours in the primal graph, each once.
	later := make([][]int, nvars)
	stamp := make([]int, nvars)
	for i := range stamp {
		stamp[i] = -1
	}
	for _, sc := range scopes {
		for _, u := range sc {
			if u < nb {
				continue
			}
			for _, w := range sc {
				if w >= nb && pt.pos[w] > pt.pos[u] {
					later[u] = append(later[u], w)
				}
			}
		}
	}
	// The context of v in the induced graph is its later neighbours with
	// the contexts of its children, less v: eliminating a child connects
	// its whole context, and nothing else reaches v's later neighbours.
	// The contexts share one array (a slice of it each, capped), as the
	// subtrees do below: a tree is built for each of bestPseudoTree's
	// tries, and its many small slices were most of the building.
	kids := make([][]int, nvars)
	var arena []int
	for _, v := range order {
		start := len(arena)
		add := func(u int) {
			if u != v && stamp[u] != v {
				stamp[u] = v
				arena = append(arena, u)
			}
		}
		for _, u := range later[v] {
			add(u)
		}
		for _, k := range kids[v] {
			for _, u := range pt.ctx[k] {
				add(u)
			}
		}
		c := arena[start:len(arena):len(arena)]
		// Context in elimination order: the parent first.
		slices.SortFunc(c, func(a, b int) int { return pt.pos[a] - pt.pos[b] })
		pt.ctx[v] = c
		pt.width = max(pt.width, len(c))
		pt.parent[v] = -1
		if len(c) > 0 {
			pt.parent[v] = c[0]
			kids[c[0]] = append(kids[c[0]], v)
		}
	}
	// Children in reverse elimination order, so that search visits them in
	// the order min-fill would have eliminated them last to first.
	for i := len(order) - 1; i >= 0; i-- {
		v := order[i]
		if p := pt.parent[v]; p >= 0 {
			pt.children[p] = append(pt.children[p], v)
			pt.depth[v] = pt.depth[p] + 1
		} else {
			pt.roots = append(pt.roots, v)
		}
	}
	// Subtrees: the forest's preorder (roots and children in search
	// order) holds each node's as the run from the node on, its size
	// long.
	size := make([]int, nvars)
	for _, v := range order { // leaves first
		size[v]++
		if p := pt.parent[v]; p >= 0 {
			size[p] += size[v]
		}
	}
	pre := make([]int, 0, len(order))
	stack := make([]int, 0, len(order))
	for i := len(pt.roots) - 1; i >= 0; i-- {
		stack = append(stack, pt.roots[i])
	}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		at := len(pre)
		pre = append(pre, v)
		pt.subtree[v] = pre[at : at+size[v] : at+size[v]]
		ch := pt.children[v]
		for i := len(ch) - 1; i >= 0; i-- {
			stack = append(stack, ch[i])
		}
	}
	return pt
}

// deepest returns the variable of vars (local indices, boundary ones
// ignored) eliminated first, the deepest in the pseudo-tree, or -1 when
// vars has no interior variable.
func (pt *pseudoTree) deepest(vars []int, nb int) int {
	best := -1
	for _, v := range vars {
		if v >= nb && (best < 0 || pt.pos[v] < pt.pos[best]) {
			best = v
		}
	}
	return best
}

// height returns the number of variables on the longest root-to-leaf path.
func (pt *pseudoTree) height() int {
	h := 0
	for _, v := range pt.order {
		h = max(h, pt.depth[v]+1)
	}
	return h
}

// space returns the size of the context-minimal AND/OR search space of
// the tree (Marinescu and Dechter): the sum over variables of their
// domain times their context's assignments, a float so that no tree
// overflows. Notes print it: where domains differ (an SHDS home:
// actions of 2 or 3 values, progress counters of up to 182) the induced
// width says little of the search.
func (pt *pseudoTree) space(doms []int) float64 {
	total := 0.0
	for _, v := range pt.order {
		n := float64(doms[v])
		for _, u := range pt.ctx[v] {
			n *= float64(doms[u])
		}
		total += n
	}
	if math.IsInf(total, 0) {
		return math.MaxFloat64
	}
	return total
}

// raceTrees returns up to raceMax-1 pseudo-trees other than first
// (bestPseudoTree's) for a one-row race (see AOBB.race): the best
// (treeBetter) of orderTries orders of each rule other than min-fill,
// then min-fill orders with other random ties; none is a duplicate. The others differ in rule rather
// than in width: AOBB's time on trees of one width differs by orders of
// magnitude, and no measure of the tree taken before the search predicted
// it (docs/DESIGN.md).
func raceTrees(nv int, doms []int, scopes [][]int, interior []int, first *pseudoTree) []*pseudoTree {
	out := []*pseudoTree{first}
	add := func(pt *pseudoTree) {
		if len(out) < raceMax && !slices.ContainsFunc(out, func(q *pseudoTree) bool { return slices.Equal(q.order, pt.order) }) {
			out = append(out, pt)
		}
	}
	tries := orderTries(len(interior))
	for _, r := range []orderRule{ruleMinDegree, ruleMinWeight, ruleWeightedFill} {
		var best *pseudoTree
		for _, c := range pseudoTreeCandidates(nv, 0, doms, scopes, interior, r, tries) {
			if best == nil || treeBetter(c.pt, best) {
				best = c.pt
			}
		}
		add(best)
	}
	for seed := 1; len(out) < raceMax && seed <= raceMax; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 1<<32))
		add(newPseudoTree(nv, 0, scopes, greedyOrder(nv, scopes, doms, interior, ruleMinFill, rng)))
	}
	return out[1:]
}

// raceMax is the most trees a one-row race runs.
const raceMax = 6

// orderTries returns the orders tried per rule for n interior variables:
// three up to about 300 variables, then one. An order of a 132-variable
// SHDS home costs about 1 ms.
func orderTries(n int) int {
	return min(3, max(1, orderWork/max(n*n, 1)))
}

const orderWork = 1 << 18

// treeBetter reports whether a is the better tree to search than b: the
// smaller induced width, then the smaller height.
func treeBetter(a, b *pseudoTree) bool {
	if a.width != b.width {
		return a.width < b.width
	}
	return a.height() < b.height()
}

// bestTries is how many min-fill orders bestPseudoTree compares: the
// plain one and bestTries-1 with ties broken at random (seeded, so the
// choice is deterministic). Min-fill ties are everywhere on grids, and
// widths of one instance differ by several between them. Past
// bestTriesVars interior variables the tries shrink in proportion (down
// to the plain order alone): min-fill is quadratic, and on a 900-variable
// grid each order took 0.14 s of planning.
const (
	bestTries     = 8
	bestTriesVars = 128
)

// bestPseudoTree returns the pseudo-tree of the min-fill order (ties
// broken at random, up to bestTries times) with the smallest induced
// width, then the smallest depth.
func bestPseudoTree(nv, nb int, scopes [][]int, interior []int) *pseudoTree {
	return bestPseudoTreeFrom(nv, nb, scopes, interior, nil)
}

// bestPseudoTreeFrom is bestPseudoTree with the plain min-fill order
// given when first is not nil: auto's sizing of bucket elimination
// found it already (AOBBOptions.order), over the same graph.
func bestPseudoTreeFrom(nv, nb int, scopes [][]int, interior, first []int) *pseudoTree {
	bestOrder := first
	if bestOrder == nil {
		g := mva.NewGraph(nv)
		for _, sc := range scopes {
			g.AddClique(sc)
		}
		bestOrder, _ = g.MinFill(interior)
	}
	var sh treeShaper
	bestWidth, bestDepth := sh.shape(nv, nb, scopes, bestOrder)
	rng := rand.New(rand.NewPCG(1, uint64(nv)))
	tries := bestTries
	if n := len(interior); n > bestTriesVars {
		tries = max(1, bestTries*bestTriesVars/n)
	}
	perm := make([]int, nv)
	inv := make([]int, nv)
	elim := make([]int, len(interior))
	var m []int
	for range tries - 1 {
		// MinFill breaks ties by the lowest index: relabel at random.
		for v, p := range rng.Perm(nv) {
			perm[v] = p
			inv[p] = v
		}
		gp := mva.NewGraph(nv)
		for _, sc := range scopes {
			m = m[:0]
			for _, v := range sc {
				m = append(m, perm[v])
			}
			gp.AddClique(m)
		}
		for k, v := range interior {
			elim[k] = perm[v]
		}
		po, w := gp.MinFill(elim)
		if w > bestWidth {
			continue
		}
		for k, p := range po {
			po[k] = inv[p]
		}
		// Only the winner's tree is built: a try needs its width and
		// height alone (treeShaper), and building every try's tree was
		// a third of the tries' time and most of their allocation.
		if w, d := sh.shape(nv, nb, scopes, po); w < bestWidth || d < bestDepth {
			bestOrder, bestWidth, bestDepth = po, w, d
		}
	}
	return newPseudoTree(nv, nb, scopes, bestOrder)
}

// treeShaper computes the induced width and the height of the
// pseudo-tree of an order (newPseudoTree's width and height()) without
// building it, in buffers kept across calls: bit sets over the order's
// places, so that a variable's context is its later neighbours' set
// united with its children's contexts, and its parent the context's
// first place.
type treeShaper struct {
	pos   []int
	ctx   []uint64 // per place, the context's places
	depth []int
}

// shape returns the width and height of newPseudoTree(nv, nb, scopes,
// order).
func (sh *treeShaper) shape(nv, nb int, scopes [][]int, order []int) (width, height int) {
	n := len(order)
	words := (n + 63) / 64
	if len(sh.pos) < nv {
		sh.pos = make([]int, nv)
	}
	if len(sh.ctx) < n*words {
		sh.ctx = make([]uint64, n*words)
	}
	if len(sh.depth) < n {
		sh.depth = make([]int, n)
	}
	pos, ctx, depth := sh.pos[:nv], sh.ctx[:n*words], sh.depth[:n]
	clear(ctx)
	for i, v := range order {
		pos[v] = i
	}
	for _, sc := range scopes {
		for _, u := range sc {
			if u < nb {
				continue
			}
			row := ctx[pos[u]*words : (pos[u]+1)*words]
			for _, w := range sc {
				if w >= nb && pos[w] > pos[u] {
					row[pos[w]/64] |= 1 << (pos[w] % 64)
				}
			}
		}
	}
	parent := func(i int) int {
		for k, x := range ctx[i*words : (i+1)*words] {
			if x != 0 {
				return k*64 + bits.TrailingZeros64(x)
			}
		}
		return -1
	}
	for i := range n { // leaves first: a child's context is complete
		row := ctx[i*words : (i+1)*words]
		c := 0
		for _, x := range row {
			c += bits.OnesCount64(x)
		}
		width = max(width, c)
		if p := parent(i); p >= 0 {
			prow := ctx[p*words : (p+1)*words]
			for k, x := range row {
				prow[k] |= x
			}
			prow[p/64] &^= 1 << (p % 64)
		}
	}
	for i := n - 1; i >= 0; i-- { // roots first
		depth[i] = 0
		if p := parent(i); p >= 0 {
			depth[i] = depth[p] + 1
		}
		height = max(height, depth[i]+1)
	}
	return width, height
}
