package baseline

import (
	"context"
	"fmt"
	"time"

	"github.com/hearth-dcop/hearth/devices"
)

// SHMGM runs the SH-MGM-style baseline (shds-model.md §5.1, profile shds):
//
//  1. first schedule: every home's optimum of J_i with no neighbour load;
//  2. round 0: every home adopts its optimum given the neighbours' first
//     schedules, all at once and unconditionally;
//  3. rounds 1..Rounds: every home computes its best schedule C_i given its
//     neighbours' current loads and its gain J_i(S_i) − J_i(C_i) ≥ 0; a
//     home moves to C_i when its gain is positive and beats every
//     neighbour's (larger, or equal and a lower index). It stops when no
//     home has a positive gain.
//
// A home whose neighbours did not move keeps its candidate and gain from
// the previous round, so sparse neighbourhoods re-solve only around the
// movers. Homes too wide for exact bucket elimination, or whose per-slot
// tables pass the compiler's limit, use block descent (respond.go) and are
// counted in Outcome.Approximate; homes solved with fewer levels than
// draws are named in Outcome.Coarse.
func SHMGM(ctx context.Context, n *devices.Neighbourhood, o Options) (*Outcome, error) {
	start := time.Now()
	if err := n.Validate(); err != nil {
		return nil, err
	}
	o = o.withPool()
	H := len(n.Homes)
	hz := n.Horizon
	nbrs := make([][]int, H)
	for _, l := range n.Linked() {
		nbrs[l[0]] = append(nbrs[l[0]], l[1])
		nbrs[l[1]] = append(nbrs[l[1]], l[0])
	}
	homes := make([]responder, H)
	gain := make([]float64, H)
	loads := make([][]float64, H)
	exact := make([]bool, H)
	out := &Outcome{Name: "shmgm"}
	w := o.workers()
	fail := func(err error) (*Outcome, error) { return nil, fmt.Errorf("SH-MGM baseline: %w", err) }

	adopt := func(i int) {
		homes[i].adopt()
		hs := homes[i].schedule()
		loads[i] = loadOf(&n.Homes[i], &hs, hz.Slots)
		gain[i] = 0 // its neighbours did not move: C_i is S_i now
	}
	// The first schedule: J_i's optimum with N ≡ 0.
	err := parallel(ctx, w, H, func(i int) error {
		r, ok, err := newResponder(n, i, &o)
		if err != nil {
			return err
		}
		homes[i], exact[i] = r, ok
		if _, err := r.respond(ctx, make([]float64, hz.Slots)); err != nil {
			return err
		}
		adopt(i)
		return nil
	})
	if err != nil {
		return fail(err)
	}
	for _, ok := range exact {
		if !ok {
			out.Approximate++
		}
	}

	// best computes C_i and g_i for the homes in set.
	best := func(set []int) error {
		return parallel(ctx, w, len(set), func(k int) error {
			i := set[k]
			N := make([]float64, hz.Slots)
			for _, j := range nbrs[i] {
				for t, v := range loads[j] {
					N[t] += v
				}
			}
			g, err := homes[i].respond(ctx, N)
			gain[i] = g
			return err
		})
	}

	// Round 0: everyone adopts its best response at once.
	all := make([]int, H)
	for i := range all {
		all[i] = i
	}
	if err := best(all); err != nil {
		return fail(err)
	}
	for i := range H {
		adopt(i)
	}

	rounds := o.Rounds
	if rounds == 0 {
		rounds = max(DefaultRounds, 2*H)
	}
	if o.Solver == nil && !o.eager && Complete(n) {
		l := &lazyMGM{n: n, o: &o, homes: homes, loads: loads, gain: gain, nbrs: nbrs, adopt: adopt}
		if err := l.rounds(ctx, rounds, out); err != nil {
			return fail(err)
		}
		return finish(n, homes, out, start)
	}
	dirty := all
	for r := 1; r <= rounds; r++ {
		if err := best(dirty); err != nil {
			return nil, fmt.Errorf("SH-MGM baseline: round %d: %w", r, err)
		}
		out.Rounds = r
		var movers []int
		for i := range H {
			if gain[i] > 0 && beatsAll(i, gain, nbrs[i]) {
				movers = append(movers, i)
			}
		}
		if len(movers) == 0 {
			out.Converged = true
			break
		}
		mark := make([]bool, H)
		for _, i := range movers {
			adopt(i)
			for _, j := range nbrs[i] {
				mark[j] = true
			}
		}
		out.Moves += len(movers)
		dirty = nil
		for i, m := range mark {
			if m {
				dirty = append(dirty, i)
			}
		}
	}

	return finish(n, homes, out, start)
}

// finish fills out with the homes' adopted schedules, their evaluation
// and the solves.
func finish(n *devices.Neighbourhood, homes []responder, out *Outcome, start time.Time) (*Outcome, error) {
	s := &devices.Schedule{Homes: make([]devices.HomeSchedule, len(homes))}
	for i := range homes {
		s.Homes[i] = homes[i].schedule()
		out.Solves += homes[i].solves()
		if homes[i].coarse() {
			out.Coarse = append(out.Coarse, n.Homes[i].Name)
		}
	}
	ev, err := n.Evaluate(s)
	if err != nil {
		return nil, fmt.Errorf("SH-MGM baseline: %w", err)
	}
	out.Schedule, out.Eval, out.Wall = s, ev, time.Since(start)
	return out, nil
}

// beatsAll is MGM's winner test: i's gain is larger than every
// neighbour's, or equal with i the lower index.
func beatsAll(i int, gain []float64, nbrs []int) bool {
	for _, j := range nbrs {
		if gain[j] > gain[i] || gain[j] == gain[i] && j < i {
			return false
		}
	}
	return true
}
