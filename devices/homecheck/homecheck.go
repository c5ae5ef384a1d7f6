// Package homecheck is an independent check of a neighbourhood's plans:
// the homes of package devices (TOML homes and SHDS imports), planned
// through devices/compile. It replays each home's per-slot device actions
// through the device physics slot by slot — every property's trajectory
// from its initial value, its drift and the actions' effects, in whole
// steps of its resolution — and checks every physical range, every rule
// (a hard one must hold; a soft one is measured: which goals are missed
// and by how much), each device's power against its actions and its
// limits, the draw per slot, the committed levels and the feeder limit,
// a device away from home (an EV outside its plugged-in window) idle,
// and a home's meter (its own tariff, its curtailed PV, its import and
// export limits, its storage's grid permissions); it recomputes each
// home's bill from the import and export prices and its demand charge,
// the value of what it stores at the end, and the street's load and
// peak, and compares everything with what the plan claims.
//
// It shares no code with the compiler nor with the model's own evaluator
// (devices.Neighbourhood.Evaluate): rule windows, trajectories,
// shortfalls and the meter are written here again from their definitions
// (the devices package documentation and docs/toml.md), so that a bug in
// either cannot hide behind its own arithmetic. From package devices it
// takes only the description types and the definition of the levels a
// home may commit to (LevelCaps, LevelLabels).
//
// hearth passes every plan through Check (hearth sim, hearth solve) or
// CheckHome (hearth run, which publishes one home's plan) before printing
// or publishing it, and refuses a plan with a violation.
package homecheck

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hearth-dcop/hearth/devices"
)

// Plan is what a result claims about one home, in natural units (kW,
// kWh, the currency).
type Plan struct {
	Home string
	// Actions maps every device to its action's name in every slot.
	Actions map[string][]string
	// KW, when not nil, maps every device to the power it is said to
	// draw in every slot (negative: feeding the home).
	KW     map[string][]float64
	LoadKW []float64
	// EnergyKWh and Cost are the horizon's energy and bill; PeakKW the
	// greatest draw.
	EnergyKWh, Cost, PeakKW float64
	// Levels are the committed levels' labels, one per coordination
	// window; nil for a home planned alone (no levels claimed).
	Levels []string
	// Rules are the claims about the home's rules, in the home's order.
	Rules []Claim
	// CurtailKW is the PV power the plan leaves unused per slot; nil
	// claims none.
	CurtailKW []float64
	// OverKWh is the energy the plan says it draws or feeds beyond the
	// home's soft import and export limits, over the horizon.
	OverKWh float64
	// StoredValue is what the plan says the energy left in storage at
	// the horizon's end is worth (currency).
	StoredValue float64
}

// Claim is what a plan says about one rule.
type Claim struct {
	Rule string
	OK   bool
	Hard bool
	// Missed is by how much a soft rule is missed, in its unit.
	Missed float64
}

// Street is a whole result: every home's plan and the street's figures.
type Street struct {
	Plans []Plan
	// LoadKW is the street's draw per slot; PeakKW its greatest;
	// EnergyCost the sum of the homes' bills.
	LoadKW     []float64
	EnergyCost float64
	PeakKW     float64
	// GoalsMissed is how many soft goals the result says it misses.
	GoalsMissed int
	// FeederExcessKW is, per window, how far the result says the
	// committed caps exceed a soft feeder limit (nil: nowhere).
	FeederExcessKW []float64
}

// Miss is a soft goal a plan misses.
type Miss struct {
	Home, Rule string
	// By is the shortfall in Unit: at the deadline for a before/after
	// goal, the worst over the window for the others.
	By   float64
	Unit string
}

// Report is what the checker found.
type Report struct {
	// Violations are faults that make a plan unusable: physics broken,
	// a hard rule or limit broken, a figure that does not add up, a claim
	// that is false. A plan with any is refused.
	Violations []string
	// Misses are the soft goals missed, as the checker measured them.
	Misses []Miss
	// EnergyCost is the street's bill and PeakKW its peak, recomputed.
	EnergyCost, PeakKW float64
	// Over are the slots where a home draws or feeds beyond a soft
	// limit, as the checker measured them.
	Over []Over
	// CommittedKW is the homes' committed caps per coordination window,
	// as the checker read them from the levels (kW): what a street's
	// energy homes add theirs to (plancheck.CheckFeeder).
	CommittedKW []float64
}

