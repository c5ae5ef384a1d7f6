package dpop

import (
	"context"
	"fmt"
	"testing"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/gen"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// BenchmarkDPOP runs DPOP (dfbnb, lazy tables) on the thesis's random
// instances (mva/gen, its defaults but domain 3 and p1ᵍ = 0.1, whose
// separators stay small) along its scaling axes, the number of agents and
// of local variables per agent, and reports the simulated runtime and the
// messages per run besides the wall time. `hearth bench mva-random` is the
// experiment that reproduces the figures.
func BenchmarkDPOP(b *testing.B) {
	ctx := context.Background()
	type point struct{ agents, vars int }
	var pts []point
	for a := 2; a <= 10; a += 4 {
		pts = append(pts, point{a, 6})
	}
	for l := 2; l <= 12; l += 5 {
		pts = append(pts, point{4, l})
	}
	for _, pt := range pts {
		b.Run(fmt.Sprintf("A=%d/L=%d", pt.agents, pt.vars), func(b *testing.B) {
			o := gen.DefaultRandom()
			o.Agents, o.Vars, o.Domain, o.GlobalDensity = pt.agents, pt.vars, 3, 0.1
			var probs []*mva.Problem
			for seed := range uint64(3) {
				p, err := gen.Random(seed+1, o)
				if err != nil {
					b.Fatal(err)
				}
				probs = append(probs, p)
			}
			var simMs, msgs float64
			i := 0
			for b.Loop() {
				sol, err := sim.Solve(ctx, probs[i%len(probs)], sim.Options{
					Protocol: New, Seed: 1,
					Solver: func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("dfbnb", lp) },
				})
				if err != nil {
					b.Fatal(err)
				}
				simMs += sol.Outcome.Metrics.SimTimeMs
				msgs += float64(sol.Outcome.Metrics.Messages)
				i++
			}
			b.ReportMetric(simMs/float64(i), "sim_ms")
			b.ReportMetric(msgs/float64(i), "messages")
		})
	}
}
