package street

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/devices"
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
	// Index is the home's place in the neighbourhood it came from
	// (Split), which its links name.
	Index int
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
	// FeederExcess is by how many kW the street's committed caps exceed
	// the feeder limit per window after coordination (nil without one).
	FeederExcess []float64
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

// Street is what the members coordinate around: the rest of the street
// and the terms they share with it. A nil Compiled, nil Links and a zero
// Feeder are a street of the members alone, every pair sharing the peak,
// without a feeder limit.
type Street struct {
	Peak Peak
	// Compiled is each compiled home's load that flows (kW per slot,
	// its positive draw), numbered 0..len(Compiled)−1; member i is
	// numbered len(Compiled)+i.
	Compiled [][]float64
	// Links are the pairs of homes, in that numbering, whose cross
	// terms enter the peak term ([coordination] neighbours); nil means
	// every pair. A member then answers only its neighbours' load.
	Links  [][2]int
	Feeder Feeder
	// breakout weighs the hard feeder limit's price per window (nil: 1
	// everywhere) while Breakout's rounds run, caps off; breakouts
	// counts the phases begun.
	breakout  []float64
	breakouts int
}

// Feeder is the street's [feeder] limit on committed caps. In every
// window a member commits to its highest import there: its power is
// continuous, so that is the least cap its plan fits, where a compiled
// home picks one of a few levels (devices.LevelCaps). In every window
// the compiled homes' caps (Committed) and the members' add up to at
// most Limit: a soft limit costs Miss per kW over per hour of the window,
// as for compiled homes; a Hard one is refused where the best responses
// end above it (an error wrapping energy.ErrInfeasible).
type Feeder struct {
	// Limit is in kW; 0 means none.
	Limit float64
	Hard  bool
	// Miss is the soft limit's price (currency per kW over per hour of
	// the window; 0 means devices.DefaultMissPenalty).
	Miss    float64
	Windows []devices.Window
	// Committed is the compiled homes' committed caps per window (kW;
	// nil for none).
	Committed []float64
}

// hardFeederFactor prices a hard feeder limit's excess while the best
// responses bring the street within it: a hundred times the soft price,
// far above anything a member's bill can gain by exceeding it.
const hardFeederFactor = 100

func (s *Street) peakOn() bool { return s.Peak.Weight > 0 && len(s.Peak.Slots) > 0 }

func (s *Street) feederOn() bool { return s.Feeder.Limit > 0 && len(s.Feeder.Windows) > 0 }

// price is the cost of a kW over the feeder limit in window w.
func (s *Street) price(ms []*Member, w int) float64 {
	f := &s.Feeder
	miss := f.Miss
	if miss <= 0 {
		miss = devices.DefaultMissPenalty
	}
	if f.Hard {
		miss *= hardFeederFactor
	}
	if s.breakout != nil {
		miss *= s.breakout[w]
	}
	hours := 0.0
	for t := f.Windows[w].From; t < f.Windows[w].To; t++ {
		hours += ms[0].Home.Dt[t]
	}
	return miss * hours
}

// Commitments returns the caps plan p commits to in windows ws: its
// highest import in each (kW, ≥ 0).
func Commitments(p *energy.Plan, ws []devices.Window) []float64 {
	out := make([]float64, len(ws))
	for w, win := range ws {
		for t := win.From; t < win.To; t++ {
			out[w] = math.Max(out[w], p.Import[t])
		}
	}
	return out
}

// committed returns the street's committed caps per window: the
// compiled homes' and the members' but member skip's.
func (s *Street) committed(ms []*Member, skip int) []float64 {
	f := &s.Feeder
	out := make([]float64, len(f.Windows))
	if f.Committed != nil {
		copy(out, f.Committed)
	}
	for i, m := range ms {
		if i == skip {
			continue
		}
		for w, c := range Commitments(m.Plan, f.Windows) {
			out[w] += c
		}
	}
	return out
}

// excess returns by how many kW the street's committed caps exceed the
// feeder limit per window (nil without a limit or members: the compiled
// homes' own excess is their result's).
func (s *Street) excess(ms []*Member) []float64 {
	if !s.feederOn() || len(ms) == 0 {
		return nil
	}
	out := s.committed(ms, -1)
	for w, c := range out {
		out[w] = math.Max(0, c-s.Feeder.Limit)
	}
	return out
}

