// Package localsearch holds what the sampling and local-search protocols
// (D-Gibbs, MGM, MGM-2) share over multi-variable agents: the
// (hard violations, soft sum) cost pair that makes differences of costs
// meaningful when some are infinite, the agent's view of its external
// functions and of its neighbours' boundary values, round-stamped mailboxes,
// and parameter parsing.
//
// An agent's "value" in these protocols is a joint assignment of its
// boundary variables, identified by its MVA table row (mixed radix over
// Subproblem.Boundary, last fastest); its interior is the row's completion.
package localsearch

import (
	"fmt"
	"math"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/wire"
)

// Cost is a cost as the pair (hard violations, sum of the soft entries),
// compared lexicographically. Gains and D-Gibbs deltas subtract costs, and
// +Inf − +Inf is NaN; pairs subtract componentwise and stay exact about
// feasibility (notes §0.1). A hard entry counts one violation and adds
// nothing to Soft, so every term maps to a pair independently and sums of
// differences telescope in both components.
type Cost struct {
	Hard int64
	Soft float64
}

// Of converts a model cost (mva.Hard for an infeasible entry) to a pair.
func Of(c float64) Cost {
	if mva.IsHard(c) {
		return Cost{Hard: 1}
	}
	return Cost{Soft: c}
}

// Add returns c + d.
func (c Cost) Add(d Cost) Cost { return Cost{c.Hard + d.Hard, c.Soft + d.Soft} }

// Sub returns c − d.
func (c Cost) Sub(d Cost) Cost { return Cost{c.Hard - d.Hard, c.Soft - d.Soft} }

// Compare returns −1, 0 or +1 as c is lower than, equal to or higher than d
// in lexicographic order: fewer hard violations first, then the soft sum.
func (c Cost) Compare(d Cost) int {
	switch {
	case c.Hard < d.Hard:
		return -1
	case c.Hard > d.Hard:
		return 1
	case c.Soft < d.Soft:
		return -1
	case c.Soft > d.Soft:
		return 1
	}
	return 0
}

// Less reports c < d.
func (c Cost) Less(d Cost) bool { return c.Compare(d) < 0 }

// Positive reports c > 0, the test for a gain worth moving for.
func (c Cost) Positive() bool { return Cost{}.Less(c) }

// Float returns the model cost of a total: mva.Hard when any hard entry is
// violated, the soft sum otherwise. It is meaningful for totals, not for
// differences.
func (c Cost) Float() float64 {
	if c.Hard > 0 {
		return mva.Hard
	}
	return c.Soft
}

// String formats the pair for errors and logs.
func (c Cost) String() string {
	if c.Hard == 0 {
		return fmt.Sprint(c.Soft)
	}
	return fmt.Sprintf("(%d hard, %v)", c.Hard, c.Soft)
}

// WriteCost appends c to a message body.
func WriteCost(w *wire.Writer, c Cost) {
	w.Int(c.Hard)
	w.Float(c.Soft)
}

// ReadCost reads a pair written by WriteCost. A soft part that is not
// finite is malformed (it can only come from a forged body) and makes
// ReadCost return an error.
func ReadCost(r *wire.Reader) (Cost, error) {
	c := Cost{Hard: r.Int(), Soft: r.Float()}
	if math.IsInf(c.Soft, 0) {
		return Cost{}, fmt.Errorf("%w: infinite soft cost", wire.ErrMalformed)
	}
	return c, nil
}
