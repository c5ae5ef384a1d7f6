package baseline

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/hearth-dcop/hearth/devices"
)

// ImproveOptions bound Improve. The zero value is the documented default.
type ImproveOptions struct {
	Options
	// Kicks is the number of escapes from a local optimum (0 means
	// DefaultKicks, negative none: plain descent).
	Kicks int
	// Rounds bounds the rounds of one descent (0 means
	// max(DefaultRounds, 2·homes)).
	Rounds int
	// KickedHomes bounds the escapes by the homes they perturb in all:
	// no escape starts once the earlier ones have kicked this many homes
	// (0 means DefaultKickedHomes, negative no bound).
	KickedHomes int
	// Seed draws the kicked homes and their perturbations.
	Seed uint64
	// FeederLimits, when not nil, is the feeder limit per coordination
	// window (one per n.Windows, in model power units; +Inf for none)
	// that the moves keep in place of n's one FeederLimit: a street whose
	// other homes (energy homes, outside n) commit unevenly across the
	// windows leaves n's homes a different room in each. n.FeederLimit
	// still decides what n.Evaluate calls feasible, so each window's
	// limit should not exceed it where it is hard. Nil keeps n's
	// FeederLimit in every window.
	FeederLimits []float64
}

// limits returns the feeder limit of every window of n that the moves
// keep, nil for none.
func (o *ImproveOptions) limits(n *devices.Neighbourhood) ([]float64, error) {
	if o.FeederLimits != nil {
		if len(o.FeederLimits) != len(n.Windows) {
			return nil, fmt.Errorf("%d feeder limits for %d coordination windows", len(o.FeederLimits), len(n.Windows))
		}
		for w, l := range o.FeederLimits {
			if math.IsNaN(l) {
				return nil, fmt.Errorf("window %d: the feeder limit is not a number", w)
			}
		}
		return o.FeederLimits, nil
	}
	if n.FeederLimit <= 0 {
		return nil, nil
	}
	out := make([]float64, len(n.Windows))
	for w := range out {
		out[w] = n.FeederLimit
	}
	return out, nil
}

// DefaultKickedHomes is Improve's default bound on the homes its escapes
// kick in all (ImproveOptions.KickedHomes). An escape kicks a tenth of
// the street (kickCount) and then re-descends it, every home answering in
// every round, so ten escapes cost a hundred times a home's response per
// home while what they find shrinks as the street's load flattens: on the
// 251-home SHDS files the ten escapes from MGM's plan took 94 rounds of
// 251 responses (158 s of two cores) and lowered the objective by 2 in
// 4.3·10^8. With 100 homes in all, streets of up to 109 homes keep their
// ten escapes (and the 7- to 71-home files their plans) and a 251-home
// street gets four.
const DefaultKickedHomes = 100

// kickCount is the number of homes an escape kicks on a street of H
// homes: a tenth of them, at least two.
func kickCount(H int) int { return max(2, H/10) }

func (o *ImproveOptions) kickedHomes() int {
	if o.KickedHomes == 0 {
		return DefaultKickedHomes
	}
	return o.KickedHomes
}

// DefaultKicks is Improve's default number of escapes. Each costs a
// descent, a few rounds in which every home re-solves its best response;
// on dm_7_1_3, 10 escapes cost 1.2 s of CPU and 30 found 0.13% more.
const DefaultKicks = 10

// Improvement is what Improve found.
type Improvement struct {
	// Schedule is the best schedule found and Eval its evaluation;
	// Flow is FlowObjective of it, Start that of the start.
	Schedule    *devices.Schedule
	Eval        *devices.Evaluation
	Flow, Start float64
	// Rounds counts the rounds of best responses, Moves the homes moved
	// in them, Kicks the escapes tried and Accepted those that led to a
	// better schedule; Responses the home best responses computed (every
	// home in every round, and the kicked homes).
	Rounds, Moves, Kicks, Accepted, Responses int
	// Budgeted is true when ImproveOptions.KickedHomes stopped the
	// escapes before Kicks of them had run.
	Budgeted bool
	// Stopped is true when ctx ended the search: Schedule is then the
	// best found until then.
	Stopped bool
	// Approximate counts the homes whose best responses are block
	// descent (too wide for an exact one).
	Approximate int
	Wall        time.Duration
}

