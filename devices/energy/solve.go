package energy

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// Options tune Solve.
type Options struct {
	// States is the number of energy steps of each storage's range; 0
	// means DefaultStates. The step (range ÷ States) also sets the power
	// resolution: step ÷ (efficiency × slot length).
	States int
	// Rounds bounds the rounds of coordinate descent; 0 means
	// DefaultRounds.
	Rounds int
	// Refine is the factor of the final refinement's finer lattice
	// (around the plan found on the coarse one); 0 means DefaultRefine,
	// 1 none.
	Refine int
}

// Defaults of Options.
const (
	// DefaultStates gives a 13.5 kWh battery steps of 0.056 kWh (0.2 kW
	// in a quarter-hour slot) and a 60 kWh car 0.25 kWh (1 kW in a
	// quarter-hour slot, 0.28 kW in an hour). The MILP comparison
	// (TestAgainstMILP) measures what this costs against the continuous
	// optimum.
	DefaultStates = 240
	DefaultRounds = 8
	DefaultRefine = 4
)

// ErrInfeasible is wrapped when a hard goal, limit or cap cannot be kept.
var ErrInfeasible = errors.New("no plan keeps the hard goals and limits")

// Solve plans the home. See docs/DESIGN.md "Energy homes" for the method:
// an exact dynamic programme over one storage's energy at a time, the
// others fixed (coordinate descent), from two starts, with the meter —
// PV curtailment and the import/export kink — solved in closed form per
// slot.
func Solve(ctx context.Context, h *Home, opts Options) (*Plan, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	if opts.States <= 0 {
		opts.States = DefaultStates
	}
	if opts.Rounds <= 0 {
		opts.Rounds = DefaultRounds
	}
	if opts.Refine <= 0 {
		opts.Refine = DefaultRefine
	}
	pl := newPlanner(h, opts)
	best, err := pl.solveCapped(ctx)
	if err != nil {
		return nil, err
	}
	if h.Grid.DemandCharge > 0 {
		best, err = pl.demand(ctx, best)
		if err != nil {
			return nil, err
		}
	}
	if opts.Refine >= 2 {
		pl, best, err = pl.refine(ctx, best, opts.Refine)
		if err != nil {
			return nil, err
		}
	}
	return pl.plan(best), nil
}

// refine replans sol on a lattice factor times finer, each storage
// confined to a band of ±2·factor fine steps around its coarse path and
// the band re-centred once: the coarse lattice finds the shape of the
// plan, the fine one its exact powers, at the cost of a band rather than
// of the whole fine range.
func (pl *planner) refine(ctx context.Context, sol *solution, factor int) (*planner, *solution, error) {
	h := pl.h
	fine := &planner{h: h, opts: pl.opts, pvFix: pl.pvFix, pvCur: pl.pvCur, extraCap: sol.cap, wear: pl.wear}
	cur := &solution{idx: make([][]int, len(pl.st)), cap: sol.cap}
	for s := range pl.st {
		g := makeGrid(&h.Storage[s], pl.st[s].q/float64(factor))
		fine.st = append(fine.st, g)
		cur.idx[s] = make([]int, len(sol.idx[s]))
		for i, j := range sol.idx[s] {
			cur.idx[s][i] = min(max(j*factor, g.lo), g.hi)
		}
	}
	cur.cost = fine.total(cur)
	width := 2 * factor
	for range 4 {
		fine.bands = make([][][2]int, len(fine.st))
		for s, g := range fine.st {
			n := g.hi - g.lo
			fine.bands[s] = make([][2]int, len(cur.idx[s]))
			for i, j := range cur.idx[s] {
				c := j - g.lo
				fine.bands[s][i] = [2]int{max(c-width, 0), min(c+width, n)}
			}
			fine.bands[s][0] = [2]int{-g.lo, -g.lo}
		}
		next, err := fine.descend(ctx, cur, fine.opts.Rounds)
		if err != nil {
			return nil, nil, err
		}
		cur = next
	}
	fine.bands = nil
	if math.IsInf(cur.cost, 1) || cur.cost > fine.total(cur)+1e-9 {
		return pl, sol, nil
	}
	return fine, cur, nil
}

