package mgm2

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch/lstest"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// TestSolvedUnilateralMoves runs MGM-2 with its unilateral moves solved
// (response = 2) and enumerated (response = 1) on the same seeded
// integer-cost instances, where the solver's sums are exact: the tie rule
// does not depend on the path, so both runs must end in the same
// assignment after the same messages, and the solved run must be
// 2-optimal (1-optimal with offer_prob = 0) by brute force when its last
// round moved nobody.
func TestSolvedUnilateralMoves(t *testing.T) {
	ctx := context.Background()
	n := int64(80)
	if testing.Short() {
		n = 20
	}
	cfg := lstest.Configs(testSolvers())[0]
	var converged int
	for seed := int64(2); seed <= 2*n; seed += 2 {
		p := lstest.Instance(seed)
		if seed%4 == 0 {
			// Costs 0..2: equally good rows abound and the tie rule
			// decides most unilateral moves.
			p = randprob.New(seed, randprob.Options{
				Agents: 3, Vars: 9, MinDomain: 2, MaxDomain: 3, MaxArity: 2,
				Functions: 10, HardProb: 0.05, IntCosts: true, MaxCost: 2, Locality: 0.5,
			})
		}
		var sols [2]sim.Solution
		var rec lstest.Recorder
		var last []bool // the solved run's last round
		for i, mode := range []localsearch.Response{localsearch.ResponseSolve, localsearch.ResponseEnumerate} {
			params := map[string]float64{"rounds": 30, "response": float64(mode)}
			if seed%3 == 0 {
				params["response_entries"] = 0 // the memory-bounded solver (AOBB)
			}
			if seed%8 == 0 {
				params["offer_prob"] = 0 // unilateral moves only
			}
			moved := make([]bool, p.Stats().Agents)
			factory := func(proto sim.ProtocolFactory) sim.ProtocolFactory { return proto }
			if i == 0 {
				factory, last = rec.Wrap, moved
			}
			var err error
			sols[i], err = sim.Solve(ctx, p, cfg.Options(factory(withMoves(moved)), uint64(seed), params))
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
		if fmt.Sprint(sols[0].Assign) != fmt.Sprint(sols[1].Assign) || sols[0].Outcome.Metrics.Messages != sols[1].Outcome.Metrics.Messages {
			t.Errorf("seed %d: solved run %v (%d messages), enumerated %v (%d)", seed,
				sols[0].Assign, sols[0].Outcome.Metrics.Messages, sols[1].Assign, sols[1].Outcome.Metrics.Messages)
		}
		if slices.Contains(last, true) {
			continue
		}
		converged++
		k := 2
		if seed%8 == 0 {
			k = 1 // no offers: MGM's fixed points
		}
		why, err := lstest.Improvable(ctx, rec.Nodes, lstest.Rows(rec.Nodes, sols[0].Outcome.Results), k)
		if err != nil {
			t.Fatal(err)
		}
		if why != "" {
			t.Errorf("seed %d: fixed point is not %d-optimal: %s", seed, k, why)
		}
	}
	if converged < int(n)*3/4 {
		t.Errorf("only %d of %d runs reached a fixed point", converged, n)
	}
}

// withMoves returns MGM-2's factory with every agent recording, in
// moved, whether it moved in the latest round.
func withMoves(moved []bool) sim.ProtocolFactory {
	return func(n *mva.Node) (mva.Protocol, error) {
		p, err := New(n)
		if err != nil {
			return nil, err
		}
		id := n.ID
		p.(*Agent).onRound = func(_ int, s roundStats) { moved[id] = s.moved }
		return p, nil
	}
}