// Over is a slot where a home's meter exceeds a soft limit.
type Over struct {
	Home string
	Slot int
	// What is "import" or "export"; KW how far beyond the limit.
	What string
	KW   float64
}

// ErrRejected is wrapped by Report.Err.
var ErrRejected = errors.New("plan rejected by the independent checker")

// OK reports whether the plan has no violation.
func (r *Report) OK() bool { return len(r.Violations) == 0 }

// maxListed bounds the violations Err lists.
const maxListed = 10

// Err returns nil for an accepted plan, else an error wrapping
// ErrRejected that lists the first violations.
func (r *Report) Err() error {
	if r.OK() {
		return nil
	}
	v := r.Violations
	more := ""
	if len(v) > maxListed {
		more = fmt.Sprintf("; and %d more", len(v)-maxListed)
		v = v[:maxListed]
	}
	return fmt.Errorf("%w: %s%s", ErrRejected, strings.Join(v, "; "), more)
}

func (r *Report) violate(format string, args ...any) {
	r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
}

// near reports whether two figures agree to within a millionth (they
// are sums of a few hundred float64 terms).
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-6*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// checker holds the unit conversions of one neighbourhood.
type checker struct {
	n   *devices.Neighbourhood
	r   *Report
	dt  float64 // slot length in hours (the first slot's where they differ)
	kw  float64 // kW per model power unit (loads, peaks, caps)
	kwh float64 // natural energy per model power unit·hour
	cur float64 // currency per model price unit
}

func newChecker(n *devices.Neighbourhood) *checker {
	c := &checker{n: n, r: &Report{}, dt: float64(n.Horizon.SlotMinutes) / 60, kw: 1, kwh: 1, cur: 1}
	if s := n.Units.PowerScale; s != 0 {
		c.kw, c.kwh = s, s
	}
	if s := n.Units.PriceScale; s != 0 {
		c.cur = s
	}
	if n.Units.Power == "kWh" {
		// SHDS counts energy per slot: a value is that much per slot.
		c.kw /= c.dt
	}
	return c
}

// Check replays every home's plan and the street's figures.
func Check(n *devices.Neighbourhood, s Street) *Report {
	c := newChecker(n)
	if err := shape(n); err != nil {
		c.r.violate("%v", err)
		return c.r
	}
	if len(s.Plans) != len(n.Homes) {
		c.r.violate("the result plans %d homes, the neighbourhood has %d", len(s.Plans), len(n.Homes))
		return c.r
	}
	H := n.Horizon.Slots
	street := make([]float64, H)
	caps := make([]float64, len(n.Windows))
	replayed := true
	for hi := range n.Homes {
		res, ok := c.home(hi, &s.Plans[hi], true)
		if !ok {
			replayed = false
			continue
		}
		for t, v := range res.load {
			street[t] += v
		}
		for w, cp := range res.caps {
			caps[w] += cp
		}
		c.r.EnergyCost += res.cost
	}
	if !replayed {
		return c.r
	}
	if len(s.LoadKW) != H {
		c.r.violate("the street's load has %d values for %d slots", len(s.LoadKW), H)
	} else {
		for t, v := range street {
			if !near(v*c.kw, s.LoadKW[t]) {
				c.r.violate("the street draws %g kW in slot %d, the result says %g kW", v*c.kw, t, s.LoadKW[t])
			}
		}
	}
	c.r.PeakKW = math.Inf(-1)
	for _, v := range street {
		c.r.PeakKW = math.Max(c.r.PeakKW, v*c.kw)
	}
	if !near(c.r.PeakKW, s.PeakKW) {
		c.r.violate("the street's peak is %g kW, the result says %g kW", c.r.PeakKW, s.PeakKW)
	}
	if !near(c.r.EnergyCost, s.EnergyCost) {
		c.r.violate("the street's bill is %g, the result says %g", c.r.EnergyCost, s.EnergyCost)
	}
	c.feeder(caps, s.FeederExcessKW)
	c.r.CommittedKW = make([]float64, len(caps))
	for w, v := range caps {
		c.r.CommittedKW[w] = v * c.kw
	}
	if len(c.r.Misses) != s.GoalsMissed {
		c.r.violate("the plans miss %d soft goals, the result lists %d", len(c.r.Misses), s.GoalsMissed)
	}
	return c.r
}

