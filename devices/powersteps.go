package devices

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Automatic power levels (power_steps = "auto" on a sizable device).
//
// A compiled home tracks a storage's energy as whole steps of its
// resolution, and the transition of its state from slot to slot is one
// table over (state before, action, state after): S·A·S entries for S
// states and A actions. Fine power steps make every stored value
// reachable, so S is the whole range over the resolution (601 states for
// a 60 kWh car at 0.1 kWh) and a wallbox's 27 current steps would need
// tables of ten million entries. AutoLevels therefore chooses the levels
// together with the quantum Q of stored energy they move per slot:
//
//   - every charging (discharging) level stores (takes) a whole number
//     of quanta per slot, k·Q, so the reachable states are the initial
//     value plus whole quanta: S = range/Q + 1;
//   - a battery's Q is the least multiple of the resolution (0.1 kWh)
//     for which S²·A ≤ AutoTableBudget and each direction has at most
//     MaxAutoLevels levels: the finest the table budget allows;
//   - a wallbox's levels are its real currents: 1 A steps from 6 A (IEC
//     61851's least) at 230 V on its phases (ev_wallbox_7kw one phase up
//     to 32 A, ev_wallbox_11kw three phases up to 16 A, and also one
//     phase from 6 A where min_charge_kw or max_charge_kw is below the
//     three-phase least), capped at max_charge_kw and not below
//     min_charge_kw. Each current stores its energy per slot rounded
//     down to whole quanta; of the currents that store the same, only
//     the least is a level (the others draw more for nothing). Its
//     quanta are multiples of 0.1 Wh (WallboxResolution; its stored
//     energy is kept to 1 mWh, ExactResolution, for its exact currents), so
//     that Q can follow the currents' energies rather than multiples of
//     0.1 kWh, and Q is chosen within the same budget among the
//     quanta a current's energy divides (wallboxQuantum): the greatest
//     level's over K, m amperes' on one phase, and, where the home's
//     goals are known (Sizing.Needs), each need over N — the finest
//     without needs, with them the one expected to store least beyond
//     the goals;
//   - a battery's inverter is continuous: its k-th level is the power
//     that stores exactly k·Q per slot (charging, k·Q ÷ efficiency) or
//     delivers what k·Q gives (discharging, k·Q × efficiency), up to
//     its power limits.
//
// A goal is then met to within one quantum of stored energy (the
// continuous optimum buys at most Q ÷ efficiency kWh less; a wallbox
// whose quantum divides the need meets it to within 0.1 Wh per quantum),
// and a wallbox's level loses less than one current step's energy per
// slot to the rounding (the greatest level, which a quantum of the
// greatest level's energy over K divides, almost nothing). For a 60 kWh
// car on hourly slots and no goal Q is 0.5954 kWh for the 7.4 kW
// wallbox (10 levels, 6–32 A; 32 A credited with 6.5494 of its 6.5504
// kWh, where a quantum of 0.6 credited 6.0) and 0.6118 kWh for the
// 11 kW (11 levels, the 11 kW cap credited in full); for the 13.5 kWh
// battery 0.3 kWh (15 charging, 17 discharging levels): S²·A stays
// under 2^17 entries, and the compiled table, which also tracks the
// goals held (one before/after goal at most doubles the states), under
// the compiler's 2^20.

// AutoTableBudget bounds S²·A, the transition table of a storage with
// automatic levels before goal bits (which at most double S).
const AutoTableBudget = 1 << 17

// MaxAutoLevels bounds the automatic levels in each direction.
const MaxAutoLevels = 24

// Wallbox figures (IEC 61851-1 mode 3): the least current a car accepts
// and the phase voltage.
const (
	wallboxMinAmps = 6
	gridVolts      = 230
)

// wallbox is a catalogue wallbox's physics: its phases and the greatest
// current per phase.
type wallbox struct{ phases, maxAmps int }

var wallboxes = map[string]wallbox{
	"ev_wallbox_7kw":  {phases: 1, maxAmps: 32},
	"ev_wallbox_11kw": {phases: 3, maxAmps: 16},
}

// Level is one automatic power level: the power at the wall (kW,
// negative when discharging into the home), the stored energy it moves
// per slot (kWh, negative when discharging) and its action name.
type Level struct {
	Name   string
	Power  float64
	Stored float64
}

