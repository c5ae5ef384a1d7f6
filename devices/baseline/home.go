package baseline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/compile"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// ErrNoSchedule is wrapped when a home alone has no schedule that keeps
// its rules.
var ErrNoSchedule = errors.New("no schedule keeps the home's rules")

// homeSolver is one home compiled alone, with optional per-slot functions
// that add its neighbours' load N(t) to its peak term, so that the same
// compiled problem serves every SH-MGM round.
type homeSolver struct {
	name string
	c    *compile.Compiled
	// slots[w] is the slot of the one-home problem's window w.
	slots []int
	// outside[w] indexes the function that adds N(slots[w]) to the peak
	// term of window w; nil without a peak term.
	outside []int
	// base[w], where the peak term is on the draw (perSlot), holds per
	// entry of function outside[w] — one per combination of the slot's
	// actions — max(draw, 0) + O(t); nil where it is on level caps.
	base [][]float64
	// peakW is Weights.Peak·Δ², the factor of every squared load.
	peakW   float64
	factory mva.SolverFactory
	// be is the home's bucket elimination, kept between solves: it sees
	// setOutside's edits and reruns only the buckets they reach. Other
	// solvers may precompute from the costs, so they are made anew for
	// every solve.
	be *local.BE
	lp *mva.LocalProblem
	// coarse is true when the home has fewer levels per slot than
	// distinct draws (a table limit): its peak term is then on level
	// caps above the draw, an approximation of its best response.
	coarse bool
	// lo and hi are the least and greatest coefficient of N in each
	// window's peak function (coefRange), computed on first use.
	lo, hi []float64
	// pool lends the tables of the bucket elimination fitsBE makes.
	pool *local.TablePool
}

// alone is the street n with h as its only home, priced but with no peak
// term: what a home's best response compiles before the peak is added.
func alone(n *devices.Neighbourhood, h devices.Home) *devices.Neighbourhood {
	return &devices.Neighbourhood{
		Name:         n.Name + "/" + h.Name,
		Horizon:      n.Horizon,
		Prices:       n.Prices,
		ExportPrices: n.ExportPrices,
		Levels:       1,
		Weights:      devices.Weights{Price: n.Weights.Price, Miss: n.Weights.Miss},
		Homes:        []devices.Home{h},
		Units:        n.Units,
	}
}

// newHomeSolver compiles home h of n alone. With peak false the home
// minimises its price only: no windows, no levels. With peak true every
// coordinated slot of n is a window of its own, with enough levels for the
// squared load to be exact, and the neighbourhood's peak weight; where a
// table of that many levels passes the compiler's limit, the levels are
// halved until it fits (s.coarse then says so).
func newHomeSolver(n *devices.Neighbourhood, h devices.Home, peak bool, o *Options) (*homeSolver, error) {
	if peak && n.Weights.Peak > 0 && len(coordinated(n)) > 0 && !o.levelPeak && actionCombos(&h, o.maxTable()) <= o.maxTable() {
		return newSlotPeakSolver(n, h, o)
	}
	one := alone(n, h)
	var slots []int
	coarse := false
	if peak && n.Weights.Peak > 0 {
		one.Weights.Peak = n.Weights.Peak
		slots = coordinated(n)
		for _, t := range slots {
			one.Windows = append(one.Windows, devices.Window{From: t, To: t + 1})
		}
		one.Levels, coarse = exactLevels(&h, slots, o.maxTable())
	}
	copts := compile.Options{MaxTable: o.Compile.MaxTable, StateLimit: o.Compile.StateLimit}
	c, err := compile.Compile(one, copts)
	for errors.Is(err, devices.ErrTooLarge) && len(slots) > 0 && one.Levels > 1 {
		one.Levels /= 2
		coarse = true
		c, err = compile.Compile(one, copts)
	}
	if err != nil {
		return nil, fmt.Errorf("home %s alone: %w", h.Name, err)
	}
	dt := n.Horizon.Hours()
	s := &homeSolver{name: h.Name, c: c, slots: slots, peakW: one.Weights.Peak * dt * dt, factory: o.solver(), coarse: coarse, pool: o.pool}

	if len(slots) > 0 {
		p := c.Problem
		for w := range slots {
			v := c.Homes[0].Levels[w]
			s.outside = append(s.outside, len(p.Functions))
			p.Functions = append(p.Functions, mva.Function{
				Name:  fmt.Sprintf("%s/neighbours@%d", h.Name, slots[w]),
				Scope: []int{v},
				Costs: make([]float64, p.DomainSize(v)),
			})
			s.tighten(w)
		}
	}
	return s, nil
}