// Objective is the street's objective of the members' plans: their costs
// (bill, penalties and wear, energy.Plan.Cost less its Coordination),
// the peak term on the load that flows, and what the street's committed
// caps exceed the feeder limit by, at its price.
func (s *Street) Objective(ms []*Member) float64 {
	total := 0.0
	for _, m := range ms {
		total += m.Plan.Cost() - m.Plan.Coordination
	}
	total += s.peakTerm(ms)
	for w, x := range s.excess(ms) {
		total += s.price(ms, w) * x
	}
	return total
}

// peakTerm is Weight × Σ over the peak's slots of Δ_t·Δ_0·[Σ_h d_h² +
// Σ_{linked h,g} 2·d_h·d_g], d being the load that flows: (Δ·L)² on a
// street of even slots where every pair is linked (Peak).
func (s *Street) peakTerm(ms []*Member) float64 {
	pk := s.Peak
	if len(ms) == 0 || pk.Weight == 0 {
		return 0
	}
	dt := ms[0].Home.Dt
	d0 := dt[0]
	total := 0.0
	if s.Links == nil {
		load := s.load(ms)
		for _, t := range pk.Slots {
			total += dt[t] * d0 * load[t] * load[t]
		}
		return pk.Weight * total
	}
	loads := s.loads(ms)
	for _, t := range pk.Slots {
		sum := 0.0
		for _, l := range loads {
			sum += l[t] * l[t]
		}
		for _, k := range s.Links {
			sum += 2 * loads[k[0]][t] * loads[k[1]][t]
		}
		total += dt[t] * d0 * sum
	}
	return pk.Weight * total
}

// loads returns every home's load that flows, in the street's
// numbering.
func (s *Street) loads(ms []*Member) [][]float64 {
	out := slices.Clone(s.Compiled)
	for _, m := range ms {
		out = append(out, m.Plan.Import)
	}
	return out
}

// load returns the street's load that flows per slot.
func (s *Street) load(ms []*Member) []float64 {
	return s.others(ms, -1)
}

// others returns the street's load that flows without member skip.
func (s *Street) others(ms []*Member, skip int) []float64 {
	T := len(ms[0].Home.Dt)
	out := make([]float64, T)
	for _, l := range s.Compiled {
		for t, v := range l {
			out[t] += v
		}
	}
	for i, m := range ms {
		if i == skip {
			continue
		}
		for t, v := range m.Plan.Import {
			out[t] += v
		}
	}
	return out
}

// seen returns the load member i answers: the rest of the street's, or
// where not every pair is linked its neighbours'.
func (s *Street) seen(ms []*Member, i int) []float64 {
	if s.Links == nil {
		return s.others(ms, i)
	}
	me := len(s.Compiled) + i
	loads := s.loads(ms)
	out := make([]float64, len(ms[0].Home.Dt))
	for _, k := range s.Links {
		o := -1
		switch me {
		case k[0]:
			o = k[1]
		case k[1]:
			o = k[0]
		}
		if o < 0 {
			continue
		}
		for t, v := range loads[o] {
			out[t] += v
		}
	}
	return out
}

// Objective is the objective of a street of the members, base (the rest
// of the street's import per slot, kW; nil for none) and peak term pk,
// every pair linked and no feeder limit (Street.Objective).
func Objective(ms []*Member, base []float64, pk Peak) float64 {
	return baseStreet(base, pk).Objective(ms)
}

func baseStreet(base []float64, pk Peak) *Street {
	s := &Street{Peak: pk}
	if base != nil {
		s.Compiled = [][]float64{base}
	}
	return s
}

// Coordinate is CoordinateStreet on a street of the members and base
// (the rest of the street's import per slot, kW; nil for none) under
// peak term pk, every pair linked and without a feeder limit.
func Coordinate(ctx context.Context, ms []*Member, base []float64, pk Peak, o Options) (*Result, error) {
	return CoordinateStreet(ctx, ms, baseStreet(base, pk), o)
}

