package devices

import "math"

// Dynamics selects how a property's trajectory is indexed and which indices
// rule windows cover; see the package documentation.
type Dynamics int

const (
	// Full indexes the slot boundaries 0..Slots: every slot acts, every
	// boundary can be checked.
	Full Dynamics = iota
	// SHDS reproduces the data set's simulator: indices 0..Slots−1, slot
	// 0's actions have no effect, half-open windows.
	SHDS
)

// String returns "full" or "shds", the words of the TOML key.
func (d Dynamics) String() string {
	if d == SHDS {
		return "shds"
	}
	return "full"
}

// Horizon is the scheduling period.
type Horizon struct {
	Slots int
	// SlotMinutes is every slot's length, or the first slot's where
	// Lengths is set.
	SlotMinutes int
	// Lengths, when set, gives each slot its own length in minutes
	// ([horizon] segments: fine slots first, coarse later, as the evcc
	// optimizer's time_series.dt). A slot's energy is its power × its
	// own hours; its effects and drift are the model's per-slot figures
	// (given for a slot of SlotMinutes) scaled to its length, or an
	// action's own effects for that length (Action.ByLength).
	Lengths []int
	// Start is the clock time of slot 0's beginning, in minutes after
	// midnight; it only labels slots and converts "HH:MM" rule times.
	Start    int
	Dynamics Dynamics
	// AtVacuous reproduces the SH-MGM simulator, whose `at T` windows are
	// empty (shds-model.md §6 I3); only the shmgm import profile sets it.
	AtVacuous bool
}

// Hours returns the slot length in hours (Δ).
func (h Horizon) Hours() float64 { return float64(h.SlotMinutes) / 60 }

// Minutes returns slot t's length in minutes.
func (h Horizon) Minutes(t int) int {
	if h.Lengths != nil {
		return h.Lengths[t]
	}
	return h.SlotMinutes
}

// SlotHours returns slot t's length in hours.
func (h Horizon) SlotHours(t int) float64 { return float64(h.Minutes(t)) / 60 }

// Ratio returns slot t's length over SlotMinutes, the factor that scales
// the model's per-slot drift and effects to slot t (1 on a horizon of
// one slot length).
func (h Horizon) Ratio(t int) float64 {
	if h.Lengths == nil {
		return 1
	}
	return float64(h.Lengths[t]) / float64(h.SlotMinutes)
}

// PeakHours returns the weight of slot t's squared power in the peak
// term, in hours²: Δ_t · Δ_0, slot t's hours times SlotMinutes' hours
// (Δ² on a horizon of one slot length). The squared power is weighed by
// the time it lasts, so a load costs the same whether the horizon cuts
// it into one coarse slot or several fine ones (docs/DESIGN.md, "Uneven
// slots").
func (h Horizon) PeakHours(t int) float64 { return h.SlotHours(t) * h.Hours() }

// Uneven reports whether the slots differ in length.
func (h Horizon) Uneven() bool { return h.Lengths != nil }

// Indices returns the length of a property trajectory: Slots+1 boundaries
// under Full, Slots under SHDS.
func (h Horizon) Indices() int {
	if h.Dynamics == SHDS {
		return h.Slots
	}
	return h.Slots + 1
}

// Mover returns the slot whose actions move a property from index i−1 to
// index i (i ≥ 1).
func (h Horizon) Mover(i int) int {
	if h.Dynamics == SHDS {
		return i
	}
	return i - 1
}

// Window is a coordination window: the slots [From, To).
type Window struct{ From, To int }

// Len returns the number of slots in w.
func (w Window) Len() int { return w.To - w.From }

// Weights weigh the parts of the objective.
type Weights struct {
	Price float64
	Peak  float64
	// Miss is the penalty per missing unit of a soft rule (Rule.Soft) and
	// per kWh above a soft feeder limit, in the objective's currency (not
	// weighted by Price); DefaultMissPenalty for TOML homes.
	Miss float64
}

