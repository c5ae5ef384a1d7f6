package local

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/gen"
)

// edacOptions are the random problems the EDAC tests draw: mostly binary
// functions (EDAC's own ground), some unary and ternary ones (conditioned
// into binary ones by the boundary, or checked when assigned), Hard
// entries, whole and fractional costs.
func edacOptions(seed int64) randprob.Options {
	return randprob.Options{
		Agents: 1 + int(seed%3), Vars: 4 + int(seed%9), MinDomain: 2, MaxDomain: 2 + int(seed%4),
		MaxArity: []int{2, 2, 3, 4}[seed%4], Functions: 4 + int(seed%17),
		HardProb: []float64{0, 0.05, 0.2, 0.4}[seed%4], IntCosts: seed%5 != 0, MaxCost: []float64{3, 9, 100}[seed%3],
		Locality: 0.6,
	}
}

// TestEDACEqualsBruteForce solves every row of every agent's table of
// hundreds of seeded random problems, and the whole problems, with EDAC
// and compares with brute force; the assignment EDAC returns must cost
// what it reports. Every other row is solved without the local search's
// upper bound and with the costliest value first, so that the optimum is
// reached through the pruning rather than found by the first dive.
func TestEDACEqualsBruteForce(t *testing.T) {
	checked := 0
	for seed := range int64(500) {
		o := edacOptions(seed)
		p := randprob.New(seed, o)
		if space(p) > 1<<14 {
			continue
		}
		subs := wholeAndSubs(p)
		for si, sub := range subs {
			lp := mva.NewLocalProblem(p, sub)
			rows, err := lp.Rows()
			if err != nil {
				t.Fatal(err)
			}
			ref, s, bare := NewBruteForce(lp), NewEDAC(lp), NewEDAC(lp)
			bare.noLocalSearch, bare.worstFirst = true, true
			b, got := make([]int, lp.NB), make([]int, lp.NumInterior())
			for r := range rows {
				lp.DecodeRow(r, b)
				s := s
				if (int(seed)+si+r)%2 == 1 {
					s = bare
				}
				checkRow(t, fmt.Sprintf("seed %d sub %d", seed, si), lp, r, b, ref, s, o.IntCosts, got)
				checked++
			}
		}
	}
	if checked < 2000 {
		t.Fatalf("only %d rows checked", checked)
	}
}

// rootBound returns EDAC's lower bound at the root of lp's only row, with
// no upper bound, and the classic one (the sum of every function's
// minimum).
func rootBound(lp *mva.LocalProblem) (edac, classic float64) {
	s := NewEDAC(lp)
	s.ub = mva.Hard
	if !s.condition(nil) {
		return mva.Hard, mva.Hard
	}
	s.reset()
	if !s.propagate() {
		return mva.Hard, 0
	}
	for _, f := range lp.Funcs {
		m := math.Inf(1)
		for _, c := range f.Costs {
			m = min(m, c)
		}
		classic += m
	}
	return s.fs[0], classic
}

// TestEDACRootBound checks the bound itself on random binary problems: it
// never exceeds the optimum (brute force), it is at least the classic
// bound, and on most problems it is strictly higher — the transfers do
// work.
func TestEDACRootBound(t *testing.T) {
	ctx := context.Background()
	higher, n := 0, 0
	for seed := range int64(200) {
		o := randprob.Options{Vars: 6 + int(seed%6), MinDomain: 2, MaxDomain: 4, MaxArity: 2,
			Functions: 10 + int(seed%10), IntCosts: seed%2 == 0, MaxCost: 20, HardProb: []float64{0, 0.1}[seed%2]}
		p := randprob.New(seed, o)
		if space(p) > 1<<14 {
			continue
		}
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		opt, err := NewBruteForce(lp).SolveRow(ctx, nil, make([]int, lp.NumInterior()))
		if err != nil {
			t.Fatal(err)
		}
		lb, classic := rootBound(lp)
		tol := 1e-9 * max(1, math.Abs(opt))
		if !mva.IsHard(opt) && lb > opt+tol {
			t.Fatalf("seed %d: root bound %v above the optimum %v", seed, lb, opt)
		}
		if lb < classic-tol {
			t.Fatalf("seed %d: root bound %v below the classic %v", seed, lb, classic)
		}
		if lb > classic+tol {
			higher++
		}
		n++
	}
	if higher*2 < n {
		t.Fatalf("the EDAC bound beats the classic one on only %d of %d problems", higher, n)
	}
	t.Logf("EDAC's root bound beats the sum of minima on %d of %d problems", higher, n)
}

