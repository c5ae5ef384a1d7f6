package local

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
)

// miniBuckets is static mini-bucket elimination, MBE(i) (Dechter and
// Rish), along a pseudo-tree's elimination order: each bucket's factors
// are split into mini-buckets of at most i variables, and each mini-bucket
// is one JoinProject that minimises the bucket's variable out of its sum.
// Splitting moves a minimum inside a sum, so every message is a lower
// bound of what exact elimination would send; with i past the induced
// width no bucket is split and the messages are exact. The messages are
// the AND/OR search's heuristic (AOBB.expand).
type miniBuckets struct {
	ibound  int
	exact   bool      // no bucket was split: the messages are exact
	factors []*Factor // the nIn inputs, then one output per step
	nIn     int
	steps   []mbStep
	plans   []*JoinProject
	entries int // output entries of all steps
}

// mbStep is one mini-bucket: eliminate v from the factors in (indices in
// miniBuckets.factors) into a message over out, placed in the bucket of
// target, the deepest variable of out (-1 when out is empty: a constant).
type mbStep struct {
	v      int
	in     []int
	out    []int
	target int
	// In a split bucket, moment matching (Flerova, Ihler, Dechter and
	// Otten 2011): mm computes the mini-bucket's min-marginal mu over v,
	// and delta, an extra input of the message, shifts it to the mean of
	// the bucket's min-marginals. The shifts sum to zero over the bucket,
	// so the bound stays a bound, and it is tighter.
	mm    *JoinProject
	mu    []float64
	delta *Factor
}

// mbSymbolic partitions the buckets of pt for the i-bound ibound, given
// the inputs' scopes (interior local variables), and returns the steps and
// their output entries in all, or ok false as soon as the entries pass
// limit. Within a bucket, factors go largest scope first into the first
// mini-bucket whose joint scope stays within ibound variables (a factor
// larger than ibound gets a mini-bucket of its own).
func mbSymbolic(pt *pseudoTree, domains []int, scopes [][]int, ibound, limit int) (steps []mbStep, entries int, ok bool) {
	buckets := make([][]int, len(domains))
	all := slices.Clone(scopes)
	for i, sc := range scopes {
		if v := pt.deepest(sc, 0); v >= 0 {
			buckets[v] = append(buckets[v], i)
		}
	}
	mark := make([]int, len(domains)) // stamp of the last scope marked
	stamp := 0
	type mini struct {
		in    []int
		scope []int
	}
	for _, v := range pt.order {
		items := slices.Clone(buckets[v])
		slices.SortStableFunc(items, func(a, b int) int { return len(all[b]) - len(all[a]) })
		var minis []*mini
		for _, it := range items {
			var home *mini
			for _, m := range minis {
				stamp++
				for _, u := range m.scope {
					mark[u] = stamp
				}
				extra := 0
				for _, u := range all[it] {
					if mark[u] != stamp {
						extra++
					}
				}
				if len(m.scope)+extra <= ibound {
					home = m
					break
				}
			}
			if home == nil {
				home = &mini{}
				minis = append(minis, home)
				stamp++
			}
			for _, u := range all[it] {
				if mark[u] != stamp {
					mark[u] = stamp
					home.scope = append(home.scope, u)
				}
			}
			home.in = append(home.in, it)
		}
		for _, m := range minis {
			var out []int
			for _, u := range m.scope {
				if u != v {
					out = append(out, u)
				}
			}
			// Output in search order from the root: deepest last, so the
			// search's lookups walk the table forwards.
			slices.SortFunc(out, func(a, b int) int { return pt.pos[b] - pt.pos[a] })
			n := 1
			for _, u := range out {
				if n > limit/domains[u] {
					return nil, 0, false
				}
				n *= domains[u]
			}
			entries += n
			if entries > limit {
				return nil, 0, false
			}
			target := pt.deepest(out, 0)
			steps = append(steps, mbStep{v: v, in: m.in, out: out, target: target})
			all = append(all, out)
			if target >= 0 {
				buckets[target] = append(buckets[target], len(all)-1)
			}
		}
	}
	return steps, entries, true
}

