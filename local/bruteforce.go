package local

import (
	"context"
	"fmt"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/join"
)

// MaxBruteForce bounds the interior assignments BruteForce enumerates per
// row; beyond it the reference is too slow to be a reference.
const MaxBruteForce = 1 << 26

// BruteForce solves a row by enumerating every interior assignment and
// evaluating it with mva.LocalProblem.Eval. It is deliberately naive: it is
// the reference the other solvers are tested against.
type BruteForce struct {
	lp     *mva.LocalProblem
	assign []int
	checks int64
}

// NewBruteForce returns the reference solver for lp.
func NewBruteForce(lp *mva.LocalProblem) *BruteForce {
	return &BruteForce{lp: lp, assign: make([]int, len(lp.Vars))}
}

// Checks counts one constraint check per function evaluated.
func (s *BruteForce) Checks() int64 { return s.checks }

// SolveRow enumerates the interior assignments in mixed radix order (last
// interior variable fastest) and keeps the first of the cheapest. It refuses
// rows with more than MaxBruteForce assignments.
func (s *BruteForce) SolveRow(ctx context.Context, boundary, interior []int) (float64, error) {
	lp := s.lp
	if err := checkRowArgs(lp, boundary, interior); err != nil {
		return 0, fmt.Errorf("bruteforce: %w", err)
	}
	space, err := join.TableSize(lp.Domains[lp.NB:], MaxBruteForce)
	if err != nil {
		return 0, fmt.Errorf("bruteforce: %d interior variables: %w", lp.NumInterior(), err)
	}
	a := s.assign
	copy(a, boundary)
	in := a[lp.NB:]
	clear(in)
	best := mva.Hard
	clear(interior)
	for n := 0; n < space; n++ {
		if n&0xfff == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		if c := lp.Eval(a); c < best {
			best = c
			copy(interior, in)
		}
		s.checks += int64(len(lp.Funcs))
		for k := len(in) - 1; k >= 0; k-- {
			in[k]++
			if in[k] < lp.Domains[lp.NB+k] {
				break
			}
			in[k] = 0
		}
	}
	return best, nil
}

// checkRowArgs validates SolveRow's arguments, so that bad input is an
// error rather than an index panic deep in a solver.
func checkRowArgs(lp *mva.LocalProblem, boundary, interior []int) error {
	if len(boundary) != lp.NB {
		return fmt.Errorf("%d boundary values for %d boundary variables", len(boundary), lp.NB)
	}
	if len(interior) != lp.NumInterior() {
		return fmt.Errorf("room for %d interior values, %d needed", len(interior), lp.NumInterior())
	}
	for k, b := range boundary {
		if b < 0 || b >= lp.Domains[k] {
			return fmt.Errorf("boundary variable %d: value %d outside its domain of %d", k, b, lp.Domains[k])
		}
	}
	return nil
}
