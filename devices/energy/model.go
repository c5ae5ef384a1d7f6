// Package energy plans one home behind one electricity meter: rooftop PV,
// home batteries and EVs (storage), background load, and a two-way tariff
// (separate import and export prices per slot, import and export limits,
// an optional demand charge). It is the home planner the compiler uses for
// homes with storage or PV (docs/DESIGN.md, "Energy homes"), and the engine
// behind `hearth plan` and `hearth serve` (the evcc optimizer's API,
// devices/energy/evcc).
//
// # Physics
//
// A slot t lasts Dt[t] hours. Storage s charges c(s,t) kW from the home's
// bus and discharges d(s,t) kW into it; its energy at the slot boundaries
// follows
//
//	E(s,t+1) = E(s,t) + EtaC·c·Dt − d·Dt/EtaD
//
// and stays within [Min, Max] at every boundary, whatever the goals say
// (a storage that starts below Min may charge but not discharge until it
// is back in range; likewise above Max). Charging is semi-continuous: 0 or
// in [MinCharge, MaxCharge]; discharging is in [0, MaxDischarge]; a
// storage that is not plugged in (Available false) does neither. An EV
// that comes home after such slots holds what it comes back with
// (Arrivals): E(s,a) is set at its arrival boundary a whatever came
// before, and goals after it count from there.
//
// # The meter
//
// Per slot, net = Load + Σ c − Σ d − Σ PV used (kW); import = max(net, 0),
// export = max(−net, 0). The bill is Σ Dt·(Import price·import − Export
// price·export); energy left at the end is worth EndValue per kWh. The
// economic objective (Objective) is bill − value of stored energy, as the
// evcc optimizer's (negated: it maximises the opposite).
//
// Limits and goals are soft unless marked hard: each kWh over an import
// or export limit costs LimitPenalty, each kWh missing from a goal costs
// its Penalty. Defaults in Defaults.
package energy

import (
	"fmt"
	"math"
)

// Home is one home behind one meter.
type Home struct {
	Name string
	// Dt is the length of each slot in hours; slots may differ.
	Dt []float64
	// Load is the background draw per slot (kW, average over the slot).
	Load    []float64
	PV      []PV
	Storage []Storage
	Tariff  Tariff
	Grid    Grid
	// Wear is the cycling cost per kWh that enters or leaves a storage
	// (currency per kWh); it breaks ties between plans of equal bill so
	// that storage does not flip between charge and discharge, and does
	// not export for nothing. Negative means DefaultWear; write a tiny
	// positive value to weaken it; 0 is allowed but leaves ties free.
	Wear float64
}

// Tariff prices the meter per slot (currency per kWh).
type Tariff struct {
	Import []float64
	Export []float64
}

// Grid is the home's connection.
type Grid struct {
	// ImportLimit and ExportLimit bound the meter's power (kW); 0 means
	// none.
	ImportLimit, ExportLimit float64
	// LimitPenalty is the cost per kWh beyond a limit (currency per
	// kWh); 0 means DefaultLimitPenalty; HardLimits makes the limits
	// hard instead (a plan beyond them is refused).
	LimitPenalty float64
	HardLimits   bool
	// Cap is a hard per-slot import cap (kW), nil for none: the level a
	// home commits to in a coordination window. NaN entries mean no cap.
	Cap []float64
	// DemandCharge is the price per kW of the horizon's highest import
	// above DemandThreshold (kW); 0 means none.
	DemandCharge, DemandThreshold float64
	// ImportSteps, when not nil, adds a convex piecewise-linear cost of
	// the import to each slot (one list of steps per slot, nil or empty
	// for none): the price of coordination. A street prices its shared
	// peak to a home this way — the peak term's squared street load,
	// linearised between breakpoints around the neighbours' load
	// (devices/street) — which keeps the home's plan an LP. It is not
	// part of the bill: a plan reports it as Coordination.
	ImportSteps [][]Step
	// Windows, when not nil, prices the home's highest import in each
	// of them above a budget: a street's soft feeder limit on the
	// committed caps, as one home's share of it (devices/street). The
	// windows are disjoint and sorted. Like ImportSteps it is part of
	// Coordination, not of the bill.
	Windows []CapWindow
}

// CapWindow is a soft cap on the home's highest import over slots
// [From, To): each kW by which that highest import exceeds Budget costs
// Price (currency per kW). Budget may be negative (the rest of the
// street is already over the limit); the cost is then Price·(highest
// import − Budget) however little the home imports.
type CapWindow struct {
	From, To      int
	Budget, Price float64
}

// WindowCost returns the Windows cost of import imp (kW per slot)
// under ws.
func WindowCost(ws []CapWindow, imp []float64) float64 {
	cost := 0.0
	for _, w := range ws {
		top := 0.0
		for t := w.From; t < w.To; t++ {
			top = math.Max(top, imp[t])
		}
		cost += w.Price * math.Max(0, top-w.Budget)
	}
	return cost
}

