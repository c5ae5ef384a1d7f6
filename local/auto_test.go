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
	"github.com/hearth-dcop/hearth/mva/gen"
)

// TestChoose: bucket elimination where its tables are small, EDAC or AOBB where
// they pass AutoBEEntries or the budget; the widths agree with BE's own,
// and the chosen solver is exact (where Choose stopped the elimination
// early, AtLeast, its width is at most BE's).
func TestChoose(t *testing.T) {
	for _, tc := range []struct {
		name   string
		o      randprob.Options
		memory int64
		want   string
	}{
		{"narrow", randprob.Options{Vars: 10, MinDomain: 3, MaxDomain: 3, MaxArity: 2, Functions: 12, IntCosts: true}, 0, "be"},
		{"narrow, no memory", randprob.Options{Vars: 10, MinDomain: 3, MaxDomain: 3, MaxArity: 2, Functions: 12, IntCosts: true}, 64, "edac"},
		{"narrow ternary, no memory", randprob.Options{Vars: 10, MinDomain: 3, MaxDomain: 3, MaxArity: 3, Functions: 12, IntCosts: true}, 64, "aobb"},
		{"wide", randprob.Options{Vars: 40, MinDomain: 4, MaxDomain: 4, MaxArity: 3, Functions: 90, IntCosts: true}, 0, "aobb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := randprob.New(3, tc.o)
			lp := mva.NewLocalProblem(p, mva.Whole(p))
			c := Choose(lp, AutoOptions{Memory: tc.memory})
			if c.Name != tc.want {
				t.Fatalf("chose %s (%s), want %s", c.Name, c.Reason, tc.want)
			}
			if !strings.Contains(c.Reason, "auto chose "+tc.want) {
				t.Errorf("reason %q", c.Reason)
			}
			if be, err := NewBE(lp, BEOptions{MaxEntries: 1 << 30}); err == nil && (be.RowWidth() != c.Width && !c.AtLeast || be.RowWidth() < c.Width) {
				t.Errorf("width %d (at least: %v), BE's %d", c.Width, c.AtLeast, be.RowWidth())
			}
			s, c2, err := Auto(lp, AutoOptions{Memory: tc.memory})
			if err != nil {
				t.Fatal(err)
			}
			if c2.Name != tc.want {
				t.Errorf("Auto chose %s", c2.Name)
			}
			if space(p) > 1<<20 {
				return
			}
			in := make([]int, lp.NumInterior())
			got, err := s.SolveRow(context.Background(), nil, in)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := NewBruteForce(lp).SolveRow(context.Background(), nil, in)
			if got != want {
				t.Errorf("%s = %v, bruteforce %v", c.Name, got, want)
			}
		})
	}
}

// TestChooseTableWidth: with a boundary, the table plan's width is BE's
// Width (boundary variables as neighbours) and the row plan's RowWidth.
func TestChooseTableWidth(t *testing.T) {
	checked := 0
	for seed := range int64(60) {
		p := randprob.New(seed, randprob.Options{Agents: 2, Vars: 12, MinDomain: 2, MaxDomain: 3, MaxArity: 3, Functions: 16, IntCosts: true, Locality: 0.6})
		d := mva.Decompose(p)
		for i := range d.Subs {
			lp := mva.NewLocalProblem(p, &d.Subs[i])
			if lp.NB == 0 || lp.NumInterior() == 0 {
				continue
			}
			be, err := NewBE(lp, BEOptions{MaxEntries: 1 << 30})
			if err != nil {
				t.Fatal(err)
			}
			if pl, _ := beCost(lp, true); pl.width != be.Width() {
				t.Errorf("seed %d agent %d: table width %d, BE's %d", seed, i, pl.width, be.Width())
			}
			if pl, _ := beCost(lp, false); pl.width != be.RowWidth() {
				t.Errorf("seed %d agent %d: row width %d, BE's %d", seed, i, pl.width, be.RowWidth())
			}
			checked++
		}
	}
	if checked < 30 {
		t.Fatalf("only %d subproblems", checked)
	}
}

// TestNewBEWithin: bucket elimination is refused up front, with
// ErrTooLarge, when its tables pass the budget, and built within it.
func TestNewBEWithin(t *testing.T) {
	p := randprob.New(3, randprob.Options{Vars: 14, MinDomain: 3, MaxDomain: 3, MaxArity: 3, Functions: 30, IntCosts: true})
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	_, entries := beCost(lp, false)
	need := int64(entries * beBytesPerEntry)
	if _, err := NewBEWithin(lp, need-1); !errors.Is(err, ErrTooLarge) {
		t.Errorf("budget %d below %d: err = %v", need-1, need, err)
	}
	be, err := NewBEWithin(lp, need)
	if err != nil {
		t.Fatal(err)
	}
	got, err := be.SolveRow(context.Background(), nil, make([]int, lp.NumInterior()))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := NewBruteForce(lp).SolveRow(context.Background(), nil, make([]int, lp.NumInterior()))
	if got != want {
		t.Errorf("be = %v, bruteforce %v", got, want)
	}
}

