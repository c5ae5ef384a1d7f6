package local

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
)

// aobbConfigs are the budgets AOBB is checked under: the default, small
// i-bounds (weak heuristics, real search), a budget too small for any
// cache or heuristic (plain AND/OR branch and bound), one that fits
// some caches but not all, and every row reparameterised (ShiftRows),
// also escalating at once, so that each row's shift is continued to
// convergence (deepShift), kept or thrown back, and every cache a map
// (the small problems here would get dense tables), for good or until it
// densifies: values and lower bounds share the map's entries (see
// aobbCache.slots), and a bound may take a stale value's slot.
var aobbConfigs = []struct {
	name     string
	opts     AOBBOptions
	escalate bool // escalate the heuristic after a few reads of search
	race     bool // one row: race the pseudo-trees from the first check
	sparse   int  // 1: every cache a map (sparsify), 2: maps that densify
}{
	{"default", AOBBOptions{}, false, false, 0},
	{"i1", AOBBOptions{IBound: 1}, false, false, 0},
	{"i2", AOBBOptions{IBound: 2}, false, false, 0},
	{"no-memory", AOBBOptions{Memory: 1}, false, false, 0},
	{"tight", AOBBOptions{Memory: 600, IBound: 2}, false, false, 0},
	{"escalate", AOBBOptions{}, true, false, 0},
	{"shift-rows", AOBBOptions{ShiftRows: true}, false, false, 0},
	{"shift-rows escalate", AOBBOptions{ShiftRows: true}, true, false, 0},
	{"race", AOBBOptions{IBound: 1}, false, true, 0},
	{"shift-rows race", AOBBOptions{IBound: 1, ShiftRows: true}, false, true, 0},
	{"i1 sparse", AOBBOptions{IBound: 1}, false, false, 1},
	{"i2 sparse densify", AOBBOptions{IBound: 2}, false, false, 2},
	{"shift-rows i1 sparse", AOBBOptions{IBound: 1, ShiftRows: true}, false, false, 1},
}

// sparsify makes every cache of s that would get a dense table a map, as
// a cache over too many contexts for one is (see aobbCache); grow lets
// the map become a dense table once it fills (densify).
func sparsify(s *AOBB, grow bool) {
	for v := range s.cache {
		if ca := &s.cache[v]; ca.on && ca.dense && ca.vals == nil {
			ca.dense, ca.grow, ca.slots = false, grow, slotTable{}
		}
	}
}

// checkAOBBRows solves the rows of lp in seq order with one AOBB per
// configuration and compares every answer with brute force: the cost, and
// the cost of the returned assignment. With edits, a quarter of the rows
// are preceded by an edit of one function entry in place.
func checkAOBBRows(t *testing.T, tag string, lp *mva.LocalProblem, seq [][]int, rng *rand.Rand, edits, exact bool) (escalations, raceWins int, boundHits int64) {
	t.Helper()
	ctx := context.Background()
	same := sameCost
	if exact {
		same = func(a, b float64) bool { return a == b }
	}
	solvers := make([]*AOBB, len(aobbConfigs))
	for k, c := range aobbConfigs {
		if c.opts.ShiftRows && lp.NB == 0 {
			continue // one row is always reparameterised: the default
		}
		solvers[k] = NewAOBB(lp, c.opts)
		if c.race {
			solvers[k].raceSolo, solvers[k].raceFirst = 1, 1
		}
		if c.sparse > 0 {
			sparsify(solvers[k], c.sparse == 2)
		}
		if c.escalate {
			solvers[k].searchFloor, solvers[k].searchShare = 1, 0
			if err := solvers[k].setHeuristic(2); err != nil {
				t.Fatal(err)
			}
		}
	}
	ref := NewBruteForce(lp)
	in := make([]int, lp.NumInterior())
	for n, b := range seq {
		if edits && len(lp.Funcs) > 0 && rng.IntN(4) == 0 {
			f := lp.Funcs[rng.IntN(len(lp.Funcs))].Costs
			c := float64(rng.IntN(10))
			if rng.IntN(8) == 0 {
				c = mva.Hard
			}
			f[rng.IntN(len(f))] = c
		}
		want, err := ref.SolveRow(ctx, b, in)
		if err != nil {
			t.Fatal(err)
		}
		for k, s := range solvers {
			if s == nil {
				continue
			}
			got, err := s.SolveRow(ctx, b, in)
			if err != nil {
				t.Fatalf("%s row %d %v: aobb %s: %v", tag, n, b, aobbConfigs[k].name, err)
			}
			if !same(got, want) {
				t.Fatalf("%s row %d %v: aobb %s = %v, bruteforce = %v (%s)", tag, n, b, aobbConfigs[k].name, got, want, s.Describe())
			}
			a := make([]int, len(lp.Vars))
			copy(a, b)
			copy(a[lp.NB:], in)
			if e := lp.Eval(a); !mva.IsHard(got) && !same(e, got) {
				t.Fatalf("%s row %d: aobb %s reports %v but its assignment %v costs %v", tag, n, aobbConfigs[k].name, got, in, e)
			}
		}
	}
	for _, s := range solvers {
		if s != nil {
			escalations += s.escalations
			boundHits += s.boundHits
			if s.raceTree > 0 {
				raceWins++
			}
		}
	}
	return escalations, raceWins, boundHits
}