// planner holds the discretisation of every storage.
type planner struct {
	h    *Home
	opts Options
	st   []grid
	// pvFix and pvCur are the non-curtailable and curtailable PV per slot.
	pvFix, pvCur []float64
	// extraCap is an import cap the demand-charge search adds (kW); +Inf
	// for none.
	extraCap float64
	wear     float64
	// delta smooths the meter's kinks (kW) during the homotopy; 0 is the
	// true meter. permPen > 0 relaxes the grid permissions into a
	// penalty per kWh; 0 keeps them hard.
	delta, permPen float64
	// bands[s][i] confines storage s's lattice index at boundary i
	// (offsets from grid.lo, inclusive) during refinement; nil means the
	// whole range.
	bands [][][2]int
	// oneStart plans from the idle start only (the demand search).
	oneStart bool
	// ownHard keeps the planned storage's own permissions hard while the
	// others' are relaxed (the homotopy's last step).
	ownHard bool
}

// grid is one storage's energy lattice: E(j) = E0 + j·q for j in
// [lo, hi].
type grid struct {
	q      float64
	lo, hi int
}

// solution is a point of the search: one signed bus power per storage
// and slot (kW, + charging) and its cost.
type solution struct {
	idx  [][]int // [storage][boundary] lattice index
	cost float64
	// cap is the extra import cap it was planned under (the demand
	// search), +Inf for none.
	cap float64
}

func newPlanner(h *Home, opts Options) *planner {
	T := h.Slots()
	pl := &planner{h: h, opts: opts, pvFix: make([]float64, T), pvCur: make([]float64, T), extraCap: math.Inf(1), wear: h.Wear}
	if pl.wear < 0 {
		pl.wear = DefaultWear
	}
	for _, p := range h.PV {
		for t, f := range p.Forecast {
			if p.Curtailable {
				pl.pvCur[t] += f
			} else {
				pl.pvFix[t] += f
			}
		}
	}
	dtMin := math.Inf(1)
	for _, d := range h.Dt {
		dtMin = math.Min(dtMin, d)
	}
	for i := range h.Storage {
		s := &h.Storage[i]
		pl.st = append(pl.st, makeGrid(s, step(s, dtMin, opts.States)))
	}
	return pl
}

// makeGrid lays storage s's lattice of step q through its initial
// energy, as far as its range goes.
func makeGrid(s *Storage, q float64) grid {
	g := grid{q: q}
	const eps = 1e-9
	if s.Initial >= s.Min {
		g.lo = -int(math.Floor((s.Initial-s.Min)/q + eps))
	}
	if s.Initial <= s.Max {
		g.hi = int(math.Floor((s.Max-s.Initial)/q + eps))
	}
	return g
}

// step chooses storage s's energy step: about range ÷ states, adjusted
// so that a full-power charge in the shortest slot is a whole number of
// steps (an EV racing to its goal loses nothing to the lattice), and,
// among the nearby choices, so that a full-power discharge is as close to
// a whole number of steps as it gets.
func step(s *Storage, dt float64, states int) float64 {
	span := math.Max(s.Max, s.Initial) - math.Min(s.Min, s.Initial)
	if span <= 0 {
		return 1
	}
	target := span / float64(states)
	ce := s.MaxCharge * s.EtaC * dt
	de := s.MaxDischarge * dt / s.EtaD
	if ce <= 0 {
		if de <= 0 {
			return target
		}
		ce, de = de, 0
	}
	k0 := max(1, int(math.Round(ce/target)))
	best, bestErr := ce/float64(k0), math.Inf(1)
	for k := k0; k <= 2*k0; k++ {
		q := ce / float64(k)
		if de <= 0 {
			return q
		}
		r := de / q
		if e := r - math.Floor(r+1e-9); e < bestErr-1e-12 {
			best, bestErr = q, e
		}
	}
	return best
}

func (pl *planner) energy(s, j int) float64 { return pl.h.Storage[s].Initial + float64(j)*pl.st[s].q }

// power returns storage s's signed bus power (kW) for a lattice move of m
// steps in slot t.
func (pl *planner) power(s, t, m int) float64 {
	st := &pl.h.Storage[s]
	e := float64(m) * pl.st[s].q / pl.h.Dt[t]
	if m > 0 {
		return e / st.EtaC
	}
	return e * st.EtaD
}