// CoordinateStreet lowers the street's Objective from the members' alone
// plans (PlanAlone first) by best responses: in each round every member
// in turn is planned again with the peak term around the load it sees
// N(t) (the rest of the street's, or its neighbours') as import steps —
// on a band [a, b] of its own import the price per kWh
// Weight·Δ_0·(2N + a + b), the exact change of
// Weight·Δ_t·Δ_0·((N + x)² − N²) across the band (Peak) — and with its share of the feeder limit: in each
// window the limit less the others' committed caps, as a hard cap
// (energy.Grid.Cap) where the limit is hard and the street keeps it, else
// priced per kW of its highest import above it (energy.Grid.Windows).
// It adopts the new plan when it lowers the street's objective
// (evaluated exactly, with the squares) by more than rounding. The
// objective is a potential: each adopted plan lowers it, so the rounds
// end; they stop when no member moves or after Rounds. Every adopted plan
// has passed the checker. A hard feeder limit the street still exceeds
// at the end is an error wrapping energy.ErrInfeasible.
func CoordinateStreet(ctx context.Context, ms []*Member, s *Street, o Options) (*Result, error) {
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
	res := &Result{AloneLoad: s.load(ms)}
	res.Start = s.Objective(ms)
	cur := res.Start
	rounds := func() error {
		for r := 0; r < o.Rounds; r++ {
			res.Rounds++
			moved := false
			for i := range ms {
				next, adopted, err := s.Answer(ctx, ms, i, cur, o)
				if err != nil {
					return err
				}
				if adopted {
					cur, moved = next, true
					res.Moves++
				}
			}
			if !moved {
				break
			}
		}
		return nil
	}
	if s.peakOn() || s.feederOn() {
		if err := rounds(); err != nil {
			return nil, err
		}
		// A hard limit still exceeded: breakout phases (Breakout), on
		// a copy of s that carries their weights.
		b := *s
		s = &b
		for s.Breakout(ms) {
			cur = s.Objective(ms)
			if err := rounds(); err != nil {
				return nil, err
			}
		}
		s.breakout, s.breakouts = nil, 0
		cur = s.Objective(ms)
	}
	res.Final = cur
	res.Load = s.load(ms)
	res.FeederExcess = s.excess(ms)
	if err := s.CheckHard(ms, res.Rounds); err != nil {
		return nil, err
	}
	return res, nil
}

// Breakouts bounds the breakout phases of a hard feeder limit
// (Breakout), and BreakoutFactor is what each raises the price of a
// window still over the limit by.
const (
	Breakouts      = 5
	BreakoutFactor = 10
)

// Breakout starts the next breakout phase where the members' plans
// exceed a hard feeder limit: one-home-at-a-time best responses can end
// above it where keeping it needs a joint move (one home drawing less in
// a window within the limit so that another can draw more there and
// less in the window over it). It raises the price of every window over
// the limit BreakoutFactor times and lifts the members' hard caps (each
// window is priced), so that a home can move its excess into a window
// within the limit and the homes there answer it, as the breakout
// method of constraint satisfaction does (Morris, 1993). Each phase's
// rounds lower the street's objective at those weights, a potential as
// before. It reports whether a phase starts: false when the street keeps
// the limit, it is soft, or Breakouts phases have run. s's weights stay
// until the caller drops the copy it ran them on.
func (s *Street) Breakout(ms []*Member) bool {
	if !s.Feeder.Hard || !s.feederOn() {
		return false
	}
	ex := s.excess(ms)
	if !slices.ContainsFunc(ex, func(x float64) bool { return x > plancheck.Tolerance }) {
		return false
	}
	if s.breakout == nil {
		s.breakout = make([]float64, len(s.Feeder.Windows))
		for w := range s.breakout {
			s.breakout[w] = 1
		}
	} else {
		s.breakout = slices.Clone(s.breakout)
	}
	if s.breakouts >= Breakouts {
		return false
	}
	s.breakouts++
	for w, x := range ex {
		if x > plancheck.Tolerance {
			s.breakout[w] *= BreakoutFactor
		}
	}
	return true
}

// CheckHard returns an error wrapping energy.ErrInfeasible where the
// street has a hard feeder limit that the members' plans, after rounds
// of best responses, still exceed in some window; nil otherwise.
func (s *Street) CheckHard(ms []*Member, rounds int) error {
	if !s.Feeder.Hard {
		return nil
	}
	for w, x := range s.excess(ms) {
		if x > plancheck.Tolerance {
			answering := ""
			if len(s.Compiled) > 0 {
				answering = ", the energy homes answering the compiled homes' committed levels"
			}
			return fmt.Errorf("window %d: the committed caps exceed the hard feeder limit %g kW by %.3g kW after %d rounds of best responses%s; raise the limit or make it soft: %w", w, s.Feeder.Limit, x, rounds, answering, energy.ErrInfeasible)
		}
	}
	return nil
}

