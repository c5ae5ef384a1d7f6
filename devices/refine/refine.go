// Package refine moves a compiled plan's devices with exact actions
// (devices.Device.Exact: a wallbox with power_steps = "auto", whose
// compiled levels credit each current with its energy rounded down to
// whole quanta, and a home battery with power_steps = "auto", whose
// levels move whole quanta) onto their physical actions after the solve.
//
// The compiler tables a storage's energy in whole quanta, so a plan can
// only follow whole quanta: where the whole-current optimum clears a
// goal by a few watt-hours the quantised plan pays for a larger current,
// and a battery's plan moves 0.3 kWh steps where a continuous inverter
// could follow the prices more closely (docs/DESIGN.md, "Automatic
// levels are refined onto the exact currents after the solve").
// Here, with every other device's actions and the home's committed levels
// fixed, an exact dynamic programme chooses the device's action in every
// slot — off or one of its exact actions — over its stored energy in
// whole steps of the property's resolution (1 mWh for a wallbox or a
// battery, devices.ExactResolution): its
// states are the pairs (stored energy, which of the property's
// before/after goals have held so far), and a slot's cost is the home's
// own objective of the slot as the model prices it (devices.Neighbourhood.
// Meter: import and export prices, soft limits, grid permissions; the
// cycle cost), the goals soft with their penalty or hard, the property's
// range and the value of what it stores at the end. A device away in a
// slot (devices.Device.Away: an EV outside its plugged-in window) is off
// there.
//
// The street's terms on committed levels read a home's draw only
// through its committed caps (the peak term and the feeder limit are over
// caps, not loads), so the refinement keeps each home's committed level
// and holds the draw of every slot of a coordination window within its
// cap; a home with a demand charge keeps its draw within the solved
// plan's highest import. A street is also judged on the load that flows,
// which reads the draws themselves: there a home's draw in a coordinated
// slot also stays at most the solved plan's (ScheduleOnLoad, HomeOnLoad).
// A refined home is kept only where its objective, evaluated by the
// model (devices.Neighbourhood.Evaluate), is lower than the solved
// plan's: the street's objectives then never rise either. A home with
// several devices with exact actions (two batteries, a battery and an
// EV) refines them one at a time, each with the others as they then
// stand, in passes until a pass moves no device (MaxPasses): each
// device's plan is then its best response to the others', which is not
// always the home's joint optimum.
package refine

import (
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/devices"
)

// MaxStates bounds the states of one slot of the programme. Past it the
// device keeps its compiled plan. A wallbox's currents store whole
// multiples of one ampere's energy (devices.ExactResolution), so the sums
// stay few: the seeded quarter-hour homes of devices/compile's
// TestAutoStepsAgainstLP reach at most 3,266 states a slot. A battery's
// exact actions store whole multiples of δ (devices.ExactBatteryBudget
// bounds its values times its actions), 271 values for 13.5 kWh hourly.
const MaxStates = 1 << 18

// maxDense bounds the dense table of a slot's states (entries of 4
// bytes).
const maxDense = 1 << 21

// maxGoals bounds the before/after goals of the refined property: their
// bits share a state's key with its value (in steps, under 2^40).
const maxGoals = 16

// Schedule refines every home of s that has a device with exact actions
// and returns the refined schedule (every home's levels fixed to the
// committed ones of ev) and its evaluation; s itself is left as it is.
// A schedule that breaks a hard constraint comes back unchanged. Each
// home is refined on its own objective within its committed caps: what a
// street whose terms read only committed caps needs (ScheduleOnLoad for
// one also judged on the load that flows).
func Schedule(n *devices.Neighbourhood, s *devices.Schedule, ev *devices.Evaluation) (*devices.Schedule, *devices.Evaluation, error) {
	return schedule(n, s, ev, Home)
}