// meter returns the cost of slot t when the home draws x kW before PV,
// with the net power confined to [nlo, nhi], and the net chosen (PV
// curtailed as far as that pays). +Inf when no net in range keeps the
// hard limits.
func (pl *planner) meter(t int, x, nlo, nhi float64) (float64, float64) {
	return pl.meterOwn(t, x, nlo, nhi, math.Inf(-1), math.Inf(1))
}

// meterOwn is meter with [olo, ohi] a range the net must keep even while
// the permissions are relaxed: those of the storage being planned.
func (pl *planner) meterOwn(t int, x, nlo, nhi, olo, ohi float64) (float64, float64) {
	b := x - pl.pvFix[t]
	a := b - pl.pvCur[t]
	a, b = math.Max(a, olo), math.Min(b, ohi)
	relax := pl.permPen > 0
	noImp, noExp := nhi <= Deadband, nlo >= -Deadband
	if !relax {
		a, b = math.Max(a, nlo), math.Min(b, nhi)
	}
	capT := pl.capAt(t)
	b = math.Min(b, capT)
	g := &pl.h.Grid
	if g.HardLimits {
		if g.ImportLimit > 0 {
			b = math.Min(b, g.ImportLimit)
		}
		if g.ExportLimit > 0 {
			a = math.Max(a, -g.ExportLimit)
		}
	}
	const eps = 1e-9
	if a > b+eps {
		return math.Inf(1), 0
	}
	if a > b {
		a = b
	}
	if pl.delta > 0 {
		n := pl.argminSmooth(t, a, b, relax && noImp, relax && noExp)
		return pl.penalised(t, n, relax && noImp, relax && noExp), n
	}
	best, bestNet := math.Inf(1), 0.0
	try := func(n float64) {
		if n < a || n > b {
			return
		}
		if c := pl.penalised(t, n, relax && noImp, relax && noExp); c < best-1e-12 || c <= best+1e-12 && n < bestNet {
			best, bestNet = c, n
		}
	}
	try(a)
	try(b)
	try(0)
	if g.ImportLimit > 0 {
		try(g.ImportLimit)
	}
	if g.ExportLimit > 0 {
		try(-g.ExportLimit)
	}
	return best, bestNet
}

func (pl *planner) capAt(t int) float64 {
	c := pl.extraCap
	if cp := pl.h.Grid.Cap; cp != nil && !math.IsNaN(cp[t]) {
		c = math.Min(c, cp[t])
	}
	return c
}

// slotCost is the meter's cost of net power n in slot t, soft limits
// included, as a sum of hinges:
//
//	Dt·[pE·n + (pI − pE)·max(n, 0) + pen·max(n − I, 0) + pen·max(−E − n, 0)]
//
// During the homotopy (delta > 0) every hinge is replaced by its average
// over [y − delta, y + delta], which is convex and smooth.
func (pl *planner) slotCost(t int, n float64) float64 {
	h := pl.h
	dt := h.Dt[t]
	pen := h.Grid.LimitPenalty
	if pen == 0 {
		pen = DefaultLimitPenalty
	}
	pi, pe := h.Tariff.Import[t], h.Tariff.Export[t]
	c := pe*n + (pi-pe)*pl.hinge(n)
	if l := h.Grid.ImportLimit; l > 0 {
		c += pen * pl.hinge(n-l)
	}
	if l := h.Grid.ExportLimit; l > 0 {
		c += pen * pl.hinge(-l-n)
	}
	return c * dt
}

// slope is slotCost's derivative in n (divided by Dt).
func (pl *planner) slope(t int, n float64) float64 {
	h := pl.h
	pen := h.Grid.LimitPenalty
	if pen == 0 {
		pen = DefaultLimitPenalty
	}
	pi, pe := h.Tariff.Import[t], h.Tariff.Export[t]
	d := pe + (pi-pe)*pl.dhinge(n)
	if l := h.Grid.ImportLimit; l > 0 {
		d += pen * pl.dhinge(n-l)
	}
	if l := h.Grid.ExportLimit; l > 0 {
		d -= pen * pl.dhinge(-l-n)
	}
	return d
}

func (pl *planner) hinge(y float64) float64 {
	d := pl.delta
	if d <= 0 {
		return math.Max(y, 0)
	}
	sq := func(x float64) float64 {
		x = math.Max(x, 0)
		return x * x / 2
	}
	return (sq(y+d) - sq(y-d)) / (2 * d)
}