// Step is one band of a slot's ImportSteps: Price (currency per kWh,
// added to the tariff) applies to import from the previous step's Upto
// (0 for the first) to Upto (kW); import beyond the last step's Upto
// pays the last step's Price. Prices must not fall from step to step
// (the cost is convex).
type Step struct {
	Upto, Price float64
}

// StepCost returns the ImportSteps cost of importing imp kW for one hour
// under steps (currency): the integral of the step prices from 0 to imp.
func StepCost(steps []Step, imp float64) float64 {
	cost, from := 0.0, 0.0
	for k, s := range steps {
		if imp <= from {
			break
		}
		to := s.Upto
		if k == len(steps)-1 || imp < to {
			to = imp
		}
		cost += s.Price * (to - from)
		from = to
	}
	return cost
}

// PV is a photovoltaic array.
type PV struct {
	Name string
	// Forecast is the power available per slot (kW, ≥ 0).
	Forecast []float64
	// Curtailable lets the plan use less than the forecast (an inverter
	// that can limit its output): when exporting earns less than nothing
	// or an export limit binds.
	Curtailable bool
}

// Storage is a home battery or an EV: anything that stores energy
// behind the meter.
type Storage struct {
	Name string
	// Min, Max and Initial are energies (kWh). Capacity (kWh) only
	// converts percentages; 0 means Max.
	Min, Max, Initial, Capacity float64
	// MaxCharge and MaxDischarge are power limits at the bus (kW);
	// MinCharge is the least charging power while charging (an EV's
	// 6 A × 230 V = 1.4 kW); 0 for none.
	MaxCharge, MaxDischarge, MinCharge float64
	// EtaC and EtaD are the charge and discharge efficiencies in (0, 1].
	EtaC, EtaD float64
	// Available[t] tells whether the storage can act in slot t (an EV is
	// plugged in); nil means always.
	Available []bool
	// Arrivals set the stored energy at boundaries whatever came before:
	// an EV comes home holding what it holds, and the energy it drew
	// while away is not the home's. Each follows a slot the storage is
	// unavailable in (so no action of the slot is lost), in time order.
	Arrivals []Arrival
	Goals    []Goal
	// EndValue is the worth of a kWh left at the horizon's end
	// (currency per kWh).
	EndValue float64
	// NoGridCharge forbids charging in a slot where the home imports
	// more than Deadband; NoGridDischarge forbids discharging in a slot
	// where it exports more than Deadband.
	NoGridCharge, NoGridDischarge bool
}

// Arrival is what a storage holds when it comes back: Energy kWh at
// boundary Index (the start of slot Index; 1..slots), in its range.
// Goals after it count from it.
type Arrival struct {
	Index  int
	Energy float64
}

// Goal asks for at least Energy kWh in a storage at boundary Index (the
// end of slot Index−1; 1..slots). A goal set at a clock time inside a
// slot applies at that slot's end.
type Goal struct {
	Index  int
	Energy float64
	// Hard refuses every plan that misses it; otherwise each missing kWh
	// costs Penalty (0 means the home's default, DefaultGoalPenalty).
	Hard    bool
	Penalty float64
	// Text names the goal in results, e.g. "ev ≥ 80% by 07:30".
	Text string
}

// Defaults of the soft terms.
const (
	// DefaultWear is the cycling cost per kWh through a storage: a
	// hundredth of a cent, far below any tariff difference worth acting
	// on and large enough to break exact ties.
	DefaultWear = 1e-4
	// DefaultLimitPenalty is the cost of a kWh beyond an import or export
	// limit: 1 currency per kWh, above any retail tariff.
	DefaultLimitPenalty = 1.0
	// DefaultGoalPenalty is the cost of a kWh missing from a goal: 2
	// currency per kWh, so a goal is missed only where no plan can meet
	// it, never to save money at retail prices.
	DefaultGoalPenalty = 2.0
)

// Deadband is the meter power (kW) the grid permissions tolerate: a
// storage that may not charge from the grid may still charge while the
// home imports up to 0.1 kW (and likewise for discharging into it). Two
// storages that may neither charge from nor discharge into the grid can
// only trade energy at a net of zero; inverters regulate to within tens of
// watts, not to zero, so the permissions keep a band of 100 W.
const Deadband = 0.1

// arrivalAt returns the energy storage s is set to at boundary i, and
// whether it has an arrival there.
func (s *Storage) arrivalAt(i int) (float64, bool) {
	for _, a := range s.Arrivals {
		if a.Index == i {
			return a.Energy, true
		}
	}
	return 0, false
}

