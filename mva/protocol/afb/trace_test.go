package afb

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/internal/fixtures"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// thesisParams is the configuration the thesis's Figure 3.5 evidently
// used: rows in index order and decoupled estimates (notes §1.12).
var thesisParams = map[string]float64{"afb_candidates": CandidatesLex, "afb_estimate": EstimateDecoupled}

// step is one message of a trace, decoded: kind, sender, receiver and
// the number it carries (CPA cost, estimate or solution cost), plus the
// stamps or rows it carries.
type step struct {
	kind     string
	from, to int
	cost     float64
	vals     []int    // CPA rows, or a solution's rows
	ts       []uint64 // CPA or echoed stamps
}

func (s step) String() string {
	return fmt.Sprintf("%s a%d→a%d %v %v %v", s.kind, s.from, s.to, s.cost, s.vals, s.ts)
}

// decodeStep decodes a message of agent a's protocol (all agents share the
// order and the row counts).
func decodeStep(t *testing.T, a *agent, m mva.Message) step {
	t.Helper()
	s := step{kind: m.Kind, from: m.From, to: m.To}
	var err error
	switch m.Kind {
	case kindCPA, kindFBCPA:
		back := m.Kind == kindCPA && a.position(m.To) < a.position(m.From)
		var c cpa
		var sol solution
		c, sol, err = decodeCPA(m.Body, a.rows, back)
		s.cost, s.vals, s.ts = c.cost+c.shift, c.vals[:c.last+1], c.ts
		if back {
			s.cost, s.vals = sol.cost+sol.shift, sol.rows
			s.ts = c.ts[:c.last+1]
		}
	case kindEstimate:
		s.cost, s.ts, err = decodeEstimate(m.Body, a.position(m.To)+1)
	case kindNewSolution, kindTerminate:
		var sol solution
		sol, err = decodeSolution(m.Body, a.rows)
		s.cost, s.vals = sol.cost+sol.shift, sol.rows
	}
	if err != nil {
		t.Fatalf("%s: %v", m.Kind, err)
	}
	return s
}

