package compile

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/mva"
)

// allowed reports whether every device of h may run its action of acts
// in slot t (devices.Device.Allowed: a device away runs only its idle
// action).
func allowed(h *devices.Home, t int, acts []int) bool {
	for d := range h.Devices {
		if !h.Devices[d].Allowed(t, acts[d]) {
			return false
		}
	}
	return true
}

// prices adds one unary price function per action variable whose actions
// do not all cost nothing, at the home's tariff (Neighbourhood.Tariff).
// Where the bill is not linear in the devices' powers — the home can feed
// back and feeding back earns less than drawing, it has import or export
// limits, grid permissions or curtailable PV (devices.Meter) — the slot
// gets one meter function over all the home's actions instead,
// Weights.Price·Bill + Weights.Miss·Over from Neighbourhood.Meter with the
// background inside (the level link's scope, so it adds no width), Hard
// where a hard limit or a permission breaks.
func (k *compiler) prices(hi int) error {
	n, h, hc := k.n, &k.n.Homes[hi], &k.c.Homes[hi]
	imp, _ := n.Tariff(hi)
	k.meter[hi] = make([]bool, n.Horizon.Slots)
	for t := range n.Horizon.Slots {
		dt := n.Horizon.SlotHours(t)
		if k.meterSlot(hi, t) {
			k.meter[hi][t] = true
			sa := k.slotScope(hi, t)
			scope := sa.scope
			costs, err := k.table(fmt.Sprintf("home %s: the meter of slot %d", h.Name, t), scope, 0)
			if err != nil {
				return err
			}
			digits := make([]int, len(scope))
			acts := make([]int, len(h.Devices))
			act := func(d int) int { return acts[d] }
			for idx := range costs {
				if !sa.actions(digits, acts) {
					costs[idx] = mva.Hard
					next(digits, func(j int) int { return k.p.DomainSize(scope[j]) })
					continue
				}
				noImport, noExport := h.Restricted(t, act)
				m := n.Meter(hi, t, h.Draw(t, act), noImport, noExport)
				if m.Broken != "" || !allowed(h, t, acts) {
					costs[idx] = mva.Hard
				} else {
					costs[idx] = n.Weights.Price*m.Bill + n.Weights.Miss*m.Over
					for d := range h.Devices {
						costs[idx] += k.cycle(&h.Devices[d], acts[d], t)
					}
				}
				next(digits, func(j int) int { return k.p.DomainSize(scope[j]) })
			}
			k.add(hi, fmt.Sprintf("%s/meter@%d", h.Name, t), scope, costs)
			continue
		}
		for d := range h.Devices {
			dev := &h.Devices[d]
			costs := make([]float64, len(dev.Actions))
			zero := true
			for a := range dev.Actions {
				costs[a] = n.Weights.Price*imp[t]*dev.Actions[a].Power*dt + k.cycle(dev, a, t)
				if !dev.Allowed(t, a) {
					// Away (not plugged in): only its idle action.
					costs[a] = mva.Hard
				}
				zero = zero && costs[a] == 0
			}
			if !zero {
				k.add(hi, fmt.Sprintf("%s/price:%s@%d", h.Name, dev.Name, t), []int{hc.Actions[d][t]}, costs)
			}
		}
	}
	return nil
}

// endValues adds, for each property with an EndValue, the unary function
// −Weights.Price·EndValue·value on its state at the last index: what the
// energy left in storage at the horizon's end is worth. The property must
// be modelled to its last index (a catalogue storage's bounds make it so).
func (k *compiler) endValues(hi int) error {
	n, h, hc := k.n, &k.n.Homes[hi], &k.c.Homes[hi]
	for pi := range h.Properties {
		p := &h.Properties[pi]
		if p.EndValue == 0 {
			continue
		}
		var m *Model
		for mi := range hc.Models {
			if hc.Models[mi].Space.Model.Property == pi {
				m = &hc.Models[mi]
			}
		}
		last := n.Horizon.Indices() - 1
		if m == nil || m.Space.Last != last || last < 1 {
			return &devices.Error{Home: h.Name, Part: devices.PartProperty, Index: pi,
				Msg: fmt.Sprintf("property %s at %s has an end value but no range or rule that holds to the horizon's end; give it a range", p.Name, p.Location)}
		}
		s := m.Space
		costs := make([]float64, len(s.States[last]))
		for j, st := range s.States[last] {
			costs[j] = -n.Weights.Price * p.EndValue * float64(st.Value) * p.Scale
		}
		k.add(hi, fmt.Sprintf("%s/%s.%s:end", h.Name, p.Location, p.Name), []int{m.Vars[last]}, costs)
	}
	return nil
}

