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
	// jointMax is the largest of the split buckets' joint tables
	// (mbStep.joint), the size of joint, which run fills one at a time.
	jointMax int
	joint    []float64
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
	// Otten 2011): the mini-bucket's min-marginal mu over v, and delta,
	// an extra input of the message, shifts it to the mean of the
	// bucket's min-marginals. The shifts sum to zero over the bucket, so
	// the bound stays a bound, and it is tighter. mu is the minimum of
	// each v-block of joint, the sum of the mini-bucket's factors over v
	// and out (v slowest), or, where that sum could round differently
	// from the min-marginal join's, of mm, that join (mmJoinOrder).
	// Before, mm was always the join: with several variables eliminated
	// it ran minGeneric's odometer per pair of entries, a fifth of
	// 75-16-5's heuristic (docs/DESIGN.md, AOBB (7d)). mmReads is what
	// that join reads, which the search's escalation rule counts.
	mm      *JoinProject
	joint   *JoinProject
	mu      []float64
	delta   *Factor
	mmReads int64
}

// mbSymbolic partitions the buckets of pt for the i-bound ibound, given
// the inputs' scopes (interior local variables), and returns the steps and
// their output entries in all, or ok false as soon as the entries pass
// limit. Within a bucket, factors go largest scope first into the
// mini-bucket, of those whose joint scope stays within ibound variables,
// that it adds the fewest new variables to (the first such on ties; a
// factor that fits none, or is larger than ibound, gets a mini-bucket of
// its own). Grouping by overlap keeps factors that share variables in
// one minimisation, the scope-based partitioning of the MBE literature
// (Rollon and Dechter 2010): against the first mini-bucket that fits, it
// took gen_circuit500 983 → 676 million instructions, gen_random6x8 78 →
// 61, example 48 → 39, and no file of /work/bench and /work/wider that
// auto gives AOBB up by more than 1% (docs/DESIGN.md, AOBB (7c)).
//
// With build false it only counts: it returns no steps and leaves the
// messages' scopes unsorted (the partition depends on their sizes only),
// and it reuses sc's buffers, so that newMiniBuckets' bisection over the
// i-bounds allocates almost nothing; its allocations were most of the
// planning's time on the SHDS responses.
func mbSymbolic(pt *pseudoTree, domains []int, scopes [][]int, ibound, limit int, build bool, sc *mbScratch) (steps []mbStep, entries int, ok bool) {
	if len(sc.buckets) != len(domains) {
		sc.buckets = make([][]int, len(domains))
		sc.mark = make([]int, len(domains)) // stamp of the last scope marked
	}
	buckets := sc.buckets
	for v := range buckets {
		buckets[v] = buckets[v][:0]
	}
	all := append(sc.all[:0], scopes...)
	sc.arena = sc.arena[:0]
	for i, s := range scopes {
		if v := pt.deepest(s, 0); v >= 0 {
			buckets[v] = append(buckets[v], i)
		}
	}
	mark := sc.mark
	for _, v := range pt.order {
		items := append(sc.items[:0], buckets[v]...)
		sc.items = items
		slices.SortStableFunc(items, func(a, b int) int { return len(all[b]) - len(all[a]) })
		nm := 0 // minis in use: sc.minis[:nm]
		for _, it := range items {
			home, least := -1, 0
			for k := range nm {
				m := &sc.minis[k]
				sc.stamp++
				for _, u := range m.scope {
					mark[u] = sc.stamp
				}
				extra := 0
				for _, u := range all[it] {
					if mark[u] != sc.stamp {
						extra++
					}
				}
				if len(m.scope)+extra <= ibound && (home < 0 || extra < least) {
					home, least = k, extra
				}
			}
			if home >= 0 {
				// Mark the chosen mini-bucket's scope again: the
				// stamp is the last one tried's.
				sc.stamp++
				for _, u := range sc.minis[home].scope {
					mark[u] = sc.stamp
				}
			} else {
				if nm == len(sc.minis) {
					sc.minis = append(sc.minis, mbMini{})
				}
				home = nm
				nm++
				sc.minis[home].in = sc.minis[home].in[:0]
				sc.minis[home].scope = sc.minis[home].scope[:0]
				sc.stamp++
			}
			m := &sc.minis[home]
			for _, u := range all[it] {
				if mark[u] != sc.stamp {
					mark[u] = sc.stamp
					m.scope = append(m.scope, u)
				}
			}
			m.in = append(m.in, it)
		}
		for k := range nm {
			m := &sc.minis[k]
			start := len(sc.arena)
			for _, u := range m.scope {
				if u != v {
					sc.arena = append(sc.arena, u)
				}
			}
			// The arena's earlier scopes stay valid when it grows: they
			// keep the old array, which nothing writes again.
			out := sc.arena[start:len(sc.arena):len(sc.arena)]
			if build {
				out = slices.Clone(out)
				// Output in search order from the root: deepest last, so
				// the search's lookups walk the table forwards.
				slices.SortFunc(out, func(a, b int) int { return pt.pos[b] - pt.pos[a] })
			}
			n := 1
			for _, u := range out {
				if n > limit/domains[u] {
					sc.all = all
					return nil, 0, false
				}
				n *= domains[u]
			}
			entries += n
			if entries > limit {
				sc.all = all
				return nil, 0, false
			}
			target := pt.deepest(out, 0)
			if build {
				steps = append(steps, mbStep{v: v, in: slices.Clone(m.in), out: out, target: target})
			}
			all = append(all, out)
			if target >= 0 {
				buckets[target] = append(buckets[target], len(all)-1)
			}
		}
	}
	sc.all = all
	return steps, entries, true
}

