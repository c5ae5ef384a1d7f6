package street

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/plancheck"
)

// Member is one energy home of a street.
type Member struct {
	Home *energy.Home
	// Alone is the home's plan made alone (prices only); Plan its plan
	// after coordination (Alone where there was none), and Check the
	// independent checker's report of Plan.
	Alone, Plan *energy.Plan
	Check       *plancheck.Report
}

// Peak is the street's peak term on the load that flows, as the
// compiled homes' (baseline.FlowObjective): Weight × Σ over Slots of
// Δ_t·Δ_0·L(t)² ((Δ·L(t))² where the slots are even; on uneven slots
// each squared power weighs by its hours times the first slot's,
// devices.Horizon.PeakHours), L being the street's import (kW; power fed back does not
// offset a neighbour's peak), in the same currency as the bills (the
// [objective] peak weight over the price weight).
type Peak struct {
	Weight float64
	Slots  []int
}

// Options bound Coordinate. The zero value is the documented default.
type Options struct {
	// Rounds bounds the rounds of best responses (0 means
	// DefaultRounds); every energy home answers once per round.
	Rounds int
	// Bands is the number of bands of the piecewise-linear peak price
	// over a slot's possible import (0 means DefaultBands).
	Bands int
	// EvenBands prices every band of a slot's import range alike (the
	// reference the adaptive bands are measured against; see steps).
	EvenBands bool
	// Gain is the least relative fall of the street's objective for
	// which a home adopts a new plan (0 means DefaultGain): the rounds
	// end once no home gains that much.
	Gain float64
	// Energy tunes each home's planner.
	Energy energy.Options
}

// Defaults of Options.
const (
	// DefaultRounds: on the tests' streets best responses settle in 2–4
	// rounds.
	DefaultRounds = 20
	// DefaultBands: 24 bands over a home's possible import; the linear
	// pieces overprice the squared load by at most Weight·(Δ·width)²/4
	// per slot, width being a 24th of the import range.
	DefaultBands = 24
	// DefaultGain: a home moves when the street gains a hundred-
	// thousandth of its objective; on ten homes over 24 slots the last
	// rounds below it moved the objective by under 0.01%.
	DefaultGain = 1e-5
)

// Result is what Coordinate did.
type Result struct {
	// Rounds of best responses run and Moves the answers adopted.
	Rounds, Moves int
	// Start and Final are the street's objective (Objective) at the
	// alone plans and after coordination.
	Start, Final float64
	// Load is the street's import per slot after coordination, Base
	// included (kW); AloneLoad with the energy homes' alone plans.
	Load, AloneLoad []float64
}

// PlanAlone plans every member alone and checks the plans: a plan the
// checker rejects is an error wrapping plancheck.ErrRejected.
func PlanAlone(ctx context.Context, ms []*Member, o Options) error {
	for _, m := range ms {
		p, err := energy.Solve(ctx, m.Home, o.Energy)
		if err != nil {
			return fmt.Errorf("energy home %s: %w", m.Home.Name, err)
		}
		rep := plancheck.Check(m.Home, p)
		if err := rep.Err(); err != nil {
			return fmt.Errorf("energy home %s: %w", m.Home.Name, err)
		}
		m.Alone, m.Plan, m.Check = p, p, rep
	}
	return nil
}

// Objective is the street's objective of the members' plans with base
// (the rest of the street's import per slot, kW; nil for none): the
// members' costs (bill, penalties and wear, energy.Plan.Cost less its
// Coordination) plus the peak term on the street's import.
func Objective(ms []*Member, base []float64, pk Peak) float64 {
	total := 0.0
	for _, m := range ms {
		total += m.Plan.Cost() - m.Plan.Coordination
	}
	load := streetLoad(ms, base, -1)
	d0 := ms[0].Home.Dt[0]
	for _, t := range pk.Slots {
		dt := ms[0].Home.Dt[t]
		total += pk.Weight * dt * d0 * load[t] * load[t]
	}
	return total
}