// CheckHome replays one home's plan alone (no levels, no street): what
// `hearth run` publishes for its own home.
func CheckHome(n *devices.Neighbourhood, home int, p Plan) *Report {
	c := newChecker(n)
	if err := shape(n); err != nil {
		c.r.violate("%v", err)
		return c.r
	}
	if home < 0 || home >= len(n.Homes) {
		c.r.violate("home %d of %d", home, len(n.Homes))
		return c.r
	}
	if p.Levels != nil {
		c.r.violate("home %s: a plan checked alone claims levels", p.Home)
	}
	if res, ok := c.home(home, &p, false); ok {
		c.r.EnergyCost = res.cost
		c.r.PeakKW = res.peak * c.kw
	}
	return c.r
}

// shape checks the sizes the replay indexes by, so that a malformed model
// gives a violation rather than a panic.
func shape(n *devices.Neighbourhood) error {
	H := n.Horizon.Slots
	if H < 1 || n.Horizon.SlotMinutes < 1 || len(n.Prices) != H || n.ExportPrices != nil && len(n.ExportPrices) != H {
		return fmt.Errorf("the neighbourhood's horizon and prices do not match (%d slots, %d prices)", H, len(n.Prices))
	}
	if n.Horizon.Lengths != nil {
		if len(n.Horizon.Lengths) != H {
			return fmt.Errorf("the horizon has %d slot lengths for %d slots", len(n.Horizon.Lengths), H)
		}
		for t, m := range n.Horizon.Lengths {
			if m < 1 {
				return fmt.Errorf("slot %d lasts %d minutes", t, m)
			}
		}
	}
	for hi := range n.Homes {
		h := &n.Homes[hi]
		if len(h.Background) != H {
			return fmt.Errorf("home %s: %d background values for %d slots", h.Name, len(h.Background), H)
		}
		for _, p := range h.Properties {
			if !(p.Scale > 0) {
				return fmt.Errorf("home %s: property %s %s has resolution %v", h.Name, p.Location, p.Name, p.Scale)
			}
		}
	}
	for _, w := range n.Windows {
		if w.From < 0 || w.To > H || w.From >= w.To {
			return fmt.Errorf("window [%d, %d) is not inside the horizon", w.From, w.To)
		}
	}
	return nil
}

// replay is one home's recomputed figures in model units.
type replay struct {
	load []float64
	caps []float64 // per window, the committed cap (model units)
	cost float64   // natural currency
	peak float64   // the greatest draw (model units)
}

