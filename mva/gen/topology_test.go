package gen

import (
	"math"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
)

// checkBinary checks the settings shared by the one-variable-per-agent
// topologies and returns the degree of every agent.
func checkBinary(t *testing.T, p *mva.Problem, o GraphOptions) []int {
	t.Helper()
	if len(p.Agents) != len(p.Variables) {
		t.Fatalf("%d agents for %d variables", len(p.Agents), len(p.Variables))
	}
	for v, x := range p.Variables {
		if x.Agent != v || len(x.Domain) != o.Domain {
			t.Fatalf("variable %s: agent %d, %d values", x.Name, x.Agent, len(x.Domain))
		}
	}
	deg := make([]int, len(p.Variables))
	for e, n := range primal(p) {
		if n != 1 {
			t.Fatalf("two functions between %d and %d", e.u, e.v)
		}
		deg[e.u]++
		deg[e.v]++
	}
	want := round(o.Tightness * float64(o.Domain*o.Domain))
	if o.Plant {
		want = max(want, 1)
	}
	for _, f := range p.Functions {
		if len(f.Scope) != 2 {
			t.Fatalf("function %s has arity %d", f.Name, len(f.Scope))
		}
		if got := feasibleEntries(f); got != want {
			t.Fatalf("function %s has %d feasible entries, want %d", f.Name, got, want)
		}
		for _, c := range f.Costs {
			if !mva.IsHard(c) && (c < float64(o.MinCost) || c > float64(o.MaxCost) || c != math.Trunc(c)) {
				t.Fatalf("function %s: cost %v", f.Name, c)
			}
		}
	}
	if !agentsConnected(p) {
		t.Fatal("the agents are not connected")
	}
	return deg
}

func TestGrid(t *testing.T) {
	for _, c := range [][2]int{{1, 1}, {1, 5}, {3, 3}, {4, 7}, {10, 10}} {
		o := DefaultGrid()
		o.Rows, o.Cols = c[0], c[1]
		p, err := Grid(2, o)
		if err != nil {
			t.Fatal(err)
		}
		if want := 2*c[0]*c[1] - c[0] - c[1]; len(p.Functions) != want {
			t.Fatalf("%dx%d grid: %d edges, want %d", c[0], c[1], len(p.Functions), want)
		}
		for v, d := range checkBinary(t, p, o.GraphOptions) {
			r, col := v/c[1], v%c[1]
			want := 0
			for _, ok := range []bool{r > 0, r < c[0]-1, col > 0, col < c[1]-1} {
				if ok {
					want++
				}
			}
			if d != want {
				t.Fatalf("%dx%d grid: node (%d,%d) has degree %d, want %d", c[0], c[1], r, col, d, want)
			}
		}
	}
}

func TestScaleFree(t *testing.T) {
	for _, n := range []int{2, 3, 10, 200} {
		o := DefaultScaleFree()
		o.Agents = n
		p, err := ScaleFree(uint64(n), o)
		if err != nil {
			t.Fatal(err)
		}
		if want := 2*(n-2) + 1; len(p.Functions) != want {
			t.Fatalf("%d agents: %d edges, want the papers' 2(n−2)+1 = %d", n, len(p.Functions), want)
		}
		deg := checkBinary(t, p, o.GraphOptions)
		if n == 200 {
			// Preferential attachment makes hubs: far above the mean of 4.
			if m := max(deg[0], deg[1], deg[2]); m < 12 {
				t.Errorf("the oldest nodes have degree at most %d: no hub", m)
			}
		}
	}
}

func TestRandGraph(t *testing.T) {
	for _, c := range []struct {
		n  int
		p1 float64
	}{{10, 0.3}, {10, 1}, {40, 0.1}, {1, 0.3}} {
		o := DefaultRandGraph()
		o.Agents, o.Density = c.n, c.p1
		for seed := range uint64(3) {
			p, err := RandGraph(seed, o)
			if err != nil {
				t.Fatal(err)
			}
			if want := round(c.p1 * float64(c.n*(c.n-1)/2)); len(p.Functions) != want {
				t.Fatalf("n=%d p1=%v: %d edges, want %d", c.n, c.p1, len(p.Functions), want)
			}
			checkBinary(t, p, o.GraphOptions)
		}
	}
}

func TestTopologiesFeasible(t *testing.T) {
	for seed := range uint64(5) {
		g := DefaultGrid()
		sf := DefaultScaleFree()
		rg := DefaultRandGraph()
		for _, build := range []func() (*mva.Problem, error){
			func() (*mva.Problem, error) { return Grid(seed, g) },
			func() (*mva.Problem, error) { return ScaleFree(seed, sf) },
			func() (*mva.Problem, error) { return RandGraph(seed, rg) },
		} {
			p, err := build()
			if err != nil {
				t.Fatal(err)
			}
			checkFeasible(t, p, "dfbnb")
		}
	}
}