// cycle is the weighted cycling cost of device dev running action a for
// slot t: Weights.Price·CycleCost·|power|·Δ_t (Device.CycleCost).
func (k *compiler) cycle(dev *devices.Device, a, t int) float64 {
	if dev.CycleCost == 0 {
		return 0
	}
	return k.n.Weights.Price * dev.CycleCost * math.Abs(dev.Actions[a].Power) * k.n.Horizon.SlotHours(t)
}

// misses adds the penalties of model m's soft rules (devices.Rule.Soft):
// Weights.Miss per missing unit. A before/after goal's is a unary function
// of the state at its window's last index, charged where the goal's bit
// says it never held; an at/within rule's or one without a time is a unary
// function of every state of its window. A penalty on index 0 (the fixed
// initial state) is a constant of the home.
func (k *compiler) misses(hi int, m *Model) {
	n, h := k.n, &k.n.Homes[hi]
	s := m.Space
	p := &h.Properties[s.Model.Property]
	for _, ri := range s.Model.Rules {
		r := &h.Rules[ri]
		if !r.Soft {
			continue
		}
		goal := devices.Steps(r.Goal, p.Scale)
		from, to, anyOf := n.Horizon.RuleWindow(r)
		price := func(i int, bit uint64) {
			costs := make([]float64, len(s.States[i]))
			zero := true
			for j, st := range s.States[i] {
				if bit != 0 && st.Flags&bit != 0 {
					continue
				}
				costs[j] = n.Weights.Miss * float64(r.Rel.Shortfall(st.Value, goal)) * p.Scale
				zero = zero && costs[j] == 0
			}
			switch {
			case zero:
			case i == 0:
				k.extra[hi] += costs[0]
			default:
				k.add(hi, fmt.Sprintf("%s/%s.%s:miss%d#%d", h.Name, p.Location, p.Name, ri, i), []int{m.Vars[i]}, costs)
			}
		}
		if anyOf {
			if to > from {
				price(to-1, s.Bit(ri))
			}
			continue
		}
		for i := from; i < to; i++ {
			price(i, 0)
		}
	}
}

// meterSlot reports whether home hi's bill in slot t needs a meter
// function: it has devices and either grid permissions, or a draw that
// can exceed an import limit, or one that can be negative while feeding
// back earns less than drawing, is limited or may be curtailed.
func (k *compiler) meterSlot(hi, t int) bool {
	n, h := k.n, &k.n.Homes[hi]
	if len(h.Devices) == 0 {
		return false
	}
	for d := range h.Devices {
		if h.Devices[d].NoGridCharge || h.Devices[d].NoGridDischarge {
			return true
		}
	}
	draws, _ := h.SlotDraws(t)
	lo, top := draws[0], draws[len(draws)-1]
	imp, exp := n.Tariff(hi)
	m := h.Meter
	switch {
	case m != nil && m.ImportLimit > 0 && !devices.Fits(top, m.ImportLimit):
		return true
	case lo >= 0:
		return false
	case exp != nil && exp[t] != imp[t]:
		return true
	}
	return m != nil && (m.ExportLimit > 0 && !devices.Fits(-lo, m.ExportLimit) || m.Curtail != nil && m.Curtail[t] > 0)
}