// home replays home hi's plan p; ok is false when the plan cannot be
// replayed at all (unknown devices or actions, wrong lengths).
func (c *checker) home(hi int, p *Plan, levels bool) (replay, bool) {
	n, h, r := c.n, &c.n.Homes[hi], c.r
	H := n.Horizon.Slots
	if p.Home != h.Name {
		r.violate("plan %d is for home %q, the neighbourhood's home %d is %q", hi, p.Home, hi, h.Name)
		return replay{}, false
	}
	acts := make([][]int, len(h.Devices))
	good := true
	for d := range h.Devices {
		dev := &h.Devices[d]
		names, ok := p.Actions[dev.Name]
		if !ok || len(names) != H {
			r.violate("home %s: device %s has %d actions planned for %d slots", h.Name, dev.Name, len(names), H)
			good = false
			continue
		}
		acts[d] = make([]int, H)
		all := actions(dev)
		for t, name := range names {
			k := -1
			for a := range all {
				if all[a].Name == name {
					k = a
				}
			}
			if k < 0 {
				r.violate("home %s: device %s slot %d: %q is not one of its actions", h.Name, dev.Name, t, name)
				good = false
			}
			acts[d][t] = k
		}
	}
	if len(p.Actions) != len(h.Devices) {
		r.violate("home %s: the plan names %d devices, the home has %d", h.Name, len(p.Actions), len(h.Devices))
		good = false
	}
	if !good {
		return replay{}, false
	}
	if p.KW != nil {
		c.power(h, acts, p.KW)
	}
	c.away(h, acts)
	c.exact(h, acts)
	res := replay{load: make([]float64, H)}
	energy, peak := 0.0, math.Inf(-1)
	imp, exp := n.Prices, n.ExportPrices
	m := h.Meter
	if m != nil && m.Prices != nil {
		imp, exp = m.Prices, m.ExportPrices // the home's own tariff
	}
	if len(imp) != H || exp != nil && len(exp) != H || m != nil && m.Curtail != nil && len(m.Curtail) != H {
		r.violate("home %s: its tariff or curtailable PV does not have %d slots", h.Name, H)
		return replay{}, false
	}
	if p.CurtailKW != nil && len(p.CurtailKW) != H {
		r.violate("home %s: %d curtailment values for %d slots", h.Name, len(p.CurtailKW), H)
		return replay{}, false
	}
	over := 0.0
	for t := range H {
		v := h.Background[t]
		charging, discharging := false, false
		for d := range h.Devices {
			dev := &h.Devices[d]
			pw := actions(dev)[acts[d][t]].Power
			v += pw
			charging = charging || dev.NoGridCharge && pw > 0
			discharging = discharging || dev.NoGridDischarge && pw < 0
		}
		// Curtailment only lowers feed-in: 0 ≤ c ≤ min(curtailable PV,
		// the feed-in before it).
		if p.CurtailKW != nil && p.CurtailKW[t] != 0 {
			cut := p.CurtailKW[t] / c.kw
			most := 0.0
			if m != nil && m.Curtail != nil {
				most = math.Max(0, math.Min(m.Curtail[t], -v))
			}
			if cut < 0 && !near(cut, 0) || cut > most && !near(cut, most) {
				r.violate("home %s: slot %d curtails %g kW of PV, outside [0, %g] kW", h.Name, t, cut*c.kw, most*c.kw)
			}
			v += cut
		}
		res.load[t] = v
		dt := slotHours(n.Horizon, t)
		energy += v * dt
		price := imp[t]
		if v < 0 && exp != nil {
			price = exp[t] // what a unit fed back earns
		}
		res.cost += price * v * dt * c.kwh * c.cur
		peak = math.Max(peak, v)
		if charging && v > 0 && !near(v, 0) {
			r.violate("home %s: slot %d charges a storage that may not charge from the grid while importing %g kW", h.Name, t, v*c.kw)
		}
		if discharging && v < 0 && !near(v, 0) {
			r.violate("home %s: slot %d discharges a storage that may not discharge to the grid while exporting %g kW", h.Name, t, -v*c.kw)
		}
		if m == nil {
			continue
		}
		for _, lim := range []struct {
			what      string
			limit, at float64
		}{{"import", m.ImportLimit, v}, {"export", m.ExportLimit, -v}} {
			if lim.limit <= 0 || lim.at <= lim.limit || near(lim.at, lim.limit) {
				continue
			}
			if m.HardLimits {
				r.violate("home %s: slot %d: its %s of %g kW is above its hard limit %g kW", h.Name, t, lim.what, lim.at*c.kw, lim.limit*c.kw)
				continue
			}
			r.Over = append(r.Over, Over{Home: h.Name, Slot: t, What: lim.what, KW: (lim.at - lim.limit) * c.kw})
			over += (lim.at - lim.limit) * dt * c.kwh
		}
	}
	if m != nil && m.DemandCharge > 0 {
		// The demand charge: per kW of the horizon's highest import
		// above the threshold.
		top := 0.0
		for _, v := range res.load {
			top = math.Max(top, v)
		}
		if top > m.DemandThreshold && !near(top, m.DemandThreshold) {
			res.cost += m.DemandCharge * (top - m.DemandThreshold) * c.kwh * c.cur
		}
	}
	if !near(over, p.OverKWh) {
		r.violate("home %s: it is %g kWh beyond its soft limits, the plan says %g kWh", h.Name, over, p.OverKWh)
	}
	if len(p.LoadKW) != H {
		r.violate("home %s: %d load values for %d slots", h.Name, len(p.LoadKW), H)
	} else {
		for t, v := range res.load {
			if !near(v*c.kw, p.LoadKW[t]) {
				r.violate("home %s draws %g kW in slot %d, the plan says %g kW", h.Name, v*c.kw, t, p.LoadKW[t])
			}
		}
	}
	res.peak = peak
	if !near(peak*c.kw, p.PeakKW) {
		r.violate("home %s: its peak is %g kW, the plan says %g kW", h.Name, peak*c.kw, p.PeakKW)
	}
	if !near(energy*c.kwh, p.EnergyKWh) {
		r.violate("home %s: it draws %g kWh, the plan says %g kWh", h.Name, energy*c.kwh, p.EnergyKWh)
	}
	if !near(res.cost, p.Cost) {
		r.violate("home %s: its bill is %g, the plan says %g", h.Name, res.cost, p.Cost)
	}
	stored := c.physics(h, acts, p.Rules)
	if !near(stored, p.StoredValue) {
		r.violate("home %s: the energy it stores at the end is worth %g, the plan says %g", h.Name, stored, p.StoredValue)
	}
	if levels {
		res.caps = c.levels(hi, res.load, p.Levels)
	}
	return res, true
}