// TestChooseEDAC: a binary problem too wide for bucket elimination whose
// variables are mostly of degree at most two (a dense core with paths
// hanging off it) goes to EDAC; with one ternary function it goes to AOBB.
// Either way the answer is bucket elimination's.
func TestChooseEDAC(t *testing.T) {
	p := randprob.New(5, randprob.Options{Vars: 24, MinDomain: 5, MaxDomain: 5, MaxArity: 2, Functions: 140, IntCosts: true, MaxCost: 20})
	dom := p.Variables[0].Domain
	for i := range 30 {
		v := len(p.Variables)
		p.Variables = append(p.Variables, mva.Variable{Name: "p" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Domain: dom})
		prev := i % 24
		if i >= 24 {
			prev = v - 24
		}
		c := make([]float64, 25)
		for e := range c {
			c[e] = float64((e*7 + i*3) % 11)
		}
		p.Functions = append(p.Functions, mva.Function{Scope: []int{prev, v}, Costs: c})
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	c := Choose(lp, AutoOptions{})
	if c.Entries <= AutoBEEntries {
		t.Fatalf("test problem too narrow: %.3g entries", c.Entries)
	}
	if c.Name != "edac" || !strings.Contains(c.Reason, "auto chose edac") {
		t.Fatalf("chose %s (%s), want edac", c.Name, c.Reason)
	}
	want := beOptimum(t, lp, 1<<30)
	s, _, err := Auto(lp, AutoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.SolveRow(context.Background(), nil, make([]int, lp.NumInterior()))
	if err != nil || got != want {
		t.Fatalf("edac = %v (%v), be %v", got, err, want)
	}

	q := *p
	q.Functions = append(slices.Clone(p.Functions), mva.Function{Scope: []int{0, 1, 2}, Costs: make([]float64, 125)})
	if c := Choose(mva.NewLocalProblem(&q, mva.Whole(&q)), AutoOptions{}); c.Name != "aobb" {
		t.Fatalf("with a ternary function: chose %s (%s), want aobb", c.Name, c.Reason)
	}
}

// TestChooseEDACThenAOBB: a binary problem over 16 values, too wide for
// bucket elimination, with few variables to eliminate goes to EDAC within
// its budget, then AOBB; over 5 values it goes to AOBB. Both paths give bucket elimination's optimum: EDAC
// within the budget, and AOBB after an EDAC whose budget is one check.
func TestChooseEDACThenAOBB(t *testing.T) {
	p := randprob.New(7, randprob.Options{Vars: 14, MinDomain: 16, MaxDomain: 16, MaxArity: 2, Functions: 90, IntCosts: true, MaxCost: 20})
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	c := Choose(lp, AutoOptions{})
	if c.Entries <= AutoBEEntries || c.Name != "edac+aobb" || !strings.Contains(c.Reason, "auto chose edac+aobb") {
		t.Fatalf("chose %s (%s) at %.3g entries, want edac+aobb", c.Name, c.Reason, c.Entries)
	}
	want := beOptimum(t, lp, 1<<30)
	q := randprob.New(7, randprob.Options{Vars: 26, MinDomain: 5, MaxDomain: 5, MaxArity: 2, Functions: 160, IntCosts: true, MaxCost: 20})
	if c := Choose(mva.NewLocalProblem(q, mva.Whole(q)), AutoOptions{}); c.Name != "aobb" {
		t.Fatalf("5 values: chose %s (%s), want aobb", c.Name, c.Reason)
	}
	solveBothBudgets(t, lp, edacBudget, want, true)
}

// TestChooseTwoValues checks that a binary grid over two values too wide
// for bucket elimination gets EDAC within edacTwoBudget checks, then AOBB,
// and that both ways (the budget and one check) answer AOBB's optimum with
// an assignment of that cost.
func TestChooseTwoValues(t *testing.T) {
	p, err := gen.Grid(3, gen.GridOptions{Rows: 16, Cols: 16, GraphOptions: gen.GraphOptions{Domain: 2, MaxCost: 100, Tightness: 1}})
	if err != nil {
		t.Fatal(err)
	}
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	c := Choose(lp, AutoOptions{})
	if c.Name != "edac+aobb" || c.budget != edacTwoBudget || !strings.Contains(c.Reason, "two values") {
		t.Fatalf("chose %s (%s), budget %d; want edac+aobb within %d checks", c.Name, c.Reason, c.budget, edacTwoBudget)
	}
	want, err := NewAOBB(lp, AOBBOptions{}).SolveRow(context.Background(), nil, make([]int, lp.NumInterior()))
	if err != nil {
		t.Fatal(err)
	}
	solveBothBudgets(t, lp, edacTwoBudget, want, false)
}

// TestChooseComplete checks that a binary problem whose every pair of
// variables shares a function (no decomposition for AOBB) and too wide
// for bucket elimination gets EDAC within edacTwoBudget checks, then
// AOBB, and that its answer is brute force's.
func TestChooseComplete(t *testing.T) {
	const n = 8
	p := randprob.New(5, randprob.Options{Vars: n, MinDomain: 6, MaxDomain: 6, MaxArity: 2, Functions: 1, IntCosts: true, MaxCost: 20})
	// Replace the functions by one over every pair, seeded.
	rng := rand.New(rand.NewPCG(5, 1))
	p.Functions = nil
	for a := range n {
		for b := a + 1; b < n; b++ {
			costs := make([]float64, 36)
			for i := range costs {
				costs[i] = float64(rng.IntN(20))
			}
			p.Functions = append(p.Functions, mva.Function{Scope: []int{a, b}, Costs: costs})
		}
	}
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	c := Choose(lp, AutoOptions{})
	if c.Width != n-1 || c.Name != "edac+aobb" || c.budget != edacTwoBudget || !strings.Contains(c.Reason, "chain pseudo-tree") {
		t.Fatalf("chose %s (%s) at width %d, budget %d; want edac+aobb within %d checks", c.Name, c.Reason, c.Width, c.budget, edacTwoBudget)
	}
	s, _, err := Auto(lp, AutoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in := make([]int, lp.NumInterior())
	got, err := s.SolveRow(context.Background(), nil, in)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := NewBruteForce(lp).SolveRow(context.Background(), nil, make([]int, lp.NumInterior()))
	if got != want || lp.Eval(in) != got {
		t.Fatalf("auto %v (assignment %v), bruteforce %v", got, lp.Eval(in), want)
	}
}

// TestEDACShapeMatchesEDAC checks that edacShape, which counts on the
// graph alone, counts the variables EDAC itself eliminates before search,
// on seeded random binary problems of varied density, with and without a
// boundary.
func TestEDACShapeMatchesEDAC(t *testing.T) {
	checked := 0
	for seed := range int64(40) {
		o := randprob.Options{Agents: 1 + int(seed%3), Vars: 8 + int(seed%20), MinDomain: 2, MaxDomain: 4, MaxArity: 2, Functions: 6 + int(seed*3%50), IntCosts: true, Locality: 0.7}
		p := randprob.New(seed, o)
		d := mva.Decompose(p)
		for i := range d.Subs {
			lp := mva.NewLocalProblem(p, &d.Subs[i])
			binary, n, elim := edacShape(lp)
			if !binary {
				t.Fatalf("seed %d: binary problem reported not binary", seed)
			}
			e := NewEDAC(lp)
			if n != e.n || elim != len(e.elim) {
				t.Fatalf("seed %d, agent %d: edacShape %d of %d eliminated, EDAC %d of %d", seed, i, elim, n, len(e.elim), e.n)
			}
			if elim > 0 && elim < n {
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no problem with some but not all variables eliminated")
	}
}

// TestAutoSharesOrder checks that the bucket elimination Auto builds runs
// the very order Choose searched (the same slice, not a second search),
// and that this order is the one NewBE finds on its own, row and table
// alike, on problems that allow the order search.
func TestAutoSharesOrder(t *testing.T) {
	checked, searched := 0, 0
	for seed := range int64(12) {
		p := randprob.New(seed, randprob.Options{Agents: 2, Vars: 44, MinDomain: 4, MaxDomain: 8, MaxArity: 3, Functions: 60, IntCosts: true, Locality: 0.7})
		p.SearchOrder = true
		d := mva.Decompose(p)
		for i := range d.Subs {
			lp := mva.NewLocalProblem(p, &d.Subs[i])
			if lp.NumInterior() < 2 {
				continue
			}
			for _, table := range []bool{false, true} {
				s, c, err := Auto(lp, AutoOptions{Table: table})
				if err != nil {
					t.Fatal(err)
				}
				be, ok := s.(*BE)
				if !ok {
					continue
				}
				own, err := NewBE(lp, BEOptions{MaxEntries: 1 << 30})
				if err != nil {
					t.Fatal(err)
				}
				got, want := be.rowOrder, own.rowOrder
				if table {
					be.planTable()
					own.planTable()
					got, want = be.tableOrder, own.tableOrder
				}
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d agent %d table %v: order %v, NewBE's own %v", seed, i, table, got, want)
				}
				if len(got) > 0 && (table && lp.NB > 0 || !table) && &got[0] != &c.plan.order[0] {
					t.Fatalf("seed %d agent %d table %v: BE searched its order again", seed, i, table)
				}
				checked++
				if g := mva.NewGraph(len(lp.Vars)); g != nil {
					scopes := orderScopes(lp, table)
					for _, sc := range scopes {
						g.AddClique(sc)
					}
					o, _ := g.MinFill(c.plan.order)
					if costOf(len(lp.Vars), scopes, lp.Domains, o).joins >= beSearchFrom {
						searched++
					}
				}
			}
		}
	}
	if checked == 0 || searched == 0 {
		t.Fatalf("%d subproblems chose bucket elimination, %d with an order search; want some of each", checked, searched)
	}
}

// BenchmarkAutoOrder measures what sharing Choose's order with bucket
// elimination saves: "shared" is Auto (one order search), "twice" is
// Choose then NewBE searching again (as before), on the subproblems of
// TestAutoSharesOrder's problems that choose bucket elimination.
func BenchmarkAutoOrder(b *testing.B) {
	var lps []*mva.LocalProblem
	for seed := range int64(12) {
		p := randprob.New(seed, randprob.Options{Agents: 2, Vars: 44, MinDomain: 4, MaxDomain: 8, MaxArity: 3, Functions: 60, IntCosts: true, Locality: 0.7})
		p.SearchOrder = true
		d := mva.Decompose(p)
		for i := range d.Subs {
			lp := mva.NewLocalProblem(p, &d.Subs[i])
			if Choose(lp, AutoOptions{}).Name == "be" {
				lps = append(lps, lp)
			}
		}
	}
	b.Run("shared", func(b *testing.B) {
		for b.Loop() {
			for _, lp := range lps {
				if _, _, err := Auto(lp, AutoOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("twice", func(b *testing.B) {
		for b.Loop() {
			for _, lp := range lps {
				c := Choose(lp, AutoOptions{})
				maxEntries := int(min(float64(DefaultMemory())/beBytesPerEntry, math.MaxInt32))
				if _, err := NewBE(lp, BEOptions{MaxEntries: maxEntries}); err != nil || c.Name != "be" {
					b.Fatal(err)
				}
			}
		}
	})
}

// TestChooseStopsEarly: Choose's min-fill elimination stops once its
// tables pass what bucket elimination may have, and what it reports then
// are lower bounds of the whole elimination's (the same order's prefix);
// where it does not stop, its width, entries and order are beCost's.
func TestChooseStopsEarly(t *testing.T) {
	stopped, whole := 0, 0
	for seed := range int64(40) {
		n := 10 + int(seed%5)*10
		o := randprob.Options{Vars: n, MinDomain: 2, MaxDomain: 2 + int(seed%3), MaxArity: 2 + int(seed%2),
			Functions: n * (2 + int(seed%3)), IntCosts: true}
		p := randprob.New(seed, o)
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		full, entries := beCost(lp, false)
		c := Choose(lp, AutoOptions{})
		part, pe, done, sp, spaceOK := beCostWithin(lp, false, AutoBEEntries)
		if done != !c.AtLeast || pe != c.Entries || part.width != c.Width {
			t.Fatalf("seed %d: beCostWithin %v %v width %d, Choose %v %v width %d", seed, done, pe, part.width, !c.AtLeast, c.Entries, c.Width)
		}
		// The space measured in the same pass is the pseudo-tree's
		// (searchSpace), or a lower bound of it past EDACSpace.
		if want := searchSpace(lp); spaceOK && sp != want && (sp < EDACSpace || sp > want) {
			t.Fatalf("seed %d: space %v in the pass, %v of the pseudo-tree", seed, sp, want)
		}
		if !slices.Equal(part.order, full.order[:len(part.order)]) {
			t.Fatalf("seed %d: the stopped order is not a prefix of min-fill's", seed)
		}
		if done {
			whole++
			if pe != entries || part.width != full.width || len(part.order) != len(full.order) {
				t.Fatalf("seed %d: whole elimination %v entries width %d, beCost's %v width %d", seed, pe, part.width, entries, full.width)
			}
			continue
		}
		stopped++
		if !(pe > AutoBEEntries) || pe > entries || part.width > full.width || c.Name == "be" || !strings.Contains(c.Reason, "more than") {
			t.Fatalf("seed %d: stopped at %v entries width %d (%s); whole %v width %d", seed, pe, part.width, c.Reason, entries, full.width)
		}
	}
	if stopped == 0 || whole == 0 {
		t.Fatalf("%d stopped, %d whole: the test misses a case", stopped, whole)
	}
	t.Logf("%d stopped, %d whole", stopped, whole)
}

// solveBothBudgets solves lp through Auto's EDAC-then-AOBB twice: with
// EDAC's budget and with one check (so AOBB answers). Both must answer
// want with an assignment of that cost, AOBB only in the second; with
// described, Describe must say which answered.
func solveBothBudgets(t *testing.T, lp *mva.LocalProblem, budget int64, want float64, described bool) {
	t.Helper()
	for _, b := range []int64{budget, 1} {
		s, _, err := Auto(lp, AutoOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pf := s.(*edacThenAOBB)
		pf.edac.budget = b
		in := make([]int, lp.NumInterior())
		got, err := s.SolveRow(context.Background(), nil, in)
		if err != nil || got != want {
			t.Fatalf("budget %d: %v (%v), want %v", b, got, err, want)
		}
		if e := lp.Eval(in); e != got {
			t.Fatalf("budget %d: assignment costs %v, reported %v", b, e, got)
		}
		if pf.byAOBB != (b == 1) {
			t.Fatalf("budget %d: answered by aobb %v", b, pf.byAOBB)
		}
		if d := pf.Describe(); described && !strings.HasPrefix(d, map[bool]string{true: "edac passed", false: "edac:"}[b == 1]) {
			t.Fatalf("budget %d: described %q", b, d)
		}
	}
}

// TestChooseTwoValuesFirst checks Choose's first case: binary problems
// over two values of edacFirstVars variables or more get EDAC first,
// unsized; past its first budget (made one check here) a narrow one (a
// 4×40 grid) goes to bucket elimination and a wide one (16×16) to EDAC
// within edacTwoBudget checks, each answering bucket elimination's or
// AOBB's optimum with an assignment of that cost, for every row of a
// table with a boundary too. Below edacFirstVars, Choose sizes the
// tables as before.
func TestChooseTwoValuesFirst(t *testing.T) {
	for _, tc := range []struct {
		rows, cols int
		agents     bool
		sized      string // chooseSized's choice
	}{
		{4, 40, false, "be"},
		{16, 16, false, "edac+aobb"},
		{6, 16, true, "be"},
	} {
		t.Run(fmt.Sprintf("%dx%d agents %v", tc.rows, tc.cols, tc.agents), func(t *testing.T) {
			p, err := gen.Grid(uint64(tc.rows), gen.GridOptions{Rows: tc.rows, Cols: tc.cols, GraphOptions: gen.GraphOptions{Domain: 2, MaxCost: 100, Tightness: 1}})
			if err != nil {
				t.Fatal(err)
			}
			if tc.agents {
				// Two agents, a 2×2 corner one agent's: the other's rows
				// have a boundary of four variables.
				p.Agents = []mva.Agent{{Name: "a"}, {Name: "b"}}
				for v := range p.Variables {
					p.Variables[v].Agent = 1
					if v%tc.cols < 2 && v/tc.cols < 2 {
						p.Variables[v].Agent = 0
					}
				}
			}
			lp := mva.NewLocalProblem(p, mva.Whole(p))
			if tc.agents {
				d := mva.Decompose(p)
				lp = mva.NewLocalProblem(p, &d.Subs[1])
				if lp.NB == 0 {
					t.Fatal("no boundary")
				}
			}
			c := Choose(lp, AutoOptions{})
			if c.Name != "edac+aobb" || c.first != edacFirstPerVar*int64(lp.NumInterior()) || !c.AtLeast || !strings.Contains(c.Reason, "two values") {
				t.Fatalf("chose %s (%s), first %d", c.Name, c.Reason, c.first)
			}
			if sc := chooseSized(lp, AutoOptions{}); sc.Name != tc.sized {
				t.Fatalf("sized: chose %s (%s), want %s", sc.Name, sc.Reason, tc.sized)
			}
			truth := NewAOBB(lp, AOBBOptions{})
			rows := 1
			for _, v := range lp.Domains[:lp.NB] {
				rows *= v
			}
			for _, first := range []int64{c.first, 1} {
				s, _, err := Auto(lp, AutoOptions{})
				if err != nil {
					t.Fatal(err)
				}
				pf := s.(*edacThenAOBB)
				pf.first = first
				bd := make([]int, lp.NB)
				for r := range rows {
					for i, m := 0, r; i < lp.NB; i++ {
						bd[i], m = m%lp.Domains[i], m/lp.Domains[i]
					}
					in := make([]int, lp.NumInterior())
					want, err := truth.SolveRow(context.Background(), bd, make([]int, lp.NumInterior()))
					if err != nil {
						t.Fatal(err)
					}
					got, err := s.SolveRow(context.Background(), bd, in)
					if err != nil || got != want {
						t.Fatalf("first %d row %d: %v (%v), want %v", first, r, got, err, want)
					}
					full := append(slices.Clone(bd), in...)
					if e := lp.Eval(full); e != got {
						t.Fatalf("first %d row %d: assignment costs %v, reported %v", first, r, e, got)
					}
					byBE := first == 1 && tc.sized == "be"
					if pf.byBE != byBE || pf.byAOBB {
						t.Fatalf("first %d row %d: by be %v, by aobb %v", first, r, pf.byBE, pf.byAOBB)
					}
					if d := pf.Describe(); !strings.HasPrefix(d, map[bool]string{true: "edac passed its first budget", false: "edac:"}[byBE]) {
						t.Fatalf("first %d: described %q", first, d)
					}
				}
			}
		})
	}
	p, err := gen.Grid(3, gen.GridOptions{Rows: 7, Cols: 9, GraphOptions: gen.GraphOptions{Domain: 2, MaxCost: 100, Tightness: 1}})
	if err != nil {
		t.Fatal(err)
	}
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	if c := Choose(lp, AutoOptions{}); c.first != 0 || c.Name != "be" || c.AtLeast {
		t.Fatalf("63 variables: chose %s (%s), first %d", c.Name, c.Reason, c.first)
	}
}

// TestChooseSearchSpace checks Choose's last binary rule: binary random
// problems over 5 values, too wide for bucket elimination, with few
// variables to eliminate and a min-fill AND/OR search space past
// EDACSpace get EDAC within edacBudget checks, then AOBB, whole and as
// the rows of a boundary (the neighbours of another agent's one
// variable; two of its rows). Each row answers the same optimum both ways
// (EDAC within the budget; AOBB after an EDAC of one check), with an
// assignment of that cost. A 12×12 grid over 3 values, whose space is
// below EDACSpace, stays with AOBB.
func TestChooseSearchSpace(t *testing.T) {
	for _, tc := range []struct {
		seed   int64
		agents bool
	}{{7, false}, {4, true}} {
		p := randprob.New(tc.seed, randprob.Options{Vars: 60, MinDomain: 5, MaxDomain: 5, MaxArity: 2, Functions: 300, IntCosts: true, MaxCost: 20})
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		if tc.agents {
			p.Agents = []mva.Agent{{Name: "a"}, {Name: "b"}}
			for v := range p.Variables {
				p.Variables[v].Agent = min(v, 1)
			}
			d := mva.Decompose(p)
			lp = mva.NewLocalProblem(p, &d.Subs[1])
			if lp.NB == 0 {
				t.Fatal("no boundary")
			}
		}
		c := Choose(lp, AutoOptions{})
		if sp := searchSpace(lp); c.Name != "edac+aobb" || c.budget != edacBudget || sp < EDACSpace || !strings.Contains(c.Reason, "search space") {
			t.Fatalf("seed %d: chose %s (%s), budget %d, space %.3g; want edac+aobb within %d checks", tc.seed, c.Name, c.Reason, c.budget, sp, edacBudget)
		}
		rows := 1
		for _, v := range lp.Domains[:lp.NB] {
			rows *= v
		}
		for _, r := range slices.Compact([]int{0, rows - 1}) {
			bd := make([]int, lp.NB)
			for i, m := 0, r; i < lp.NB; i++ {
				bd[i], m = m%lp.Domains[i], m/lp.Domains[i]
			}
			edacAndAOBBAgree(t, fmt.Sprintf("seed %d row %d", tc.seed, r), lp, bd)
		}
	}
	g, err := gen.Grid(3, gen.GridOptions{Rows: 12, Cols: 12, GraphOptions: gen.GraphOptions{Domain: 3, MaxCost: 100, Tightness: 1}})
	if err != nil {
		t.Fatal(err)
	}
	lp := mva.NewLocalProblem(g, mva.Whole(g))
	if c, sp := Choose(lp, AutoOptions{}), searchSpace(lp); c.Name != "aobb" || sp >= EDACSpace {
		t.Fatalf("12×12 grid over 3 values: chose %s (%s) at space %.3g, want aobb", c.Name, c.Reason, sp)
	}
}

// TestChooseSearchSpaceNary checks that Choose's search-space rule holds
// for functions of any arity: TestChooseSearchSpace's binary random
// problem with ternary functions added, its search space still past
// EDACSpace, gets EDAC within edacBudget checks, then AOBB (the sequential
// ISCAS89 circuits, docs/bench/toulbar2-wider.md: EDAC 19 to 181 ms, AOBB
// 0.4 to 1.45 s), and answers the same optimum both ways, with an
// assignment of that cost; with the space below EDACSpace (a smaller
// problem of the same kind) it stays with AOBB.
func TestChooseSearchSpaceNary(t *testing.T) {
	for _, tc := range []struct {
		vars, funcs int
		want        string
	}{{60, 300, "edac+aobb"}, {60, 200, "aobb"}} {
		p := randprob.New(7, randprob.Options{Vars: tc.vars, MinDomain: 5, MaxDomain: 5, MaxArity: 2, Functions: tc.funcs, IntCosts: true, MaxCost: 20})
		for k := range 3 {
			costs := make([]float64, 5*5*5)
			for i := range costs {
				costs[i] = float64((i*7 + k*3) % 11)
			}
			p.Functions = append(p.Functions, mva.Function{Name: fmt.Sprintf("t%d", k), Scope: []int{3 * k, 3*k + 1, 3*k + 2}, Costs: costs})
		}
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		if binary, _, _ := edacShape(lp); binary {
			t.Fatal("still binary")
		}
		c, sp := Choose(lp, AutoOptions{}), searchSpace(lp)
		if c.Name != tc.want || (sp >= EDACSpace) != (tc.want == "edac+aobb") {
			t.Fatalf("%d variables: chose %s (%s) at space %.3g, want %s", tc.vars, c.Name, c.Reason, sp, tc.want)
		}
		if tc.want != "edac+aobb" {
			continue
		}
		if c.budget != edacBudget || !strings.Contains(c.Reason, "more than two variables") {
			t.Fatalf("budget %d, reason %q", c.budget, c.Reason)
		}
		edacAndAOBBAgree(t, fmt.Sprintf("%d variables", tc.vars), lp, nil)
	}
}

// edacAndAOBBAgree solves row bd of lp by Auto's edac+aobb twice, EDAC
// within edacBudget checks and within one check (so that AOBB answers),
// and checks that each answer is the cost of its assignment, that the
// solver the budget calls for answered, and that the two agree.
func edacAndAOBBAgree(t *testing.T, what string, lp *mva.LocalProblem, bd []int) {
	t.Helper()
	var answers []float64
	for _, budget := range []int64{edacBudget, 1} {
		s, _, err := Auto(lp, AutoOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pf := s.(*edacThenAOBB)
		pf.edac.budget = budget
		in := make([]int, lp.NumInterior())
		got, err := s.SolveRow(context.Background(), bd, in)
		if err != nil {
			t.Fatalf("%s budget %d: %v", what, budget, err)
		}
		if e := lp.Eval(append(slices.Clone(bd), in...)); e != got {
			t.Fatalf("%s budget %d: assignment costs %v, reported %v", what, budget, e, got)
		}
		if pf.byAOBB != (budget == 1) {
			t.Fatalf("%s budget %d: answered by aobb %v", what, budget, pf.byAOBB)
		}
		answers = append(answers, got)
	}
	if answers[0] != answers[1] {
		t.Fatalf("%s: edac %v, aobb %v", what, answers[0], answers[1])
	}
}

// TestFirstBudgetThenSized checks where edacThenAOBB sends the rows once
// EDAC passes its first budget (made one check here): where chooseSized
// sends them, EDAC's budget included. A 12×12 grid over 3 values, which
// chooseSized gives AOBB, must go to AOBB, not back to EDAC within the
// budget Auto gave (edacTwoBudget: up to 2^28 checks, 77 → 924 ms on
// 75-16-5.uai in an experiment that gave such rows a first budget); the
// random graph of TestChooseSearchSpace, which chooseSized gives EDAC
// within edacBudget checks, must get that budget. Each answers AOBB's
// optimum with an assignment of that cost.
func TestFirstBudgetThenSized(t *testing.T) {
	g, err := gen.Grid(3, gen.GridOptions{Rows: 12, Cols: 12, GraphOptions: gen.GraphOptions{Domain: 3, MaxCost: 100, Tightness: 1}})
	if err != nil {
		t.Fatal(err)
	}
	r := randprob.New(7, randprob.Options{Vars: 60, MinDomain: 5, MaxDomain: 5, MaxArity: 2, Functions: 300, IntCosts: true, MaxCost: 20})
	for _, tc := range []struct {
		name   string
		p      *mva.Problem
		sized  string
		budget int64 // EDAC's budget after sizing, for edac+aobb
	}{
		{"grid 12x12 over 3 values", g, "aobb", 0},
		{"random graph over 5 values", r, "edac+aobb", edacBudget},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lp := mva.NewLocalProblem(tc.p, mva.Whole(tc.p))
			if sc := chooseSized(lp, AutoOptions{}); sc.Name != tc.sized {
				t.Fatalf("sized: chose %s (%s), want %s", sc.Name, sc.Reason, tc.sized)
			}
			want, err := NewAOBB(lp, AOBBOptions{}).SolveRow(context.Background(), nil, make([]int, lp.NumInterior()))
			if err != nil {
				t.Fatal(err)
			}
			e := NewEDACVAC(lp)
			e.budget = edacTwoBudget
			s := &edacThenAOBB{lp: lp, edac: e, memory: DefaultMemory(), first: 1}
			solvesTo(t, s, lp, want)
			if tc.sized == "aobb" {
				if !s.byAOBB || s.aobb == nil || !strings.HasPrefix(s.Describe(), "edac passed its first budget") {
					t.Fatalf("by aobb %v, described %q", s.byAOBB, s.Describe())
				}
				return
			}
			if s.edac.budget != tc.budget {
				t.Fatalf("edac's budget %d, want %d", s.edac.budget, tc.budget)
			}
		})
	}
}

// pigeonhole returns n variables over k < n values, each pair costing 1
// (u+v even) or 2 (odd) when equal: the optimum is 1 (one equal pair,
// an even one), which EDAC's local search finds at once and its bound
// (0 at the root) proves only after thousands of nodes.
func pigeonhole(n, k int) *mva.Problem {
	p := &mva.Problem{Name: "pigeonhole", Agents: []mva.Agent{{Name: "a"}}}
	dom := make([]string, k)
	for i := range dom {
		dom[i] = fmt.Sprint(i)
	}
	for v := range n {
		p.Variables = append(p.Variables, mva.Variable{Name: fmt.Sprint("x", v), Domain: dom})
	}
	for u := range n {
		for v := u + 1; v < n; v++ {
			c := make([]float64, k*k)
			for a := range k {
				c[a*k+a] = 1 + float64((u+v)%2)
			}
			p.Functions = append(p.Functions, mva.Function{Name: fmt.Sprintf("f%d_%d", u, v), Scope: []int{u, v}, Costs: c})
		}
	}
	return p
}

// TestEDACStale checks edacThenAOBB's stale rule (EDAC.staleNodes): a row whose
// EDAC searches edacStaleNodes nodes without improving its local
// search's upper bound goes to AOBB (8 pigeons in 7 holes: EDAC alone
// 5136 nodes), one without the rule stays with EDAC, and a row whose
// EDAC improves its bound (TestChooseSearchSpace's random graph, which
// Auto gives the rule) is not stopped by it. Each answers the optimum
// (1 for the pigeons; AOBB's for the graph) with an assignment of that
// cost.
func TestEDACStale(t *testing.T) {
	holes := pigeonhole(8, 7)
	graph := randprob.New(7, randprob.Options{Vars: 60, MinDomain: 5, MaxDomain: 5, MaxArity: 2, Functions: 300, IntCosts: true, MaxCost: 20})
	for _, tc := range []struct {
		name    string
		p       *mva.Problem
		stale   int64
		want    float64 // <0: AOBB's
		byStale bool
	}{
		{"pigeons, stale rule", holes, edacStaleNodes, 1, true},
		{"pigeons, no stale rule", holes, 0, 1, false},
		{"random graph, Auto's", graph, -1, -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lp := mva.NewLocalProblem(tc.p, mva.Whole(tc.p))
			var s *edacThenAOBB
			if tc.stale < 0 {
				a, _, err := Auto(lp, AutoOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if s = a.(*edacThenAOBB); s.stale != edacStaleNodes {
					t.Fatalf("Auto's stale %d, want %d", s.stale, edacStaleNodes)
				}
			} else {
				e := NewEDACVAC(lp)
				e.budget = edacBudget
				s = &edacThenAOBB{lp: lp, edac: e, memory: DefaultMemory(), stale: tc.stale}
			}
			want := tc.want
			if want < 0 {
				var err error
				if want, err = NewAOBB(lp, AOBBOptions{}).SolveRow(context.Background(), nil, make([]int, lp.NumInterior())); err != nil {
					t.Fatal(err)
				}
			}
			solvesTo(t, s, lp, want)
			if s.wasStale != tc.byStale || s.byAOBB != tc.byStale {
				t.Fatalf("stale %v, by aobb %v (edac %d nodes); want %v", s.wasStale, s.byAOBB, s.edac.nodes, tc.byStale)
			}
			if d := s.Describe(); tc.byStale && !strings.HasPrefix(d, "edac found no better upper bound") {
				t.Fatalf("described %q", d)
			}
		})
	}
}

// solvesTo solves lp's one row with s and checks that it reports want,
// with an assignment that costs what it reports.
// beOptimum is the optimum of lp's whole row (no boundary) by bucket
// elimination within maxEntries: the independent truth auto's tests
// compare its picks with.
func beOptimum(t *testing.T, lp *mva.LocalProblem, maxEntries int) float64 {
	t.Helper()
	be, err := NewBE(lp, BEOptions{MaxEntries: maxEntries})
	if err != nil {
		t.Fatal(err)
	}
	want, err := be.SolveRow(context.Background(), nil, make([]int, lp.NumInterior()))
	if err != nil {
		t.Fatal(err)
	}
	return want
}

func solvesTo(t *testing.T, s mva.LocalSolver, lp *mva.LocalProblem, want float64) {
	t.Helper()
	in := make([]int, lp.NumInterior())
	got, err := s.SolveRow(context.Background(), nil, in)
	if err != nil || got != want {
		t.Fatalf("%v (%v), want %v", got, err, want)
	}
	if c := lp.Eval(in); c != got {
		t.Fatalf("assignment costs %v, reported %v", c, got)
	}
}

// edacShapeMaps is edacShape as it was, on a map of neighbours a
// variable: TestEDACShapeMatchesMaps's reference.
func edacShapeMaps(lp *mva.LocalProblem) (binary bool, n, elim int) {
	n = lp.NumInterior()
	nbrs := make([]map[int]bool, n)
	for x := range nbrs {
		nbrs[x] = map[int]bool{}
	}
	for _, f := range lp.Funcs {
		var in []int
		for _, v := range f.Scope {
			if v >= lp.NB {
				in = append(in, v-lp.NB)
			}
		}
		if len(in) > 2 {
			return false, n, 0
		}
		if len(in) == 2 && in[0] != in[1] {
			nbrs[in[0]][in[1]] = true
			nbrs[in[1]][in[0]] = true
		}
	}
	gone := make([]bool, n)
	for {
		x := -1
		for v := range n {
			if !gone[v] && len(nbrs[v]) <= maxElimDegree {
				x = v
				break
			}
		}
		if x < 0 {
			return true, n, elim
		}
		var ys []int
		for y := range nbrs[x] {
			ys = append(ys, y)
			delete(nbrs[y], x)
		}
		if len(ys) == 2 {
			nbrs[ys[0]][ys[1]] = true
			nbrs[ys[1]][ys[0]] = true
		}
		gone[x] = true
		elim++
	}
}

// TestEDACShapeMatchesMaps compares edacShape with its former map-based
// version on seeded random graphs: sparse and dense, with hubs, repeated
// pairs in both orders, unary and ternary functions, and a boundary.
func TestEDACShapeMatchesMaps(t *testing.T) {
	partial := 0
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 18))
		n := 3 + rng.IntN(60)
		p := &mva.Problem{Agents: []mva.Agent{{Name: "a"}}}
		for v := range n {
			p.Variables = append(p.Variables, mva.Variable{Name: fmt.Sprintf("x%d", v), Domain: []string{"0", "1"}})
		}
		add := func(scope ...int) {
			size := 1 << len(scope)
			p.Functions = append(p.Functions, mva.Function{Scope: scope, Costs: make([]float64, size)})
		}
		m := rng.IntN(3 * n)
		for range m {
			a, b := rng.IntN(n), rng.IntN(n)
			if seed%5 == 0 && rng.IntN(3) == 0 {
				a = 0 // a hub
			}
			switch {
			case a == b:
				add(a)
			case seed%7 == 0 && rng.IntN(20) == 0:
				c := rng.IntN(n)
				if c != a && c != b {
					add(a, b, c)
				} else {
					add(b, a)
				}
			default:
				add(a, b)
			}
		}
		subs := []*mva.Subproblem{mva.Whole(p)}
		if n > 6 {
			// The first variables as a boundary.
			sub := &mva.Subproblem{Boundary: []int{0, 1}}
			for v := 2; v < n; v++ {
				sub.Interior = append(sub.Interior, v)
			}
			for i := range p.Functions {
				sub.Functions = append(sub.Functions, i)
			}
			subs = append(subs, sub)
		}
		for _, sub := range subs {
			lp := mva.NewLocalProblem(p, sub)
			gb, gn, ge := edacShape(lp)
			wb, wn, we := edacShapeMaps(lp)
			if gb != wb || gn != wn || ge != we {
				t.Fatalf("seed %d (%d variables, %d functions): edacShape %v %d %d, the maps %v %d %d", seed, n, len(p.Functions), gb, gn, ge, wb, wn, we)
			}
			if gb && ge > 0 && ge < gn {
				partial++
			}
		}
	}
	if partial < 50 {
		t.Fatalf("%d graphs with some but not all variables eliminated: the test no longer reaches the rule", partial)
	}
}

// gateCircuit returns gen.Circuit's instance of seed over gates gates,
// made like the ISCAS89 files of docs/bench/toulbar2-wider.md when iscas
// is set: no observations, every gate's fault cost 100, so that the
// priors of the inputs alone cost and the root bound of EDAC is the
// optimum. Without iscas it is gen.Circuit's diagnosis instance, whose
// observations need faults the root bound does not see.
func gateCircuit(t *testing.T, seed uint64, gates int, iscas bool) *mva.Problem {
	t.Helper()
	o := gen.DefaultCircuit()
	o.Gates = gates
	if iscas {
		o.Fault = 0
	}
	p, err := gen.Circuit(seed, o)
	if err != nil {
		t.Fatal(err)
	}
	if !iscas {
		return p
	}
	fs := p.Functions[:0]
	for _, f := range p.Functions {
		if strings.HasPrefix(f.Name, "obs") {
			continue
		}
		if len(f.Scope) > 1 {
			for i, c := range f.Costs {
				if c > 0 {
					f.Costs[i] = 100
				}
			}
		}
		fs = append(fs, f)
	}
	p.Functions = fs
	return p
}

// TestChooseRootGap checks edac+aobb's root-gap question (Choice.gap,
// EDAC.rootGap) on the rows chooseSized gave AOBB whose functions are
// not all binary, over two values, with whole-number costs: a circuit
// made like the ISCAS89 files, whose root bound is its optimum, is
// answered by EDAC; gen.Circuit's diagnosis circuit, whose optimum is far
// above its root bound, by AOBB, at once on a second row; both equal
// bucket elimination's optimum, with an assignment of that cost. The same
// circuit with costs that are not whole numbers, or over three values,
// stays with AOBB.
func TestChooseRootGap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		p     *mva.Problem
		edac  bool // answered by EDAC
		gap   bool // Choose asks the root-gap question
		reals bool // costs moved off whole numbers
		three bool // a third value on one variable
	}{
		{"iscas-like", gateCircuit(t, 1, 200, true), true, true, false, false},
		{"iscas-like 300", gateCircuit(t, 3, 300, true), true, true, false, false},
		{"diagnosis", gateCircuit(t, 1, 200, false), false, true, false, false},
		{"iscas-like, real costs", gateCircuit(t, 1, 200, true), false, false, true, false},
		{"iscas-like, three values", gateCircuit(t, 1, 200, true), false, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.p
			if tc.reals {
				for _, f := range p.Functions {
					for i := range f.Costs {
						f.Costs[i] += 0.25
					}
				}
			}
			if tc.three {
				p.Variables[0].Domain = append(p.Variables[0].Domain, "2")
				f := &p.Functions[0] // prior0, over x0 alone
				f.Costs = append(f.Costs, 7)
			}
			lp := mva.NewLocalProblem(p, mva.Whole(p))
			if binary, _, _ := edacShape(lp); binary {
				t.Fatal("binary")
			}
			c := Choose(lp, AutoOptions{})
			if want := map[bool]string{true: "edac+aobb", false: "aobb"}[tc.gap]; c.Name != want || c.gap != tc.gap {
				t.Fatalf("chose %s (gap %v: %s), want %s", c.Name, c.gap, c.Reason, want)
			}
			want := beOptimum(t, lp, 1<<24)
			s, _, err := Auto(lp, AutoOptions{})
			if err != nil {
				t.Fatal(err)
			}
			solvesTo(t, s, lp, want)
			if !tc.gap {
				// EDAC asked directly answers the optimum or that
				// there is none at its root bound.
				e := NewEDACVAC(lp)
				e.rootGap = true
				got, err := e.SolveRow(context.Background(), nil, make([]int, lp.NumInterior()))
				if !errors.Is(err, errRootGap) && (err != nil || got != want) {
					t.Fatalf("edac asked at its root bound %v: %v (%v), want %v", e.rootLB, got, err, want)
				}
				return
			}
			pf := s.(*edacThenAOBB)
			if pf.byAOBB == tc.edac || strings.Contains(pf.Describe(), "no assignment at its root bound") == tc.edac {
				t.Fatalf("by aobb %v, want %v: %s", pf.byAOBB, !tc.edac, pf.Describe())
			}
			if tc.edac {
				if pf.edac.rootLB != want {
					t.Fatalf("root bound %v, optimum %v", pf.edac.rootLB, want)
				}
				// Past the question's budget (one check here) the row
				// goes where chooseSized sends it, AOBB, unasked again.
				s, _, err := Auto(lp, AutoOptions{})
				if err != nil {
					t.Fatal(err)
				}
				pf := s.(*edacThenAOBB)
				pf.edac.budget = 1
				solvesTo(t, s, lp, want)
				if !pf.byAOBB || !pf.aobbOnly || pf.edac.rootGap {
					t.Fatalf("past the budget: by aobb %v, aobb only %v, still asking %v", pf.byAOBB, pf.aobbOnly, pf.edac.rootGap)
				}
				return
			}
			checks := pf.edac.Checks()
			solvesTo(t, s, lp, want)
			if !pf.byAOBB || pf.edac.Checks() != checks {
				t.Fatalf("second row: by aobb %v, edac's checks %d → %d", pf.byAOBB, checks, pf.edac.Checks())
			}
		})
	}
}

// TestChooseRootGapLowWidth checks that Choose's second case leaves
// rows of low width to bucket elimination (minDegreeWithin) instead of
// asking EDAC the root-gap question first: gen.Circuit wired within 4 or
// 8 lines (min-fill width 4 and 7, bucket tables of 2.5·10^3 and 8.9·10^3
// entries) gets be, answering its optimum, while the same circuit wired
// within 30 lines is asked the question.
func TestChooseRootGapLowWidth(t *testing.T) {
	for _, tc := range []struct {
		window int
		want   string
	}{{4, "be"}, {8, "be"}, {30, "edac+aobb"}} {
		o := gen.DefaultCircuit()
		o.Gates, o.Window = 300, tc.window
		p, err := gen.Circuit(1, o)
		if err != nil {
			t.Fatal(err)
		}
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		c := Choose(lp, AutoOptions{})
		if c.Name != tc.want || c.gap != (tc.want == "edac+aobb") {
			t.Fatalf("window %d: chose %s (gap %v: %s), want %s", tc.window, c.Name, c.gap, c.Reason, tc.want)
		}
		if tc.want != "be" {
			continue
		}
		s, _, err := Auto(lp, AutoOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := NewAOBB(lp, AOBBOptions{}).SolveRow(context.Background(), nil, make([]int, lp.NumInterior()))
		if err != nil {
			t.Fatal(err)
		}
		solvesTo(t, s, lp, want)
	}
}

// TestAutoOrderToAOBB checks that the min-fill order chooseSized hands to
// AOBB (Choice.order, where the sizing measured the search space to the
// order's end) is the plain min-fill order AOBB would find itself over
// its own graph of the row's interior, so that AOBB's pseudo-tree and
// search are the same: on gen.Circuit's diagnosis instance and on the
// subproblems, with their boundaries, of random problems with ternary
// functions, the order must equal a fresh min-fill of that graph and the
// AOBB built from it must pick the same pseudo-tree, answer the same
// optimum and make the same checks as one built without it.
func TestAutoOrderToAOBB(t *testing.T) {
	var lps []*mva.LocalProblem
	for seed := range uint64(3) {
		c := gateCircuit(t, seed+1, 150+50*int(seed), false)
		lps = append(lps, mva.NewLocalProblem(c, mva.Whole(c)))
		// The same with its first five inputs as the boundary.
		sub := &mva.Subproblem{Agent: -1, Boundary: []int{0, 1, 2, 3, 4}}
		for v := range c.Variables {
			sub.Local = append(sub.Local, v)
			if v >= 5 {
				sub.Interior = append(sub.Interior, v)
			}
		}
		for fi := range c.Functions {
			sub.Functions = append(sub.Functions, fi)
		}
		lps = append(lps, mva.NewLocalProblem(c, sub))
	}
	given := 0
	for k, lp := range lps {
		sc := chooseSized(lp, AutoOptions{gapAsked: true})
		if sc.minFill == nil {
			continue
		}
		given++
		g := mva.NewGraph(len(lp.Vars))
		for _, s := range orderScopes(lp, false) {
			g.AddClique(s)
		}
		interior := make([]int, lp.NumInterior())
		for v := range interior {
			interior[v] = lp.NB + v
		}
		if want, _ := g.MinFill(interior); !slices.Equal(sc.minFill, want) {
			t.Fatalf("problem %d: the sizing's order %v, min-fill's %v", k, sc.minFill, want)
		}
		bd := make([]int, lp.NB)
		for v := range bd {
			bd[v] = v % 2
		}
		var answers []float64
		var checks []int64
		var trees [][]int
		for _, o := range [][]int{nil, sc.minFill} {
			a := NewAOBB(lp, AOBBOptions{minFill: o})
			got, err := a.SolveRow(context.Background(), bd, make([]int, lp.NumInterior()))
			if err != nil {
				t.Fatal(err)
			}
			answers, checks, trees = append(answers, got), append(checks, a.Checks()), append(trees, a.pt.order)
		}
		if answers[0] != answers[1] || checks[0] != checks[1] || !slices.Equal(trees[0], trees[1]) {
			t.Fatalf("problem %d: without the order %v in %d checks, with it %v in %d (same tree %v)",
				k, answers[0], checks[0], answers[1], checks[1], slices.Equal(trees[0], trees[1]))
		}
	}
	if given < len(lps) {
		t.Fatalf("%d of %d problems had an order to give AOBB; want all", given, len(lps))
	}
}