// Improve lowers FlowObjective — the bill plus the peak term on the load
// that flows — from a feasible start by best responses on the real load:
// every home's best schedule given its neighbours' per-slot load (exact,
// or block descent for homes too wide; see SHMGM), as SH-MGM computes
// them. Two things differ from SH-MGM:
//
//   - joint moves: each round the homes that gain are taken in order of
//     gain, and a home moves with those taken before it when its gain
//     exceeds the sum of its interactions with their moves (2·peak·Σ_t
//     ΔP_i(t)·ΔP_j(t) for each linked j); the objective then falls by at
//     least the sum of the movers' gains less their interactions, so it
//     falls every round, and dozens of homes move in a round where SH-MGM
//     moves one;
//   - escapes: at a local optimum (no home gains) a seeded kick makes a
//     few homes answer a perturbed neighbour load (random extra load in
//     every slot, up to the street's peak, or the peak added to the
//     street's peak slot for homes drawing there), the descent runs again, and
//     the result is kept when it is better, otherwise the best schedule
//     is restored (iterated local search).
//
// It is deterministic: bounded by rounds and kicks, not time, and the
// same start and seed give the same schedule whatever the number of
// workers. When ctx ends it returns the best schedule found so far with
// Stopped set, not an error. The start must keep every rule and, where n
// has a feeder limit, fit it; Improve keeps the limit by refusing a
// round's moves that break it. With o.FeederLimits it keeps each
// window's own limit instead, and a start above one is an error.
func Improve(ctx context.Context, n *devices.Neighbourhood, start *devices.Schedule, o ImproveOptions) (*Improvement, error) {
	began := time.Now()
	fail := func(err error) (*Improvement, error) { return nil, fmt.Errorf("improve: %w", err) }
	if err := n.Validate(); err != nil {
		return fail(err)
	}
	ev, err := n.Evaluate(start)
	if err != nil {
		return fail(err)
	}
	if !ev.Feasible {
		return fail(fmt.Errorf("the start is not feasible: %v", ev.Violations))
	}
	limits, err := o.limits(n)
	if err != nil {
		return fail(err)
	}
	if o.FeederLimits != nil {
		if w := StreetOver(n, limits, func(i int) []float64 {
			return loadOf(&n.Homes[i], &start.Homes[i], n.Horizon.Slots)
		}); w >= 0 {
			return fail(fmt.Errorf("the start's committed caps exceed window %d's feeder limit %g", w, limits[w]))
		}
	}
	H := len(n.Homes)
	imp := &Improvement{Schedule: cloneSchedule(start), Eval: ev}
	imp.Start = FlowObjective(n, ev)
	imp.Flow = imp.Start
	if H == 0 || n.Weights.Peak <= 0 {
		imp.Wall = time.Since(began)
		return imp, nil
	}
	o.Options = o.Options.withPool()
	s := &improver{n: n, o: &o, limits: limits, H: H, homes: make([]responder, H), loads: make([][]float64, H), gain: make([]float64, H)}
	s.nbrs = neighbourLists(n)
	s.linked = make([]map[int]bool, H)
	for i := range s.linked {
		s.linked[i] = map[int]bool{}
		for _, j := range s.nbrs[i] {
			s.linked[i][j] = true
		}
	}
	s.slots = coordinated(n)
	dt := n.Horizon.Hours()
	s.peakW = n.Weights.Peak * dt * dt
	exact := make([]bool, H)
	if err := parallel(ctx, o.workers(), H, func(i int) error {
		r, ok, err := newResponder(n, i, &o.Options)
		if err != nil {
			return err
		}
		s.homes[i], exact[i] = r, ok
		return r.set(start.Homes[i])
	}); err != nil {
		if ctx.Err() != nil {
			imp.Stopped, imp.Wall = true, time.Since(began)
			return imp, nil
		}
		return fail(err)
	}
	for _, ok := range exact {
		if !ok {
			imp.Approximate++
		}
	}
	s.reset(start)

	kicks := o.Kicks
	if kicks == 0 {
		kicks = DefaultKicks
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))
	best := cloneSchedule(start)
	bestFlow := imp.Start
	kicked := 0
	for k := 0; ; k++ {
		stopped, err := s.descend(ctx, imp)
		if err != nil {
			return fail(err)
		}
		cur := s.schedule()
		cev, err := n.Evaluate(cur)
		if err != nil {
			return fail(err)
		}
		if f := FlowObjective(n, cev); cev.Feasible && f < bestFlow-1e-9*math.Max(1, math.Abs(bestFlow)) {
			best, bestFlow = cur, f
			imp.Eval = cev
			if k > 0 {
				imp.Accepted++
			}
		}
		if stopped {
			imp.Stopped = true
			break
		}
		if k >= kicks || kicks < 0 {
			break
		}
		if budget := o.kickedHomes(); budget > 0 && kicked+kickCount(H) > budget {
			imp.Budgeted = true
			break
		}
		kicked += kickCount(H)
		// Restore the best schedule, then kick from it.
		if k > 0 {
			for i := range H {
				if err := s.homes[i].set(best.Homes[i]); err != nil {
					return fail(err)
				}
			}
			s.reset(best)
		}
		imp.Kicks++
		if err := s.kick(ctx, rng, k, imp); err != nil {
			if ctx.Err() != nil {
				imp.Stopped = true
				break
			}
			return fail(err)
		}
	}
	imp.Schedule, imp.Flow = best, bestFlow
	imp.Wall = time.Since(began)
	return imp, nil
}

