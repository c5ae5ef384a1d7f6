package devices

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Sizing is what a home knows about its own battery or EV charger, to
// replace the catalogue's typical figures (docs/toml.md, "[[device]]
// parameters"). Zero fields keep the entry's figure.
type Sizing struct {
	CapacityKWh    float64 // the stored range's top (kWh)
	ReserveKWh     float64 // the stored range's bottom (kWh), batteries only
	MaxChargeKW    float64 // greatest charging power at the wall
	MinChargeKW    float64 // least charging power while charging
	MaxDischargeKW float64 // greatest discharging power, batteries only
	ChargeEff      float64 // share of the wall's energy that is stored, in (0, 1]
	DischargeEff   float64 // share of the stored energy that reaches the home, in (0, 1]
	// Steps is the number of charging (and discharging) power levels,
	// evenly spaced from MinChargeKW (or max/Steps) to the maximum;
	// every level is an action, so more steps mean larger tables. 0
	// keeps the entry's default.
	Steps int
	// Auto chooses the levels from the device's physics instead
	// (AutoLevels; power_steps = "auto"); Steps must then be 0.
	Auto bool
	// Needs are the energies (kWh, beyond the initial value) that the
	// device's goals ask it to store, where the home knows them: a
	// wallbox's automatic levels then choose their quantum to meet them
	// with little to spare (wallboxQuantum). Nil: the finest quantum.
	Needs []float64
	// SlotHours is the slot length automatic levels are chosen for
	// (hours); 0 means one hour. On slots of another length the levels
	// still hold, their stored energy rounded in the plan's disfavour.
	SlotHours float64
}

// sizable are the entries Sizing applies to, with their defaults: the
// figures of catalogue_builtin.go. MinChargeKW is the least level of
// evenly spaced steps and an energy home's least EV charging power;
// automatic levels start at the wallbox's least current (6 A) instead.
var sizable = map[string]Sizing{
	"home_battery":    {CapacityKWh: 13.5, MaxChargeKW: 5, MaxDischargeKW: 5, ChargeEff: 0.95, DischargeEff: 0.95, Steps: 1},
	"ev_wallbox_7kw":  {CapacityKWh: 60, MaxChargeKW: 7.4, MinChargeKW: 3.7, ChargeEff: 0.89, Steps: 2},
	"ev_wallbox_11kw": {CapacityKWh: 60, MaxChargeKW: 11, MinChargeKW: 5.5, ChargeEff: 0.89, Steps: 2},
}

// SizingDefaults returns the defaults of the sizable entry kind, and
// whether it is sizable.
func SizingDefaults(kind string) (Sizing, bool) {
	s, ok := sizable[kind]
	return s, ok
}

