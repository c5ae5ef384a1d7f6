//go:build cuda

package gpu

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// prodSet draws a (min,+) product bucket, jp_prod's shape: the eliminated
// variable 0 (d values), output variables 1..nP (P, first in the output
// order) and nP+1..nP+nS (S), domains 1 to maxDom; 1 to 4 inputs hold the
// eliminated variable and variables of one side, or none, and up to 2
// hold variables of one side only, every variable in some input, each
// scope in random order. Costs are whole numbers of magnitude up to mag,
// negative ones too, with Hard entries at rate hard.
func prodSet(r *rand.Rand, nP, nS, maxDom, d, mag int, hard float64) factorSet {
	dims := []int{d}
	for range nP + nS {
		dims = append(dims, 1+r.IntN(maxDom))
	}
	pVars, sVars := make([]int, nP), make([]int, nS)
	for i := range pVars {
		pVars[i] = 1 + i
	}
	for i := range sVars {
		sVars[i] = 1 + nP + i
	}
	r.Shuffle(nP, func(i, j int) { pVars[i], pVars[j] = pVars[j], pVars[i] })
	r.Shuffle(nS, func(i, j int) { sVars[i], sVars[j] = sVars[j], sVars[i] })
	s := factorSet{elim: []int{0}, out: append(append([]int{}, pVars...), sVars...)}
	pick := func(side []int) []int {
		if len(side) == 0 {
			return nil
		}
		vs := append([]int{}, side...)
		r.Shuffle(len(vs), func(i, j int) { vs[i], vs[j] = vs[j], vs[i] })
		return vs[:1+r.IntN(min(3, len(vs)))]
	}
	sides := [][]int{pVars, sVars, nil}
	var scopes [][]int
	for j := range 1 + r.IntN(4) {
		side := sides[r.IntN(3)]
		if j < 2 && len(sides[j]) > 0 {
			side = sides[j] // both sides, mostly
		}
		scopes = append(scopes, append(pick(side), 0))
	}
	for range r.IntN(3) {
		if vs := pick(sides[r.IntN(2)]); len(vs) > 0 {
			scopes = append(scopes, vs)
		}
	}
	// Every variable in some input: an uncovered one joins an input of
	// its side (or starts one).
	covered := map[int]bool{}
	for _, sc := range scopes {
		for _, v := range sc {
			covered[v] = true
		}
	}
	for _, side := range sides[:2] {
		for _, v := range side {
			if covered[v] {
				continue
			}
			placed := false
			for i, sc := range scopes {
				if len(sc) > 0 && sc[0] != 0 && contains(side, sc[0]) {
					scopes[i] = append(sc, v)
					placed = true
					break
				}
			}
			if !placed {
				scopes = append(scopes, []int{v, 0})
			}
			covered[v] = true
		}
	}
	for _, sc := range scopes {
		r.Shuffle(len(sc), func(i, j int) { sc[i], sc[j] = sc[j], sc[i] })
		fd := make([]int, len(sc))
		for i, v := range sc {
			fd[i] = dims[v]
		}
		f, err := local.NewFactor(sc, fd)
		if err != nil {
			panic(err)
		}
		for i := range f.Costs {
			if r.Float64() < hard {
				f.Costs[i] = mva.Hard
			} else {
				f.Costs[i] = float64(r.IntN(2*mag+1) - mag)
			}
		}
		s.inputs = append(s.inputs, f)
	}
	return s
}

func contains(vs []int, v int) bool {
	for _, w := range vs {
		if w == v {
			return true
		}
	}
	return false
}

// prodSteps returns the steps d ran with jp_prod.
func prodSteps(t testing.TB, d *Device) int {
	t.Helper()
	var n int
	if err := d.do(context.Background(), func(o *owner) error {
		n = o.prodSteps
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestProdMatchesCPU compares jp_prod with the CPU kernel, bit for bit,
// costs and argmins, on random product buckets: with integer costs at
// every size (partial tiles on both sides, one-row sides, ties, Hard
// rows, negative costs, magnitudes at the edge of the integer range, up
// to 20 eliminated values, where 17 and more take the tiled kernel),
// through many chunks on a small budget, and at the default settings on
// tables of 10^6 rows and more, where jp_prod must be the kernel.
func TestProdMatchesCPU(t *testing.T) {
	all := openI32(t, Options{})
	chunked := openI32(t, Options{Budget: 1 << 20})
	def := openDevice(t, Options{})
	ran := 0
	for seed := range uint64(400) {
		r := rand.New(rand.NewPCG(seed, 19))
		nP, nS := 1+r.IntN(4), 1+r.IntN(4)
		d := 1 + r.IntN(20)
		mag := 9
		if seed%4 == 3 {
			// Near the range: the host's check lets these through as
			// long as the largest magnitude times the inputs stays
			// below i32Limit.
			mag = i32Limit/12 - 1
		}
		s := prodSet(r, nP, nS, 1+r.IntN(6), d, mag, []float64{0, 0.05, 0.4}[seed%3])
		before := prodSteps(t, all)
		tag := fmt.Sprintf("seed %d (P %d vars, S %d, %d values, %d inputs)", seed, nP, nS, d, len(s.inputs))
		checkSet(t, all, tag, s)
		if prodSteps(t, all) > before {
			ran++
			if d > prodMaxD {
				t.Errorf("%s: jp_prod ran with %d eliminated values", tag, d)
			}
		}
	}
	if ran < 150 {
		t.Errorf("jp_prod ran on %d of 400 sets only", ran)
	}
	r := rand.New(rand.NewPCG(7, 19))
	for i := range 4 {
		// 4^5 × 4^5 rows on a budget of 1 MiB: some 50 chunks; then
		// 6^4 × 6^4 rows at the default settings.
		s := prodSet(r, 5, 5, 1, 4+i, 9, 0.05)
		for _, f := range s.inputs {
			for k, v := range f.Vars {
				if v != 0 {
					f.Dims[k] = 4
				}
			}
		}
		s = regrow(r, s, 0.05)
		before := prodSteps(t, chunked)
		checkSet(t, chunked, fmt.Sprintf("chunked set %d", i), s)
		if prodSteps(t, chunked) == before {
			t.Errorf("chunked set %d: jp_prod did not run", i)
		}
		s = prodSet(r, 4, 4, 1, 10+i, 99, 0.02)
		for _, f := range s.inputs {
			for k, v := range f.Vars {
				if v != 0 {
					f.Dims[k] = 6
				}
			}
		}
		s = regrow(r, s, 0.02)
		before = prodSteps(t, def)
		checkSet(t, def, fmt.Sprintf("large set %d", i), s)
		if prodSteps(t, def) == before {
			t.Errorf("large set %d: jp_prod did not run", i)
		}
	}
}

// regrow redraws s's inputs after their dims changed: new tables of the
// right size, whole costs 0..9, Hard at rate hard.
func regrow(r *rand.Rand, s factorSet, hard float64) factorSet {
	for i, f := range s.inputs {
		g, err := local.NewFactor(f.Vars, f.Dims)
		if err != nil {
			panic(err)
		}
		for k := range g.Costs {
			if r.Float64() < hard {
				g.Costs[k] = mva.Hard
			} else {
				g.Costs[k] = float64(r.IntN(10))
			}
		}
		s.inputs[i] = g
	}
	return s
}
