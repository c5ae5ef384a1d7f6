package local

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
)

// TestTablePool solves rows of seeded random subproblems with bucket
// elimination whose tables a shared pool lends, on two goroutines at
// once, and checks every answer bit for bit against a BE that allocates
// its own, and the cost against brute force. The pool lends every table
// (no size floor) and fills each with garbage first, so a kernel that
// left an entry unwritten would show; half the solvers are transient
// (tables lent for each row and given back after it), the others solve
// bursts between Hold and Release, as the SH-MGM baseline's blocks do.
func TestTablePool(t *testing.T) {
	type sub struct {
		seed int64
		i    int
		lp   *mva.LocalProblem
	}
	var subs []sub
	seededSubs(60, func(seed int64, i int, lp *mva.LocalProblem) { subs = append(subs, sub{seed, i, lp}) })
	if len(subs) < 40 {
		t.Fatalf("only %d subproblems", len(subs))
	}
	pool := NewTablePool(1 << 20)
	pool.least, pool.poison = 1, true
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]string, 2)
	for g := range 2 {
		wg.Go(func() {
			for k := g; k < len(subs); k += 2 {
				s := subs[k]
				lp := s.lp
				be, err := NewBE(lp, BEOptions{Pool: pool, Workers: 1})
				if err != nil {
					errs[g] = err.Error()
					return
				}
				be.transient = k%4 < 2
				rng := rand.New(rand.NewPCG(uint64(s.seed), uint64(s.i)))
				got := make([]int, lp.NumInterior())
				b := make([]int, lp.NB)
				for burst := range 3 {
					if !be.transient {
						be.Hold()
					}
					for range 3 {
						for q := range b {
							b[q] = rng.IntN(lp.Domains[q])
						}
						fresh, err := NewBE(lp, BEOptions{Workers: 1})
						if err != nil {
							errs[g] = err.Error()
							return
						}
						want := make([]int, lp.NumInterior())
						wc, err := fresh.SolveRow(ctx, b, want)
						if err != nil {
							errs[g] = err.Error()
							return
						}
						bc, err := NewBruteForce(lp).SolveRow(ctx, b, make([]int, lp.NumInterior()))
						if err != nil {
							errs[g] = err.Error()
							return
						}
						gc, err := be.SolveRow(ctx, b, got)
						if err != nil {
							errs[g] = err.Error()
							return
						}
						if math.Float64bits(gc) != math.Float64bits(wc) || !slices.Equal(got, want) {
							errs[g] = "pooled tables differ from fresh ones"
							t.Errorf("seed %d agent %d burst %d row %v: pooled %v %v, fresh %v %v", s.seed, s.i, burst, b, gc, got, wc, want)
							return
						}
						if math.Abs(gc-bc) > 1e-9*math.Max(1, math.Abs(bc)) && !(mva.IsHard(gc) && mva.IsHard(bc)) {
							t.Errorf("seed %d agent %d row %v: pooled %v, brute force %v", s.seed, s.i, b, gc, bc)
							return
						}
					}
					if !be.transient {
						be.Release()
					}
					if slices.ContainsFunc(be.row.args, func(a []int32) bool { return a != nil }) {
						t.Errorf("seed %d agent %d: tables kept after the row, not given back", s.seed, s.i)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Fatal(e)
		}
	}
	if pool.Held() == 0 {
		t.Error("the pool holds no table after the solves gave theirs back")
	}
}

// TestTablePoolBounds lends and takes back tables: a table comes back at
// its class's capacity, a second loan of the class reuses it, and the
// pool keeps no more bytes than its bound.
func TestTablePoolBounds(t *testing.T) {
	p := NewTablePool(3 * 8 * 2048)
	a := p.floatsOf(1500)
	if len(a) != 1500 || cap(a) != 2048 {
		t.Fatalf("a table of 1500 entries has len %d cap %d, want 1500 and 2048", len(a), cap(a))
	}
	a[0] = 42
	p.putFloats(a)
	if p.Held() != 8*2048 {
		t.Fatalf("held %d bytes, want %d", p.Held(), 8*2048)
	}
	b := p.floatsOf(2000)
	if &b[:1][0] != &a[:1][0] {
		t.Error("a second loan of the class did not reuse the table given back")
	}
	if p.Held() != 0 {
		t.Fatalf("held %d bytes after the table was lent again", p.Held())
	}
	for range 5 {
		p.putFloats(make([]float64, 2048))
	}
	if p.Held() > 3*8*2048 {
		t.Errorf("held %d bytes, above the bound of %d", p.Held(), 3*8*2048)
	}
	p.putFloats(make([]float64, 3000)) // not a class's capacity: dropped
	p.putInts(make([]int32, 100))      // below the floor: dropped
	if small := p.intsOf(100); len(small) != 100 {
		t.Errorf("a small table has %d entries", len(small))
	}
	var nilPool *TablePool
	if f := nilPool.floatsOf(5000); len(f) != 5000 {
		t.Errorf("a nil pool lent %d entries", len(f))
	}
	nilPool.putFloats(make([]float64, 4096)) // no panic
}
