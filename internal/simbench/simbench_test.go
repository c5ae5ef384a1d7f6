package simbench

import (
	"reflect"
	"testing"
)

func TestProblem(t *testing.T) {
	for seed := range int64(Seeds + 1) {
		p := Problem(seed)
		if err := p.Validate(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !reflect.DeepEqual(p, Problem(seed)) {
			t.Fatalf("seed %d: two calls differ", seed)
		}
		if len(p.Agents) != 8 || len(p.Variables) != 24 || len(p.Functions) != 40 {
			t.Fatalf("seed %d: %d agents, %d variables, %d functions", seed, len(p.Agents), len(p.Variables), len(p.Functions))
		}
		for _, f := range p.Functions {
			if len(f.Scope) > 2 {
				t.Fatalf("seed %d: function of arity %d", seed, len(f.Scope))
			}
		}
	}
	if reflect.DeepEqual(Problem(1), Problem(2)) {
		t.Fatal("seeds 1 and 2 give the same problem")
	}
}
