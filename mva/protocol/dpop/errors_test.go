package dpop

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/internal/fixtures"
	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/sim"
	"github.com/hearth-dcop/hearth/mva/wire"
)

func TestParams(t *testing.T) {
	p := fixtures.Thesis31()
	d := mva.Decompose(p)
	for _, params := range []map[string]float64{
		{"max_util_entries": 0}, {"max_util_entries": 1.5}, {"max_util_entries": 1e12},
		{"heuristic": 2}, {"heuristic": -1},
	} {
		nodes, _, err := mva.BuildNodes(context.Background(), d, func(lp *mva.LocalProblem) (mva.LocalSolver, error) {
			return local.New("dfbnb", lp)
		}, false, 1, params)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := New(nodes[0]); err == nil {
			t.Errorf("params %v accepted", params)
		}
	}
	if _, err := New(&mva.Node{}); err == nil {
		t.Error("empty node accepted")
	}
}

// TestMaxUtilEntries checks that a separator over the limit is a clear
// error naming the agent and the separator's size.
func TestMaxUtilEntries(t *testing.T) {
	// A clique of seven agents: the DFS is a chain, and the last agent's
	// separator holds the six other variables, 64 entries.
	var edges [][2]int
	for i := range 7 {
		for j := i + 1; j < 7; j++ {
			edges = append(edges, [2]int{i, j})
		}
	}
	p := graphProblem(7, edges)
	opts := sim.Options{
		Protocol: New,
		Solver:   func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("dfbnb", lp) },
		Params:   map[string]float64{"max_util_entries": 32},
	}
	_, err := sim.Solve(context.Background(), p, opts)
	if err == nil || !errors.Is(err, local.ErrTooLarge) || !strings.Contains(err.Error(), "max_util_entries = 32") ||
		!strings.Contains(err.Error(), "separator of 6 variables") {
		t.Fatalf("error %v, want a max_util_entries error over 6 variables", err)
	}
	opts.Params["max_util_entries"] = 64
	sol, err := sim.Solve(context.Background(), p, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := bruteForce(t, p); sol.Cost != want {
		t.Fatalf("cost %v, want %v", sol.Cost, want)
	}
}

// TestBadMessages feeds malformed or misplaced messages to agents of the
// thesis example and expects errors.
func TestBadMessages(t *testing.T) {
	ctx := context.Background()
	enc := func(f func(w *wire.Writer)) []byte {
		var w wire.Writer
		f(&w)
		return w.Bytes()
	}
	tests := []struct {
		name  string
		steps int // deliveries of a normal run first
		m     mva.Message
	}{
		{"unknown kind", 0, mva.Message{From: 0, To: 1, Kind: "NOPE"}},
		{"wrong recipient", 0, mva.Message{From: 0, To: 0, Kind: KindDegree, Body: encodeDegree(1)}},
		{"degree out of range", 0, mva.Message{From: 0, To: 1, Kind: KindDegree, Body: encodeDegree(5)}},
		{"degree zero", 0, mva.Message{From: 0, To: 1, Kind: KindDegree, Body: encodeDegree(0)}},
		{"second degree", 1, mva.Message{From: 0, To: 1, Kind: KindDegree, Body: encodeDegree(1)}},
		{"empty token", 2, mva.Message{From: 0, To: 1, Kind: KindToken}},
		{"token path not from root", 2, mva.Message{From: 0, To: 1, Kind: KindToken, Body: encodeToken(token{path: []int{1, 0}, visited: []int{0, 1}})}},
		{"token to visited", 2, mva.Message{From: 0, To: 1, Kind: KindToken, Body: encodeToken(token{path: []int{0}, visited: []int{0, 1}})}},
		{"token repeats", 2, mva.Message{From: 0, To: 1, Kind: KindToken, Body: encodeToken(token{path: []int{0}, visited: []int{0, 0}})}},
		{"token trailing", 2, mva.Message{From: 0, To: 1, Kind: KindToken, Body: append(encodeToken(token{path: []int{0}, visited: []int{0}}), 0)}},
		{"return without token", 0, mva.Message{From: 1, To: 0, Kind: KindReturn, Body: encodeReturn([]int{0, 1})}},
		{"return loses agents", 3, mva.Message{From: 1, To: 0, Kind: KindReturn, Body: encodeReturn([]int{1})}},
		{"util from non-child", 0, mva.Message{From: 1, To: 0, Kind: KindUtil, Body: encodeUtil(util{costs: []float64{1}})}},
		{"util wrong size", 4, mva.Message{From: 1, To: 0, Kind: KindUtil, Body: encodeUtil(util{vars: []int{0}, costs: []float64{1}})}},
		{"util foreign variable", 4, mva.Message{From: 1, To: 0, Kind: KindUtil, Body: encodeUtil(util{vars: []int{3}, costs: []float64{1, 2}})}},
		{"util variable out of range", 4, mva.Message{From: 1, To: 0, Kind: KindUtil, Body: encodeUtil(util{vars: []int{9}, costs: []float64{1, 2}})}},
		{"util NaN", 4, mva.Message{From: 1, To: 0, Kind: KindUtil, Body: encodeUtil(util{vars: []int{0}, costs: []float64{1, nan()}})}},
		{"util not increasing", 4, mva.Message{From: 1, To: 0, Kind: KindUtil, Body: encodeUtil(util{vars: []int{1, 0}, costs: []float64{1, 2, 3, 4}})}},
		{"util forged length", 4, mva.Message{From: 1, To: 0, Kind: KindUtil, Body: enc(func(w *wire.Writer) { w.Ints([]int{0}); w.Uint(1 << 40) })}},
		{"value from non-parent", 0, mva.Message{From: 1, To: 0, Kind: KindValue, Body: encodeValue(value{cost: 1})}},
		{"value before util", 2, mva.Message{From: 0, To: 1, Kind: KindValue, Body: encodeValue(value{cost: 1, values: []int{0}})}},
		{"value count", 5, mva.Message{From: 0, To: 1, Kind: KindValue, Body: encodeValue(value{cost: 1})}},
		{"value out of domain", 5, mva.Message{From: 0, To: 1, Kind: KindValue, Body: encodeValue(value{cost: 1, values: []int{2}})}},
		{"value -Inf", 5, mva.Message{From: 0, To: 1, Kind: KindValue, Body: encodeValue(value{cost: negInf(), values: []int{0}})}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, agents := buildAgents(t, fixtures.Thesis31(), nil)
			if _, err := fifo(ctx, agents, tc.steps); err != nil {
				t.Fatal(err)
			}
			if _, err := agents[1-tc.m.From%2].Step(ctx, tc.m); err == nil {
				t.Fatalf("accepted")
			}
		})
	}
}