// newSlotPeakSolver compiles home h of n alone for its price and adds,
// per coordinated slot t, one function over the slot's action variables
// that is its peak term peakW·(max(draw, 0) + O(t) + N(t))² (setOutside
// fills it). It is the same objective as newHomeSolver's windows of one
// slot with a level per distinct draw, the tightest the draw fits (whose
// caps are the draws clamped at 0, devices.LevelCaps), without the level
// variables: a level of one slot is a function of the slot's actions, and
// with dozens of draws per slot (automatic power levels) its domain made
// every bucket that meets it dozens of times larger. It needs a table of
// one entry per combination of the home's actions, within the compiler's
// limit; its answers are exact, never coarse.
func newSlotPeakSolver(n *devices.Neighbourhood, h devices.Home, o *Options) (*homeSolver, error) {
	one := alone(n, h)
	c, err := compile.Compile(one, compile.Options{MaxTable: o.Compile.MaxTable, StateLimit: o.Compile.StateLimit})
	if err != nil {
		return nil, fmt.Errorf("home %s alone: %w", h.Name, err)
	}
	dt := n.Horizon.Hours()
	slots := coordinated(n)
	s := &homeSolver{name: h.Name, c: c, slots: slots, peakW: n.Weights.Peak * dt * dt, factory: o.solver(), pool: o.pool}
	p, hc, hm := c.Problem, &c.Homes[0], &c.Model.Homes[0]
	acts := make([]int, len(hm.Devices))
	for _, t := range slots {
		// The slot's meter's scope where the compiler made one (a
		// storage of many actions read from its states), else the
		// slot's action variables.
		scope, actions, ok := c.SlotScope(0, t)
		if !ok {
			scope = make([]int, len(hm.Devices))
			for d := range hm.Devices {
				scope[d] = hc.Actions[d][t]
			}
			actions = func(digits, acts []int) bool { copy(acts, digits); return true }
		}
		o := 0.0
		if hm.OutsideLoad != nil {
			o = hm.OutsideLoad[t]
		}
		size := 1
		for _, v := range scope {
			size *= p.DomainSize(v)
		}
		base := make([]float64, size)
		digits := make([]int, len(scope))
		for idx := range base {
			if actions(digits, acts) {
				base[idx] = math.Max(hm.Draw(t, func(d int) int { return acts[d] }), 0) + o
			} else {
				base[idx] = math.Inf(1) // no action joins the two states
			}
			for j := len(digits) - 1; j >= 0; j-- {
				digits[j]++
				if digits[j] < p.DomainSize(scope[j]) {
					break
				}
				digits[j] = 0
			}
		}
		s.outside = append(s.outside, len(p.Functions))
		s.base = append(s.base, base)
		p.Functions = append(p.Functions, mva.Function{
			Name:  fmt.Sprintf("%s/peak@%d", h.Name, t),
			Scope: slices.Clone(scope),
			Costs: make([]float64, size),
		})
	}
	s.setOutside(make([]float64, n.Horizon.Slots))
	return s, nil
}

// actionCombos returns the number of combinations of home h's actions in
// a slot, or limit+1 once it passes limit.
func actionCombos(h *devices.Home, limit int) int {
	combos := 1
	for d := range h.Devices {
		combos *= max(len(h.Devices[d].Actions), 1)
		if combos > limit {
			return limit + 1
		}
	}
	return combos
}