// thesisDriver delivers messages oldest first, except that an FB_CPA
// overtakes the CPA_MSG its sender emitted just before it on the same
// link: the order of the thesis's trace ("a_1 handles FB_CPA before
// CPA_MSG"). It records every message sent, in order.
func thesisDriver(t *testing.T, protos []mva.Protocol) []mva.Message {
	t.Helper()
	ctx := context.Background()
	var queue, sent []mva.Message
	for _, p := range protos {
		out, err := p.Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		queue = append(queue, out...)
		sent = append(sent, out...)
	}
	for len(queue) > 0 {
		i := 0
		if queue[0].Kind == kindCPA && len(queue) > 1 && queue[1].Kind == kindFBCPA &&
			queue[1].From == queue[0].From && queue[1].To == queue[0].To {
			i = 1
		}
		m := queue[i]
		queue = slices.Delete(queue, i, i+1)
		out, err := protos[m.To].Step(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		queue = append(queue, out...)
		sent = append(sent, out...)
	}
	return sent
}

func thesisNodes(t *testing.T, eager bool, params map[string]float64) ([]*mva.Node, []mva.Protocol) {
	t.Helper()
	d := mva.Decompose(fixtures.Thesis31())
	nodes, _, err := mva.BuildNodes(context.Background(), d, func(lp *mva.LocalProblem) (mva.LocalSolver, error) {
		return local.New("dfbnb", lp)
	}, eager, 1, params)
	if err != nil {
		t.Fatal(err)
	}
	protos := make([]mva.Protocol, len(nodes))
	for i, n := range nodes {
		if protos[i], err = New(n); err != nil {
			t.Fatal(err)
		}
	}
	return nodes, protos
}

// TestThesisFigure35 replays thesis Figure 3.5 (notes §1.12): MVA-AFB on
// the Figure 3.1 problem sends exactly these 13 messages.
func TestThesisFigure35(t *testing.T) {
	// Rows: a0's x0 and a1's x3, one binary variable each.
	want := []step{
		{kindCPA, 0, 1, 19, []int{0}, []uint64{1, 0}},
		{kindFBCPA, 0, 1, 19, []int{0}, []uint64{1, 0}},
		{kindEstimate, 1, 0, 9, nil, []uint64{1}},
		{kindNewSolution, 1, 0, 33, []int{0, 0}, nil},
		{kindNewSolution, 1, 0, 31, []int{0, 1}, nil},
		{kindCPA, 1, 0, 31, []int{0, 1}, []uint64{1}}, // backtrack, best 31
		{kindCPA, 0, 1, 7, []int{1}, []uint64{2, 0}},
		{kindFBCPA, 0, 1, 7, []int{1}, []uint64{2, 0}},
		{kindEstimate, 1, 0, 4, nil, []uint64{2}},
		{kindNewSolution, 1, 0, 16, []int{1, 0}, nil},
		{kindNewSolution, 1, 0, 12, []int{1, 1}, nil},
		{kindCPA, 1, 0, 12, []int{1, 1}, []uint64{2}}, // backtrack, best 12
		{kindTerminate, 0, 1, 12, []int{1, 1}, nil},
	}
	for _, eager := range []bool{false, true} {
		t.Run(fmt.Sprintf("eager=%v", eager), func(t *testing.T) {
			nodes, protos := thesisNodes(t, eager, thesisParams)
			sent := thesisDriver(t, protos)
			a := protos[0].(*agent)
			if len(sent) != len(want) {
				for _, m := range sent {
					t.Log(decodeStep(t, a, m))
				}
				t.Fatalf("%d messages, want %d", len(sent), len(want))
			}
			for i, m := range sent {
				got := decodeStep(t, a, m)
				w := want[i]
				if got.kind != w.kind || got.from != w.from || got.to != w.to || got.cost != w.cost ||
					!slices.Equal(got.vals, w.vals) || !slices.Equal(got.ts, w.ts) {
					t.Errorf("message %d: got %v, want %v", i+1, got, w)
				}
			}
			checkThesisResult(t, nodes, protos)
		})
	}
}

// checkThesisResult checks the answer every agent ends with: x0=1 and
// x3=1, cost 12, proved optimal.
func checkThesisResult(t *testing.T, nodes []*mva.Node, protos []mva.Protocol) {
	t.Helper()
	results := make([]mva.AgentResult, len(protos))
	views := make([]*mva.LocalView, len(protos))
	for i, p := range protos {
		results[i] = p.Result()
		views[i] = nodes[i].Local
		if !p.Done() || !results[i].Optimal || results[i].Cost != 12 || !slices.Equal(results[i].Boundary, []int{1}) {
			t.Errorf("agent %d: done %v, result %+v", i, p.Done(), results[i])
		}
	}
	assign, cost, err := mva.Assemble(context.Background(), nodes[0].Decomp, views, results)
	if err != nil {
		t.Fatal(err)
	}
	if cost != 12 || !slices.Equal(assign, []int{1, 1, 0, 1, 0}) {
		t.Errorf("assembled %v cost %v, want [1 1 0 1 0] cost 12", assign, cost)
	}
}

// TestThesisFigure35Sim runs the same configuration on the simulated
// runtime, whose links are FIFO: a_1 then handles CPA_MSG before FB_CPA,
// which reorders the trace but sends the same 13 messages.
func TestThesisFigure35Sim(t *testing.T) {
	for _, eager := range []bool{false, true} {
		sol, err := sim.Solve(context.Background(), fixtures.Thesis31(), sim.Options{
			Protocol: New, Eager: eager, Seed: 1, Params: thesisParams,
			Solver: func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("dfbnb", lp) },
		})
		if err != nil {
			t.Fatal(err)
		}
		if sol.Cost != 12 || !sol.Optimal || sol.Outcome.Metrics.Messages != 13 {
			t.Errorf("eager=%v: cost %v optimal %v messages %d, want 12, true, 13",
				eager, sol.Cost, sol.Optimal, sol.Outcome.Metrics.Messages)
		}
		for i, r := range sol.Outcome.Results {
			if r.Cost != 12 {
				t.Errorf("agent %d reports %v", i, r.Cost)
			}
		}
	}
	// Every configuration finds the optimum; best first needs fewer
	// solutions than the thesis's order.
	for _, params := range []map[string]float64{nil, {"afb_candidates": CandidatesStatic, "afb_estimate": EstimateHybrid}} {
		o := solveChecked(t, fixtures.Thesis31(), run{solver: "be", seed: 2, params: params})
		if o.cost != 12 || o.metrics.Messages > 13 {
			t.Errorf("%v: cost %v, %d messages", params, o.cost, o.metrics.Messages)
		}
	}
}
