package dgibbs

import (
	"context"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch/lstest"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// The agents count their external-function checks for NCCC.
var _ sim.CheckCounter = (*Agent)(nil)

func FuzzStep(f *testing.F) {
	lstest.Fuzz(f, lstest.Fixed(), New, map[string]float64{"iterations": 6, "init": 1}, []string{KindToken, KindTokenBack, KindValue, KindBacktrack, KindFinal, "BOGUS"})
}

func FuzzStepMVADG(f *testing.F) {
	lstest.Fuzz(f, lstest.Fixed(), New, map[string]float64{"iterations": 6, "init": 1, "interior": InteriorGibbs}, []string{KindToken, KindTokenBack, KindValue, KindBacktrack, KindFinal, "BOGUS"})
}

// BenchmarkDGibbs runs 100 iterations on random 8-agent problems and reports the
// messages and simulated time per run.
func BenchmarkDGibbs(b *testing.B) {
	benchmark(b, New, map[string]float64{"iterations": 100})
}

func benchmark(b *testing.B, proto sim.ProtocolFactory, params map[string]float64) {
	ctx := context.Background()
	cfg := lstest.Configs()[0]
	var msgs, simMs float64
	runs := 0
	for b.Loop() {
		seed := int64(runs%10 + 1)
		p := randprob.New(seed, randprob.Options{
			Agents: 8, Vars: 24, MinDomain: 2, MaxDomain: 3, MaxArity: 2,
			Functions: 40, IntCosts: true, MaxCost: 20, Locality: 0.5,
		})
		sol, err := sim.Solve(ctx, p, cfg.Options(proto, uint64(seed), params))
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