// Sized returns the entry with its actions and range rebuilt from sz
// (zero fields keep the defaults). It fails, naming the parameter, for an
// entry that is not sizable or a figure out of range.
func (e Entry) Sized(sz Sizing) (Entry, error) {
	def, ok := sizable[e.Kind]
	if !ok {
		return e, fmt.Errorf("kind %q takes no size parameters (those that do: home_battery, ev_wallbox_7kw, ev_wallbox_11kw)", e.Kind)
	}
	battery := e.Kind == "home_battery"
	if !battery && (sz.ReserveKWh != 0 || sz.MaxDischargeKW != 0 || sz.DischargeEff != 0) {
		return e, fmt.Errorf("reserve_kwh, max_discharge_kw, discharge_efficiency: %s cannot discharge", e.Kind)
	}
	pick := func(v, d float64) float64 {
		if v == 0 {
			return d
		}
		return v
	}
	s := Sizing{
		CapacityKWh: pick(sz.CapacityKWh, def.CapacityKWh), ReserveKWh: sz.ReserveKWh,
		MaxChargeKW: pick(sz.MaxChargeKW, def.MaxChargeKW), MaxDischargeKW: pick(sz.MaxDischargeKW, def.MaxDischargeKW),
		ChargeEff: pick(sz.ChargeEff, def.ChargeEff), DischargeEff: pick(sz.DischargeEff, def.DischargeEff), Steps: sz.Steps,
	}
	s.MinChargeKW = sz.MinChargeKW
	if s.MinChargeKW == 0 && sz.MaxChargeKW == 0 && !sz.Auto {
		s.MinChargeKW = def.MinChargeKW
	}
	if s.Steps == 0 && !sz.Auto {
		s.Steps = def.Steps
	}
	s.SlotHours, s.Needs = sz.SlotHours, sz.Needs
	if s.SlotHours == 0 {
		s.SlotHours = 1
	}
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	switch {
	case bad(s.CapacityKWh) || s.CapacityKWh <= 0 || s.CapacityKWh > 1e4:
		return e, fmt.Errorf("capacity_kwh = %g: want a positive capacity up to 10000 kWh", s.CapacityKWh)
	case bad(s.ReserveKWh) || s.ReserveKWh < 0 || s.ReserveKWh >= s.CapacityKWh:
		return e, fmt.Errorf("reserve_kwh = %g: want 0 ≤ reserve < capacity (%g kWh)", s.ReserveKWh, s.CapacityKWh)
	case bad(s.MaxChargeKW) || s.MaxChargeKW <= 0 || s.MaxChargeKW > 1e3:
		return e, fmt.Errorf("max_charge_kw = %g: want a positive power up to 1000 kW", s.MaxChargeKW)
	case bad(s.MinChargeKW) || s.MinChargeKW < 0 || s.MinChargeKW > s.MaxChargeKW:
		return e, fmt.Errorf("min_charge_kw = %g: want 0 ≤ min ≤ max_charge_kw (%g)", s.MinChargeKW, s.MaxChargeKW)
	case battery && (bad(s.MaxDischargeKW) || s.MaxDischargeKW <= 0 || s.MaxDischargeKW > 1e3):
		return e, fmt.Errorf("max_discharge_kw = %g: want a positive power up to 1000 kW", s.MaxDischargeKW)
	case bad(s.ChargeEff) || s.ChargeEff <= 0 || s.ChargeEff > 1:
		return e, fmt.Errorf("charge_efficiency = %g: want a share in (0, 1]", s.ChargeEff)
	case battery && (bad(s.DischargeEff) || s.DischargeEff <= 0 || s.DischargeEff > 1):
		return e, fmt.Errorf("discharge_efficiency = %g: want a share in (0, 1]", s.DischargeEff)
	case sz.Auto && s.Steps != 0:
		return e, fmt.Errorf("power_steps = %d and automatic levels: give one or the other", s.Steps)
	case !sz.Auto && (s.Steps < 1 || s.Steps > 16):
		return e, fmt.Errorf("power_steps = %d: want 1 to 16 levels (each level is an action; tables grow with them), or \"auto\"", s.Steps)
	case bad(s.SlotHours) || s.SlotHours <= 0 || s.SlotHours > 24:
		return e, fmt.Errorf("slot of %g h: want a positive slot length up to 24 h", s.SlotHours)
	}
	if sz.Auto {
		return e.autoSized(s, e.Properties[0].Scale)
	}
	prop := e.Properties[0].Name
	levels := func(lo, hi float64) []float64 {
		if s.Steps == 1 {
			return []float64{hi}
		}
		if lo <= 0 {
			lo = hi / float64(s.Steps)
		}
		out := make([]float64, s.Steps)
		for k := range out {
			out[k] = lo + (hi-lo)*float64(k)/float64(s.Steps-1)
		}
		return out
	}
	r := func(v float64) float64 { return math.Round(v*1000) / 1000 }
	out := e
	out.Actions = []Action{{Name: "off"}}
	if battery {
		out.Actions[0].Name = "idle"
		for _, p := range levels(0, s.MaxDischargeKW) {
			out.Actions = append(out.Actions, Action{Name: "discharge_" + kw(p), Power: -r(p), Effects: []Effect{{prop, -r(p / s.DischargeEff)}}})
		}
	}
	for _, p := range levels(s.MinChargeKW, s.MaxChargeKW) {
		out.Actions = append(out.Actions, Action{Name: "charge_" + kw(p), Power: r(p), Effects: []Effect{{prop, r(p * s.ChargeEff)}}})
	}
	SortActions(out.Actions)
	out.Properties = slices.Clone(e.Properties)
	out.Properties[0].Min, out.Properties[0].Max = bound(s.ReserveKWh), bound(s.CapacityKWh)
	out.Properties[0].Initial = math.Min(math.Max(out.Properties[0].Initial, s.ReserveKWh), s.CapacityKWh)
	out.Description = fmt.Sprintf("%s, sized: %g kWh, charge up to %g kW", e.Description, s.CapacityKWh, s.MaxChargeKW)
	return out, nil
}

// kw names a power level, e.g. "3.7kw".
func kw(p float64) string { return strconv.FormatFloat(math.Round(p*100)/100, 'f', -1, 64) + "kw" }