// TestAOBBWholeProblems: hundreds of seeded problems, each one row,
// against brute force under every budget.
func TestAOBBWholeProblems(t *testing.T) {
	checked, escalations, raceWins, boundHits := 0, 0, 0, int64(0)
	for seed := range int64(400) {
		o := randprob.Options{
			Agents: 1, Vars: 4 + int(seed%11), MinDomain: 2, MaxDomain: 2 + int(seed%3),
			MaxArity: 1 + int(seed%4), Functions: 3 + int(seed%20),
			HardProb: []float64{0, 0.05, 0.3}[seed%3], IntCosts: seed%5 != 0, MaxCost: 9,
		}
		p := randprob.New(seed, o)
		if space(p) > 1<<16 {
			continue
		}
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		e, w, h := checkAOBBRows(t, fmt.Sprintf("seed %d", seed), lp, [][]int{{}}, nil, false, o.IntCosts)
		escalations += e
		raceWins += w
		boundHits += h
		checked++
	}
	if checked < 300 {
		t.Fatalf("only %d problems checked", checked)
	}
	if escalations < 20 {
		t.Errorf("the heuristic escalated %d times: the escalation is hardly tested", escalations)
	}
	if raceWins < 20 {
		t.Errorf("a tree other than the first won %d races: the race is hardly tested", raceWins)
	}
	t.Logf("%d bounds raised by cached lower bounds", boundHits)
	if boundHits < 50 {
		t.Errorf("cached lower bounds raised %d bounds: hardly tested", boundHits)
	}
}

// TestAOBBRows: MVA subproblems, rows in table order, repeated, changed in
// one variable and random, with edits of the functions in place between
// rows: the caches and heuristics reused across rows must never give a
// stale answer.
func TestAOBBRows(t *testing.T) {
	checked, boundHits := 0, int64(0)
	for seed := range int64(200) {
		o := randprob.Options{
			Agents: 2 + int(seed%2), Vars: 5 + int(seed%9), MinDomain: 2, MaxDomain: 2 + int(seed%3),
			MaxArity: 1 + int(seed%4), Functions: 4 + int(seed%14),
			HardProb: []float64{0, 0.1, 0.25}[seed%3], IntCosts: seed%4 != 0, MaxCost: 9,
			Locality: 0.7,
		}
		p := randprob.New(seed, o)
		if space(p) > 1<<15 {
			continue
		}
		d := mva.Decompose(p)
		for i := range d.Subs {
			lp := mva.NewLocalProblem(p, &d.Subs[i])
			rows, err := lp.Rows()
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(seed), uint64(i)))
			var seq [][]int
			for r := range rows {
				b := make([]int, lp.NB)
				lp.DecodeRow(r, b)
				seq = append(seq, b)
			}
			seq = append(seq, seq[len(seq)-1], seq[0])
			for range rows {
				b := append([]int(nil), seq[len(seq)-1]...)
				if lp.NB > 0 && rng.IntN(2) == 0 {
					k := rng.IntN(lp.NB)
					b[k] = rng.IntN(lp.Domains[k])
				} else {
					for k := range b {
						b[k] = rng.IntN(lp.Domains[k])
					}
				}
				seq = append(seq, b)
			}
			_, _, h := checkAOBBRows(t, fmt.Sprintf("seed %d agent %d", seed, i), lp, seq, rng, seed%2 == 0, o.IntCosts)
			boundHits += h
			checked++
		}
	}
	if checked < 300 {
		t.Fatalf("only %d subproblems checked", checked)
	}
	t.Logf("%d bounds raised by cached lower bounds", boundHits)
	if boundHits < 50 {
		t.Errorf("cached lower bounds raised %d bounds: hardly tested", boundHits)
	}
}

// TestAOBBMemoryBound: a wide problem whose exact messages would not fit
// gets a smaller i-bound and fewer caches, within the budget, and still
// the optimum.
func TestAOBBMemoryBound(t *testing.T) {
	p := randprob.New(11, randprob.Options{Vars: 13, MinDomain: 3, MaxDomain: 3, MaxArity: 3, Functions: 30, IntCosts: true, MaxCost: 20})
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	ref := NewBruteForce(lp)
	in := make([]int, lp.NumInterior())
	want, err := ref.SolveRow(context.Background(), nil, in)
	if err != nil {
		t.Fatal(err)
	}
	full := NewAOBB(lp, AOBBOptions{})
	for _, mem := range []int64{1 << 30, 1 << 14, 1 << 10, 64, 1} {
		s := NewAOBB(lp, AOBBOptions{Memory: mem})
		if s.MemoryPlanned() > mem {
			t.Errorf("memory %d: planned %d bytes", mem, s.MemoryPlanned())
		}
		if mem < 1<<14 && s.IBound() >= full.IBound() {
			t.Errorf("memory %d: i-bound %d, as with no bound (%d)", mem, s.IBound(), full.IBound())
		}
		got, err := s.SolveRow(context.Background(), nil, in)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("memory %d (%s): %v, bruteforce %v", mem, s.Describe(), got, want)
		}
		if s.MemoryUsed() > mem {
			t.Errorf("memory %d: %d bytes held after the search", mem, s.MemoryUsed())
		}
	}
}

