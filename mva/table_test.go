package mva_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// wideHome is agent 0 with nb boundary variables (each shared with agent
// 1's one variable) and two interior variables, all of domain 4, with
// random local functions and some hard entries: 4^nb MVA rows.
func wideHome(seed uint64, nb int) (*mva.Problem, *mva.LocalProblem) {
	r := rand.New(rand.NewPCG(seed, 7))
	dom := []string{"0", "1", "2", "3"}
	p := &mva.Problem{Agents: []mva.Agent{{Name: "a"}, {Name: "b"}}}
	for i := range nb + 2 {
		p.Variables = append(p.Variables, mva.Variable{Name: fmt.Sprint("a", i), Domain: dom, Agent: 0})
	}
	other := len(p.Variables)
	p.Variables = append(p.Variables, mva.Variable{Name: "b0", Domain: dom, Agent: 1})
	costs := func(n int) []float64 {
		c := make([]float64, n)
		for k := range c {
			c[k] = float64(r.IntN(10))
			if r.IntN(20) == 0 {
				c[k] = mva.Hard
			}
		}
		return c
	}
	in0, in1 := nb, nb+1
	for i := range nb {
		p.Functions = append(p.Functions, mva.Function{Scope: []int{i, other}, Costs: costs(16)})
		in := in0
		if i%2 == 1 {
			in = in1
		}
		p.Functions = append(p.Functions, mva.Function{Scope: []int{i, in}, Costs: costs(16)})
	}
	p.Functions = append(p.Functions, mva.Function{Scope: []int{in0, in1}, Costs: costs(16)})
	d := mva.Decompose(p)
	return p, mva.NewLocalProblem(p, &d.Subs[0])
}

// TestLazyTableSparse: a lazy table past DenseRows keeps only the rows
// read, each equal to the dense table's; Fill makes it dense and whole.
func TestLazyTableSparse(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		nb     int
		sparse bool
	}{
		{nb: 8, sparse: false}, // 4^8 = DenseRows
		{nb: 9, sparse: true},
	}
	for _, tc := range tests {
		_, lp := wideHome(uint64(tc.nb), tc.nb)
		lazy, err := mva.NewLazyTable(lp)
		if err != nil {
			t.Fatal(err)
		}
		if lazy.Sparse() != tc.sparse || lazy.Rows() != 1<<(2*tc.nb) {
			t.Fatalf("nb=%d: sparse %v, rows %d", tc.nb, lazy.Sparse(), lazy.Rows())
		}
		dense, err := mva.NewTable(lp)
		if err != nil {
			t.Fatal(err)
		}
		if err := dense.Fill(ctx, local.NewBruteForce(lp)); err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, uint64(tc.nb)))
		read := map[int]bool{}
		s := local.NewDFBnB(lp)
		for range 300 {
			row := r.IntN(lazy.Rows())
			read[row] = true
			c, in, err := lazy.Lookup(ctx, s, row)
			if err != nil {
				t.Fatal(err)
			}
			// Interiors may differ between solvers among equal costs;
			// the lazy one must achieve its cost.
			if c != dense.Costs[row] || !mva.IsHard(c) && lp.Eval(lpRow(lp, row, in)) != c {
				t.Fatalf("nb=%d row %d: lazy %v %v, dense %v %v", tc.nb, row, c, in, dense.Costs[row], dense.Interior(row))
			}
		}
		for _, row := range []int{0, 1, lazy.Rows() - 1} {
			if lazy.Has(row) != read[row] {
				t.Errorf("nb=%d: Has(%d) = %v, read %v", tc.nb, row, lazy.Has(row), read[row])
			}
		}
		if lazy.Complete() {
			t.Errorf("nb=%d: complete after %d lookups", tc.nb, len(read))
		}
		if _, _, err := lazy.Lookup(ctx, s, lazy.Rows()); err == nil {
			t.Errorf("nb=%d: row past the end accepted", tc.nb)
		}
		if err := lazy.Fill(ctx, s); err != nil {
			t.Fatal(err)
		}
		if lazy.Sparse() || !lazy.Complete() || !slices.Equal(lazy.Costs, dense.Costs) {
			t.Errorf("nb=%d: after Fill: sparse %v, complete %v, costs equal %v", tc.nb, lazy.Sparse(), lazy.Complete(), slices.Equal(lazy.Costs, dense.Costs))
		}
	}
}

// lpRow is the local assignment of row with interior values in, for Eval.
func lpRow(lp *mva.LocalProblem, row int, in []int32) []int {
	a := make([]int, lp.NB+len(in))
	lp.DecodeRow(row, a[:lp.NB])
	for i, v := range in {
		a[lp.NB+i] = int(v)
	}
	return a
}

// TestLocalViewOffer: an offer is recorded for an unknown row and for a
// cheaper completion, refused when not cheaper or malformed, and the view
// then answers the row with the offered completion, dense or sparse.
func TestLocalViewOffer(t *testing.T) {
	ctx := context.Background()
	for _, nb := range []int{2, 9} {
		_, lp := wideHome(uint64(nb), nb)
		v, err := mva.NewLocalView(ctx, lp, local.NewBruteForce(lp), false)
		if err != nil {
			t.Fatal(err)
		}
		ni := lp.NumInterior()
		interior := func(x int) []int { return slices.Repeat([]int{x}, ni) }
		const row = 3
		steps := []struct {
			name     string
			row      int
			cost     float64
			interior []int
			want     bool
			wantCost float64
		}{
			{"unknown row", row, 40, interior(1), true, 40},
			{"dearer", row, 41, interior(2), false, 40},
			{"equal", row, 40, interior(2), false, 40},
			{"cheaper", row, 12, interior(3), true, 12},
			{"short interior", row, 1, interior(0)[:ni-1], false, 12},
			{"row out of range", -1, 1, interior(0), false, 12},
		}
		for _, s := range steps {
			if got := v.Offer(s.row, s.cost, s.interior); got != s.want {
				t.Errorf("nb %d: %s: Offer = %v, want %v", nb, s.name, got, s.want)
			}
			c, in, err := v.RowIndex(ctx, row)
			if err != nil {
				t.Fatal(err)
			}
			if c != s.wantCost {
				t.Errorf("nb %d: %s: row cost %v, want %v", nb, s.name, c, s.wantCost)
			}
			if s.want && !slices.Equal(lpRow(lp, 0, in)[lp.NB:], s.interior) {
				t.Errorf("nb %d: %s: interior %v, want %v", nb, s.name, in, s.interior)
			}
		}
	}
}
