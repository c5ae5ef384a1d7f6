package localsearch

import "context"

// LocalCost is the cost of the agent's own functions when its boundary
// takes a row. The protocols decide the interior through it (today: the
// MVA row's best completion), so a different interior policy is one
// function away.
type LocalCost func(ctx context.Context, row int) (Cost, error)

// Ell returns ℓ_i(row) = local cost + the external functions with the
// other agents' variables at vals: the agent's cost of a boundary row.
func (nb *Neighbourhood) Ell(ctx context.Context, local LocalCost, row int, vals []int) (Cost, error) {
	c, err := local(ctx, row)
	if err != nil {
		return Cost{}, err
	}
	b := make([]int, len(nb.Domains))
	nb.Decode(row, b)
	return c.Add(nb.Ext(b, vals)), nil
}

// BestMove is MGM's unilateral best response (notes §3, step 2): the row
// minimising ℓ_i with the neighbours at vals, and the gain of moving there
// from cur. When cur is a minimiser the gain is zero and the row is cur;
// otherwise the lowest-index minimiser is taken.
func (nb *Neighbourhood) BestMove(ctx context.Context, local LocalCost, cur int, vals []int) (int, Cost, error) {
	curCost, err := nb.Ell(ctx, local, cur, vals)
	if err != nil {
		return 0, Cost{}, err
	}
	best, bestCost := cur, curCost
	for row := range nb.rows {
		if row == cur {
			continue
		}
		c, err := nb.Ell(ctx, local, row, vals)
		if err != nil {
			return 0, Cost{}, err
		}
		if c.Less(bestCost) { // strict, in row order: the lowest-index minimiser
			best, bestCost = row, c
		}
	}
	return best, curCost.Sub(bestCost), nil
}

// Beats is MGM's move rule between an agent and one neighbour: a strictly
// larger gain wins, and equal gains go to the lower id (notes §3, step 4;
// pyDCOP's tie-break).
func Beats(gain Cost, id int, other Cost, otherID int) bool {
	switch gain.Compare(other) {
	case 1:
		return true
	case 0:
		return id < otherID
	}
	return false
}
