package devices

import (
	"fmt"
	"math"
)

// Schedule is a plan for every home of a neighbourhood.
type Schedule struct {
	Homes []HomeSchedule
}

// HomeSchedule is one home's plan: an action per device and slot, and the
// level it commits to in each coordination window.
type HomeSchedule struct {
	// Actions[d][t] is the index of device d's action in slot t.
	Actions [][]int
	// Levels[w] is the level committed in window w; nil commits the
	// tightest level that the actions fit (Tightest).
	Levels []int
}

// Evaluation is the cost and the check of a schedule, computed directly
// from the model (trajectories simulated slot by slot), independently of
// the compiled problem.
type Evaluation struct {
	// Cost is the objective: PriceCost + PeakCost + CycleCost +
	// MissCost − StoredValue, +Inf when the schedule breaks a hard
	// constraint.
	Cost      float64
	PriceCost float64 // Weights.Price × Σ price·energy
	PeakCost  float64 // Weights.Peak × the peak term
	// CycleCost is Weights.Price × Σ CycleCost·|power|·Δ of the devices.
	CycleCost float64
	// MissCost is Weights.Miss × what the soft rules and a soft feeder
	// limit miss by (MissUnits).
	MissCost float64
	// StoredValue is Weights.Price × Σ EndValue × the value left at the
	// last index of every property with an EndValue.
	StoredValue float64
	Feasible    bool
	// Violations says what breaks, one line each.
	Violations []string
	// Misses are the soft rules the schedule misses, one line each
	// (HomeEvaluation.Miss has the amounts).
	Misses []string
	// FeederExcess[w] is by how many kW the committed caps exceed a
	// soft feeder limit in window w (0 where they keep it).
	FeederExcess []float64
	Homes        []HomeEvaluation
	// Load is the neighbourhood's draw per slot; Committed the sum of the
	// committed caps per window.
	Load      []float64
	Committed []float64
	// LoadSquares is Σ_t (Load(t)·Δ)², the actual (not committed) peak
	// measure of SHDS (shds-model.md §4.4), Σ_t Load(t)²·Δ_t·Δ_0 on a
	// horizon of uneven slots (Horizon.PeakHours); PeakLoad is
	// max_t Load(t).
	LoadSquares, PeakLoad float64
}

// HomeEvaluation is one home's part.
type HomeEvaluation struct {
	// Load is the draw per slot (power units).
	Load []float64
	// Energy is Σ draw·Δ; Price is Σ price·draw·Δ (unweighted, the
	// home's tariff: Neighbourhood.Tariff).
	Energy, Price float64
	// Curtail is the PV power left unused per slot (Meter.Curtail); Over
	// the energy beyond a soft import or export limit per slot (power
	// units·hours); both nil for a home without a meter.
	Curtail, Over []float64
	// Stored is the value of what the home's storage holds at the
	// horizon's end (unweighted: Σ EndValue × the last value).
	Stored float64
	// Demand is the home's demand charge (unweighted, Meter.DemandCharge
	// on its highest import); PriceCost includes it.
	Demand float64
	// Peak is the greatest draw of the horizon.
	Peak float64
	// Levels and Caps are the committed level and its cap per window.
	Levels []int
	Caps   []float64
	// Rules[r] reports whether rule r holds.
	Rules []bool
	// Miss[r] is by how much soft rule r misses, in the property's unit
	// (0 where it holds): for a before/after goal that never holds in
	// its window, the shortfall at the window's last boundary; for an
	// at/within rule or one without a time, the worst shortfall over its
	// window. MissUnits[r] is what Weights.Miss is charged for: the same
	// for a before/after goal, the sum over the window's boundaries for
	// the others.
	Miss, MissUnits []float64
	// Values[p] is property p's trajectory in natural units (nil for
	// properties no rule mentions).
	Values [][]float64
}

