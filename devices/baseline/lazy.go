package baseline

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/devices"
)

// gainBounder is a responder whose gain is exact — its response the
// optimum of its own cost — so that the gain at one neighbour load
// bounds the gain at another without a solve.
type gainBounder interface {
	// gainBound returns an upper bound on the gain respond(to) would
	// return, given that respond(from) was the last call (its gain
	// stored by the caller as gain) and the adopted schedule has not
	// changed since; ok is false where there is none.
	gainBound(gain float64, from, to []float64) (float64, bool)
}

// gainBound bounds the gain from the peak term's form: the neighbour
// load enters a home's cost only through Σ_t f_t·(b(t) + N(t))², b(t) the
// home's coefficient in slot t (its draw, or its committed cap, plus its
// outside load). For the adopted schedule S and the optimum C' at the
// new load N' = N + Δ, J(C'|N) ≥ J(S|N) − g(N), and both costs move by
// Σ_t f_t·(2·b·Δ(t) + N'(t)² − N(t)²), so
//
//	g(N') ≤ g(N) + Σ_t 2·f_t·Δ(t)·(b_S(t) − b_C'(t)),
//
// where b_C'(t) is at least the slot's least coefficient when Δ(t) > 0
// and at most its greatest when Δ(t) < 0. A slack of 10^-8 of the home's
// cost covers the rounding of the sums and gainOf's rounding-noise floor.
func (e *exactHome) gainBound(gain float64, from, to []float64) (float64, bool) {
	if e.cur == nil {
		return 0, false
	}
	s := e.s
	p := s.c.Problem
	if s.lo == nil {
		s.coefRange()
	}
	shift := 0.0
	for w, fi := range s.outside {
		t := s.slots[w]
		d := to[t] - from[t]
		if d == 0 {
			continue
		}
		idx := 0
		for _, v := range p.Functions[fi].Scope {
			idx = idx*p.DomainSize(v) + e.cur[v]
		}
		b := s.coef(w, idx)
		f := 2 * s.peakW * s.c.Model.Horizon.Ratio(t)
		if d > 0 {
			shift += f * d * (b - s.lo[w])
		} else {
			shift += f * -d * (s.hi[w] - b)
		}
	}
	if math.IsNaN(shift) || math.IsInf(shift, 0) {
		return 0, false
	}
	return gain + shift + 1e-8*(math.Max(1, math.Abs(e.now))+shift), true
}

// coef is the coefficient b of the neighbour load in entry k of window
// w's peak function, f·(b + N)²: max(draw, 0) + O(t) where the peak term
// is on the draw, the level's cap + O(t) where it is on levels; +Inf for
// an entry no schedule takes.
func (s *homeSolver) coef(w, k int) float64 {
	if s.base != nil {
		return s.base[w][k]
	}
	o := 0.0
	if h := &s.c.Model.Homes[0]; h.OutsideLoad != nil {
		o = h.OutsideLoad[s.slots[w]]
	}
	return s.c.Homes[0].Caps[w][k] + o
}

// coefRange sets s.lo and s.hi, the least and greatest finite
// coefficient of each window's entries.
func (s *homeSolver) coefRange() {
	s.lo, s.hi = make([]float64, len(s.outside)), make([]float64, len(s.outside))
	for w, fi := range s.outside {
		lo, hi := math.Inf(1), math.Inf(-1)
		for k := range s.c.Problem.Functions[fi].Costs {
			if b := s.coef(w, k); !math.IsInf(b, 0) {
				lo, hi = math.Min(lo, b), math.Max(hi, b)
			}
		}
		if lo > hi {
			lo, hi = 0, 0
		}
		s.lo[w], s.hi[w] = lo, hi
	}
}

// lazyMGM runs SH-MGM's rounds after round 0 on a complete neighbour
// graph, where exactly one home — the one with the largest gain, the
// lowest index on a tie — moves per round and every other home's
// neighbour load changes by the mover's load. Instead of re-solving
// every home each round, it bounds each home's gain from its last solve
// (gainBounder) and solves the homes in order of their bounds, stopping
// once the best gain found beats every remaining bound: the mover, its
// schedule and the round count are those of the eager rounds (the solves
// are deterministic and a home is always solved at the round's load
// before it moves), with far fewer solves late in the run, when the
// gains are small and one move shifts little load.
type lazyMGM struct {
	n     *devices.Neighbourhood
	o     *Options
	homes []responder
	loads [][]float64
	gain  []float64
	nbrs  [][]int
	adopt func(i int)
}

func (l *lazyMGM) rounds(ctx context.Context, rounds int, out *Outcome) error {
	H, T := len(l.homes), l.n.Horizon.Slots
	// solvedAt[i] is the neighbour load of home i's last response (nil
	// before its first after round 0): gain[i] is exact there.
	solvedAt := make([][]float64, H)
	ub := make([]float64, H)
	order := make([]int, H)
	w := l.o.workers()
	for r := 1; r <= rounds; r++ {
		N := make([][]float64, H)
		for i := range H {
			// Summed as SHMGM's best sums it, so that the solves see
			// the same loads to the last bit.
			N[i] = make([]float64, T)
			for _, j := range l.nbrs[i] {
				for t, v := range l.loads[j] {
					N[i][t] += v
				}
			}
			ub[i] = l.bound(i, solvedAt[i], N[i])
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ub[b], ub[a]) })
		best, bestGain := -1, 0.0
		open := func(i int) bool { return ub[i] > 0 && (best < 0 || ub[i] >= bestGain) }
		for k := 0; k < H && open(order[k]); {
			var batch []int
			for ; k < H && len(batch) < w && open(order[k]); k++ {
				batch = append(batch, order[k])
			}
			err := parallel(ctx, w, len(batch), func(b int) error {
				i := batch[b]
				if solvedAt[i] != nil && slices.Equal(solvedAt[i], N[i]) {
					return nil // its last response is at this load
				}
				g, err := l.homes[i].respond(ctx, N[i])
				l.gain[i], solvedAt[i] = g, N[i]
				return err
			})
			if err != nil {
				return fmt.Errorf("round %d: %w", r, err)
			}
			for _, i := range batch {
				if g := l.gain[i]; g > 0 && (best < 0 || g > bestGain || g == bestGain && i < best) {
					best, bestGain = i, g
				}
			}
		}
		out.Rounds = r
		if best < 0 {
			out.Converged = true
			return nil
		}
		l.adopt(best) // its gain at N[best] is now 0: C is S
		solvedAt[best] = N[best]
		out.Moves++
	}
	return nil
}

// bound returns the upper bound on home i's gain at N: exact where its
// last response was at N, +Inf where there is none or no bound.
func (l *lazyMGM) bound(i int, from, N []float64) float64 {
	if from == nil {
		return math.Inf(1)
	}
	if slices.Equal(from, N) {
		return l.gain[i]
	}
	b, ok := l.homes[i].(gainBounder)
	if !ok {
		return math.Inf(1)
	}
	g, ok := b.gainBound(l.gain[i], from, N)
	if !ok {
		return math.Inf(1)
	}
	return g
}
