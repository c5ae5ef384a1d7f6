package local

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
)

// sameCost compares costs exactly for Hard and up to rounding otherwise:
// solvers add the same numbers in different orders.
func sameCost(a, b float64) bool {
	if mva.IsHard(a) || mva.IsHard(b) {
		return mva.IsHard(a) && mva.IsHard(b)
	}
	return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b))
}

// rowSolvers returns every solver for lp, by name.
func rowSolvers(t testing.TB, lp *mva.LocalProblem) map[string]mva.LocalSolver {
	t.Helper()
	m := map[string]mva.LocalSolver{}
	for _, name := range Names() {
		s, err := New(name, lp)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		m[name] = s
	}
	return m
}

// evalRow returns lp.Eval of a row's boundary values and an interior
// assignment.
func evalRow(lp *mva.LocalProblem, row int, interior []int) float64 {
	a := make([]int, len(lp.Vars))
	lp.DecodeRow(row, a[:lp.NB])
	copy(a[lp.NB:], interior)
	return lp.Eval(a)
}

// checkTable solves every row of lp with every solver's SolveRow, and the
// whole table with BE's SolveTable, and compares them with brute force. It
// requires that each reported assignment costs what its solver reports.
func checkTable(t *testing.T, tag string, lp *mva.LocalProblem, exact bool) {
	t.Helper()
	ctx := context.Background()
	same := sameCost
	if exact {
		same = func(a, b float64) bool { return a == b }
	}
	rows, err := lp.Rows()
	if err != nil {
		t.Fatal(err)
	}
	solvers := rowSolvers(t, lp)
	ref := solvers["bruteforce"]
	b := make([]int, lp.NB)
	in := make([]int, lp.NumInterior())
	want := make([]float64, rows)
	for r := range rows {
		lp.DecodeRow(r, b)
		c, err := ref.SolveRow(ctx, b, in)
		if err != nil {
			t.Fatalf("%s row %d: bruteforce: %v", tag, r, err)
		}
		want[r] = c
		for name, s := range solvers {
			got, err := s.SolveRow(ctx, b, in)
			if err != nil {
				t.Fatalf("%s row %d: %s: %v", tag, r, name, err)
			}
			if !same(got, c) {
				t.Fatalf("%s row %d (boundary %v): %s = %v, bruteforce = %v", tag, r, b, name, got, c)
			}
			if e := evalRow(lp, r, in); !mva.IsHard(got) && !same(e, got) {
				t.Fatalf("%s row %d: %s reports %v but its assignment %v costs %v", tag, r, name, got, in, e)
			}
		}
	}

	// Eager: BE fills the table at once.
	be, err := NewBE(lp, BEOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := mva.NewTable(lp)
	if err != nil {
		t.Fatal(err)
	}
	if err := tab.Fill(ctx, be); err != nil {
		t.Fatalf("%s: SolveTable: %v", tag, err)
	}
	for r := range rows {
		if !tab.Known[r] || !same(tab.Costs[r], want[r]) {
			t.Fatalf("%s row %d: SolveTable = %v (known %v), bruteforce = %v", tag, r, tab.Costs[r], tab.Known[r], want[r])
		}
		for k, v := range tab.Interior(r) {
			in[k] = int(v)
		}
		if e := evalRow(lp, r, in); !mva.IsHard(want[r]) && !same(e, tab.Costs[r]) {
			t.Fatalf("%s row %d: SolveTable reports %v but its assignment %v costs %v", tag, r, tab.Costs[r], in, e)
		}
	}
}

// space returns the number of complete assignments of p's variables.
func space(p *mva.Problem) float64 {
	n := 1.0
	for v := range p.Variables {
		n *= float64(p.DomainSize(v))
	}
	return n
}

// wholeAndSubs returns p's whole problem followed by every agent's
// subproblem of its MVA decomposition: the tests' rows of both kinds.
func wholeAndSubs(p *mva.Problem) []*mva.Subproblem {
	subs := []*mva.Subproblem{mva.Whole(p)}
	d := mva.Decompose(p)
	for i := range d.Subs {
		subs = append(subs, &d.Subs[i])
	}
	return subs
}

func TestSolversWholeProblem(t *testing.T) {
	checked := 0
	for seed := range int64(400) {
		o := randprob.Options{
			Agents: 1 + int(seed%3), Vars: 1 + int(seed%9), MinDomain: 2, MaxDomain: 2 + int(seed%4),
			MaxArity: 1 + int(seed%4), Functions: int(seed % 14),
			HardProb: []float64{0, 0.05, 0.3}[seed%3], IntCosts: seed%5 != 0, MaxCost: 9,
		}
		p := randprob.New(seed, o)
		if space(p) > 1<<15 {
			continue
		}
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		checkTable(t, fmt.Sprintf("seed %d", seed), lp, o.IntCosts)
		checked++
	}
	if checked < 300 {
		t.Fatalf("only %d problems checked", checked)
	}
}

func TestSolversMVATables(t *testing.T) {
	checked := 0
	for seed := range int64(300) {
		o := randprob.Options{
			Agents: 2 + int(seed%2), Vars: 3 + int(seed%8), MinDomain: 2, MaxDomain: 2 + int(seed%4),
			MaxArity: 1 + int(seed%4), Functions: 2 + int(seed%12),
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
			checkTable(t, fmt.Sprintf("seed %d agent %d", seed, i), lp, o.IntCosts)
			checked++
		}
	}
	if checked < 400 {
		t.Fatalf("only %d subproblems checked", checked)
	}
}

// thesisProblem is the example of the thesis (Figure 3.1): agent a0 owns
// x0, x1, x2 and agent a1 owns x3, x4, with binary domains and the same
// table on the edges x0-x1, x0-x2, x1-x2, x0-x3 and x3-x4.
func thesisProblem() *mva.Problem {
	p := &mva.Problem{Name: "thesis-3.1", Agents: []mva.Agent{{Name: "a0"}, {Name: "a1"}}}
	for v, a := range []int{0, 0, 0, 1, 1} {
		p.Variables = append(p.Variables, mva.Variable{Name: fmt.Sprintf("x%d", v), Domain: []string{"0", "1"}, Agent: a})
	}
	for _, e := range [][2]int{{0, 1}, {0, 2}, {1, 2}, {0, 3}, {3, 4}} {
		p.Functions = append(p.Functions, mva.Function{Scope: []int{e[0], e[1]}, Costs: []float64{7, 10, 2, 3}})
	}
	return p
}

func TestThesisExample(t *testing.T) {
	ctx := context.Background()
	p := thesisProblem()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	d := mva.Decompose(p)
	// Figure 3.4. For a0's row x0=1 the figure prints x1=1, x2=1, but that
	// assignment costs T(1,1)+T(1,1)+T(1,1) = 9, not 7; x1=1, x2=0 costs
	// T(1,1)+T(1,0)+T(1,0) = 3+2+2 = 7, and the thesis's own trace
	// (Figure 3.5, CPA [1 1 0]) uses it. The figure is wrong; x2=0 is right.
	want := []struct {
		costs  []float64
		assign [][]int32
	}{
		{costs: []float64{19, 7}, assign: [][]int32{{1, 0}, {1, 0}}},
		{costs: []float64{7, 2}, assign: [][]int32{{0}, {0}}},
	}
	for i := range d.Subs {
		lp := mva.NewLocalProblem(p, &d.Subs[i])
		be, err := NewBE(lp, BEOptions{})
		if err != nil {
			t.Fatal(err)
		}
		solvers := rowSolvers(t, lp)
		solvers["be-table"] = be
		solvers["be-rows"] = rowsOnly{be}
		for name, s := range solvers {
			tab, err := mva.NewTable(lp)
			if err != nil {
				t.Fatal(err)
			}
			if err := tab.Fill(ctx, s); err != nil {
				t.Fatalf("a%d %s: %v", i, name, err)
			}
			for r := range tab.Rows() {
				got := tab.Interior(r)
				if tab.Costs[r] != want[i].costs[r] || fmt.Sprint(got) != fmt.Sprint(want[i].assign[r]) {
					t.Errorf("a%d %s row %d: cost %v interior %v, want %v %v", i, name, r, tab.Costs[r], got, want[i].costs[r], want[i].assign[r])
				}
			}
		}
	}
	// The global optimum: x0=1, x3=1, cost 7 + 3 + 2 = 12.
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	for name, s := range rowSolvers(t, lp) {
		in := make([]int, 5)
		c, err := s.SolveRow(ctx, nil, in)
		if err != nil || c != 12 || fmt.Sprint(in) != "[1 1 0 1 0]" {
			t.Errorf("%s: whole problem = %v %v %v, want 12 [1 1 0 1 0]", name, c, in, err)
		}
	}
}

// rowsOnly hides BE's SolveTable, so that mva.Table.Fill goes row by row.
type rowsOnly struct{ s mva.LocalSolver }

func (r rowsOnly) SolveRow(ctx context.Context, b, in []int) (float64, error) {
	return r.s.SolveRow(ctx, b, in)
}
func (r rowsOnly) Checks() int64 { return r.s.Checks() }

// TestEdgeCases covers what random problems rarely draw: constants,
// variables in no function, functions over boundary variables only, an
// infeasible row and an empty problem.
func TestEdgeCases(t *testing.T) {
	ctx := context.Background()
	p := &mva.Problem{Agents: []mva.Agent{{Name: "a0"}, {Name: "a1"}}, Offset: 100}
	for v, a := range []int{0, 0, 0, 0, 0, 1} {
		p.Variables = append(p.Variables, mva.Variable{Name: fmt.Sprintf("x%d", v), Domain: []string{"0", "1", "2"}, Agent: a})
	}
	p.Functions = []mva.Function{
		{Name: "const", Costs: []float64{1.5}},
		{Name: "boundary-only", Scope: []int{1, 0}, Costs: []float64{0, 1, 2, 3, 4, 5, 6, 7, mva.Hard}},
		{Name: "inner", Scope: []int{2, 0}, Costs: []float64{5, 1, 1, 0, 9, 9, 2, 2, 2}},
		{Name: "external-a", Scope: []int{0, 5}, Costs: make([]float64, 9)},
		{Name: "external-b", Scope: []int{1, 5}, Costs: make([]float64, 9)},
		{Name: "unary", Scope: []int{3}, Costs: []float64{3, mva.Hard, 1}},
		// x4 is in no function.
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	d := mva.Decompose(p)
	for i := range d.Subs {
		lp := mva.NewLocalProblem(p, &d.Subs[i])
		checkTable(t, fmt.Sprintf("agent %d", i), lp, true)
	}
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	checkTable(t, "whole", lp, true)

	// Every entry of a local function Hard: every row is Hard.
	q := thesisProblem()
	q.Functions[1].Costs = []float64{mva.Hard, mva.Hard, mva.Hard, mva.Hard}
	lq := mva.NewLocalProblem(q, &mva.Decompose(q).Subs[0])
	checkTable(t, "all hard", lq, true)
	for name, s := range rowSolvers(t, lq) {
		in := []int{9, 9}
		if c, err := s.SolveRow(ctx, []int{1}, in); err != nil || !mva.IsHard(c) || in[0] != 0 || in[1] != 0 {
			t.Errorf("%s: infeasible row = %v %v %v, want Hard [0 0]", name, c, in, err)
		}
	}

	// No variables at all.
	empty := &mva.Problem{Agents: []mva.Agent{{Name: "a"}}, Functions: []mva.Function{{Costs: []float64{4}}}}
	checkTable(t, "empty", mva.NewLocalProblem(empty, mva.Whole(empty)), true)
}

// chain returns a chain x0 - x1 - … - x(n-1), domain d, whose binary costs
// are 0 on a hidden path of values and at least 10 elsewhere: tight costs
// that a good bound prunes.
func chain(n, d int) *mva.Problem {
	p := &mva.Problem{Agents: []mva.Agent{{Name: "a"}}}
	dom := make([]string, d)
	for i := range dom {
		dom[i] = fmt.Sprint(i)
	}
	for v := range n {
		p.Variables = append(p.Variables, mva.Variable{Name: fmt.Sprintf("x%d", v), Domain: dom})
	}
	path := func(v int) int { return (v * 7) % d }
	for v := 0; v+1 < n; v++ {
		c := make([]float64, d*d)
		for a := range d {
			for b := range d {
				if a != path(v) || b != path(v+1) {
					c[a*d+b] = float64(10 + (a*3+b*5+v)%7)
				}
			}
		}
		p.Functions = append(p.Functions, mva.Function{Scope: []int{v, v + 1}, Costs: c})
	}
	return p
}

func TestDFBnBPrunes(t *testing.T) {
	p := chain(12, 4)
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	s := NewDFBnB(lp)
	in := make([]int, 12)
	c, err := s.SolveRow(context.Background(), nil, in)
	if err != nil || c != 0 {
		t.Fatalf("chain optimum = %v, %v; want 0", c, err)
	}
	full := space(p)
	if nodes := float64(s.Nodes()); nodes >= 0.1*full {
		t.Fatalf("DFBnB expanded %v nodes of a space of %v: no pruning", nodes, full)
	} else {
		t.Logf("DFBnB expanded %v nodes of %v", nodes, full)
	}
	if s.Checks() <= 0 {
		t.Fatal("no checks counted")
	}

	// A random chain (binary functions between neighbours, random costs):
	// the optimum agrees with bucket elimination and the search still
	// visits a tiny part of the space.
	q := randprob.New(3, randprob.Options{Vars: 14, MinDomain: 4, MaxDomain: 4, MaxArity: 1, Functions: 14, IntCosts: true, MaxCost: 100})
	for v := 0; v+1 < 14; v++ {
		c := make([]float64, 16)
		for i := range c {
			c[i] = float64((v*31 + i*17) % 101)
		}
		q.Functions = append(q.Functions, mva.Function{Scope: []int{v, v + 1}, Costs: c})
	}
	lq := mva.NewLocalProblem(q, mva.Whole(q))
	s = NewDFBnB(lq)
	in = make([]int, 14)
	got, err := s.SolveRow(context.Background(), nil, in)
	if err != nil {
		t.Fatal(err)
	}
	be, err := NewBE(lq, BEOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := be.SolveRow(context.Background(), nil, make([]int, 14))
	if err != nil || got != want {
		t.Fatalf("random chain: DFBnB %v, BE %v (%v)", got, want, err)
	}
	if nodes, full := float64(s.Nodes()), space(q); nodes >= 0.01*full {
		t.Fatalf("random chain: %v nodes of %v", nodes, full)
	} else {
		t.Logf("random chain: %v nodes of %v", nodes, full)
	}
}

func TestBETooLarge(t *testing.T) {
	// A clique of 12 variables with domain 4: min-fill must keep width 11.
	p := randprob.New(1, randprob.Options{Vars: 12, MinDomain: 4, MaxDomain: 4, MaxArity: 2, Functions: 300})
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	_, err := NewBE(lp, BEOptions{MaxEntries: 1 << 16})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "induced width") || !strings.Contains(err.Error(), "dfbnb") {
		t.Fatalf("got %v, want ErrTooLarge naming the induced width and dfbnb", err)
	}
	t.Log(err)

	// Rows fit but the eager table does not: NewBE succeeds, SolveTable
	// refuses, SolveRow works.
	q := randprob.New(2, randprob.Options{Agents: 1, Vars: 10, MinDomain: 2, MaxDomain: 2, MaxArity: 2, Functions: 30})
	sub := &mva.Subproblem{Agent: 0}
	for v := range q.Variables {
		sub.Local = append(sub.Local, v)
		if v < 8 {
			sub.Boundary = append(sub.Boundary, v)
		} else {
			sub.Interior = append(sub.Interior, v)
		}
	}
	for fi := range q.Functions {
		sub.Functions = append(sub.Functions, fi)
	}
	lq := mva.NewLocalProblem(q, sub)
	be, err := NewBE(lq, BEOptions{MaxEntries: 2})
	if err != nil {
		t.Fatalf("row plan: %v", err)
	}
	tab, _ := mva.NewTable(lq)
	if err := be.SolveTable(context.Background(), tab); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("SolveTable: got %v, want ErrTooLarge", err)
	}
	if _, err := be.SolveRow(context.Background(), make([]int, 8), make([]int, 2)); err != nil {
		t.Fatalf("SolveRow: %v", err)
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	p := thesisProblem()
	lp := mva.NewLocalProblem(p, &mva.Decompose(p).Subs[0])
	if _, err := New("gibbs", lp); err == nil || !strings.Contains(err.Error(), "dfbnb") {
		t.Errorf("unknown name: %v", err)
	}
	for name, s := range rowSolvers(t, lp) {
		for _, args := range []struct{ b, in []int }{
			{nil, make([]int, 2)},
			{[]int{0}, make([]int, 1)},
			{[]int{2}, make([]int, 2)},
			{[]int{-1}, make([]int, 2)},
		} {
			if _, err := s.SolveRow(ctx, args.b, args.in); err == nil {
				t.Errorf("%s: SolveRow(%v, %d values): no error", name, args.b, len(args.in))
			}
		}
	}
	big := randprob.New(3, randprob.Options{Vars: 30, MinDomain: 2, MaxDomain: 2, MaxArity: 2, Functions: 10})
	lb := mva.NewLocalProblem(big, mva.Whole(big))
	if _, err := NewBruteForce(lb).SolveRow(ctx, nil, make([]int, 30)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("bruteforce on 2^30: got %v, want ErrTooLarge", err)
	}
	tab, _ := mva.NewTable(mva.NewLocalProblem(p, &mva.Decompose(p).Subs[1]))
	be, _ := NewBE(lp, BEOptions{})
	if err := be.SolveTable(ctx, tab); err == nil {
		t.Error("SolveTable on another problem's table: no error")
	}
}

func TestCancel(t *testing.T) {
	p := randprob.New(5, randprob.Options{Vars: 40, MinDomain: 3, MaxDomain: 3, MaxArity: 3, Functions: 60, IntCosts: true})
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, s := range map[string]mva.LocalSolver{"dfbnb": NewDFBnB(lp), "bruteforce": NewBruteForce(lp)} {
		if _, err := s.SolveRow(ctx, nil, make([]int, 40)); err == nil {
			t.Errorf("%s: no error on a cancelled context", name)
		}
	}
}

// compareTableRows checks that BE's SolveTable, BE's SolveRow and DFBnB
// agree on every row of lp, on problems too large for brute force.
func compareTableRows(t *testing.T, tag string, lp *mva.LocalProblem, exact bool) {
	t.Helper()
	ctx := context.Background()
	same := sameCost
	if exact {
		same = func(a, b float64) bool { return a == b }
	}
	be, err := NewBE(lp, BEOptions{Workers: 3})
	if err != nil {
		t.Fatalf("%s: %v", tag, err)
	}
	tab, err := mva.NewTable(lp)
	if err != nil {
		t.Fatal(err)
	}
	if err := be.SolveTable(ctx, tab); err != nil {
		t.Fatalf("%s: %v", tag, err)
	}
	dfbnb := NewDFBnB(lp)
	b := make([]int, lp.NB)
	in := make([]int, lp.NumInterior())
	for r := range tab.Rows() {
		for k, v := range tab.Interior(r) {
			in[k] = int(v)
		}
		if !tab.Known[r] {
			t.Fatalf("%s row %d unknown", tag, r)
		}
		if c := tab.Costs[r]; !mva.IsHard(c) && !same(evalRow(lp, r, in), c) {
			t.Fatalf("%s row %d: table reports %v, its assignment costs %v", tag, r, c, evalRow(lp, r, in))
		}
		lp.DecodeRow(r, b)
		for name, s := range map[string]mva.LocalSolver{"be": be, "dfbnb": dfbnb} {
			c, err := s.SolveRow(ctx, b, in)
			if err != nil {
				t.Fatalf("%s row %d: %s: %v", tag, r, name, err)
			}
			if !same(c, tab.Costs[r]) {
				t.Fatalf("%s row %d: %s SolveRow = %v, SolveTable = %v", tag, r, name, c, tab.Costs[r])
			}
			if !mva.IsHard(c) && !same(evalRow(lp, r, in), c) {
				t.Fatalf("%s row %d: %s reports %v, its assignment costs %v", tag, r, name, c, evalRow(lp, r, in))
			}
		}
	}
}

func TestTableEqualsRows(t *testing.T) {
	checked, interior := 0, 0
	for seed := range int64(60) {
		o := randprob.Options{
			Agents: 2 + int(seed%2), Vars: 12 + int(seed%7), MinDomain: 2, MaxDomain: 2 + int(seed%3),
			MaxArity: 2 + int(seed%3), Functions: 15 + int(seed%15),
			HardProb: []float64{0, 0.05, 0.2}[seed%3], IntCosts: seed%3 != 0, MaxCost: 50,
			Locality: 0.9,
		}
		p := randprob.New(seed, o)
		d := mva.Decompose(p)
		for i := range d.Subs {
			lp := mva.NewLocalProblem(p, &d.Subs[i])
			if rows, _ := lp.Rows(); rows > 1<<12 {
				continue
			}
			compareTableRows(t, fmt.Sprintf("seed %d agent %d", seed, i), lp, o.IntCosts)
			checked++
			interior += lp.NumInterior()
		}
	}
	if checked < 60 || interior < 4*checked {
		t.Fatalf("%d subproblems with %d interior variables in all: too few", checked, interior)
	}
}

// TestLargeTable fills a table of 2^15 rows, past the threshold where the
// final join and the decoding run in parallel.
func TestLargeTable(t *testing.T) {
	if testing.Short() {
		t.Skip("large table")
	}
	q := randprob.New(7, randprob.Options{Vars: 19, MinDomain: 2, MaxDomain: 2, MaxArity: 3, Functions: 40, IntCosts: true, HardProb: 0.05})
	sub := &mva.Subproblem{Agent: 0}
	for v := range q.Variables {
		sub.Local = append(sub.Local, v)
		if v < 15 {
			sub.Boundary = append(sub.Boundary, v)
		} else {
			sub.Interior = append(sub.Interior, v)
		}
	}
	for fi := range q.Functions {
		sub.Functions = append(sub.Functions, fi)
	}
	compareTableRows(t, "2^15 rows", mva.NewLocalProblem(q, sub), true)
}

func TestEmptyDomain(t *testing.T) {
	// Validate rejects empty domains, but a solver handed one must still
	// answer with an error, not a panic.
	p := thesisProblem()
	p.Variables[2].Domain = nil
	p.Functions = p.Functions[3:] // drop the functions over x2
	lp := mva.NewLocalProblem(p, &mva.Decompose(p).Subs[0])
	for _, name := range Names() {
		s, err := New(name, lp)
		if err != nil {
			continue
		}
		if _, err := s.SolveRow(context.Background(), []int{0}, make([]int, lp.NumInterior())); err == nil {
			t.Errorf("%s: no error for an empty domain", name)
		}
	}
}

// TestBETransientRows checks rows solved with the bucket tables allocated
// per row and dropped after it (BE.transient, automatic past
// transientEntries) against brute force, forced on small random problems,
// and that nothing is kept between rows.
func TestBETransientRows(t *testing.T) {
	ctx := context.Background()
	checked := 0
	for seed := range int64(120) {
		p := randprob.New(seed, randprob.Options{
			Agents: 2, Vars: 4 + int(seed%6), MinDomain: 2, MaxDomain: 4, MaxArity: 3,
			Functions: 4 + int(seed%8), HardProb: 0.1, IntCosts: true, MaxCost: 9, Locality: 0.7,
		})
		if space(p) > 1<<14 {
			continue
		}
		d := mva.Decompose(p)
		for i := range d.Subs {
			lp := mva.NewLocalProblem(p, &d.Subs[i])
			if lp.NumInterior() == 0 {
				continue
			}
			be, err := NewBE(lp, BEOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if be.transient {
				t.Fatalf("seed %d: a small plan (%d entries) made transient", seed, be.row.entries())
			}
			be.transient = true
			be.row.release()
			ref := NewBruteForce(lp)
			rows, err := lp.Rows()
			if err != nil {
				t.Fatal(err)
			}
			b, in, want := make([]int, lp.NB), make([]int, lp.NumInterior()), make([]int, lp.NumInterior())
			for r := range rows {
				lp.DecodeRow(r, b)
				c, err := ref.SolveRow(ctx, b, want)
				if err != nil {
					t.Fatal(err)
				}
				got, err := be.SolveRow(ctx, b, in)
				if err != nil {
					t.Fatal(err)
				}
				if got != c {
					t.Fatalf("seed %d agent %d row %d: transient BE %v, brute force %v", seed, i, r, got, c)
				}
				if e := evalRow(lp, r, in); !mva.IsHard(got) && e != got {
					t.Fatalf("seed %d agent %d row %d: reports %v, its assignment costs %v", seed, i, r, got, e)
				}
				first := len(be.row.factors) - len(be.row.plans)
				for s := range be.row.plans {
					if be.row.factors[first+s].Costs != nil || be.row.args[s] != nil {
						t.Fatalf("seed %d agent %d: bucket %d's tables kept after a row", seed, i, s)
					}
				}
			}
			checked++
		}
	}
	if checked < 60 {
		t.Fatalf("only %d subproblems checked", checked)
	}

	// A plan past transientEntries is transient by itself: a boundary
	// variable and a 5-clique of interior variables of 34 values, whose
	// first bucket has 34^4 entries.
	p := &mva.Problem{Name: "wide", Agents: []mva.Agent{{Name: "a"}}}
	dom := func(n int) []string {
		d := make([]string, n)
		for k := range d {
			d[k] = fmt.Sprint(k)
		}
		return d
	}
	p.Variables = append(p.Variables, mva.Variable{Name: "b", Domain: dom(2)})
	for k := range 5 {
		p.Variables = append(p.Variables, mva.Variable{Name: fmt.Sprintf("x%d", k), Domain: dom(34)})
	}
	costs := make([]float64, 2*34*34*34)
	for k := range costs {
		costs[k] = float64(k % 7)
	}
	for _, tri := range [][3]int{{1, 2, 3}, {1, 4, 5}, {2, 4, 5}, {1, 3, 4}, {2, 3, 5}} {
		p.Functions = append(p.Functions, mva.Function{Scope: []int{0, tri[0], tri[1], tri[2]}, Costs: costs})
	}
	sub := mva.Subproblem{Agent: 0, Local: []int{0, 1, 2, 3, 4, 5}, Boundary: []int{0}, Interior: []int{1, 2, 3, 4, 5}, Functions: []int{0, 1, 2, 3, 4}}
	lp := mva.NewLocalProblem(p, &sub)
	be, err := NewBE(lp, BEOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := be.row.entries(); n <= transientEntries || !be.transient {
		t.Fatalf("plan of %d entries: transient %v", n, be.transient)
	}
	in := make([]int, 5)
	if c, err := be.SolveRow(ctx, []int{1}, in); err != nil || c != 0 {
		t.Errorf("wide row: %v, %v; want 0 (entry 0 of every table at x = 0)", c, err)
	}
}

// TestBEMemoRows solves sequences of rows with one BE, which reruns only
// the buckets whose inputs changed since the last row, and checks every
// answer (cost and interior assignment, bit for bit) against a BE that
// solves each row from scratch: rows in table order (the last boundary
// variables change fastest, as a lazy MVA table asks), repeated rows, rows
// differing in one random variable, and random rows, with a quarter of the
// rows preceded by an edit of one function entry in place. The memo must
// also save work: over the subproblems, fewer entries read than from
// scratch.
func TestBEMemoRows(t *testing.T) {
	ctx := context.Background()
	checked := 0
	var memoReads, fullReads int64
	seededSubs(120, func(seed int64, i int, lp *mva.LocalProblem) {
		memo, err := NewBE(lp, BEOptions{})
		if err != nil {
			t.Fatal(err)
		}
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
		seq = append(seq, seq[len(seq)-1], seq[0], seq[0])
		for range 2 * rows {
			b := append([]int(nil), seq[len(seq)-1]...)
			if rng.IntN(2) == 0 {
				k := rng.IntN(lp.NB)
				b[k] = rng.IntN(lp.Domains[k])
			} else {
				for k := range b {
					b[k] = rng.IntN(lp.Domains[k])
				}
			}
			seq = append(seq, b)
		}
		got, want := make([]int, lp.NumInterior()), make([]int, lp.NumInterior())
		for n, b := range seq {
			if len(lp.Funcs) > 0 && rng.IntN(4) == 0 {
				// An edit in place, as the SH-MGM baseline makes.
				f := lp.Funcs[rng.IntN(len(lp.Funcs))].Costs
				c := float64(rng.IntN(10))
				if rng.IntN(8) == 0 {
					c = mva.Hard
				}
				f[rng.IntN(len(f))] = c
			}
			wc, freshChecks := fromScratch(t, lp, b, want)
			before := memo.Checks()
			gc, err := memo.SolveRow(ctx, b, got)
			if err != nil {
				t.Fatal(err)
			}
			memoReads += memo.Checks() - before
			fullReads += freshChecks
			if math.Float64bits(gc) != math.Float64bits(wc) || !slices.Equal(got, want) {
				t.Fatalf("seed %d agent %d, row %d of the sequence %v: memo %v %v, from scratch %v %v", seed, i, n, b, gc, got, wc, want)
			}
		}
		checked++
	})
	if checked < 60 {
		t.Fatalf("only %d subproblems checked", checked)
	}
	if memoReads >= fullReads {
		t.Errorf("the memo read %d entries, solving from scratch %d", memoReads, fullReads)
	}
	t.Logf("%d subproblems: %d entries read with the memo, %d from scratch", checked, memoReads, fullReads)
}