// links adds, for each slot of each window, the hard function that keeps
// the slot's draw within the committed level's cap.
func (k *compiler) links(hi int) error {
	n, h, hc := k.n, &k.n.Homes[hi], &k.c.Homes[hi]
	for w, win := range n.Windows {
		caps := hc.Caps[w]
		for t := win.From; t < win.To; t++ {
			draws, _ := h.SlotDraws(t)
			if devices.Fits(draws[len(draws)-1], caps[0]) {
				continue // every level fits every draw of the slot
			}
			sa := k.slotScope(hi, t)
			scope := append(sa.scope[:len(sa.scope):len(sa.scope)], hc.Levels[w])
			costs, err := k.table(fmt.Sprintf("home %s: the level link of slot %d", h.Name, t), scope, 0)
			if err != nil {
				return err
			}
			digits := make([]int, len(sa.scope))
			acts := make([]int, len(h.Devices))
			idx := 0
			for {
				ok := sa.actions(digits, acts)
				draw := h.Draw(t, func(d int) int { return acts[d] })
				for c := range caps {
					if !ok || !devices.Fits(draw, caps[c]) {
						costs[idx] = mva.Hard
					}
					idx++
				}
				if !next(digits, func(j int) int { return k.p.DomainSize(sa.scope[j]) }) {
					break
				}
			}
			k.add(hi, fmt.Sprintf("%s/link@%d", h.Name, t), scope, costs)
		}
	}
	return nil
}

// next advances a mixed-radix counter (last digit fastest) and reports
// whether it has not wrapped around.
func next(digits []int, radix func(i int) int) bool {
	for j := len(digits) - 1; j >= 0; j-- {
		digits[j]++
		if digits[j] < radix(j) {
			return true
		}
		digits[j] = 0
	}
	return false
}

// ownPeak adds each level's own part of the peak term, each slot's
// squared power weighed by Horizon.PeakHours.
func (k *compiler) ownPeak(hi int) {
	n, h, hc := k.n, &k.n.Homes[hi], &k.c.Homes[hi]
	if n.Weights.Peak == 0 {
		return
	}
	for w, win := range n.Windows {
		costs := make([]float64, len(hc.Caps[w]))
		dt := n.Horizon.Hours()
		for c, cp := range hc.Caps[w] {
			sum := 0.0
			for t := win.From; t < win.To; t++ {
				v := cp
				if h.OutsideLoad != nil {
					v += h.OutsideLoad[t]
				}
				// Ratio(t)·Δ² is Horizon.PeakHours(t), exactly Δ² on
				// a horizon of one slot length.
				sum += n.Horizon.Ratio(t) * v * v
			}
			costs[c] = n.Weights.Peak * dt * dt * sum
		}
		k.add(hi, fmt.Sprintf("%s/peak@%d", h.Name, w), []int{hc.Levels[w]}, costs)
	}
}

// transitions adds the hard transition functions of one modelled
// property.
func (k *compiler) transitions(hi int, m *Model) error {
	h, hc := &k.n.Homes[hi], &k.c.Homes[hi]
	s := m.Space
	hz := k.n.Horizon
	p := &h.Properties[s.Model.Property]
	acts := s.Model.Actuators
	for i := 1; i <= s.Last; i++ {
		t := hz.Mover(i)
		var scope []int
		prev := []devices.State{s.States[0][0]}
		if i > 1 {
			scope = append(scope, m.Vars[i-1])
			prev = s.States[i-1]
		}
		for _, d := range acts {
			scope = append(scope, hc.Actions[d][t])
		}
		scope = append(scope, m.Vars[i])
		costs, err := k.table(fmt.Sprintf("home %s: property %s %s at index %d", h.Name, p.Location, p.Name, i), scope, mva.Hard)
		if err != nil {
			return err
		}
		nz := len(s.States[i])
		idx := 0
		for _, st := range prev {
			devices.Joint(h, acts, func(a []int) {
				if to, ok := s.Step(i, st, a); ok {
					costs[idx+s.IndexOf(i, to)] = 0
				}
				idx += nz
			})
		}
		k.add(hi, fmt.Sprintf("%s/%s.%s:step#%d", h.Name, p.Location, p.Name, i), scope, costs)
	}
	return nil
}

