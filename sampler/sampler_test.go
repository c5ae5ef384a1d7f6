package sampler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/hearth-dcop/hearth/internal/fixtures"
	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/internal/samplertest"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/sampler/philox"
)

// kinds lists every sampler configuration the tests run.
var kinds = []struct {
	name string
	make func(*mva.LocalProblem, Options) (mva.LocalSolver, error)
}{
	{"gibbs", func(lp *mva.LocalProblem, o Options) (mva.LocalSolver, error) { return NewGibbs(lp, o) }},
	{"mh-normal", func(lp *mva.LocalProblem, o Options) (mva.LocalSolver, error) {
		o.Proposal = ProposalNormal
		return NewMH(lp, o)
	}},
	{"mh-discrete", func(lp *mva.LocalProblem, o Options) (mva.LocalSolver, error) {
		o.Proposal = ProposalDiscrete
		return NewMH(lp, o)
	}},
}

// evalRow returns lp.Eval of a row's boundary values and an interior
// assignment.
func evalRow(lp *mva.LocalProblem, row int, interior []int32) float64 {
	a := make([]int, len(lp.Vars))
	lp.DecodeRow(row, a[:lp.NB])
	for i, v := range interior {
		a[lp.NB+i] = int(v)
	}
	return lp.Eval(a)
}

// exactTable fills lp's table with brute force, the reference.
func exactTable(t testing.TB, lp *mva.LocalProblem) *mva.Table {
	t.Helper()
	tab, err := mva.NewTable(lp)
	if err != nil {
		t.Fatal(err)
	}
	if err := tab.Fill(context.Background(), local.NewBruteForce(lp)); err != nil {
		t.Fatal(err)
	}
	return tab
}

