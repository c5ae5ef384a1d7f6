package compile_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/compile"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// BenchmarkExampleGoals compiles and solves the example street centrally
// with bucket elimination, its goals soft (as the TOML says) and hard
// (every rule hard, as before goals were soft): the ratio of the two is
// what pricing missed goals instead of excluding them costs (README.md,
// "hearth inspect").
func BenchmarkExampleGoals(b *testing.B) {
	for _, tc := range []struct {
		name string
		hard bool
	}{{"soft", false}, {"hard", true}} {
		b.Run(tc.name, func(b *testing.B) {
			cfg, err := config.Load(filepath.Join("..", "..", "examples", "neighbourhood", "neighbourhood.toml"))
			if err != nil {
				b.Fatal(err)
			}
			n := cfg.Neighbourhood
			if tc.hard {
				for hi := range n.Homes {
					for ri := range n.Homes[hi].Rules {
						n.Homes[hi].Rules[ri].Soft = false
					}
				}
			}
			for b.Loop() {
				solveExample(b, n)
			}
		})
	}
}

func solveExample(b *testing.B, n *devices.Neighbourhood) {
	c, err := compile.Compile(n, compile.Options{})
	if err != nil {
		b.Fatal(err)
	}
	lp := mva.NewLocalProblem(c.Problem, mva.Whole(c.Problem))
	s, err := local.New("be", lp)
	if err != nil {
		b.Fatal(err)
	}
	in := make([]int, lp.NumInterior())
	if _, err := s.SolveRow(context.Background(), nil, in); err != nil {
		b.Fatal(err)
	}
}
