package localsearch_test

import (
	"context"
	"testing"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
)

// starter is a local solver that suggests a start.
type starter struct {
	mva.LocalSolver
	b  []int
	ok bool
}

func (s starter) Start() ([]int, bool) { return s.b, s.ok }

// TestInitStart: init = 3 starts at the row the solver suggests, and at
// row 0 when it suggests none, is not a Starter, or suggests a boundary of
// the wrong length.
func TestInitStart(t *testing.T) {
	p := randprob.New(3, randprob.Options{Agents: 2, Vars: 6, MinDomain: 2, MaxDomain: 3, MaxArity: 2, Functions: 8, IntCosts: true})
	d := mva.Decompose(p)
	var lp *mva.LocalProblem
	for i := range d.Subs {
		if len(d.Subs[i].Boundary) >= 2 {
			lp = mva.NewLocalProblem(p, &d.Subs[i])
			break
		}
	}
	if lp == nil {
		t.Fatal("no agent with two boundary variables: pick another seed")
	}
	bf, err := local.New("bruteforce", lp)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := lp.Rows()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]int, lp.NB)
	for k := range b {
		b[k] = lp.Domains[k] - 1
	}
	for _, tc := range []struct {
		name   string
		solver mva.LocalSolver
		want   int
	}{
		{"suggested", starter{bf, b, true}, lp.EncodeRow(b)},
		{"none suggested", starter{bf, b, false}, 0},
		{"wrong length", starter{bf, b[1:], true}, 0},
		{"not a starter", bf, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := mva.NewLocalView(context.Background(), lp, tc.solver, false)
			if err != nil {
				t.Fatal(err)
			}
			got, err := localsearch.InitialRow(context.Background(), localsearch.InitStart, v, rows, localsearch.NewRand(1))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("row %d, want %d (of %d)", got, tc.want, rows)
			}
		})
	}
}
