package afb

import (
	"context"
	"fmt"

	"github.com/hearth-dcop/hearth/mva"
)

// Step handles one delivered message (notes §1.6). A body that does not
// decode, or a kind that cannot come from its sender's position, is an
// error and leaves the agent's state as it was.
func (a *agent) Step(ctx context.Context, msg mva.Message) ([]mva.Message, error) {
	if a.done {
		return nil, nil
	}
	if msg.From < 0 || msg.From >= a.m || msg.From == a.id {
		return nil, fmt.Errorf("afb: message from agent %d to %d", msg.From, a.id)
	}
	if a.lbMissing > 0 && msg.Kind != kindLB {
		// afb_hplus: search messages wait for the last lower bound.
		a.pending = append(a.pending, msg)
		return nil, nil
	}
	from := a.position(msg.From)
	var (
		out []mva.Message
		err error
	)
	switch msg.Kind {
	case kindCPA:
		out, err = a.onCPA(ctx, from, msg.Body)
	case kindFBCPA:
		out, err = a.onFBCPA(ctx, from, msg.Body)
	case kindEstimate:
		out, err = a.onEstimate(ctx, from, msg.Body)
	case kindNewSolution:
		out, err = a.onNewSolution(ctx, from, msg.Body)
	case kindTerminate:
		err = a.onTerminate(from, msg.Body)
	case kindLB:
		out, err = a.onLB(ctx, from, msg.Body)
	default:
		err = fmt.Errorf("unknown kind %q", msg.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("afb: agent %d: %s from agent %d: %w", a.id, msg.Kind, msg.From, err)
	}
	return out, nil
}

// position returns an agent's position in the order.
func (a *agent) position(id int) int { return a.pos[id] }

// onCPA handles a CPA_MSG: forward from the previous agent, backtrack from
// the next.
func (a *agent) onCPA(ctx context.Context, from int, body []byte) ([]mva.Message, error) {
	k := a.k
	switch from {
	case k - 1:
		c, _, err := decodeCPA(body, a.rows, false)
		if err != nil {
			return nil, err
		}
		if c.last != k-1 {
			return nil, fmt.Errorf("forward CPA assigns %d positions, want %d", c.last+1, k)
		}
		return a.onForward(ctx, c)
	case k + 1:
		c, sol, err := decodeCPA(body, a.rows, true)
		if err != nil {
			return nil, err
		}
		if c.last != k {
			return nil, fmt.Errorf("backtrack CPA assigns %d positions, want %d", c.last+1, k+1)
		}
		a.adopt(sol)
		if a.cpa.vals[k] < 0 || compareTS(c.ts, a.cpa.ts, k+1) != 0 {
			return nil, nil // about a value already left
		}
		return a.assignNext(ctx)
	}
	return nil, fmt.Errorf("CPA_MSG from position %d to position %d", from, k)
}

// onForward takes a new prefix from the previous agent.
func (a *agent) onForward(ctx context.Context, c cpa) ([]mva.Message, error) {
	k := a.k
	if compareTS(c.ts, a.known, k) < 0 {
		return nil, nil // a newer prefix is already known here
	}
	if a.lastFwd != nil && compareTS(c.ts, a.lastFwd, k) == 0 {
		return nil, nil // the same prefix again
	}
	a.lastFwd = append(a.lastFwd[:0], c.ts...)
	copy(a.known, c.ts)
	a.cpa = c
	a.prefixCost, a.prefixShift = c.cost, c.shift
	a.clearEst()
	if a.prefixCost >= a.best.cost {
		return a.backtrack(), nil
	}
	if err := a.beginPrefix(ctx); err != nil {
		return nil, err
	}
	return a.assignNext(ctx)
}

// onFBCPA answers an earlier agent's request for an estimate.
func (a *agent) onFBCPA(ctx context.Context, from int, body []byte) ([]mva.Message, error) {
	if from >= a.k {
		return nil, fmt.Errorf("FB_CPA from position %d to position %d", from, a.k)
	}
	c, _, err := decodeCPA(body, a.rows, false)
	if err != nil {
		return nil, err
	}
	if c.last != from {
		return nil, fmt.Errorf("FB_CPA assigns %d positions, want %d", c.last+1, from+1)
	}
	switch cmp := compareTS(c.ts, a.known, a.k); {
	case cmp < 0:
		return nil, nil // about an abandoned prefix
	case cmp > 0:
		copy(a.known[:a.k], c.ts[:a.k])
	}
	est, err := a.estimate(ctx, &c)
	if err != nil {
		return nil, err
	}
	return []mva.Message{a.msg(a.order[from], kindEstimate, encodeEstimate(est, c.ts[:from+1]))}, nil
}

// onEstimate adds a later agent's estimate for the current assignment and
// moves on when the bound is reached.
func (a *agent) onEstimate(ctx context.Context, from int, body []byte) ([]mva.Message, error) {
	if from <= a.k {
		return nil, fmt.Errorf("FB_ESTIMATE from position %d to position %d", from, a.k)
	}
	est, ts, err := decodeEstimate(body, a.k+1)
	if err != nil {
		return nil, err
	}
	if a.cpa.vals[a.k] < 0 || compareTS(ts, a.cpa.ts, a.k+1) != 0 {
		return nil, nil // not about the current assignment
	}
	a.est[from] = est
	if a.cpa.cost+a.estSum() >= a.best.cost {
		return a.assignNext(ctx)
	}
	return nil, nil
}

// onNewSolution lowers B.
func (a *agent) onNewSolution(ctx context.Context, from int, body []byte) ([]mva.Message, error) {
	if from != a.m-1 {
		return nil, fmt.Errorf("NEW_SOLUTION from position %d, want %d", from, a.m-1)
	}
	sol, err := decodeSolution(body, a.rows)
	if err != nil {
		return nil, err
	}
	if sol.rows == nil {
		return nil, fmt.Errorf("NEW_SOLUTION without an assignment")
	}
	a.adopt(sol)
	if a.recheck && a.cpa.vals[a.k] >= 0 && a.cpa.cost+a.estSum() >= a.best.cost {
		return a.assignNext(ctx)
	}
	return nil, nil
}

// onTerminate adopts the final answer unconditionally, so that every agent
// reports the same assignment.
func (a *agent) onTerminate(from int, body []byte) error {
	if from != 0 && !(a.zeroStop && from == a.m-1) {
		return fmt.Errorf("TERMINATE from position %d", from)
	}
	sol, err := decodeSolution(body, a.rows)
	if err != nil {
		return err
	}
	a.best = sol
	a.done = true
	return nil
}

// adopt keeps the better of the known and the received solution.
func (a *agent) adopt(sol solution) {
	if sol.cost < a.best.cost {
		a.best = sol
	}
}

// onLB records a later agent's lower bound (afb_hplus); the last one
// starts the search at the first agent and replays what waited.
func (a *agent) onLB(ctx context.Context, from int, body []byte) ([]mva.Message, error) {
	if !a.hplusOn || from <= a.k || a.lbGot[from] {
		return nil, fmt.Errorf("unexpected LB from position %d", from)
	}
	lb, err := decodeLB(body)
	if err != nil {
		return nil, err
	}
	a.lbGot[from], a.lbOf[from] = true, lb
	if a.lbMissing--; a.lbMissing > 0 {
		return nil, nil
	}
	for _, v := range a.lbOf[a.k+1:] { // in position order: deterministic
		a.hplus += v
	}
	var out []mva.Message
	if a.k == 0 {
		if out, err = a.startSearch(ctx); err != nil {
			return nil, err
		}
	}
	pending := a.pending
	a.pending = nil
	for _, msg := range pending {
		more, err := a.Step(ctx, msg)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}
