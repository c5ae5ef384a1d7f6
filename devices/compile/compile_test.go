package compile_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/compile"
	"github.com/hearth-dcop/hearth/devices/internal/testhomes"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
	"github.com/hearth-dcop/hearth/mva/sim"
)

func same(a, b float64) bool {
	if math.IsInf(a, 1) || math.IsInf(b, 1) {
		return math.IsInf(a, 1) && math.IsInf(b, 1)
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(a))
}

// compileOrInfeasible compiles n; ok is false when the compiler proved it
// infeasible (which the caller checks against brute force).
func compileOrInfeasible(t *testing.T, n *devices.Neighbourhood) (*compile.Compiled, bool) {
	t.Helper()
	c, err := compile.Compile(n, compile.Options{})
	if errors.Is(err, devices.ErrInfeasible) {
		var de *devices.Error
		if !errors.As(err, &de) || de.Part != devices.PartRule && de.Part != devices.PartFeeder {
			t.Fatalf("infeasible without naming a rule or the feeder: %v", err)
		}
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return c, true
}

// randomEval draws a random schedule of n, evaluates it with the model
// (ev) and, encoded (assign), with c's problem (got). encoded is false,
// with assign and got unset, when Encode says the schedule breaks a rule
// (compile.ErrBreaksRules); any other error fails the test.
func randomEval(t *testing.T, rng *rand.Rand, n *devices.Neighbourhood, c *compile.Compiled) (ev *devices.Evaluation, assign []int, got float64, encoded bool) {
	t.Helper()
	s := testhomes.RandomSchedule(rng, n)
	ev, err := n.Evaluate(s)
	if err != nil {
		t.Fatal(err)
	}
	assign, err = c.Encode(s)
	if errors.Is(err, compile.ErrBreaksRules) {
		return ev, nil, 0, false
	}
	if err != nil {
		t.Fatal(err)
	}
	got, err = c.Problem.Eval(assign)
	if err != nil {
		t.Fatal(err)
	}
	return ev, assign, got, true
}

// TestEvalMatchesEvaluate compares the compiled problem's cost of random
// schedules with the model's own evaluation, on seeded random homes of
// both dynamics, with random (also too low) levels.
func TestEvalMatchesEvaluate(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	feasible, encoded := 0, 0
	for seed := range uint64(150) {
		n := testhomes.Random(seed, testhomes.Options{Homes: 1 + int(seed%3), Slots: 3 + int(seed%4), Devices: 3, Actions: 3, Mixed: true, Feeder: true})
		c, ok := compileOrInfeasible(t, n)
		if !ok {
			continue
		}
		for range 40 {
			ev, assign, got, ok := randomEval(t, rng, n, c)
			if !ok {
				for hi := range ev.Homes {
					for _, ok := range ev.Homes[hi].Rules {
						if !ok {
							goto broken
						}
					}
				}
				t.Fatalf("seed %d: Encode says a rule breaks, Evaluate finds every rule kept", seed)
			broken:
				continue
			}
			encoded++
			if !same(got, ev.Cost) {
				t.Fatalf("seed %d: Problem.Eval = %v, Evaluate = %v (%v)", seed, got, ev.Cost, ev.Violations)
			}
			if ev.Feasible {
				feasible++
			}
			// Decode is Encode's inverse on actions and levels.
			back, err := c.Decode(assign)
			if err != nil {
				t.Fatal(err)
			}
			ev2, err := n.Evaluate(back)
			if err != nil || !same(ev2.Cost, ev.Cost) {
				t.Fatalf("seed %d: decoded schedule costs %v, want %v (%v)", seed, ev2.Cost, ev.Cost, err)
			}
		}
	}
	if feasible < 100 || encoded < 500 {
		t.Fatalf("only %d feasible of %d encodable schedules: the generator is too strict to test much", feasible, encoded)
	}
}

// bruteForce returns the optimum of n over every joint schedule (tightest
// levels, which are optimal: caps are never negative, so a higher level
// never lowers the peak term or helps the feeder limit).
func bruteForce(n *devices.Neighbourhood) float64 {
	best := math.Inf(1)
	s := &devices.Schedule{Homes: make([]devices.HomeSchedule, len(n.Homes))}
	var rec func(h int)
	rec = func(h int) {
		if h == len(n.Homes) {
			ev, err := n.Evaluate(s)
			if err != nil {
				panic(err)
			}
			best = math.Min(best, ev.Cost)
			return
		}
		testhomes.Schedules(n, h, func(hs devices.HomeSchedule) {
			s.Homes[h] = hs
			rec(h + 1)
		})
	}
	rec(0)
	return best
}

func checkSolution(t *testing.T, c *compile.Compiled, assign []int, cost float64) {
	t.Helper()
	_, ev, err := c.Report(assign)
	if err != nil {
		t.Fatal(err)
	}
	if !ev.Feasible {
		t.Fatalf("the solver's schedule breaks: %v", ev.Violations)
	}
	for hi := range ev.Homes {
		for ri, ok := range ev.Homes[hi].Rules {
			if !ok {
				t.Fatalf("home %d rule %q not satisfied", hi, c.Model.Homes[hi].Rules[ri].Text)
			}
		}
	}
	if !same(ev.Cost, cost) {
		t.Fatalf("solver cost %v, evaluation %v", cost, ev.Cost)
	}
}

// TestSingleHomeExact solves random homes centrally with be and dfbnb
// (mva.Whole) and compares with enumeration of every schedule.
func TestSingleHomeExact(t *testing.T) {
	solved, infeasible := 0, 0
	for seed := range uint64(60) {
		n := testhomes.Random(1000+seed, testhomes.Options{Homes: 1, Slots: 3 + int(seed%2), Devices: 2, Actions: 3, Mixed: true, Feeder: true})
		want := bruteForce(n)
		c, ok := compileOrInfeasible(t, n)
		if !ok {
			if !math.IsInf(want, 1) {
				t.Fatalf("seed %d: compiler says infeasible, enumeration finds %v", seed, want)
			}
			infeasible++
			continue
		}
		for _, name := range []string{"be", "dfbnb"} {
			lp := mva.NewLocalProblem(c.Problem, mva.Whole(c.Problem))
			s, err := local.New(name, lp)
			if err != nil {
				t.Fatal(err)
			}
			in := make([]int, lp.NumInterior())
			got, err := s.SolveRow(context.Background(), nil, in)
			if err != nil {
				t.Fatal(err)
			}
			if !same(got, want) {
				t.Fatalf("seed %d %s: optimum %v, enumeration %v", seed, name, got, want)
			}
			if math.IsInf(got, 1) {
				infeasible++
				continue
			}
			assign := make([]int, len(c.Problem.Variables))
			for k, v := range lp.Vars {
				assign[v] = in[k]
			}
			checkSolution(t, c, assign, got)
			solved++
		}
	}
	if solved < 40 {
		t.Fatalf("only %d feasible solves (%d infeasible)", solved, infeasible)
	}
}

func dpopSolve(t *testing.T, p *mva.Problem) sim.Solution {
	t.Helper()
	sol, err := sim.Solve(context.Background(), p, sim.Options{
		Protocol: dpop.New,
		Solver:   func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("be", lp) },
		Eager:    true,
		Seed:     1,
	})
	if err != nil {
		t.Fatal(err)
	}
	return sol
}

