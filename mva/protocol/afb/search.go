package afb

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
)

// candidate is a row in a best-first candidate list. key is a lower bound
// on Inc(row)+h(row) and the list is sorted by it, which allows the early
// cut-off; inc is Inc(row) when the list was built for the current prefix.
type candidate struct {
	row      int
	key, inc float64
}

func sortCandidates(cs []candidate) {
	slices.SortFunc(cs, func(x, y candidate) int {
		return cmp.Or(cmp.Compare(x.key, y.key), cmp.Compare(x.row, y.row))
	})
}

// beginPrefix prepares the candidates for a new prefix: Order() of notes
// §1.6. Rows whose key is +Inf are left out, since the test can never
// pass them.
func (a *agent) beginPrefix(ctx context.Context) error {
	a.active, a.next = true, 0
	switch a.candMode {
	case CandidatesBestFirst:
		a.cands = a.cands[:0]
		for b := range a.nrows {
			c, err := a.rowCost(ctx, b)
			if err != nil {
				return err
			}
			if mva.IsHard(c) {
				continue
			}
			inc := c + a.ownedCost(b)
			if key := inc + a.h[b]; !mva.IsHard(key) {
				a.cands = append(a.cands, candidate{row: b, key: key, inc: inc})
			}
		}
		sortCandidates(a.cands)
	case CandidatesStatic:
		if a.static == nil {
			a.static = make([]candidate, 0, a.nrows)
			for b := range a.nrows {
				c, err := a.rowCost(ctx, b)
				if err != nil {
					return err
				}
				if key := c + a.h[b]; !mva.IsHard(key) {
					a.static = append(a.static, candidate{row: b, key: key})
				}
			}
			sortCandidates(a.static)
		}
		a.cands = a.static
	}
	return nil
}

// nextCandidate advances the cursor to the next row that passes the
// admissibility test prefixCost + Inc(b) + h(b) [+ H⁺] < B and returns
// it with Inc(b); ok is false when the candidates are exhausted.
func (a *agent) nextCandidate(ctx context.Context) (row int, inc float64, ok bool, err error) {
	if !a.active {
		return 0, 0, false, nil
	}
	bound := a.best.cost
	for {
		if a.candMode == CandidatesLex {
			if a.next >= a.nrows {
				return 0, 0, false, nil
			}
			b := a.next
			a.next++
			ext := a.ownedCost(b)
			// Pre-test without the row: LB (0 until known) bounds it.
			lb := 0.0
			if a.lbKnown {
				lb = a.lb
			}
			if a.prefixCost+(lb+ext)+a.h[b]+a.hplus >= bound {
				continue
			}
			c, err := a.rowCost(ctx, b)
			if err != nil {
				return 0, 0, false, err
			}
			if inc := c + ext; a.prefixCost+inc+a.h[b]+a.hplus < bound {
				return b, inc, true, nil
			}
			continue
		}
		if a.next >= len(a.cands) {
			return 0, 0, false, nil
		}
		c := a.cands[a.next]
		a.next++
		if a.prefixCost+c.key+a.hplus >= bound {
			a.next = len(a.cands) // nothing later can pass
			return 0, 0, false, nil
		}
		if a.candMode == CandidatesBestFirst {
			// key is exactly Inc+h: the cut-off test was the full test.
			return c.row, c.inc, true, nil
		}
		rc, err := a.rowCost(ctx, c.row)
		if err != nil {
			return 0, 0, false, err
		}
		if inc := rc + a.ownedCost(c.row); a.prefixCost+inc+a.h[c.row]+a.hplus < bound {
			return c.row, inc, true, nil
		}
	}
}

// unassign drops the agent's own value from the working CPA.
func (a *agent) unassign() {
	a.cpa.truncate(a.k)
	a.cpa.cost, a.cpa.shift = a.prefixCost, a.prefixShift
}

// assignNext moves to the next admissible candidate for the current
// prefix (AssignNext of notes §1.6). The last agent turns every admissible
// candidate into a NEW_SOLUTION and goes on; the others send the extended
// CPA forward and an FB_CPA to every later agent.
func (a *agent) assignNext(ctx context.Context) ([]mva.Message, error) {
	a.clearEst()
	a.unassign()
	var out []mva.Message
	for {
		b, inc, ok, err := a.nextCandidate(ctx)
		if err != nil {
			return nil, err
		}
		if !ok {
			return append(out, a.backtrack()...), nil
		}
		a.ctr++
		a.cpa.vals[a.k], a.cpa.ts[a.k], a.cpa.last = b, a.ctr, a.k
		a.cpa.cost = a.prefixCost + inc
		a.cpa.shift = a.prefixShift + a.shift
		a.known[a.k] = a.ctr
		if a.k < a.m-1 {
			body := encodeCPA(&a.cpa, nil)
			out = append(out, a.msg(a.order[a.k+1], kindCPA, body))
			for p := a.k + 1; p < a.m; p++ {
				out = append(out, a.msg(a.order[p], kindFBCPA, body))
			}
			return out, nil
		}
		a.best = solution{cost: a.cpa.cost, shift: a.cpa.shift, rows: slices.Clone(a.cpa.vals)}
		out = append(out, a.broadcast(kindNewSolution, encodeSolution(&a.best))...)
		if a.zeroStop && a.best.cost == 0 {
			// Costs are ≥ 0 after the shift: nothing can beat 0.
			a.unassign()
			return append(out, a.terminate()...), nil
		}
		a.unassign()
	}
}

// backtrack tells the previous agent that its current value is exhausted,
// piggybacking the best solution known here; the first agent terminates.
func (a *agent) backtrack() []mva.Message {
	a.clearEst()
	a.unassign()
	a.active, a.cands, a.next = false, nil, 0
	if a.k == 0 {
		return a.terminate()
	}
	return []mva.Message{a.msg(a.order[a.k-1], kindCPA, encodeCPA(&a.cpa, &a.best))}
}

// terminate ends the search and hands every agent the final answer.
func (a *agent) terminate() []mva.Message {
	a.done = true
	return a.broadcast(kindTerminate, encodeSolution(&a.best))
}

// broadcast sends body to every other agent.
func (a *agent) broadcast(kind string, body []byte) []mva.Message {
	out := make([]mva.Message, 0, a.m-1)
	for id := range a.m {
		if id != a.id {
			out = append(out, a.msg(id, kind, body))
		}
	}
	return out
}

// estimate is a_j's lower bound on its share of any completion of c
// (notes §1.7): its rows, the owned functions whose other agents c
// assigns, and its future bound.
func (a *agent) estimate(ctx context.Context, c *cpa) (float64, error) {
	var known []*extFunc
	for _, f := range a.owned {
		if f.before <= c.last {
			known = append(known, f)
		}
	}
	ext := func(b int) float64 {
		s := 0.0
		for _, f := range known {
			s += f.eval(c.vals, a.k, b)
		}
		a.checks += int64(len(known))
		return s
	}
	best := math.Inf(1)
	for b := range a.nrows {
		var rc float64
		switch a.estMode {
		case EstimateExact:
			var err error
			if rc, err = a.rowCost(ctx, b); err != nil {
				return 0, err
			}
		case EstimateHybrid:
			if a.n.Local.Table.Has(b) {
				var err error
				if rc, err = a.rowCost(ctx, b); err != nil {
					return 0, err
				}
			}
		}
		if mva.IsHard(rc) {
			continue
		}
		best = min(best, rc+ext(b)+a.h[b])
	}
	if a.estMode == EstimateDecoupled {
		lb, err := a.lowerBound(ctx)
		if err != nil {
			return 0, err
		}
		best += lb
	}
	return best, nil
}