// Evaluate checks and prices a schedule. It returns an error only for a
// schedule of the wrong shape.
func (n *Neighbourhood) Evaluate(s *Schedule) (*Evaluation, error) {
	if len(s.Homes) != len(n.Homes) {
		return nil, fmt.Errorf("schedule has %d homes, the neighbourhood %d", len(s.Homes), len(n.Homes))
	}
	hz := n.Horizon
	ev := &Evaluation{Feasible: true, Load: make([]float64, hz.Slots), Committed: make([]float64, len(n.Windows))}
	ev.Homes = make([]HomeEvaluation, len(n.Homes))
	for hi := range n.Homes {
		h := &n.Homes[hi]
		hs := &s.Homes[hi]
		if err := h.checkShape(hs, hz.Slots, len(n.Windows)); err != nil {
			return nil, err
		}
		he := &ev.Homes[hi]
		he.Load = make([]float64, hz.Slots)
		he.Peak = math.Inf(-1)
		for t := range hz.Slots {
			dt := hz.SlotHours(t)
			for d := range h.Devices {
				dev := &h.Devices[d]
				ev.CycleCost += n.Weights.Price * dev.CycleCost * math.Abs(dev.Act(hs.Actions[d][t]).Power) * dt
				if !dev.Allowed(t, hs.Actions[d][t]) {
					ev.violate("home %s device %s slot %d: runs %s while away (not plugged in)", h.Name, dev.Name, t, dev.Act(hs.Actions[d][t]).Name)
				}
			}
			act := func(d int) int { return hs.Actions[d][t] }
			noImport, noExport := h.Restricted(t, act)
			m := n.Meter(hi, t, h.Draw(t, act), noImport, noExport)
			he.Load[t] = m.Draw
			he.Energy += he.Load[t] * dt
			he.Price += m.Bill
			if m.Broken != "" {
				ev.violate("home %s slot %d: %s", h.Name, t, m.Broken)
			}
			if h.Meter != nil {
				if he.Curtail == nil {
					he.Curtail, he.Over = make([]float64, hz.Slots), make([]float64, hz.Slots)
				}
				he.Curtail[t], he.Over[t] = m.Curtail, m.Over
				if m.Over > 0 {
					ev.MissCost += n.Weights.Miss * m.Over
					ev.Misses = append(ev.Misses, fmt.Sprintf("home %s slot %d: %g beyond its limits", h.Name, t, m.Over))
				}
			}
			he.Peak = math.Max(he.Peak, he.Load[t])
			ev.Load[t] += he.Load[t]
		}
		imports := 0.0
		for _, l := range he.Load {
			imports = math.Max(imports, l)
		}
		he.Demand = n.Demand(hi, imports)
		ev.PriceCost += n.Weights.Price * (he.Price + he.Demand)
		he.Levels = make([]int, len(n.Windows))
		he.Caps = make([]float64, len(n.Windows))
		for w, win := range n.Windows {
			caps := n.LevelCaps(hi, w)
			top := math.Inf(-1)
			for t := win.From; t < win.To; t++ {
				top = math.Max(top, he.Load[t])
			}
			k := Tightest(caps, top)
			if hs.Levels != nil {
				k = hs.Levels[w]
			}
			if k < 0 || k >= len(caps) {
				return nil, fmt.Errorf("home %s: level %d of window %d is outside 0..%d", h.Name, k, w, len(caps)-1)
			}
			he.Levels[w], he.Caps[w] = k, caps[k]
			ev.Committed[w] += caps[k]
			if !Fits(top, caps[k]) {
				ev.violate("home %s draws %g in window %d, above its committed cap %g", h.Name, top, w, caps[k])
			}
		}
		n.checkRules(h, hs, ev, he)
		for pi := range h.Properties {
			p := &h.Properties[pi]
			if p.EndValue == 0 {
				continue
			}
			traj := h.trajectory(hz, pi, hs)
			he.Stored += p.EndValue * float64(traj[len(traj)-1]) * p.Scale
		}
		ev.StoredValue += n.Weights.Price * he.Stored
	}
	ev.PeakCost = n.Weights.Peak * n.peakTerm(ev)
	ev.PeakLoad = math.Inf(-1)
	for t, l := range ev.Load {
		ev.LoadSquares += l * hz.SlotHours(t) * l * hz.Hours()
		ev.PeakLoad = math.Max(ev.PeakLoad, l)
	}
	ev.FeederExcess = make([]float64, len(n.Windows))
	for w, c := range ev.Committed {
		switch {
		case n.FeederLimit <= 0 || Fits(c, n.FeederLimit):
		case n.FeederSoft:
			ev.FeederExcess[w] = c - n.FeederLimit
			ev.MissCost += n.Weights.Miss * ev.FeederExcess[w] * n.WindowHours(w)
			ev.Misses = append(ev.Misses, fmt.Sprintf("window %d: committed caps add up to %g, %g above the feeder limit %g", w, c, c-n.FeederLimit, n.FeederLimit))
		default:
			ev.violate("window %d: committed caps add up to %g, above the feeder limit %g", w, c, n.FeederLimit)
		}
	}
	ev.Cost = ev.PriceCost + ev.PeakCost + ev.CycleCost + ev.MissCost - ev.StoredValue
	if !ev.Feasible {
		ev.Cost = math.Inf(1)
	}
	return ev, nil
}