// TestDPOPNeighbourhood solves random neighbourhoods of two and three homes
// with DPOP over MVA tables and compares with enumeration.
func TestDPOPNeighbourhood(t *testing.T) {
	solved, tried := 0, 0
	for seed := uint64(0); seed < 400 && solved < 25; seed++ {
		tried++
		homes := 2 + int(seed%2)
		n := testhomes.Random(2000+seed, testhomes.Options{Homes: homes, Slots: 3, Devices: 1 + (homes+1)%2, Actions: 2, Mixed: true, Feeder: true})
		want := bruteForce(n)
		c, ok := compileOrInfeasible(t, n)
		if !ok {
			if !math.IsInf(want, 1) {
				t.Fatalf("seed %d: compiler says infeasible, enumeration finds %v", seed, want)
			}
			continue
		}
		sol := dpopSolve(t, c.Problem)
		if !same(sol.Cost, want) {
			t.Fatalf("seed %d: dpop %v, enumeration %v", seed, sol.Cost, want)
		}
		if math.IsInf(want, 1) {
			continue
		}
		if !sol.Optimal {
			t.Fatalf("seed %d: dpop does not claim optimality", seed)
		}
		checkSolution(t, c, sol.Assign, sol.Cost)
		solved++
	}
	if solved < 25 {
		t.Fatalf("only %d feasible neighbourhoods in %d", solved, tried)
	}
}

// TestSoftExact solves random homes with soft rules, export prices, cycle
// costs, physical ranges and soft feeder limits centrally with bucket
// elimination, and compares the optimum with enumeration of every
// schedule through the model's evaluator: the penalties the compiler adds
// for missed goals are the ones Evaluate charges.
func TestSoftExact(t *testing.T) {
	solved, missed := 0, 0
	for seed := range uint64(300) {
		k := int(seed % 2)
		n := testhomes.Random(5000+seed, testhomes.Options{Homes: 1 + k, Slots: 3, Devices: 2 - k, Actions: 3 - k, Mixed: true, Feeder: true, Soft: true})
		ev := solveExact(t, seed, n)
		if ev == nil {
			continue
		}
		if len(ev.Misses) > 0 {
			missed++
		}
		solved++
	}
	if solved < 150 || missed < 30 {
		t.Fatalf("%d solved, %d with missed goals: the generator tests too little", solved, missed)
	}
	t.Logf("%d solved, %d miss a soft goal or limit", solved, missed)
}

// solveExact solves n's compiled problem with bucket elimination, checks
// the optimum against enumeration's (want) and the evaluation of the
// decoded plan against the solver's cost, and returns that evaluation:
// nil where n has no feasible schedule (the compiler and enumeration
// agreeing).
func solveExact(t *testing.T, seed uint64, n *devices.Neighbourhood) *devices.Evaluation {
	t.Helper()
	want := bruteForce(n)
	c, ok := compileOrInfeasible(t, n)
	if !ok {
		if !math.IsInf(want, 1) {
			t.Fatalf("seed %d: compiler says infeasible, enumeration finds %v", seed, want)
		}
		return nil
	}
	lp := mva.NewLocalProblem(c.Problem, mva.Whole(c.Problem))
	s, err := local.New("be", lp)
	if err != nil {
		t.Fatal(err)
	}
	in := make([]int, lp.NumInterior())
	got, err := s.SolveRow(context.Background(), nil, in)
	if err != nil {
		t.Fatal(err)
	}
	if !same(got, want) {
		t.Fatalf("seed %d: optimum %v, enumeration %v", seed, got, want)
	}
	if math.IsInf(got, 1) {
		return nil
	}
	assign := make([]int, len(c.Problem.Variables))
	for k, v := range lp.Vars {
		assign[v] = in[k]
	}
	_, ev, err := c.Report(assign)
	if err != nil {
		t.Fatal(err)
	}
	if !ev.Feasible || !same(ev.Cost, got) {
		t.Fatalf("seed %d: evaluation cost %v feasible %v (%v), solver %v", seed, ev.Cost, ev.Feasible, ev.Violations, got)
	}
	return ev
}
