package devices

import (
	"errors"
	"math"
)

// ValidName reports whether s can name a home, device or location: letters,
// digits, '_', '-' and '.' (SHDS model names such as Kenmore_790.91312013
// have dots). Variable names of the compiled problem are built from them
// with '/', '@' and '#', which are therefore excluded.
func ValidName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}

// maxSteps bounds values, effects and goals in steps, so that sums over
// any horizon stay far inside int64.
const maxSteps = 1e12

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Validate checks the structure of the model: sizes, names, indices,
// finite numbers, rule times inside the horizon and rules that name a
// property some device moves. It returns every fault found, as *Error
// values joined with errors.Join. Whether the rules can be met is Check's
// business.
func (n *Neighbourhood) Validate() error {
	var errs []error
	add := func(e *Error) { errs = append(errs, e) }
	hz := n.Horizon
	if hz.Slots < 1 || hz.Slots > 100000 {
		add(errorf("", PartHorizon, -1, "the horizon needs at least one slot (and at most 100000), got %d", hz.Slots))
		return errors.Join(errs...)
	}
	if hz.SlotMinutes < 1 {
		add(errorf("", PartHorizon, -1, "a slot must last at least one minute, got %d", hz.SlotMinutes))
	}
	if hz.Lengths != nil {
		if len(hz.Lengths) != hz.Slots {
			add(errorf("", PartHorizon, -1, "%d slot lengths for %d slots: give one per slot", len(hz.Lengths), hz.Slots))
			return errors.Join(errs...)
		}
		for t, m := range hz.Lengths {
			if m < 1 {
				add(errorf("", PartHorizon, -1, "slot %d lasts %d minutes: a slot must last at least one minute", t, m))
			}
		}
	}
	if len(n.Prices) != hz.Slots {
		add(errorf("", PartPrices, -1, "%d prices for %d slots: give one price per slot", len(n.Prices), hz.Slots))
	}
	for t, p := range n.Prices {
		if !finite(p) {
			add(errorf("", PartPrices, t, "price %v is not a number", p))
		}
	}
	if n.ExportPrices != nil {
		if len(n.ExportPrices) != hz.Slots {
			add(errorf("", PartPrices, -1, "%d export prices for %d slots: give one per slot", len(n.ExportPrices), hz.Slots))
		} else {
			for t, p := range n.ExportPrices {
				if !finite(p) || t < len(n.Prices) && p > n.Prices[t] {
					add(errorf("", PartPrices, t, "export price %v in slot %d: want a number not above the slot's price %v (a home would earn by drawing and feeding back at once)", p, t, n.Prices[t]))
				}
			}
		}
	}
	last := 0
	for w, win := range n.Windows {
		switch {
		case win.From < 0 || win.To > hz.Slots || win.From >= win.To:
			add(errorf("", PartWindow, w, "window [%d, %d) is not a non-empty range of slots inside 0..%d", win.From, win.To, hz.Slots))
		case win.From < last:
			add(errorf("", PartWindow, w, "window [%d, %d) overlaps the previous one or is out of order; windows must be sorted and disjoint", win.From, win.To))
		}
		last = max(last, win.To)
	}
	if n.Levels < 1 {
		add(errorf("", PartLevels, -1, "the number of energy levels must be at least 1, got %d", n.Levels))
	}
	if !finite(n.Weights.Price) || !finite(n.Weights.Peak) || !finite(n.Weights.Miss) || n.Weights.Price < 0 || n.Weights.Peak < 0 || n.Weights.Miss < 0 {
		add(errorf("", PartWeights, -1, "objective weights must be finite and non-negative, got price %v, peak %v, miss %v", n.Weights.Price, n.Weights.Peak, n.Weights.Miss))
	}
	if !finite(n.FeederLimit) || n.FeederLimit < 0 {
		add(errorf("", PartFeeder, -1, "the feeder limit must be a non-negative number (0 for none), got %v", n.FeederLimit))
	}
	if len(n.Homes) == 0 {
		add(errorf("", PartHome, -1, "the neighbourhood has no homes"))
	}
	names := map[string]bool{}
	for hi := range n.Homes {
		h := &n.Homes[hi]
		if !ValidName(h.Name) {
			add(errorf(h.Name, PartHome, hi, "home name %q: use letters, digits, '_', '-' or '.'", h.Name))
		} else if names[h.Name] {
			add(errorf(h.Name, PartHome, hi, "two homes are called %q", h.Name))
		}
		names[h.Name] = true
		errs = append(errs, h.validate(hz)...)
	}
	seen := map[[2]int]bool{}
	for li, l := range n.Links {
		a, b := min(l[0], l[1]), max(l[0], l[1])
		switch {
		case a < 0 || b >= len(n.Homes):
			add(errorf("", PartLinks, li, "link %v names a home that does not exist", l))
		case a == b:
			add(errorf("", PartLinks, li, "link %v joins a home to itself", l))
		case seen[[2]int{a, b}]:
			add(errorf("", PartLinks, li, "link %v is listed twice", l))
		case l[0] > l[1]:
			add(errorf("", PartLinks, li, "link %v must list the lower home index first", l))
		}
		seen[[2]int{a, b}] = true
	}
	return errors.Join(errs...)
}