// newMiniBuckets chooses the largest i-bound (at most maxIBound when
// positive) whose messages fit maxEntries in all, and plans them over the
// factors inputs. The i-bound past the width gives exact messages.
func newMiniBuckets(pt *pseudoTree, domains []int, inputs []*Factor, maxEntries, maxIBound int) (*miniBuckets, error) {
	scopes := make([][]int, len(inputs))
	for i, f := range inputs {
		scopes[i] = f.Vars
	}
	top := pt.width + 1
	for _, sc := range scopes {
		top = max(top, len(sc))
	}
	if maxIBound > 0 {
		top = min(top, maxIBound)
	}
	// The largest i-bound that fits, by bisection: the entries grow with
	// i (the greedy partition makes that nearly, not strictly, so; any i
	// found fits), and each try is a pass over all buckets, which on a
	// 900-variable grid of width 40 took half the planning when every i
	// from the top was tried.
	lo, hi := 0, top // lo fits (0: none), hi+1 does not
	var steps []mbStep
	var entries int
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if st, e, ok := mbSymbolic(pt, domains, scopes, mid, maxEntries); ok {
			lo, steps, entries = mid, st, e
		} else {
			hi = mid - 1
		}
	}
	if i := lo; i >= 1 {
		if steps == nil {
			steps, entries, _ = mbSymbolic(pt, domains, scopes, i, maxEntries)
		}
		mb := &miniBuckets{ibound: i, exact: i >= pt.width+1, factors: slices.Clone(inputs), nIn: len(inputs), steps: steps, entries: entries}

		for si := range steps {
			st := &mb.steps[si]
			in := make([]*Factor, len(st.in))
			for k, j := range st.in {
				in[k] = mb.factors[j]
			}
			if split := (si > 0 && steps[si-1].v == st.v) || (si+1 < len(steps) && steps[si+1].v == st.v); split {
				// Moment matching: the mini-bucket's min-marginal over v.
				var elim []int
				for _, f := range in {
					for _, u := range f.Vars {
						if u != st.v && !slices.Contains(elim, u) {
							elim = append(elim, u)
						}
					}
				}
				mm, err := NewJoinProjectLimit(in, elim, []int{st.v}, math.MaxInt)
				if err != nil {
					return nil, fmt.Errorf("mini-buckets: min-marginal of variable %d: %w", st.v, err)
				}
				d := domains[st.v]
				st.mm, st.mu = mm, make([]float64, d)
				st.delta = &Factor{Vars: []int{st.v}, Dims: []int{d}, Costs: make([]float64, d)}
				in = append(in, st.delta)
			}
			jp, err := NewJoinProjectLimit(in, []int{st.v}, st.out, math.MaxInt)
			if err != nil {
				return nil, fmt.Errorf("mini-buckets: eliminating variable %d: %w", st.v, err)
			}
			mb.plans = append(mb.plans, jp)
			mb.factors = append(mb.factors, jp.Output(make([]float64, jp.Rows())))
		}
		return mb, nil
	}
	// Even i = 1 (one factor per mini-bucket) needs messages as large as
	// the factors minus a variable; past the budget, no heuristic.
	return &miniBuckets{factors: slices.Clone(inputs), nIn: len(inputs)}, nil
}

// run computes the messages whose bucket reads a factor marked in changed
// (indexed like factors; nil means all), marking their outputs, and
// returns the entries read. The mini-buckets of one bucket run together:
// their shifts depend on each other's min-marginals.
func (mb *miniBuckets) run(ctx context.Context, changed []bool, workers int) (int64, error) {
	var reads int64
	for s := 0; s < len(mb.plans); {
		v := mb.steps[s].v
		e := s + 1
		for e < len(mb.plans) && mb.steps[e].v == v {
			e++
		}
		group := mb.steps[s:e]
		run := changed == nil
		for k := range group {
			for _, j := range group[k].in {
				run = run || changed[j]
			}
		}
		if changed != nil {
			for k := s; k < e; k++ {
				changed[mb.nIn+k] = run
			}
		}
		if run {
			if group[0].mm != nil {
				for k := range group {
					if err := group[k].mm.Run(ctx, group[k].mu, nil, workers); err != nil {
						return reads, err
					}
					reads += group[k].mm.Reads()
				}
				matchMoments(group)
			}
			for k := s; k < e; k++ {
				if err := mb.plans[k].Run(ctx, mb.factors[mb.nIn+k].Costs, nil, workers); err != nil {
					return reads, err
				}
				reads += mb.plans[k].Reads()
			}
		}
		s = e
	}
	return reads, nil
}

// matchMoments sets the shifts of a split bucket's mini-buckets from their
// min-marginals: delta_k = mean - mu_k, which sum to zero over the bucket.
// A value Hard in one mini-bucket is Hard in the whole bucket, so it is
// made Hard in every mini-bucket (the sum is unchanged: Hard).
func matchMoments(group []mbStep) {
	m := float64(len(group))
	for a := range group[0].mu {
		mean, hard := 0.0, false
		for k := range group {
			if mva.IsHard(group[k].mu[a]) {
				hard = true
			}
			mean += group[k].mu[a]
		}
		mean /= m
		for k := range group {
			if hard {
				group[k].delta.Costs[a] = mva.Hard
			} else {
				group[k].delta.Costs[a] = mean - group[k].mu[a]
			}
		}
	}
}
