package mqtt

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/hearth-dcop/hearth/mqtt/broker"
	"github.com/hearth-dcop/hearth/mva/pipeline"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// TestGroupOwnedAgents runs one problem as `hearth run` does: each agent
// in a group of its own (Options.Owned), all meeting at one broker. Every
// process must get the values of its own variables that the simulated
// runtime gives them, and the reported cost of the whole.
func TestGroupOwnedAgents(t *testing.T) {
	p := randomProblem(5, 4)
	want := simTruth(t, p, nil)
	b := startBroker(t, broker.Config{})
	var wg sync.WaitGroup
	sols := make([]pipeline.Solution, len(p.Agents))
	errs := make([]error, len(p.Agents))
	for h := range p.Agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := &Group{Config: GroupConfig{Config: Config{
				Broker: Broker{URL: b.URL()}, Run: "owned", Protocol: "dpop", Timing: fastTiming, Logger: testLogger(t),
			}}}
			sols[h], errs[h] = pipeline.Solve(testContext(t), p, pipeline.Options{
				Protocol: dpop.New, Solver: dfbnb, Seed: 1, Owned: []int{h},
			}, g)
			if errs[h] == nil && len(g.Last.Stats) != 1 {
				errs[h] = fmt.Errorf("stats of %d agents, want 1", len(g.Last.Stats))
			}
		}()
	}
	wg.Wait()
	for h, sol := range sols {
		if errs[h] != nil {
			t.Fatalf("agent %d: %v", h, errs[h])
		}
		if !math.IsNaN(sol.Cost) {
			t.Errorf("agent %d: cost %v of a partial run, want NaN", h, sol.Cost)
		}
		if sol.Reported != want.Cost || !sol.Optimal || sol.HardRow {
			t.Errorf("agent %d: reported %v optimal %v hard row %v, want %v optimal", h, sol.Reported, sol.Optimal, sol.HardRow, want.Cost)
		}
		for v, x := range p.Variables {
			if x.Agent == h && sol.Assign[v] != want.Assign[v] {
				t.Errorf("agent %d: %s = %d, simulated %d", h, x.Name, sol.Assign[v], want.Assign[v])
			}
		}
	}
}

// TestGroupCountsInternalMessages runs DPOP (whose messages do not depend
// on delivery order) under the decomposition reformulation, whose
// pseudo-agents of one agent talk among themselves: the group must count
// messages between and inside agents exactly as the simulated runtime
// does.
func TestGroupCountsInternalMessages(t *testing.T) {
	p := randomProblem(6, 3)
	o := pipeline.Options{Protocol: dpop.New, Solver: dfbnb, Seed: 1, Reform: "decomposition"}
	want, err := pipeline.Solve(context.Background(), p, o, &sim.Runtime{})
	if err != nil {
		t.Fatal(err)
	}
	if want.Outcome.Metrics.InternalMessages == 0 {
		t.Fatal("the instance has no internal messages; the test needs some")
	}
	g := &Group{Config: GroupConfig{Config: Config{Protocol: "dpop", Timing: fastTiming, Logger: testLogger(t)}}}
	got, err := pipeline.Solve(testContext(t), p, o, g)
	if err != nil {
		t.Fatal(err)
	}
	if got.Cost != want.Cost || !slices.Equal(got.Assign, want.Assign) {
		t.Fatalf("MQTT: cost %v %v; simulated %v %v", got.Cost, got.Assign, want.Cost, want.Assign)
	}
	gm, wm := got.Outcome.Metrics, want.Outcome.Metrics
	if gm.Messages != wm.Messages || gm.InternalMessages != wm.InternalMessages || gm.TotalMessageBytes != wm.TotalMessageBytes || gm.MaxMessageBytes != wm.MaxMessageBytes {
		t.Fatalf("MQTT counted %d messages (%d bytes, largest %d) and %d internal; simulated %d (%d, %d) and %d",
			gm.Messages, gm.TotalMessageBytes, gm.MaxMessageBytes, gm.InternalMessages,
			wm.Messages, wm.TotalMessageBytes, wm.MaxMessageBytes, wm.InternalMessages)
	}
}

// TestRootCause: the error a group reports is the first one that is not
// the echo of another agent's failure or of the cancellation it caused.
func TestRootCause(t *testing.T) {
	boom, bad := errors.New("boom"), errors.New("bad table")
	peer := fmt.Errorf("agent a1: %w", ErrPeerFailed)
	canceled := fmt.Errorf("agent a2: %w", context.Canceled)
	tests := []struct {
		name string
		errs []error
		want error
	}{
		{"one", []error{boom}, boom},
		{"echoes first", []error{canceled, peer, boom, bad}, boom},
		{"first of two causes", []error{bad, boom}, bad},
		{"only echoes", []error{peer, canceled}, peer},
	}
	for _, tc := range tests {
		if got := rootCause(tc.errs); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
