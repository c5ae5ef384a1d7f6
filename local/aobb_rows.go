package local

import (
	"slices"

	"github.com/hearth-dcop/hearth/mva"
)

// NewAOBBAbove is NewAOBB with the interior variables above placed on top
// of the pseudo-tree, a chain in their order (above[0] the root), and the
// other interior variables below them in min-fill order.
func NewAOBBAbove(lp *mva.LocalProblem, opts AOBBOptions, above []int) *AOBB {
	return newAOBB(lp, opts, func(nv, nb int, doms []int, scopes [][]int, interior []int) []*pseudoTree {
		rest := slices.DeleteFunc(slices.Clone(interior), func(v int) bool { return slices.Contains(above, v) })
		g := mva.NewGraph(nv)
		for _, sc := range scopes {
			g.AddClique(sc)
		}
		order, _ := g.MinFill(rest)
		for i := len(above) - 1; i >= 0; i-- {
			order = append(order, above[i])
		}
		return []*pseudoTree{newPseudoTree(nv, nb, scopes, order)}
	})
}