// TestAOBBCancel: a cancelled context stops the search with its error.
func TestAOBBCancel(t *testing.T) {
	p := randprob.New(5, randprob.Options{Vars: 60, MinDomain: 4, MaxDomain: 4, MaxArity: 3, Functions: 200, IntCosts: true, MaxCost: 100})
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	s := NewAOBB(lp, AOBBOptions{Memory: 1 << 12})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.SolveRow(ctx, nil, make([]int, lp.NumInterior())); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestPseudoTreeWidth: the pseudo-tree's contexts give the induced width
// min-fill reports for the same order, every function's variables lie on
// one root-to-leaf path, and every context is a set of ancestors.
func TestPseudoTreeWidth(t *testing.T) {
	for seed := range int64(100) {
		p := randprob.New(seed, randprob.Options{Vars: 5 + int(seed%30), MinDomain: 2, MaxDomain: 3, MaxArity: 1 + int(seed%4), Functions: 5 + int(seed%40)})
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		g := mva.NewGraph(len(lp.Vars))
		var scopes [][]int
		for _, f := range lp.Funcs {
			g.AddClique(f.Scope)
			scopes = append(scopes, f.Scope)
		}
		all := make([]int, len(lp.Vars))
		for v := range all {
			all[v] = v
		}
		order, width := g.MinFill(all)
		pt := newPseudoTree(len(lp.Vars), 0, scopes, order)
		if pt.width != width {
			t.Errorf("seed %d: pseudo-tree width %d, min-fill %d", seed, pt.width, width)
		}
		ancestor := func(a, v int) bool {
			for u := pt.parent[v]; u >= 0; u = pt.parent[u] {
				if u == a {
					return true
				}
			}
			return false
		}
		for _, sc := range scopes {
			d := pt.deepest(sc, 0)
			for _, u := range sc {
				if u != d && !ancestor(u, d) {
					t.Fatalf("seed %d: %d and %d share a function off one path", seed, u, d)
				}
			}
		}
		for _, v := range order {
			for _, u := range pt.ctx[v] {
				if !ancestor(u, v) {
					t.Fatalf("seed %d: context %d of %d is no ancestor", seed, u, v)
				}
			}
		}
	}
}

// TestDenseCache: the dense-or-sparse choice of a cache holds for
// contexts whose byte count overflows int64 (24^13 assignments, as on
// frequency assignment, once panicked in cachePut).
func TestDenseCache(t *testing.T) {
	for _, tc := range []struct {
		n, sub int
		want   bool
	}{
		{1, 1, true},
		{denseCacheBytes / 14, 1, true},
		{denseCacheBytes/14 + 1, 1, false},
		{1 << 58, 30, false},
		{1 << 62, 1, false},
		{876488338465357824, 60, false}, // 24^13
	} {
		if got := denseCache(tc.n, tc.sub); got != tc.want {
			t.Errorf("denseCache(%d, %d) = %v, want %v", tc.n, tc.sub, got, tc.want)
		}
	}
}

// TestAOBBSolveRowWithin: on seeded MVA subproblems with integer costs,
// every row asked below bounds around its brute-force optimum finds it
// exactly when it is below the bound, with an assignment of that cost;
// rows asked within a budget of a few checks either stop (done false)
// or answer right, and the solver answers the next rows right after a
// stopped one (its caches and incumbent are not left stale).
func TestAOBBSolveRowWithin(t *testing.T) {
	ctx := context.Background()
	var rows, found, missed, stopped int
	for seed := range int64(120) {
		o := randprob.Options{
			Agents: 2, Vars: 6 + int(seed%8), MinDomain: 2, MaxDomain: 2 + int(seed%3),
			MaxArity: 1 + int(seed%4), Functions: 5 + int(seed%12),
			HardProb: []float64{0, 0.1, 0.25}[seed%3], IntCosts: true, MaxCost: 9, Locality: 0.7,
		}
		p := randprob.New(seed, o)
		if space(p) > 1<<15 {
			continue
		}
		d := mva.Decompose(p)
		for i := range d.Subs {
			lp := mva.NewLocalProblem(p, &d.Subs[i])
			n, err := lp.Rows()
			if err != nil {
				t.Fatal(err)
			}
			ref := NewBruteForce(lp)
			in := make([]int, lp.NumInterior())
			rng := rand.New(rand.NewPCG(uint64(seed), uint64(i)))
			for _, opts := range []AOBBOptions{{}, {ShiftRows: true}} {
				s := NewAOBB(lp, opts)
				for range 2 * n {
					b := make([]int, lp.NB)
					lp.DecodeRow(rng.IntN(n), b)
					want, err := ref.SolveRow(ctx, b, in)
					if err != nil {
						t.Fatal(err)
					}
					tag := fmt.Sprintf("seed %d agent %d row %v shift %v", seed, i, b, opts.ShiftRows)
					var checks int64
					if rng.IntN(3) == 0 {
						checks = 1 + int64(rng.IntN(40))
					}
					ub := math.Inf(1)
					if !mva.IsHard(want) {
						ub = want + float64(rng.IntN(3)-1) // below, at or above the optimum
					}
					got, ok, done, err := s.SolveRowWithin(ctx, b, in, ub, checks)
					if err != nil {
						t.Fatalf("%s: %v", tag, err)
					}
					rows++
					if !done {
						if checks == 0 {
							t.Fatalf("%s: stopped without a budget", tag)
						}
						stopped++
						continue
					}
					if ok != (want < ub) {
						t.Fatalf("%s: below %v: found %v (%v), the optimum is %v", tag, ub, ok, got, want)
					}
					if !ok {
						missed++
						continue
					}
					found++
					a := make([]int, len(lp.Vars))
					copy(a, b)
					copy(a[lp.NB:], in)
					if got != want || lp.Eval(a) != want {
						t.Fatalf("%s: %v, its assignment costs %v; the optimum is %v", tag, got, lp.Eval(a), want)
					}
				}
			}
		}
	}
	t.Logf("%d rows: %d found below the bound, %d not, %d stopped by the budget", rows, found, missed, stopped)
	if found < 200 || missed < 100 || stopped < 50 {
		t.Errorf("too few cases: %d found, %d missed, %d stopped of %d", found, missed, stopped, rows)
	}
}

// TestAOBBRaceWithin: the first row of a problem that reparameterises its
// rows races its pseudo-trees within SolveRowWithin's budget, from the
// first check: against brute force, every answer that ends is the
// optimum, a budget no race needs always ends, and the rows after the
// race (on the tree it kept) are exact too.
func TestAOBBRaceWithin(t *testing.T) {
	ctx := context.Background()
	var ended, stopped, raced int
	for seed := range int64(80) {
		o := randprob.Options{
			Agents: 2, Vars: 7 + int(seed%7), MinDomain: 2, MaxDomain: 2 + int(seed%3),
			MaxArity: 2 + int(seed%3), Functions: 6 + int(seed%10),
			HardProb: []float64{0, 0.1}[seed%2], IntCosts: true, MaxCost: 9, Locality: 0.6,
		}
		p := randprob.New(seed, o)
		if space(p) > 1<<14 {
			continue
		}
		d := mva.Decompose(p)
		for i := range d.Subs {
			lp := mva.NewLocalProblem(p, &d.Subs[i])
			if lp.NB == 0 || lp.NumInterior() < 3 {
				continue
			}
			n, err := lp.Rows()
			if err != nil {
				t.Fatal(err)
			}
			ref := NewBruteForce(lp)
			in := make([]int, lp.NumInterior())
			rng := rand.New(rand.NewPCG(uint64(seed), uint64(i)))
			s := NewAOBB(lp, AOBBOptions{IBound: 1, ShiftRows: true})
			s.raceSolo, s.raceFirst = 1, 1
			budget := []int64{1 << 40, 1 + int64(rng.IntN(200)), 1 + int64(rng.IntN(5000))}[seed%3]
			for r := range 4 {
				b := make([]int, lp.NB)
				lp.DecodeRow(rng.IntN(n), b)
				want, err := ref.SolveRow(ctx, b, in)
				if err != nil {
					t.Fatal(err)
				}
				tag := fmt.Sprintf("seed %d agent %d row %d %v budget %d", seed, i, r, b, budget)
				got, ok, done, err := s.SolveRowWithin(ctx, b, in, math.Inf(1), budget)
				if err != nil {
					t.Fatalf("%s: %v", tag, err)
				}
				if !done {
					if budget == 1<<40 {
						t.Fatalf("%s: stopped", tag)
					}
					stopped++
					break
				}
				ended++
				if mva.IsHard(want) {
					if ok {
						t.Fatalf("%s: found %v, no row is feasible", tag, got)
					}
					continue
				}
				a := make([]int, len(lp.Vars))
				copy(a, b)
				copy(a[lp.NB:], in)
				if !ok || got != want || lp.Eval(a) != want {
					t.Fatalf("%s: %v (found %v), its assignment costs %v; the optimum is %v", tag, got, ok, lp.Eval(a), want)
				}
			}
			if s.raceTrees > 1 {
				raced++
			}
		}
	}
	t.Logf("%d rows ended, %d stopped by the budget, %d problems raced", ended, stopped, raced)
	if ended < 100 || stopped == 0 {
		t.Errorf("%d rows ended, %d stopped: the test does not reach both cases", ended, stopped)
	}
}

// TestAOBBShiftRowsReuse: a problem whose rows are reparameterised
// (ShiftRows, a best response) keeps its cached values from row to row,
// in the functions' own costs, where no function below them changed its
// conditioning, while each row gets its own shifts. On seeded problems
// shaped like a home's response (branchyRow: independent branches under
// one root, each read by its own context variables, as a home's devices
// read the neighbours' levels of their own slots), rows as MGM asks them
// — one or two context values changed at a time, some repeated — must
// each equal brute force and a fresh solver's answer from scratch,
// whatever was kept. The test counts the rows that kept cached values
// (with some left valid) and the later rows that kept none (a context
// moved a Hard entry), and fails when too few of each ran.
func TestAOBBShiftRowsReuse(t *testing.T) {
	ctx := context.Background()
	var rows, kept, dropped int
	var boundHits int64
	for seed := range int64(30) {
		lp := branchyRow(seed)
		ref := NewBruteForce(lp)
		rng := rand.New(rand.NewPCG(uint64(seed), 3))
		// Weak bounds: the search and its caches matter.
		opts := AOBBOptions{ShiftRows: true, IBound: 1}
		s := NewAOBB(lp, opts)
		b := make([]int, lp.NB)
		in, fresh := make([]int, lp.NumInterior()), make([]int, lp.NumInterior())
		// Brute force's and a fresh solver's answers, per boundary.
		truths := map[string][2]float64{}
		for r := range 20 {
			if r > 0 && rng.IntN(6) > 0 {
				for range 1 + rng.IntN(2) {
					k := rng.IntN(lp.NB)
					b[k] = rng.IntN(lp.Domains[k])
				}
			}
			tag := fmt.Sprintf("seed %d row %d %v", seed, r, b)
			truth, ok := truths[fmt.Sprint(b)]
			if !ok {
				want, err := ref.SolveRow(ctx, b, in)
				if err != nil {
					t.Fatal(err)
				}
				scratch, err := NewAOBB(lp, opts).SolveRow(ctx, b, fresh)
				if err != nil {
					t.Fatal(err)
				}
				truth = [2]float64{want, scratch}
				truths[fmt.Sprint(b)] = truth
			}
			want, scratch := truth[0], truth[1]
			before := s.keptRows
			got, err := s.SolveRow(ctx, b, in)
			if err != nil {
				t.Fatalf("%s: %v", tag, err)
			}
			rows++
			if got != want || scratch != want {
				t.Fatalf("%s: kept %v, from scratch %v, brute force %v (%s)", tag, got, scratch, want, s.Describe())
			}
			a := make([]int, len(lp.Vars))
			copy(a, b)
			copy(a[lp.NB:], in)
			if e := lp.Eval(a); e != want {
				t.Fatalf("%s: reports %v but its assignment costs %v", tag, got, e)
			}
			if s.keptRows == before {
				if r > 0 {
					dropped++
				}
				continue
			}
			for v := range s.cache {
				if ca := &s.cache[v]; ca.on && ca.vals != nil && !s.dirty[v] {
					kept++
					break
				}
			}
		}
		boundHits += s.boundHits
	}
	t.Logf("%d rows: %d kept cached values, %d later rows kept none (their Hard entries moved); %d bounds raised by cached lower bounds", rows, kept, dropped, boundHits)
	if kept < 25 || dropped < 30 || boundHits < 10 {
		t.Errorf("too few cases: %d kept cached values, %d kept none, %d bounds raised by cached lower bounds, of %d rows", kept, dropped, boundHits, rows)
	}
}

// branchyRow returns a seeded problem shaped like a home's response: a
// root variable over 3 branches, each a chain of 3 variables with
// unary and pairwise costs (integers; in odd seeds some Hard), and per
// branch one or two context (boundary) variables that only its functions
// read, one of them through a table over the branch's leaf that, in odd
// seeds, forbids a value of the leaf in some contexts (a Hard that shifts
// propagate).
func branchyRow(seed int64) *mva.LocalProblem {
	rng := rand.New(rand.NewPCG(uint64(seed), 11))
	hard := seed%2 == 1
	branches, length := 3, 3
	nb := branches + int(seed%3)
	nv := nb + 1 + branches*length
	lp := &mva.LocalProblem{Problem: &mva.Problem{Name: "branchy"}, NB: nb}
	for k := range nv {
		d := 2
		if k >= nb && rng.IntN(4) == 0 {
			d = 3
		}
		lp.Problem.Variables = append(lp.Problem.Variables, mva.Variable{Name: fmt.Sprint("x", k), Domain: make([]string, d)})
		lp.Vars = append(lp.Vars, k)
		lp.Domains = append(lp.Domains, d)
	}
	table := func(scope ...int) {
		n := 1
		for _, v := range scope {
			n *= lp.Domains[v]
		}
		costs := make([]float64, n)
		for e := range costs {
			costs[e] = float64(rng.IntN(100))
			if hard && rng.IntN(12) == 0 {
				costs[e] = mva.Hard
			}
		}
		lp.Funcs = append(lp.Funcs, mva.LocalFunction{Scope: scope, Costs: costs})
	}
	root := nb
	table(root)
	for br := range branches {
		first := nb + 1 + br*length
		table(root, first)
		for k := range length {
			v := first + k
			table(v)
			if k > 0 {
				table(v-1, v)
			}
		}
		// A loop through the root: shifts alone do not make the bounds
		// exact, and the search runs.
		table(root, first, first+length-1)
		// The branch's context: a table over (context, leaf) whose
		// context value 1 forbids the leaf's value 0, and, for the extra
		// context variables, a pairwise cost with the branch's middle.
		leaf := first + length - 1
		c := br
		costs := make([]float64, lp.Domains[c]*lp.Domains[leaf])
		for e := range costs {
			costs[e] = float64(rng.IntN(100))
		}
		if hard {
			costs[1*lp.Domains[leaf]+0] = mva.Hard
		}
		lp.Funcs = append(lp.Funcs, mva.LocalFunction{Scope: []int{c, leaf}, Costs: costs})
		if extra := branches + br; extra < nb {
			table(extra, first+1)
		}
	}
	return lp
}

// TestAOBBCacheModel drives the caches of seeded problems through random
// sequences of stored values, stored lower bounds, lookups and forgotten
// generations, dense, sparse and sparse-then-dense (densify), against a
// model of what a cache promises: a lookup finds the value stored in the
// current generation, with its subproblem's assignment, else the highest
// bound stored in it, else nothing. Sparse caches keep values and bounds
// under one map entry (aobbCache.slots), a bound may take the slot of a
// stale value, and densify moves both into the table.
func TestAOBBCacheModel(t *testing.T) {
	type entry struct {
		val   float64
		sol   []int
		valOK bool
		lb    float64
		lbOK  bool
	}
	checked, densified := 0, 0
	var kinds [3]int // lookups that found nothing, a value, a bound
	for seed := range int64(150) {
		p := randprob.New(seed, randprob.Options{
			Agents: 1, Vars: 8 + int(seed%8), MinDomain: 2, MaxDomain: 3,
			MaxArity: 2 + int(seed%2), Functions: 8 + int(seed%8), IntCosts: true, MaxCost: 9,
		})
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		for mode := range 3 {
			s := NewAOBB(lp, AOBBOptions{})
			if s.bad != nil {
				t.Fatal(s.bad)
			}
			if mode > 0 {
				sparsify(s, false)
			}
			rng := rand.New(rand.NewPCG(uint64(seed), uint64(mode)))
			for c := range s.cache {
				ca := &s.cache[c]
				if !ca.on || ca.size > boundContexts {
					continue
				}
				checked++
				model := map[int]*entry{}
				// set gives the context a random assignment (rand
				// below the cache's contexts' count) and the subtree
				// random values.
				set := func() int {
					for _, u := range ca.ctx {
						s.val[u] = rng.IntN(lp.Domains[u])
					}
					for _, u := range s.pt.subtree[c] {
						s.val[u] = rng.IntN(lp.Domains[u])
					}
					e := s.cacheKey(ca)
					if model[e] == nil {
						model[e] = &entry{}
					}
					return e
				}
				for op := range 400 {
					switch {
					case op%50 == 49:
						if op == 49 {
							ca.gen = lbGen - 1 // the next generation wraps
						}
						s.forget(ca)
						clear(model)
						continue
					case op == 120 && mode == 2 && !ca.dense:
						// A map with stale entries of both kinds
						// (forgotten at op 99) fills, then densifies.
						ca.grow = true
					}
					e := set()
					m := model[e]
					switch r := rng.IntN(10); {
					case r < 3:
						x := float64(rng.IntN(50))
						s.cachePut(c, x)
						m.val, m.valOK = x, true
						m.sol = m.sol[:0]
						for _, u := range s.pt.subtree[c] {
							m.sol = append(m.sol, s.val[u])
						}
					case r < 7:
						x := float64(rng.IntN(50))
						s.cacheBound(c, x)
						if !m.valOK && (!m.lbOK || x > m.lb) {
							m.lb, m.lbOK = x, true
						}
					default:
						x, kind := s.cacheLookup(c)
						kinds[kind]++
						switch {
						case m.valOK:
							if kind != cachedExact || x != m.val {
								t.Fatalf("seed %d mode %d var %d op %d: lookup %v (kind %d), stored value %v", seed, mode, c, op, x, kind, m.val)
							}
							for k, u := range s.pt.subtree[c] {
								if s.val[u] != m.sol[k] {
									t.Fatalf("seed %d mode %d var %d op %d: subtree assignment not restored", seed, mode, c, op)
								}
							}
						case m.lbOK:
							if kind != cachedBound || x != m.lb {
								t.Fatalf("seed %d mode %d var %d op %d: lookup %v (kind %d), stored bound %v", seed, mode, c, op, x, kind, m.lb)
							}
						case kind != cachedNone:
							t.Fatalf("seed %d mode %d var %d op %d: lookup %v (kind %d) of nothing stored", seed, mode, c, op, x, kind)
						}
					}
				}
				if mode == 2 && ca.dense {
					densified++
				}
			}
		}
	}
	t.Logf("%d caches, %d densified; lookups: %v (none, value, bound)", checked, densified, kinds)
	if checked < 300 || densified < 50 || min(kinds[0], kinds[1], kinds[2]) < 1000 {
		t.Fatalf("%d caches, %d densified, lookups %v: hardly tested", checked, densified, kinds)
	}
}

// gridProblem is an n×n grid of binary variables with seeded unary and
// pairwise costs, one pair in five with one entry Hard: the shape of the
// FABE Bayesian grids, small enough for bucket elimination. With
// hardPairs the pairs cost nothing but their Hard entries, so that the
// costs are all unary, as in an SHDS response, and shifting them through
// the pairs raises the bound much.
func gridProblem(seed int64, n int, hardPairs bool) *mva.LocalProblem {
	rng := rand.New(rand.NewPCG(uint64(seed), 18))
	lp := &mva.LocalProblem{Problem: &mva.Problem{Name: "grid"}}
	for k := range n * n {
		lp.Problem.Variables = append(lp.Problem.Variables, mva.Variable{Name: fmt.Sprint("x", k), Domain: make([]string, 2)})
		lp.Vars = append(lp.Vars, k)
		lp.Domains = append(lp.Domains, 2)
		lp.Funcs = append(lp.Funcs, mva.LocalFunction{Scope: []int{k}, Costs: []float64{float64(rng.IntN(20)), float64(rng.IntN(20))}})
	}
	pair := func(a, b int) {
		costs := make([]float64, 4)
		for e := range costs {
			if !hardPairs {
				costs[e] = float64(rng.IntN(20))
			}
		}
		if rng.IntN(5) == 0 {
			costs[rng.IntN(4)] = mva.Hard
		}
		lp.Funcs = append(lp.Funcs, mva.LocalFunction{Scope: []int{a, b}, Costs: costs})
	}
	for r := range n {
		for c := range n {
			if c+1 < n {
				pair(r*n+c, r*n+c+1)
			}
			if r+1 < n {
				pair(r*n+c, (r+1)*n+c)
			}
		}
	}
	return lp
}

// TestAOBBEarlyEscalation: a problem without a boundary whose search on
// its first heuristic passes earlyShare times that heuristic's reads
// escalates there, long before the usual limit (2^22 checks), and still
// finds bucket elimination's optimum; the deep shift tried there is kept
// on some of the grids whose costs are all unary (then the search starts
// again on the same heuristic, and may stop early once more). The first
// heuristic is made small (1024 entries) so that 14×14 grids search.
func TestAOBBEarlyEscalation(t *testing.T) {
	saved := firstHeuristicEntries
	firstHeuristicEntries = 1024
	defer func() { firstHeuristicEntries = saved }()
	early, kept := 0, 0
	for seed := range int64(18) {
		lp := gridProblem(seed, 14, seed >= 12)
		be, err := NewBE(lp, BEOptions{MaxEntries: 1 << 30})
		if err != nil {
			t.Fatalf("seed %d: BE: %v", seed, err)
		}
		want, err := be.SolveRow(context.Background(), nil, make([]int, len(lp.Vars)))
		if err != nil {
			t.Fatalf("seed %d: BE: %v", seed, err)
		}
		s := NewAOBB(lp, AOBBOptions{})
		got, err := s.SolveRow(context.Background(), nil, make([]int, len(lp.Vars)))
		if err != nil {
			t.Fatalf("seed %d: AOBB: %v", seed, err)
		}
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("seed %d: AOBB %v, BE %v", seed, got, want)
		}
		if s.checks >= s.searchFloor {
			t.Errorf("seed %d: %d checks, past the usual limit %d: the test proves nothing", seed, s.checks, s.searchFloor)
		}
		if s.earlyEscalations > 1+s.deepShifts || s.earlyEscalations > s.escalations+s.deepShifts {
			t.Errorf("seed %d: %d early stops, %d escalations, %d deep shifts: only the first heuristic's searches may stop early", seed, s.earlyEscalations, s.escalations, s.deepShifts)
		}
		if s.earlyEscalations > 0 {
			early++
			kept += s.deepShifts
		}
	}
	t.Logf("%d of 18 grids escalated early, %d deep shifts kept", early, kept)
	if early < 9 || kept < 1 {
		t.Errorf("%d of 18 grids escalated early, %d kept a deep shift: the rule is hardly tested", early, kept)
	}
}