// between adds the cross part of the peak term and the feeder limits.
func (k *compiler) between() error {
	n, c := k.n, k.c
	for w, win := range n.Windows {
		if n.Weights.Peak != 0 {
			// Σ_t Ratio(t)·Δ² is Σ_t Horizon.PeakHours(t).
			dt, ratios := n.Horizon.Hours(), 0.0
			for t := win.From; t < win.To; t++ {
				ratios += n.Horizon.Ratio(t)
			}
			coef := n.Weights.Peak * dt * dt * ratios * 2
			for _, l := range n.Linked() {
				a, b := &c.Homes[l[0]], &c.Homes[l[1]]
				ca, cb := a.Caps[w], b.Caps[w]
				costs := make([]float64, len(ca)*len(cb))
				for i := range ca {
					for j := range cb {
						costs[i*len(cb)+j] = coef * ca[i] * cb[j]
					}
				}
				k.add(-1, fmt.Sprintf("peak:%s~%s@%d", n.Homes[l[0]].Name, n.Homes[l[1]].Name, w), []int{a.Levels[w], b.Levels[w]}, costs)
			}
		}
		if err := k.feeder(w); err != nil {
			return err
		}
	}
	return nil
}

// feeder adds window w's feeder limit when it can bind.
func (k *compiler) feeder(w int) error {
	n, c := k.n, k.c
	if n.FeederLimit <= 0 {
		return nil
	}
	lo, hi := 0.0, 0.0
	scope := make([]int, len(c.Homes))
	for h := range c.Homes {
		caps := c.Homes[h].Caps[w]
		lo += caps[0]
		hi += caps[len(caps)-1]
		scope[h] = c.Homes[h].Levels[w]
	}
	if devices.Fits(hi, n.FeederLimit) {
		return nil // no combination of levels can exceed it
	}
	if !devices.Fits(lo, n.FeederLimit) && !n.FeederSoft {
		e := &devices.Error{Part: devices.PartFeeder, Index: -1, Infeasible: true,
			Msg: fmt.Sprintf("window %d: the homes' lowest levels already add up to %g, above the feeder limit %g; raise the limit or shift load out of the window", w, lo, n.FeederLimit)}
		return e
	}
	if k.opts.FeederBudgets {
		k.feederBudgets(w, lo, hi)
		return nil
	}
	costs, err := k.table(fmt.Sprintf("the feeder limit of window %d (over %d homes)", w, len(scope)), scope, 0)
	if errors.Is(err, ErrTooLarge) {
		k.feederBudgets(w, lo, hi)
		return nil
	}
	if err != nil {
		return err
	}
	levels := make([]int, len(scope))
	for idx := range costs {
		sum := 0.0
		for h, l := range levels {
			sum += c.Homes[h].Caps[w][l]
		}
		switch {
		case devices.Fits(sum, n.FeederLimit):
		case n.FeederSoft:
			costs[idx] = n.Weights.Miss * (sum - n.FeederLimit) * n.WindowHours(w)
		default:
			costs[idx] = mva.Hard
		}
		next(levels, func(h int) int { return len(c.Homes[h].Caps[w]) })
	}
	k.add(-1, fmt.Sprintf("feeder@%d", w), scope, costs)
	return nil
}

// feederBudgets is window w's feeder limit for a street too large for
// one table over every home's level (levels^homes entries): the limit is
// split into per-home budgets that add up to it, each home's lowest cap
// plus a share of the headroom L − Σ lowest in proportion to the home's
// range of caps, b_h = lo_h + (L − lo)·(hi_h − lo_h)/(hi − lo). Each home
// gets a function of its own level alone: Hard above its budget, or with a
// soft limit the miss weight per kW over its budget per hour. Caps within
// their budgets add up to at most the limit, so a hard limit holds
// whatever the other homes do, and the soft penalty is never below the
// street's true excess (the per-home excesses add up to at least it). The
// price of the decomposition: a home that needs more than its budget
// while others leave theirs unused finds no plan (hard) or pays for
// excess the street does not have (soft); the improvement phase, which
// checks the street's real sum (baseline.Improve), may then move homes
// past their budgets where the street still fits.
func (k *compiler) feederBudgets(w int, lo, hi float64) {
	n, c := k.n, k.c
	head := n.FeederLimit - lo
	for h := range c.Homes {
		caps := c.Homes[h].Caps[w]
		lh, hh := caps[0], caps[len(caps)-1]
		b := lh
		if hi > lo {
			b += head * (hh - lh) / (hi - lo)
		}
		costs := make([]float64, len(caps))
		for l, cp := range caps {
			switch {
			case devices.Fits(cp, b):
			case n.FeederSoft:
				costs[l] = n.Weights.Miss * (cp - b) * n.WindowHours(w)
			default:
				costs[l] = mva.Hard
			}
		}
		k.add(h, fmt.Sprintf("feeder:%s@%d", n.Homes[h].Name, w), []int{c.Homes[h].Levels[w]}, costs)
	}
}

