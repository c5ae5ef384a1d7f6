package dpop

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// sameCost compares costs exactly for Hard and integer sums, and up to
// rounding otherwise: DPOP adds the same numbers as Problem.Eval in another
// order.
func sameCost(a, b float64) bool {
	if mva.IsHard(a) || mva.IsHard(b) {
		return mva.IsHard(a) && mva.IsHard(b)
	}
	return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b))
}

// bruteForce returns p's optimum by enumerating every assignment.
func bruteForce(t testing.TB, p *mva.Problem) float64 {
	t.Helper()
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	c, err := local.NewBruteForce(lp).SolveRow(context.Background(), nil, make([]int, lp.NumInterior()))
	if err != nil {
		t.Fatal(err)
	}
	return c + p.Offset
}

// randomProblem draws the problem of seed: 2–5 agents with 2–4 variables
// each (on average; 12 at most in all), domains 2–3, arities up to 3, some hard entries.
// Sparse seeds (few functions, mostly local) give disconnected agent
// graphs and agents without boundary variables; some seeds have real
// costs and a constant offset.
func randomProblem(seed int64) *mva.Problem {
	agents := 2 + int(seed%4)
	// At most 12 variables keep brute force fast.
	vars := min(agents*(2+int(seed/4%3)), 12)
	funcs := vars + int(seed%5)
	locality := 0.4
	if seed%3 == 0 {
		funcs = vars / 2
		locality = 0.8
	}
	p := randprob.New(seed, randprob.Options{
		Agents: agents, Vars: vars, MinDomain: 2, MaxDomain: 3, MaxArity: 3,
		Functions: funcs, HardProb: []float64{0, 0.05, 0.15, 0.4}[seed%4],
		IntCosts: seed%7 != 0, Locality: locality,
	})
	if seed%11 == 0 {
		p.Offset = 2.5
	}
	return p
}

// shape describes a problem's agent graph for coverage checks.
func shape(p *mva.Problem) (edges int, connected, emptyBoundary bool) {
	d := mva.Decompose(p)
	nb := d.Neighbours()
	seen := make([]bool, len(nb))
	stack := []int{0}
	seen[0] = true
	reached := 1
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		edges += len(nb[i])
		for _, j := range nb[i] {
			if !seen[j] {
				seen[j] = true
				reached++
				stack = append(stack, j)
			}
		}
	}
	for i := range nb {
		if !seen[i] {
			edges += len(nb[i])
		}
	}
	for _, s := range d.Subs {
		emptyBoundary = emptyBoundary || len(s.Boundary) == 0
	}
	return edges / 2, reached == len(nb), emptyBoundary
}

type config struct {
	solver    string
	eager     bool
	faults    sim.Faults
	heuristic float64
}

func (c config) String() string {
	return fmt.Sprintf("%s/eager=%v/faults=%v/h=%v", c.solver, c.eager, c.faults != sim.Faults{}, c.heuristic)
}

func solve(t testing.TB, p *mva.Problem, c config, seed uint64) sim.Solution {
	t.Helper()
	sol, err := sim.Solve(context.Background(), p, sim.Options{
		Protocol: New,
		Solver:   func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New(c.solver, lp) },
		Eager:    c.eager, Seed: seed,
		Params: map[string]float64{"heuristic": c.heuristic},
		Config: sim.Config{Faults: c.faults},
	})
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	return sol
}

// TestRandomAgainstBruteForce runs DPOP on random problems under every
// configuration and checks the optimum, every agent's reported cost, the
// optimality flag and the exact message count.
func TestRandomAgainstBruteForce(t *testing.T) {
	n := int64(240)
	if testing.Short() {
		n = 60
	}
	var disconnected, emptyB, infeasible int
	for seed := range n {
		p := randomProblem(seed)
		want := bruteForce(t, p)
		edges, connected, empty := shape(p)
		if !connected {
			disconnected++
		}
		if empty {
			emptyB++
		}
		if mva.IsHard(want) {
			infeasible++
		}
		for k, c := range configs(seed) {
			sol := solve(t, p, c, uint64(seed)*8+uint64(k))
			tag := fmt.Sprintf("seed %d %s", seed, c)
			if !sameCost(sol.Cost, want) || !sol.Optimal {
				t.Fatalf("%s: cost %v optimal %v, brute force %v", tag, sol.Cost, sol.Optimal, want)
			}
			for i, r := range sol.Outcome.Results {
				if !sameCost(r.Cost, sol.Cost) {
					t.Fatalf("%s: agent %d reports %v, the assignment costs %v", tag, i, r.Cost, sol.Cost)
				}
			}
			msgs := int64(4 * (len(p.Agents) - 1))
			if c.heuristic == MostNeighbours {
				msgs += int64(2 * edges)
			}
			if got := sol.Outcome.Metrics.Messages; got != msgs {
				t.Fatalf("%s: %d messages, want 2|E|+4(|A|-1) = %d", tag, got, msgs)
			}
			if c.faults != (sim.Faults{}) && len(p.Agents) > 2 && sol.Outcome.Reordered == 0 && sol.Outcome.Duplicates == 0 {
				t.Fatalf("%s: no fault was injected", tag)
			}
		}
	}
	t.Logf("%d problems: %d disconnected, %d with an agent without boundary, %d infeasible", n, disconnected, emptyB, infeasible)
	if disconnected == 0 || emptyB == 0 || infeasible == 0 {
		t.Fatalf("coverage: %d disconnected, %d empty boundaries, %d infeasible; want some of each", disconnected, emptyB, infeasible)
	}
}

// configs returns the configurations a seed runs: lazy and eager tables,
// dfbnb and be, with and without faults; the heuristic alternates.
func configs(seed int64) []config {
	var out []config
	for _, solver := range []string{"dfbnb", "be"} {
		for _, eager := range []bool{false, true} {
			for _, f := range []sim.Faults{{}, {Duplicate: 0.3, Reorder: 0.5}} {
				out = append(out, config{solver: solver, eager: eager, faults: f, heuristic: float64((seed + int64(len(out))) % 2)})
			}
		}
	}
	return out
}

// TestDeterministic checks that the messages' contents do not depend on
// the interleaving: every seed and fault pattern gives the same bytes and
// the same assignment.
func TestDeterministic(t *testing.T) {
	for seed := range int64(20) {
		p := randomProblem(seed)
		var ref sim.Solution
		for k := range 6 {
			c := config{solver: "dfbnb", faults: sim.Faults{Duplicate: 0.3, Reorder: 0.5}}
			if k == 0 {
				c.faults = sim.Faults{}
			}
			sol := solve(t, p, c, uint64(k)+100)
			if k == 0 {
				ref = sol
				continue
			}
			if fmt.Sprint(sol.Assign) != fmt.Sprint(ref.Assign) ||
				sol.Outcome.Metrics.TotalMessageBytes != ref.Outcome.Metrics.TotalMessageBytes ||
				sol.Outcome.Metrics.MaxMessageBytes != ref.Outcome.Metrics.MaxMessageBytes {
				t.Fatalf("seed %d run %d: assignment %v bytes %d, first run %v bytes %d", seed, k,
					sol.Assign, sol.Outcome.Metrics.TotalMessageBytes, ref.Assign, ref.Outcome.Metrics.TotalMessageBytes)
			}
		}
	}
}