// indices returns the length of a property's trajectory and the slot
// whose actions move it from index i−1 to i: under full dynamics the
// slot boundaries 0..Slots, slot i−1 moving boundary i−1 to i; under the
// SHDS simulator's indices 0..Slots−1, slot i moving index i−1 to i (slot
// 0's actions have no effect).
func indices(hz devices.Horizon) (n int, mover func(i int) int) {
	if hz.Dynamics == devices.SHDS {
		return hz.Slots, func(i int) int { return i }
	}
	return hz.Slots + 1, func(i int) int { return i - 1 }
}

// window returns the trajectory indices [from, to) rule r checks and
// whether it must hold at some index (before, after) or at every one:
// under full dynamics a rule without a time covers every boundary,
// before T the boundaries up to T, after T those from T, at T boundary T,
// within T1 T2 the boundaries T1..T2; under SHDS dynamics the simulator's
// half-open windows over indices 0..Slots−2 (docs in package devices).
func window(hz devices.Horizon, r *devices.Rule) (from, to int, anyOf bool) {
	n, _ := indices(hz)
	if hz.Dynamics == devices.SHDS {
		last := hz.Slots - 1
		switch r.Prefix {
		case devices.Passive:
			from, to = 0, last
		case devices.Before:
			from, to, anyOf = 0, r.T1, true
		case devices.After:
			from, to, anyOf = r.T1, last, true
		case devices.At:
			from, to = r.T1, r.T1+1
			if hz.AtVacuous {
				to = from
			}
		case devices.Within:
			from, to = r.T1, r.T2
		}
	} else {
		switch r.Prefix {
		case devices.Passive:
			from, to = 0, n
		case devices.Before:
			from, to, anyOf = 0, r.T1+1, true
		case devices.After:
			from, to, anyOf = r.T1, n, true
		case devices.At:
			from, to = r.T1, r.T1+1
		case devices.Within:
			from, to = r.T1, r.T2+1
		}
	}
	from = min(max(from, 0), n)
	to = min(max(to, from), n)
	return from, to, anyOf
}

// steps rounds a value to whole steps of a resolution.
func steps(v, scale float64) int64 { return int64(math.Round(v / scale)) }

// short returns by how many steps v misses "v rel goal" (0 when it
// holds): the distance to the nearest value that meets it.
func short(rel devices.Relation, v, goal int64) int64 {
	switch rel {
	case devices.Eq:
		return max(v-goal, goal-v)
	case devices.Neq:
		if v == goal {
			return 1
		}
	case devices.Lt:
		return max(0, v-goal+1)
	case devices.Leq:
		return max(0, v-goal)
	case devices.Gt:
		return max(0, goal-v+1)
	case devices.Geq:
		return max(0, goal-v)
	}
	return 0
}

