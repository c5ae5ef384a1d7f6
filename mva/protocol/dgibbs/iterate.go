package dgibbs

import (
	"context"
	"fmt"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
	"github.com/hearth-dcop/hearth/mva/wire"
)

// Sampling message kinds (notes §2.4).
const (
	// KindValue is VALUE(t, t*, values): the sender's boundary values of
	// iteration t that the receiver shares a function with, and the best
	// iteration t* known to the sender (the root's, passed down by parents).
	KindValue = "VALUE"
	// KindBacktrack is BACKTRACK(t, Δ[, A0]): the change of the sender's
	// subtree's cost in iteration t; in iteration 1 also the subtree's
	// cost of x⁰.
	KindBacktrack = "BACKTRACK"
	// KindFinal is FINAL(t*, cost, whole): the end, the best iteration and
	// its cost, sent down the tree.
	KindFinal = "FINAL"
)

// trySample samples as many iterations as the wait rules allow (notes
// §2.5, TrySample): the root after closing the previous iteration; any
// other agent once its parent and pseudo-parents have sent this
// iteration's values; every agent only once its children and
// pseudo-children have sent the previous iteration's values, which keeps
// the Δ bookkeeping exact without causal delivery.
func (a *Agent) trySample(ctx context.Context, out []mva.Message) ([]mva.Message, error) {
	for !a.done && a.tree.complete && a.t < a.T {
		t1 := a.t + 1
		if a.isRoot() && !a.closed {
			break
		}
		if !a.isRoot() && !a.heard(a.ancestors, t1) {
			break
		}
		if !a.heard(a.children, t1-1) || !a.heard(a.pc, t1-1) {
			break
		}
		var err error
		if out, err = a.sample(ctx, t1, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// heard reports that every neighbour at the given positions has sent its
// value of iteration t or later.
func (a *Agent) heard(positions []int, t int) bool {
	for _, j := range positions {
		if a.iter[j] < t {
			return false
		}
	}
	return true
}

// sample is iteration t at this agent (notes §2.5, Sample).
func (a *Agent) sample(ctx context.Context, t int, out []mva.Message) ([]mva.Message, error) {
	ts := a.tstar
	if !a.isRoot() {
		var ok bool
		if ts, ok = a.fromP[t]; !ok {
			return nil, fmt.Errorf("iteration %d without the parent's value", t)
		}
		delete(a.fromP, t)
		if ts == a.t {
			a.commit() // my value of iteration t* is still d: commit it
		}
	}
	a.t = t
	before, err := a.ell(ctx, a.row)
	if err != nil {
		return nil, err
	}
	if t == 1 {
		if a.a0, err = a.ownCost0(ctx); err != nil {
			return nil, err
		}
	}
	if err := a.draw(ctx, t); err != nil {
		return nil, err
	}
	after, err := a.ell(ctx, a.row)
	if err != nil {
		return nil, err
	}
	// Both terms with the same ctx: the agents' deltas of one iteration
	// telescope to cost(x^t) − cost(x^{t−1}) (notes §2.6).
	a.delta = after.Sub(before)
	if a.onSample != nil {
		a.onSample(t, a.row)
	}
	out = a.sendValues(out, t, ts)
	if a.isRoot() {
		a.closed = false
	}
	if len(a.children) > 0 {
		a.waiting = len(a.children)
		clear(a.got)
		return out, nil
	}
	return a.close(out)
}

// ownCost0 is the agent's share of cost(x⁰): its local cost and the
// external functions it owns, those whose other agents are all its
// ancestors (the deepest agent of a scope owns the function).
func (a *Agent) ownCost0(ctx context.Context) (localsearch.Cost, error) {
	c, err := a.localCost(ctx, a.row)
	if err != nil {
		return localsearch.Cost{}, err
	}
	owned := func(agents []int) bool {
		for _, j := range agents {
			if !slices.Contains(a.ancestors, j) {
				return false
			}
		}
		return true
	}
	return c.Add(a.nb.ExtOwnedBy(owned, a.b, a.ctx0)), nil
}

// close ends the subtree's iteration: BACKTRACK to the parent, or at the
// root RootClose.
func (a *Agent) close(out []mva.Message) ([]mva.Message, error) {
	if !a.isRoot() {
		var w wire.Writer
		w.Int(int64(a.t))
		localsearch.WriteCost(&w, a.delta)
		if a.t == 1 {
			localsearch.WriteCost(&w, a.a0)
		}
		return append(out, a.msg(a.parent, KindBacktrack, &w)), nil
	}
	if a.t == 1 {
		a.cost0 = a.a0
	}
	// Cum += Δ, with Kahan compensation of the soft part (notes §2.6).
	y := a.delta.Soft - a.cumComp
	s := a.cum.Soft + y
	a.cumComp = (s - a.cum.Soft) - y
	a.cum = localsearch.Cost{Hard: a.cum.Hard + a.delta.Hard, Soft: s}
	if a.cum.Less(a.cumBest) { // strict: the first best is kept
		a.cumBest, a.tstar = a.cum, a.t
		a.commit()
	}
	a.closed = true
	if a.onClose != nil {
		a.onClose(a.t, a.cum)
	}
	if a.t == a.T {
		a.best = a.cost0.Add(a.cumBest)
		return a.finish(out, a.tstar), nil
	}
	return out, nil
}

// finish commits d if it is from iteration ts, ends the run and passes
// FINAL down.
func (a *Agent) finish(out []mva.Message, ts int) []mva.Message {
	if ts == a.t {
		a.commit()
	}
	a.done = true
	for _, c := range a.children {
		var w wire.Writer
		w.Int(int64(ts))
		localsearch.WriteCost(&w, a.best)
		w.Bool(a.whole)
		out = append(out, a.msg(c, KindFinal, &w))
	}
	return out
}

func (a *Agent) msg(pos int, kind string, w *wire.Writer) mva.Message {
	return mva.Message{From: a.node.ID, To: a.nb.Neighbours[pos], Kind: kind, Body: w.Bytes()}
}

func (a *Agent) sendValues(out []mva.Message, t, ts int) []mva.Message {
	for j := range a.nb.Neighbours {
		var w wire.Writer
		w.Int(int64(t))
		w.Int(int64(ts))
		a.nb.WriteValues(&w, j, a.b)
		out = append(out, a.msg(j, KindValue, &w))
	}
	return out
}

// onValue stores a neighbour's value (notes §2.5, on VALUE).
func (a *Agent) onValue(ctx context.Context, j int, body []byte) ([]mva.Message, error) {
	r := wire.NewReader(body)
	t := r.IntIn(0, a.T+1)
	ts := r.IntIn(0, a.T+1)
	vals := a.nb.ReadValuesTo(r, j)
	if err := r.Err(); err != nil {
		return nil, err
	}
	if t <= a.iter[j] {
		return nil, fmt.Errorf("value of iteration %d after one of iteration %d", t, a.iter[j])
	}
	if t == 0 {
		a.nb.SetValues(j, vals, a.ctx0)
	} else if a.tree.complete && j == a.parent {
		// The parent's value of iteration t needs ours of t−1, and we
		// cannot sample t without it: it always names our next iteration.
		if t != a.t+1 {
			return nil, fmt.Errorf("parent's value of iteration %d while at iteration %d", t, a.t)
		}
		a.fromP[t] = ts
	}
	a.nb.SetValues(j, vals, a.nb.Ctx)
	a.iter[j] = t
	return a.trySample(ctx, nil)
}

// onBacktrack adds a child's subtree change (notes §2.5, on BACKTRACK).
func (a *Agent) onBacktrack(ctx context.Context, j int, body []byte) ([]mva.Message, error) {
	ci := slices.Index(a.children, j)
	r := wire.NewReader(body)
	t := r.IntIn(1, a.T+1)
	d, err := localsearch.ReadCost(r)
	if err != nil {
		return nil, err
	}
	var a0 localsearch.Cost
	if t == 1 {
		if a0, err = localsearch.ReadCost(r); err != nil {
			return nil, err
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	if ci < 0 || t != a.t || a.waiting == 0 || a.got[ci] {
		return nil, fmt.Errorf("unexpected BACKTRACK of iteration %d at iteration %d", t, a.t)
	}
	a.got[ci] = true
	a.delta = a.delta.Add(d)
	a.a0 = a.a0.Add(a0)
	if a.waiting--; a.waiting > 0 {
		return nil, nil
	}
	out, err := a.close(nil)
	if err != nil {
		return nil, err
	}
	return a.trySample(ctx, out)
}

// onFinal ends the run at a non-root (notes §2.5, on FINAL).
func (a *Agent) onFinal(j int, body []byte) ([]mva.Message, error) {
	r := wire.NewReader(body)
	ts := r.IntIn(0, a.T+1)
	best, err := localsearch.ReadCost(r)
	if err != nil {
		return nil, err
	}
	whole := r.Bool()
	if err := r.Err(); err != nil {
		return nil, err
	}
	if a.isRoot() || j != a.parent || a.t != a.T || a.done {
		return nil, fmt.Errorf("unexpected FINAL")
	}
	a.best, a.whole = best, whole
	return a.finish(nil, ts), nil
}