// AutoLevels returns the automatic levels of a sizable kind with the
// figures s (defaults applied, SlotHours set) and a stored property of
// resolution scale: discharging levels (batteries) and charging levels,
// each by ascending magnitude, and the quantum Q they move.
func AutoLevels(kind string, s Sizing, scale float64) (discharge, charge []Level, q float64) {
	if scale <= 0 {
		scale = 0.1
	}
	span := s.CapacityKWh - s.ReserveKWh
	fits := func(discharge, charge []Level, q float64) bool {
		states := math.Floor(span/q+1e-9) + 1
		acts := float64(1 + len(discharge) + len(charge))
		return states*states*acts <= AutoTableBudget && len(discharge) <= MaxAutoLevels && len(charge) <= MaxAutoLevels
	}
	if _, ok := wallboxes[kind]; ok {
		discharge, charge, q = wallboxQuantum(kind, s, fits)
	} else {
		for m := 1; ; m++ {
			q = math.Round(float64(m)*scale*1e9) / 1e9
			discharge, charge = levelsFor(kind, s, q)
			if fits(discharge, charge, q) || q >= span {
				break
			}
		}
	}
	if len(charge) == 0 {
		// The greatest power stores less than one quantum per slot:
		// one level at it, its energy rounded down to the resolution.
		if _, ok := wallboxes[kind]; ok {
			scale = WallboxResolution
		}
		st := math.Floor(s.MaxChargeKW*s.ChargeEff*s.SlotHours/scale+1e-9) * scale
		charge = []Level{{Name: "charge_" + kw(s.MaxChargeKW), Power: s.MaxChargeKW, Stored: st}}
	}
	return discharge, charge, q
}

// ExactResolution is the resolution (kWh) of the stored energy of a
// wallbox with automatic levels, 1 mWh: what its currents store per slot
// is exact at it on slots of 15, 30 or 60 minutes (1 A at 230 V and 89 %
// stores 51.175 Wh a quarter-hour), so the sums a plan of whole
// currents stores are whole amperes' energy and stay a few thousand
// values a slot over a day (devices/refine's states). Rounded to 0.1 Wh
// each current's energy differs from whole amperes' by a fraction of a
// step and the sums take hundreds of thousands of values, and rounded
// to 0.1 Wh per ampere a plan loses up to 2.4 Wh a slot, enough to
// miss a goal that the whole-current optimum clears by a few
// watt-hours. The compiled levels' quanta stay multiples of
// WallboxResolution.
const ExactResolution = 1e-6

// WallboxResolution is the resolution (kWh) of the quanta of a wallbox
// with automatic levels: fine enough that a quantum can follow the
// currents' energies to a tenth of a watt-hour instead of the
// catalogue's 0.1 kWh. (Its stored energy, and so an initial value or a
// goal, is kept finer still: ExactResolution.)
const WallboxResolution = 1e-4