// DefaultMissPenalty is the TOML homes' penalty per missing unit of a
// soft goal (currency per kWh of charge, per °C, per % of a programme)
// and per kWh above a soft feeder limit. At 100 it dominates any price
// difference a goal could trade against (a kWh costs well under 1 in
// every tariff hearth has seen, and a level's peak term a few units), so
// a plan misses a goal only where no plan can meet it, and then by as
// little as the devices allow.
const DefaultMissPenalty = 100

// Units say what one model unit of power and of price is in natural units,
// for reports; TOML homes are in kW and currency per kWh (both 1), SHDS
// imports in the data set's integer units (0.1 kWh per slot, cents).
type Units struct {
	Power      string  // label of a natural power unit, e.g. "kW"
	PowerScale float64 // natural units per model unit
	Currency   string
	PriceScale float64 // currency per model price unit
}

// Neighbourhood is a set of homes that share a time horizon, a tariff and a
// peak cost.
type Neighbourhood struct {
	Name    string
	Horizon Horizon
	// Prices holds the price of energy in each slot (currency per kWh in
	// model units).
	Prices []float64
	// ExportPrices, when not nil, is what a home earns per unit it feeds
	// back in each slot (a negative draw: PV or a battery beyond the
	// home's load); nil pays feed-in at Prices, the SHDS and earlier
	// behaviour. Each must not exceed the slot's price.
	ExportPrices []float64
	// Windows are the coordination windows, disjoint and sorted; slots
	// outside every window are not coordinated.
	Windows []Window
	// Levels is the number of energy levels a home can commit to in a
	// window (fewer when the home has fewer distinct draws).
	Levels  int
	Weights Weights
	// FeederLimit bounds the sum of the homes' committed caps in every
	// window (power units); 0 means no limit.
	FeederLimit float64
	// FeederSoft makes the feeder limit soft: committed caps above it
	// cost Weights.Miss per kW over, per hour of the window, instead of
	// being excluded. The zero value is a hard limit.
	FeederSoft bool
	Homes      []Home
	// Links are the pairs of homes whose cross terms enter the peak cost
	// (indices into Homes, i < j); nil means every pair.
	Links [][2]int
	Units Units
}

// Home is one household.
type Home struct {
	Name string
	// Background is the uncontrollable draw per slot (power units).
	Background []float64
	// OutsideLoad is the fixed load per slot of neighbours that are not in
	// the problem, added to this home's term of the peak cost (SH-MGM's
	// neighbour load N_i); nil for none.
	OutsideLoad []float64
	Devices     []Device
	Properties  []Property
	Rules       []Rule
	// Meter is the home's own tariff, limits and curtailable PV; nil
	// for the neighbourhood's tariff and no limits.
	Meter *Meter
}

// Device is an actuator: one decision per slot.
type Device struct {
	Name string
	// Kind is the catalogue entry it came from ("" for a custom device).
	Kind string
	// Location is where the device acts: it changes properties at its
	// Location and at its own Name (see Affects).
	Location string
	// Actions are sorted by ascending power, ties by name (the SHDS order);
	// action 0 draws the least.
	Actions []Action
	// Exact, when not nil, are the device's physical actions where
	// Actions are levels quantised for the compiler (a wallbox with
	// power_steps = "auto": its whole currents, each with the energy it
	// stores per slot to the property's resolution, where the levels
	// credit it rounded down to whole quanta). The compiler tables only
	// Actions; a schedule's action index a ≥ len(Actions) names
	// Exact[a−len(Actions)] (Act), which only a refinement after the
	// solve (devices/refine) writes. Sorted like Actions; none is off.
	Exact []Action
	// CycleCost is what a kWh through the device costs (currency per
	// kWh of |power|·Δ at the wall, charging or discharging): the wear of
	// a storage device, and the tie-break that keeps a plan from
	// charging and discharging at equal prices. 0 for none.
	CycleCost float64
	// NoGridCharge forbids charging (a positive power) in a slot where
	// the home imports; NoGridDischarge forbids discharging (a negative
	// power) in a slot where it exports (Home.Restricted).
	NoGridCharge, NoGridDischarge bool
	// Away, when not nil, holds one entry per slot: true where the
	// device is not plugged in (an EV outside its plugged-in window) and
	// may only take its idle action (Idle: no power, no effect). A slot
	// the car leaves or arrives in is away as a whole (Plug).
	Away []bool
	// Plug is the daily plugged-in window Away was laid from ([[device]]
	// arrival and departure); nil for a device that never leaves. It
	// tells simulators when the car comes and goes (devices/homesim).
	Plug *PlugWindow
}

