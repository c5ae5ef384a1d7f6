package mva_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/internal/fixtures"
	"github.com/hearth-dcop/hearth/mva"
)

func TestDecomposeThesis31(t *testing.T) {
	p := fixtures.Thesis31()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	d := mva.Decompose(p)
	want := []mva.Subproblem{
		{Agent: 0, Local: []int{0, 1, 2}, Boundary: []int{0}, Interior: []int{1, 2}, Functions: []int{0, 1, 2}},
		{Agent: 1, Local: []int{3, 4}, Boundary: []int{3}, Interior: []int{4}, Functions: []int{4}},
	}
	for i, w := range want {
		g := d.Subs[i]
		if g.Agent != w.Agent || !slices.Equal(g.Local, w.Local) || !slices.Equal(g.Boundary, w.Boundary) ||
			!slices.Equal(g.Interior, w.Interior) || !slices.Equal(g.Functions, w.Functions) {
			t.Errorf("agent %d: got %+v, want %+v", i, g, w)
		}
	}
	if !slices.Equal(d.External, []int{3}) {
		t.Errorf("external functions = %v, want [3]", d.External)
	}
	if nb := d.Neighbours(); !slices.Equal(nb[0], []int{1}) || !slices.Equal(nb[1], []int{0}) {
		t.Errorf("neighbours = %v", nb)
	}
	cost, err := p.Eval([]int{1, 1, 0, 1, 0})
	if err != nil || cost != 12 {
		t.Errorf("Eval(optimum) = %v, %v; want 12", cost, err)
	}
}

