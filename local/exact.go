package local

import (
	"errors"
	"fmt"

	"github.com/hearth-dcop/hearth/mva"
)

// Exact is the mva.ExactFactory protocols receive through their node
// (mva.Node.Exact): bucket elimination within maxEntries table entries —
// past it an error wrapping mva.ErrTooLarge — or, with maxEntries 0,
// AND/OR branch and bound within the default memory budget, which
// reparameterises every row (AOBBOptions.ShiftRows): the protocols ask it
// for best responses, a few hard rows per question. It was DFBnB, whose
// bound (a sum of per-function minima) left an SHDS home's response
// unanswered after minutes where AOBB answers in about a second. Where
// the problem's n-ary functions imply binary hard constraints (an SHDS
// home's device tables), it is EDAC on the problem with those pairs,
// then AOBB past EDAC's budget (responseSolver): AOBB's static bound
// passed 2^28 checks on a third of dm_21_1_6's homes' later questions,
// which that EDAC answers in 0.02–0.25 s.
func Exact(lp *mva.LocalProblem, maxEntries int) (mva.LocalSolver, error) {
	if maxEntries <= 0 {
		if withPairs, ok := withImpliedPairs(lp); ok {
			return newResponseSolver(lp, withPairs), nil
		}
		return NewAOBB(lp, AOBBOptions{ShiftRows: true}), nil
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
