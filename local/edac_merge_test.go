package local

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
)

// plantFunctional adds to p, for k random pairs of variables, a binary
// function that allows at most one value of the second for each value of
// the first (y = h(x), some values of x left without one), with a cost on
// each allowed pair: the constraints mergeFunctional substitutes, in
// chains and cycles when pairs share variables.
func plantFunctional(p *mva.Problem, r *rand.Rand, k int) {
	for i := range k {
		x, y := r.IntN(len(p.Variables)), r.IntN(len(p.Variables))
		if x == y {
			continue
		}
		dx, dy := p.Variables[x].Domain, p.Variables[y].Domain
		costs := make([]float64, len(dx)*len(dy))
		for j := range costs {
			costs[j] = mva.Hard
		}
		for a := range len(dx) {
			if r.IntN(6) == 0 {
				continue
			}
			costs[a*len(dy)+r.IntN(len(dy))] = float64(r.IntN(4))
		}
		p.Functions = append(p.Functions, mva.Function{Name: "h" + strconv.Itoa(i), Scope: []int{x, y}, Costs: costs})
	}
}

// TestEDACFunctionalEqualsBruteForce: seeded random problems with planted
// functional constraints, every row of every agent's table and the whole
// problem, EDAC (which substitutes them: asserted on the whole problems)
// against brute force, and the assignment EDAC returns must cost what it
// reports in the original problem.
func TestEDACFunctionalEqualsBruteForce(t *testing.T) {
	checked, merged := 0, 0
	for seed := range int64(300) {
		o := edacOptions(seed)
		p := randprob.New(seed, o)
		plantFunctional(p, rand.New(rand.NewPCG(uint64(seed), 7)), 1+int(seed%4))
		if space(p) > 1<<13 {
			continue
		}
		subs := wholeAndSubs(p)
		for si, sub := range subs {
			lp := mva.NewLocalProblem(p, sub)
			rows, err := lp.Rows()
			if err != nil {
				t.Fatal(err)
			}
			ref, s := NewBruteForce(lp), NewEDAC(lp)
			if si == 0 && s.merge != nil {
				merged++
			}
			s.noLocalSearch = seed%2 == 0
			b, got := make([]int, lp.NB), make([]int, lp.NumInterior())
			for r := range rows {
				lp.DecodeRow(r, b)
				if gc := checkRow(t, fmt.Sprintf("seed %d sub %d", seed, si), lp, r, b, ref, s, false, got); mva.IsHard(gc) {
					for i, v := range got {
						if v != 0 {
							t.Fatalf("seed %d sub %d row %d: infeasible, but interior value %d is %d", seed, si, r, i, v)
						}
					}
				}
				checked++
			}
		}
	}
	if checked < 1000 || merged < 100 {
		t.Fatalf("only %d rows checked, %d whole problems substituted", checked, merged)
	}
	t.Logf("%d rows, %d whole problems substituted", checked, merged)
}

// TestMergeFunctionalChain: x1 = x0 + 1 (mod 4) and x2 = x1 + 1 (no
// value for x1 = 3) merge into x0, so x0 = 2 becomes Hard; f23, which
// allows two values of either side, is left alone.
func TestMergeFunctionalChain(t *testing.T) {
	shift := func(c float64, wrap bool) []float64 {
		t := make([]float64, 16)
		for i := range t {
			t[i] = mva.Hard
		}
		for a := range 4 {
			if b := a + 1; b < 4 || wrap {
				t[a*4+b%4] = c
			}
		}
		return t
	}
	p := &mva.Problem{Agents: []mva.Agent{{Name: "a"}}}
	for i := range 4 {
		p.Variables = append(p.Variables, mva.Variable{Name: "x" + strconv.Itoa(i), Domain: []string{"0", "1", "2", "3"}})
	}
	p.Functions = []mva.Function{
		{Name: "f01", Scope: []int{0, 1}, Costs: shift(1, true)},
		{Name: "f12", Scope: []int{1, 2}, Costs: shift(2, false)},
		{Name: "u2", Scope: []int{2}, Costs: []float64{5, 0, 3, 7}},
		// Two values of x3 for each of x2: not functional.
		{Name: "f23", Scope: []int{2, 3}, Costs: []float64{0, 0, 9, 9, 9, 0, 0, 9, 9, 9, 0, 0, 0, 9, 9, 0}},
	}
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	fm := mergeFunctional(lp)
	if fm == nil || fm.n != 2 || fm.red.NumInterior() != 2 {
		t.Fatalf("merge %+v: want x1 and x2 merged into x0", fm)
	}
	s := NewEDAC(lp)
	got := make([]int, 4)
	c, err := s.SolveRow(context.Background(), nil, got)
	if err != nil {
		t.Fatal(err)
	}
	// x0 = 0: x1 = 1, x2 = 2 (u2 3): 1 + 2 + 3 = 6; x0 = 1: x2 = 3 (u2
	// 7): 10; x0 = 2: x1 = 3 has no x2, Hard; x0 = 3: x1 = 0, x2 = 1 (u2
	// 0): 3; x3 costs nothing next to x2's value in each.
	want, _ := NewBruteForce(lp).SolveRow(context.Background(), nil, make([]int, 4))
	if c != want || c != 3 || got[0] != 3 || got[1] != 0 || got[2] != 1 {
		t.Fatalf("edac %v %v, want 3 (x0 = 3, x1 = 0, x2 = 1), bruteforce %v", c, got, want)
	}
}