// ScheduleOnLoad is Schedule for a street also judged on the load that
// flows (the bill plus the peak term on the homes' per-slot draws,
// devices/baseline.FlowObjective): there a home's draw reaches the
// street's terms beyond its committed caps, and a refinement that only
// lowered the home's bill could move its charging into a slot the other
// homes use too and raise the street's peak. So each home is refined by
// HomeOnLoad, whose draw in no coordinated slot rises above the solved
// plan's: every term of the peak grows with a home's draw, so the
// street's peak term cannot rise, and the bill falls. It reads nothing of
// the other homes, so a home of `hearth run`, which knows only its own
// plan, refines it to the same plan as `hearth sim` does.
func ScheduleOnLoad(n *devices.Neighbourhood, s *devices.Schedule, ev *devices.Evaluation) (*devices.Schedule, *devices.Evaluation, error) {
	return schedule(n, s, ev, HomeOnLoad)
}

func schedule(n *devices.Neighbourhood, s *devices.Schedule, ev *devices.Evaluation, refineHome func(*devices.Neighbourhood, int, devices.HomeSchedule) (devices.HomeSchedule, bool, error)) (*devices.Schedule, *devices.Evaluation, error) {
	if !ev.Feasible || !HasExact(n) {
		return s, ev, nil
	}
	out := &devices.Schedule{Homes: slices.Clone(s.Homes)}
	changed := false
	for hi := range n.Homes {
		hs := out.Homes[hi]
		hs.Levels = slices.Clone(ev.Homes[hi].Levels)
		r, ok, err := refineHome(n, hi, hs)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			out.Homes[hi], changed = r, true
		}
	}
	if !changed {
		return s, ev, nil
	}
	ev2, err := n.Evaluate(out)
	if err != nil {
		return nil, nil, fmt.Errorf("refine: %w", err)
	}
	if !ev2.Feasible || ev2.Cost > ev.Cost+1e-9*math.Max(1, math.Abs(ev.Cost)) {
		// Each home is no worse alone and the caps are the same, so
		// this does not happen; keep the solved plan if it does.
		return s, ev, nil
	}
	return out, ev2, nil
}

// HasExact reports whether some home of n has a device with exact
// actions (Device.Exact: automatic power levels), the only devices a
// refinement moves; without one every refinement is the plan itself.
func HasExact(n *devices.Neighbourhood) bool {
	for hi := range n.Homes {
		for d := range n.Homes[hi].Devices {
			if n.Homes[hi].Devices[d].Exact != nil {
				return true
			}
		}
	}
	return false
}

// Home refines home hi's schedule hs (its Levels committed, or nil on a
// neighbourhood without windows) device by device and returns the
// refined schedule and true, or hs and false where no device with exact
// actions can be refined or the refinement would not lower the home's
// objective (a plan of equal cost does not replace the solved one).
func Home(n *devices.Neighbourhood, hi int, hs devices.HomeSchedule) (devices.HomeSchedule, bool, error) {
	return home(n, hi, hs, false, false, MaxPasses)
}

// HomeOnLoad is Home for a street also judged on the load that flows
// (ScheduleOnLoad): besides its committed caps, the home's draw in every
// slot of a coordination window stays at most the solved plan's (its
// positive part: power fed back offsets nobody's peak), so that its part
// of the street's peak term cannot rise.
func HomeOnLoad(n *devices.Neighbourhood, hi int, hs devices.HomeSchedule) (devices.HomeSchedule, bool, error) {
	return home(n, hi, hs, true, false, MaxPasses)
}

// HomeRolling is Home (HomeOnLoad where onLoad) for a plan on a rolling
// horizon, of which only slot 0 runs before the next round plans again
// from what the devices then hold: in slot 0 every refined device stores
// at least what the solved plan's action does there. The next round's
// compiled levels credit each current with its energy rounded down to
// whole quanta, so a home that a refinement left exactly on course for
// its goal (a wallbox's bill-cheapest currents, deferred to later slots)
// is behind the course the next solve can follow at the same committed
// level, and that solve buys the goal with a higher level: on the live
// example's night, alder's car at 8.46 kW in the 21:00 window where the
// plan made at 17:00 charged at 3.86 (docs/DESIGN.md, "Live streets
// take automatic levels"). Ahead of the solved plan at the slot's end,
// the home can always follow the rest of it.
func HomeRolling(n *devices.Neighbourhood, hi int, hs devices.HomeSchedule, onLoad bool) (devices.HomeSchedule, bool, error) {
	return home(n, hi, hs, onLoad, true, MaxPasses)
}