// trajectory replays property p of h in steps over every index.
func trajectory(hz devices.Horizon, h *devices.Home, p *devices.Property, acts [][]int) []int64 {
	n, mover := indices(hz)
	out := make([]int64, n)
	out[0] = steps(p.Initial, p.Scale)
	for i := 1; i < n; i++ {
		t := mover(i)
		// A slot of another length than the first scales the per-slot
		// drift and effects by its length, unless an action gives its
		// own effects for that length.
		f, own := 1.0, false
		var m int
		if hz.Lengths != nil {
			m = hz.Lengths[t]
			f = float64(m) / float64(hz.SlotMinutes)
		}
		v := out[i-1] + steps(p.Drift*f, p.Scale)
		for d := range h.Devices {
			dev := &h.Devices[d]
			if dev.Location != p.Location && dev.Name != p.Location {
				continue // the device acts elsewhere
			}
			a := &actions(dev)[acts[d][t]]
			effs, scale := a.Effects, f
			if hz.Lengths != nil {
				if effs, own = a.ByLength[m]; own {
					scale = 1
				} else {
					effs = a.Effects
				}
			}
			for _, e := range effs {
				if e.Property == p.Name {
					v += steps(e.Delta*scale, p.Scale)
				}
			}
		}
		if r, ok := p.Reset[i]; ok {
			// The car is back with the charge it arrives with.
			v = steps(r, p.Scale)
		}
		out[i] = v
	}
	return out
}

// actions returns the actions a plan may name for dev: its compiled
// ones and, for a device with exact actions (a wallbox's whole currents
// or a battery's finer powers beside its quantised levels), those, which
// a refined plan names.
func actions(dev *devices.Device) []devices.Action {
	if dev.Exact == nil {
		return dev.Actions
	}
	return append(append([]devices.Action(nil), dev.Actions...), dev.Exact...)
}

// exact checks what the exact actions of a plan store against their
// power: in slot t an action that draws p kW for Δ hours stores at most
// p·Δ kWh (no efficiency above 1) and takes nothing while charging; one
// that delivers p kW (a battery discharging) takes at least p·Δ kWh and
// stores nothing. The
// compiled levels are checked against their rounding by the replay
// alone; an exact action's energy is the device's physics itself, so it
// is held to it.
func (c *checker) exact(h *devices.Home, acts [][]int) {
	hz := c.n.Horizon
	for d := range h.Devices {
		dev := &h.Devices[d]
		if dev.Exact == nil {
			continue
		}
		for t, k := range acts[d] {
			if k < len(dev.Actions) {
				continue
			}
			a := &dev.Exact[k-len(dev.Actions)]
			effs, f := a.Effects, 1.0
			if hz.Lengths != nil {
				if own, ok := a.ByLength[hz.Lengths[t]]; ok {
					effs = own
				} else {
					f = float64(hz.Lengths[t]) / float64(hz.SlotMinutes)
				}
			}
			for _, e := range effs {
				pi := h.Property(dev.Name, e.Property)
				if pi < 0 || h.Properties[pi].Unit != "kWh" {
					continue
				}
				stored, most := e.Delta*f, a.Power*c.kw*slotHours(hz, t)
				if a.Power >= 0 && (stored < 0 || stored > most+1e-9) {
					c.r.violate("home %s: device %s slot %d: %s stores %g kWh drawing %g kW for %g h", h.Name, dev.Name, t, a.Name, stored, a.Power*c.kw, slotHours(hz, t))
				}
				if a.Power < 0 && (stored > 0 || -stored < -most-1e-9) {
					c.r.violate("home %s: device %s slot %d: %s takes %g kWh delivering %g kW for %g h", h.Name, dev.Name, t, a.Name, -stored, -a.Power*c.kw, slotHours(hz, t))
				}
			}
		}
	}
}

// slotHours returns slot t's length in hours.
func slotHours(hz devices.Horizon, t int) float64 {
	if hz.Lengths != nil {
		return float64(hz.Lengths[t]) / 60
	}
	return float64(hz.SlotMinutes) / 60
}

// value writes a value in steps in natural units.
func value(v int64, p *devices.Property) string {
	s := strconv.FormatFloat(float64(v)*p.Scale, 'f', -1, 64)
	if p.Unit != "" {
		s += " " + p.Unit
	}
	return s
}