// TestEDACPairIndexHubs builds EDAC on problems with hubs of up to 60
// binary functions, or up to pairDense+60 (past pairIndex's scan, so its
// matrix is used on the first six seeds, which have at most pairDense
// variables, and its map on the other six) and functions repeated over
// the same pair in both orders: every pair of variables must get one
// binary function, and EDAC must answer bucket elimination's optimum.
func TestEDACPairIndexHubs(t *testing.T) {
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 30 + int(seed%6)*6
		if seed >= 6 {
			n += pairDense
		}
		p := &mva.Problem{Agents: []mva.Agent{{Name: "a"}}}
		for v := range n {
			p.Variables = append(p.Variables, mva.Variable{Name: fmt.Sprintf("x%d", v), Domain: []string{"0", "1"}})
		}
		edge := func(a, b int) {
			c := make([]float64, 4)
			for i := range c {
				c[i] = float64(rng.IntN(10))
			}
			p.Functions = append(p.Functions, mva.Function{Scope: []int{a, b}, Costs: c})
		}
		hubs := 1 + int(seed%3)
		for h := range hubs {
			for v := hubs; v < n; v++ {
				edge(h, v)
				if rng.IntN(4) == 0 {
					edge(v, h) // the same pair again, the other way round
				}
			}
		}
		for range n / 3 {
			a, b := hubs+rng.IntN(n-hubs), hubs+rng.IntN(n-hubs)
			if a != b {
				edge(a, b)
			}
		}
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		s := NewEDAC(lp)
		seen := map[[2]int]bool{}
		for k, b := range s.bins {
			key := pairKey(b.x, b.y)
			if seen[key] {
				t.Fatalf("seed %d: two binary functions over %v (the second %d)", seed, key, k)
			}
			seen[key] = true
		}
		for _, f := range p.Functions {
			if !seen[pairKey(f.Scope[0], f.Scope[1])] {
				t.Fatalf("seed %d: no binary function over %v", seed, f.Scope)
			}
		}
		if long := slices.MaxFunc(s.adjB, func(a, b []int) int { return len(a) - len(b) }); len(long) <= pairScan {
			t.Fatalf("seed %d: the longest list has %d functions, want more than %d", seed, len(long), pairScan)
		}
		be, err := NewBEWithin(lp, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		want, err := be.SolveRow(context.Background(), nil, make([]int, n))
		if err != nil {
			t.Fatal(err)
		}
		in := make([]int, n)
		got, err := s.SolveRow(context.Background(), nil, in)
		if err != nil || got != want || lp.Eval(in) != got {
			t.Fatalf("seed %d: edac %v (%v, assignment %v), be %v", seed, got, err, lp.Eval(in), want)
		}
	}
}

// TestPairIndexDenseMatchesMap adds the same seeded pairs to a pairIndex
// that keeps its matrix and to one that keeps its map (noDense) and asks both about every pair: the same function
// or none.
func TestPairIndexDenseMatchesMap(t *testing.T) {
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 18))
		n := 40 + int(seed)*10
		var idx [2]*pairIndex
		for i := range idx {
			s := &EDAC{n: n, adjB: make([][]int, n), rank: make([]int, n), dom: make([]int, n)}
			for x := range n {
				s.rank[x] = x
			}
			idx[i] = &pairIndex{s: s, noDense: i == 1}
		}
		for range 6 * n {
			x, y := rng.IntN(n), rng.IntN(n)
			if rng.IntN(3) == 0 {
				x = rng.IntN(3) // hubs, past pairScan
			}
			if x == y {
				continue
			}
			x, y = min(x, y), max(x, y)
			for _, p := range idx {
				if _, ok := p.find(x, y); !ok {
					p.add(x, y)
				}
			}
		}
		if idx[0].dense == nil || idx[1].big == nil {
			t.Fatalf("seed %d: matrix %v, map %v: want both used", seed, idx[0].dense != nil, idx[1].big != nil)
		}
		for x := range n {
			for y := range n {
				if x == y {
					continue
				}
				k0, ok0 := idx[0].find(x, y)
				k1, ok1 := idx[1].find(x, y)
				if ok0 != ok1 || ok0 && k0 != k1 {
					t.Fatalf("seed %d: pair (%d, %d): matrix %d %v, map %d %v", seed, x, y, k0, ok0, k1, ok1)
				}
			}
		}
	}
}
