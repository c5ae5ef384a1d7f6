package reform

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/internal/fixtures"
	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// optimum solves p centrally by brute force and returns its optimal cost
// (offset included) and an optimal assignment.
func optimum(t *testing.T, p *mva.Problem) (float64, []int) {
	t.Helper()
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	s, err := local.New("bruteforce", lp)
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
	return c + p.Offset, assign
}

func eval(t *testing.T, p *mva.Problem, assign []int) float64 {
	t.Helper()
	c, err := p.Eval(assign)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// same compares costs that are sums of the same terms in another order.
func same(a, b float64) bool {
	if mva.IsHard(a) || mva.IsHard(b) {
		return a == b
	}
	return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b))
}

func randomProblems() []*mva.Problem {
	var ps []*mva.Problem
	for seed := range int64(40) {
		o := randprob.Options{
			Agents: 2 + int(seed%4), Vars: 4 + int(seed%4), MinDomain: 2, MaxDomain: 3,
			MaxArity: 3, Functions: 6 + int(seed%5), HardProb: 0.1, IntCosts: seed%2 == 0,
			Locality: 0.5,
		}
		p := randprob.New(seed, o)
		if seed%5 == 0 {
			p.Offset = 2.5
			p.Functions = append(p.Functions, mva.Function{Name: "const", Costs: []float64{1}})
		}
		ps = append(ps, p)
	}
	return ps
}

func TestReformulationsKeepOptimum(t *testing.T) {
	build := map[string]func(*mva.Problem) (*Reformulation, error){
		"mva":           func(p *mva.Problem) (*Reformulation, error) { return MVA(p), nil },
		"decomposition": func(p *mva.Problem) (*Reformulation, error) { return Decomposition(p), nil },
		"compilation":   func(p *mva.Problem) (*Reformulation, error) { return Compilation(p, 1<<16) },
	}
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			for i, p := range randomProblems() {
				r, err := build[name](p)
				if err != nil {
					t.Fatalf("problem %d: %v", i, err)
				}
				if r.Name != name {
					t.Errorf("Name = %q, want %q", r.Name, name)
				}
				if err := r.Problem.Validate(); err != nil {
					t.Fatalf("problem %d: reformulated problem invalid: %v", i, err)
				}
				checkOwner(t, name, p, r)
				want, _ := optimum(t, p)
				got, assign := optimum(t, r.Problem)
				if !same(got, want) {
					t.Fatalf("problem %d: optimum %v after %s, %v before", i, got, name, want)
				}
				back, err := r.Back(assign)
				if err != nil {
					t.Fatalf("problem %d: Back: %v", i, err)
				}
				if c := eval(t, p, back); !same(c, want) {
					t.Fatalf("problem %d: Back maps the optimum to an assignment of cost %v, want %v", i, c, want)
				}
				// Cost is preserved everywhere, not only at the optimum.
				rng := rand.New(rand.NewPCG(uint64(i), 1))
				a := make([]int, len(r.Problem.Variables))
				for range 20 {
					for v := range a {
						a[v] = rng.IntN(r.Problem.DomainSize(v))
					}
					b, err := r.Back(a)
					if err != nil {
						t.Fatal(err)
					}
					if x, y := eval(t, r.Problem, a), eval(t, p, b); !same(x, y) {
						t.Fatalf("problem %d: assignment %v costs %v, its original %v costs %v", i, a, x, b, y)
					}
				}
			}
		})
	}
}

// checkOwner verifies that Owner has one entry per agent of the
// reformulated problem and names the original owner of its variables.
func checkOwner(t *testing.T, name string, p *mva.Problem, r *Reformulation) {
	t.Helper()
	q := r.Problem
	if len(r.Owner) != len(q.Agents) {
		t.Fatalf("%s: %d owners for %d agents", name, len(r.Owner), len(q.Agents))
	}
	switch name {
	case "mva":
		for i, o := range r.Owner {
			if o != i {
				t.Fatalf("mva: Owner[%d] = %d", i, o)
			}
		}
	case "decomposition":
		for v, x := range q.Variables {
			if x.Agent != v {
				t.Fatalf("decomposition: variable %d owned by pseudo-agent %d", v, x.Agent)
			}
			if want := p.Variables[v].Agent; r.Owner[v] != want {
				t.Fatalf("decomposition: Owner[%d] = %d, want %d", v, r.Owner[v], want)
			}
			if want := p.Agents[p.Variables[v].Agent].Name + "." + x.Name; q.Agents[v].Name != want {
				t.Fatalf("decomposition: pseudo-agent %q, want %q", q.Agents[v].Name, want)
			}
		}
	case "compilation":
		for k, x := range q.Variables {
			if x.Agent != k {
				t.Fatalf("compilation: pseudo-variable %d owned by agent %d", k, x.Agent)
			}
		}
		// Every original agent with variables appears exactly once.
		var want []int
		for a := range p.Agents {
			if slices.ContainsFunc(p.Variables, func(x mva.Variable) bool { return x.Agent == a }) {
				want = append(want, a)
			}
		}
		if !slices.Equal(r.Owner, want) {
			t.Fatalf("compilation: Owner = %v, want %v", r.Owner, want)
		}
	}
}

