package local

import (
	"context"
	"fmt"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/gen"
)

// TestExactOnGeneratedFamilies: small instances of the structured
// families the bench measures (circuits, with gate functions of up to four
// lines; frequency assignment; SPOT5-like scheduling, with ternary
// recorder limits) solved by every exact solver, and by auto and AOBB
// under a budget of a few hundred bytes, against brute force.
func TestExactOnGeneratedFamilies(t *testing.T) {
	ctx := context.Background()
	var probs []*mva.Problem
	names := []string{}
	for seed := range uint64(12) {
		co := gen.DefaultCircuit()
		co.Inputs, co.Gates, co.FanIn, co.Window = 3, 9+int(seed%4), 3, 4+int(seed%3)
		p, err := gen.Circuit(seed, co)
		if err != nil {
			t.Fatal(err)
		}
		probs, names = append(probs, p), append(names, fmt.Sprintf("circuit seed %d", seed))
	}
	for seed := range uint64(4) {
		fo := gen.DefaultFAP()
		fo.Pairs, fo.Freqs, fo.Sep, fo.Radius = 3, 6, 2, 0.8
		p, err := gen.FAP(seed, fo)
		if err != nil {
			t.Fatal(err)
		}
		probs, names = append(probs, p), append(names, fmt.Sprintf("fap seed %d", seed))
		so := gen.DefaultSpot()
		so.Photos, so.Stereo, so.Recorder = 8, 0.3, 0.4
		p, err = gen.Spot(seed, so)
		if err != nil {
			t.Fatal(err)
		}
		probs, names = append(probs, p), append(names, fmt.Sprintf("spot seed %d", seed))
	}
	for i, p := range probs {
		if space(p) > 1<<16 {
			t.Fatalf("%s: %g assignments, too many for brute force", names[i], space(p))
		}
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		in := make([]int, lp.NumInterior())
		want, err := NewBruteForce(lp).SolveRow(ctx, nil, in)
		if err != nil {
			t.Fatal(err)
		}
		solvers := map[string]mva.LocalSolver{}
		for _, name := range []string{"be", "aobb", "edac"} {
			s, err := New(name, lp)
			if err != nil {
				t.Fatal(err)
			}
			solvers[name] = s
		}
		solvers["aobb 256 B"] = NewAOBB(lp, AOBBOptions{Memory: 256})
		for _, mem := range []int64{0, 256} {
			s, c, err := Auto(lp, AutoOptions{Memory: mem})
			if err != nil {
				t.Fatal(err)
			}
			solvers[fmt.Sprintf("auto %d B (%s)", mem, c.Name)] = s
		}
		for name, s := range solvers {
			got, err := s.SolveRow(ctx, nil, in)
			if err != nil {
				t.Fatalf("%s %s: %v", names[i], name, err)
			}
			if got != want {
				t.Errorf("%s %s: %v, bruteforce %v", names[i], name, got, want)
				continue
			}
			if e := evalRow(lp, 0, in); !mva.IsHard(want) && e != got {
				t.Errorf("%s %s: reports %v but its assignment costs %v", names[i], name, got, e)
			}
		}
	}
}