// home is Home, HomeOnLoad where onLoad, and HomeRolling where rolling,
// in at most maxPasses passes over the devices with exact actions.
func home(n *devices.Neighbourhood, hi int, hs devices.HomeSchedule, onLoad, rolling bool, maxPasses int) (devices.HomeSchedule, bool, error) {
	if hi < 0 || hi >= len(n.Homes) {
		return hs, false, fmt.Errorf("refine: home %d of %d", hi, len(n.Homes))
	}
	h := &n.Homes[hi]
	if n.Horizon.Dynamics != devices.Full || len(hs.Actions) != len(h.Devices) {
		return hs, false, nil
	}
	if len(n.Windows) > 0 && len(hs.Levels) != len(n.Windows) {
		return hs, false, fmt.Errorf("refine: home %s: %d levels for %d windows", h.Name, len(hs.Levels), len(n.Windows))
	}
	own := alone(n, hi)
	one := func(hs devices.HomeSchedule) (*devices.Evaluation, error) {
		return own.Evaluate(&devices.Schedule{Homes: []devices.HomeSchedule{hs}})
	}
	before, err := one(hs)
	if err != nil {
		return hs, false, fmt.Errorf("refine: %w", err)
	}
	if !before.Feasible {
		return hs, false, nil
	}
	// On the load that flows: the solved draw bounds each coordinated
	// slot's.
	var bound []float64
	if onLoad {
		bound = make([]float64, n.Horizon.Slots)
		for t := range bound {
			bound[t] = math.Inf(1)
		}
		for _, w := range n.Windows {
			for t := w.From; t < w.To && t < len(bound); t++ {
				bound[t] = math.Max(before.Homes[0].Load[t], 0)
			}
		}
	}
	cur := hs
	cur.Actions = slices.Clone(hs.Actions)
	done := false
	var exact []int
	for d := range h.Devices {
		if h.Devices[d].Exact == nil {
			continue
		}
		exact = append(exact, d)
		row, ok := device(own, 0, cur, d, before.Homes[0].Peak, bound, rolling)
		if ok {
			cur.Actions[d], done = row, true
		}
	}
	if !done {
		return hs, false, nil
	}
	after, err := one(cur)
	if err != nil {
		return hs, false, fmt.Errorf("refine: %w", err)
	}
	if !after.Feasible || after.Cost >= before.Cost-1e-9*math.Max(1, math.Abs(before.Cost)) {
		// Not better: the solved plan stays, rather than another of
		// equal cost.
		return hs, false, nil
	}
	if len(exact) > 1 && maxPasses > 1 {
		// Two or more devices: each was its best response to the others
		// as they then stood; again until no device moves.
		cur, err = passes(own, cur, after.Cost, exact, maxPasses, before.Homes[0].Peak, bound, rolling)
		if err != nil {
			return hs, false, err
		}
	}
	return cur, true, nil
}

// MaxPasses bounds the passes of a home's refinement over its devices
// with exact actions (the first included). Each pass after the first
// refines every such device again, with the others as they then stand,
// and keeps a device's new plan only where the home's objective falls
// (by more than a relative 1e-9), so the passes never raise it and end
// where a pass moves no device: each device's plan is then its best
// response to the others' (coordinate descent; not necessarily the
// joint optimum, TestRefineTwoBatteriesJoint measures the gap against
// CBC's).
const MaxPasses = 16