func (pl *planner) dhinge(y float64) float64 {
	d := pl.delta
	if d <= 0 {
		if y > 0 {
			return 1
		}
		return 0
	}
	return math.Min(math.Max((y+d)/(2*d), 0), 1)
}

// penalised is slotCost plus, during the homotopy, the relaxed grid
// permissions: permPen per kWh imported while a storage that may not
// charge from the grid charges (noImp), or exported while one that may
// not discharge into it discharges (noExp).
func (pl *planner) penalised(t int, n float64, noImp, noExp bool) float64 {
	c := pl.slotCost(t, n)
	if noImp {
		c += pl.permPen * pl.hinge(n-Deadband) * pl.h.Dt[t]
	}
	if noExp {
		c += pl.permPen * pl.hinge(-n-Deadband) * pl.h.Dt[t]
	}
	return c
}

// argminSmooth minimises the smoothed, penalised slot cost over [a, b]
// by bisection on its slope, which is monotone.
func (pl *planner) argminSmooth(t int, a, b float64, noImp, noExp bool) float64 {
	slope := func(n float64) float64 {
		d := pl.slope(t, n)
		if noImp {
			d += pl.permPen * pl.dhinge(n-Deadband)
		}
		if noExp {
			d -= pl.permPen * pl.dhinge(-n-Deadband)
		}
		return d
	}
	if slope(a) >= 0 {
		return a
	}
	if slope(b) <= 0 {
		return b
	}
	lo, hi := a, b
	for range 40 {
		m := (lo + hi) / 2
		if slope(m) < 0 {
			lo = m
		} else {
			hi = m
		}
	}
	return (lo + hi) / 2
}

// goalCost is storage s's goal penalty at boundary i with energy e.
func (pl *planner) goalCost(s, i int, e float64) float64 {
	c := 0.0
	for _, g := range pl.h.Storage[s].Goals {
		if g.Index != i || e >= g.Energy-1e-9 {
			continue
		}
		if g.Hard {
			return math.Inf(1)
		}
		c += pl.goalPenalty(g) * (g.Energy - e)
	}
	return c
}

func (pl *planner) goalPenalty(g Goal) float64 {
	if g.Penalty > 0 {
		return g.Penalty
	}
	return DefaultGoalPenalty
}

// band returns storage s's admissible offsets at each boundary.
func (pl *planner) band(s int) func(i int) (int, int) {
	n := pl.st[s].hi - pl.st[s].lo
	if pl.bands == nil || pl.bands[s] == nil {
		return func(int) (int, int) { return 0, n }
	}
	b := pl.bands[s]
	return func(i int) (int, int) { return b[i][0], b[i][1] }
}

// flows returns the signed bus power of every storage per slot.
func (pl *planner) flows(sol *solution) [][]float64 {
	T := pl.h.Slots()
	out := make([][]float64, len(pl.st))
	for s := range pl.st {
		out[s] = make([]float64, T)
		for t := range T {
			out[s][t] = pl.power(s, t, sol.idx[s][t+1]-sol.idx[s][t])
		}
	}
	return out
}

// netRange returns the bounds on slot t's net power that the permissions
// of every storage but skip put, given their flows.
func (pl *planner) netRange(f [][]float64, t, skip int) (float64, float64) {
	lo, hi := math.Inf(-1), math.Inf(1)
	for s := range pl.st {
		if s == skip {
			continue
		}
		st := &pl.h.Storage[s]
		if f[s][t] > 0 && st.NoGridCharge {
			hi = Deadband
		}
		if f[s][t] < 0 && st.NoGridDischarge {
			lo = -Deadband
		}
	}
	return lo, hi
}

// total returns the cost of a solution.
func (pl *planner) total(sol *solution) float64 {
	h := pl.h
	f := pl.flows(sol)
	c := 0.0
	for t := range h.Slots() {
		x := h.Load[t]
		for s := range pl.st {
			x += f[s][t]
			c += pl.wear * math.Abs(f[s][t]) * h.Dt[t]
		}
		lo, hi := pl.netRange(f, t, -1)
		m, _ := pl.meter(t, x, lo, hi)
		c += m
	}
	for s := range pl.st {
		for i, j := range sol.idx[s] {
			c += pl.goalCost(s, i, pl.energy(s, j))
		}
		c -= h.Storage[s].EndValue * pl.energy(s, sol.idx[s][len(sol.idx[s])-1])
	}
	return c
}

