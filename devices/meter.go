package devices

import (
	"fmt"
	"math"
	"slices"
)

// Meter is a home's own connection to the grid: its tariff, its import
// and export limits, its curtailable PV and a demand charge. A home
// without one (Home.Meter nil) pays the neighbourhood's tariff with no
// limits, as before meters existed.
type Meter struct {
	// Prices and ExportPrices, when Prices is not nil, replace the
	// neighbourhood's tariff for this home (model units, one per slot);
	// ExportPrices nil pays feed-in at Prices. Each export price must not
	// exceed its slot's price.
	Prices, ExportPrices []float64
	// ImportLimit and ExportLimit bound the home's draw and feed-in
	// (power units); 0 means none. Energy beyond a soft limit costs
	// Weights.Miss per unit·hour; HardLimits refuses every plan beyond
	// one.
	ImportLimit, ExportLimit float64
	HardLimits               bool
	// Curtail[t] is the PV power the home may leave unused in slot t
	// (its curtailable PV's forecast; the forecast is already netted out
	// of Background); nil for none. The plan curtails only feed-in: the
	// draw after curtailment lies between the draw before it and
	// max(draw, 0), which keeps every level cap (caps are never
	// negative).
	Curtail []float64
	// DemandCharge is the price per power unit of the horizon's highest
	// import above DemandThreshold (power units); 0 for none.
	DemandCharge, DemandThreshold float64
}

// DemandLevels returns the peaks home hi's demand charge can be levied
// on: its threshold and every draw some slot can have above it,
// ascending. ok is false when a slot has too many distinct draws to
// enumerate (SlotDraws), and nil when the home has no demand charge.
func (n *Neighbourhood) DemandLevels(hi int) (levels []float64, ok bool) {
	h := &n.Homes[hi]
	if h.Meter == nil || h.Meter.DemandCharge == 0 {
		return nil, true
	}
	thr := h.Meter.DemandThreshold
	levels = []float64{thr}
	for t := range n.Horizon.Slots {
		draws, exact := h.SlotDraws(t)
		if !exact {
			return nil, false
		}
		for _, d := range draws {
			if d > thr && !near(d, thr) {
				levels = append(levels, d)
			}
		}
	}
	slices.Sort(levels)
	return mergeClose(levels), true
}

// Demand returns home hi's demand charge (unweighted) when its highest
// import is peak: DemandCharge × max(0, peak − DemandThreshold).
func (n *Neighbourhood) Demand(hi int, peak float64) float64 {
	m := n.Homes[hi].Meter
	if m == nil || m.DemandCharge == 0 || Fits(peak, m.DemandThreshold) {
		return 0
	}
	return m.DemandCharge * (peak - m.DemandThreshold)
}

// Tariff returns the import and export prices home hi pays: its meter's
// when it has its own, else the neighbourhood's. exp is nil where feed-in
// earns the import price.
func (n *Neighbourhood) Tariff(hi int) (imp, exp []float64) {
	if m := n.Homes[hi].Meter; m != nil && m.Prices != nil {
		return m.Prices, m.ExportPrices
	}
	return n.Prices, n.ExportPrices
}

// Metered is one slot of a home's meter.
type Metered struct {
	// Draw is the draw after curtailment (power units, negative when
	// feeding back); Curtail the PV power left unused.
	Draw, Curtail float64
	// Bill is the slot's price (unweighted, price·draw·Δ with the
	// export price where Draw < 0).
	Bill float64
	// Over is the energy beyond a soft import or export limit (power
	// units·hours); it costs Weights.Miss per unit.
	Over float64
	// Broken says which hard limit or grid permission the slot breaks,
	// "" when none.
	Broken string
}

// Restricted reports whether, in slot t with device d running action(d),
// a device that may not charge from the grid charges (the home may then
// not import) and whether one that may not discharge to the grid
// discharges (the home may then not export).
func (h *Home) Restricted(t int, action func(d int) int) (noImport, noExport bool) {
	for d := range h.Devices {
		dev := &h.Devices[d]
		p := dev.Act(action(d)).Power
		noImport = noImport || dev.NoGridCharge && p > 0
		noExport = noExport || dev.NoGridDischarge && p < 0
	}
	return noImport, noExport
}

// Meter returns home hi's meter in slot t when its devices and
// background draw x before curtailment, with the grid permissions of
// Restricted. Curtailment is chosen where it lowers the slot's cost
// (feed-in that earns less than nothing, feed-in beyond an export limit)
// or where a permission needs it, the least such amount; the cost it
// minimises (Weights.Price·Bill + Weights.Miss·Over) is convex in the
// curtailment, so the least of its breakpoints is the optimum.
func (n *Neighbourhood) Meter(hi, t int, x float64, noImport, noExport bool) Metered {
	m := n.Homes[hi].Meter
	imp, exp := n.Tariff(hi)
	dt := n.Horizon.SlotHours(t)
	eval := func(c float64) Metered {
		out := Metered{Draw: x + c, Curtail: c}
		y := out.Draw
		price := imp[t]
		if y < 0 && exp != nil {
			price = exp[t]
		}
		out.Bill = price * y * dt
		switch {
		case noImport && y > 0 && !near(y, 0):
			out.Broken = fmt.Sprintf("a device that may not charge from the grid charges while the home imports %g", y)
		case noExport && y < 0 && !near(y, 0):
			out.Broken = fmt.Sprintf("a device that may not discharge to the grid discharges while the home exports %g", -y)
		}
		if m == nil {
			return out
		}
		for _, lim := range []struct {
			limit, v float64
			what     string
		}{{m.ImportLimit, y, "import"}, {m.ExportLimit, -y, "export"}} {
			if lim.limit <= 0 || Fits(lim.v, lim.limit) {
				continue
			}
			if m.HardLimits {
				if out.Broken == "" {
					out.Broken = fmt.Sprintf("the home's %s of %g is above its hard %s limit %g", lim.what, lim.v, lim.what, lim.limit)
				}
				continue
			}
			out.Over += (lim.v - lim.limit) * dt
		}
		return out
	}
	cmax := 0.0
	if m != nil && m.Curtail != nil && x < 0 {
		cmax = math.Min(m.Curtail[t], -x)
	}
	if cmax <= 0 {
		return eval(0)
	}
	cands := []float64{0, cmax}
	if m.ExportLimit > 0 {
		cands = append(cands, -x-m.ExportLimit)
	}
	slices.Sort(cands)
	var best Metered
	bestCost := math.Inf(1)
	for i, c := range cands {
		r := eval(math.Min(math.Max(c, 0), cmax))
		cost := n.Weights.Price*r.Bill + n.Weights.Miss*r.Over
		if r.Broken != "" {
			cost = math.Inf(1)
		}
		// The least curtailment among the cheapest; a broken slot
		// reports the uncurtailed draw.
		if i == 0 || cost < bestCost && (math.IsInf(bestCost, 1) || !near(cost, bestCost)) {
			best, bestCost = r, cost
		}
	}
	return best
}