func (h *Home) validate(hz Horizon) []error {
	var errs []error
	add := func(part Part, i int, format string, args ...any) {
		errs = append(errs, errorf(h.Name, part, i, format, args...))
	}
	if len(h.Background) != hz.Slots {
		add(PartBackground, -1, "%d background values for %d slots: give one per slot", len(h.Background), hz.Slots)
	}
	for t, v := range h.Background {
		if !finite(v) {
			add(PartBackground, t, "background load %v is not a number", v)
		}
	}
	if h.OutsideLoad != nil && len(h.OutsideLoad) != hz.Slots {
		add(PartOutside, -1, "%d outside-load values for %d slots", len(h.OutsideLoad), hz.Slots)
	}
	for t, v := range h.OutsideLoad {
		if !finite(v) {
			add(PartOutside, t, "outside load %v is not a number", v)
		}
	}
	errs = append(errs, h.Meter.validate(h.Name, hz)...)
	devs := map[string]bool{}
	for di := range h.Devices {
		d := &h.Devices[di]
		if !ValidName(d.Name) {
			add(PartDevice, di, "device name %q: use letters, digits, '_', '-' or '.'", d.Name)
		} else if devs[d.Name] {
			add(PartDevice, di, "two devices are called %q", d.Name)
		}
		devs[d.Name] = true
		if !ValidName(d.Location) {
			add(PartDevice, di, "device %s: location %q: use letters, digits, '_', '-' or '.'", d.Name, d.Location)
		}
		if len(d.Actions) == 0 {
			add(PartDevice, di, "device %s has no actions", d.Name)
		}
		if !finite(d.CycleCost) || d.CycleCost < 0 {
			add(PartDevice, di, "device %s: cycle cost %v must be a non-negative number", d.Name, d.CycleCost)
		}
		if d.Away != nil {
			switch {
			case len(d.Away) != hz.Slots:
				add(PartDevice, di, "device %s: away in %d slots of %d: give one entry per slot", d.Name, len(d.Away), hz.Slots)
			case d.Idle() < 0:
				add(PartDevice, di, "device %s: it leaves in some slots but has no action that draws nothing and changes nothing (off)", d.Name)
			}
		}
		acts := map[string]bool{}
		for _, a := range d.Actions {
			if a.Name == "" || acts[a.Name] {
				add(PartDevice, di, "device %s: action names must be non-empty and distinct (%q)", d.Name, a.Name)
			}
			acts[a.Name] = true
			if !finite(a.Power) {
				add(PartDevice, di, "device %s action %s: power %v is not a number", d.Name, a.Name, a.Power)
			}
			for _, e := range a.Effects {
				if e.Property == "" || !finite(e.Delta) {
					add(PartDevice, di, "device %s action %s: effect %q %v is not a property and a number", d.Name, a.Name, e.Property, e.Delta)
				}
			}
			for m, effs := range a.ByLength {
				for _, e := range effs {
					if _, ok := a.Effect(e.Property); !ok || !finite(e.Delta) {
						add(PartDevice, di, "device %s action %s: its effect %q %v for %d-minute slots is not a number on a property its effects name", d.Name, a.Name, e.Property, e.Delta, m)
					}
				}
			}
		}
	}
	props := map[[2]string]bool{}
	for pi, p := range h.Properties {
		k := [2]string{p.Location, p.Name}
		if props[k] {
			add(PartProperty, pi, "property %s at %s is declared twice", p.Name, p.Location)
		}
		props[k] = true
		if !finite(p.Scale) || p.Scale <= 0 {
			add(PartProperty, pi, "property %s at %s: resolution %v must be positive", p.Name, p.Location, p.Scale)
		}
		if p.Min != nil && p.Max != nil && (!finite(*p.Min) || !finite(*p.Max) || *p.Min > *p.Max) {
			add(PartProperty, pi, "property %s at %s: range [%v, %v] is not an interval", p.Name, p.Location, *p.Min, *p.Max)
		}
		if !finite(p.EndValue) {
			add(PartProperty, pi, "property %s at %s: end value %v is not a number", p.Name, p.Location, p.EndValue)
		}
		if p.EndValue != 0 && hz.Dynamics == SHDS {
			add(PartProperty, pi, "property %s at %s: an end value needs full dynamics (the SHDS indexing checks no rule at the horizon's end)", p.Name, p.Location)
		}
		if !finite(p.Initial) || !finite(p.Drift) {
			add(PartProperty, pi, "property %s at %s: initial value and drift must be numbers", p.Name, p.Location)
		}
		for i, v := range p.Reset {
			if i < 1 || i >= hz.Indices() || !finite(v) || finite(p.Scale) && p.Scale > 0 && math.Abs(v/p.Scale) > maxSteps {
				add(PartProperty, pi, "property %s at %s: reset to %v at index %d: want a number at an index from 1 to %d", p.Name, p.Location, v, i, hz.Indices()-1)
			}
		}
		if finite(p.Scale) && p.Scale > 0 && (math.Abs(p.Initial/p.Scale) > maxSteps || math.Abs(p.Drift/p.Scale) > maxSteps) {
			add(PartProperty, pi, "property %s at %s: values are too large for resolution %v", p.Name, p.Location, p.Scale)
		}
	}
	for pi, p := range h.Properties {
		if !finite(p.Scale) || p.Scale <= 0 {
			continue
		}
		for di := range h.Devices {
			d := &h.Devices[di]
			if !d.Affects(p.Location, p.Name) {
				continue
			}
			for _, a := range d.Actions {
				if v, _ := a.Effect(p.Name); math.Abs(v/p.Scale) > maxSteps {
					add(PartProperty, pi, "property %s at %s: device %s changes it by %v, too much for resolution %v", p.Name, p.Location, d.Name, v, p.Scale)
				}
				for t := range hz.Slots {
					if !hz.Uneven() {
						break
					}
					if v, _ := a.EffectIn(p.Name, hz, t); math.Abs(v/p.Scale) > maxSteps {
						add(PartProperty, pi, "property %s at %s: device %s changes it by %v in slot %d, too much for resolution %v", p.Name, p.Location, d.Name, v, t, p.Scale)
						break
					}
				}
			}
		}
	}
	for ri := range h.Rules {
		r := &h.Rules[ri]
		if pi := h.Property(r.Location, r.Property); pi >= 0 && h.Properties[pi].Scale > 0 && math.Abs(r.Goal/h.Properties[pi].Scale) > maxSteps {
			add(PartRule, ri, "rule %q: the goal is too large for the property's resolution", r.Text)
		}
		if err := hz.CheckTime(r); err != nil {
			add(PartRule, ri, "rule %q: %v", r.Text, err)
		}
		if !finite(r.Goal) {
			add(PartRule, ri, "rule %q: the goal is not a number", r.Text)
		}
	}
	if len(errs) == 0 {
		if _, err := h.Models(); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// validate checks a home's meter: one price per slot, export prices not
// above import prices, limits and curtailable PV non-negative numbers.
func (m *Meter) validate(home string, hz Horizon) []error {
	if m == nil {
		return nil
	}
	var errs []error
	add := func(i int, format string, args ...any) {
		errs = append(errs, errorf(home, PartPrices, i, format, args...))
	}
	if m.Prices == nil && m.ExportPrices != nil {
		add(-1, "export prices without import prices: a home's own tariff gives both or import alone")
	}
	if m.Prices != nil && len(m.Prices) != hz.Slots {
		add(-1, "%d prices for %d slots: give one price per slot", len(m.Prices), hz.Slots)
	}
	for t, p := range m.Prices {
		if !finite(p) {
			add(t, "price %v is not a number", p)
		}
	}
	if m.ExportPrices != nil && len(m.ExportPrices) != len(m.Prices) {
		add(-1, "%d export prices for %d slots: give one per slot", len(m.ExportPrices), hz.Slots)
	} else {
		for t, p := range m.ExportPrices {
			if !finite(p) || p > m.Prices[t] {
				add(t, "export price %v in slot %d: want a number not above the slot's price %v (a home would earn by drawing and feeding back at once)", p, t, m.Prices[t])
			}
		}
	}
	if !finite(m.ImportLimit) || !finite(m.ExportLimit) || m.ImportLimit < 0 || m.ExportLimit < 0 {
		add(-1, "import and export limits must be non-negative numbers (0 for none), got %v and %v", m.ImportLimit, m.ExportLimit)
	}
	if !finite(m.DemandCharge) || !finite(m.DemandThreshold) || m.DemandCharge < 0 || m.DemandThreshold < 0 {
		add(-1, "the demand charge and its threshold must be non-negative numbers, got %v and %v", m.DemandCharge, m.DemandThreshold)
	}
	if m.Curtail != nil && len(m.Curtail) != hz.Slots {
		add(-1, "%d curtailable PV values for %d slots", len(m.Curtail), hz.Slots)
	}
	for t, v := range m.Curtail {
		if !finite(v) || v < 0 {
			add(t, "curtailable PV %v in slot %d must be a non-negative number", v, t)
		}
	}
	return errs
}
