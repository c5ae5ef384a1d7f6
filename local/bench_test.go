package local

import (
	"context"
	"testing"

	"github.com/hearth-dcop/hearth/internal/cputime"
	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/gen"
)

// fabeLike resembles /work/shared/data/wcsp/fabe_test_0.wcsp: 20 binary
// variables, 35 functions of arity 1 to 6, whole costs up to 19.
func fabeLike(seed int64) *mva.Problem {
	return randprob.New(seed, randprob.Options{
		Agents: 1, Vars: 20, MinDomain: 2, MaxDomain: 2, MaxArity: 6,
		Functions: 35, IntCosts: true, MaxCost: 19,
	})
}

// BenchmarkWhole solves fabe-like problems centrally, construction
// included, as `hearth solve --global none` would.
func BenchmarkWhole(b *testing.B) {
	ctx := context.Background()
	for _, name := range []string{"be", "dfbnb", "aobb"} {
		b.Run(name, func(b *testing.B) {
			probs := make([]*mva.LocalProblem, 8)
			for i := range probs {
				p := fabeLike(int64(i))
				probs[i] = mva.NewLocalProblem(p, mva.Whole(p))
			}
			in := make([]int, 20)
			var checks int64
			i := 0
			cpu0 := cputime.Used()
			for b.Loop() {
				lp := probs[i%len(probs)]
				i++
				s, err := New(name, lp)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.SolveRow(ctx, nil, in); err != nil {
					b.Fatal(err)
				}
				checks += s.Checks()
			}
			b.ReportMetric(float64(checks)/float64(b.N), "checks/op")
			b.ReportMetric(float64(cputime.Used()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkMVATables fills every agent's MVA table of a decomposed random
// problem: BE eagerly (SolveTable) against DFBnB row by row.
func BenchmarkMVATables(b *testing.B) {
	ctx := context.Background()
	p := randprob.New(11, randprob.Options{
		Agents: 4, Vars: 60, MinDomain: 2, MaxDomain: 3, MaxArity: 3,
		Functions: 90, IntCosts: true, MaxCost: 100, Locality: 0.8,
	})
	d := mva.Decompose(p)
	var lps []*mva.LocalProblem
	rows := 0
	for i := range d.Subs {
		lp := mva.NewLocalProblem(p, &d.Subs[i])
		n, _ := lp.Rows()
		rows += n
		lps = append(lps, lp)
	}
	for _, name := range []string{"be-eager", "dfbnb-rows", "aobb-rows"} {
		b.Run(name, func(b *testing.B) {
			cpu0 := cputime.Used()
			for b.Loop() {
				for _, lp := range lps {
					var s mva.LocalSolver
					var err error
					switch name {
					case "be-eager":
						s, err = NewBE(lp, BEOptions{})
					case "aobb-rows":
						s = NewAOBB(lp, AOBBOptions{})
					default:
						s = NewDFBnB(lp)
					}
					if err != nil {
						b.Fatal(err)
					}
					t, err := mva.NewTable(lp)
					if err != nil {
						b.Fatal(err)
					}
					if err := t.Fill(ctx, s); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(rows), "rows/op")
			b.ReportMetric(float64(cputime.Used()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkAOBBRowReuse solves every row of the agents' MVA tables in
// table order with one AOBB per agent (messages and caches reused across
// rows) against a fresh AOBB per row: the ratio is what reuse saves a lazy
// protocol.
func BenchmarkAOBBRowReuse(b *testing.B) {
	ctx := context.Background()
	p := randprob.New(11, randprob.Options{
		Agents: 4, Vars: 60, MinDomain: 2, MaxDomain: 3, MaxArity: 3,
		Functions: 90, IntCosts: true, MaxCost: 100, Locality: 0.8,
	})
	d := mva.Decompose(p)
	var lps []*mva.LocalProblem
	for i := range d.Subs {
		lps = append(lps, mva.NewLocalProblem(p, &d.Subs[i]))
	}
	for _, reuse := range []bool{true, false} {
		name := "fresh"
		if reuse {
			name = "reuse"
		}
		b.Run(name, func(b *testing.B) {
			cpu0 := cputime.Used()
			for b.Loop() {
				for _, lp := range lps {
					rows, _ := lp.Rows()
					bnd, in := make([]int, lp.NB), make([]int, lp.NumInterior())
					s := NewAOBB(lp, AOBBOptions{})
					for r := range rows {
						if !reuse {
							s = NewAOBB(lp, AOBBOptions{})
						}
						lp.DecodeRow(r, bnd)
						if _, err := s.SolveRow(ctx, bnd, in); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			b.ReportMetric(float64(cputime.Used()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkBinary compares EDAC with AOBB on binary families where they
// differ most (go test -run XXX -bench Binary -benchtime 3x ./local):
// CELAR-like frequency assignment (24 values) and a scale-free graph
// (`hearth gen fap pairs=16`, `hearth gen scalefree agents=100 links=2
// domain=5 p2=0.9 plant=false`, seed 1).
func BenchmarkBinary(b *testing.B) {
	ctx := context.Background()
	fo := gen.DefaultFAP()
	fo.Pairs = 16
	fap, err := gen.FAP(1, fo)
	if err != nil {
		b.Fatal(err)
	}
	so := gen.DefaultScaleFree()
	so.Agents, so.Links, so.Domain, so.Tightness, so.Plant = 100, 2, 5, 0.9, false
	sf, err := gen.ScaleFree(1, so)
	if err != nil {
		b.Fatal(err)
	}
	for _, inst := range []struct {
		name string
		p    *mva.Problem
	}{{"fap", fap}, {"scalefree", sf}} {
		lp := mva.NewLocalProblem(inst.p, mva.Whole(inst.p))
		for _, name := range []string{"edac", "aobb"} {
			b.Run(inst.name+"/"+name, func(b *testing.B) {
				in := make([]int, lp.NumInterior())
				cpu0 := cputime.Used()
				for b.Loop() {
					s, err := New(name, lp)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := s.SolveRow(ctx, nil, in); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cputime.Used()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