// away checks that a device that is not plugged in (devices.Device.Away:
// an EV outside its plugged-in window) neither draws nor moves anything
// in those slots: its action there must have no power and no effect, in
// any slot length.
func (c *checker) away(h *devices.Home, acts [][]int) {
	for d := range h.Devices {
		dev := &h.Devices[d]
		if dev.Away != nil && len(dev.Away) != len(acts[d]) {
			c.r.violate("home %s: device %s is away in %d slots of %d", h.Name, dev.Name, len(dev.Away), len(acts[d]))
			continue
		}
		for t, gone := range dev.Away {
			if !gone {
				continue
			}
			a := &actions(dev)[acts[d][t]]
			moves := a.Power != 0
			for _, e := range a.Effects {
				moves = moves || e.Delta != 0
			}
			for _, effs := range a.ByLength {
				for _, e := range effs {
					moves = moves || e.Delta != 0
				}
			}
			if moves {
				c.r.violate("home %s: device %s slot %d: runs %s (%g kW) while away (not plugged in)", h.Name, dev.Name, t, a.Name, a.Power*c.kw)
			}
		}
	}
}

// power checks what each device is said to draw against its actions'
// powers and its power limits (the most it draws and feeds).
func (c *checker) power(h *devices.Home, acts [][]int, kw map[string][]float64) {
	for d := range h.Devices {
		dev := &h.Devices[d]
		all := actions(dev)
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, a := range all {
			lo, hi = math.Min(lo, a.Power), math.Max(hi, a.Power)
		}
		got := kw[dev.Name]
		if len(got) != len(acts[d]) {
			c.r.violate("home %s: device %s has %d powers for %d slots", h.Name, dev.Name, len(got), len(acts[d]))
			continue
		}
		for t, v := range got {
			want := all[acts[d][t]].Power * c.kw
			switch {
			case v > hi*c.kw && !near(v, hi*c.kw) || v < lo*c.kw && !near(v, lo*c.kw):
				c.r.violate("home %s: device %s draws %g kW in slot %d, outside its limits [%g, %g] kW", h.Name, dev.Name, v, t, lo*c.kw, hi*c.kw)
			case !near(v, want):
				c.r.violate("home %s: device %s runs %s in slot %d (%g kW), the plan says %g kW", h.Name, dev.Name, all[acts[d][t]].Name, t, want, v)
			}
		}
	}
}