// streetLoad returns base plus the members' import per slot, member
// skip left out.
func streetLoad(ms []*Member, base []float64, skip int) []float64 {
	T := len(ms[0].Home.Dt)
	load := make([]float64, T)
	if base != nil {
		copy(load, base)
	}
	for i, m := range ms {
		if i == skip {
			continue
		}
		for t, v := range m.Plan.Import {
			load[t] += v
		}
	}
	return load
}

// Coordinate lowers the street's Objective from the members' alone plans
// (PlanAlone first) by best responses: in each round every member in
// turn is planned again with the peak term around the rest of the
// street's load N(t) as import steps — on a band [a, b] of its own
// import the price per kWh Weight·Δ_0·(2N + a + b), the exact change of
// Weight·Δ_t·Δ_0·(N + x)² across the band (Peak) — and adopts the new plan when it
// lowers the street's objective (evaluated exactly, with the squares)
// by more than rounding. The objective is a potential: each adopted plan
// lowers it, so the rounds end; they stop when no member moves or after
// Rounds. Every adopted plan has passed the checker.
func Coordinate(ctx context.Context, ms []*Member, base []float64, pk Peak, o Options) (*Result, error) {
	if len(ms) == 0 {
		return &Result{}, nil
	}
	if o.Rounds <= 0 {
		o.Rounds = DefaultRounds
	}
	if o.Bands <= 0 {
		o.Bands = DefaultBands
	}
	if o.Gain <= 0 {
		o.Gain = DefaultGain
	}
	res := &Result{AloneLoad: streetLoad(ms, base, -1)}
	res.Start = Objective(ms, base, pk)
	cur := res.Start
	if pk.Weight > 0 && len(pk.Slots) > 0 {
		for res.Rounds < o.Rounds {
			res.Rounds++
			moved := false
			for i, m := range ms {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				h := *m.Home
				at := m.Plan.Import
				if o.EvenBands {
					at = nil
				}
				h.Grid.ImportSteps = steps(&h, streetLoad(ms, base, i), at, pk, o.Bands)
				p, err := energy.Solve(ctx, &h, o.Energy)
				if err != nil {
					return nil, fmt.Errorf("energy home %s: coordinating: %w", h.Name, err)
				}
				old := m.Plan
				m.Plan = p
				next := Objective(ms, base, pk)
				if next >= cur-o.Gain*math.Max(1, math.Abs(cur)) {
					m.Plan = old
					continue
				}
				rep := plancheck.Check(m.Home, p)
				if err := rep.Err(); err != nil {
					return nil, fmt.Errorf("energy home %s: %w", h.Name, err)
				}
				m.Check, cur, moved = rep, next, true
				res.Moves++
			}
			if !moved {
				break
			}
		}
	}
	res.Final = cur
	res.Load = streetLoad(ms, base, -1)
	return res, nil
}

// steps returns the import steps of home h around the others' load N.
// cur, when not nil, is the home's import in its current plan: the bands
// are then fine (a bands-th of the slot's import range) within four
// bands of it and four times as wide elsewhere, so that the answer is
// priced finely where it is likely to land with fewer columns; nil gives
// bands even bands.
func steps(h *energy.Home, N, cur []float64, pk Peak, bands int) [][]energy.Step {
	out := make([][]energy.Step, h.Slots())
	for _, t := range pk.Slots {
		top := math.Max(h.Load[t], 0)
		for _, s := range h.Storage {
			top += s.MaxCharge
		}
		if top <= 0 {
			continue
		}
		w := top / float64(bands)
		var cuts []float64
		for k := 1; k <= bands; k++ {
			x := w * float64(k)
			if cur != nil && k%4 != 0 && math.Abs(x-cur[t]) > 4*w {
				continue
			}
			cuts = append(cuts, x)
		}
		// Per kWh of the band (its width times Δ_t), the change of
		// Weight·Δ_t·Δ_0·(N + x)² across it.
		d0 := h.Dt[0]
		row := make([]energy.Step, len(cuts))
		a := 0.0
		for k, b := range cuts {
			row[k] = energy.Step{Upto: b, Price: pk.Weight * d0 * (2*N[t] + a + b)}
			a = b
		}
		out[t] = row
	}
	return slices.Clip(out)
}
