package randprob

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
)

func TestNewIsValidAndDeterministic(t *testing.T) {
	for seed := range int64(200) {
		o := Options{
			Agents: 1 + int(seed%4), Vars: int(seed % 13), MinDomain: 1, MaxDomain: 5,
			MaxArity: 4, Functions: int(seed % 17), HardProb: 0.1, IntCosts: seed%2 == 0,
			MaxCost: 20, Locality: 0.5,
		}
		p := New(seed, o)
		if err := p.Validate(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if q := New(seed, o); !reflect.DeepEqual(p, q) {
			t.Fatalf("seed %d: two calls differ", seed)
		}
		if len(p.Variables) != o.Vars || (o.Vars > 0 && len(p.Functions) != o.Functions) {
			t.Fatalf("seed %d: %d variables, %d functions", seed, len(p.Variables), len(p.Functions))
		}
		owned := make([]int, len(p.Agents))
		for _, v := range p.Variables {
			owned[v.Agent]++
		}
		for a, n := range owned {
			if n == 0 && o.Vars >= o.Agents {
				t.Fatalf("seed %d: agent %d owns nothing", seed, a)
			}
		}
		for _, f := range p.Functions {
			if len(f.Scope) < 1 || len(f.Scope) > o.MaxArity {
				t.Fatalf("seed %d: arity %d", seed, len(f.Scope))
			}
		}
	}
}

func TestNewZeroOptions(t *testing.T) {
	for _, o := range []Options{{}, {Vars: 3}, {Vars: 3, Functions: 5, MaxArity: 9, MinDomain: 4, MaxDomain: 2}, {Agents: -1, Vars: -2, Functions: -3}} {
		if err := New(1, o).Validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

func TestSeedsDiffer(t *testing.T) {
	o := Options{Agents: 2, Vars: 8, MinDomain: 2, MaxDomain: 4, MaxArity: 3, Functions: 6}
	if reflect.DeepEqual(New(1, o), New(2, o)) {
		t.Fatal("seeds 1 and 2 give the same problem")
	}
}

func TestMakeShapes(t *testing.T) {
	tests := []struct {
		name string
		s    Shape
	}{
		{"zero", Shape{}},
		{"defaults", Shape{Agents: Range{1, 3}, Vars: Range{2, 8}, Domain: Range{1, 5}, Functions: Range{0, 6}, Arity: Range{0, 4}}},
		{"arity beyond vars", Shape{Vars: Range{0, 2}, Functions: Range{3, 3}, Arity: Range{3, 5}, Domain: Range{2, 2}}},
		{"inverted and negative ranges", Shape{Agents: Range{-2, -5}, Vars: Range{4, 1}, Domain: Range{0, -1}, Functions: Range{2, 1}, Arity: Range{-1, 1}}},
		{"hooks", Shape{
			Name: func(r *rand.Rand) string { return "p" + strconv.Itoa(r.IntN(9)) }, AnySense: true,
			Agents: Range{2, 2}, Vars: Range{1, 5}, Domain: Range{1, 3}, Functions: Range{1, 4}, Arity: Range{1, 2},
			AgentName: func(i int) string { return "ag" + strconv.Itoa(i) },
			VarName:   func(_ *rand.Rand, i int) string { return "v" + strconv.Itoa(i) },
			Labels: func(_ *rand.Rand, v, d int) []string {
				l := make([]string, d)
				for k := range l {
					l[k] = strconv.Itoa(v) + "." + strconv.Itoa(k)
				}
				return l
			},
			FuncName: func(i int) string { return "g" + strconv.Itoa(i) },
			Costs: func(_ *rand.Rand, arity int, c []float64) {
				for k := range c {
					c[k] = float64(arity)
				}
			},
			Offset: func(*rand.Rand) float64 { return 2.5 },
		}},
	}
	in := func(x int, g Range) bool { return x == max(g.Min, 0) || (x >= g.Min && x <= g.Max) }
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(100) {
				p := Make(rand.New(rand.NewPCG(seed, 1)), tc.s)
				if err := p.Validate(); err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				if q := Make(rand.New(rand.NewPCG(seed, 1)), tc.s); !reflect.DeepEqual(p, q) {
					t.Fatalf("seed %d: two calls differ", seed)
				}
				if len(p.Agents) < 1 || !in(len(p.Agents), tc.s.Agents) && len(p.Agents) != 1 {
					t.Fatalf("seed %d: %d agents for %v", seed, len(p.Agents), tc.s.Agents)
				}
				if !in(len(p.Variables), tc.s.Vars) || !in(len(p.Functions), tc.s.Functions) {
					t.Fatalf("seed %d: %d variables, %d functions", seed, len(p.Variables), len(p.Functions))
				}
				for _, v := range p.Variables {
					if d := len(v.Domain); d < 1 || !in(d, tc.s.Domain) && d != 1 {
						t.Fatalf("seed %d: domain %v", seed, v.Domain)
					}
				}
				for _, f := range p.Functions {
					if len(f.Scope) > len(p.Variables) || len(f.Scope) > max(tc.s.Arity.Max, tc.s.Arity.Min, 0) {
						t.Fatalf("seed %d: scope %v over %d variables", seed, f.Scope, len(p.Variables))
					}
				}
				if tc.s.Offset == nil && p.Offset != 0 || tc.s.Name == nil && p.Name != "" || !tc.s.AnySense && p.Sense != mva.Minimize {
					t.Fatalf("seed %d: name %q, sense %v, offset %v without hooks", seed, p.Name, p.Sense, p.Offset)
				}
			}
		})
	}
}

// TestMakeDefaultNames checks the names and costs a nil hook gives.
func TestMakeDefaultNames(t *testing.T) {
	p := Make(rand.New(rand.NewPCG(1, 2)), Shape{Agents: Range{2, 2}, Vars: Range{3, 3}, Domain: Range{3, 3}, Functions: Range{2, 2}, Arity: Range{2, 2}})
	if p.Agents[0].Name != "a0" || p.Agents[1].Name != "a1" || p.Variables[2].Name != "x2" || p.Functions[1].Name != "f1" {
		t.Fatalf("names %v %v %v", p.Agents, p.Variables, p.Functions)
	}
	if !reflect.DeepEqual(p.Variables[0].Domain, []string{"0", "1", "2"}) {
		t.Fatalf("labels %v", p.Variables[0].Domain)
	}
	for _, f := range p.Functions {
		for _, c := range f.Costs {
			if c != math.Trunc(c) || c < 0 || c > 9 {
				t.Fatalf("cost %v, want a whole number in 0..9", c)
			}
		}
	}
}

// TestMakeFixedRangesDrawNothing checks that a fixed count costs no
// randomness: with every range fixed, the stream moves only by the draws
// Make documents for agents and scopes, and by the Costs hook's.
func TestMakeFixedRangesDrawNothing(t *testing.T) {
	var got []uint64
	s := Shape{Agents: Range{1, 1}, Vars: Range{2, 2}, Domain: Range{1, 1}, Functions: Range{1, 1}, Arity: Range{0, 0},
		Costs: func(r *rand.Rand, _ int, c []float64) { got = append(got, r.Uint64()) }}
	// Each variable's agent is drawn even from one agent (two draws), and
	// the scope is a prefix of a permutation even when empty.
	r := rand.New(rand.NewPCG(9, 9))
	Make(r, s)
	want := rand.New(rand.NewPCG(9, 9))
	agents := 1
	want.IntN(agents)
	want.IntN(agents)
	want.Perm(2)
	if len(got) != 1 || got[0] != want.Uint64() {
		t.Fatalf("Costs drew %v: the stream moved", got)
	}
}