// TestEDACChain: on a chain, directional arc consistency along the chain
// moves the whole optimum into c∅ at the root, so the search needs about
// one node per decision — where DFBnB's bound explores thousands.
func TestEDACChain(t *testing.T) {
	for _, n := range []int{12, 40} {
		p := chain(n, 6)
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		s := NewEDAC(lp)
		in := make([]int, n)
		c, err := s.SolveRow(context.Background(), nil, in)
		if err != nil || c != 0 {
			t.Fatalf("chain %d: optimum %v, %v; want 0", n, c, err)
		}
		if lb, _ := rootBound(lp); lb != 0 {
			t.Fatalf("chain %d: root bound %v, want the optimum 0", n, lb)
		}
		if s.Nodes() > int64(2*n) {
			t.Fatalf("chain %d: %d nodes", n, s.Nodes())
		}
	}
	// A random chain of fractional costs: the root bound is the optimum.
	q := randprob.New(3, randprob.Options{Vars: 14, MinDomain: 4, MaxDomain: 4, MaxArity: 1, Functions: 14, MaxCost: 100})
	for v := 0; v+1 < 14; v++ {
		c := make([]float64, 16)
		for i := range c {
			c[i] = float64((v*31+i*17)%101) / 7
		}
		q.Functions = append(q.Functions, mva.Function{Scope: []int{v, v + 1}, Costs: c})
	}
	lq := mva.NewLocalProblem(q, mva.Whole(q))
	be, err := NewBE(lq, BEOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := be.SolveRow(context.Background(), nil, make([]int, 14))
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewEDAC(lq).SolveRow(context.Background(), nil, make([]int, 14))
	if err != nil || !sameCost(got, want) {
		t.Fatalf("random chain: edac %v, bruteforce %v (%v)", got, want, err)
	}
	if lb, _ := rootBound(lq); !sameCost(lb, want) {
		t.Fatalf("random chain: root bound %v, optimum %v", lb, want)
	}
}

// TestEDACLarger compares EDAC with bucket elimination on binary random
// problems too large for brute force (up to 40 variables, width small
// enough for BE).
func TestEDACLarger(t *testing.T) {
	ctx := context.Background()
	checked := 0
	for seed := range int64(30) {
		o := randprob.Options{Vars: 20 + int(seed%21), MinDomain: 2, MaxDomain: 5, MaxArity: 2,
			Functions: 25 + int(seed%20), IntCosts: seed%3 != 0, MaxCost: 50, HardProb: []float64{0, 0.05, 0.2}[seed%3]}
		p := randprob.New(seed, o)
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		be, err := NewBEWithin(lp, 64<<20)
		if err != nil {
			continue // too wide for BE within 64 MiB
		}
		want, err := be.SolveRow(ctx, nil, make([]int, lp.NumInterior()))
		if err != nil {
			t.Fatal(err)
		}
		in := make([]int, lp.NumInterior())
		got, err := NewEDAC(lp).SolveRow(ctx, nil, in)
		if err != nil {
			t.Fatal(err)
		}
		if !sameCost(got, want) {
			t.Fatalf("seed %d: edac %v, be %v", seed, got, want)
		}
		if !mva.IsHard(got) && !sameCost(lp.Eval(in), got) {
			t.Fatalf("seed %d: assignment costs %v, reported %v", seed, lp.Eval(in), got)
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("only %d problems checked", checked)
	}
}

func TestEDACCancel(t *testing.T) {
	p := randprob.New(1, randprob.Options{Vars: 60, MinDomain: 6, MaxDomain: 6, MaxArity: 2, Functions: 400, MaxCost: 100})
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewEDAC(lp).SolveRow(ctx, nil, make([]int, 60)); err == nil {
		t.Fatal("cancelled context: no error")
	}
}

func TestEDACBadArgs(t *testing.T) {
	p := chain(3, 2)
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	if _, err := NewEDAC(lp).SolveRow(context.Background(), nil, make([]int, 2)); err == nil {
		t.Fatal("short interior: no error")
	}
	p.Variables[1].Domain = nil
	if _, err := NewEDAC(mva.NewLocalProblem(p, mva.Whole(p))).SolveRow(context.Background(), nil, make([]int, 3)); err == nil {
		t.Fatal("empty domain: no error")
	}
}

// TestEDACEliminationDuringSearch compares EDAC with bucket elimination on
// random binary problems of average degree about three, where assignments
// leave variables of one or two neighbours during search: those are
// eliminated there and set after the search, and the answers must still
// be exact (and their assignments cost what is reported); on even seeds the
// queues of elimination and dead-end elimination are checked against a
// scan of every variable (verifyQueues).
func TestEDACEliminationDuringSearch(t *testing.T) {
	ctx := context.Background()
	var elims int64
	for seed := range int64(120) {
		n := 16 + int(seed%24)
		o := randprob.Options{Agents: 1 + int(seed%2), Vars: n, MinDomain: 2, MaxDomain: 4, MaxArity: 2,
			Functions: 2*n + int(seed%7)*n/4, IntCosts: seed%2 == 0, MaxCost: 30, HardProb: []float64{0, 0.1}[seed%2], Locality: 0.5}
		p := randprob.New(seed, o)
		d := mva.Decompose(p)
		subs := []*mva.Subproblem{mva.Whole(p)}
		for i := range d.Subs {
			subs = append(subs, &d.Subs[i])
		}
		for si, sub := range subs {
			lp := mva.NewLocalProblem(p, sub)
			rows, err := lp.Rows()
			if err != nil || rows > 64 {
				continue
			}
			be, err := NewBEWithin(lp, 64<<20)
			if err != nil {
				continue
			}
			s := NewEDAC(lp)
			s.noLocalSearch, s.worstFirst, s.verifyQueues = seed%2 == 0, seed%2 == 0, seed%2 == 0
			b := make([]int, lp.NB)
			in := make([]int, lp.NumInterior())
			for r := range rows {
				lp.DecodeRow(r, b)
				want, err := be.SolveRow(ctx, b, make([]int, lp.NumInterior()))
				if err != nil {
					t.Fatal(err)
				}
				got, err := s.SolveRow(ctx, b, in)
				if err != nil {
					t.Fatal(err)
				}
				if !sameCost(got, want) {
					t.Fatalf("seed %d sub %d row %d: edac %v, be %v", seed, si, r, got, want)
				}
				if e := evalRow(lp, r, in); !mva.IsHard(got) && !sameCost(e, got) {
					t.Fatalf("seed %d sub %d row %d: assignment costs %v, reported %v", seed, si, r, e, got)
				}
			}
			elims += s.dynElims
			if s.deeMissed > 0 || s.elimMissed > 0 {
				t.Fatalf("seed %d sub %d: the queues missed %d dead-end removals and %d eliminations", seed, si, s.deeMissed, s.elimMissed)
			}
		}
	}
	if elims == 0 {
		t.Fatal("no variable was eliminated during search: the test does not reach that code")
	}
	t.Logf("%d eliminations during search", elims)
}

// TestEDACGridsDeadEnds compares EDAC with bucket elimination on random
// grids (no triangles: every elimination of two neighbours during search
// needs a dormant function) over two and three values, with and without
// the local search's upper bound, and checks that dead-end elimination
// removed values and dormant functions joined the search: both keep an
// optimum, never all of them, so the costs must equal BE's exactly. The
// bare runs also check the queues of dead-end elimination and of
// elimination during search against a scan of every variable
// (verifyQueues): they must miss nothing.
func TestEDACGridsDeadEnds(t *testing.T) {
	ctx := context.Background()
	var dee, woken int64
	for seed := range uint64(60) {
		o := gen.GridOptions{Rows: 3 + int(seed%3), Cols: 3 + int(seed%4), GraphOptions: gen.GraphOptions{
			Domain: 2 + int(seed%5)/4, MaxCost: []int{3, 20, 100}[seed%3], Tightness: []float64{1, 0.8}[seed%2], Plant: true}}
		p, err := gen.Grid(seed, o)
		if err != nil {
			t.Fatal(err)
		}
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		be, err := NewBEWithin(lp, 64<<20)
		if err != nil {
			t.Fatal(err)
		}
		want, err := be.SolveRow(ctx, nil, make([]int, lp.NumInterior()))
		if err != nil {
			t.Fatal(err)
		}
		for _, bare := range []bool{false, true} {
			s := NewEDAC(lp)
			s.noLocalSearch, s.worstFirst, s.verifyQueues = bare, bare, bare
			in := make([]int, lp.NumInterior())
			got, err := s.SolveRow(ctx, nil, in)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("seed %d (%+v) bare %v: edac %v, be %v", seed, o, bare, got, want)
			}
			if s.deeMissed > 0 || s.elimMissed > 0 {
				t.Fatalf("seed %d (%+v): the queues missed %d dead-end removals and %d eliminations", seed, o, s.deeMissed, s.elimMissed)
			}
			if e := evalRow(lp, 0, in); !mva.IsHard(got) && e != got {
				t.Fatalf("seed %d bare %v: assignment costs %v, reported %v", seed, bare, e, got)
			}
			dee += s.deeRemovals
			woken += s.woken
		}
	}
	if dee == 0 || woken == 0 {
		t.Fatalf("dead-end elimination removed values at %d nodes, %d dormant functions woke: the test does not reach that code", dee, woken)
	}
	t.Logf("dead-end elimination at %d nodes, %d dormant functions woken", dee, woken)
}

// TestEDACTwoValuesEqualsBruteForce checks the search's rules for problems
// of two values (the DAC order flipped for the search, ties of dom/wdeg to
// the largest unary cost, dead-end elimination) against brute force on
// rows of seeded random binary problems over two values, dense
// enough that the search branches, with EDAC alone (also without the
// local search's bound and costliest value first) and with Auto under a
// 1 MiB budget.
func TestEDACTwoValuesEqualsBruteForce(t *testing.T) {
	ctx := context.Background()
	checked, branched, flipped := 0, 0, 0
	for seed := range int64(60) {
		o := randprob.Options{
			Agents: 1 + int(seed%3), Vars: 8 + int(seed%7), MinDomain: 2, MaxDomain: 2,
			MaxArity: 2, Functions: 14 + int(seed%19), HardProb: []float64{0, 0, 0.1}[seed%3],
			IntCosts: seed%4 != 0, MaxCost: []float64{5, 30, 100}[seed%3], Locality: 0.5,
		}
		p := randprob.New(seed, o)
		for si, sub := range wholeAndSubs(p) {
			lp := mva.NewLocalProblem(p, sub)
			if lp.NumInterior() == 0 {
				continue
			}
			rows, err := lp.Rows()
			if err != nil {
				t.Fatal(err)
			}
			auto, _, err := Auto(lp, AutoOptions{Memory: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			ref, s, bare := NewBruteForce(lp), NewEDAC(lp), NewEDAC(lp)
			bare.noLocalSearch, bare.worstFirst = true, true
			if s.flipForSearch() {
				flipped++
			}
			b := make([]int, lp.NB)
			want, got := make([]int, lp.NumInterior()), make([]int, lp.NumInterior())
			for r := range min(rows, 4) {
				lp.DecodeRow(r, b)
				wc, err := ref.SolveRow(ctx, b, want)
				if err != nil {
					t.Fatal(err)
				}
				for name, sv := range map[string]mva.LocalSolver{"edac": s, "bare": bare, "auto": auto} {
					gc, err := sv.SolveRow(ctx, b, got)
					if err != nil {
						t.Fatalf("seed %d sub %d row %d %s: %v", seed, si, r, name, err)
					}
					if !sameCost(gc, wc) || (o.IntCosts && gc != wc) {
						t.Fatalf("seed %d sub %d row %d (boundary %v) %s: %v, bruteforce %v", seed, si, r, b, name, gc, wc)
					}
					if e := evalRow(lp, r, got); !mva.IsHard(gc) && !sameCost(e, gc) {
						t.Fatalf("seed %d sub %d row %d %s: reports %v, its assignment %v costs %v", seed, si, r, name, gc, got, e)
					}
				}
				checked++
			}
			if bare.Nodes() > 1 {
				branched++
			}
		}
	}
	if checked < 200 || branched < 20 || flipped < 40 {
		t.Fatalf("%d rows checked, %d subproblems branched, %d flipped: the test no longer reaches the rules", checked, branched, flipped)
	}
	t.Logf("%d rows, %d subproblems branched, %d flipped", checked, branched, flipped)
}

// sweepEverything is localSearch as it was before its sweeps skipped the
// variables whose neighbours had not moved: the greedy assignment, then
// up to eight sweeps that weigh every variable. TestLocalSearchSkipsIdle
// compares the two.
func sweepEverything(s *EDAC) (float64, []int) {
	cur := s.full[s.lp.NB:]
	s.greedyStart(cur)
	for range 8 {
		moved := false
		for x := range s.n {
			if s.gone[x] {
				continue
			}
			old := cur[x]
			best, bc := old, s.localCost(x, old)
			for a := range s.dom[x] {
				if c := s.localCost(x, a); a != old && c < bc {
					best, bc = a, c
				}
			}
			cur[x] = best
			moved = moved || best != old
		}
		if !moved {
			break
		}
	}
	s.restore(cur)
	return s.lp.Eval(s.full), append([]int(nil), cur...)
}

// TestLocalSearchSkipsIdle checks that localSearch, whose sweeps weigh
// only the variables next to one that moved, ends on the assignment and
// upper bound of sweeps over every variable, on the EDAC tests' random
// problems (ternary functions included) and on binary grids.
func TestLocalSearchSkipsIdle(t *testing.T) {
	var probs []*mva.Problem
	for seed := range int64(120) {
		probs = append(probs, randprob.New(seed, edacOptions(seed)))
	}
	for seed := range uint64(6) {
		p, err := gen.Generate("grid", seed+1, map[string]string{"rows": "12", "cols": "12", "domain": []string{"2", "3"}[seed%2], "plant": "false"})
		if err != nil {
			t.Fatal(err)
		}
		probs = append(probs, p)
	}
	for i, p := range probs {
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		var ub [2]float64
		var best [2][]int
		for j := range 2 {
			s := newEDAC(lp)
			if !s.condition(nil) {
				break
			}
			if j == 0 {
				s.ub = mva.Hard
				s.localSearch()
				ub[j], best[j] = s.ub, append([]int(nil), s.best...)
				continue
			}
			ub[j], best[j] = sweepEverything(s)
		}
		if ub[0] != ub[1] && !(mva.IsHard(ub[0]) && mva.IsHard(ub[1])) {
			t.Fatalf("problem %d: local search's bound %v, sweeping every variable %v", i, ub[0], ub[1])
		}
		if !mva.IsHard(ub[0]) && !slices.Equal(best[0], best[1]) {
			t.Fatalf("problem %d: local search ends on %v, sweeping every variable on %v", i, best[0], best[1])
		}
	}
}

// TestEDACNaryEqualsBruteForce checks the n-ary functions' projection onto
// unary costs (projectToUnary) and their move into binary functions once
// two variables are left (naryToBin) against brute force on whole seeded
// random problems of functions of arity up to five, Hard entries
// included, with each on and off, first value the cheapest or the
// costliest, dead-end elimination on the n-ary functions' variables
// (naryGains) on and off, its queue checked against a scan of every
// variable. Where naryToBin or naryGains is on, the cases must reach it.
func TestEDACNaryEqualsBruteForce(t *testing.T) {
	cases := []struct {
		name                        string
		noNary, noBin, noDEE, worst bool
		noLocalSearch               bool
	}{
		{"projected", false, false, false, false, false},
		{"projected-worst-first", false, false, false, true, true},
		{"projected-unbinarised-worst-first", false, true, false, true, true},
		{"projected-no-nary-dee-worst-first", false, false, true, true, true},
		{"unprojected", true, false, false, false, false},
		{"unprojected-worst-first", true, false, false, true, true},
		{"unprojected-unbinarised-no-nary-dee-worst-first", true, true, true, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checked, nary := 0, 0
			var bins, dee, missed int64
			for seed := range int64(120) {
				o := randprob.Options{
					Agents: 1, Vars: 6 + int(seed%7), MinDomain: 2, MaxDomain: 2 + int(seed%2),
					MaxArity: 3 + int(seed%3), Functions: 5 + int(seed%9),
					HardProb: []float64{0, 0.1, 0.3}[seed%3], IntCosts: seed%4 != 0, MaxCost: []float64{5, 100}[seed%2],
					Locality: 0.6,
				}
				p := randprob.New(seed, o)
				if space(p) > 1<<14 {
					continue
				}
				lp := mva.NewLocalProblem(p, wholeAndSubs(p)[0])
				s := NewEDAC(lp)
				s.noNaryUnary, s.noNaryBin, s.noNaryDEE, s.worstFirst, s.noLocalSearch = tc.noNary, tc.noBin, tc.noDEE, tc.worst, tc.noLocalSearch
				s.verifyQueues = true
				checkRow(t, fmt.Sprintf("seed %d", seed), lp, 0, make([]int, lp.NB), NewBruteForce(lp), s, o.IntCosts, make([]int, lp.NumInterior()))
				checked++
				if len(s.narys) > 0 {
					nary++
				}
				bins += s.naryBins
				dee += s.naryDEE
				missed += s.deeMissed + s.elimMissed
			}
			if checked < 60 || nary < checked/2 {
				t.Fatalf("only %d problems checked, %d with n-ary functions", checked, nary)
			}
			if (bins == 0) != tc.noBin {
				t.Fatalf("%d n-ary functions moved into binary ones (noNaryBin %v)", bins, tc.noBin)
			}
			if (dee == 0) != tc.noDEE {
				t.Fatalf("dead-end elimination removed values of n-ary functions' variables at %d nodes (noNaryDEE %v)", dee, tc.noDEE)
			}
			if missed > 0 {
				t.Fatalf("the dead-end and elimination queues missed %d changes", missed)
			}
			t.Logf("%d problems, %d with n-ary functions, %d moved into binary ones, n-ary dead ends at %d nodes", checked, nary, bins, dee)
		})
	}
}

// TestEDACNaryVACEqualsBruteForce checks auto's EDAC (VAC at the root, on
// whole costs) against brute force on seeded random problems of unary,
// binary and ternary functions, where the n-ary functions become binary
// ones during search (naryToBin) and VAC works on the binary functions
// at the root; the cases must reach both.
func TestEDACNaryVACEqualsBruteForce(t *testing.T) {
	for _, worst := range []bool{false, true} {
		t.Run(fmt.Sprintf("worst-first=%v", worst), func(t *testing.T) {
			var iters, bins int64
			checked := 0
			for seed := range int64(400) {
				o := randprob.Options{
					Agents: 1, Vars: 8 + int(seed%7), MinDomain: 2, MaxDomain: 2 + int(seed%3),
					MaxArity: 3, Functions: 14 + int(seed%9),
					IntCosts: true, MaxCost: []float64{5, 100}[seed%2], Locality: 0.6,
				}
				p := randprob.New(seed, o)
				if space(p) > 1<<16 {
					continue
				}
				lp := mva.NewLocalProblem(p, wholeAndSubs(p)[0])
				s := NewEDACVAC(lp)
				s.noLocalSearch, s.worstFirst = worst, worst
				checkRow(t, fmt.Sprintf("seed %d", seed), lp, 0, make([]int, lp.NB), NewBruteForce(lp), s, true, make([]int, lp.NumInterior()))
				checked++
				if s.vac != nil {
					iters += s.vac.iters
				}
				bins += s.naryBins
			}
			if checked < 200 || iters == 0 || bins == 0 {
				t.Fatalf("%d problems checked, %d VAC iterations, %d n-ary functions moved into binary ones: the test does not reach that code", checked, iters, bins)
			}
			t.Logf("%d problems, %d VAC iterations, %d n-ary functions moved into binary ones", checked, iters, bins)
		})
	}
}

// checkRow solves row r of lp (its boundary b) by ref, brute force, and
// by s, and fails t unless s's cost is ref's (exactly when intCosts) and
// the assignment s leaves in got costs what s reports. It returns s's
// cost.
func checkRow(t *testing.T, tag string, lp *mva.LocalProblem, r int, b []int, ref, s mva.LocalSolver, intCosts bool, got []int) float64 {
	t.Helper()
	ctx := context.Background()
	wc, err := ref.SolveRow(ctx, b, make([]int, lp.NumInterior()))
	if err != nil {
		t.Fatal(err)
	}
	gc, err := s.SolveRow(ctx, b, got)
	if err != nil {
		t.Fatalf("%s row %d: %v", tag, r, err)
	}
	if !sameCost(gc, wc) || (intCosts && gc != wc) {
		t.Fatalf("%s row %d (boundary %v): %v, bruteforce %v", tag, r, b, gc, wc)
	}
	if e := evalRow(lp, r, got); !mva.IsHard(gc) && e != gc {
		t.Fatalf("%s row %d: reports %v, its assignment %v costs %v", tag, r, gc, got, e)
	}
	return gc
}

// TestEDACCrispNaryEqualsBruteForce checks EDAC on crisp n-ary functions
// (finite entries all 0, as an SHDS home's device tables; the costs in
// the unary and binary functions) against brute force, with generalised
// arc consistency on them (naryGAC) on and off, on whole seeded random
// problems and on subproblems' rows (boundary variables conditioned out,
// Exact's response solver with its implied pairs too). With naryGAC on
// the cases must reach its removals.
func TestEDACCrispNaryEqualsBruteForce(t *testing.T) {
	for _, noGAC := range []bool{false, true} {
		t.Run(fmt.Sprintf("noNaryGAC=%v", noGAC), func(t *testing.T) {
			checked, crisp := 0, 0
			var removed int64
			for seed := range int64(160) {
				o := randprob.Options{
					Agents: 1 + int(seed%2), Vars: 6 + int(seed%7), MinDomain: 2, MaxDomain: 3 + int(seed%3),
					MaxArity: 3 + int(seed%3), Functions: 6 + int(seed%9),
					HardProb: []float64{0.3, 0.5, 0.7}[seed%3], IntCosts: seed%2 == 0, MaxCost: 20,
					Locality: 0.7,
				}
				p := randprob.New(seed, o)
				if space(p) > 1<<14 {
					continue
				}
				for i := range p.Functions {
					if f := &p.Functions[i]; len(f.Scope) >= 3 {
						for e, c := range f.Costs {
							if !mva.IsHard(c) {
								f.Costs[e] = 0
							}
						}
					}
				}
				for i, sub := range wholeAndSubs(p) {
					lp := mva.NewLocalProblem(p, sub)
					if lp.NumInterior() == 0 {
						continue
					}
					rows, err := lp.Rows()
					if err != nil {
						t.Fatal(err)
					}
					ref := NewBruteForce(lp)
					s := NewEDAC(lp)
					s.noNaryGAC = noGAC
					s.verifyQueues = true
					for r := 0; r < rows; r += 1 + rows/4 {
						b := make([]int, lp.NB)
						lp.DecodeRow(r, b)
						tag := fmt.Sprintf("seed %d sub %d row %d", seed, i, r)
						checkRow(t, tag, lp, r, b, ref, s, o.IntCosts, make([]int, lp.NumInterior()))
						if withPairs, ok := withImpliedPairs(lp); ok {
							rs := newResponseSolver(lp, withPairs)
							rs.edac.noNaryGAC = noGAC
							checkRow(t, tag+" response", lp, r, b, ref, rs, o.IntCosts, make([]int, lp.NumInterior()))
							removed += rs.edac.naryGACRemovals
						}
						checked++
					}
					for _, nf := range s.narys {
						if nf.crisp {
							crisp++
							break
						}
					}
					removed += s.naryGACRemovals
					if s.deeMissed > 0 || s.elimMissed > 0 {
						t.Fatalf("seed %d: the queues missed %d dead-end removals and %d eliminations", seed, s.deeMissed, s.elimMissed)
					}
				}
			}
			if checked < 200 || crisp < 50 {
				t.Fatalf("only %d rows checked, %d solvers with crisp n-ary functions", checked, crisp)
			}
			if (removed == 0) != noGAC {
				t.Fatalf("%d values removed by naryGAC (noNaryGAC %v)", removed, noGAC)
			}
			t.Logf("%d rows, %d solvers with crisp n-ary functions, %d values removed by naryGAC", checked, crisp, removed)
		})
	}
}

// TestDominatesPairMatchesTwoCalls compares dead-end elimination's fused
// test on two values with the two calls it replaces, answers and checks
// counted, on the propagated roots of seeded random two-value problems
// (Hard entries, fractional costs) with a few more values removed at
// random, for every variable of two live values and both orders.
func TestDominatesPairMatchesTwoCalls(t *testing.T) {
	compared, either := 0, 0
	for seed := range int64(40) {
		o := randprob.Options{Vars: 8 + int(seed%9), MinDomain: 2, MaxDomain: 2, MaxArity: 2,
			Functions: 30 + int(seed%25), HardProb: []float64{0, 0.1, 0.3}[seed%3],
			IntCosts: seed%2 == 0, MaxCost: 20, Locality: 0.5}
		p := randprob.New(seed, o)
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		s := NewEDAC(lp)
		if !s.condition(nil) {
			continue
		}
		s.ub = mva.Hard
		s.reset()
		s.rooted = true
		if !s.propagate() {
			continue
		}
		rng := rand.New(rand.NewPCG(uint64(seed), 18))
		for x := range s.n {
			if s.size(x) == 2 && rng.IntN(4) == 0 {
				s.remove(x, rng.IntN(2))
			}
		}
		for x := range s.n {
			if s.dom[x] != 2 || s.size(x) != 2 || s.deleted(x) || s.gone[x] {
				continue
			}
			for _, margin := range []float64{0, 1e-9} {
				for b := range 2 {
					a := 1 - b
					c0 := s.checks
					ba, ab := s.dominatesPair(x, b, a, margin)
					got := s.checks - c0
					c0 = s.checks
					wba := s.dominates(x, b, a, margin)
					wab := false
					if !wba {
						wab = s.dominates(x, a, b, margin)
					}
					want := s.checks - c0
					if ba != wba || ab != wab || got != want {
						t.Fatalf("seed %d x%d b=%d: pair %v %v (%d checks), calls %v %v (%d)", seed, x, b, ba, ab, got, wba, wab, want)
					}
					compared++
					if ba || ab {
						either++
					}
				}
			}
		}
	}
	if compared < 200 || either < 10 {
		t.Fatalf("%d comparisons, %d dominated: the test no longer reaches the cases", compared, either)
	}
}

// TestEDACDormantTablesStayZero pins what condition and reset rely on to
// skip the dormant functions: no source and no root elimination writes
// into their tables, on every row of seeded random problems with and
// without a boundary, binary and with n-ary functions (whose planned
// pairs are dormant too).
func TestEDACDormantTablesStayZero(t *testing.T) {
	dormant := 0
	for seed := range int64(30) {
		o := edacOptions(seed)
		o.Vars = 10 + int(seed%15)
		p := randprob.New(seed, o)
		for _, sub := range wholeAndSubs(p) {
			lp := mva.NewLocalProblem(p, sub)
			s := NewEDAC(lp)
			if s.bad != nil {
				continue
			}
			rows, err := lp.Rows()
			if err != nil {
				t.Fatal(err)
			}
			b := make([]int, lp.NB)
			for r := range min(rows, 3) {
				lp.DecodeRow(r, b)
				s.condition(b)
				for k := s.firstDormant; k < len(s.bins); k++ {
					dormant++
					for _, v := range s.bins[k].tab {
						if v != 0 {
							t.Fatalf("seed %d row %d: dormant function %d has table %v", seed, r, k, s.bins[k].tab)
						}
					}
				}
			}
		}
	}
	if dormant == 0 {
		t.Fatal("no dormant function: the test no longer reaches them")
	}
}

// TestDACQueueOrder drives EDAC's DAC queue with seeded random pushes
// (repeats included) and pops, in both orders of ranks, against a plain
// set: each pop must return the queued variable of highest rank (lowest
// once reversed), and clearDAC must hand back and forget every queued one.
func TestDACQueueOrder(t *testing.T) {
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 18))
		n := 1 + rng.IntN(300)
		s := &EDAC{n: n, rank: rng.Perm(n), inDAC: make([]bool, n), dacRev: seed%2 == 0}
		s.dacBits = make([]uint64, (n+63)/64)
		s.dacHi, s.dacLo = -1, len(s.dacBits)
		s.byRank = make([]int32, n)
		for x, r := range s.rank {
			s.byRank[r] = int32(x)
		}
		set := map[int]bool{}
		for step := range 20 * n {
			if rng.IntN(3) > 0 || len(set) == 0 {
				x := rng.IntN(n)
				s.pushDAC(x)
				set[x] = true
				continue
			}
			if step%97 == 0 {
				got := map[int]bool{}
				s.clearDAC(func(x int) { got[x] = true; s.inDAC[x] = false })
				if len(got) != len(set) || s.dacN != 0 {
					t.Fatalf("seed %d: clearDAC gave %d variables of %d", seed, len(got), len(set))
				}
				for x := range set {
					if !got[x] {
						t.Fatalf("seed %d: clearDAC missed %d", seed, x)
					}
				}
				clear(set)
				continue
			}
			want := -1
			for x := range set {
				if want < 0 || (s.rank[x] > s.rank[want]) != s.dacRev {
					want = x
				}
			}
			if got := s.popDAC(); got != want || s.inDAC[got] {
				t.Fatalf("seed %d step %d: popped %d, want %d", seed, step, got, want)
			}
			delete(set, want)
			if s.dacN != len(set) {
				t.Fatalf("seed %d: %d queued, want %d", seed, s.dacN, len(set))
			}
		}
	}
}

// TestVarQueueTakeSorted pushes seeded random variables (repeats
// included, sparse and dense) into a varQueue and checks that take
// returns each once, in index order, and leaves the queue empty.
func TestVarQueueTakeSorted(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 18))
		n := 1 + rng.IntN(500)
		v := newVarQueue(n)
		for round := range 5 {
			set := map[int]bool{}
			for range rng.IntN(2*n) >> (round % 4 * 2) {
				x := rng.IntN(n)
				v.push(x)
				set[x] = true
			}
			got := v.take()
			want := make([]int, 0, len(set))
			for x := range set {
				want = append(want, x)
			}
			slices.Sort(want)
			if !slices.Equal(got, want) || len(v.q) != 0 || slices.Contains(v.in, true) {
				t.Fatalf("seed %d round %d: take %v, want %v", seed, round, got, want)
			}
		}
	}
}
