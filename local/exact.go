package local

import (
	"errors"
	"fmt"

	"github.com/hearth-dcop/hearth/mva"
)

// Exact is the mva.ExactFactory protocols receive through their node
// (mva.Node.Exact): bucket elimination within maxEntries table entries —
// past it an error wrapping mva.ErrTooLarge — or, with maxEntries 0,
// depth-first branch and bound, whose memory the problem bounds.
func Exact(lp *mva.LocalProblem, maxEntries int) (mva.LocalSolver, error) {
	if maxEntries <= 0 {
		return NewDFBnB(lp), nil
	}
	be, err := NewBE(lp, BEOptions{MaxEntries: maxEntries})
	if errors.Is(err, ErrTooLarge) {
		return nil, fmt.Errorf("%w: %w", mva.ErrTooLarge, err)
	}
	if err != nil {
		return nil, err
	}
	return be, nil
}
