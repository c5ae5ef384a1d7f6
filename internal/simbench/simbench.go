// Package simbench is the benchmark driver that the local-search
// protocols (D-Gibbs, MGM, MGM-2) share, so that their figures come from
// the same problems, the same simulator settings and the same metrics and
// can be set side by side. Only tests import it.
package simbench

import (
	"context"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// Seeds is the number of problems Run cycles through.
const Seeds = 10

// Problem returns the benchmark problem of seed: 8 agents, 24 variables of
// 2–3 values, 40 binary whole-cost functions, half of them inside one
// agent.
func Problem(seed int64) *mva.Problem {
	return randprob.New(seed, randprob.Options{
		Agents: 8, Vars: 24, MinDomain: 2, MaxDomain: 3, MaxArity: 2,
		Functions: 40, IntCosts: true, MaxCost: 20, Locality: 0.5,
	})
}

// Options makes the simulator options of a run of proto: in the callers,
// the method value of the protocol tests' configuration.
type Options func(proto sim.ProtocolFactory, seed uint64, params map[string]float64) sim.Options

// Run solves Problem(1), …, Problem(Seeds), in turn, once per iteration
// of b with proto under opts and params (seeded like the problem), and
// reports the messages and the simulated time per run.
func Run(b *testing.B, opts Options, proto sim.ProtocolFactory, params map[string]float64) {
	ctx := context.Background()
	var msgs, simMs float64
	runs := 0
	for b.Loop() {
		seed := int64(runs%Seeds + 1)
		sol, err := sim.Solve(ctx, Problem(seed), opts(proto, uint64(seed), params))
		if err != nil {
			b.Fatal(err)
		}
		msgs += float64(sol.Outcome.Metrics.Messages)
		simMs += sol.Outcome.Metrics.SimTimeMs
		runs++
	}
	b.ReportMetric(msgs/float64(runs), "msgs/op")
	b.ReportMetric(simMs/float64(runs), "sim-ms/op")
}
