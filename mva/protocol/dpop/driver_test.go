package dpop

import (
	"context"
	"fmt"
	"testing"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// buildAgents returns the nodes and DPOP agents of p with a dfbnb local
// solver and lazy tables.
func buildAgents(t testing.TB, p *mva.Problem, params map[string]float64) ([]*mva.Node, []*Agent) {
	t.Helper()
	d := mva.Decompose(p)
	nodes, _, err := mva.BuildNodes(context.Background(), d, func(lp *mva.LocalProblem) (mva.LocalSolver, error) {
		return local.New("dfbnb", lp)
	}, false, 1, params)
	if err != nil {
		t.Fatal(err)
	}
	agents := make([]*Agent, len(nodes))
	for i, n := range nodes {
		if agents[i], err = NewAgent(n); err != nil {
			t.Fatal(err)
		}
	}
	return nodes, agents
}

// fifo is a minimal driver for tests that need the message trace: every
// agent starts in id order, then messages are delivered in the global
// order they were sent (which is FIFO on every link). step stops it after
// that many deliveries (negative: run to the end).
func fifo(ctx context.Context, agents []*Agent, steps int) ([]mva.Message, error) {
	var queue, trace []mva.Message
	for _, a := range agents {
		out, err := a.Start(ctx)
		if err != nil {
			return trace, err
		}
		queue = append(queue, out...)
		trace = append(trace, out...)
	}
	for delivered := 0; len(queue) > 0 && delivered != steps; delivered++ {
		m := queue[0]
		queue = queue[1:]
		out, err := agents[m.To].Step(ctx, m)
		if err != nil {
			return trace, err
		}
		queue = append(queue, out...)
		trace = append(trace, out...)
	}
	if steps < 0 {
		for _, a := range agents {
			if !a.Done() {
				return trace, fmt.Errorf("agent %d is not done", a.id)
			}
		}
	}
	return trace, nil
}