// foldBase adds each home's constant cost (the price of its background
// load) to its first function, or to Problem.Offset when it has none.
func (k *compiler) foldBase() error {
	n := k.n
	for hi := range n.Homes {
		h := &n.Homes[hi]
		imp, _ := n.Tariff(hi)
		base := k.extra[hi]
		for t := range n.Horizon.Slots {
			switch {
			case k.meter[hi][t]:
				// The meter function prices the background.
			case len(h.Devices) == 0:
				m := n.Meter(hi, t, h.Background[t], false, false)
				if m.Broken != "" {
					return &devices.Error{Home: h.Name, Part: devices.PartBackground, Index: t, Infeasible: true,
						Msg: fmt.Sprintf("slot %d: %s, whatever the plan", t, m.Broken)}
				}
				base += n.Weights.Price*m.Bill + n.Weights.Miss*m.Over
			default:
				// The draw is never negative here, nor above a limit,
				// so the bill is linear and the background's part is
				// its own.
				base += n.Weights.Price * imp[t] * h.Background[t] * n.Horizon.SlotHours(t)
			}
		}
		if base == 0 {
			continue
		}
		f := k.first[hi]
		if f < 0 {
			v := k.firstVar(hi)
			if v < 0 {
				k.p.Offset += base
				continue
			}
			f = len(k.p.Functions)
			k.add(hi, h.Name+"/base", []int{v}, make([]float64, k.p.DomainSize(v)))
		}
		costs := k.p.Functions[f].Costs
		for i := range costs {
			if !math.IsInf(costs[i], 1) {
				costs[i] += base
			}
		}
		k.p.Functions[f].Name += "+base"
	}
	return nil
}

func (k *compiler) firstVar(hi int) int {
	for v := range k.p.Variables {
		if k.p.Variables[v].Agent == hi {
			return v
		}
	}
	return -1
}

// demand adds home hi's demand charge: its peak variable, the charge on
// it and the links that keep every slot's import within it.
func (k *compiler) demand(hi int) error {
	n, h, hc := k.n, &k.n.Homes[hi], &k.c.Homes[hi]
	hc.Demand = -1
	levels, ok := n.DemandLevels(hi)
	if !ok {
		return fmt.Errorf("home %s: too many distinct draws to levy a demand charge on exactly: %w", h.Name, ErrTooLarge)
	}
	if levels == nil {
		return nil
	}
	labels := make([]string, len(levels))
	costs := make([]float64, len(levels))
	for i, l := range levels {
		labels[i] = strconv.FormatFloat(l, 'f', -1, 64) + "kW"
		costs[i] = n.Weights.Price * n.Demand(hi, l)
	}
	hc.Demand, hc.DemandLevels = k.variable(hi, h.Name+"/demand", labels), levels
	k.add(hi, h.Name+"/demand", []int{hc.Demand}, costs)
	for t := range n.Horizon.Slots {
		draws, _ := h.SlotDraws(t)
		if devices.Fits(draws[len(draws)-1], levels[0]) {
			continue // the slot never imports above the threshold
		}
		sa := k.slotScope(hi, t)
		scope := append(sa.scope[:len(sa.scope):len(sa.scope)], hc.Demand)
		costs, err := k.table(fmt.Sprintf("home %s: the demand link of slot %d", h.Name, t), scope, 0)
		if err != nil {
			return err
		}
		digits := make([]int, len(sa.scope))
		acts := make([]int, len(h.Devices))
		idx := 0
		for {
			ok := sa.actions(digits, acts)
			// Curtailment never raises a draw above 0, so the import
			// is the draw before it.
			imp := math.Max(h.Draw(t, func(d int) int { return acts[d] }), 0)
			for _, l := range levels {
				if !ok || !devices.Fits(imp, l) {
					costs[idx] = mva.Hard
				}
				idx++
			}
			if !next(digits, func(j int) int { return k.p.DomainSize(sa.scope[j]) }) {
				break
			}
		}
		k.add(hi, fmt.Sprintf("%s/demand@%d", h.Name, t), scope, costs)
	}
	return nil
}