// improver is Improve's state: the homes' responders, their adopted
// loads and their last gains.
type improver struct {
	n      *devices.Neighbourhood
	o      *ImproveOptions
	limits []float64 // per window; nil for none
	H      int
	homes  []responder
	loads  [][]float64
	gain   []float64
	nbrs   [][]int
	linked []map[int]bool
	slots  []int
	peakW  float64
	// cand[i] is home i's last candidate and its load.
	cand     []devices.HomeSchedule
	candLoad [][]float64
}

// reset sets the adopted loads from s.
func (s *improver) reset(sc *devices.Schedule) {
	for i := range s.H {
		s.loads[i] = loadOf(&s.n.Homes[i], &sc.Homes[i], s.n.Horizon.Slots)
	}
}

func (s *improver) schedule() *devices.Schedule {
	out := &devices.Schedule{Homes: make([]devices.HomeSchedule, s.H)}
	for i := range s.H {
		out.Homes[i] = s.homes[i].schedule()
	}
	return out
}

// neighbourLoad is N_i(t), the adopted load of i's neighbours, plus
// extra when not nil.
func (s *improver) neighbourLoad(i int, extra []float64) []float64 {
	N := make([]float64, s.n.Horizon.Slots)
	for _, j := range s.nbrs[i] {
		for t, v := range s.loads[j] {
			N[t] += math.Max(v, 0)
		}
	}
	for t := range extra {
		N[t] += extra[t]
	}
	return N
}

// respond computes every home's best response and gain in parallel.
func (s *improver) respond(ctx context.Context) error {
	s.cand = make([]devices.HomeSchedule, s.H)
	s.candLoad = make([][]float64, s.H)
	return parallel(ctx, s.o.workers(), s.H, func(i int) error {
		g, err := s.homes[i].respond(ctx, s.neighbourLoad(i, nil))
		if err != nil {
			return err
		}
		s.gain[i] = g
		if g > 0 {
			s.cand[i] = s.homes[i].candidate()
			s.candLoad[i] = loadOf(&s.n.Homes[i], &s.cand[i], s.n.Horizon.Slots)
		}
		return nil
	})
}

// interaction is 2·peak·Σ_t ΔP_i(t)·ΔP_j(t) over the coordinated slots
// for the moves of i and j to their candidates.
func (s *improver) interaction(i, j int) float64 {
	sum := 0.0
	for _, t := range s.slots {
		di := math.Max(s.candLoad[i][t], 0) - math.Max(s.loads[i][t], 0)
		dj := math.Max(s.candLoad[j][t], 0) - math.Max(s.loads[j][t], 0)
		sum += s.n.Horizon.Ratio(t) * di * dj
	}
	return 2 * s.peakW * sum
}

// descend runs rounds of joint best-response moves until no home gains
// or the round bound; stopped is true when ctx ended it.
func (s *improver) descend(ctx context.Context, imp *Improvement) (stopped bool, err error) {
	rounds := s.o.Rounds
	if rounds == 0 {
		rounds = max(DefaultRounds, 2*s.H)
	}
	for range rounds {
		if err := s.respond(ctx); err != nil {
			if ctx.Err() != nil {
				return true, nil
			}
			return false, err
		}
		imp.Rounds++
		imp.Responses += s.H
		order := make([]int, 0, s.H)
		for i := range s.H {
			if s.gain[i] > 0 {
				order = append(order, i)
			}
		}
		if len(order) == 0 {
			return false, nil
		}
		slices.SortStableFunc(order, func(a, b int) int {
			switch {
			case s.gain[a] > s.gain[b]:
				return -1
			case s.gain[a] < s.gain[b]:
				return 1
			}
			return a - b
		})
		var movers []int
		for _, i := range order {
			inter := 0.0
			for _, j := range movers {
				if s.linked[i][j] {
					inter += s.interaction(i, j)
				}
			}
			if inter < s.gain[i] {
				movers = append(movers, i)
			}
		}
		if s.limits != nil && !s.fits(movers) {
			movers = movers[:1]
			if !s.fits(movers) {
				return false, nil
			}
		}
		for _, i := range movers {
			s.homes[i].adopt()
			s.loads[i] = s.candLoad[i]
		}
		imp.Moves += len(movers)
	}
	return false, nil
}

