package local

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/format/wcsp"
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

// TestAutoMinFillFirstTry: the order Choose hands AOBB for its first
// pseudo-tree try (Choice.minFill, from the sizing pass) is the plain
// min-fill order of AOBB's own graph, and the tree chosen from it is the
// tree chosen without it, on the SHDS responses and on random ternary
// problems.
func TestAutoMinFillFirstTry(t *testing.T) {
	var lps []*mva.LocalProblem
	for _, name := range []string{"shds_dm_7_1_5_home1", "shds_dm_7_1_5_home5"} {
		path := filepath.Join("..", "testdata", name+".wcsp")
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		p, err := wcsp.Read(f, path)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		lps = append(lps, mva.NewLocalProblem(p, mva.Whole(p)))
	}
	for seed := range int64(40) {
		p := randprob.New(700+seed, randprob.Options{
			Agents: 1, Vars: 50 + int(seed%40), MinDomain: 2, MaxDomain: 4,
			MaxArity: 3, Functions: 100 + int(seed%50), IntCosts: true, MaxCost: 9,
		})
		lps = append(lps, mva.NewLocalProblem(p, mva.Whole(p)))
	}
	given := 0
	for k, lp := range lps {
		c := Choose(lp, AutoOptions{})
		if c.Name != "aobb" || c.minFill == nil {
			continue
		}
		given++
		interior := make([]int, lp.NumInterior())
		for i := range interior {
			interior[i] = lp.NB + i
		}
		var scopes [][]int
		g := mva.NewGraph(len(lp.Vars))
		for _, f := range lp.Funcs {
			var sc []int
			for _, v := range f.Scope {
				if v >= lp.NB {
					sc = append(sc, v)
				}
			}
			if len(sc) > 0 {
				scopes = append(scopes, sc)
				g.AddClique(sc)
			}
		}
		want, _ := g.MinFill(interior)
		if !slices.Equal(c.minFill, want) {
			t.Fatalf("problem %d: Choose's order %v, min-fill's %v", k, c.minFill, want)
		}
		a := bestPseudoTree(len(lp.Vars), lp.NB, scopes, interior)
		b := bestPseudoTreeFrom(len(lp.Vars), lp.NB, scopes, interior, c.minFill)
		if !slices.Equal(a.order, b.order) {
			t.Fatalf("problem %d: tree order %v without the given order, %v with it", k, a.order, b.order)
		}
	}
	if given < 10 {
		t.Errorf("%d problems got an order from Choose: hardly tested", given)
	}
}