// PlugWindow is a car's daily plugged-in window: it arrives at Arrival
// and leaves at Departure, both minutes after local midnight (Departure
// before Arrival for a car plugged in overnight).
type PlugWindow struct {
	Arrival, Departure int
	// Charge, when not nil, is what the car holds when it arrives (the
	// stored property's unit, kWh for an EV): the property's Reset at
	// every arrival inside the horizon. nil: what it left with.
	Charge *float64
}

// Plugged reports whether the car is plugged in at clock minute m
// (taken modulo a day): in [Arrival, Departure), wrapping past midnight.
func (w PlugWindow) Plugged(m int) bool {
	m = (m%1440 + 1440) % 1440
	if w.Arrival < w.Departure {
		return m >= w.Arrival && m < w.Departure
	}
	return m >= w.Arrival || m < w.Departure
}

// AwayIn reports whether the device is away (not plugged in) in slot t.
func (d *Device) AwayIn(t int) bool { return t >= 0 && t < len(d.Away) && d.Away[t] }

// Idle returns the index of the device's action that draws nothing and
// moves nothing (an EV charger's "off"), or −1.
func (d *Device) Idle() int {
	for a := range d.Actions {
		if d.Actions[a].Power != 0 {
			continue
		}
		moves := false
		for _, e := range d.Actions[a].Effects {
			moves = moves || e.Delta != 0
		}
		for _, effs := range d.Actions[a].ByLength {
			for _, e := range effs {
				moves = moves || e.Delta != 0
			}
		}
		if !moves {
			return a
		}
	}
	return -1
}

// Allowed reports whether the device may take action a (a schedule's
// index, Act) in slot t: any action where it is plugged in, only its
// idle one where it is away.
func (d *Device) Allowed(t, a int) bool { return !d.AwayIn(t) || a == d.Idle() }

// Action is one thing a device can do during a slot.
type Action struct {
	Name string
	// Power is the average draw over the slot (power units; negative for
	// a battery feeding the home).
	Power float64
	// Effects change properties by Delta natural units per slot (of
	// Horizon.SlotMinutes).
	Effects []Effect
	// ByLength, on a horizon of uneven slots, holds the effects of a
	// slot of so many minutes where they are not Effects scaled to its
	// length (a storage's charge rounded down to whole steps per slot,
	// Entry.Instantiate); nil otherwise. Each list names the properties
	// Effects names.
	ByLength map[int][]Effect
}

// Act returns the action a schedule's index a names: Actions[a], or
// Exact[a−len(Actions)] past them.
func (d *Device) Act(a int) *Action {
	if a >= len(d.Actions) {
		return &d.Exact[a-len(d.Actions)]
	}
	return &d.Actions[a]
}

// NumActs is the number of indices a schedule may give the device:
// its actions and its exact ones.
func (d *Device) NumActs() int { return len(d.Actions) + len(d.Exact) }

// Effect is an action's change of a property per slot.
type Effect struct {
	Property string
	Delta    float64
}

// Property is a sensed quantity at a location, e.g. (room,
// temperature_heat) or (ev, charge).
type Property struct {
	Location, Name string
	// Initial is the value at index 0 (natural units).
	Initial float64
	// Drift is the change per slot that happens whatever the devices do.
	Drift float64
	// Scale is the size of one step (natural units); values are whole
	// steps.
	Scale float64
	Unit  string
	// Min and Max, when set, are the physical range of what the property
	// stores (a battery's energy, a room's temperature); the loader adds
	// them as hard passive rules, and a plan checker checks them in every
	// slot whatever the rules say.
	Min, Max *float64
	// EndValue is what a unit of the property left at the last index is
	// worth (currency per natural unit, a storage's value per kWh left
	// at the horizon's end); it is subtracted from the objective.
	EndValue float64
	// Reset, when not nil, sets the property to a value at trajectory
	// indices ≥ 1 whatever came before: the charge a car comes back
	// with at the boundary it is plugged in again ([[device]]
	// arrival_charge). The slot before such an index is one its device
	// is away in, so no action of the slot is lost.
	Reset map[int]float64
}