// fits reports whether the street, with movers at their candidates,
// keeps the feeder limits: in every window the homes' tightest committed
// caps (devices.Tightest of their top draw there) add up to at most the
// window's.
func (s *improver) fits(movers []int) bool {
	moving := map[int]bool{}
	for _, i := range movers {
		moving[i] = true
	}
	return s.fitsLoads(func(i int) []float64 {
		if moving[i] {
			return s.candLoad[i]
		}
		return s.loads[i]
	})
}

func (s *improver) fitsLoads(load func(i int) []float64) bool {
	return StreetOver(s.n, s.limits, load) < 0
}

// streetFits reports whether the street, home i drawing load(i), keeps
// n's feeder limit on the committed caps that fit the draws tightest.
func streetFits(n *devices.Neighbourhood, load func(i int) []float64) bool {
	limits := make([]float64, len(n.Windows))
	for w := range limits {
		limits[w] = n.FeederLimit
	}
	return StreetOver(n, limits, load) < 0
}

// StreetOver returns the first window in which the street, home i
// drawing load(i) (model units), exceeds its limit (limits[w]) on the committed caps
// that fit the draws tightest, or a draw fits no cap; −1 where it keeps
// them all.
func StreetOver(n *devices.Neighbourhood, limits []float64, load func(i int) []float64) int {
	for w, win := range n.Windows {
		sum := 0.0
		for i := range n.Homes {
			l := load(i)
			top := math.Inf(-1)
			for t := win.From; t < win.To; t++ {
				top = math.Max(top, l[t])
			}
			caps := n.LevelCaps(i, w)
			k := devices.Tightest(caps, top)
			if k < 0 {
				return w
			}
			sum += caps[k]
		}
		if !devices.Fits(sum, limits[w]) {
			return w
		}
	}
	return -1
}

// kick moves a few seeded homes to their best response to a raised
// neighbour load. Even kicks raise every slot by a random amount of up to
// the street's peak; odd kicks raise only the slot of the street's peak,
// by the peak, for homes drawn in proportion to their draw there, so
// that they move their load out of it.
func (s *improver) kick(ctx context.Context, rng *rand.Rand, k int, imp *Improvement) error {
	T := s.n.Horizon.Slots
	street := make([]float64, T)
	for i := range s.H {
		for t := range T {
			street[t] += math.Max(s.loads[i][t], 0)
		}
	}
	peak, top := 0.0, 0
	for _, t := range s.slots {
		if street[t] > peak {
			peak, top = street[t], t
		}
	}
	count := kickCount(s.H)
	var picked []int
	if k%2 == 1 && peak > 0 {
		weight := make([]float64, s.H)
		for i := range s.H {
			weight[i] = math.Max(s.loads[i][top], 0)
		}
		for range count {
			total := 0.0
			for _, w := range weight {
				total += w
			}
			if total <= 0 {
				break
			}
			x := rng.Float64() * total
			for i, w := range weight {
				if x < w || i == s.H-1 {
					picked = append(picked, i)
					weight[i] = 0
					break
				}
				x -= w
			}
		}
	} else {
		picked = rng.Perm(s.H)[:count]
	}
	slices.Sort(picked)
	for _, i := range picked {
		extra := make([]float64, T)
		if k%2 == 1 {
			extra[top] = peak
		} else {
			for t := range extra {
				extra[t] = rng.Float64() * peak
			}
		}
		if _, err := s.homes[i].respond(ctx, s.neighbourLoad(i, extra)); err != nil {
			return err
		}
		imp.Responses++
		hs := s.homes[i].candidate()
		l := loadOf(&s.n.Homes[i], &hs, T)
		if s.limits != nil && !s.fitsLoads(func(j int) []float64 {
			if j == i {
				return l
			}
			return s.loads[j]
		}) {
			continue // the kick would break the feeder limit
		}
		s.homes[i].adopt()
		s.loads[i] = l
	}
	return nil
}

// neighbourLists returns every home's linked homes in the order of
// n.Linked(), the order in which Improve and Descend sum their loads.
func neighbourLists(n *devices.Neighbourhood) [][]int {
	nbrs := make([][]int, len(n.Homes))
	for _, l := range n.Linked() {
		nbrs[l[0]] = append(nbrs[l[0]], l[1])
		nbrs[l[1]] = append(nbrs[l[1]], l[0])
	}
	return nbrs
}

func cloneSchedule(sc *devices.Schedule) *devices.Schedule {
	out := &devices.Schedule{Homes: make([]devices.HomeSchedule, len(sc.Homes))}
	for i, hs := range sc.Homes {
		out.Homes[i] = clone(hs)
		if hs.Levels != nil {
			out.Homes[i].Levels = slices.Clone(hs.Levels)
		}
	}
	return out
}