func TestDecompositionThesis31(t *testing.T) {
	p := fixtures.Thesis31()
	r := Decomposition(p)
	if !slices.Equal(r.Owner, []int{0, 0, 0, 1, 1}) {
		t.Errorf("Owner = %v", r.Owner)
	}
	d := mva.Decompose(r.Problem)
	if len(d.External) != len(p.Functions) {
		t.Errorf("%d functions between pseudo-agents, want all %d", len(d.External), len(p.Functions))
	}
	if got := r.Problem.Agents[3].Name; got != "a1.x3" {
		t.Errorf("pseudo-agent 3 is %q, want a1.x3", got)
	}
	if c, _ := optimum(t, r.Problem); c != 12 {
		t.Errorf("optimum %v, want 12", c)
	}
}

func TestCompilationThesis31(t *testing.T) {
	p := fixtures.Thesis31()
	r, err := Compilation(p, 100)
	if err != nil {
		t.Fatal(err)
	}
	q := r.Problem
	if len(q.Variables) != 2 || q.DomainSize(0) != 8 || q.DomainSize(1) != 4 {
		t.Fatalf("compiled variables %+v", q.Variables)
	}
	if q.Variables[0].Domain[6] != "1|1|0" {
		t.Errorf("value 6 of a0 is %q, want 1|1|0", q.Variables[0].Domain[6])
	}
	// a0's local table: x0=1,x1=1,x2=0 costs f(1,1)+f(1,0)+f(1,0) = 3+2+2.
	if f := q.Functions[0]; f.Name != "local:a0" || f.Costs[6] != 7 {
		t.Errorf("first function %s, entry 6 = %v, want local:a0 with 7", f.Name, f.Costs[6])
	}
	last := q.Functions[len(q.Functions)-1]
	if last.Name != "ext:a0,a1" || len(last.Costs) != 32 {
		t.Errorf("external function %s with %d entries, want ext:a0,a1 with 32", last.Name, len(last.Costs))
	}
	c, assign := optimum(t, q)
	if c != 12 {
		t.Fatalf("optimum %v, want 12", c)
	}
	back, err := r.Back(assign)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back, []int{1, 1, 0, 1, 0}) {
		t.Errorf("Back = %v, want the thesis's optimum [1 1 0 1 0]", back)
	}
}

func TestCompilationTooLarge(t *testing.T) {
	// One agent with 20 binary variables: a domain of 2^20 values.
	p := &mva.Problem{Agents: []mva.Agent{{Name: "big"}, {Name: "small"}}}
	for i := range 21 {
		a := 0
		if i == 20 {
			a = 1
		}
		p.Variables = append(p.Variables, mva.Variable{Name: "x" + string(rune('a'+i)), Domain: []string{"0", "1"}, Agent: a})
	}
	_, err := Compilation(p, 1000)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	for _, s := range []string{`"big"`, "1048576", "1000"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %s", err, s)
		}
	}

	// Domains fit, the table between the agents does not: 64 × 64 > 1000.
	q := randprob.New(1, randprob.Options{Agents: 2, Vars: 12, MinDomain: 2, MaxDomain: 2, MaxArity: 2, Functions: 30})
	for v := range q.Variables {
		q.Variables[v].Agent = v % 2
	}
	_, err = Compilation(q, 1000)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "64×64") {
		t.Fatalf("err = %v, want ErrTooLarge naming a 64×64 table", err)
	}
	if _, err := Compilation(q, 4096); err != nil {
		t.Fatalf("with room for 4096 entries: %v", err)
	}
	if _, err := Compilation(q, 0); err == nil {
		t.Error("a limit of 0 entries was accepted")
	}
}

func TestCompilationSkipsEmptyAgentsAndPipes(t *testing.T) {
	p := &mva.Problem{Agents: []mva.Agent{{Name: "empty"}, {Name: "a"}, {Name: "a"}}}
	p.Variables = []mva.Variable{
		{Name: "x", Domain: []string{"p|q", "p"}, Agent: 1},
		{Name: "y", Domain: []string{"q", "|q"}, Agent: 1},
		{Name: "z", Domain: []string{"0", "1"}, Agent: 2},
	}
	p.Functions = []mva.Function{{Name: "f", Scope: []int{1, 2}, Costs: []float64{1, 2, 3, 4}}}
	r, err := Compilation(p, 100)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Owner, []int{1, 2}) {
		t.Errorf("Owner = %v, want [1 2]", r.Owner)
	}
	if err := r.Problem.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := r.Problem.Variables[0].Domain; !slices.Equal(got, []string{"0|0", "0|1", "1|0", "1|1"}) {
		t.Errorf("labels %q, want value indices since the labels hold |", got)
	}
	if a, b := r.Problem.Agents[0].Name, r.Problem.Agents[1].Name; a == b {
		t.Errorf("two compiled agents named %q", a)
	}
}

func TestBackRejectsBadAssignments(t *testing.T) {
	p := fixtures.Thesis31()
	comp, err := Compilation(p, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Reformulation{MVA(p), Decomposition(p), comp} {
		n := len(r.Problem.Variables)
		for _, a := range [][]int{nil, make([]int, n+1), slices.Repeat([]int{-1}, n), slices.Repeat([]int{99}, n)} {
			if _, err := r.Back(a); err == nil {
				t.Errorf("%s: Back(%v) accepted", r.Name, a)
			}
		}
	}
}

func TestNew(t *testing.T) {
	p := fixtures.Thesis31()
	for _, name := range Names() {
		r, err := New(name, p, 0)
		if err != nil || r.Name != name {
			t.Errorf("New(%q) = %v, %v", name, r, err)
		}
	}
	if _, err := New("nope", p, 0); err == nil || !strings.Contains(err.Error(), "compilation") {
		t.Errorf("New(nope) error %v should list the valid names", err)
	}
}