// At returns the property's value in steps at index i reached as v
// (Reset's value where one applies).
func (p *Property) At(i int, v int64) int64 {
	if r, ok := p.Reset[i]; ok {
		return Steps(r, p.Scale)
	}
	return v
}

// Steps rounds v to whole steps of scale.
func Steps(v, scale float64) int64 { return int64(math.Round(v / scale)) }

// Effect returns the delta of property p under the action, 0 and false
// when the action has no effect entry for p.
func (a *Action) Effect(p string) (float64, bool) {
	for _, e := range a.Effects {
		if e.Property == p {
			return e.Delta, true
		}
	}
	return 0, false
}

// EffectIn returns the delta of property p under the action in slot t of
// horizon h: ByLength's for the slot's length if given, else Effects'
// scaled by h.Ratio(t).
func (a *Action) EffectIn(p string, h Horizon, t int) (float64, bool) {
	if h.Lengths != nil {
		if effs, ok := a.ByLength[h.Lengths[t]]; ok {
			for _, e := range effs {
				if e.Property == p {
					return e.Delta, true
				}
			}
			return 0, false
		}
	}
	v, ok := a.Effect(p)
	return v * h.Ratio(t), ok
}

// DriftIn returns the property's drift over slot t of horizon h: Drift
// scaled by h.Ratio(t).
func (p *Property) DriftIn(h Horizon, t int) float64 { return p.Drift * h.Ratio(t) }

// Affects reports whether device d changes property p at location loc: it
// has an action with an effect entry for p and sits at loc or is named loc
// (shds-model.md §2.2; the wiring keeps a Tesla's charge apart from a
// Roomba's).
func (d *Device) Affects(loc, p string) bool {
	if d.Location != loc && d.Name != loc {
		return false
	}
	for i := range d.Actions {
		if _, ok := d.Actions[i].Effect(p); ok {
			return true
		}
	}
	return false
}

// Property returns the index of the property (loc, name), or −1.
func (h *Home) Property(loc, name string) int {
	for i, p := range h.Properties {
		if p.Location == loc && p.Name == name {
			return i
		}
	}
	return -1
}

// Device returns the index of the device called name, or −1.
func (h *Home) Device(name string) int {
	for i := range h.Devices {
		if h.Devices[i].Name == name {
			return i
		}
	}
	return -1
}

// Bill returns the price of drawing draw (power units, negative for
// feed-in) through slot t, before the slot length and the price weight:
// Prices[t]·draw when importing, ExportPrices[t]·draw when feeding back.
func (n *Neighbourhood) Bill(t int, draw float64) float64 {
	if draw < 0 && n.ExportPrices != nil {
		return n.ExportPrices[t] * draw
	}
	return n.Prices[t] * draw
}

// Linked returns the pairs of homes coupled by the peak cost.
func (n *Neighbourhood) Linked() [][2]int {
	if n.Links != nil {
		return n.Links
	}
	var out [][2]int
	for i := range n.Homes {
		for j := i + 1; j < len(n.Homes); j++ {
			out = append(out, [2]int{i, j})
		}
	}
	return out
}

// WindowHours returns the length of coordination window w in hours.
func (n *Neighbourhood) WindowHours(w int) float64 {
	if !n.Horizon.Uneven() {
		return float64(n.Windows[w].Len()) * n.Horizon.Hours()
	}
	h := 0.0
	for t := n.Windows[w].From; t < n.Windows[w].To; t++ {
		h += n.Horizon.SlotHours(t)
	}
	return h
}

// WindowOf returns the window holding slot t, or −1.
func (n *Neighbourhood) WindowOf(t int) int {
	for w, win := range n.Windows {
		if t >= win.From && t < win.To {
			return w
		}
	}
	return -1
}