// solveCapped runs the coordinate descent from its starts and returns
// the best solution.
func (pl *planner) solveCapped(ctx context.Context) (*solution, error) {
	h := pl.h
	T := h.Slots()
	zero := &solution{idx: make([][]int, len(pl.st))}
	for s := range pl.st {
		zero.idx[s] = make([]int, T+1)
	}
	a, err := pl.homotopy(ctx, zero)
	if err != nil {
		return nil, err
	}
	if len(pl.st) > 1 && !pl.oneStart {
		// A second start: each storage alone against an empty home, so
		// that they do not all queue behind the first one's choices.
		solo := &solution{idx: make([][]int, len(pl.st))}
		for s := range pl.st {
			one := &solution{idx: make([][]int, len(pl.st))}
			for r := range pl.st {
				one.idx[r] = make([]int, T+1)
			}
			idx, _ := pl.dp(s, one, 1/float64(len(pl.st)))
			if idx == nil {
				idx = make([]int, T+1)
			}
			solo.idx[s] = idx
		}
		b, err := pl.homotopy(ctx, solo)
		if err != nil {
			return nil, err
		}
		if b.cost < a.cost {
			a = b
		}
	}
	if len(pl.st) > 2 && !pl.oneStart {
		// With three storages or more, coordinate descent's result
		// depends on who moves first: also start from the storages
		// planned one after the other, each against the home with the
		// previous ones fixed, in every rotation of their order.
		for rot := range pl.st {
			seq := &solution{idx: make([][]int, len(pl.st))}
			for r := range pl.st {
				seq.idx[r] = make([]int, T+1)
			}
			for k := range pl.st {
				s := (rot + k) % len(pl.st)
				if idx, _ := pl.dp(s, seq, 1); idx != nil {
					seq.idx[s] = idx
				}
			}
			b, err := pl.homotopy(ctx, seq)
			if err != nil {
				return nil, err
			}
			if b.cost < a.cost {
				a = b
			}
		}
	}
	if math.IsInf(a.cost, 1) {
		return nil, pl.infeasible()
	}
	a.cap = pl.extraCap
	return a, nil
}

// Smoothing is the homotopy's schedule of delta (kW), ending with the
// true meter. Coordinate descent on a smooth convex meter reaches the
// continuous optimum; on the true meter it can stall where two storages
// would have to trade at a kink (one charging from PV that another should
// take): each smoothing step moves the plan past such points before the
// kinks come back.
//
// The grid permissions (NoGridCharge, NoGridDischarge) are relaxed the
// same way: a penalty per kWh that grows along the schedule. In the last
// step each storage keeps its own permissions hard and the others' cost
// a penalty, so that two storages that both broke theirs can repair
// one at a time (1e6 per kWh: no lattice step is worth that); the result is then priced with every permission hard.
var Smoothing = []struct{ Delta, Permission float64 }{
	{2, 0.05}, {0.5, 0.3}, {0.1, 3}, {0, 1e6},
}

// PhaseRounds bounds the descent's rounds in each smoothing step but the
// last, which runs to convergence (Options.Rounds): the early steps only
// need to move the plan near the right basin.
const PhaseRounds = 3

// homotopy runs the descent from sol through the smoothing schedule.
func (pl *planner) homotopy(ctx context.Context, sol *solution) (*solution, error) {
	defer func() { pl.delta, pl.permPen, pl.ownHard = 0, 0, false }()
	cur := sol
	for k, d := range Smoothing {
		pl.delta, pl.permPen, pl.ownHard = d.Delta, d.Permission, k == len(Smoothing)-1
		cur.cost = pl.total(cur)
		rounds := PhaseRounds
		if k == len(Smoothing)-1 {
			rounds = pl.opts.Rounds
		}
		next, err := pl.descend(ctx, cur, rounds)
		if err != nil {
			return nil, err
		}
		cur = next
	}
	pl.delta, pl.permPen, pl.ownHard = 0, 0, false
	cur.cost = pl.total(cur)
	if math.IsInf(cur.cost, 1) {
		// Storages with permissions still trade energy through a meter
		// that reads a lattice step off zero: idle them and descend
		// again with every permission hard.
		for s := range pl.st {
			if st := &pl.h.Storage[s]; st.NoGridCharge || st.NoGridDischarge {
				clear(cur.idx[s])
			}
		}
		cur.cost = pl.total(cur)
		return pl.descend(ctx, cur, pl.opts.Rounds)
	}
	return cur, nil
}