// span returns the least and greatest energy storage s starts a stretch
// with: its initial energy and its arrivals'.
func (s *Storage) span() (lo, hi float64) {
	lo, hi = s.Initial, s.Initial
	for _, a := range s.Arrivals {
		lo, hi = math.Min(lo, a.Energy), math.Max(hi, a.Energy)
	}
	return lo, hi
}

// Slots returns the number of slots.
func (h *Home) Slots() int { return len(h.Dt) }

// Validate reports the first fault of the description, naming the field.
func (h *Home) Validate() error {
	T := len(h.Dt)
	if T == 0 {
		return fmt.Errorf("home %s: no slots", h.Name)
	}
	fin := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	for t, d := range h.Dt {
		if !fin(d) || d <= 0 {
			return fmt.Errorf("home %s: slot %d lasts %g h; slot lengths must be positive", h.Name, t, d)
		}
	}
	series := func(name string, s []float64, allowNil, nonNeg bool) error {
		if s == nil && allowNil {
			return nil
		}
		if len(s) != T {
			return fmt.Errorf("home %s: %s has %d values for %d slots", h.Name, name, len(s), T)
		}
		for t, v := range s {
			if !fin(v) || nonNeg && v < 0 {
				return fmt.Errorf("home %s: %s[%d] = %g is not a valid value", h.Name, name, t, v)
			}
		}
		return nil
	}
	if err := series("load", h.Load, false, false); err != nil {
		return err
	}
	if err := series("import price", h.Tariff.Import, false, false); err != nil {
		return err
	}
	if err := series("export price", h.Tariff.Export, false, false); err != nil {
		return err
	}
	for t := range T {
		if h.Tariff.Export[t] > h.Tariff.Import[t] {
			return fmt.Errorf("home %s: export price %g above import price %g in slot %d: the meter would earn by importing and exporting at once", h.Name, h.Tariff.Export[t], h.Tariff.Import[t], t)
		}
	}
	g := h.Grid
	for _, v := range []float64{g.ImportLimit, g.ExportLimit, g.LimitPenalty, g.DemandCharge, g.DemandThreshold} {
		if !fin(v) || v < 0 {
			return fmt.Errorf("home %s: grid limits, penalties and demand charge must be finite and ≥ 0 (got %g)", h.Name, v)
		}
	}
	if g.Cap != nil {
		if len(g.Cap) != T {
			return fmt.Errorf("home %s: %d import caps for %d slots", h.Name, len(g.Cap), T)
		}
		for t, c := range g.Cap {
			if math.IsInf(c, 0) || c < 0 {
				return fmt.Errorf("home %s: import cap %g in slot %d", h.Name, c, t)
			}
		}
	}
	if err := validSteps(h.Name, g.ImportSteps, T); err != nil {
		return err
	}
	for k, w := range g.Windows {
		if w.From < 0 || w.To <= w.From || w.To > T || k > 0 && w.From < g.Windows[k-1].To || !fin(w.Budget) || !fin(w.Price) || w.Price < 0 {
			return fmt.Errorf("home %s: cap window %d (slots %d–%d, budget %g kW at %g per kW): windows must be disjoint, sorted, within the horizon, with a finite budget and a price ≥ 0", h.Name, k, w.From, w.To, w.Budget, w.Price)
		}
	}
	if !fin(h.Wear) {
		return fmt.Errorf("home %s: wear %g", h.Name, h.Wear)
	}
	for i := range h.PV {
		p := &h.PV[i]
		if err := series("pv "+p.Name+" forecast", p.Forecast, false, true); err != nil {
			return err
		}
	}
	for i := range h.Storage {
		if err := h.Storage[i].validate(h.Name, T); err != nil {
			return err
		}
	}
	return nil
}

// validSteps checks a home's ImportSteps: one list per slot, bands that
// grow, prices that do not fall.
func validSteps(home string, steps [][]Step, T int) error {
	if steps == nil {
		return nil
	}
	if len(steps) != T {
		return fmt.Errorf("home %s: %d import step lists for %d slots", home, len(steps), T)
	}
	for t, st := range steps {
		prev := Step{Price: math.Inf(-1)}
		for k, s := range st {
			if math.IsNaN(s.Upto) || math.IsNaN(s.Price) || math.IsInf(s.Price, 0) || s.Upto < 0 || k < len(st)-1 && math.IsInf(s.Upto, 0) {
				return fmt.Errorf("home %s: import step %d of slot %d (%g kW, %g per kWh) is not a valid band", home, k, t, s.Upto, s.Price)
			}
			if k > 0 && (s.Upto < prev.Upto || s.Price < prev.Price) {
				return fmt.Errorf("home %s: import steps of slot %d: bands must grow and their prices must not fall (step %d: %g kW at %g after %g kW at %g)", home, t, k, s.Upto, s.Price, prev.Upto, prev.Price)
			}
			prev = s
		}
	}
	return nil
}

