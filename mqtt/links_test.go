package mqtt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mqtt/broker"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/pipeline"
	"github.com/hearth-dcop/hearth/mva/protocol/mgm"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// relayProblem is a problem of n agents of one variable each with a
// binary function between every two: a complete graph in which every
// neighbour sees an agent's one variable, as MGM's relay needs.
func relayProblem(n int) *mva.Problem {
	p := randprob.New(7, randprob.Options{Agents: n, Vars: n, MinDomain: 2, MaxDomain: 3, MaxArity: 1, Functions: n, IntCosts: true})
	for i := range n {
		for j := i + 1; j < n; j++ {
			d := p.DomainSize(i) * p.DomainSize(j)
			costs := make([]float64, d)
			for e := range costs {
				costs[e] = float64((i*7 + j*3 + e*5) % 11)
			}
			p.Functions = append(p.Functions, mva.Function{Name: fmt.Sprintf("f%d_%d", i, j), Scope: []int{i, j}, Costs: costs})
		}
	}
	return p
}

// linksOf is a runtime that records links of the run it is given and
// stops there.
type linksOf struct{ got [][]int }

var errStop = errors.New("stop")

func (l *linksOf) Run(_ context.Context, r pipeline.Run) (pipeline.Outcome, error) {
	l.got = links(r)
	return pipeline.Outcome{}, errStop
}

// TestRelayLinks checks the graph an MGM run through its relay gives
// the MQTT runtime — a star around the hub, agent 0, so that an agent
// subscribes to the hub's status alone — through the progress counter's
// wrapper too; MGM without the relay gives the complete graph, and the
// relayed run over MQTT gives the simulated runtime's answer.
func TestRelayLinks(t *testing.T) {
	const n = 6
	p := relayProblem(n)
	star := make([][]int, n)
	star[0] = []int{1, 2, 3, 4, 5}
	for i := 1; i < n; i++ {
		star[i] = []int{0}
	}
	complete := mva.Decompose(p).Neighbours()
	for _, tc := range []struct {
		name     string
		params   map[string]float64
		progress bool
		want     [][]int
	}{
		{"relay", map[string]float64{"rounds": 5, "relay": 1}, false, star},
		{"relay-progress", map[string]float64{"rounds": 5, "relay": 1}, true, star},
		{"plain", map[string]float64{"rounds": 5}, false, complete},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &linksOf{}
			o := pipeline.Options{Protocol: mgm.New, Solver: dfbnb, Seed: 1, Params: tc.params}
			if tc.progress {
				o.Progress = &pipeline.Progress{}
			}
			if _, err := pipeline.Solve(context.Background(), p, o, rt); !errors.Is(err, errStop) {
				t.Fatalf("err %v", err)
			}
			if !slices.EqualFunc(rt.got, tc.want, slices.Equal) {
				t.Errorf("links %v, want %v", rt.got, tc.want)
			}
		})
	}
	opts := sim.Options{Protocol: mgm.New, Solver: dfbnb, Seed: 2, Params: map[string]float64{"rounds": 8, "joint": 1, "relay": 1}}
	want, err := sim.Solve(testContext(t), p, opts)
	if err != nil {
		t.Fatal(err)
	}
	b := startBroker(t, broker.Config{})
	cfg := GroupConfig{Config: Config{Protocol: "mgm", Timing: fastTiming, Logger: testLogger(t)}}
	cfg.Broker.URL = b.URL()
	got, gr, err := solveGroup(testContext(t), p, opts, cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkSameAnswer(t, got, gr, want)
}
