package homesim

import (
	"math"
	"slices"
	"time"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/report"
)

// Trace is what a simulated home actually did during its day, slot by
// slot: the record devices/homesim/tracecheck replays.
type Trace struct {
	Home        string    `json:"home"`
	Start       time.Time `json:"start"`
	SlotMinutes int       `json:"slot_minutes"`
	Slots       []SlotTrace
	// Minutes, on a horizon of uneven slots ([horizon] segments), gives
	// each slot's length; nil when every slot lasts SlotMinutes.
	Minutes []int `json:"minutes,omitempty"`
	// Properties follow the home's properties (devices.Home.Properties).
	Properties []PropertyTrace `json:"properties"`
	// From and To are the first and last slot boundaries observed (To <
	// From when none was): a run that starts after the day's start or
	// ends before its end observes part of it.
	From int `json:"from"`
	To   int `json:"to"`
}

// SlotTrace is one slot of the day.
type SlotTrace struct {
	Start time.Time `json:"start"`
	// SimulatedS is how much of the slot was simulated (seconds).
	SimulatedS float64 `json:"simulated_s"`
	// BackgroundKWh is the base load as simulated (noise included, PV
	// not subtracted); PVKWh what the panels gave.
	BackgroundKWh float64 `json:"background_kwh"`
	PVKWh         float64 `json:"pv_kwh"`
	// NetKWh is the meter's net energy over the slot (import − export);
	// ImportKWh and ExportKWh its parts, netted over the slot.
	NetKWh    float64 `json:"net_kwh"`
	ImportKWh float64 `json:"import_kwh"`
	ExportKWh float64 `json:"export_kwh"`
	// Bill is price·import − export_price·export.
	Bill    float64      `json:"bill"`
	Devices []DeviceSlot `json:"devices"`
}

// DeviceSlot is what one device did in a slot.
type DeviceSlot struct {
	Device string `json:"device"`
	// InKWh is the energy drawn from the meter, OutKWh the energy given
	// back to it.
	InKWh  float64 `json:"in_kwh"`
	OutKWh float64 `json:"out_kwh"`
	// RunS is the seconds spent on each action; for a storage device
	// the commanded action's name, its power being a set point.
	RunS map[string]float64 `json:"run_s"`
	// Car is true for a device that can leave (a Trip); PluggedS is
	// then the seconds it was plugged in.
	Car      bool    `json:"car,omitempty"`
	PluggedS float64 `json:"plugged_s,omitempty"`
	// Returned is how a car's charge changed between leaving and coming
	// back in this slot (what the trip used), 0 for no return.
	Returned float64 `json:"returned,omitempty"`
	// Refused lists the reasons commands were refused or clamped.
	Refused []string `json:"refused,omitempty"`
}

func (ds *DeviceSlot) addRun(action string, sec float64) {
	if sec <= 0 {
		return
	}
	if ds.RunS == nil {
		ds.RunS = map[string]float64{}
	}
	ds.RunS[action] += sec
}

// PropertyTrace is one property over the day.
type PropertyTrace struct {
	Location string `json:"location"`
	Name     string `json:"name"`
	Unit     string `json:"unit,omitempty"`
	// Values are the values at the slot boundaries 0..Slots (those
	// outside From..To were not observed).
	Values []float64 `json:"values"`
	// Min and Max are the extremes inside each slot.
	Min []float64 `json:"min"`
	Max []float64 `json:"max"`
}

func newTrace(n *devices.Neighbourhood, hi int, day time.Time) *Trace {
	hz := n.Horizon
	h := &n.Homes[hi]
	bounds := Bounds(hz)
	tr := &Trace{Home: h.Name, Start: day, SlotMinutes: hz.SlotMinutes, Slots: make([]SlotTrace, hz.Slots), From: 0, To: -1}
	if hz.Uneven() {
		tr.Minutes = slices.Clone(hz.Lengths)
	}
	for t := range tr.Slots {
		st := &tr.Slots[t]
		st.Start = day.Add(bounds[t])
		st.Devices = make([]DeviceSlot, len(h.Devices))
		for d := range h.Devices {
			st.Devices[d].Device = h.Devices[d].Name
		}
	}
	for _, p := range h.Properties {
		pt := PropertyTrace{Location: p.Location, Name: p.Name, Unit: p.Unit,
			Values: make([]float64, hz.Slots+1), Min: make([]float64, hz.Slots), Max: make([]float64, hz.Slots)}
		for t := range pt.Min {
			pt.Min[t], pt.Max[t] = math.Inf(1), math.Inf(-1)
		}
		tr.Properties = append(tr.Properties, pt)
	}
	return tr
}

// settle computes the meter's figures of every slot from its net energy.
func (tr *Trace) settle(n *devices.Neighbourhood) {
	imp, exp := n.Prices, n.ExportPrices
	for hi := range n.Homes {
		if n.Homes[hi].Name == tr.Home {
			imp, exp = n.Tariff(hi) // the home's own tariff where it has one
		}
	}
	for t := range tr.Slots {
		st := &tr.Slots[t]
		st.ImportKWh, st.ExportKWh = math.Max(st.NetKWh, 0), math.Max(-st.NetKWh, 0)
		st.Bill = imp[t]*st.ImportKWh - exportPrice(imp, exp, t)*st.ExportKWh
		for p := range tr.Properties {
			pt := &tr.Properties[p]
			if math.IsInf(pt.Min[t], 0) {
				pt.Min[t], pt.Max[t] = 0, 0 // not simulated: JSON has no ±Inf
			}
		}
	}
}