// physics replays every property of h, checks its range and every rule,
// compares the rules with the plan's claims, and returns what the values
// left at the last index are worth (EndValue, in the currency).
func (c *checker) physics(h *devices.Home, acts [][]int, claims []Claim) (stored float64) {
	hz, r := c.n.Horizon, c.r
	traj := make([][]int64, len(h.Properties))
	for pi := range h.Properties {
		p := &h.Properties[pi]
		traj[pi] = trajectory(hz, h, p, acts)
		stored += p.EndValue * float64(traj[pi][len(traj[pi])-1]) * p.Scale * c.cur
		if p.Min == nil && p.Max == nil {
			continue
		}
		// A range holds where a rule without a time would.
		from, to, _ := window(hz, &devices.Rule{Prefix: devices.Passive})
		for i := from; i < to; i++ {
			v := traj[pi][i]
			if p.Min != nil && v < steps(*p.Min, p.Scale) || p.Max != nil && v > steps(*p.Max, p.Scale) {
				lo, hi := "−∞", "∞"
				if p.Min != nil {
					lo = strconv.FormatFloat(*p.Min, 'f', -1, 64)
				}
				if p.Max != nil {
					hi = strconv.FormatFloat(*p.Max, 'f', -1, 64)
				}
				r.violate("home %s: %s %s is %s at index %d, outside its physical range [%s, %s]", h.Name, p.Location, p.Name, value(v, p), i, lo, hi)
				break
			}
		}
	}
	if len(claims) != len(h.Rules) {
		r.violate("home %s: the plan reports %d rules, the home has %d", h.Name, len(claims), len(h.Rules))
		claims = nil
	}
	for ri := range h.Rules {
		rule := &h.Rules[ri]
		pi := -1
		for i := range h.Properties {
			if h.Properties[i].Location == rule.Location && h.Properties[i].Name == rule.Property {
				pi = i
			}
		}
		if pi < 0 {
			r.violate("home %s: rule %q names no property of the home", h.Name, rule.Text)
			continue
		}
		p, tr := &h.Properties[pi], traj[pi]
		goal := steps(rule.Goal, p.Scale)
		from, to, anyOf := window(hz, rule)
		holds := !anyOf
		var worst int64
		for i := from; i < to; i++ {
			m := short(rule.Rel, tr[i], goal)
			if anyOf && m == 0 {
				holds = true
			}
			if !anyOf && m > 0 {
				holds = false
			}
			worst = max(worst, m)
		}
		if anyOf && to > from {
			worst = short(rule.Rel, tr[to-1], goal)
		}
		if holds {
			worst = 0
		}
		switch {
		case holds:
		case !rule.Soft:
			r.violate("home %s: hard rule %q is broken", h.Name, rule.Text)
		default:
			r.Misses = append(r.Misses, Miss{Home: h.Name, Rule: rule.Text, By: float64(worst) * p.Scale, Unit: p.Unit})
		}
		if claims == nil {
			continue
		}
		cl := &claims[ri]
		switch {
		case cl.Rule != rule.Text:
			r.violate("home %s: rule %d is %q, the plan reports %q", h.Name, ri, rule.Text, cl.Rule)
		case cl.OK != holds:
			r.violate("home %s: the plan says rule %q holds: %v; replayed: %v", h.Name, rule.Text, cl.OK, holds)
		case cl.Hard != !rule.Soft:
			r.violate("home %s: the plan says rule %q is hard: %v", h.Name, rule.Text, cl.Hard)
		case !holds && math.Abs(cl.Missed-float64(worst)*p.Scale) > p.Scale/2:
			r.violate("home %s: rule %q is missed by %s, the plan says by %g", h.Name, rule.Text, value(worst, p), cl.Missed)
		}
	}
	return stored
}

// levels checks the committed levels of home hi against its draw and
// returns their caps.
func (c *checker) levels(hi int, load []float64, labels []string) []float64 {
	n, h, r := c.n, &c.n.Homes[hi], c.r
	caps := make([]float64, len(n.Windows))
	if len(labels) != len(n.Windows) {
		r.violate("home %s: %d levels for %d coordination windows", h.Name, len(labels), len(n.Windows))
		return caps
	}
	for w, win := range n.Windows {
		all := n.LevelCaps(hi, w)
		names := devices.LevelLabels(all, n.Units)
		k := -1
		for i, l := range names {
			if l == labels[w] {
				k = i
			}
		}
		if k < 0 {
			r.violate("home %s: window %d: level %q is not one of %s", h.Name, w, labels[w], strings.Join(names, ", "))
			continue
		}
		caps[w] = all[k]
		for t := win.From; t < win.To; t++ {
			if load[t] > all[k] && !near(load[t], all[k]) {
				r.violate("home %s draws %g kW in slot %d, above its committed level %s", h.Name, load[t]*c.kw, t, labels[w])
			}
		}
	}
	return caps
}

// feeder checks the street's committed caps against the feeder limit:
// a hard limit must hold, a soft one's excess must be the one claimed.
func (c *checker) feeder(caps, claimed []float64) {
	n, r := c.n, c.r
	for w := range n.Windows {
		excess := 0.0
		if n.FeederLimit > 0 && caps[w] > n.FeederLimit && !near(caps[w], n.FeederLimit) {
			excess = caps[w] - n.FeederLimit
		}
		if excess > 0 && !n.FeederSoft {
			r.violate("window %d: the committed caps add up to %g kW, above the feeder limit %g kW", w, caps[w]*c.kw, n.FeederLimit*c.kw)
			continue
		}
		got := 0.0
		if w < len(claimed) {
			got = claimed[w]
		}
		if !near(excess*c.kw, got) {
			r.violate("window %d: the committed caps exceed the feeder limit by %g kW, the result says %g kW", w, excess*c.kw, got)
		}
	}
}