func (s *Storage) validate(home string, T int) error {
	fin := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	for _, v := range []float64{s.Min, s.Max, s.Initial, s.Capacity, s.MaxCharge, s.MaxDischarge, s.MinCharge, s.EtaC, s.EtaD, s.EndValue} {
		if !fin(v) {
			return fmt.Errorf("home %s: storage %s: a figure is not a finite number", home, s.Name)
		}
	}
	switch {
	case s.Min < 0 || s.Max < s.Min:
		return fmt.Errorf("home %s: storage %s: range [%g, %g] kWh: want 0 ≤ min ≤ max", home, s.Name, s.Min, s.Max)
	case s.Initial < 0:
		return fmt.Errorf("home %s: storage %s: initial energy %g kWh is negative", home, s.Name, s.Initial)
	case s.MaxCharge < 0 || s.MaxDischarge < 0 || s.MinCharge < 0 || s.MinCharge > s.MaxCharge && s.MaxCharge > 0:
		return fmt.Errorf("home %s: storage %s: powers must be ≥ 0 with min charge ≤ max charge (%g, %g, %g kW)", home, s.Name, s.MinCharge, s.MaxCharge, s.MaxDischarge)
	case s.EtaC <= 0 || s.EtaC > 1 || s.EtaD <= 0 || s.EtaD > 1:
		return fmt.Errorf("home %s: storage %s: efficiencies %g, %g must lie in (0, 1]", home, s.Name, s.EtaC, s.EtaD)
	case s.Available != nil && len(s.Available) != T:
		return fmt.Errorf("home %s: storage %s: availability has %d slots for %d", home, s.Name, len(s.Available), T)
	}
	for k, a := range s.Arrivals {
		switch {
		case a.Index < 1 || a.Index > T || k > 0 && a.Index <= s.Arrivals[k-1].Index:
			return fmt.Errorf("home %s: storage %s: arrival %d at boundary %d: arrivals lie at boundaries 1..%d in time order", home, s.Name, k, a.Index, T)
		case s.Available == nil || s.Available[a.Index-1]:
			return fmt.Errorf("home %s: storage %s: arrival at boundary %d follows slot %d, in which it is available: a storage comes back after a slot it is away in", home, s.Name, a.Index, a.Index-1)
		case !fin(a.Energy) || a.Energy < s.Min || a.Energy > s.Max:
			return fmt.Errorf("home %s: storage %s: arrival at boundary %d with %g kWh, outside its range [%g, %g]", home, s.Name, a.Index, a.Energy, s.Min, s.Max)
		}
	}
	for _, g := range s.Goals {
		if g.Index < 1 || g.Index > T {
			return fmt.Errorf("home %s: storage %s: goal %q at boundary %d is outside 1..%d", home, s.Name, g.Text, g.Index, T)
		}
		if !fin(g.Energy) || !fin(g.Penalty) || g.Penalty < 0 {
			return fmt.Errorf("home %s: storage %s: goal %q has an invalid energy or penalty", home, s.Name, g.Text)
		}
	}
	return nil
}

// Plan is a home's plan: powers per slot and the trajectories they imply.
type Plan struct {
	// Charge[s][t] and Discharge[s][t] are storage s's powers at the bus
	// in slot t (kW, ≥ 0, never both positive).
	Charge, Discharge [][]float64
	// Energy[s][i] is storage s's energy at boundary i (kWh), 0..slots.
	Energy [][]float64
	// PVUsed[p][t] is the PV power used or exported (kW), ≤ the forecast.
	PVUsed [][]float64
	// Import and Export are the meter's powers per slot (kW).
	Import, Export []float64
	// Objective is the economic objective: ImportCost − ExportRevenue −
	// StoredValue, plus DemandCost.
	Objective                              float64
	ImportCost, ExportRevenue, StoredValue float64
	DemandCost                             float64
	// Penalties are the soft terms paid: goals missed, limits exceeded,
	// wear. Coordination is the ImportSteps and Windows cost. Cost = Objective +
	// Penalties + Coordination is what the planner minimised.
	Penalties, Wear float64
	Coordination    float64
	// Missed lists every soft goal and limit the plan does not keep.
	Missed []Miss
}

// Miss is a soft goal or limit the plan does not keep, and by how much.
type Miss struct {
	// What names it: a goal's Text, or "import limit" / "export limit".
	What string
	// Storage is the storage's name ("" for a limit); Slot the slot (a
	// limit) or the goal's boundary.
	Storage string
	Slot    int
	// By is the shortfall in kWh (a goal) or the excess in kW (a limit).
	By float64
}

// Cost returns what the planner minimised.
func (p *Plan) Cost() float64 { return p.Objective + p.Penalties + p.Coordination }