// tighten adds the hard function that makes window w's level the tightest
// one the slot's draw fits. The compiler only keeps the draw below the
// cap, which is enough when a looser cap always costs more; a negative
// neighbour load (batteries feeding the street) would otherwise make the
// home commit a cap above its draw to cancel it.
func (s *homeSolver) tighten(w int) {
	p, hc := s.c.Problem, &s.c.Homes[0]
	h := &s.c.Model.Homes[0]
	caps := hc.Caps[w]
	if len(caps) < 2 {
		return
	}
	t := s.slots[w]
	scope := make([]int, 0, len(h.Devices)+1)
	for d := range h.Devices {
		scope = append(scope, hc.Actions[d][t])
	}
	scope = append(scope, hc.Levels[w])
	size := len(caps)
	for d := range h.Devices {
		size *= len(h.Devices[d].Actions)
	}
	costs := make([]float64, size)
	acts := make([]int, len(h.Devices))
	for idx := 0; idx < size; idx += len(caps) {
		k := devices.Tightest(caps, h.Draw(t, func(d int) int { return acts[d] }))
		for c := range caps {
			if c != k {
				costs[idx+c] = mva.Hard
			}
		}
		for j := len(acts) - 1; j >= 0; j-- {
			acts[j]++
			if acts[j] < len(h.Devices[j].Actions) {
				break
			}
			acts[j] = 0
		}
	}
	p.Functions = append(p.Functions, mva.Function{Name: fmt.Sprintf("%s/tight@%d", h.Name, t), Scope: scope, Costs: costs})
}

// coordinated returns the slots inside n's coordination windows.
func coordinated(n *devices.Neighbourhood) []int {
	var out []int
	for _, w := range n.Windows {
		for t := w.From; t < w.To; t++ {
			out = append(out, t)
		}
	}
	return out
}

// exactLevels returns the number of levels that makes every distinct draw
// of the home in the given slots a level of its own (devices.LevelCaps),
// lowered where the level link of a slot — all the home's actions and the
// level — would exceed maxTable entries; coarse reports that lowering.
func exactLevels(h *devices.Home, slots []int, maxTable int) (levels int, coarse bool) {
	want := 1
	for _, t := range slots {
		draws, _ := h.SlotDraws(t)
		want = max(want, len(draws))
	}
	combos := 1
	for d := range h.Devices {
		combos *= max(len(h.Devices[d].Actions), 1)
		if combos > maxTable {
			return 1, want > 1
		}
	}
	levels = max(1, min(want, maxTable/combos))
	return levels, levels < want
}

// setOutside sets the neighbours' load N(t) (power units, per slot of the
// horizon): the peak term of window w becomes peakW·(cap + O(t) + N(t))²,
// O being the home's own OutsideLoad, by adding 2·(cap+O)·N + N² to it.
func (s *homeSolver) setOutside(N []float64) {
	if s.base != nil {
		for w, fi := range s.outside {
			t := s.slots[w]
			f := s.peakW * s.c.Model.Horizon.Ratio(t)
			costs := s.c.Problem.Functions[fi].Costs
			for k, b := range s.base[w] {
				if math.IsInf(b, 1) {
					costs[k] = mva.Hard // no action joins the two states
					continue
				}
				v := b + N[t]
				costs[k] = f * v * v
			}
		}
		return
	}
	h := &s.c.Model.Homes[0]
	caps := s.c.Homes[0].Caps
	for w, fi := range s.outside {
		t := s.slots[w]
		o := 0.0
		if h.OutsideLoad != nil {
			o = h.OutsideLoad[t]
		}
		costs := s.c.Problem.Functions[fi].Costs
		for k, cp := range caps[w] {
			base := cp + o
			costs[k] = s.peakW * s.c.Model.Horizon.Ratio(t) * (2*base*N[t] + N[t]*N[t])
		}
	}
}

// solve returns the optimum of the home's problem as it stands (its
// outside load included) and its cost.
func (s *homeSolver) solve(ctx context.Context) ([]int, float64, error) {
	sv, lp, err := s.solver()
	if err != nil {
		return nil, 0, err
	}
	return s.solveWith(ctx, sv, lp)
}