// passes repeats the refinement of home 0 of n (hs, of objective cost,
// after the first pass) over the devices exact until a pass moves none
// of them, or maxPasses in all.
func passes(n *devices.Neighbourhood, hs devices.HomeSchedule, cost float64, exact []int, maxPasses int, peak float64, bound []float64, rolling bool) (devices.HomeSchedule, error) {
	for range maxPasses - 1 {
		moved := false
		for _, d := range exact {
			row, ok := device(n, 0, hs, d, peak, bound, rolling)
			if !ok || slices.Equal(row, hs.Actions[d]) {
				continue
			}
			cand := hs
			cand.Actions = slices.Clone(hs.Actions)
			cand.Actions[d] = row
			ev, err := n.Evaluate(&devices.Schedule{Homes: []devices.HomeSchedule{cand}})
			if err != nil {
				return hs, fmt.Errorf("refine: %w", err)
			}
			if ev.Feasible && ev.Cost < cost-1e-9*math.Max(1, math.Abs(cost)) {
				hs, cost, moved = cand, ev.Cost, true
			}
		}
		if !moved {
			break
		}
	}
	return hs, nil
}

// alone is home hi as a neighbourhood of its own, with the coordination
// windows (so that its committed caps still bound it) but no links and
// no feeder limit: what a home's objective is evaluated on.
func alone(n *devices.Neighbourhood, hi int) *devices.Neighbourhood {
	one := *n
	one.Homes = n.Homes[hi : hi+1]
	one.Links, one.FeederLimit = nil, 0
	return &one
}

// state is one state of the programme after a slot: the stored value in
// steps, the before/after goals held so far (bits), the least cost to
// reach it and how (the previous slot's state and the option taken).
type state struct {
	v    int64
	held uint64
	cost float64
	prev int32
	opt  int16
}

// goal is a rule on the refined property.
type goal struct {
	rule     *devices.Rule
	from, to int
	anyOf    bool
	goal     int64
	bit      uint64
}

