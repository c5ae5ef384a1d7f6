package devices

// Plan is one home's schedule in words, for reports and the result
// object: what each device does in each slot, the draw, the bill, the
// committed levels and the rules.
type Plan struct {
	Home string `json:"home"`
	// Actions maps each device to its action name per slot.
	Actions map[string][]string `json:"actions"`
	// Load is the draw per slot in natural units (kW for TOML homes).
	Load []float64 `json:"load_kw"`
	// Energy and Cost are the horizon's energy (kWh) and its price
	// (currency), unweighted, in natural units.
	Energy float64 `json:"energy_kwh"`
	Cost   float64 `json:"cost"`
	// Peak is the greatest draw.
	Peak float64 `json:"peak_kw"`
	// Levels are the committed levels' labels, one per window.
	Levels []string     `json:"levels"`
	Rules  []RuleResult `json:"rules"`
	// Curtail is the PV power left unused per slot (a home with
	// curtailable PV), nil for none.
	Curtail []float64 `json:"curtailed_kw,omitempty"`
	// Over is the energy drawn or fed beyond the home's soft import and
	// export limits (kWh); Stored what the energy left in storage at the
	// horizon's end is worth (currency).
	Over float64 `json:"over_limits_kwh,omitempty"`
	// Demand is the demand charge, part of Cost (currency).
	Demand float64 `json:"demand_cost,omitempty"`
	Stored float64 `json:"stored_value,omitempty"`
}

// RuleResult is a rule and whether the schedule keeps it.
type RuleResult struct {
	Rule string `json:"rule"`
	OK   bool   `json:"ok"`
	// Hard is set for a hard rule (the catalogue's physical bounds, a
	// TOML rule with hard = true, every SHDS rule); a soft rule that
	// does not hold is missed, not broken.
	Hard bool `json:"hard"`
	// Missed is by how much a soft rule misses (HomeEvaluation.Miss), in
	// Unit, the property's unit.
	Missed float64 `json:"missed,omitempty"`
	Unit   string  `json:"unit,omitempty"`
}

// Plans describes a schedule and its evaluation home by home, converting
// model units to natural ones with n.Units.
func (n *Neighbourhood) Plans(s *Schedule, ev *Evaluation) []Plan {
	ps, cs := n.Units.PowerScale, n.Units.PriceScale
	if ps == 0 {
		ps = 1
	}
	if cs == 0 {
		cs = 1
	}
	out := make([]Plan, len(n.Homes))
	for hi := range n.Homes {
		h := &n.Homes[hi]
		he := &ev.Homes[hi]
		p := Plan{Home: h.Name, Actions: map[string][]string{}, Energy: he.Energy * ps, Cost: (he.Price + he.Demand) * ps * cs, Demand: he.Demand * ps * cs, Peak: he.Peak * ps}
		for d := range h.Devices {
			names := make([]string, len(s.Homes[hi].Actions[d]))
			for t, a := range s.Homes[hi].Actions[d] {
				names[t] = h.Devices[d].Act(a).Name
			}
			p.Actions[h.Devices[d].Name] = names
		}
		for _, l := range he.Load {
			p.Load = append(p.Load, l*ps)
		}
		for _, c := range he.Curtail {
			p.Curtail = append(p.Curtail, c*ps)
		}
		for _, o := range he.Over {
			p.Over += o * ps
		}
		p.Stored = he.Stored * cs
		for w, k := range he.Levels {
			p.Levels = append(p.Levels, LevelLabels(n.LevelCaps(hi, w), n.Units)[k])
		}
		for ri, ok := range he.Rules {
			r := &h.Rules[ri]
			rr := RuleResult{Rule: r.Text, OK: ok, Hard: !r.Soft}
			if pi := h.Property(r.Location, r.Property); pi >= 0 {
				rr.Unit = h.Properties[pi].Unit
			}
			if !ok && ri < len(he.Miss) {
				rr.Missed = he.Miss[ri]
			}
			p.Rules = append(p.Rules, rr)
		}
		out[hi] = p
	}
	return out
}