// solveWith is solve with the solver sv of lp.
func (s *homeSolver) solveWith(ctx context.Context, sv mva.LocalSolver, lp *mva.LocalProblem) ([]int, float64, error) {
	p := s.c.Problem
	in := make([]int, lp.NumInterior())
	cost, err := sv.SolveRow(ctx, nil, in)
	if err != nil {
		return nil, 0, fmt.Errorf("home %s: %w", s.name, err)
	}
	if mva.IsHard(cost) {
		return nil, 0, fmt.Errorf("home %s: %w", s.name, ErrNoSchedule)
	}
	assign := make([]int, len(p.Variables))
	for k, v := range in {
		assign[lp.Vars[k]] = v
	}
	return assign, cost + p.Offset, nil
}

// solver returns the solver of the next solve: the home's bucket
// elimination, kept, or a new one of the factory's.
func (s *homeSolver) solver() (mva.LocalSolver, *mva.LocalProblem, error) {
	if s.be != nil {
		return s.be, s.lp, nil
	}
	p := s.c.Problem
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	sv, err := s.factory(lp)
	if err != nil {
		return nil, nil, fmt.Errorf("home %s: %w", s.name, err)
	}
	if be, ok := sv.(*local.BE); ok {
		s.be, s.lp = be, lp
	}
	return sv, lp, nil
}

// solveOnce is solve for a solver kept between uses that are few and far
// apart (a block's, between responses): bucket elimination's tables go
// back to the pool after the solve, and no copy of the costs is kept to
// find edits (mva.HoldingSolver).
func (s *homeSolver) solveOnce(ctx context.Context) ([]int, float64, error) {
	sv, lp, err := s.solver()
	if err != nil {
		return nil, 0, err
	}
	if s.be != nil {
		s.be.Hold()
		defer s.be.Release()
	}
	return s.solveWith(ctx, sv, lp)
}

// eval returns the cost of an assignment of the home's problem under the
// current outside load.
func (s *homeSolver) eval(assign []int) (float64, error) {
	c, err := s.c.Problem.Eval(assign)
	if err != nil {
		return 0, fmt.Errorf("home %s: %w", s.name, err)
	}
	return c, nil
}

// schedule returns the home's actions in an assignment; the levels are
// left to the neighbourhood's evaluation (the tightest that fit).
func (s *homeSolver) schedule(assign []int) devices.HomeSchedule {
	acts := s.c.Homes[0].Actions
	hs := devices.HomeSchedule{Actions: make([][]int, len(acts))}
	for d, row := range acts {
		hs.Actions[d] = make([]int, len(row))
		for t, v := range row {
			hs.Actions[d][t] = assign[v]
		}
	}
	return hs
}

// loadOf returns home h's draw per slot under a schedule.
func loadOf(h *devices.Home, hs *devices.HomeSchedule, slots int) []float64 {
	out := make([]float64, slots)
	for t := range slots {
		out[t] = h.Draw(t, func(d int) int { return hs.Actions[d][t] })
	}
	return out
}

// defaultSolver is exact bucket elimination, its tables lent by pool
// (nil: allocated), or depth-first branch and bound where elimination
// would need tables past its limit.
func defaultSolver(lp *mva.LocalProblem, pool *local.TablePool) (mva.LocalSolver, error) {
	s, err := local.NewBE(lp, local.BEOptions{Pool: pool, Workers: 1})
	if errors.Is(err, local.ErrTooLarge) {
		return local.New("dfbnb", lp)
	}
	return s, err
}

// exactEntries bounds the tables of a home solved exactly as a whole by
// the SH-MGM baseline (32 MiB); past it block descent is faster than the
// exact solve, by orders of magnitude on SHDS homes with six rules.
const exactEntries = 1 << 22

// fitsBE reports whether bucket elimination solves the home's problem with
// tables of at most limit entries (0: exactEntries). Where it does and the
// home has no solver yet, the one it made is kept for the solves: its
// order is the one the default solver would search for again (it does
// not depend on the limit), at a cost of the order of a solve for a home
// with automatic power levels.
func (s *homeSolver) fitsBE(limit int) bool {
	if limit <= 0 {
		limit = exactEntries
	}
	p := s.c.Problem
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	be, err := local.NewBE(lp, local.BEOptions{MaxEntries: limit, Pool: s.pool, Workers: 1})
	if err != nil {
		return false
	}
	if s.be == nil {
		s.be, s.lp = be, lp
	}
	return true
}
