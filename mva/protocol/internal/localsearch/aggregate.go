package localsearch

import (
	"slices"

	"github.com/hearth-dcop/hearth/mva"
)

// respContext is what a response problem (Responder.buildLP,
// blockSearch.build) keeps of the agent's external functions.
//
// An external function that reads one own boundary variable k, whatever
// other agents' variables it reads, is, with the neighbours at their
// values, a unary function of k. The functions of one k are therefore
// summed, before every response, into one unary function of k (an
// aggregate: on the SHDS peak term, window w's 2·coef·cap_h·Σ_g cap_g
// over the other homes g, whose committed caps are all it reads), and the
// context variables they read are not variables of the response problem
// at all. A complete graph's agent is in (n−1)·windows such functions
// (5,700 at 474 SHDS homes); as context variables and functions of the
// response problem they made every home's bucket elimination plans, and
// its block problems', grow with n. With the aggregates a response
// problem holds one function per own boundary variable, whatever n is.
//
// Only functions over two or more own boundary variables keep the
// context variables they read (kept): the problem's first variables, its
// boundary, set from the neighbours' values before each solve (gather).
//
// The aggregate's costs are summed in the functions' order, each entry
// added once, where bucket elimination added the conditioned functions
// one by one in its bucket order: the same sum, up to float rounding.
type respContext struct {
	// kept are the context slots the problem still reads, in slot order;
	// kept[i] is the problem's variable i.
	kept []int
	// conds are the aggregates, one per own boundary variable with
	// functions to sum.
	conds []aggregate
	// multi are the external functions over two or more own boundary
	// variables, kept whole.
	multi []int
	// penalty, when positive, is what a Hard entry of an external
	// function costs (the weighted response problem); 0 keeps Hard.
	penalty float64
	// stale says the aggregates must be refilled before the next solve
	// (a new response, with new neighbours' values).
	stale bool
}

// aggregate is one own boundary variable's unary function: the sum of
// the external functions (funcs, indices of Neighbourhood.funcs) whose
// only own variable it is, conditioned on the context.
type aggregate struct {
	k     int
	funcs []int32
	// costs[v] is the sum at own value v. The response problem's
	// function shares the slice: refilled in place between responses,
	// which the solvers detect (mva.HoldingSolver: never while held).
	costs []float64
}

// newContext sorts the agent's external functions into aggregates and
// whole functions, for a response problem whose Hard entries cost
// penalty (0: stay Hard).
func (nb *Neighbourhood) newContext(penalty float64) *respContext {
	rc := &respContext{penalty: penalty, stale: true}
	read := map[int]bool{}
	isMulti := make([]bool, len(nb.funcs))
	for i := range nb.funcs {
		f := &nb.funcs[i]
		own := -1
		for _, r := range nb.scope(f) {
			if !r.own() {
				continue
			}
			if own >= 0 && own != r.idx() {
				own = -2
				break
			}
			own = r.idx()
		}
		if own >= 0 {
			continue
		}
		rc.multi = append(rc.multi, i)
		isMulti[i] = true
		for _, r := range nb.scope(f) {
			if !r.own() {
				read[r.idx()] = true
			}
		}
	}
	for s := range read {
		rc.kept = append(rc.kept, s)
	}
	slices.Sort(rc.kept)
	for k, fs := range nb.byVar {
		var single []int32
		for _, i := range fs {
			if !isMulti[i] {
				single = append(single, i)
			}
		}
		if len(single) > 0 {
			rc.conds = append(rc.conds, aggregate{k: k, funcs: single, costs: make([]float64, nb.Domains[k])})
		}
	}
	return rc
}

// funcs returns the response problem's functions of the external ones:
// the whole functions, their context slots renumbered to the kept
// variables (0..len(kept)−1) and their own boundary from base, then one
// unary function per aggregate over base+k.
func (rc *respContext) funcs(nb *Neighbourhood, base int) []mva.LocalFunction {
	out := make([]mva.LocalFunction, 0, len(rc.multi)+len(rc.conds))
	for _, i := range rc.multi {
		ef := &nb.funcs[i]
		scope := nb.scope(ef)
		sc := make([]int, len(scope))
		for j, r := range scope {
			if r.own() {
				sc[j] = base + r.idx()
			} else {
				sc[j], _ = slices.BinarySearch(rc.kept, r.idx())
			}
		}
		costs := nb.costs(ef)
		if rc.penalty > 0 {
			costs = make([]float64, len(costs))
			for e, c := range nb.costs(ef) {
				if mva.IsHard(c) {
					c = rc.penalty
				}
				costs[e] = c
			}
		}
		out = append(out, mva.LocalFunction{Scope: sc, Costs: costs})
	}
	for _, a := range rc.conds {
		out = append(out, mva.LocalFunction{Scope: []int{base + a.k}, Costs: a.costs})
	}
	return out
}

// gather sets the kept context variables of in from the neighbours'
// values vals (every context slot) and, on a new response (stale),
// refills the aggregates.
func (rc *respContext) gather(nb *Neighbourhood, vals, in []int) {
	for i, s := range rc.kept {
		in[i] = vals[s]
	}
	if !rc.stale {
		return
	}
	rc.stale = false
	for ai := range rc.conds {
		a := &rc.conds[ai]
		for v := range a.costs {
			sum := 0.0
			for _, i := range a.funcs {
				c := nb.evalAt(&nb.funcs[i], v, vals)
				if mva.IsHard(c) && rc.penalty > 0 {
					c = rc.penalty
				}
				sum += c
			}
			a.costs[v] = sum
		}
	}
}

// evalAt is the cost of external function f, whose only own variable is
// some boundary variable k, at b_k = v and the other agents' variables at ctx.
func (nb *Neighbourhood) evalAt(f *extFunc, v int, ctx []int) float64 {
	nb.checks++
	idx := 0
	dims := nb.fdims(f)
	for i, r := range nb.scope(f) {
		x := v
		if r >= 0 {
			x = ctx[r]
		}
		idx = idx*int(dims[i]) + x
	}
	return nb.costs(f)[idx]
}