func exportPrice(imp, exp []float64, t int) float64 {
	if exp != nil {
		return exp[t]
	}
	return imp[t]
}

// SlotSeconds returns slot t's length in seconds.
func (tr *Trace) SlotSeconds(t int) float64 {
	if tr.Minutes != nil {
		return float64(tr.Minutes[t]) * 60
	}
	return float64(tr.SlotMinutes) * 60
}

// Complete reports whether the whole day was simulated.
func (tr *Trace) Complete() bool {
	return tr.From == 0 && tr.To == len(tr.Slots)
}

// Goal is a rule of the home and whether the day kept it.
type Goal struct {
	Rule string `json:"rule"`
	OK   bool   `json:"ok"`
	// Observed is false when none of the rule's boundaries was simulated.
	Observed bool `json:"observed"`
	// Value decides the rule: the best value of a `before`/`after`
	// window, the worst of an `at`/`within` window or a bound.
	Value float64 `json:"value"`
}

// Goals checks every rule of home h on the trace's boundary values, to
// within one resolution step of the property (the planner's model rounds
// every effect to whole steps, the simulator does not).
func (tr *Trace) Goals(hz devices.Horizon, h *devices.Home) []Goal {
	var out []Goal
	for ri := range h.Rules {
		r := &h.Rules[ri]
		g := Goal{Rule: r.Text}
		p := h.Property(r.Location, r.Property)
		if p < 0 {
			out = append(out, g)
			continue
		}
		tol := h.Properties[p].Scale
		from, to, anyOf := hz.RuleWindow(r)
		from, to = max(from, tr.From), min(to, tr.To+1)
		holds := func(v float64) bool {
			switch r.Rel {
			case devices.Eq:
				return math.Abs(v-r.Goal) <= tol
			case devices.Neq:
				return math.Abs(v-r.Goal) > tol/2
			case devices.Lt, devices.Leq:
				return v <= r.Goal+tol
			default:
				return v >= r.Goal-tol
			}
		}
		// better reports whether v is further on the rule's side than w.
		better := func(v, w float64) bool {
			switch r.Rel {
			case devices.Lt, devices.Leq:
				return v < w
			case devices.Eq, devices.Neq:
				return math.Abs(v-r.Goal) < math.Abs(w-r.Goal)
			default:
				return v > w
			}
		}
		g.OK = !anyOf
		for i := from; i < to; i++ {
			v := tr.Properties[p].Values[i]
			if !g.Observed || better(v, g.Value) == anyOf {
				g.Value = v
			}
			g.Observed = true
			if holds(v) == anyOf {
				g.OK = anyOf
			}
		}
		if !g.Observed {
			g.OK = false
		}
		out = append(out, g)
	}
	return out
}

// Schedule returns what home h did as a schedule of the model
// (devices.HomeSchedule, levels left to the tightest): in every slot each
// device's action that ran longest, its idle action where none ran. It
// lets the planner's objective (devices.Neighbourhood.Evaluate) price the
// day as it happened, committed peak included, against a plan's. A
// storage device is read by the action it was commanded (its power a set
// point).
func (tr *Trace) Schedule(h *devices.Home) devices.HomeSchedule {
	hs := devices.HomeSchedule{Actions: make([][]int, len(h.Devices))}
	for d := range h.Devices {
		dev := &h.Devices[d]
		row := make([]int, len(tr.Slots))
		for t := range row {
			row[t] = IdleAction(dev)
			if d >= len(tr.Slots[t].Devices) {
				continue
			}
			best := 0.0
			for name, sec := range tr.Slots[t].Devices[d].RunS {
				a := actIndex(dev, name)
				if a >= 0 && (sec > best || sec == best && a < row[t]) {
					row[t], best = a, sec
				}
			}
		}
		hs.Actions[d] = row
	}
	return hs
}

// PlanSchedule returns a home plan's actions (report.HomePlan) as a
// schedule of home h, for the same comparison as Trace.Schedule; an
// action the home does not have is read as its first.
func PlanSchedule(h *devices.Home, p report.HomePlan) devices.HomeSchedule {
	hs := devices.HomeSchedule{Actions: make([][]int, len(h.Devices))}
	for d := range h.Devices {
		dev := &h.Devices[d]
		for _, dp := range p.Devices {
			if dp.Device != dev.Name {
				continue
			}
			for _, name := range dp.Actions {
				hs.Actions[d] = append(hs.Actions[d], max(actIndex(dev, name), 0))
			}
		}
	}
	return hs
}

// actIndex is the schedule index (devices.Device.Act) of d's action
// name: one of its Actions, or past them one of its Exact actions (a
// wallbox's current on automatic levels, which a refined plan commands
// and the simulator records by name); -1 for none.
func actIndex(d *devices.Device, name string) int {
	if a := actionIndex(d, name); a >= 0 {
		return a
	}
	for e := range d.Exact {
		if d.Exact[e].Name == name {
			return len(d.Actions) + e
		}
	}
	return -1
}