// TestMiniBucketsGroupByOverlap: within a bucket a factor goes into the
// mini-bucket it adds the fewest variables to, not the first it fits: at
// i-bound 4, x0's bucket of {x0,x1,x2}, {x0,x3,x4} and {x0,x3} puts the
// last with {x0,x3,x4} (a message over x3, x4) where the first fit would
// have put it with {x0,x1,x2} (a message over x1, x2, x3).
func TestMiniBucketsGroupByOverlap(t *testing.T) {
	scopes := [][]int{{0, 1, 2}, {0, 3, 4}, {0, 3}}
	pt := newPseudoTree(5, 0, scopes, []int{0, 1, 2, 3, 4})
	var sc mbScratch
	steps, _, ok := mbSymbolic(pt, []int{2, 2, 2, 2, 2}, scopes, 4, 1<<20, true, &sc)
	if !ok {
		t.Fatal("the partition does not fit")
	}
	found := false
	for _, st := range steps {
		if st.v != 0 || !slices.Contains(st.in, 2) {
			continue
		}
		found = true
		out := slices.Sorted(slices.Values(st.out))
		if !slices.Equal(out, []int{3, 4}) || !slices.Contains(st.in, 1) {
			t.Errorf("{x0,x3} went into a mini-bucket with inputs %v and message over %v, want with {x0,x3,x4}, over [3 4]", st.in, out)
		}
	}
	if !found {
		t.Fatal("no mini-bucket of x0 holds {x0,x3}")
	}
}