// device returns device d's exact plan in home hi of n (a neighbourhood
// whose windows' caps bound the home through hs.Levels), with every other
// device as hs has it, and true; false where the device cannot be refined
// (its actions move more than one property, too many goals or states, or
// no plan keeps the hard rules). peak is the solved plan's highest draw,
// which a home with a demand charge keeps; bound, where not nil, bounds
// each slot's draw too (HomeOnLoad). Where rolling, slot 0 stores at
// least what hs's action does there (HomeRolling).
func device(n *devices.Neighbourhood, hi int, hs devices.HomeSchedule, d int, peak float64, bound []float64, rolling bool) ([]int, bool) {
	h, hz := &n.Homes[hi], n.Horizon
	dev := &h.Devices[d]
	T := hz.Slots
	// The one property the device moves.
	prop := ""
	for _, a := range slices.Concat(dev.Actions, dev.Exact) {
		for _, e := range a.Effects {
			if prop != "" && e.Property != prop {
				return nil, false
			}
			prop = e.Property
		}
	}
	pi := -1
	for i := range h.Properties {
		if h.Properties[i].Name == prop && dev.Affects(h.Properties[i].Location, prop) {
			if pi >= 0 {
				return nil, false
			}
			pi = i
		}
	}
	if pi < 0 {
		return nil, false
	}
	p := &h.Properties[pi]
	// The options: the compiled action that draws nothing and moves
	// nothing ("off"), and the exact actions.
	off := -1
	for a := range dev.Actions {
		if dev.Actions[a].Power == 0 && len(dev.Actions[a].Effects) == 0 {
			off = a
			break
		}
	}
	if off < 0 {
		return nil, false
	}
	opts := []int{off}
	for k := range dev.Exact {
		opts = append(opts, len(dev.Actions)+k)
	}
	// Per slot and option: its cost (the home's slot as the model prices
	// it, +Inf where it breaks a hard limit or the committed cap) and
	// what it moves the property by, the drift and the other devices'
	// effects included.
	demand := h.Meter != nil && h.Meter.DemandCharge > 0
	cost := make([][]float64, T)
	move := make([][]int64, T)
	for t := range T {
		dt := hz.SlotHours(t)
		base := devices.Steps(p.DriftIn(hz, t), p.Scale)
		for d2 := range h.Devices {
			if d2 == d || !h.Devices[d2].Affects(p.Location, p.Name) {
				continue
			}
			delta, _ := h.Devices[d2].Act(hs.Actions[d2][t]).EffectIn(p.Name, hz, t)
			base += devices.Steps(delta, p.Scale)
		}
		limit := math.Inf(1)
		if w := n.WindowOf(t); w >= 0 {
			limit = n.LevelCaps(hi, w)[hs.Levels[w]]
		}
		if bound != nil {
			limit = math.Min(limit, bound[t])
		}
		cost[t], move[t] = make([]float64, len(opts)), make([]int64, len(opts))
		for o, a := range opts {
			act := func(d2 int) int {
				if d2 == d {
					return a
				}
				return hs.Actions[d2][t]
			}
			noImport, noExport := h.Restricted(t, act)
			m := n.Meter(hi, t, h.Draw(t, act), noImport, noExport)
			pw := dev.Act(a).Power
			c := n.Weights.Price*m.Bill + n.Weights.Miss*m.Over + n.Weights.Price*dev.CycleCost*math.Abs(pw)*dt
			if m.Broken != "" || !devices.Fits(m.Draw, limit) || demand && !devices.Fits(m.Draw, math.Max(peak, h.Meter.DemandThreshold)) || a != off && dev.AwayIn(t) {
				c = math.Inf(1)
			}
			delta, _ := dev.Act(a).EffectIn(p.Name, hz, t)
			cost[t][o], move[t][o] = c, base+devices.Steps(delta, p.Scale)
		}
		if rolling && t == 0 {
			solved, _ := dev.Act(hs.Actions[d][0]).EffectIn(p.Name, hz, 0)
			for o := range opts {
				if move[0][o] < base+devices.Steps(solved, p.Scale) {
					cost[0][o] = math.Inf(1)
				}
			}
		}
	}
	// The rules on the property.
	var goals []goal
	for ri := range h.Rules {
		r := &h.Rules[ri]
		if r.Location != p.Location || r.Property != p.Name {
			continue
		}
		from, to, anyOf := hz.RuleWindow(r)
		g := goal{rule: r, from: from, to: to, anyOf: anyOf, goal: devices.Steps(r.Goal, p.Scale)}
		if anyOf {
			bits := 0
			for _, o := range goals {
				if o.anyOf {
					bits++
				}
			}
			if bits >= maxGoals {
				return nil, false
			}
			g.bit = 1 << bits
		}
		goals = append(goals, g)
	}
	lo, hi2 := int64(math.MinInt64), int64(math.MaxInt64)
	if p.Min != nil {
		lo = devices.Steps(*p.Min, p.Scale)
	}
	if p.Max != nil {
		hi2 = devices.Steps(*p.Max, p.Scale)
	}
	// at prices index i's rules for value v with goals held: the cost
	// (+Inf where a hard rule or the range breaks) and the goals held
	// after it (those whose window has closed are cleared, so that states
	// that differ only in them merge).
	at := func(i int, v int64, held uint64) (float64, uint64) {
		if v < lo || v > hi2 {
			return math.Inf(1), held
		}
		c := 0.0
		for j := range goals {
			g := &goals[j]
			if i < g.from || i >= g.to {
				continue
			}
			if !g.anyOf {
				if m := g.rule.Rel.Shortfall(v, g.goal); m > 0 {
					if !g.rule.Soft {
						return math.Inf(1), held
					}
					c += n.Weights.Miss * float64(m) * p.Scale
				}
				continue
			}
			if g.rule.Rel.Holds(v, g.goal) {
				held |= g.bit
			}
			if i == g.to-1 {
				if held&g.bit == 0 {
					if !g.rule.Soft {
						return math.Inf(1), held
					}
					c += n.Weights.Miss * float64(g.rule.Rel.Shortfall(v, g.goal)) * p.Scale
				}
				held &^= g.bit
			}
		}
		return c, held
	}
	v0 := devices.Steps(p.Initial, p.Scale)
	c0, held0 := at(0, v0, 0)
	if math.IsInf(c0, 1) {
		return nil, false
	}
	layers := make([][]state, T+1)
	layers[0] = []state{{v: v0, held: held0, cost: c0, prev: -1}}
	bits := 0
	for _, g := range goals {
		if g.anyOf {
			bits++
		}
	}
	// A slot's states by value and goals held: the values of a slot all
	// differ by whole multiples of g, the greatest common divisor of
	// what the options store beyond the drift and the other devices
	// (whole amperes' energy for a wallbox), so they are looked up in a
	// dense table over the slot's span in steps of g where it is small
	// enough, else in a map (keyed by the value shifted past the bits).
	var g int64
	for t := range T {
		for o := range opts {
			g = gcd(g, move[t][o]-move[t][0])
		}
	}
	var dense []int32
	index := map[int64]int32{}
	for t := range T {
		lo, hi := layers[t][0].v, layers[t][0].v
		for _, s := range layers[t] {
			lo, hi = min(lo, s.v), max(hi, s.v)
		}
		lo, hi = lo+slices.Min(move[t]), hi+slices.Max(move[t])
		_, reset := p.Reset[t+1]
		useDense := false
		if g > 0 && !reset {
			if span := ((hi-lo)/g + 1) << bits; span <= maxDense {
				useDense = true
				if int64(len(dense)) < span {
					dense = make([]int32, span)
				}
			}
		}
		clear(index)
		var next []state
		for si := range layers[t] {
			s := &layers[t][si]
			for o := range opts {
				if math.IsInf(cost[t][o], 1) {
					continue
				}
				v := p.At(t+1, s.v+move[t][o])
				c, held := at(t+1, v, s.held)
				if math.IsInf(c, 1) {
					continue
				}
				c += s.cost + cost[t][o]
				var k int64
				var j int32
				if useDense {
					// j is the state's place in next plus one, 0
					// for none.
					k = (v-lo)/g<<bits | int64(held)
					j = dense[k] - 1
				} else {
					k = v<<bits | int64(held)
					if i, ok := index[k]; ok {
						j = i
					} else {
						j = -1
					}
				}
				if j >= 0 {
					if c < next[j].cost {
						next[j] = state{v: v, held: held, cost: c, prev: int32(si), opt: int16(o)}
					}
					continue
				}
				if len(next) >= MaxStates {
					return nil, false
				}
				if useDense {
					dense[k] = int32(len(next)) + 1
				} else {
					index[k] = int32(len(next))
				}
				next = append(next, state{v: v, held: held, cost: c, prev: int32(si), opt: int16(o)})
			}
		}
		if useDense {
			// Only the entries this slot set: the table stays clear
			// for the next.
			for _, s := range next {
				dense[(s.v-lo)/g<<bits|int64(s.held)] = 0
			}
		}
		if len(next) == 0 {
			return nil, false
		}
		layers[t+1] = next
	}
	// The best end, net of what the stored value is worth.
	best, bestCost := -1, math.Inf(1)
	for i, s := range layers[T] {
		c := s.cost - n.Weights.Price*p.EndValue*float64(s.v)*p.Scale
		if c < bestCost {
			best, bestCost = i, c
		}
	}
	row := make([]int, T)
	for t, i := T, int32(best); t > 0; t-- {
		s := &layers[t][i]
		row[t-1] = opts[s.opt]
		i = s.prev
	}
	return row, true
}

// gcd returns the greatest common divisor of |a| and |b| (0 for two
// zeros).
func gcd(a, b int64) int64 {
	a, b = max(a, -a), max(b, -b)
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