// descend improves sol one storage at a time until a round changes
// nothing.
func (pl *planner) descend(ctx context.Context, sol *solution, rounds int) (*solution, error) {
	cur := &solution{idx: make([][]int, len(sol.idx)), cost: sol.cost}
	for s := range sol.idx {
		cur.idx[s] = append([]int(nil), sol.idx[s]...)
	}
	for range rounds {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("home %s: %w", pl.h.Name, err)
		}
		improved := false
		for s := range pl.st {
			idx, _ := pl.dp(s, cur, 1)
			if idx == nil {
				continue
			}
			old := cur.idx[s]
			cur.idx[s] = idx
			c := pl.total(cur)
			if c < cur.cost-1e-9*math.Max(1, math.Abs(cur.cost)) || math.IsInf(cur.cost, 1) && !math.IsInf(c, 1) {
				cur.cost = c
				improved = true
			} else {
				cur.idx[s] = old
			}
		}
		if !improved {
			break
		}
	}
	return cur, nil
}

// dp returns storage s's best lattice path with the other storages as in
// sol, the load scaled by share (1 normally; a share of the home for the
// solo start), and its cost; nil when every path is infeasible.
func (pl *planner) dp(s int, sol *solution, share float64) ([]int, float64) {
	h := pl.h
	T := h.Slots()
	st := &h.Storage[s]
	g := pl.st[s]
	n := g.hi - g.lo + 1
	f := pl.flows(sol)
	inf := math.Inf(1)
	// V holds the cost-to-go of boundary i+1 while boundary i is filled.
	next := make([]float64, n)
	tLo, tHi := pl.band(s)(T)
	for k := range n {
		e := pl.energy(s, g.lo+k)
		next[k] = pl.goalCost(s, T, e) - st.EndValue*e
		if k < tLo || k > tHi {
			next[k] = inf
		}
	}
	choice := make([][]int32, T) // move per (slot, state)
	// energies[k] is state k's energy; a discharge may not end below
	// kMin, a charge not above kMax (the physical range).
	energies := make([]float64, n)
	kMin, kMax := n, -1
	for k := range n {
		energies[k] = pl.energy(s, g.lo+k)
		if energies[k] >= st.Min-1e-9 {
			kMin = min(kMin, k)
		}
		if energies[k] <= st.Max+1e-9 {
			kMax = max(kMax, k)
		}
	}
	goals := make([][]Goal, T+1)
	for _, gl := range st.Goals {
		goals[gl.Index] = append(goals[gl.Index], gl)
	}
	cur := make([]float64, n)
	var costs []float64 // costs[m+md]: the slot's cost of move m, +Inf if barred
	band := pl.band(s)
	for t := T - 1; t >= 0; t-- {
		base := h.Load[t] * share
		for r := range pl.st {
			if r != s {
				base += f[r][t]
			}
		}
		lo, hi := pl.netRange(f, t, s)
		mc, md := 0, 0
		if st.Available == nil || st.Available[t] {
			mc = int(math.Floor(st.MaxCharge*st.EtaC*h.Dt[t]/g.q + 1e-9))
			md = int(math.Floor(st.MaxDischarge*h.Dt[t]/st.EtaD/g.q + 1e-9))
		}
		// Only moves between the bands of boundaries t and t+1 matter.
		kLo, kHi := band(t)
		nLo, nHi := band(t + 1)
		mlo, mhi := max(-md, nLo-kHi), min(mc, nHi-kLo)
		costs = costs[:0]
		for m := -md; m <= mc; m++ {
			if m < mlo || m > mhi {
				costs = append(costs, inf)
				continue
			}
			p := pl.power(s, t, m)
			if m > 0 && p < st.MinCharge-1e-9 {
				costs = append(costs, inf)
				continue
			}
			l, u := lo, hi
			ol, ou := math.Inf(-1), math.Inf(1)
			if m > 0 && st.NoGridCharge {
				if pl.ownHard {
					ou = Deadband
				} else {
					u = math.Min(u, Deadband)
				}
			}
			if m < 0 && st.NoGridDischarge {
				if pl.ownHard {
					ol = -Deadband
				} else {
					l = math.Max(l, -Deadband)
				}
			}
			c, _ := pl.meterOwn(t, base+p, l, u, ol, ou)
			costs = append(costs, c+pl.wear*math.Abs(p)*h.Dt[t])
		}
		ch := make([]int32, n)
		for k := range n {
			cur[k] = inf
		}
		for k := kLo; k <= kHi; k++ {
			best, bm := inf, int32(0)
			// Discharges may not end below kMin, charges not above kMax.
			from, to := max(mlo, nLo-k, -k), min(mhi, nHi-k, n-1-k)
			for m := from; m <= to; m++ {
				k2 := k + m
				if m < 0 && k2 < kMin || m > 0 && k2 > kMax {
					continue
				}
				if v := costs[m+md] + next[k2]; v < best {
					best, bm = v, int32(m)
				}
			}
			if t > 0 && len(goals[t]) > 0 {
				best += pl.goalCost(s, t, energies[k])
			}
			cur[k] = best
			ch[k] = bm
		}
		choice[t] = ch
		cur, next = next, cur
	}
	k0 := -g.lo
	if math.IsInf(next[k0], 1) {
		return nil, inf
	}
	idx := make([]int, T+1)
	k := k0
	for t := range T {
		k += int(choice[t][k])
		idx[t+1] = k + g.lo
	}
	return idx, next[k0]
}