// Answer is member i's turn in a round of CoordinateStreet's best
// responses (o with its defaults filled in), cur being the street's
// Objective before it: the member is planned again around the load it
// sees and with its share of the feeder limit, and adopts the answer
// when it lowers the objective by more than o.Gain of it. It returns the
// objective after the turn and whether the member adopted a new plan
// (checked; m.Plan is then the new one). `hearth run` runs the same
// turns, home by home, over MQTT (internal/energyround).
func (s *Street) Answer(ctx context.Context, ms []*Member, i int, cur float64, o Options) (float64, bool, error) {
	if err := ctx.Err(); err != nil {
		return cur, false, err
	}
	if o.Bands <= 0 {
		o.Bands = DefaultBands
	}
	if o.Gain <= 0 {
		o.Gain = DefaultGain
	}
	m := ms[i]
	model := func(caps bool) (energy.Home, bool) {
		h := *m.Home
		if s.peakOn() {
			at := m.Plan.Import
			if o.EvenBands {
				at = nil
			}
			h.Grid.ImportSteps = steps(&h, s.seen(ms, i), at, s.Peak, o.Bands)
		}
		return h, s.share(&h, ms, i, caps)
	}
	h, capped := model(s.breakout == nil)
	p, err := energy.Solve(ctx, &h, o.Energy)
	if capped && errors.Is(err, energy.ErrInfeasible) {
		// Its share of a hard limit is within the planner's margin of
		// a load it cannot shed there: it answers with every window of
		// the limit priced (at the hard price) instead, so that it
		// can still bring the street within the limit elsewhere;
		// where that fails too it keeps its plan.
		h, _ = model(false)
		if p, err = energy.Solve(ctx, &h, o.Energy); err != nil {
			return cur, false, nil
		}
	}
	if err != nil {
		return cur, false, fmt.Errorf("energy home %s: coordinating: %w", h.Name, err)
	}
	old := m.Plan
	m.Plan = p
	next := s.Objective(ms)
	if next >= cur-o.Gain*math.Max(1, math.Abs(cur)) {
		m.Plan = old
		return cur, false, nil
	}
	// Checked with its share of a hard feeder limit.
	rep := plancheck.Check(&h, p)
	if err := rep.Err(); err != nil {
		return cur, false, fmt.Errorf("energy home %s: %w", h.Name, err)
	}
	m.Check = rep
	return next, true, nil
}

// Excess is by how many kW the street's committed caps exceed its
// feeder limit per window with the members' plans (nil without a limit).
func (s *Street) Excess(ms []*Member) []float64 { return s.excess(ms) }

// share gives member i's model h its share of the feeder limit: in each
// window where it may bind, the limit less the rest of the street's
// committed caps — with caps, a hard cap where the limit is hard and the
// street keeps it in that window, else (and always without caps) a
// priced window. It reports whether it set a hard cap.
func (s *Street) share(h *energy.Home, ms []*Member, i int, caps bool) bool {
	if !s.feederOn() {
		return false
	}
	f := &s.Feeder
	rest := s.committed(ms, i)
	mine := Commitments(ms[i].Plan, f.Windows)
	h.Grid.Windows = slices.Clone(h.Grid.Windows)
	capped := false
	for w, win := range f.Windows {
		budget := f.Limit - rest[w]
		top := 0.0
		for t := win.From; t < win.To; t++ {
			top = math.Max(top, maxImport(h, t))
		}
		if budget >= top {
			continue // no plan of the home reaches it
		}
		if caps && f.Hard && mine[w] <= budget+plancheck.Tolerance {
			if !capped {
				h.Grid.Cap = capsOf(h)
				capped = true
			}
			for t := win.From; t < win.To; t++ {
				b := math.Max(budget, 0)
				if math.IsNaN(h.Grid.Cap[t]) || b < h.Grid.Cap[t] {
					h.Grid.Cap[t] = b
				}
			}
			continue
		}
		h.Grid.Windows = append(h.Grid.Windows, energy.CapWindow{From: win.From, To: win.To, Budget: budget, Price: s.price(ms, w)})
	}
	return capped
}

// capsOf returns a copy of h's committed caps, NaN (none) where it has
// none.
func capsOf(h *energy.Home) []float64 {
	if h.Grid.Cap != nil {
		return slices.Clone(h.Grid.Cap)
	}
	out := make([]float64, h.Slots())
	for t := range out {
		out[t] = math.NaN()
	}
	return out
}

// maxImport is the most home h can import in slot t: its load and every
// storage charging at full power.
func maxImport(h *energy.Home, t int) float64 {
	top := math.Max(h.Load[t], 0)
	for _, s := range h.Storage {
		top += s.MaxCharge
	}
	return top
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
		top := maxImport(h, t)
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
