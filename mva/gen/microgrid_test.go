package gen

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
)

func TestMicrogridStructure(t *testing.T) {
	for _, c := range []struct {
		name string
		o    func(*MicrogridOptions)
	}{
		{"small", func(o *MicrogridOptions) { o.Agents, o.Domain = 30, 5 }},
		{"arity 3", func(o *MicrogridOptions) { o.Agents, o.Domain, o.MaxArity = 25, 5, 3 }},
		{"unbounded degree", func(o *MicrogridOptions) { o.Agents, o.Domain, o.MaxDegree, o.MaxArity = 60, 3, 0, 4 }},
		{"one cluster", func(o *MicrogridOptions) { o.Agents, o.Domain, o.ClusterSize, o.MaxArity = 12, 3, 100, 4 }},
		{"one building", func(o *MicrogridOptions) { o.Agents, o.Domain = 1, 5 }},
		{"thesis", func(o *MicrogridOptions) { o.Agents = 20 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := DefaultMicrogrid()
			c.o(&o)
			for seed := range uint64(3) {
				p, err := Microgrid(seed, o)
				if err != nil {
					t.Fatal(err)
				}
				checkMicrogrid(t, p, o)
			}
		})
	}
}

func checkMicrogrid(t *testing.T, p *mva.Problem, o MicrogridOptions) {
	t.Helper()
	if len(p.Agents) != o.Agents {
		t.Fatalf("%d buildings, want %d", len(p.Agents), o.Agents)
	}
	if !agentsConnected(p) {
		t.Fatal("the buildings are not connected")
	}
	for _, v := range p.Variables {
		if len(v.Domain) != o.Domain {
			t.Fatalf("variable %s has %d values", v.Name, len(v.Domain))
		}
	}
	for _, f := range p.Functions {
		if len(f.Scope) > o.MaxArity {
			t.Fatalf("function %s has arity %d > %d", f.Name, len(f.Scope), o.MaxArity)
		}
	}
	d := mva.Decompose(p)
	nb := d.Neighbours()
	for i, s := range d.Subs {
		deg := len(nb[i])
		if o.MaxDegree > 0 && deg > o.MaxDegree {
			t.Fatalf("building %d has %d lines, more than %d", i, deg, o.MaxDegree)
		}
		// The boundary is one flow per line; the rest is generation,
		// consumption and partial sums.
		if len(s.Boundary) != deg {
			t.Fatalf("building %d: %d boundary variables for %d lines", i, len(s.Boundary), deg)
		}
		for _, v := range s.Boundary {
			if !strings.HasPrefix(p.Variables[v].Name, "f") {
				t.Fatalf("building %d: boundary variable %s is not a flow", i, p.Variables[v].Name)
			}
		}
		aux := 0
		for _, v := range s.Interior {
			if strings.HasPrefix(p.Variables[v].Name, "s") {
				aux++
			}
		}
		if len(s.Interior) != 2+aux || (2+deg <= o.MaxArity) != (aux == 0) {
			t.Fatalf("building %d with %d lines: interior %d with %d partial sums", i, deg, len(s.Interior), aux)
		}
	}
	checkEquations(t, p)
	// Nothing generated, consumed or sent is feasible.
	zero := make([]int, len(p.Variables))
	for v, x := range p.Variables {
		if x.Domain[0] != "0" {
			zero[v] = (o.Domain - 1) / 2
		}
	}
	if c, err := p.Eval(zero); err != nil || mva.IsHard(c) {
		t.Fatalf("the idle grid costs %v (%v)", c, err)
	}
}

func TestMicrogridExchangesPower(t *testing.T) {
	// On small grids the optimum is feasible and, somewhere, sends power
	// over a line: buildings with cheap generation supply the others.
	o := DefaultMicrogrid()
	o.Agents, o.Domain, o.MaxArity, o.ClusterSize, o.Generators = 4, 5, 4, 4, 0.5
	sent := false
	for seed := range uint64(8) {
		p, err := Microgrid(seed, o)
		if err != nil {
			t.Fatal(err)
		}
		checkFeasible(t, p, "dfbnb")
		_, assign := solveWhole(t, p, "dfbnb")
		for v, x := range p.Variables {
			if strings.HasPrefix(x.Name, "f") && x.Domain[assign[v]] != "0" {
				sent = true
			}
		}
	}
	if !sent {
		t.Error("no optimum of 8 grids sends any power")
	}
}

// checkEquations verifies every hard linear function entry by entry, on
// the values the labels spell: a line's two flows cancel, a partial sum is
// the sum of its flows, and a balance says generation − consumption =
// the flows sent.
func checkEquations(t *testing.T, p *mva.Problem) {
	t.Helper()
	for _, f := range p.Functions {
		var coef []int
		switch {
		case strings.HasPrefix(f.Name, "line"):
			coef = []int{1, 1}
		case strings.HasPrefix(f.Name, "sum"):
			coef = append([]int{-1}, slices.Repeat([]int{1}, len(f.Scope)-1)...)
		case strings.HasPrefix(f.Name, "bal"):
			coef = append([]int{1, -1}, slices.Repeat([]int{-1}, len(f.Scope)-2)...)
		default:
			continue
		}
		if len(f.Costs) > 1<<14 {
			continue // the small instances check the same code
		}
		strides := p.Strides(f.Scope)
		for e, c := range f.Costs {
			sum := 0
			for j, v := range f.Scope {
				x, err := strconv.Atoi(p.Variables[v].Domain[e/strides[j]%p.DomainSize(v)])
				if err != nil {
					t.Fatal(err)
				}
				sum += coef[j] * x
			}
			if (sum == 0) != (c == 0) || (sum != 0 && !mva.IsHard(c)) {
				t.Fatalf("%s: entry %d costs %v, the equation's sum is %d", f.Name, e, c, sum)
			}
		}
	}
}