// demand searches the import cap that balances the demand charge against
// the bill: a golden-section search over caps between the threshold and
// the uncapped plan's peak (the cost is not exactly unimodal in the cap
// on a lattice, so the best cap tried wins, not the last), each cap
// planned from one start.
func (pl *planner) demand(ctx context.Context, uncapped *solution) (*solution, error) {
	g := &pl.h.Grid
	peak := pl.peak(uncapped)
	cost := func(sol *solution) float64 {
		return sol.cost + g.DemandCharge*math.Max(0, pl.peak(sol)-g.DemandThreshold)
	}
	best, bestCost := uncapped, cost(uncapped)
	if peak <= g.DemandThreshold {
		return best, nil
	}
	pl.oneStart = true
	defer func() { pl.oneStart = false }()
	try := func(c float64) (float64, error) {
		pl.extraCap = c
		defer func() { pl.extraCap = math.Inf(1) }()
		sol, err := pl.solveCapped(ctx)
		if errors.Is(err, ErrInfeasible) {
			return math.Inf(1), nil
		}
		if err != nil {
			return 0, err
		}
		v := cost(sol)
		if v < bestCost {
			best, bestCost = sol, v
		}
		return v, nil
	}
	const phi = 0.6180339887498949
	lo, hi := g.DemandThreshold, peak
	x1, x2 := hi-phi*(hi-lo), lo+phi*(hi-lo)
	f1, err := try(x1)
	if err != nil {
		return nil, err
	}
	f2, err := try(x2)
	if err != nil {
		return nil, err
	}
	for range DemandSteps {
		if f1 <= f2 {
			hi, x2, f2 = x2, x1, f1
			x1 = hi - phi*(hi-lo)
			if f1, err = try(x1); err != nil {
				return nil, err
			}
		} else {
			lo, x1, f1 = x1, x2, f2
			x2 = lo + phi*(hi-lo)
			if f2, err = try(x2); err != nil {
				return nil, err
			}
		}
	}
	return best, nil
}

// DemandSteps is the golden-section search's steps after its first two
// caps: the bracket shrinks to 0.618^6 ≈ 6% of the range between the
// threshold and the uncapped peak.
const DemandSteps = 6

// peak is a solution's highest import (kW).
func (pl *planner) peak(sol *solution) float64 {
	p := pl.assemble(sol)
	m := 0.0
	for _, v := range p.Import {
		m = math.Max(m, v)
	}
	return m
}

