package afb

import (
	"context"
	"fmt"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// BenchmarkAFB solves random problems of growing numbers of agents (three
// variables each, domains 2–3, binary and ternary functions, a few hard
// entries) with the default configuration and MVA-lazy tables, and
// reports the research metrics per problem: messages, simulated time,
// NCCC and the largest message.
func BenchmarkAFB(b *testing.B) {
	const seeds = 4
	for _, agents := range []int{2, 4, 6, 8} {
		probs := make([]*mva.Problem, seeds)
		for i := range probs {
			probs[i] = randprob.New(int64(100*agents+i), randprob.Options{
				Agents: agents, Vars: 3 * agents, MinDomain: 2, MaxDomain: 3, MaxArity: 3,
				Functions: 3 * agents, HardProb: 0.05, IntCosts: true, Locality: 0.5,
			})
		}
		for _, mode := range []struct {
			name   string
			params map[string]float64
		}{{"default", nil}, {"thesis", thesisParams}} {
			b.Run(fmt.Sprintf("agents=%d/%s", agents, mode.name), func(b *testing.B) {
				var msgs, nccc, maxBytes int64
				var simMs float64
				for b.Loop() {
					for i, p := range probs {
						sol, err := sim.Solve(context.Background(), p, sim.Options{
							Protocol: New, Seed: uint64(i + 1), Params: mode.params,
							Solver: func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("dfbnb", lp) },
						})
						if err != nil {
							b.Fatal(err)
						}
						m := sol.Outcome.Metrics
						msgs += m.Messages
						nccc += m.NCCC
						simMs += m.SimTimeMs
						maxBytes = max(maxBytes, m.MaxMessageBytes)
					}
				}
				n := float64(b.N * seeds)
				b.ReportMetric(float64(msgs)/n, "msgs/problem")
				b.ReportMetric(simMs/n, "sim-ms/problem")
				b.ReportMetric(float64(nccc)/n, "nccc/problem")
				b.ReportMetric(float64(maxBytes), "max-msg-bytes")
			})
		}
	}
}
