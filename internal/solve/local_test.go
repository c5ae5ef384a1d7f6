package solve

import (
	"context"
	"github.com/hearth-dcop/hearth/internal/solvefile"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// TestLocalAutoName: --local auto is spelled in internal/solvefile (which
// must not link the homes code) and in devices/homesolve (a
// neighbourhood's [solver] local); the two must stay one name.
func TestLocalAutoName(t *testing.T) {
	if solvefile.LocalAuto != homesolve.AutoLocal {
		t.Errorf("solvefile.solvefile.LocalAuto %q, homesolve.AutoLocal %q: want one name", solvefile.LocalAuto, homesolve.AutoLocal)
	}
}

// hardSolver finds no feasible completion of any row, as a sampler may
// not on a home with many rules.
type hardSolver struct{}

func (hardSolver) SolveRow(context.Context, []int, []int) (float64, error) { return mva.Hard, nil }
func (hardSolver) Checks() int64                                           { return 0 }

// TestStartSolver: the wrapper suggests the start's boundary values, and
// answers their row with the start's interior where the inner solver does
// worse; other rows are the inner solver's.
func TestStartSolver(t *testing.T) {
	// The first seeded problem whose agent 0 has both kinds of variables.
	var p *mva.Problem
	var sub *mva.Subproblem
	for seed := int64(1); sub == nil && seed < 100; seed++ {
		p = randprob.New(seed, randprob.Options{Agents: 2, Vars: 8, MinDomain: 2, MaxDomain: 3, MaxArity: 2, Functions: 10, IntCosts: true, Locality: 0.5})
		if s := &mva.Decompose(p).Subs[0]; len(s.Boundary) > 0 && len(s.Interior) > 0 {
			sub = s
		}
	}
	if sub == nil {
		t.Fatal("no seed gives agent 0 boundary and interior variables")
	}
	lp := mva.NewLocalProblem(p, sub)
	start := make([]int, len(p.Variables))
	for v := range start {
		start[v] = p.DomainSize(v) - 1
	}
	full := make([]int, len(lp.Vars)) // the agent's local variables in start
	for k, v := range lp.Vars {
		full[k] = start[v]
	}
	startCost := lp.Eval(full)
	exact, err := local.New("bruteforce", lp)
	if err != nil {
		t.Fatal(err)
	}
	best, err := exact.SolveRow(context.Background(), full[:lp.NB], make([]int, lp.NumInterior()))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		inner mva.SolverFactory
		// want is the start row's cost through the wrapper.
		want float64
	}{
		{"inner finds nothing", func(*mva.LocalProblem) (mva.LocalSolver, error) { return hardSolver{}, nil }, startCost},
		{"inner exact", func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("bruteforce", lp) }, min(startCost, best)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s, err := StartSolver(start, tc.inner)(lp)
			if err != nil {
				t.Fatal(err)
			}
			b, ok := s.(mva.Starter).Start()
			if !ok || !slices.Equal(b, full[:lp.NB]) {
				t.Fatalf("start %v, %v; want %v", b, ok, full[:lp.NB])
			}
			in := make([]int, lp.NumInterior())
			got, err := s.SolveRow(ctx, b, in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("start row cost %v, want %v", got, tc.want)
			}
			// The interior returned is worth what the row says.
			if c := lp.Eval(append(slices.Clone(b), in...)); c != got {
				t.Errorf("start row's interior %v costs %v, the row says %v", in, c, got)
			}
			// Another row: the inner solver's answer.
			other := slices.Clone(b)
			other[0] = (other[0] + 1) % lp.Domains[0]
			c, err := s.SolveRow(ctx, other, in)
			if err != nil {
				t.Fatal(err)
			}
			inner, err := tc.inner(lp)
			if err != nil {
				t.Fatal(err)
			}
			if w, _ := inner.SolveRow(ctx, other, make([]int, lp.NumInterior())); c != w {
				t.Errorf("other row %v, inner %v", c, w)
			}
		})
	}
	if f := StartSolver(nil, nil); f != nil {
		t.Error("no start must keep the factory")
	}
}

// TestConfigNames: every solver a neighbourhood's [solver] may name
// (package config keeps the lists for its error messages) is one this
// registry builds, and every protocol of the registry is a [solver] global.
func TestConfigNames(t *testing.T) {
	for _, name := range config.LocalSolvers {
		if !slices.Contains(solvefile.LocalNames, name) {
			t.Errorf("config's [solver] local %q is not a --local of internal/solve (%v)", name, solvefile.LocalNames)
		}
	}
	for _, name := range GlobalNames() {
		if !slices.Contains(config.GlobalSolvers, name) {
			t.Errorf("protocol %q is not a [solver] global (%v)", name, config.GlobalSolvers)
		}
	}
	if config.GlobalSolvers[0] != "dpop" || !slices.Contains(config.GlobalSolvers, "none") {
		t.Errorf("[solver] global names %v: want dpop first and none among them", config.GlobalSolvers)
	}
}
