package compile

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/internal/fixtures"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// BenchmarkReadStates compiles and solves the README's example street
// (bucket elimination over the whole street, as `hearth solve` does)
// with power_steps = "auto" on its two EV chargers and its battery:
// slot functions reading storages from their states (slotScope) against
// reading every action variable, the encoding before. Both find the
// same optimum; the ratio is the encoding's.
func BenchmarkReadStates(b *testing.B) {
	cfg := autoStreet(b)
	want := 0.0
	for _, v := range []struct {
		name string
		opts Options
	}{{"actions", Options{actionsOnly: true}}, {"states", Options{}}} {
		b.Run(v.name, func(b *testing.B) {
			for b.Loop() {
				c, err := Compile(cfg.Neighbourhood, v.opts)
				if err != nil {
					b.Fatal(err)
				}
				lp := mva.NewLocalProblem(c.Problem, mva.Whole(c.Problem))
				s, err := local.New("be", lp)
				if err != nil {
					b.Fatal(err)
				}
				got, err := s.SolveRow(context.Background(), nil, make([]int, lp.NumInterior()))
				if err != nil {
					b.Fatal(err)
				}
				got += c.Problem.Offset
				if want == 0 {
					want = got
				} else if d := got - want; d > 1e-9 || d < -1e-9 {
					b.Fatalf("optimum %.9g, the other encoding's %.9g", got, want)
				}
			}
		})
	}
}

// autoStreet loads the README's example street (examples/neighbourhood)
// with power_steps = "auto" on its two EV chargers and its battery.
func autoStreet(b testing.TB) *config.Config {
	b.Helper()
	cfg, err := config.Load(fixtures.ExampleStreet(b, filepath.Join("..", ".."), `power_steps = "auto"`))
	if err != nil {
		b.Fatal(err)
	}
	return cfg
}
