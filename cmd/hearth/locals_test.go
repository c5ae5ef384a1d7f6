package main

import (
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/sampler"
)

// TestLocalAuto: --local auto eliminates a narrow problem exactly and
// samples one whose bucket elimination needs tables past autoEntries, and
// either way reports itself as sampling (never optimal).
func TestLocalAuto(t *testing.T) {
	for _, tc := range []struct {
		name    string
		vars    int
		funcs   int
		arity   int
		sampled bool
	}{
		{"narrow", 6, 6, 2, false},
		{"wide", 24, 120, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := randprob.New(5, randprob.Options{
				Agents: 1, Vars: tc.vars, MinDomain: 3, MaxDomain: 3, MaxArity: tc.arity, Functions: tc.funcs, IntCosts: true,
			})
			lp := mva.NewLocalProblem(p, mva.Whole(p))
			_, beErr := local.NewBE(lp, local.BEOptions{MaxEntries: autoEntries})
			if (beErr != nil) != tc.sampled {
				t.Fatalf("bucket elimination within %d entries: %v; the case expects sampled = %v", autoEntries, beErr, tc.sampled)
			}
			o := localOptions{name: localAuto, runs: 2, trials: 5, temp: 1, proposal: sampler.ProposalNormal, alpha: 0.05}
			if err := o.validate(); err != nil {
				t.Fatal(err)
			}
			s, err := o.factory(1)(lp)
			if err != nil {
				t.Fatal(err)
			}
			_, exact := s.(*local.BE)
			if exact == tc.sampled {
				t.Errorf("solver %T, want sampled = %v", s, tc.sampled)
			}
			if !o.sampling() || o.report(1) == nil {
				t.Error("auto must report sampling")
			}
		})
	}
}
