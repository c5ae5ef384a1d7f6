package mgm2

import (
	"context"
	"fmt"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
)

// offerWave runs after every VALUE of the round is in: it computes the
// unilateral move, decides whether to offer, and sends an OFFER (empty
// unless to the chosen partner) to every neighbour.
func (a *Agent) offerWave(ctx context.Context, out []mva.Message) ([]mva.Message, error) {
	for j := range a.nb.Neighbours {
		a.nb.SetValues(j, a.values.Get(j), a.nb.Ctx)
	}
	var err error
	a.uRow, a.uGain, err = a.resp.BestMove(ctx, a.row, a.nb.Ctx)
	if err != nil {
		return nil, err
	}
	if k := len(a.nb.Neighbours); k > 0 && a.rng.Float64() < a.offerProb {
		a.offerer = true
		a.partner = a.rng.IntN(k)
		if a.sent, err = a.jointMoves(ctx, a.partner); err != nil {
			return nil, err
		}
	}
	for j, to := range a.nb.Neighbours {
		w := a.header()
		var entries []offer
		if a.offerer && j == a.partner {
			entries = a.sent
		}
		w.Uint(uint64(len(entries)))
		for _, e := range entries {
			w.Int(int64(e.w))
			localsearch.WriteCost(w, e.gain)
		}
		out = append(out, a.msg(to, KindOffer, w))
	}
	return out, nil
}

// jointMoves lists the offerer's joint moves with the neighbour at
// position p: every (own row, p's visible value) but the current pair,
// with the offerer's gain o = ℓ_i(d_i) − ℓ_i(v_i | p at w), the shared
// functions included.
func (a *Agent) jointMoves(ctx context.Context, p int) ([]offer, error) {
	vis, err := a.nb.VisibleRows(p)
	if err != nil {
		return nil, err
	}
	rows := a.nb.Rows()
	if rows > maxEntries/vis {
		return nil, fmt.Errorf("%d×%d joint moves with agent %d are too many to offer", rows, vis, a.nb.Neighbours[p])
	}
	cur, err := a.nb.Ell(ctx, a.localCost, a.row, a.nb.Ctx)
	if err != nil {
		return nil, err
	}
	curW := a.nb.Visible(p, a.nb.Ctx)
	tmp := slices.Clone(a.nb.Ctx)
	b := make([]int, len(a.b))
	var moves []offer
	for row := range rows {
		lc, err := a.localCost(ctx, row)
		if err != nil {
			return nil, err
		}
		a.nb.Decode(row, b)
		for w := range vis {
			if row == a.row && w == curW {
				continue
			}
			a.nb.SetVisible(p, w, tmp)
			o := cur.Sub(lc.Add(a.nb.Ext(b, tmp)))
			if a.positiveOnly && !o.Positive() {
				continue
			}
			moves = append(moves, offer{row: row, w: w, gain: o})
		}
	}
	if a.maxOffers > 0 && len(moves) > a.maxOffers {
		slices.SortStableFunc(moves, func(x, y offer) int { return y.gain.Compare(x.gain) })
		moves = moves[:a.maxOffers]
	}
	return moves, nil
}

// answerWave runs after every OFFER of the round is in. An offerer
// rejects every offer; a receiver accepts the best joint move of all
// offers if its joint gain is positive, and rejects the others.
func (a *Agent) answerWave(ctx context.Context, out []mva.Message) ([]mva.Message, error) {
	accept, entry := -1, -1
	var best localsearch.Cost
	var planned int
	if !a.offerer {
		for j := range a.nb.Neighbours {
			entries := a.offers.Get(j)
			if len(entries) == 0 {
				continue
			}
			rows, costs, base, err := a.bestExtensions(ctx, j)
			if err != nil {
				return nil, err
			}
			for e, off := range entries {
				g := off.gain.Add(base).Sub(costs[off.w])
				if accept < 0 || best.Less(g) {
					accept, entry, best, planned = j, e, g, rows[off.w]
				}
			}
		}
		if accept >= 0 && (!best.Positive() || a.overUnilateral && !a.uGain.Less(best)) {
			accept = -1
		}
	}
	for j, to := range a.nb.Neighbours {
		if len(a.offers.Get(j)) == 0 {
			continue
		}
		if j != accept {
			out = append(out, a.msg(to, KindReject, a.header()))
			continue
		}
		w := a.header()
		w.Int(int64(entry))
		localsearch.WriteCost(w, best)
		out = append(out, a.msg(to, KindAccept, w))
	}
	if accept >= 0 {
		a.committed, a.mate, a.planned, a.cGain = true, accept, planned, best
	}
	return out, nil
}

// bestExtensions returns, for every value w of this agent's variables that
// the neighbour at position j sees, the row extending w that minimises
// ℓ^{¬j} (this agent's cost without the functions involving j) and that
// minimum, and ℓ^{¬j} of the current row. The current row is preferred
// among equals, then the lowest row.
func (a *Agent) bestExtensions(ctx context.Context, j int) ([]int, []localsearch.Cost, localsearch.Cost, error) {
	n := a.nb.OwnVisibleRows(j)
	rows := make([]int, n)
	costs := make([]localsearch.Cost, n)
	seen := make([]bool, n)
	b := make([]int, len(a.b))
	without := func(row int) (localsearch.Cost, error) {
		c, err := a.localCost(ctx, row)
		if err != nil {
			return localsearch.Cost{}, err
		}
		a.nb.Decode(row, b)
		return c.Add(a.nb.ExtExcept(j, b, a.nb.Ctx)), nil
	}
	base, err := without(a.row)
	if err != nil {
		return nil, nil, localsearch.Cost{}, err
	}
	w := a.nb.OwnVisible(j, a.b)
	rows[w], costs[w], seen[w] = a.row, base, true
	for row := range a.nb.Rows() {
		if row == a.row {
			continue
		}
		c, err := without(row)
		if err != nil {
			return nil, nil, localsearch.Cost{}, err
		}
		w := a.nb.OwnVisible(j, b)
		if !seen[w] || c.Less(costs[w]) {
			rows[w], costs[w], seen[w] = row, c, true
		}
	}
	return rows, costs, base, nil
}
