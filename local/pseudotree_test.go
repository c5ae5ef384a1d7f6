package local

import (
	"math/rand/v2"
	"testing"
)

// TestTreeShaperMatchesPseudoTree: the width and height treeShaper
// computes for bestPseudoTree's tries are those of the tree newPseudoTree
// builds, on random scopes (unary to five-variable, with and without
// boundary variables) and random orders, the shaper's buffers reused
// across calls of different sizes as bestPseudoTree reuses them.
func TestTreeShaperMatchesPseudoTree(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 3))
	var sh treeShaper
	for trial := range 300 {
		nv := 1 + rng.IntN(150)
		nb := 0
		if trial%3 == 0 {
			nb = rng.IntN(nv)
		}
		var scopes [][]int
		for range rng.IntN(2 * nv) {
			k := 1 + rng.IntN(5)
			var sc []int
			for range k {
				v := nb + rng.IntN(nv-nb)
				if rng.IntN(4) == 0 && nb > 0 {
					v = rng.IntN(nb)
				}
				sc = append(sc, v)
			}
			scopes = append(scopes, sc)
		}
		order := make([]int, 0, nv-nb)
		for _, k := range rng.Perm(nv - nb) {
			order = append(order, nb+k)
		}
		pt := newPseudoTree(nv, nb, scopes, order)
		w, h := sh.shape(nv, nb, scopes, order)
		if w != pt.width || h != pt.height() {
			t.Fatalf("trial %d (%d variables, %d boundary): shape %d, %d; tree width %d, height %d", trial, nv, nb, w, h, pt.width, pt.height())
		}
	}
}
