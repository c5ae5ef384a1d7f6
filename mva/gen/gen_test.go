package gen

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// solveWhole returns the optimum of p (offset excluded) found centrally by
// local solver name, and an optimal assignment.
func solveWhole(t *testing.T, p *mva.Problem, name string) (float64, []int) {
	t.Helper()
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	s, err := local.New(name, lp)
	if err != nil {
		t.Fatal(err)
	}
	in := make([]int, lp.NumInterior())
	c, err := s.SolveRow(context.Background(), nil, in)
	if err != nil {
		t.Fatal(err)
	}
	assign := make([]int, len(p.Variables))
	for k, v := range lp.Vars {
		assign[v] = in[k]
	}
	return c, assign
}

// checkFeasible solves p and checks that its optimum is finite and is the
// cost of the assignment returned.
func checkFeasible(t *testing.T, p *mva.Problem, solver string) float64 {
	t.Helper()
	c, assign := solveWhole(t, p, solver)
	if mva.IsHard(c) {
		t.Fatalf("%s: no feasible assignment", p.Name)
	}
	if e, err := p.Eval(assign); err != nil || e != c+p.Offset {
		t.Fatalf("%s: optimum %v but its assignment costs %v (%v)", p.Name, c, e, err)
	}
	return c
}

// agentsConnected reports whether the agents of p form one connected
// component of the agent graph.
func agentsConnected(p *mva.Problem) bool {
	nb := mva.Decompose(p).Neighbours()
	seen := make([]bool, len(nb))
	stack := []int{0}
	seen[0] = true
	count := 1
	for len(stack) > 0 {
		a := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, b := range nb[a] {
			if !seen[b] {
				seen[b] = true
				count++
				stack = append(stack, b)
			}
		}
	}
	return count == len(nb)
}

// primal returns the set of variable pairs that share a function.
func primal(p *mva.Problem) map[edge]int {
	m := map[edge]int{}
	for _, f := range p.Functions {
		for i, u := range f.Scope {
			for _, v := range f.Scope[i+1:] {
				m[newEdge(u, v)]++
			}
		}
	}
	return m
}

// varsPerAgent counts the variables of every agent.
func varsPerAgent(p *mva.Problem) []int {
	n := make([]int, len(p.Agents))
	for _, v := range p.Variables {
		n[v.Agent]++
	}
	return n
}

// feasibleEntries counts the entries of f that are not Hard.
func feasibleEntries(f mva.Function) int {
	n := 0
	for _, c := range f.Costs {
		if !mva.IsHard(c) {
			n++
		}
	}
	return n
}

// smallParams are parameters for which every kind is quick to build.
var smallParams = map[string]map[string]string{
	"random":    {"agents": "3", "vars": "4", "domain": "3"},
	"radar":     {"grid": "4x2", "block": "2x2"},
	"meeting":   {"agents": "3", "vars": "4", "domain": "5"},
	"grid":      {"rows": "2", "cols": "3"},
	"scalefree": {"agents": "6"},
	"randgraph": {"agents": "6", "p1": "0.5"},
	"microgrid": {"agents": "5", "domain": "5", "arity": "4", "cluster": "3"},
	"fap":       {"pairs": "4", "freqs": "6", "sep": "2", "radius": "0.8"},
	"spot":      {"photos": "10"},
	"circuit":   {"inputs": "4", "gates": "10"},
}

func TestGenerateDeterministic(t *testing.T) {
	for _, kind := range Kinds() {
		t.Run(kind, func(t *testing.T) {
			params := smallParams[kind]
			a, err := Generate(kind, 7, params)
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Validate(); err != nil {
				t.Fatal(err)
			}
			b, err := Generate(kind, 7, params)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Error("the same seed gave two different problems")
			}
			differ := false
			for seed := uint64(8); seed < 12 && !differ; seed++ {
				c, err := Generate(kind, seed, params)
				if err != nil {
					t.Fatal(err)
				}
				c.Name = a.Name
				differ = !reflect.DeepEqual(a, c)
			}
			if !differ {
				t.Error("seeds 8 to 11 all gave the problem of seed 7")
			}
		})
	}
}

func TestGenerateDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("the default microgrid has 14 million table entries")
	}
	for _, kind := range Kinds() {
		p, err := Generate(kind, 1, nil)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
	}
}

func TestSmallInstancesFeasible(t *testing.T) {
	for _, kind := range Kinds() {
		for seed := range uint64(5) {
			p, err := Generate(kind, seed, smallParams[kind])
			if err != nil {
				t.Fatal(err)
			}
			checkFeasible(t, p, "dfbnb")
		}
	}
}

func TestParams(t *testing.T) {
	for _, kind := range Kinds() {
		ps, err := Params(kind)
		if err != nil || len(ps) == 0 {
			t.Fatalf("Params(%s) = %v, %v", kind, ps, err)
		}
		// Giving every default back explicitly changes nothing.
		params := map[string]string{}
		for _, p := range ps {
			if p.Doc == "" || p.Default == "" {
				t.Errorf("%s: parameter %s lacks a default or a doc", kind, p.Name)
			}
			params[p.Name] = p.Default
		}
		if kind == "microgrid" {
			continue // the default is large; TestGenerateDefaults builds it
		}
		a, err := Generate(kind, 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Generate(kind, 3, params)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: the defaults given explicitly change the problem", kind)
		}
	}
}