// sampleTable fills lp's table with a sampler.
func sampleTable(t testing.TB, s mva.LocalSolver, lp *mva.LocalProblem) *mva.Table {
	t.Helper()
	tab, err := mva.NewTable(lp)
	if err != nil {
		t.Fatal(err)
	}
	if err := tab.Fill(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return tab
}

// checkTable requires every row to be known, its cost to be exactly
// lp.Eval of its assignment, Hard rows to carry zeros, and, when want is
// given, the costs to equal want's.
func checkTable(t *testing.T, tag string, lp *mva.LocalProblem, got, want *mva.Table) {
	t.Helper()
	for r := range got.Rows() {
		c := got.Costs[r]
		if !got.Known[r] {
			t.Fatalf("%s row %d: not filled", tag, r)
		}
		if mva.IsHard(c) {
			if slices.ContainsFunc(got.Interior(r), func(v int32) bool { return v != 0 }) {
				t.Fatalf("%s row %d: Hard with assignment %v", tag, r, got.Interior(r))
			}
		} else if e := evalRow(lp, r, got.Interior(r)); e != c {
			t.Fatalf("%s row %d: reports %v but its assignment %v costs %v", tag, r, c, got.Interior(r), e)
		}
		if want != nil && c != want.Costs[r] {
			t.Fatalf("%s row %d: cost %v, optimum %v", tag, r, c, want.Costs[r])
		}
	}
}

func TestThesisExample(t *testing.T) {
	// Thesis Figure 3.4: a0's table x0=0 → (x1, x2) = (1, 0), cost 19;
	// x0=1 → cost 7; a1's: x3=0 → x4=0, 7; x3=1 → x4=0, 2. The figure
	// prints (1, 1) for x0=1, but that costs 9: (1, 0) is the assignment
	// of cost 7 (the thesis digest lists this erratum).
	want := [][]struct {
		cost float64
		in   []int32
	}{
		{{19, []int32{1, 0}}, {7, []int32{1, 0}}},
		{{7, []int32{0}}, {2, []int32{0}}},
	}
	for _, k := range kinds {
		for a, lp := range samplertest.Locals(fixtures.Thesis31()) {
			s, err := k.make(lp, Options{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			tab := sampleTable(t, s, lp)
			for r, w := range want[a] {
				if tab.Costs[r] != w.cost || !slices.Equal(tab.Interior(r), w.in) {
					t.Errorf("%s a%d row %d: %v %v, want %v %v", k.name, a, r, tab.Costs[r], tab.Interior(r), w.cost, w.in)
				}
			}
		}
	}
}

// randomCases returns small decomposed random problems, hard entries
// included, whose agents have interiors brute force can enumerate.
func randomCases() []*mva.Problem {
	var ps []*mva.Problem
	for seed := range int64(8) {
		ps = append(ps, randprob.New(seed, randprob.Options{
			Agents: 3, Vars: 13, MinDomain: 2, MaxDomain: 3, MaxArity: 3,
			Functions: 18, IntCosts: seed%2 == 0, MaxCost: 10,
			HardProb: 0.1 * float64(seed%3), Locality: 0.8,
		}))
	}
	return ps
}

// TestOptimalOnSmallProblems compares whole tables with brute force: with
// enough samples every row is the exact optimum, and every reported cost
// is lp.Eval of the reported assignment, Hard rows included.
func TestOptimalOnSmallProblems(t *testing.T) {
	rows, hard := 0, 0
	for pi, p := range randomCases() {
		for a, lp := range samplertest.Locals(p) {
			if lp.NumInterior() == 0 || lp.NumInterior() > 5 {
				continue
			}
			want := exactTable(t, lp)
			for _, k := range kinds {
				s, err := k.make(lp, Options{Seed: uint64(pi), Runs: 10, Trials: 300, Workers: 2})
				if err != nil {
					t.Fatal(err)
				}
				checkTable(t, fmt.Sprintf("problem %d agent %d %s", pi, a, k.name), lp, sampleTable(t, s, lp), want)
			}
			rows += want.Rows()
			for _, c := range want.Costs {
				if mva.IsHard(c) {
					hard++
				}
			}
		}
	}
	if rows < 100 || hard < 5 {
		t.Fatalf("the cases cover %d rows, %d of them Hard: too few", rows, hard)
	}
}

// TestHardRows runs every sampler, with and without repair, on the rows
// of samplertest.HardRows: rows that every completion makes Hard, Hard on
// the boundary alone, and a single feasible completion among 3⁴ behind a
// chain of equalities that greedy repair can stall on.
func TestHardRows(t *testing.T) {
	lp := samplertest.HardRows(t)
	if lp.NB != 2 || lp.NumInterior() != 4 {
		t.Fatalf("decomposition: %d boundary, %d interior", lp.NB, lp.NumInterior())
	}
	want := exactTable(t, lp)
	if n := len(slices.DeleteFunc(slices.Clone(want.Costs), mva.IsHard)); n != 5 {
		t.Fatalf("%d feasible rows, want 5", n)
	}
	for _, k := range kinds {
		for _, repair := range []int{0, -1} {
			s, err := k.make(lp, Options{Seed: 3, Runs: 4, Trials: 1000, RepairSweeps: repair})
			if err != nil {
				t.Fatal(err)
			}
			checkTable(t, fmt.Sprintf("%s repair %d", k.name, repair), lp, sampleTable(t, s, lp), want)
		}
	}
}

// tableOf fills a fresh table of lp with sampler k under o.
func tableOf(t *testing.T, k int, lp *mva.LocalProblem, o Options) *mva.Table {
	t.Helper()
	s, err := kinds[k].make(lp, o)
	if err != nil {
		t.Fatal(err)
	}
	return sampleTable(t, s, lp)
}

func sameTable(a, b *mva.Table) bool {
	for r, c := range a.Costs {
		if math.Float64bits(c) != math.Float64bits(b.Costs[r]) {
			return false
		}
	}
	return slices.Equal(a.Assign, b.Assign) && slices.Equal(a.Known, b.Known)
}

// TestDeterminism requires identical tables whatever GOMAXPROCS and the
// number of workers, with short chains whose results differ by seed.
func TestDeterminism(t *testing.T) {
	p := randprob.New(5, randprob.Options{
		Agents: 2, Vars: 16, MinDomain: 2, MaxDomain: 4, MaxArity: 3,
		Functions: 26, MaxCost: 10, HardProb: 0.05, Locality: 0.8,
	})
	lps := samplertest.Locals(p)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for k := range kinds {
		for a, lp := range lps {
			o := Options{Seed: 99, Runs: 5, Trials: 20}
			runtime.GOMAXPROCS(1)
			ref := tableOf(t, k, lp, o)
			for _, procs := range []int{2, 8} {
				runtime.GOMAXPROCS(procs)
				if !sameTable(ref, tableOf(t, k, lp, o)) {
					t.Errorf("%s agent %d: GOMAXPROCS %d differs from 1", kinds[k].name, a, procs)
				}
			}
			for _, w := range []int{1, 3, 16} {
				o.Workers = w
				if !sameTable(ref, tableOf(t, k, lp, o)) {
					t.Errorf("%s agent %d: %d workers differ", kinds[k].name, a, w)
				}
			}
			o.Workers, o.Seed = 0, 100
			if sameTable(ref, tableOf(t, k, lp, o)) && lp.NumInterior() > 3 {
				t.Errorf("%s agent %d: seeds 99 and 100 give the same table", kinds[k].name, a)
			}
		}
	}
}

// TestSolveRowMatchesTable: a row solved alone, or in a partly known
// table, gets the chains and the answer it gets in the whole table.
func TestSolveRowMatchesTable(t *testing.T) {
	p := randprob.New(8, randprob.Options{
		Agents: 2, Vars: 14, MinDomain: 2, MaxDomain: 3, MaxArity: 3,
		Functions: 22, MaxCost: 10, HardProb: 0.05, Locality: 0.8,
	})
	ctx := context.Background()
	for _, lp := range samplertest.Locals(p) {
		for _, k := range kinds {
			o := Options{Seed: 4, Runs: 3, Trials: 10}
			s, err := k.make(lp, o)
			if err != nil {
				t.Fatal(err)
			}
			full := sampleTable(t, s, lp)
			part, _ := mva.NewTable(lp)
			b := make([]int, lp.NB)
			in := make([]int, lp.NumInterior())
			for r := 0; r < full.Rows(); r += 2 {
				lp.DecodeRow(r, b)
				c, err := s.SolveRow(ctx, b, in)
				if err != nil {
					t.Fatal(err)
				}
				part.Set(r, c, in)
			}
			if err := part.Fill(ctx, s); err != nil {
				t.Fatal(err)
			}
			if !sameTable(full, part) {
				t.Errorf("%s: rows solved one by one differ from the eager table", k.name)
			}
		}
	}
}

// TestChecks counts the entries a Gibbs run reads on a problem without
// hard entries (no repair), against the documented formula.
func TestChecks(t *testing.T) {
	lp := samplertest.Locals(fixtures.Thesis31())[0] // x0 | x1, x2; functions x0x1, x0x2, x1x2
	const runs, trials = 3, 7
	g, err := NewGibbs(lp, Options{Runs: runs, Trials: trials})
	if err != nil {
		t.Fatal(err)
	}
	sampleTable(t, g, lp)
	// Per chain: 0 constant functions, one full evaluation at the start,
	// and per sweep 2 conditionals (each 2 functions × 2 values) plus a
	// full evaluation of 3 functions.
	perChain := int64(3 + trials*(2*2*2+3))
	if got, want := g.Checks(), 2*runs*perChain; got != want {
		t.Fatalf("Checks = %d, want %d", got, want)
	}
}

func TestNoInterior(t *testing.T) {
	// Agent 1 owns one boundary variable and a unary function.
	p := samplertest.NewProblem(t, []int{2, 3}, []int{0, 1}, []mva.Function{
		{Scope: []int{0, 1}, Costs: make([]float64, 6)},
		{Scope: []int{1}, Costs: []float64{4, mva.Hard, 1}},
	})
	lp := samplertest.Locals(p)[1]
	for _, k := range kinds {
		s, err := k.make(lp, Options{})
		if err != nil {
			t.Fatal(err)
		}
		tab := sampleTable(t, s, lp)
		if !slices.Equal(tab.Costs, []float64{4, mva.Hard, 1}) {
			t.Errorf("%s: %v", k.name, tab.Costs)
		}
	}
}

func TestCancel(t *testing.T) {
	p := randprob.New(1, randprob.Options{Agents: 1, Vars: 8, MinDomain: 3, MaxDomain: 3, MaxArity: 2, Functions: 12})
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, k := range kinds {
		s, err := k.make(lp, Options{Trials: 1000})
		if err != nil {
			t.Fatal(err)
		}
		in := make([]int, lp.NumInterior())
		if _, err := s.SolveRow(ctx, nil, in); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: cancelled SolveRow returned %v", k.name, err)
		}
	}
}

func TestBadInput(t *testing.T) {
	lp := samplertest.Locals(fixtures.Thesis31())[0]
	for _, o := range []Options{
		{Runs: -1}, {Trials: -2}, {Workers: -1},
		{Temperature: -1}, {Temperature: math.NaN()}, {Temperature: math.Inf(1)},
		{Proposal: "uniform"}, {StdDev: -1}, {StdDev: math.Inf(1)},
		{Trials: math.MaxUint32},
	} {
		if _, err := NewGibbs(lp, o); err == nil {
			t.Errorf("NewGibbs accepted %+v", o)
		}
		if _, err := NewMH(lp, o); err == nil {
			t.Errorf("NewMH accepted %+v", o)
		}
	}
	if _, err := NewGibbs(nil, Options{}); err == nil {
		t.Error("NewGibbs accepted a nil problem")
	}
	bad := *lp
	bad.Funcs = []mva.LocalFunction{{Scope: []int{0, 7}, Costs: []float64{1}}}
	if _, err := NewMH(&bad, Options{}); err == nil {
		t.Error("NewMH accepted a scope out of range")
	}
	bad.Funcs = []mva.LocalFunction{{Scope: []int{0, 1}, Costs: []float64{1}}}
	if _, err := NewMH(&bad, Options{}); err == nil {
		t.Error("NewMH accepted a table of the wrong size")
	}

	for _, d := range []int{0, MaxDomain + 1} {
		if _, err := NewGibbs(&mva.LocalProblem{Vars: []int{0}, Domains: []int{d}}, Options{}); err == nil {
			t.Errorf("NewGibbs accepted an interior domain of %d values", d)
		}
	}

	g, err := NewGibbs(lp, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct{ b, in []int }{
		{[]int{0, 0}, make([]int, 2)},
		{[]int{2}, make([]int, 2)},
		{[]int{0}, make([]int, 3)},
	} {
		if _, err := g.SolveRow(ctx, c.b, c.in); err == nil {
			t.Errorf("SolveRow(%v, %d values) succeeded", c.b, len(c.in))
		}
	}
	other, _ := mva.NewTable(samplertest.Locals(fixtures.Thesis31())[1])
	other.Assign = append(other.Assign, 0)
	if err := g.SolveTable(ctx, other); err == nil {
		t.Error("SolveTable accepted another problem's table")
	}
	if _, err := New("annealing", lp, Options{}); err == nil {
		t.Error(`New("annealing") succeeded`)
	}
	for _, name := range Names() {
		if _, err := New(name, lp, Options{}); err != nil {
			t.Errorf("New(%q): %v", name, err)
		}
	}
}

func TestDefaults(t *testing.T) {
	lp := samplertest.Locals(fixtures.Thesis31())[0]
	g, _ := NewGibbs(lp, Options{})
	want := Options{Runs: 10, Trials: 100, Temperature: 1, Proposal: ProposalNormal, RepairSweeps: 20}
	if got := g.Options(); got != want {
		t.Fatalf("defaults %+v, want %+v", got, want)
	}
	m, _ := NewMH(lp, Options{Proposal: ProposalDiscrete, Runs: 3})
	if got := m.Options(); got.Proposal != ProposalDiscrete || got.Runs != 3 {
		t.Fatalf("MH options %+v", got)
	}
}

func TestQualityBound(t *testing.T) {
	for _, c := range []struct {
		alpha, eps float64
		want       int
	}{
		{0.1, 0.1, 100},
		{0.01, 0.1, 1000},
		{0.1, 0.01, 1000},
		{0.05, 0.2, 100},
		{0.3, 0.3, 12}, // 11.11… rounds up
		{1, 1, 1},
		{1e-10, 1e-10, math.MaxInt},
		{0, 0.1, 0}, {0.1, 0, 0}, {1.5, 0.1, 0}, {0.1, -1, 0}, {math.NaN(), 0.5, 0},
	} {
		if got := QualityBound(c.alpha, c.eps); got != c.want {
			t.Errorf("QualityBound(%v, %v) = %d, want %d", c.alpha, c.eps, got, c.want)
		}
	}
	// Against exact rationals on a grid of percentages.
	for a := 1; a <= 100; a++ {
		for e := 1; e <= 100; e++ {
			want := (10000 + a*e - 1) / (a * e) // ⌈10⁴/(a·e)⌉
			if got := QualityBound(float64(a)/100, float64(e)/100); got != want {
				t.Fatalf("QualityBound(%d%%, %d%%) = %d, want %d", a, e, got, want)
			}
		}
	}
}

// TestCounterLayout pins the documented Philox counter layout, which a
// GPU kernel must reproduce: on a problem of constant cost the starting
// point is IntN(draw i of step 0, |D|), a Gibbs sweep's conditionals are
// uniform, so variable i becomes ⌊Float64(draw i of step 1)·|D|⌋, and a
// discrete MH move is always accepted, so step 1 moves variable
// IntN(draw 0, n) to the IntN(draw 1, |D|−1)-th other value.
func TestCounterLayout(t *testing.T) {
	p := samplertest.NewProblem(t, []int{3, 3, 3, 2}, []int{0, 0, 0, 1}, []mva.Function{
		{Scope: []int{0, 1, 2}, Costs: make([]float64, 27)},
		{Scope: []int{0, 3}, Costs: make([]float64, 6)},
	})
	lp := samplertest.Locals(p)[0] // boundary v0, interior v1, v2
	const seed, runs = 0x0123456789abcdef, 3
	key := philox.Key(seed)
	draw := func(row, run, step, j uint32) uint32 {
		return philox.Block([4]uint32{row, run, step, j / 4}, key)[j%4]
	}
	for _, k := range []int{0, 2} { // gibbs, mh-discrete
		s, err := kinds[k].make(lp, Options{Seed: seed, Runs: runs, Trials: 1, RepairSweeps: -1})
		if err != nil {
			t.Fatal(err)
		}
		e := engineOf(s)
		after := map[[2]int][]int{}
		var mu sync.Mutex
		e.trace = func(row, run, _ int, in []int) {
			mu.Lock()
			after[[2]int{row, run}] = slices.Clone(in)
			mu.Unlock()
		}
		ch := e.newChain()
		for row := range uint32(3) {
			lp.DecodeRow(int(row), ch.z[:lp.NB])
			for run := range uint32(runs) {
				if _, err := ch.run(context.Background(), row, run); err != nil {
					t.Fatal(err)
				}
				// Every state costs 0, so the best is the start.
				start := []int{int(philox.IntN(draw(row, run, 0, 0), 3)), int(philox.IntN(draw(row, run, 0, 1), 3))}
				if !slices.Equal(ch.best, start) {
					t.Fatalf("%s row %d run %d: start %v, want %v", kinds[k].name, row, run, ch.best, start)
				}
				want := slices.Clone(start)
				if k == 0 {
					for i := range want {
						want[i] = int(philox.Float64(draw(row, run, 1, uint32(i))) * 3)
					}
				} else {
					i := philox.IntN(draw(row, run, 1, 0), 2)
					y := int(philox.IntN(draw(row, run, 1, 1), 2))
					if y >= want[i] {
						y++
					}
					want[i] = y
				}
				if got := after[[2]int{int(row), int(run)}]; !slices.Equal(got, want) {
					t.Fatalf("%s row %d run %d: after step 1 %v, want %v", kinds[k].name, row, run, got, want)
				}
			}
		}
	}
}

// engineOf returns a sampler's engine.
func engineOf(s mva.LocalSolver) *engine {
	switch s := s.(type) {
	case *Gibbs:
		return s.e
	case *MH:
		return s.e
	}
	return nil
}

// TestHugeBoundary: SolveRow works for an agent whose 2⁴⁰ boundary
// assignments no table could hold, and finds brute force's optimum.
func TestHugeBoundary(t *testing.T) {
	const nb = samplertest.HugeNB
	lp := samplertest.HugeBoundary(t)
	if _, err := lp.Rows(); err == nil {
		t.Fatal("the boundary space fits a table; the test needs one that does not")
	}
	ctx := context.Background()
	b := make([]int, nb)
	for k := range b {
		b[k] = (k * 7 / 3) % 2
	}
	want, err := local.NewBruteForce(lp).SolveRow(ctx, b, make([]int, 3))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		s, err := k.make(lp, Options{Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		in := make([]int, 3)
		got, err := s.SolveRow(ctx, b, in)
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		a := append(slices.Clone(b), in...)
		if got != want || lp.Eval(a) != got {
			t.Errorf("%s: cost %v (assignment costs %v), optimum %v", k.name, got, lp.Eval(a), want)
		}
	}
}
