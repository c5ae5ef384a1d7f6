package gen

import (
	"math"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
)

func TestRandomStructure(t *testing.T) {
	for _, c := range []struct {
		name string
		o    func(*RandomOptions)
	}{
		{"defaults", func(*RandomOptions) {}},
		{"arity 4", func(o *RandomOptions) { o.MaxArity = 4; o.LocalDensity = 0.9 }},
		{"dense", func(o *RandomOptions) { o.LocalDensity, o.GlobalDensity, o.BoundaryRatio = 1, 1, 1 }},
		{"no global", func(o *RandomOptions) { o.GlobalDensity = 0 }},
		{"unplanted", func(o *RandomOptions) { o.Plant = false; o.Tightness = 0.7 }},
		{"one agent", func(o *RandomOptions) { o.Agents = 1 }},
		{"large", func(o *RandomOptions) { o.Agents, o.Vars = 30, 20 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := DefaultRandom()
			c.o(&o)
			for seed := range uint64(3) {
				p, err := Random(seed, o)
				if err != nil {
					t.Fatal(err)
				}
				checkRandom(t, p, o)
			}
		})
	}
}

func checkRandom(t *testing.T, p *mva.Problem, o RandomOptions) {
	t.Helper()
	if len(p.Agents) != o.Agents {
		t.Fatalf("%d agents, want %d", len(p.Agents), o.Agents)
	}
	for i, n := range varsPerAgent(p) {
		if n != o.Vars {
			t.Fatalf("agent %d has %d variables, want %d", i, n, o.Vars)
		}
	}
	for _, v := range p.Variables {
		if len(v.Domain) != o.Domain {
			t.Fatalf("variable %s has %d values", v.Name, len(v.Domain))
		}
	}
	for _, f := range p.Functions {
		if len(f.Scope) < 2 || len(f.Scope) > o.MaxArity {
			t.Fatalf("function %s has arity %d, want 2..%d", f.Name, len(f.Scope), o.MaxArity)
		}
		want := round(o.Tightness * float64(len(f.Costs)))
		if o.Plant {
			want = max(want, 1)
		}
		if got := feasibleEntries(f); got != want {
			t.Fatalf("function %s has %d feasible entries of %d, want %d", f.Name, got, len(f.Costs), want)
		}
		for _, x := range f.Costs {
			if !mva.IsHard(x) && (x < float64(o.MinCost) || x > float64(o.MaxCost) || x != math.Trunc(x)) {
				t.Fatalf("function %s: cost %v outside the whole numbers of [%d, %d]", f.Name, x, o.MinCost, o.MaxCost)
			}
		}
	}
	// The functions partition the edges: every pair of variables is in at
	// most one scope, and the local edges are exactly p1l of the pairs.
	local := make([]int, o.Agents)
	global := 0
	for e, n := range primal(p) {
		if n != 1 {
			t.Fatalf("variables %d and %d share %d functions", e.u, e.v, n)
		}
		a, b := p.Variables[e.u].Agent, p.Variables[e.v].Agent
		if a == b {
			local[a]++
		} else {
			global++
		}
	}
	wantLocal := round(o.LocalDensity * float64(o.Vars*(o.Vars-1)/2))
	for i, n := range local {
		if n != wantLocal {
			t.Fatalf("agent %d has %d local edges, want %d", i, n, wantLocal)
		}
	}
	// Every agent has exactly the boundary variables the ratio asks for.
	nb := 0
	if o.Agents > 1 && o.GlobalDensity > 0 && o.BoundaryRatio > 0 {
		nb = min(max(round(o.BoundaryRatio*float64(o.Vars)), 1), o.Vars)
	}
	for i, s := range mva.Decompose(p).Subs {
		if len(s.Boundary) != nb {
			t.Fatalf("agent %d has %d boundary variables, want %d", i, len(s.Boundary), nb)
		}
	}
	if pairs := nb * nb * o.Agents * (o.Agents - 1) / 2; pairs > 0 {
		// The covering step may add a few edges beyond the count at low
		// densities; on large instances the density is exact.
		want := round(o.GlobalDensity * float64(pairs))
		if global < want || (pairs > 1000 && global != want) {
			t.Fatalf("%d global edges among %d pairs, want %d", global, pairs, want)
		}
	}
	if o.Agents > 1 && o.GlobalDensity > 0 && len(mva.Decompose(p).External) == 0 {
		t.Fatal("no function between agents")
	}
}

func TestRandomGlobalDensityLarge(t *testing.T) {
	// 40 agents with 5 boundary variables each: 19500 pairs.
	o := DefaultRandom()
	o.Agents, o.Vars, o.BoundaryRatio = 40, 10, 0.5
	for _, p1g := range []float64{0.05, 0.2, 0.6} {
		o.GlobalDensity = p1g
		p, err := Random(1, o)
		if err != nil {
			t.Fatal(err)
		}
		global := 0
		for e := range primal(p) {
			if p.Variables[e.u].Agent != p.Variables[e.v].Agent {
				global++
			}
		}
		if d := float64(global) / 19500; math.Abs(d-p1g) > 0.001 {
			t.Errorf("p1g %v: global density %v", p1g, d)
		}
	}
}

func TestRandomPlantedFeasible(t *testing.T) {
	// Unplanted defaults are nearly always infeasible (0 of 20 seeds when
	// this was written); planted ones always feasible, and the planted
	// solution is one of the feasible assignments.
	for seed := range uint64(10) {
		p, err := Random(seed, DefaultRandom())
		if err != nil {
			t.Fatal(err)
		}
		checkFeasible(t, p, "dfbnb")
	}
	small := DefaultRandom()
	small.Agents, small.Vars, small.Domain = 3, 3, 3
	for seed := range uint64(10) {
		p, err := Random(seed, small)
		if err != nil {
			t.Fatal(err)
		}
		if b, d := checkFeasible(t, p, "bruteforce"), checkFeasible(t, p, "dfbnb"); b != d {
			t.Fatalf("seed %d: brute force %v, dfbnb %v", seed, b, d)
		}
	}
}

func TestRandomCliques(t *testing.T) {
	// A complete local graph on 6 variables with arity 3 leaves no
	// triangle of uncovered edges, and with arity 6 it is one function.
	o := DefaultRandom()
	o.Agents, o.LocalDensity, o.Domain, o.MaxArity = 1, 1, 2, 6
	p, err := Random(1, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Functions) != 1 || len(p.Functions[0].Scope) != 6 {
		t.Fatalf("complete graph with arity 6 gave %d functions", len(p.Functions))
	}
	o.MaxArity = 3
	if p, err = Random(1, o); err != nil {
		t.Fatal(err)
	}
	binary := newGraph(len(p.Variables))
	for _, f := range p.Functions {
		if len(f.Scope) == 2 {
			binary.add(f.Scope[0], f.Scope[1])
		}
	}
	for v := range binary.adj {
		if c := findClique(v, 3, binary.adj[v], binary.has); c != nil {
			t.Fatalf("binary functions %v form a triangle left uncovered", c)
		}
	}
}