// TestSlotTable: the sparse caches' table answers as Go's map does over
// seeded sequences of sets and lookups (keys spread and keys that are
// multiples of a stride, as context indices are), across its growths.
func TestSlotTable(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 11))
		var tab slotTable
		ref := map[int]int32{}
		stride := 1 + r.IntN(64)
		span := 1 + r.IntN(1<<uint(4+seed%20))
		for range 5000 {
			k := r.IntN(span) * stride
			if r.IntN(3) == 0 {
				v := int32(r.IntN(1<<20) - 1<<19)
				tab.set(k, v)
				ref[k] = v
				continue
			}
			got, ok := tab.get(k)
			want, wok := ref[k]
			if ok != wok || got != want {
				t.Fatalf("seed %d: get(%d) = %d, %v; map: %d, %v", seed, k, got, ok, want, wok)
			}
		}
		if tab.n != len(ref) {
			t.Fatalf("seed %d: %d keys, map %d", seed, tab.n, len(ref))
		}
		held := 0
		for i, k := range tab.keys {
			if k != 0 {
				held++
				if ref[k-1] != tab.vals[i] {
					t.Fatalf("seed %d: key %d holds %d, map %d", seed, k-1, tab.vals[i], ref[k-1])
				}
			}
		}
		if held != len(ref) || 2*held > len(tab.keys) {
			t.Fatalf("seed %d: %d keys in %d places, map %d", seed, held, len(tab.keys), len(ref))
		}
	}
}