// mbScratch is mbSymbolic's buffers, kept across its calls by one
// newMiniBuckets.
type mbScratch struct {
	buckets [][]int // per variable, the scopes (indices in all) in its bucket
	all     [][]int // the inputs' scopes, then the messages'
	mark    []int   // per variable, the stamp of the last scope marked
	stamp   int
	items   []int
	minis   []mbMini // the mini-buckets of a bucket
	arena   []int    // the messages' scopes when counting
}

// mbMini is a mini-bucket: its factors (indices in mbScratch.all) and
// its joint scope.
type mbMini struct {
	in, scope []int
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
	var sc mbScratch
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if _, _, ok := mbSymbolic(pt, domains, scopes, mid, maxEntries, false, &sc); ok {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if i := lo; i >= 1 {
		steps, entries, _ := mbSymbolic(pt, domains, scopes, i, maxEntries, true, &sc)
		mb := &miniBuckets{ibound: i, exact: i >= pt.width+1, factors: slices.Clone(inputs), nIn: len(inputs), steps: steps, entries: entries}
		// The messages' tables are runs of one slab (entries is their
		// sum): a few hundred allocations of an SHDS response's
		// heuristic become one.
		slab := make([]float64, entries)

		for si := range steps {
			st := &mb.steps[si]
			in := make([]*Factor, len(st.in))
			for k, j := range st.in {
				in[k] = mb.factors[j]
			}
			if split := (si > 0 && steps[si-1].v == st.v) || (si+1 < len(steps) && steps[si+1].v == st.v); split {
				d := domains[st.v]
				st.mu = make([]float64, d)
				st.mmReads = mmReads(in, st.v, d)
				if order, ok := mmJoinOrder(in, st.v); ok {
					joint, err := NewJoinProjectLimit(order, nil, append([]int{st.v}, st.out...), math.MaxInt)
					if err != nil {
						return nil, fmt.Errorf("mini-buckets: joint table of variable %d: %w", st.v, err)
					}
					st.joint = joint
					mb.jointMax = max(mb.jointMax, joint.Rows())
				} else {
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
					st.mm = mm
				}
				st.delta = &Factor{Vars: []int{st.v}, Dims: []int{d}, Costs: make([]float64, d)}
				in = append(in, st.delta)
			}
			jp, err := NewJoinProjectLimit(in, []int{st.v}, st.out, math.MaxInt)
			if err != nil {
				return nil, fmt.Errorf("mini-buckets: eliminating variable %d: %w", st.v, err)
			}
			mb.plans = append(mb.plans, jp)
			n := jp.Rows()
			if n > len(slab) { // not expected: entries sums the same tables
				slab = make([]float64, n)
			}
			mb.factors = append(mb.factors, jp.Output(slab[:n:n]))
			slab = slab[n:]
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
			if group[0].delta != nil {
				r, err := mb.minMarginals(ctx, group, workers)
				reads += r
				if err != nil {
					return reads, err
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

// minMarginals sets the min-marginals mu of a split bucket's
// mini-buckets, group, and returns the reads counted for them (those of
// the min-marginal joins, mbStep.mmReads).
func (mb *miniBuckets) minMarginals(ctx context.Context, group []mbStep, workers int) (int64, error) {
	var reads int64
	if len(mb.joint) < mb.jointMax {
		mb.joint = make([]float64, mb.jointMax)
	}
	for k := range group {
		st := &group[k]
		if st.joint == nil {
			if err := st.mm.Run(ctx, st.mu, nil, workers); err != nil {
				return reads, err
			}
		} else {
			joint := mb.joint[:st.joint.Rows()]
			if err := st.joint.Run(ctx, joint, nil, workers); err != nil {
				return reads, err
			}
			blockMinima(st.mu, joint)
		}
		reads += st.mmReads
	}
	return reads, nil
}

// blockMinima sets mu[d] to the minimum of joint's d-th block of
// len(joint)/len(mu) entries: the min-marginal of the variable that is
// slowest in joint's layout.
func blockMinima(mu, joint []float64) {
	n := len(joint) / len(mu)
	for d := range mu {
		best := math.Inf(1)
		for _, c := range joint[d*n : (d+1)*n] {
			best = min(best, c)
		}
		mu[d] = best
	}
}

// mmJoinOrder returns the factors in, v's mini-bucket, in the order in
// which a join without eliminated variables sums every entry exactly as
// the min-marginal join over v would (so that mu, the shifts and the
// search stay the same to the bit): the join adds its inputs left to
// right, and the min-marginal join adds those over v alone first, then
// the others in order, except with one other variable, where it adds
// the sum of those without v (as one term) before those with it; that
// term is a sum of two or more factors, not left to right, and ok is
// false.
func mmJoinOrder(in []*Factor, v int) (order []*Factor, ok bool) {
	var only, without, with []*Factor
	var other []int
	for _, f := range in {
		switch {
		case !slices.ContainsFunc(f.Vars, func(u int) bool { return u != v }):
			only = append(only, f)
		case !slices.Contains(f.Vars, v):
			without = append(without, f)
		default:
			with = append(with, f)
		}
		for _, u := range f.Vars {
			if u != v && !slices.Contains(other, u) {
				other = append(other, u)
			}
		}
	}
	order = append(only, without...)
	if len(other) == 1 {
		if len(without) > 1 {
			return nil, false
		}
		return append(order, with...), true
	}
	// Several variables eliminated: the others in their input order.
	order = only
	for _, f := range in {
		if !slices.Contains(only, f) {
			order = append(order, f)
		}
	}
	return order, true
}

// mmReads is what the min-marginal join of the factors in over v (d
// values) reads: an input without other variables once per value, the
// others once per value and assignment of the other variables.
func mmReads(in []*Factor, v, d int) int64 {
	var other []int
	size := int64(1)
	for _, f := range in {
		for i, u := range f.Vars {
			if u != v && !slices.Contains(other, u) {
				other = append(other, u)
				size *= int64(f.Dims[i])
			}
		}
	}
	var n int64
	for _, f := range in {
		if slices.ContainsFunc(f.Vars, func(u int) bool { return u != v }) {
			n += int64(d) * size
		} else {
			n += int64(d)
		}
	}
	return n
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
