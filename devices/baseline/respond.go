package baseline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/devices"
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
		return &exactHome{s: s}, !s.coarse, nil
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
}

func (e *exactHome) respond(ctx context.Context, N []float64) (float64, error) {
	e.s.setOutside(N)
	a, c, err := e.s.solve(ctx)
	if err != nil {
		return 0, err
	}
	e.n++
	e.cand = a
	if e.cur == nil {
		return 0, nil
	}
	now, err := e.s.eval(e.cur)
	if err != nil {
		return 0, err
	}
	e.now = now
	return gainOf(now, c), nil
}

// gainOf returns now − best, or 0 when that is rounding noise: a move
// for nothing could make two homes swap equal schedules for ever.
func gainOf(now, best float64) float64 {
	if g := now - best; g > 1e-9*math.Max(1, math.Abs(now)) {
		return g
	}
	return 0
}

func (e *exactHome) adopt()                          { e.cur = e.cand }
func (e *exactHome) candidate() devices.HomeSchedule { return e.s.schedule(e.cand) }

func (e *exactHome) set(hs devices.HomeSchedule) error {
	a, err := e.s.c.Encode(&devices.Schedule{Homes: []devices.HomeSchedule{{Actions: hs.Actions}}})
	if err != nil {
		return fmt.Errorf("home %s: %w", e.s.name, err)
	}
	e.cur, e.cand = a, a
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
	cand := clone(*start)
	J := b.cost(&cand, N)
	for range maxPasses {
		improved := false
		for _, bl := range b.blocks {
			s, err := newHomeSolver(b.n, b.sub(bl, &cand), true, b.o)
			if err != nil {
				return 0, err
			}
			b.wasCoarse = b.wasCoarse || s.coarse
			s.setOutside(N)
			a, _, err := s.solve(ctx)
			if err != nil {
				return 0, err
			}
			b.count++
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

// sub returns the home reduced to block bl, the other devices' draws
// under hs folded into its background.
func (b *blockHome) sub(bl block, hs *devices.HomeSchedule) devices.Home {
	h := b.h
	sub := devices.Home{Name: h.Name, OutsideLoad: h.OutsideLoad, Background: make([]float64, len(h.Background)), Meter: h.Meter}
	inBlock := make([]bool, len(h.Devices))
	for _, d := range bl.devices {
		inBlock[d] = true
		sub.Devices = append(sub.Devices, h.Devices[d])
	}
	for t := range sub.Background {
		v := h.Background[t]
		for d := range h.Devices {
			if !inBlock[d] {
				v += h.Devices[d].Actions[hs.Actions[d][t]].Power
			}
		}
		sub.Background[t] = v
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

func (b *blockHome) adopt()                          { b.cur = b.cand }
func (b *blockHome) candidate() devices.HomeSchedule { return clone(*b.cand) }

func (b *blockHome) set(hs devices.HomeSchedule) error {
	c := clone(hs)
	b.cur, b.cand = &c, &c
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