// wallboxQuantum returns a wallbox's levels and quantum, among
// candidates that a current's energy per slot divides exactly, so that
// the levels lose (almost) nothing to the rounding down to whole quanta:
//
//   - the greatest level's energy over K (K = 1, 2, …): the top level,
//     which the cheapest slots use, is credited in full, and a current
//     whose energy is a little more than a whole number of quanta loses
//     only that little;
//   - m times one ampere's energy on one phase (230 V × efficiency ×
//     slot): every current that is a multiple of m amperes (on one or
//     three phases) is credited in full;
//   - where the home knows its goals' needs (Sizing.Needs), each need
//     over N: the goal is then met exactly, with no quantum to spare.
//
// Each is rounded down to WallboxResolution. Without needs the quantum
// is the finest within the table budget (fits). With them it is the one
// within the budget whose plan is expected to store least beyond the
// goals: the goals' overshoot (each need rounded up to whole quanta),
// plus what the top level loses in each slot the largest need fills at
// it, plus what the currents lose on average to the rounding (one
// marginal slot). On the seeded EV homes of devices/compile's
// TestAutoStepsAgainstLP this halves the mean gap to the wallbox's own
// optimum (whole currents, CBC) against the finest quantum.
//
// The quantum the resolution of 0.1 kWh allowed was a multiple of it (0.6
// kWh for a 60 kWh car on hourly slots), which credits 32 A with 6.0 of
// its 6.55 kWh and a three-phase ampere with 0.6 of its 0.614 kWh.
func wallboxQuantum(kind string, s Sizing, fits func(discharge, charge []Level, q float64) bool) (discharge, charge []Level, q float64) {
	res := WallboxResolution
	perKWh := math.Round(1 / res)
	// Divided, not multiplied, by the steps per kWh: 0.4094, not
	// 0.40940000000000004.
	floorRes := func(v float64) float64 { return math.Floor(v*perKWh+1e-6) / perKWh }
	// Every current's energy at the resolution, and the greatest level's
	// (the cap or the greatest current).
	_, all := levelsFor(kind, s, res)
	amp := float64(gridVolts) / 1000 * s.ChargeEff * s.SlotHours
	var top float64
	if len(all) > 0 {
		top = all[len(all)-1].Stored
	}
	// Quanta finer than span/√(budget/2) leave too many states for even
	// one level.
	span := s.CapacityKWh - s.ReserveKWh
	least := math.Max(span/math.Sqrt(AutoTableBudget/2), res)
	var qs []float64
	// divide adds e over 1, 2, … rounded down (a level's energy, which
	// k quanta must not exceed) or up (a need, which k quanta must
	// reach).
	divide := func(e float64, up bool) {
		for k := 1; k <= 4096; k++ {
			v := floorRes(e / float64(k))
			if up && v*float64(k) < e-1e-9 {
				v = (math.Round(v*perKWh) + 1) / perKWh
			}
			if v < least {
				break
			}
			qs = append(qs, v)
		}
	}
	divide(top, false)
	for m := max(1, int(least/amp)); m <= 4096; m++ {
		v := floorRes(float64(m) * amp)
		if v > top {
			break
		}
		if v >= least {
			qs = append(qs, v)
		}
	}
	var needs []float64
	for _, n := range s.Needs {
		if n > res && n <= span {
			needs = append(needs, n)
			divide(n, true)
		}
	}
	slices.Sort(qs)
	qs = slices.Compact(qs)
	bestCost := math.Inf(1)
	for _, c := range qs {
		states := math.Floor(span/c+1e-9) + 1
		// The levels of c, counted before they are built: the distinct
		// whole quanta the currents store (c is a multiple of res, so
		// a current's energy at res rounds down to the same quanta).
		n, last := 0, int64(0)
		for _, l := range all {
			if k := int64(math.Floor(l.Stored/c + 1e-9)); k > last {
				n, last = n+1, k
			}
		}
		if n == 0 || states*states*float64(1+n) > AutoTableBudget || n > MaxAutoLevels {
			continue
		}
		d, ch := levelsFor(kind, s, c)
		if len(ch) == 0 || !fits(d, ch, c) {
			continue
		}
		if len(needs) == 0 {
			return d, ch, c
		}
		if cost := spare(all, ch, c, needs); cost < bestCost-1e-12 {
			bestCost, discharge, charge, q = cost, d, ch, c
		}
	}
	if charge != nil {
		return discharge, charge, q
	}
	if len(qs) == 0 {
		return nil, nil, res
	}
	// None fits: the coarsest.
	q = qs[len(qs)-1]
	discharge, charge = levelsFor(kind, s, q)
	return discharge, charge, q
}

// spare is the energy (kWh) a plan of the levels of quantum q is
// expected to store beyond the needs, or to pay for without storing:
// each need's overshoot (rounded up to whole quanta), the top level's
// loss in each slot the largest need fills at it, and the currents'
// (all, their exact energies) mean loss against the greatest level at
// or below their power.
func spare(all, levels []Level, q float64, needs []float64) float64 {
	var cost, most float64
	for _, n := range needs {
		cost += math.Ceil(n/q-1e-6)*q - n
		most = max(most, n)
	}
	top := all[len(all)-1].Stored
	cost += math.Floor(most/top) * (top - levels[len(levels)-1].Stored)
	var mid float64
	for _, a := range all {
		credit := 0.0
		for _, l := range levels {
			if l.Power <= a.Power+1e-9 {
				credit = l.Stored
			}
		}
		mid += a.Stored - credit
	}
	return cost + mid/float64(len(all))
}