// infeasible explains a hard goal or limit no plan keeps.
func (pl *planner) infeasible() error {
	for s := range pl.h.Storage {
		for _, g := range pl.h.Storage[s].Goals {
			if g.Hard {
				return fmt.Errorf("home %s: storage %s: hard goal %q (%.3g kWh at boundary %d) cannot be met, or a hard limit cannot be kept: %w", pl.h.Name, pl.h.Storage[s].Name, g.Text, g.Energy, g.Index, ErrInfeasible)
			}
		}
	}
	return fmt.Errorf("home %s: the hard import/export limits or committed caps cannot be kept with the load and PV given: %w", pl.h.Name, ErrInfeasible)
}

// plan turns a solution into a Plan with its cost broken down.
func (pl *planner) plan(sol *solution) *Plan {
	return pl.assemble(sol)
}

func (pl *planner) assemble(sol *solution) *Plan {
	h := pl.h
	T := h.Slots()
	f := pl.flows(sol)
	p := &Plan{Import: make([]float64, T), Export: make([]float64, T)}
	for s := range pl.st {
		ch, dis, en := make([]float64, T), make([]float64, T), make([]float64, T+1)
		for t := range T {
			if f[s][t] > 0 {
				ch[t] = f[s][t]
			} else if f[s][t] < 0 {
				dis[t] = -f[s][t]
			}
			p.Wear += pl.wear * math.Abs(f[s][t]) * h.Dt[t]
		}
		for i, j := range sol.idx[s] {
			en[i] = pl.energy(s, j)
			if c := pl.goalCost(s, i, en[i]); c > 0 {
				p.Penalties += c
			}
		}
		p.Charge, p.Discharge, p.Energy = append(p.Charge, ch), append(p.Discharge, dis), append(p.Energy, en)
		p.StoredValue += h.Storage[s].EndValue * en[T]
		for _, g := range h.Storage[s].Goals {
			if e := en[g.Index]; e < g.Energy-1e-9 {
				p.Missed = append(p.Missed, Miss{What: g.Text, Storage: h.Storage[s].Name, Slot: g.Index, By: g.Energy - e})
			}
		}
	}
	used := make([]float64, T)
	for t := range T {
		x := h.Load[t]
		for s := range pl.st {
			x += f[s][t]
		}
		lo, hi := pl.netRange(f, t, -1)
		_, net := pl.meter(t, x, lo, hi)
		// PV used: the curtailable part makes up what the net leaves.
		used[t] = x - net // total PV used
		p.Import[t], p.Export[t] = math.Max(net, 0), math.Max(-net, 0)
		p.ImportCost += h.Tariff.Import[t] * p.Import[t] * h.Dt[t]
		p.ExportRevenue += h.Tariff.Export[t] * p.Export[t] * h.Dt[t]
		pen := h.Grid.LimitPenalty
		if pen == 0 {
			pen = DefaultLimitPenalty
		}
		if l := h.Grid.ImportLimit; l > 0 && p.Import[t] > l+1e-9 {
			p.Penalties += pen * (p.Import[t] - l) * h.Dt[t]
			p.Missed = append(p.Missed, Miss{What: "import limit", Slot: t, By: p.Import[t] - l})
		}
		if l := h.Grid.ExportLimit; l > 0 && p.Export[t] > l+1e-9 {
			p.Penalties += pen * (p.Export[t] - l) * h.Dt[t]
			p.Missed = append(p.Missed, Miss{What: "export limit", Slot: t, By: p.Export[t] - l})
		}
	}
	// Split the PV used among arrays: non-curtailable ones in full, the
	// curtailable ones in proportion to their forecast.
	for _, a := range h.PV {
		row := make([]float64, T)
		for t := range T {
			if !a.Curtailable {
				row[t] = a.Forecast[t]
				continue
			}
			if pl.pvCur[t] > 0 {
				share := math.Min(math.Max(used[t]-pl.pvFix[t], 0), pl.pvCur[t])
				row[t] = a.Forecast[t] * share / pl.pvCur[t]
			}
		}
		p.PVUsed = append(p.PVUsed, row)
	}
	peak := 0.0
	for _, v := range p.Import {
		peak = math.Max(peak, v)
	}
	if g := h.Grid; g.DemandCharge > 0 {
		p.DemandCost = g.DemandCharge * math.Max(0, peak-g.DemandThreshold)
	}
	p.Objective = p.ImportCost - p.ExportRevenue - p.StoredValue + p.DemandCost
	p.Penalties += p.Wear
	return p
}