func TestLocalProblemRows(t *testing.T) {
	p := &mva.Problem{Agents: []mva.Agent{{Name: "a"}, {Name: "b"}}}
	for i, d := range []int{2, 3, 4, 2} {
		dom := make([]string, d)
		for k := range dom {
			dom[k] = fmt.Sprint(k)
		}
		p.Variables = append(p.Variables, mva.Variable{Name: fmt.Sprint("v", i), Domain: dom, Agent: min(i/3, 1)})
	}
	// v0, v1 shared with agent b's v3; v2 interior.
	p.Functions = []mva.Function{
		{Scope: []int{0, 3}, Costs: make([]float64, 4)},
		{Scope: []int{1, 3}, Costs: make([]float64, 6)},
		{Scope: []int{1, 2}, Costs: make([]float64, 12)},
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	d := mva.Decompose(p)
	lp := mva.NewLocalProblem(p, &d.Subs[0])
	rows, err := lp.Rows()
	if err != nil || rows != 6 {
		t.Fatalf("rows = %d, %v; want 6", rows, err)
	}
	b := make([]int, lp.NB)
	for row := range rows {
		lp.DecodeRow(row, b)
		if got := lp.EncodeRow(b); got != row {
			t.Errorf("EncodeRow(DecodeRow(%d)) = %d", row, got)
		}
	}
	lp.DecodeRow(5, b)
	if !slices.Equal(b, []int{1, 2}) {
		t.Errorf("row 5 = %v, want [1 2] (last boundary variable fastest)", b)
	}
	if len(lp.Funcs) != 1 || !slices.Equal(lp.Funcs[0].Scope, []int{1, 2}) {
		t.Errorf("local functions = %+v", lp.Funcs)
	}
}

func TestValidate(t *testing.T) {
	base := func() *mva.Problem { return fixtures.Thesis31() }
	tests := []struct {
		name   string
		mutate func(p *mva.Problem)
	}{
		{"empty domain", func(p *mva.Problem) { p.Variables[0].Domain = nil }},
		{"duplicate name", func(p *mva.Problem) { p.Variables[1].Name = "x0" }},
		{"bad owner", func(p *mva.Problem) { p.Variables[2].Agent = 7 }},
		{"scope out of range", func(p *mva.Problem) { p.Functions[0].Scope = []int{0, 9} }},
		{"repeated scope variable", func(p *mva.Problem) { p.Functions[0].Scope = []int{1, 1} }},
		// Validate marks each variable with the last function that held
		// it: a repeat in a later function, over a variable an earlier
		// one held too.
		{"repeated scope variable, later function", func(p *mva.Problem) {
			p.Functions[len(p.Functions)-1].Scope = []int{p.Functions[0].Scope[0], p.Functions[0].Scope[0]}
		}},
		{"table size", func(p *mva.Problem) { p.Functions[1].Costs = []float64{1, 2, 3} }},
		{"negative infinity", func(p *mva.Problem) {
			p.Functions[2].Costs = []float64{0, 0, 0, mva.Hard * -1}
		}},
		{"no agents", func(p *mva.Problem) { p.Agents = nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := base()
			tc.mutate(p)
			if err := p.Validate(); !errors.Is(err, mva.ErrInvalid) {
				t.Errorf("Validate() = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestEvalErrorsAndHard(t *testing.T) {
	p := fixtures.Thesis31()
	if _, err := p.Eval([]int{0, 0}); err == nil {
		t.Error("short assignment accepted")
	}
	if _, err := p.Eval([]int{0, 0, 0, 0, 2}); err == nil {
		t.Error("value outside the domain accepted")
	}
	p.Functions[4].Costs = []float64{mva.Hard, 1, 1, 1}
	c, err := p.Eval([]int{0, 0, 0, 0, 0})
	if err != nil || !mva.IsHard(c) {
		t.Errorf("Eval through a hard entry = %v, %v", c, err)
	}
}

// grid returns an r×c grid of binary variables with one function per edge,
// all owned by one agent.
func grid(r, c int) *mva.Problem {
	p := &mva.Problem{Agents: []mva.Agent{{Name: "a0"}}}
	for i := range r * c {
		p.Variables = append(p.Variables, mva.Variable{Name: fmt.Sprint("v", i), Domain: []string{"0", "1"}})
	}
	for i := range r {
		for j := range c {
			v := i*c + j
			if j+1 < c {
				p.Functions = append(p.Functions, mva.Function{Scope: []int{v, v + 1}, Costs: make([]float64, 4)})
			}
			if i+1 < r {
				p.Functions = append(p.Functions, mva.Function{Scope: []int{v, v + c}, Costs: make([]float64, 4)})
			}
		}
	}
	return p
}

func TestMinFillWidth(t *testing.T) {
	all := func(n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = i
		}
		return s
	}
	chain := grid(1, 6)
	cycle := grid(1, 5)
	cycle.Functions = append(cycle.Functions, mva.Function{Scope: []int{4, 0}, Costs: make([]float64, 4)})
	clique := &mva.Problem{}
	for i := range 5 {
		clique.Variables = append(clique.Variables, mva.Variable{Name: fmt.Sprint(i), Domain: []string{"0"}})
	}
	clique.Functions = []mva.Function{{Scope: all(5)}}
	tests := []struct {
		name  string
		p     *mva.Problem
		width int
	}{
		{"chain", chain, 1},
		{"cycle", cycle, 2},
		{"3x3 grid", grid(3, 3), 3},
		{"4x4 grid", grid(4, 4), 4},
		{"5-clique", clique, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := len(tc.p.Variables)
			order, w := tc.p.PrimalGraph().MinFill(all(n))
			if w != tc.width {
				t.Errorf("width = %d, want %d", w, tc.width)
			}
			s := slices.Clone(order)
			slices.Sort(s)
			if !slices.Equal(s, all(n)) {
				t.Errorf("order %v is not a permutation", order)
			}
		})
	}
	// Keeping the two ends of a chain (as boundary) and eliminating the
	// middle leaves a width of 2: the last middle vertex sees both ends.
	_, w := chain.PrimalGraph().MinFill([]int{1, 2, 3, 4})
	if w != 2 {
		t.Errorf("chain with kept ends: width = %d, want 2", w)
	}
}

func TestPartition(t *testing.T) {
	tests := []struct {
		name    string
		p       *mva.Problem
		n       int
		maxCut  int
		wantErr bool
	}{
		// 2×2 blocks of a 4×4 grid cut 8 edges, the optimum. Two halves
		// cut 4 at best; growing from a corner gives a staircase that cuts
		// 6, and a strip layout (what a naive growth gives) cuts 12.
		{"4x4 grid in 4", grid(4, 4), 4, 8, false},
		{"4x4 grid in 2", grid(4, 4), 2, 6, false},
		{"chain in 3", grid(1, 9), 3, 2, false},
		{"one agent", grid(3, 3), 1, 0, false},
		{"too many agents", grid(2, 2), 5, 0, true},
		{"zero agents", grid(2, 2), 0, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := mva.Partition(tc.p, tc.n)
			if tc.wantErr {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.p.Validate(); err != nil {
				t.Fatal(err)
			}
			sizes := make([]int, tc.n)
			for _, v := range tc.p.Variables {
				sizes[v.Agent]++
			}
			lo, hi := slices.Min(sizes), slices.Max(sizes)
			if hi-lo > 1 {
				t.Errorf("unbalanced sizes %v", sizes)
			}
			if cut := tc.p.CutWeight(); cut > tc.maxCut {
				t.Errorf("cut = %d, want ≤ %d", cut, tc.maxCut)
			}
		})
	}
}

func TestPartitionDeterministic(t *testing.T) {
	a, b := grid(5, 7), grid(5, 7)
	if err := mva.Partition(a, 4); err != nil {
		t.Fatal(err)
	}
	if err := mva.Partition(b, 4); err != nil {
		t.Fatal(err)
	}
	for i := range a.Variables {
		if a.Variables[i].Agent != b.Variables[i].Agent {
			t.Fatal("two partitions of the same problem differ")
		}
	}
}

func TestSenseReport(t *testing.T) {
	if mva.Maximize.Report(-5) != 5 || mva.Minimize.Report(5) != 5 {
		t.Error("Report does not restore the file's sense")
	}
	p := fixtures.Thesis31()
	p.Sense = mva.Maximize
	r := mva.NewResult(p, []int{1, 1, 0, 1, 0}, -12)
	if r.Objective == nil || *r.Objective != 12 || r.Sense != "max" || r.Assignment["x0"] != "1" {
		t.Errorf("result = %+v", r)
	}
	r = mva.NewResult(p, nil, mva.Hard)
	if r.Feasible || r.Objective != nil {
		t.Errorf("infeasible result = %+v", r)
	}
	if _, err := r.JSON(); err != nil {
		t.Error(err)
	}
}