// TestInfeasible checks that a problem without a feasible assignment ends
// cleanly with cost +Inf at every agent.
func TestInfeasible(t *testing.T) {
	p := fixtures.Thesis31()
	p.Functions[3].Costs = []float64{mva.Hard, mva.Hard, mva.Hard, mva.Hard} // x0–x3
	sol := solve(t, p, config{solver: "dfbnb"}, 1)
	if !mva.IsHard(sol.Cost) || !sol.Optimal {
		t.Fatalf("cost %v optimal %v", sol.Cost, sol.Optimal)
	}
	for i, r := range sol.Outcome.Results {
		if !mva.IsHard(r.Cost) || len(r.Boundary) != 1 {
			t.Fatalf("agent %d: %+v", i, r)
		}
	}
}

// TestNotDoneResult checks the result before the VALUE phase.
func TestNotDoneResult(t *testing.T) {
	_, agents := buildAgents(t, fixtures.Thesis31(), nil)
	r := agents[1].Result()
	if agents[1].Done() || r.Optimal || r.Cost == r.Cost || len(r.Boundary) != 1 {
		t.Fatalf("result before the run: %+v", r)
	}
	if _, err := agents[0].Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := agents[0].Start(context.Background()); err == nil {
		t.Fatal("second Start accepted")
	}
}

// fuzzProblem is a connected problem of four agents with several
// variables each.
func fuzzProblem() *mva.Problem {
	return randprob.New(3, randprob.Options{
		Agents: 4, Vars: 10, MinDomain: 2, MaxDomain: 3, MaxArity: 3,
		Functions: 14, HardProb: 0.1, IntCosts: true, Locality: 0.3,
	})
}

// FuzzStep delivers a random message (any kind, sender, recipient and
// body) to an agent after a prefix of a normal run: Step must return an
// error or messages, never panic.
func FuzzStep(f *testing.F) {
	ctx := context.Background()
	_, agents := buildAgents(f, fuzzProblem(), nil)
	trace, err := fifo(ctx, agents, -1)
	if err != nil {
		f.Fatal(err)
	}
	kinds := Kinds()
	for k, m := range trace {
		ki := 0
		for i, kind := range kinds {
			if kind == m.Kind {
				ki = i
			}
		}
		f.Add(uint8(k), uint8(ki), uint8(m.From), uint8(m.To), m.Body)
	}
	f.Fuzz(func(t *testing.T, steps, kind, from, to uint8, body []byte) {
		_, agents := buildAgents(t, fuzzProblem(), nil)
		// A prefix that fails is fine: the fuzzed message still goes to
		// an agent in some reachable state.
		_, _ = fifo(ctx, agents, int(steps))
		n := len(agents)
		m := mva.Message{From: int(from) % n, To: int(to) % n, Kind: kinds[int(kind)%len(kinds)], Body: body}
		_, _ = agents[m.To].Step(ctx, m)
	})
}

func nan() float64    { return math.NaN() }
func negInf() float64 { return math.Inf(-1) }
