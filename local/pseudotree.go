package local

import (
	"math"
	"slices"
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
	kids := make([][]int, nvars)
	for _, v := range order {
		var c []int
		add := func(u int) {
			if u != v && stamp[u] != v {
				stamp[u] = v
				c = append(c, u)
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
	// Subtrees, leaves first: each is the node then its children's.
	for _, v := range order {
		st := []int{v}
		for _, c := range pt.children[v] {
			st = append(st, pt.subtree[c]...)
		}
		pt.subtree[v] = st
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