func TestGenerateErrors(t *testing.T) {
	for _, c := range []struct {
		kind   string
		params map[string]string
		want   []string
	}{
		{"nope", nil, []string{`"nope"`, "random", "microgrid"}},
		{"random", map[string]string{"agentz": "3"}, []string{`"agentz"`, "agents"}},
		{"random", map[string]string{"agents": "three"}, []string{"agents", `"three"`}},
		{"random", map[string]string{"agents": "0"}, []string{"agents 0"}},
		{"random", map[string]string{"p1l": "1.5"}, []string{"local density", "1.5"}},
		{"random", map[string]string{"p1g": "NaN"}, []string{"global density"}},
		{"random", map[string]string{"p2": "0"}, []string{"tightness", "planted"}},
		{"random", map[string]string{"plant": "maybe"}, []string{"plant", "maybe"}},
		{"random", map[string]string{"min_cost": "5", "max_cost": "1"}, []string{"[5, 1]"}},
		{"random", map[string]string{"arity": "1"}, []string{"arity 1"}},
		{"random", map[string]string{"arity": "20", "domain": "4"}, []string{"arity 20"}},
		{"radar", map[string]string{"grid": "8"}, []string{"grid", "COLSxROWS"}},
		{"radar", map[string]string{"grid": "6x4"}, []string{"grid 6x4", "4x4"}},
		{"radar", map[string]string{"range": "0.5"}, []string{"range 0.5"}},
		{"radar", map[string]string{"critical": "-1"}, []string{"critical"}},
		{"meeting", map[string]string{"agents": "1"}, []string{"agents 1"}},
		{"meeting", map[string]string{"meetings": "6"}, []string{"meetings 6"}},
		{"grid", map[string]string{"rows": "0"}, []string{"0x3"}},
		{"scalefree", map[string]string{"agents": "1"}, []string{"agents 1"}},
		{"randgraph", map[string]string{"p1": "0.1"}, []string{"density 0.1", "fewer"}},
		{"randgraph", map[string]string{"domain": "0"}, []string{"domain 0"}},
		{"microgrid", map[string]string{"domain": "10"}, []string{"domain 10", "odd"}},
		{"microgrid", map[string]string{"links": "3", "agents": "5"}, []string{"max degree 4", "2·links"}},
		{"microgrid", map[string]string{"arity": "2"}, []string{"max arity 2"}},
	} {
		_, err := Generate(c.kind, 1, c.params)
		if err == nil {
			t.Errorf("Generate(%s, %v) accepted", c.kind, c.params)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Generate(%s, %v): error %q does not mention %s", c.kind, c.params, err, w)
			}
		}
	}
}

func TestChoose(t *testing.T) {
	r := newRand(1, 2)
	for _, c := range [][2]int{{0, 0}, {5, 0}, {5, 5}, {100, 30}, {1 << 30, 10}} {
		got := choose(r, c[0], c[1])
		if len(got) != c[1] {
			t.Fatalf("choose(%d, %d) gave %d", c[0], c[1], len(got))
		}
		s := slices.Sorted(slices.Values(got))
		if len(slices.Compact(s)) != c[1] || (c[1] > 0 && (s[0] < 0 || s[len(s)-1] >= c[0])) {
			t.Fatalf("choose(%d, %d) = %v", c[0], c[1], got)
		}
	}
}

func TestPairOf(t *testing.T) {
	e := 0
	for v := 1; v < 300; v++ {
		for u := range v {
			if gu, gv := pairOf(e); gu != u || gv != v {
				t.Fatalf("pairOf(%d) = %d, %d, want %d, %d", e, gu, gv, u, v)
			}
			e++
		}
	}
}

func TestTight(t *testing.T) {
	r := newRand(3, 4)
	for _, n := range []int{1, 4, 25, 1000} {
		for _, p2 := range []float64{0, 0.3, 0.5, 1} {
			for _, planted := range []int{-1, 0, n - 1} {
				c := tight(r, n, p2, 2, 9, planted)
				want := round(p2 * float64(n))
				if planted >= 0 {
					want = max(want, 1)
					if mva.IsHard(c[planted]) {
						t.Fatalf("n=%d p2=%v: planted entry %d is hard", n, p2, planted)
					}
				}
				if got := feasibleEntries(mva.Function{Costs: c}); got != want {
					t.Fatalf("n=%d p2=%v planted=%d: %d feasible entries, want %d", n, p2, planted, got, want)
				}
				for _, x := range c {
					if !mva.IsHard(x) && (x < 2 || x > 9 || x != math.Trunc(x)) {
						t.Fatalf("cost %v outside the whole numbers of [2, 9]", x)
					}
				}
			}
		}
	}
}

func ExampleGenerate() {
	p, err := Generate("random", 42, map[string]string{"agents": "8", "vars": "6", "domain": "4"})
	if err != nil {
		fmt.Println(err)
		return
	}
	s := p.Stats()
	fmt.Println(s.Agents, s.Variables, s.MaxDomain, s.MaxArity <= 3)
	// Output: 8 48 4 true
}