// levelsFor returns the levels of quantum q.
func levelsFor(kind string, s Sizing, q float64) (discharge, charge []Level) {
	dt := s.SlotHours
	quanta := func(e float64) float64 { return math.Floor(e/q+1e-9) * q }
	if _, ok := wallboxes[kind]; ok {
		seen := map[int64]bool{}
		var cand []Level
		for _, c := range currents(kind, s) {
			c.Name = "charge_" + c.Name
			c.Stored = quanta(c.Stored)
			cand = append(cand, c.Level)
		}
		for _, c := range cand {
			k := int64(math.Round(c.Stored / q))
			if k == 0 || seen[k] {
				continue
			}
			seen[k] = true
			c.Stored = math.Round(float64(k)*q*1e9) / 1e9
			charge = append(charge, c)
		}
		return nil, charge
	}
	for k := 1; ; k++ {
		st := math.Round(float64(k)*q*1e9) / 1e9
		// The power that stores st: rounded up, so that the plan never
		// counts on more than the wall gives.
		p := math.Ceil(st/(s.ChargeEff*dt)*1000-1e-6) / 1000
		if p > s.MaxChargeKW+1e-9 {
			break
		}
		if p < s.MinChargeKW-1e-9 {
			continue
		}
		charge = append(charge, Level{Name: "charge_" + kw3(p), Power: p, Stored: st})
	}
	if s.MaxDischargeKW > 0 {
		for k := 1; ; k++ {
			st := math.Round(float64(k)*q*1e9) / 1e9
			// The power st delivers: rounded down.
			p := math.Floor(st*s.DischargeEff/dt*1000+1e-6) / 1000
			if p > s.MaxDischargeKW+1e-9 {
				break
			}
			discharge = append(discharge, Level{Name: "discharge_" + kw3(p), Power: -p, Stored: -st})
		}
	}
	return discharge, charge
}

// current is one of a wallbox's whole currents: its level (named by
// its current, "13a", or "1p13a" for one phase of a three-phase box,
// storing power × efficiency × slot exactly) and the energy its exact
// action stores per slot (exactCurrents).
type current struct {
	Level
	exact float64
}

// currents returns a catalogue wallbox's whole currents, by ascending
// power: every current from 6 A to its greatest at 230 V on its phases
// (and on one phase where min_charge_kw or max_charge_kw is below the
// three-phase least), capped at max_charge_kw and not below
// min_charge_kw.
func currents(kind string, s Sizing) []current {
	wb := wallboxes[kind]
	least := s.MinChargeKW
	if least == 0 {
		least = float64(wallboxMinAmps*gridVolts*wb.phases) / 1000
		if least > s.MaxChargeKW {
			// Capped below its phases' least: one phase.
			least = float64(wallboxMinAmps*gridVolts) / 1000
		}
	}
	floorRes := func(v float64) float64 { return math.Floor(v/ExactResolution+1e-6) * ExactResolution }
	var cand []current
	for _, ph := range []int{1, 3} {
		if ph > wb.phases {
			continue
		}
		for amps := wallboxMinAmps; amps <= wb.maxAmps; amps++ {
			p := math.Min(float64(amps*gridVolts*ph)/1000, s.MaxChargeKW)
			if p < least-1e-9 {
				continue
			}
			name := strconv.Itoa(amps) + "a"
			if ph == 1 && wb.phases == 3 {
				name = "1p" + name
			}
			c := current{Level: Level{Name: name, Power: p, Stored: p * s.ChargeEff * s.SlotHours}}
			c.exact = floorRes(c.Stored)
			cand = append(cand, c)
		}
	}
	slices.SortStableFunc(cand, func(a, b current) int { return cmp.Compare(a.Power, b.Power) })
	return cand
}

// exactCurrents are a wallbox's physical actions (Device.Exact): its
// currents, of those that draw the same power (capped) only the least,
// each storing its energy per slot, power × efficiency × slot, rounded
// down to ExactResolution — exactly, on slots of 15, 30 or 60 minutes.
// Effects are per hour, the first slot length's figure: Instantiate
// gives that length exactly these, other lengths (Action.ByLength) their
// own energy rounded down.
func exactCurrents(kind string, s Sizing, prop string) []Action {
	var out []Action
	for _, c := range currents(kind, s) {
		if n := len(out); n > 0 && math.Abs(out[n-1].Power-c.Power) < 1e-9 {
			continue
		}
		out = append(out, Action{Name: c.Name, Power: c.Power, Effects: []Effect{{prop, c.exact / s.SlotHours}}})
	}
	return out
}

// ExactBatteryBudget bounds the work of refining a battery's plan onto
// its exact actions (devices/refine): the stored values of a slot times
// the exact actions, S·A, before goal bits. At 2^16 the 13.5 kWh battery
// gets δ = 50 Wh hourly and 25 Wh on quarter-hours, and refining a home
// costs less than compiling and solving it; 2^18 (25 Wh hourly) gained
// 0.06 % of the bill on quarter-hours for 2–6× the time (docs/DESIGN.md).
const ExactBatteryBudget = 1 << 16