// peakTerm returns Σ_w Σ_{t∈w} Δ_t·Δ_0·[Σ_h (cap_h + outside_h(t))² + Σ_links 2·cap_h·cap_g]
// (Horizon.PeakHours: Δ² on a horizon of one slot length).
func (n *Neighbourhood) peakTerm(ev *Evaluation) float64 {
	total := 0.0
	for w, win := range n.Windows {
		for t := win.From; t < win.To; t++ {
			sum := 0.0
			for hi := range n.Homes {
				c := ev.Homes[hi].Caps[w]
				if o := n.Homes[hi].OutsideLoad; o != nil {
					c += o[t]
				}
				sum += c * c
			}
			for _, l := range n.Linked() {
				sum += 2 * ev.Homes[l[0]].Caps[w] * ev.Homes[l[1]].Caps[w]
			}
			total += n.Horizon.PeakHours(t) * sum
		}
	}
	return total
}

func (ev *Evaluation) violate(format string, args ...any) {
	ev.Feasible = false
	ev.Violations = append(ev.Violations, fmt.Sprintf(format, args...))
}

func (h *Home) checkShape(hs *HomeSchedule, slots, windows int) error {
	if len(hs.Actions) != len(h.Devices) {
		return fmt.Errorf("home %s: schedule has %d devices, the home %d", h.Name, len(hs.Actions), len(h.Devices))
	}
	for d, row := range hs.Actions {
		if len(row) != slots {
			return fmt.Errorf("home %s: device %s has %d slots scheduled, the horizon %d", h.Name, h.Devices[d].Name, len(row), slots)
		}
		for t, a := range row {
			if a < 0 || a >= h.Devices[d].NumActs() {
				return fmt.Errorf("home %s: device %s slot %d: action %d is not one of its %d actions", h.Name, h.Devices[d].Name, t, a, h.Devices[d].NumActs())
			}
		}
	}
	if hs.Levels != nil && len(hs.Levels) != windows {
		return fmt.Errorf("home %s: schedule has %d levels for %d windows", h.Name, len(hs.Levels), windows)
	}
	return nil
}

// checkRules simulates every property a rule mentions and checks each rule
// on its window: a hard rule that breaks is a violation, a soft one a miss
// priced at Weights.Miss per unit.
func (n *Neighbourhood) checkRules(h *Home, hs *HomeSchedule, ev *Evaluation, he *HomeEvaluation) {
	hz := n.Horizon
	ok := make([]bool, len(h.Rules))
	he.Miss = make([]float64, len(h.Rules))
	he.MissUnits = make([]float64, len(h.Rules))
	values := make([][]float64, len(h.Properties))
	steps := map[int][]int64{}
	for ri := range h.Rules {
		r := &h.Rules[ri]
		pi := h.Property(r.Location, r.Property)
		if pi < 0 {
			ev.violate("home %s: rule %q names no property of the home", h.Name, r.Text)
			continue
		}
		p := &h.Properties[pi]
		traj, done := steps[pi]
		if !done {
			traj = h.trajectory(hz, pi, hs)
			steps[pi] = traj
			values[pi] = make([]float64, len(traj))
			for i, v := range traj {
				values[pi][i] = float64(v) * p.Scale
			}
		}
		goal := Steps(r.Goal, p.Scale)
		from, to, anyOf := hz.RuleWindow(r)
		holds := !anyOf
		for i := from; i < to; i++ {
			if r.Rel.Holds(traj[i], goal) == anyOf {
				holds = anyOf
				break
			}
		}
		ok[ri] = holds
		switch {
		case holds:
		case !r.Soft:
			ev.violate("home %s: rule %q does not hold", h.Name, r.Text)
		default:
			var worst, units int64
			if anyOf {
				if to > from {
					worst = r.Rel.Shortfall(traj[to-1], goal)
					units = worst
				}
			} else {
				for i := from; i < to; i++ {
					m := r.Rel.Shortfall(traj[i], goal)
					worst, units = max(worst, m), units+m
				}
			}
			he.Miss[ri], he.MissUnits[ri] = float64(worst)*p.Scale, float64(units)*p.Scale
			ev.MissCost += n.Weights.Miss * he.MissUnits[ri]
			ev.Misses = append(ev.Misses, fmt.Sprintf("home %s: rule %q misses by %s", h.Name, r.Text, p.format(worst)))
		}
	}
	he.Rules, he.Values = ok, values
}

// trajectory simulates property pi in steps over every index.
func (h *Home) trajectory(hz Horizon, pi int, hs *HomeSchedule) []int64 {
	p := &h.Properties[pi]
	out := make([]int64, hz.Indices())
	out[0] = Steps(p.Initial, p.Scale)
	for i := 1; i < len(out); i++ {
		t := hz.Mover(i)
		v := out[i-1] + Steps(p.DriftIn(hz, t), p.Scale)
		for d := range h.Devices {
			dev := &h.Devices[d]
			if !dev.Affects(p.Location, p.Name) {
				continue
			}
			delta, _ := dev.Act(hs.Actions[d][t]).EffectIn(p.Name, hz, t)
			v += Steps(delta, p.Scale)
		}
		out[i] = p.At(i, v)
	}
	return out
}
