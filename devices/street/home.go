// Package street puts energy homes into a TOML neighbourhood: a home
// whose file says planner = "energy" is mapped to a devices/energy model
// (continuous battery and EV power, PV, a two-way meter), planned alone
// by devices/energy, and then coordinated with the street on the load
// that flows — each energy home in turn answers the rest of the street's
// per-slot load (its neighbours' where the street has a neighbours key)
// with the peak term as a convex piecewise-linear price of its import
// (energy.Grid.ImportSteps), which keeps its plan an LP — and on the
// feeder limit: per coordination window it commits to its highest
// import, and takes the limit less the rest of the street's committed
// caps as a cap or a priced window (energy.Grid.Cap, Grid.Windows).
// Every plan passes devices/plancheck before it is returned.
package street

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/energy"
)

// ErrNotEnergy is wrapped when a home cannot be planned as an energy
// home: a device that stores no energy, or a rule that is not a goal on
// stored energy.
var ErrNotEnergy = errors.New("not an energy home")

// storageKinds are the catalogue kinds an energy home may hold.
var storageKinds = []string{"home_battery", "ev_wallbox_7kw", "ev_wallbox_11kw"}

// FromHome maps home h of neighbourhood n (as config loads it) to an
// energy home. pv is the home's PV forecast per slot (kW; nil for none),
// which h.Background is net of; sizes are the size parameters its
// devices gave, by name (config.Config.Sizes; nil for none).
//
// The mapping reads the compiled catalogue device, so that one TOML
// description gives both models: a storage's range and start are its
// property's Min, Max and Initial; its greatest charging and discharging
// powers are its strongest actions'. Its efficiencies and least charging
// power are the size parameters' (charge_efficiency,
// discharge_efficiency, min_charge_kw, with the catalogue's defaults:
// an EV charger's least power is half the wallbox's maximum unless
// max_charge_kw or min_charge_kw is given, a battery's is 0), not the
// compiled effects, which are rounded to the property's steps (4.7 kWh
// an hour for a 5 kW charge at 95%, not 4.75). Goals
// "PROPERTY geq|gt VALUE before|at TIME" become goals at the boundary of
// TIME (before is read as at: the energy planner's goals hold at one
// boundary, the stricter reading), with the rule's hard flag and
// [objective] miss as the penalty per kWh; the physical bounds the
// loader adds are the storage's range. The wear is the largest
// cycle_cost of the home's devices (energy.DefaultWear when none has
// one). Prices are the home's own (h.Meter) or else the
// neighbourhood's; feed-in without an export price earns the import
// price, as in the compiled model. The home's meter maps one to one
// (mapMeter), and a storage's grid permissions and end value are its
// device's and property's; an EV's plugged-in window (devices.Device.Away)
// is its availability, and the charge it comes back with
// (devices.Property.Reset, arrival_charge) its arrivals.
func FromHome(n *devices.Neighbourhood, h *devices.Home, pv []float64, sizes map[string]devices.Sizing) (*energy.Home, error) {
	hz := n.Horizon
	T := hz.Slots
	if hz.Dynamics != devices.Full {
		return nil, fmt.Errorf("home %s: energy homes need full dynamics (TOML neighbourhoods): %w", h.Name, ErrNotEnergy)
	}
	eh := &energy.Home{Name: h.Name, Dt: make([]float64, T), Load: make([]float64, T), Wear: -1}
	for t := range T {
		eh.Dt[t] = hz.SlotHours(t)
		eh.Load[t] = h.Background[t] * n.Units.PowerScale
		if pv != nil {
			eh.Load[t] += pv[t]
		}
	}
	if pv != nil && slices.ContainsFunc(pv, func(v float64) bool { return v > 0 }) {
		eh.PV = []energy.PV{{Name: "pv", Forecast: slices.Clone(pv)}}
	}
	ps := n.Units.PriceScale
	if ps == 0 {
		ps = 1
	}
	// The home's own tariff where it has one (devices.Neighbourhood.Tariff).
	imp, exp := n.Prices, n.ExportPrices
	if h.Meter != nil && h.Meter.Prices != nil {
		imp, exp = h.Meter.Prices, h.Meter.ExportPrices
	}
	eh.Tariff.Import = make([]float64, T)
	eh.Tariff.Export = make([]float64, T)
	for t := range T {
		eh.Tariff.Import[t] = imp[t] * ps
		eh.Tariff.Export[t] = eh.Tariff.Import[t]
		if exp != nil {
			eh.Tariff.Export[t] = exp[t] * ps
		}
	}
	miss := n.Weights.Miss
	if miss <= 0 {
		miss = devices.DefaultMissPenalty
	}
	if m := h.Meter; m != nil {
		mapMeter(eh, m, n.Units, miss)
	}
	// prop[i] is the storage of property i, −1 for none.
	prop := make([]int, len(h.Properties))
	for i := range prop {
		prop[i] = -1
	}
	for di := range h.Devices {
		d := &h.Devices[di]
		if !slices.Contains(storageKinds, d.Kind) {
			what := fmt.Sprintf("kind %q", d.Kind)
			if d.Kind == "" {
				what = "a custom device"
			}
			return nil, fmt.Errorf("home %s: device %s (%s): an energy home (planner = \"energy\") holds only %v and PV; plan it with the compiled planner: %w", h.Name, d.Name, what, storageKinds, ErrNotEnergy)
		}
		st, pi, err := storageOf(h, d, sizes[d.Name])
		if err != nil {
			return nil, err
		}
		st.NoGridCharge, st.NoGridDischarge = d.NoGridCharge, d.NoGridDischarge
		if d.Away != nil {
			// The plugged-in window: away slots are unavailable.
			st.Available = make([]bool, T)
			for t := range T {
				st.Available[t] = !d.AwayIn(t)
			}
		}
		// The charge the car comes back with (arrival_charge), at each
		// arrival inside the horizon.
		for _, i := range slices.Sorted(maps.Keys(h.Properties[pi].Reset)) {
			st.Arrivals = append(st.Arrivals, energy.Arrival{Index: i, Energy: h.Properties[pi].Reset[i]})
		}
		st.EndValue = h.Properties[pi].EndValue * ps
		prop[pi] = len(eh.Storage)
		eh.Storage = append(eh.Storage, st)
		if d.CycleCost > 0 {
			eh.Wear = math.Max(eh.Wear, d.CycleCost)
		}
	}
	for ri := range h.Rules {
		r := &h.Rules[ri]
		pi := h.Property(r.Location, r.Property)
		if pi < 0 || prop[pi] < 0 {
			return nil, fmt.Errorf("home %s: rule %q: an energy home's rules are goals on its batteries' and EVs' stored energy: %w", h.Name, r.Text, ErrNotEnergy)
		}
		st := &eh.Storage[prop[pi]]
		if !r.Active() {
			// The loader's physical bounds are the storage's range.
			if r.Rel == devices.Geq && r.Goal <= st.Min+1e-9 || r.Rel == devices.Leq && r.Goal >= st.Max-1e-9 {
				continue
			}
			return nil, fmt.Errorf("home %s: rule %q: an energy home takes no bounds but its storages' ranges (capacity_kwh, reserve_kwh): %w", h.Name, r.Text, ErrNotEnergy)
		}
		if r.Rel != devices.Geq && r.Rel != devices.Gt || r.Prefix != devices.Before && r.Prefix != devices.At {
			return nil, fmt.Errorf("home %s: rule %q: an energy home takes goals \"%s geq VALUE before|at TIME\": %w", h.Name, r.Text, r.Property, ErrNotEnergy)
		}
		if r.T1 < 1 || r.T1 > T {
			return nil, fmt.Errorf("home %s: rule %q: its time is not after the horizon's first slot: %w", h.Name, r.Text, ErrNotEnergy)
		}
		st.Goals = append(st.Goals, energy.Goal{Index: r.T1, Energy: r.Goal, Hard: !r.Soft, Penalty: miss, Text: r.Text})
	}
	if err := eh.Validate(); err != nil {
		return nil, err
	}
	return eh, nil
}