// exactBattery are a battery's physical actions (Device.Exact): its
// inverter is continuous, so they are its levels for a finer quantum δ
// of stored energy, each storing k·δ per slot at the least power (to the
// watt) that stores it or delivering the most that k·δ gives, as the
// levels of quantum q do (levelsFor). δ is the finest whole number of
// watt-hours that divides q and keeps S·A within ExactBatteryBudget, so
// that every compiled level is also an exact action (k·q = km·δ, at the
// same power) and a refined plan never costs more than the solved one:
// 50 Wh for the 13.5 kWh battery on hourly slots (q = 0.3 kWh; 200
// actions), which also reach the 5 kW the compiled levels stop short of
// (4.5 kWh stored of 4.75). Effects are per hour like Actions'.
func exactBattery(s Sizing, q float64, prop string) []Action {
	span := s.CapacityKWh - s.ReserveKWh
	wh := int64(math.Round(q * 1000))
	var out []Action
	for m := int64(1); m <= wh; m++ {
		if wh%m != 0 {
			continue
		}
		d := float64(wh/m) / 1000
		acts := (s.MaxChargeKW*s.ChargeEff + s.MaxDischargeKW/s.DischargeEff) * s.SlotHours / d
		if (span/d+1)*(acts+1) > ExactBatteryBudget && out != nil {
			break
		}
		discharge, charge := levelsFor("", s, d)
		out = out[:0]
		for _, l := range slices.Concat(discharge, charge) {
			if l.Power == 0 {
				// Takes energy and delivers nothing (to the watt,
				// on long slots): never better than idle.
				continue
			}
			name := "in_" + kw3(l.Power)
			if l.Power < 0 {
				name = "out_" + kw3(-l.Power)
			}
			out = append(out, Action{Name: name, Power: l.Power, Effects: []Effect{{prop, l.Stored / s.SlotHours}}})
		}
	}
	SortActions(out)
	return out
}

// autoSized is Sized with automatic levels.
func (e Entry) autoSized(s Sizing, scale float64) (Entry, error) {
	discharge, charge, q := AutoLevels(e.Kind, s, scale)
	prop := e.Properties[0].Name
	// Effects are per hour; Instantiate multiplies them by the slot's
	// length and rounds them to the resolution in the plan's disfavour,
	// which leaves whole quanta as they are.
	out := e
	out.Actions = []Action{{Name: "off"}}
	if s.MaxDischargeKW > 0 {
		out.Actions[0].Name = "idle"
	}
	names := map[string]bool{}
	for _, l := range slices.Concat(discharge, charge) {
		if names[l.Name] {
			return e, fmt.Errorf("automatic levels: two levels are called %s", l.Name)
		}
		names[l.Name] = true
		out.Actions = append(out.Actions, Action{Name: l.Name, Power: l.Power, Effects: []Effect{{prop, l.Stored / s.SlotHours}}})
	}
	SortActions(out.Actions)
	out.Properties = slices.Clone(e.Properties)
	out.Properties[0].Min, out.Properties[0].Max = bound(s.ReserveKWh), bound(s.CapacityKWh)
	out.Properties[0].Initial = math.Min(math.Max(out.Properties[0].Initial, s.ReserveKWh), s.CapacityKWh)
	if _, ok := wallboxes[e.Kind]; ok {
		out.Properties[0].Scale = ExactResolution
		out.Exact = exactCurrents(e.Kind, s, prop)
	} else if s.MaxDischargeKW > 0 {
		out.Properties[0].Scale = ExactResolution
		out.Exact = exactBattery(s, q, prop)
	}
	top := charge[len(charge)-1]
	out.Description = fmt.Sprintf("%s; %d charging levels %g–%g kW", e.Description, len(charge), charge[0].Power, top.Power)
	if len(discharge) > 0 {
		out.Description += fmt.Sprintf(", %d discharging up to %g kW", len(discharge), -discharge[len(discharge)-1].Power)
	}
	out.Description += fmt.Sprintf(", stored in steps of %s kWh per %s h slot (automatic)", strconv.FormatFloat(q, 'f', -1, 64), strconv.FormatFloat(s.SlotHours, 'g', -1, 64))
	return out, nil
}

// kw3 names a battery's level to the watt, its power's precision, so
// that distinct levels never share a name: "charge_0.316kw".
func kw3(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) + "kw" }
