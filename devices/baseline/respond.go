package baseline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// responder is one home of the SH-MGM-style baseline: it keeps the home's
// adopted schedule S and computes its best response C to a neighbour load
// N, with the gain J(S|N) − J(C|N) ≥ 0.
type responder interface {
	// respond computes C given N (power units per slot) and returns the
	// gain, 0 where it is rounding noise; the first call, with no S yet,
	// returns 0.
	respond(ctx context.Context, N []float64) (float64, error)
	// adopt makes C the adopted schedule.
	adopt()
	// schedule returns the adopted schedule.
	schedule() devices.HomeSchedule
	// candidate returns C, the schedule of the last respond.
	candidate() devices.HomeSchedule
	// set makes hs the adopted schedule (Improve's start and restores).
	set(hs devices.HomeSchedule) error
	// solves counts the one-home (or one-block) solves so far.
	solves() int
	// coarse reports whether a solve so far had fewer levels per slot
	// than the home has draws (a table limit; see newHomeSolver).
	coarse() bool
}

// newResponder returns an exact responder where bucket elimination (or
// the caller's solver) handles the home, and block descent otherwise.
func newResponder(n *devices.Neighbourhood, hi int, o *Options) (responder, bool, error) {
	s, err := newHomeSolver(n, n.Homes[hi], true, o)
	if errors.Is(err, devices.ErrTooLarge) && len(n.Homes[hi].Devices) > 1 {
		// The home's per-slot tables pass the compiler's limit even
		// with one level: split it into blocks, which are smaller.
		b, berr := newBlockHome(n, hi, o)
		if berr != nil {
			return nil, false, fmt.Errorf("%w; split into blocks: %w", err, berr)
		}
		return b, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if o.Solver != nil || len(s.slots) == 0 || !o.forceBlocks && s.fitsBE(o.ExactEntries) {
		return newExactHome(s, o), !s.coarse, nil
	}
	b, err := newBlockHome(n, hi, o)
	return b, false, err
}

// exactHome solves the whole home exactly.
type exactHome struct {
	s         *homeSolver
	cur, cand []int
	n         int
	// now is the adopted schedule's cost at the last respond.
	now float64
	// gain, where the home's tables are large (gainSolverFrom), is a
	// second bucket elimination of the same problem in a searched
	// order, often a tenth of min-fill's tables, that answers the
	// respond's gain alone: the candidate, min-fill's row (the one it
	// always was, whatever ties the other order breaks otherwise), is
	// solved only when asked for (pending), which in SH-MGM's lazy
	// rounds is for the one home that moves.
	gain    *local.BE
	gainLP  *mva.LocalProblem
	pending bool
	// last is the last respond's question and answer, until adopt or
	// set changes the schedule it was asked about; never with noReuse.
	last    asked
	noReuse bool
}

// asked is a responder's last question (the neighbour load) and its
// gain: asked again with the same load about the same adopted schedule,
// a responder answers the same, without solving (a street's homes far
// from the round's movers, or the improvement phase's questions after a
// round that moved none of their neighbours).
type asked struct {
	N    []float64
	gain float64
	ok   bool
}

// through answers N: with reuse, as last time where N is the last
// question's load; else by answer, whose answer it then keeps (a failed
// answer forgets the last).
func (a *asked) through(ctx context.Context, N []float64, reuse bool, answer func(context.Context, []float64) (float64, error)) (float64, error) {
	if reuse && a.ok && slices.Equal(a.N, N) {
		return a.gain, nil
	}
	g, err := answer(ctx, N)
	if err != nil {
		a.ok = false
		return g, err
	}
	a.N = append(a.N[:0], N...)
	a.gain, a.ok = g, true
	return g, nil
}

// gainSolverFrom is the least number of min-fill bucket entries past
// which a home answers gains with a searched order (exactHome.gain):
// below it min-fill's tables are kept between responses (BE's memo), and
// a second order saves little.
const gainSolverFrom = 1 << 20

// newExactHome returns s as an exact responder, with a gain solver
// where its tables are large and a searched order's are smaller.
func newExactHome(s *homeSolver, o *Options) *exactHome {
	e := &exactHome{s: s, noReuse: o.noReuse}
	from := gainSolverFrom
	if o.gainFrom > 0 {
		from = o.gainFrom
	}
	if o.Solver != nil || s.be == nil || s.be.RowEntries() < from {
		return e
	}
	p := s.c.Problem
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	g, err := local.NewBE(lp, local.BEOptions{MaxEntries: s.be.RowEntries(), SearchOrder: true, Pool: s.pool, Workers: 1})
	if err != nil || g.RowEntries() >= s.be.RowEntries() && o.gainFrom == 0 {
		return e
	}
	e.gain, e.gainLP = g, lp
	return e
}

func (e *exactHome) respond(ctx context.Context, N []float64) (float64, error) {
	return e.last.through(ctx, N, !e.noReuse, e.answer)
}

// answer is respond without the memory of the last question.
func (e *exactHome) answer(ctx context.Context, N []float64) (float64, error) {
	e.s.setOutside(N)
	if e.gain != nil && e.cur != nil {
		e.gain.Hold()
		_, c, err := e.s.solveWith(ctx, e.gain, e.gainLP)
		e.gain.Release()
		if err != nil {
			return 0, err
		}
		e.n++
		e.cand, e.pending = nil, true
		return e.gainAt(c)
	}
	a, c, err := e.s.solve(ctx)
	if err != nil {
		return 0, err
	}
	e.n++
	e.cand, e.pending = a, false
	if e.cur == nil {
		return 0, nil
	}
	return e.gainAt(c)
}

// gainAt returns the adopted schedule's gain against the optimum's cost
// c under the current outside load.
func (e *exactHome) gainAt(c float64) (float64, error) {
	now, err := e.s.eval(e.cur)
	if err != nil {
		return 0, err
	}
	e.now = now
	return gainOf(now, c), nil
}

// row returns the candidate, solving min-fill's row first where the
// last respond answered its gain alone. That solve is of the costs as
// the respond left them (setOutside runs in respond only), which the gain
// solve found feasible; were it to fail all the same, the candidate is
// the adopted schedule: no move.
func (e *exactHome) row() []int {
	if e.pending {
		e.pending = false
		a, _, err := e.s.solve(context.Background())
		e.n++
		if err != nil {
			a = e.cur
		}
		e.cand = a
	}
	return e.cand
}

// gainOf returns now − best, or 0 when that is rounding noise: a move
// for nothing could make two homes swap equal schedules for ever.
func gainOf(now, best float64) float64 {
	if g := now - best; g > 1e-9*math.Max(1, math.Abs(now)) {
		return g
	}
	return 0
}

func (e *exactHome) adopt() { e.cur, e.last.ok = e.row(), false }

func (e *exactHome) candidate() devices.HomeSchedule { return e.s.schedule(e.row()) }

func (e *exactHome) set(hs devices.HomeSchedule) error {
	a, err := e.s.c.Encode(&devices.Schedule{Homes: []devices.HomeSchedule{{Actions: hs.Actions}}})
	if err != nil {
		return fmt.Errorf("home %s: %w", e.s.name, err)
	}
	e.cur, e.cand, e.pending, e.last.ok = a, a, false, false
	return nil
}

func (e *exactHome) schedule() devices.HomeSchedule { return e.s.schedule(e.cur) }
func (e *exactHome) solves() int                    { return e.n }
func (e *exactHome) coarse() bool                   { return e.s.coarse }

// maxPasses bounds block descent's passes over a home's blocks.
const maxPasses = 20

// blockHome is a home too wide for bucket elimination as a whole (SHDS
// homes with five or six rules: the per-slot squared load couples every
// device, and each device drags a property chain of hundreds of states).
// Its best response is approximated by block coordinate descent, starting
// from S: each block — devices sharing properties (devices.Components), or
// a device no rule constrains — is re-optimised exactly given the others'
// draws, until a pass improves nothing. J never increases, so the gain is
// never negative; the published SH-MGM simulator is inexact on such homes
// too (a constraint solver with a 10 s limit, shds-model.md §5.1).
type blockHome struct {
	n         *devices.Neighbourhood
	hi        int
	h         *devices.Home
	blocks    []block
	slots     []int
	o         *Options
	cur, cand *devices.HomeSchedule
	count     int
	// wasCoarse is true once a block's solve had fewer levels than draws.
	wasCoarse bool
	// cache[k] are block k's compiled solvers (solver), most recent
	// first; compiles counts the blocks compiled.
	cache    [][]blockSolver
	compiles int
	// last is as exactHome's.
	last asked
}

// block is a part of a home that shares no modelled property with the
// rest.
type block struct {
	devices, props, rules []int
}

func newBlockHome(n *devices.Neighbourhood, hi int, o *Options) (*blockHome, error) {
	h := &n.Homes[hi]
	models, err := h.Models()
	if err != nil {
		return nil, err
	}
	b := &blockHome{n: n, hi: hi, h: h, slots: coordinated(n), o: o}
	in := make([]bool, len(h.Devices))
	for _, comp := range devices.Components(models) {
		var bl block
		for _, mi := range comp {
			m := &models[mi]
			bl.props = append(bl.props, m.Property)
			bl.rules = append(bl.rules, m.Rules...)
			for _, d := range m.Actuators {
				if !in[d] {
					in[d] = true
					bl.devices = append(bl.devices, d)
				}
			}
		}
		slices.Sort(bl.devices)
		slices.Sort(bl.rules)
		b.blocks = append(b.blocks, bl)
	}
	for d := range h.Devices {
		if !in[d] {
			b.blocks = append(b.blocks, block{devices: []int{d}})
		}
	}
	return b, nil
}

func (b *blockHome) respond(ctx context.Context, N []float64) (float64, error) {
	return b.last.through(ctx, N, !b.o.noReuse, b.answer)
}

// answer is respond without the memory of the last question.
func (b *blockHome) answer(ctx context.Context, N []float64) (float64, error) {
	start := b.cur
	if start == nil {
		// The price-only optimum: its components are independent, so
		// bucket elimination handles it.
		s, err := newHomeSolver(b.n, *b.h, false, b.o)
		if err != nil {
			return 0, err
		}
		a, _, err := s.solve(ctx)
		if err != nil {
			return 0, err
		}
		b.count++
		hs := s.schedule(a)
		start = &hs
	}
	if b.cache == nil {
		b.cache = make([][]blockSolver, len(b.blocks))
	}
	cand := clone(*start)
	J := b.cost(&cand, N)
	// others[k] is the other blocks' actions when block k was last
	// solved in this response: solving it again with them unchanged
	// gives the same part, which is already in cand (it was kept) or
	// was not cheaper then, with the same cand around it (it was not).
	// cand is never edited in place (a kept part replaces it by a
	// clone), so others keeps its values, not copies of its actions.
	others := make([]*devices.HomeSchedule, len(b.blocks))
	for range maxPasses {
		improved := false
		for k, bl := range b.blocks {
			if others[k] != nil && !b.o.noReuse && b.sameOthers(bl, others[k], &cand) {
				continue
			}
			s, err := b.solver(k, bl, &cand)
			if err != nil {
				return 0, err
			}
			b.wasCoarse = b.wasCoarse || s.coarse
			s.setOutside(N)
			a, _, err := s.solveOnce(ctx)
			if err != nil {
				return 0, err
			}
			b.count++
			at := cand
			others[k] = &at
			part := s.schedule(a)
			trial := clone(cand)
			for j, d := range bl.devices {
				trial.Actions[d] = part.Actions[j]
			}
			if c := b.cost(&trial, N); c < J-1e-9*math.Max(1, math.Abs(J)) {
				cand, J, improved = trial, c, true
			}
		}
		if !improved {
			break
		}
	}
	b.cand = &cand
	if b.cur == nil {
		return 0, nil
	}
	return gainOf(b.cost(b.cur, N), J), nil
}

// sameOthers reports whether the devices outside block bl have the same
// actions under x and y.
func (b *blockHome) sameOthers(bl block, x, y *devices.HomeSchedule) bool {
	in := 0
	for d := range b.h.Devices {
		if in < len(bl.devices) && bl.devices[in] == d {
			in++
			continue
		}
		if !slices.Equal(x.Actions[d], y.Actions[d]) {
			return false
		}
	}
	return true
}

// blockCache is how many compiled solvers a block keeps, one per
// background (the other blocks' draws): a home that did not move starts
// its next response from the same schedule, and a pass that changes one
// block leaves the others' backgrounds as they were.
const blockCache = 2

// blockSolver is a block compiled for one background.
type blockSolver struct {
	bg []float64
	s  *homeSolver
}

// solver returns block k's solver for its background under hs: a cached
// one compiled for the same background (the compiled problem depends on
// nothing else, and setOutside rewrites its peak terms), or a new one.
func (b *blockHome) solver(k int, bl block, hs *devices.HomeSchedule) (*homeSolver, error) {
	bg := b.background(bl, hs)
	b.compiles++
	if b.o.noReuse {
		return newHomeSolver(b.n, b.sub(bl, bg), true, b.o)
	}
	c := b.cache[k]
	for i, e := range c {
		if slices.Equal(e.bg, bg) {
			copy(c[1:i+1], c[:i]) // most recent first
			c[0] = e
			b.compiles--
			return e.s, nil
		}
	}
	s, err := newHomeSolver(b.n, b.sub(bl, bg), true, b.o)
	if err != nil {
		return nil, err
	}
	if len(c) < blockCache {
		c = append(c, blockSolver{})
	}
	copy(c[1:], c[:len(c)-1])
	c[0] = blockSolver{bg: bg, s: s}
	b.cache[k] = c
	return s, nil
}

// background returns the home's background plus the draws of the
// devices outside block bl under hs, per slot.
func (b *blockHome) background(bl block, hs *devices.HomeSchedule) []float64 {
	h := b.h
	inBlock := make([]bool, len(h.Devices))
	for _, d := range bl.devices {
		inBlock[d] = true
	}
	bg := make([]float64, len(h.Background))
	for t := range bg {
		v := h.Background[t]
		for d := range h.Devices {
			if !inBlock[d] {
				v += h.Devices[d].Actions[hs.Actions[d][t]].Power
			}
		}
		bg[t] = v
	}
	return bg
}

// sub returns the home reduced to block bl, the other devices' draws
// folded into its background bg (background).
func (b *blockHome) sub(bl block, bg []float64) devices.Home {
	h := b.h
	sub := devices.Home{Name: h.Name, OutsideLoad: h.OutsideLoad, Background: bg, Meter: h.Meter}
	for _, d := range bl.devices {
		sub.Devices = append(sub.Devices, h.Devices[d])
	}
	for _, p := range bl.props {
		sub.Properties = append(sub.Properties, h.Properties[p])
	}
	for _, r := range bl.rules {
		sub.Rules = append(sub.Rules, h.Rules[r])
	}
	return sub
}

// cost is J_i(hs|N): the weighted bill (at the home's meter, +Inf where
// it breaks a hard limit or a grid permission) plus the peak weight times
// Σ_{coordinated t} Δ²·(max(draw, 0) + O(t) + N(t))², the model's
// per-slot squared load with exact levels.
func (b *blockHome) cost(hs *devices.HomeSchedule, N []float64) float64 {
	n, h := b.n, b.h
	dt := n.Horizon.Hours()
	price := 0.0
	draws := make([]float64, n.Horizon.Slots)
	over := 0.0
	for t := range draws {
		act := func(d int) int { return hs.Actions[d][t] }
		noImport, noExport := h.Restricted(t, act)
		m := n.Meter(b.hi, t, h.Draw(t, act), noImport, noExport)
		if m.Broken != "" {
			return math.Inf(1) // a hard limit or a grid permission
		}
		draws[t] = m.Draw
		price += m.Bill
		over += m.Over
	}
	imports := 0.0
	for _, v := range draws {
		imports = math.Max(imports, v)
	}
	price += n.Demand(b.hi, imports)
	peak := 0.0
	for _, t := range b.slots {
		v := math.Max(draws[t], 0) + N[t]
		if h.OutsideLoad != nil {
			v += h.OutsideLoad[t]
		}
		peak += n.Horizon.Ratio(t) * v * v
	}
	return n.Weights.Price*price + n.Weights.Miss*over + n.Weights.Peak*dt*dt*peak
}

func (b *blockHome) adopt() { b.cur, b.last.ok = b.cand, false }

func (b *blockHome) candidate() devices.HomeSchedule { return clone(*b.cand) }

func (b *blockHome) set(hs devices.HomeSchedule) error {
	c := clone(hs)
	b.cur, b.cand, b.last.ok = &c, &c, false
	return nil
}

func (b *blockHome) schedule() devices.HomeSchedule { return clone(*b.cur) }
func (b *blockHome) solves() int                    { return b.count }
func (b *blockHome) coarse() bool                   { return b.wasCoarse }

func clone(hs devices.HomeSchedule) devices.HomeSchedule {
	out := devices.HomeSchedule{Actions: make([][]int, len(hs.Actions))}
	for d, row := range hs.Actions {
		out.Actions[d] = slices.Clone(row)
	}
	return out
}
