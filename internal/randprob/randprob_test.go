package randprob

import (
	"reflect"
	"testing"
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
