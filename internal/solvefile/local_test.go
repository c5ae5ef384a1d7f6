package solvefile

import (
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/sampler"
)

// TestLocalAuto: on one row (no boundary) --local auto is exact, bucket
// elimination where its tables are small and AOBB where they are not; an
// agent with a boundary keeps bucket elimination where its tables fit
// autoEntries and is sampled where they do not, and reports sampling.
func TestLocalAuto(t *testing.T) {
	for _, tc := range []struct {
		name   string
		agents int
		vars   int
		funcs  int
		local  float64
		want   string // "be", "aobb" or "sampled"
	}{
		{"narrow", 1, 6, 6, 0, "be"},
		{"wide", 1, 24, 120, 0, "aobb"},
		{"narrow agent", 2, 8, 12, 0.5, "be"},
		{"wide agent", 2, 40, 300, 0.95, "sampled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := randprob.New(5, randprob.Options{
				Agents: tc.agents, Vars: tc.vars, MinDomain: 3, MaxDomain: 3, MaxArity: 3, Functions: tc.funcs, IntCosts: true, Locality: tc.local,
			})
			sub := mva.Whole(p)
			if tc.agents > 1 {
				sub = &mva.Decompose(p).Subs[0]
			}
			lp := mva.NewLocalProblem(p, sub)
			if (lp.NB > 0) != (tc.agents > 1) {
				t.Fatalf("%d boundary variables", lp.NB)
			}
			_, beErr := local.NewBE(lp, local.BEOptions{MaxEntries: autoEntries})
			if wantBE := tc.want == "be"; (beErr == nil) != wantBE {
				t.Fatalf("bucket elimination within %d entries: %v; the case expects %s", autoEntries, beErr, tc.want)
			}
			o := Local{Name: LocalAuto, Runs: 2, Trials: 5, Temperature: 1, Proposal: sampler.ProposalNormal, Alpha: 0.05}
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			s, err := o.Factory(1)(lp)
			if err != nil {
				t.Fatal(err)
			}
			got := "sampled"
			switch s.(type) {
			case *local.BE:
				got = "be"
			case *local.AOBB:
				got = "aobb"
			}
			if got != tc.want {
				t.Errorf("solver %T, want %s", s, tc.want)
			}
			if !o.Sampling() || o.Report(1) == nil {
				t.Error("auto must report sampling where agents may sample")
			}
		})
	}
}
