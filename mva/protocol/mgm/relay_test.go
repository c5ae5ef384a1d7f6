package mgm

import (
	"context"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch/lstest"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// relayInstance is a random problem with one variable per agent and
// binary functions over all of them, so that most seeds give a complete
// graph in which every neighbour sees an agent's one variable: the
// graphs the relay is for. Odd seeds have integer costs (ties).
func relayInstance(seed int64) *mva.Problem {
	agents := 3 + int(seed%4)
	return randprob.New(seed, randprob.Options{
		Agents: agents, Vars: agents, MinDomain: 2, MaxDomain: 4, MaxArity: 2,
		Functions: 2 * agents * agents, HardProb: 0.03, IntCosts: seed%2 == 1, MaxCost: 10,
	})
}

// TestRelay checks that MGM with relay = 1 — VALUEs and GAINs sent to
// the hub only, which sends every agent one bundle of them — takes the
// same moves as MGM without it, round for round (plain, joint and quiet
// runs), with 4·(n−1) messages per round instead of 2·n·(n−1); and that
// it is refused on a graph that is not complete.
func TestRelay(t *testing.T) {
	ctx := context.Background()
	cfg := lstest.Configs(testSolvers())[0]
	complete := 0
	for seed := int64(1); seed <= 40; seed++ {
		p := relayInstance(seed)
		nbrs := mva.Decompose(p).Neighbours()
		full := true
		for _, l := range nbrs {
			full = full && len(l) == len(nbrs)-1
		}
		if !full {
			if _, err := sim.Solve(ctx, p, cfg.Options(New, uint64(seed), map[string]float64{"relay": 1})); err == nil {
				t.Errorf("seed %d: relay accepted on an incomplete graph", seed)
			}
			continue
		}
		complete++
		for _, params := range []map[string]float64{
			{"rounds": 12},
			{"rounds": 12, "joint": 1},
			{"rounds": 200, "joint": 1, "quiet": 1},
		} {
			want, plain := runTrace(ctx, t, p, cfg, uint64(seed), params)
			relayed := map[string]float64{"relay": 1}
			for k, v := range params {
				relayed[k] = v
			}
			got, sol := runTrace(ctx, t, p, cfg, uint64(seed), relayed)
			if len(got.rows) != len(want.rows) {
				t.Fatalf("seed %d %v: %d rounds relayed, %d without", seed, params, len(got.rows)-1, len(want.rows)-1)
			}
			for r := range want.rows {
				if !slices.Equal(got.rows[r], want.rows[r]) {
					t.Fatalf("seed %d %v, round %d: rows %v relayed, %v without", seed, params, r, got.rows[r], want.rows[r])
				}
			}
			if !slices.Equal(sol.Assign, plain.Assign) {
				t.Errorf("seed %d %v: %v relayed, %v without", seed, params, sol.Assign, plain.Assign)
			}
			n, rounds := int64(len(nbrs)), int64(len(got.rows)-1)
			if m := sol.Outcome.Metrics.Messages; m != 4*(n-1)*rounds {
				t.Errorf("seed %d %v: %d messages in %d rounds of %d agents, want %d", seed, params, m, rounds, n, 4*(n-1)*rounds)
			}
		}
	}
	if complete < 10 {
		t.Fatalf("only %d complete graphs of 40", complete)
	}
	t.Logf("%d complete graphs of 40", complete)
}

// completeRelayInstance is the first relayInstance that is a complete
// graph.
func completeRelayInstance() *mva.Problem {
	for seed := int64(1); ; seed++ {
		p := relayInstance(seed)
		nbrs := mva.Decompose(p).Neighbours()
		full := true
		for _, l := range nbrs {
			full = full && len(l) == len(nbrs)-1
		}
		if full {
			return p
		}
	}
}