// storageOf maps a catalogue storage device with size parameters sz to
// an energy storage, and returns the index of the property it stores.
func storageOf(h *devices.Home, d *devices.Device, sz devices.Sizing) (energy.Storage, int, error) {
	def, _ := devices.SizingDefaults(d.Kind)
	pick := func(v, dflt float64) float64 {
		if v > 0 {
			return v
		}
		return dflt
	}
	st := energy.Storage{Name: d.Name, EtaC: pick(sz.ChargeEff, def.ChargeEff), EtaD: 1}
	if d.Kind == "home_battery" {
		st.EtaD = pick(sz.DischargeEff, def.DischargeEff)
	}
	// As devices.Entry.Sized: the default least power only where
	// neither power is given.
	st.MinCharge = sz.MinChargeKW
	if st.MinCharge == 0 && sz.MaxChargeKW == 0 {
		st.MinCharge = def.MinChargeKW
	}
	pi := -1
	for _, a := range d.Actions {
		for _, e := range a.Effects {
			if p := h.Property(d.Location, e.Property); p >= 0 {
				pi = p
			}
		}
		st.MaxCharge = math.Max(st.MaxCharge, a.Power)
		st.MaxDischarge = math.Max(st.MaxDischarge, -a.Power)
	}
	if pi < 0 {
		return st, 0, fmt.Errorf("home %s: device %s stores nothing the home tracks: %w", h.Name, d.Name, ErrNotEnergy)
	}
	p := &h.Properties[pi]
	if p.Min == nil || p.Max == nil {
		return st, 0, fmt.Errorf("home %s: device %s: its stored energy has no range: %w", h.Name, d.Name, ErrNotEnergy)
	}
	st.Min, st.Max, st.Capacity, st.Initial = *p.Min, *p.Max, *p.Max, p.Initial
	st.MinCharge = math.Min(st.MinCharge, st.MaxCharge)
	return st, pi, nil
}

// mapMeter gives energy home eh the rest of meter m (its tariff is
// read with the neighbourhood's): import and export limits, soft at
// [objective] miss per kWh beyond them (the penalty the compiled model
// charges, and the one eh's goals pay) or hard, the demand charge and
// its threshold, and curtailable PV. Powers are in model units of u,
// prices in its price units.
func mapMeter(eh *energy.Home, m *devices.Meter, u devices.Units, miss float64) {
	pw, ps := u.PowerScale, u.PriceScale
	if pw == 0 {
		pw = 1
	}
	if ps == 0 {
		ps = 1
	}
	eh.Grid.ImportLimit = m.ImportLimit * pw
	eh.Grid.ExportLimit = m.ExportLimit * pw
	eh.Grid.HardLimits = m.HardLimits
	eh.Grid.LimitPenalty = miss
	eh.Grid.DemandCharge = m.DemandCharge * ps / pw
	eh.Grid.DemandThreshold = m.DemandThreshold * pw
	if m.Curtail != nil {
		for i := range eh.PV {
			eh.PV[i].Curtailable = true
		}
	}
}