// TestMiniBucketsSplitJoint: a split bucket's messages, their
// min-marginals taken from one joint table per mini-bucket where
// mmJoinOrder allows, equal to the bit those of the min-marginal join they
// replaced, and the reads reported are that join's and the message's, on
// seeded problems of two- and three-valued variables with fractional costs
// and Hard entries.
func TestMiniBucketsSplitJoint(t *testing.T) {
	split := 0
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 18))
		nv := 6 + r.IntN(5)
		domains := make([]int, nv)
		for v := range domains {
			domains[v] = 2 + r.IntN(2)*int(seed%2)
		}
		var inputs []*Factor
		var scopes [][]int
		for range 2 * nv {
			k := 1 + r.IntN(4)
			vars := r.Perm(nv)[:k]
			dims := make([]int, k)
			for i, v := range vars {
				dims[i] = domains[v]
			}
			f, err := NewFactor(vars, dims)
			if err != nil {
				t.Fatal(err)
			}
			for i := range f.Costs {
				f.Costs[i] = r.Float64() * 10
				if r.IntN(15) == 0 {
					f.Costs[i] = mva.Hard
				}
			}
			inputs = append(inputs, f)
			scopes = append(scopes, vars)
		}
		pt := newPseudoTree(nv, 0, scopes, r.Perm(nv))
		mb, err := newMiniBuckets(pt, domains, inputs, 1<<20, 2+r.IntN(2))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		reads, err := mb.run(context.Background(), nil, 1)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		var want int64
		for s := 0; s < len(mb.steps); {
			e := s + 1
			for e < len(mb.steps) && mb.steps[e].v == mb.steps[s].v {
				e++
			}
			group := slices.Clone(mb.steps[s:e])
			if group[0].delta == nil {
				want += mb.plans[s].Reads()
				s = e
				continue
			}
			for k := range group {
				if group[k].joint != nil {
					split++
				}
			}
			ins := make([][]*Factor, len(group))
			for k := range group {
				st := &group[k]
				for _, j := range st.in {
					ins[k] = append(ins[k], mb.factors[j])
				}
				var elim []int
				for _, f := range ins[k] {
					for _, u := range f.Vars {
						if u != st.v && !slices.Contains(elim, u) {
							elim = append(elim, u)
						}
					}
				}
				mm, err := NewJoinProjectLimit(ins[k], elim, []int{st.v}, math.MaxInt)
				if err != nil {
					t.Fatal(err)
				}
				st.mu = make([]float64, domains[st.v])
				if err := mm.Run(context.Background(), st.mu, nil, 1); err != nil {
					t.Fatal(err)
				}
				want += mm.Reads()
				st.delta = &Factor{Vars: []int{st.v}, Dims: []int{domains[st.v]}, Costs: make([]float64, domains[st.v])}
			}
			matchMoments(group)
			for k := range group {
				st := &group[k]
				jp, err := NewJoinProjectLimit(append(ins[k], st.delta), []int{st.v}, st.out, math.MaxInt)
				if err != nil {
					t.Fatal(err)
				}
				msg := make([]float64, jp.Rows())
				if err := jp.Run(context.Background(), msg, nil, 1); err != nil {
					t.Fatal(err)
				}
				want += jp.Reads()
				got := mb.factors[mb.nIn+s+k].Costs
				for i := range msg {
					if got[i] != msg[i] {
						t.Fatalf("seed %d: bucket of x%d, mini-bucket %d: message[%d] = %v, two joins %v", seed, st.v, k, i, got[i], msg[i])
					}
				}
			}
			s = e
		}
		if reads != want {
			t.Errorf("seed %d: %d reads reported, the two joins read %d", seed, reads, want)
		}
	}
	if split < 20 {
		t.Errorf("only %d mini-buckets over the seeds took their min-marginal from a joint table", split)
	}
}
