package report

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/baseline"
	"github.com/hearth-dcop/hearth/mva"
)

// Homes is the result of a homes run, the JSON object `hearth sim --json`
// prints for a neighbourhood. See the package documentation for the
// fields.
type Homes struct {
	mva.Result
	Neighbourhood string `json:"neighbourhood"`
	HomeCount     int    `json:"homes"`
	SlotMinutes   int    `json:"slot_minutes"`
	// SlotLengths, where the slots differ in length ([horizon]
	// segments), is each slot's minutes; SlotMinutes is then the first's.
	SlotLengths []int    `json:"slot_lengths,omitempty"`
	Slots       []string `json:"slots"`
	Currency    string   `json:"currency"`

	EnergyCost     float64   `json:"energy_cost"`
	EnergyKWh      float64   `json:"energy_kwh"`
	PeakKW         float64   `json:"peak_kw"`
	LoadKW         []float64 `json:"load_kw"`
	RulesSatisfied int       `json:"rules_satisfied"`
	// RulesTotal counts every rule of the file, those dropped included:
	// RulesDropped of them, of the homes in Dropped, which no schedule
	// can keep (they are not in the model, so never kept).
	RulesTotal   int           `json:"rules_total"`
	RulesDropped int           `json:"rules_dropped"`
	Dropped      []DroppedHome `json:"dropped_homes"`
	// FlowObjective is the objective on the load that flows: the
	// weighted bill plus the peak weight times Σ_t of the squared load
	// of each coordinated slot (for linked homes only, as the peak term
	// couples them; on a complete graph the street's Σ_t L_t²), null
	// without a feasible schedule. Objective is the protocol's, on the
	// committed levels; CommittedSlackKW is the most the committed caps
	// exceed the load that flows in one slot (kW).
	FlowObjective    *float64 `json:"flow_objective"`
	CommittedSlackKW *float64 `json:"committed_slack_kw"`
	// FlowLowerBound is a number no plan's flow objective is below
	// (baseline.LowerBound), null where none is computed.
	FlowLowerBound *float64 `json:"flow_lower_bound"`
	// MQTT is the transport's counters of a run over MQTT (hearth sim),
	// null otherwise.
	MQTT *MQTT `json:"mqtt"`
	// ObjectiveUnit is the unit of the objectives where they have one
	// (SHDS: "0.01 kWh² + $0.001"), "" for weighted sums.
	ObjectiveUnit string `json:"objective_unit,omitempty"`

	BaselinePeakKW     *float64 `json:"baseline_peak_kw"`
	BaselineEnergyCost *float64 `json:"baseline_energy_cost"`
	SHMGMPeakKW        *float64 `json:"shmgm_peak_kw"`
	SHMGMEnergyCost    *float64 `json:"shmgm_energy_cost"`
	Baselines          struct {
		Uncoordinated *Baseline `json:"uncoordinated"`
		SHMGM         *Baseline `json:"shmgm"`
		// Missing names each baseline that is not above, and why.
		Missing []MissingBaseline `json:"missing,omitempty"`
	} `json:"baselines"`

	// GoalsMissed are the soft rules the plan misses, and by how much
	// (as the evcc optimizer's limit_violations); empty when every goal
	// holds. A missed goal is not a failure: the plan comes as close as
	// the devices allow (README.md, "Homes").
	GoalsMissed []GoalMissed `json:"goals_missed"`
	// FeederExcessKW is, per coordination window, by how many kW the
	// committed caps exceed a soft feeder limit; omitted when none does.
	FeederExcessKW []float64 `json:"feeder_excess_kw,omitempty"`

	Schedules []HomePlan `json:"schedules"`
	// EnergyHomes are the street's energy homes (planner = "energy"),
	// omitted where it has none.
	EnergyHomes *EnergyStreet `json:"energy_homes,omitempty"`
	Charts      []string      `json:"charts,omitempty"`
	Notes       []string      `json:"notes,omitempty"`
}

// DroppedHome is a home of the file some of whose rules no schedule
// keeps: they were left out of the model and count as not kept.
type DroppedHome struct {
	Home  string   `json:"home"`
	Rules []string `json:"rules"`
}

// MQTT sums the transport counters of a run's agents.
type MQTT struct {
	Broker        string           `json:"broker"`
	Transport     string           `json:"transport"`
	Run           string           `json:"run"`
	Envelopes     int64            `json:"envelopes"`
	EnvelopeBytes int64            `json:"envelope_bytes"`
	Retransmitted int64            `json:"retransmitted"`
	Connections   int64            `json:"connections"`
	Dropped       map[string]int64 `json:"dropped,omitempty"`
}

// HomePlan is one home's schedule in natural units.
type HomePlan struct {
	Home    string       `json:"home"`
	Devices []DevicePlan `json:"devices"`
	// LoadKW is the home's draw per slot, background included.
	LoadKW     []float64 `json:"load_kw"`
	EnergyKWh  float64   `json:"energy_kwh"`
	EnergyCost float64   `json:"energy_cost"`
	PeakKW     float64   `json:"peak_kw"`
	// Levels are the committed levels, one per coordination window.
	Levels []string `json:"levels,omitempty"`
	// CommittedKW are the caps of those levels (kW per window), set
	// where a compiled home publishes its plan (its load's
	// committed_kw), nil in a result.
	CommittedKW []float64 `json:"committed_kw,omitempty"`
	// AloneEnergyCost and AlonePeakKW are the home's bill and peak when
	// it plans alone (the uncoordinated baseline), nil without it:
	// EnergyCost − AloneEnergyCost is what coordination cost the home
	// (negative: saved).
	AloneEnergyCost *float64 `json:"alone_energy_cost,omitempty"`
	AlonePeakKW     *float64 `json:"alone_peak_kw,omitempty"`
	RulesSatisfied  int      `json:"rules_satisfied"`
	// RulesTotal includes RulesDropped, the rules no schedule keeps
	// (left out of the model; not in Rules).
	RulesTotal   int                  `json:"rules_total"`
	RulesDropped int                  `json:"rules_dropped,omitempty"`
	Rules        []devices.RuleResult `json:"rules"`
	// CurtailedKW is the PV power left unused per slot (curtailable
	// PV), OverLimitsKWh the energy beyond the home's soft import and
	// export limits, StoredValue what its storage holds at the end is
	// worth (its end_value); absent where zero (docs/toml.md, "A home's
	// meter").
	CurtailedKW   []float64 `json:"curtailed_kw,omitempty"`
	OverLimitsKWh float64   `json:"over_limits_kwh,omitempty"`
	// DemandCost is the demand charge, part of EnergyCost.
	DemandCost  float64 `json:"demand_cost,omitempty"`
	StoredValue float64 `json:"stored_value,omitempty"`
}

// GoalMissed is a soft rule a plan misses.
type GoalMissed struct {
	Home string `json:"home"`
	Rule string `json:"rule"`
	// Missed is by how much, in Unit: for a before/after goal the
	// shortfall at its deadline, for the others the worst over their
	// window.
	Missed float64 `json:"missed"`
	Unit   string  `json:"unit,omitempty"`
}

// DevicePlan is what one device does in every slot.
type DevicePlan struct {
	Device  string    `json:"device"`
	Kind    string    `json:"kind,omitempty"`
	Actions []string  `json:"actions"`
	KW      []float64 `json:"kw"`
	// idle is the device's lowest-power action, drawn '·' in the
	// summary; all are its actions in the model's order, which fixes
	// each action's letter whatever the plan.
	idle string
	all  []string
}

// Baseline summarises a baseline schedule.
type Baseline struct {
	// Objective is the coordinated objective of the baseline's schedule
	// (tightest levels), null when it breaks a hard constraint of the
	// coordinated model — the feeder limit, which no baseline sees.
	Objective *float64 `json:"objective"`
	// FlowObjective is the objective on the load that flows (Homes).
	FlowObjective  *float64  `json:"flow_objective"`
	Feasible       bool      `json:"feasible"`
	Violations     []string  `json:"violations,omitempty"`
	EnergyCost     float64   `json:"energy_cost"`
	EnergyKWh      float64   `json:"energy_kwh"`
	PeakKW         float64   `json:"peak_kw"`
	LoadKW         []float64 `json:"load_kw"`
	RulesSatisfied int       `json:"rules_satisfied"`
	Rounds         int       `json:"rounds"`
	Moves          int       `json:"moves"`
	Converged      bool      `json:"converged"`
	Solves         int       `json:"solves"`
	// ApproximateHomes counts homes too wide for an exact best response
	// (block descent; see package baseline).
	ApproximateHomes int `json:"approximate_homes"`
	// CoarseHomes names the homes whose best responses had fewer levels
	// per slot than draws (a table limit; baseline.Outcome.Coarse).
	CoarseHomes []string `json:"coarse_homes,omitempty"`
	WallMs      float64  `json:"wall_ms"`
	// Homes are the baseline's figures home by home.
	Homes []HomeFigures `json:"homes"`
	// Schedules are the baseline's per-home plans, for checkers that
	// recompute its rules, load and objective from the instance.
	Schedules []HomePlan `json:"schedules,omitempty"`
}

// HomeFigures are one home's bill and peak under a baseline.
type HomeFigures struct {
	Home       string  `json:"home"`
	EnergyCost float64 `json:"energy_cost"`
	PeakKW     float64 `json:"peak_kw"`
}

// MissingBaseline is a baseline the result has no column for.
type MissingBaseline struct {
	// Name is "uncoordinated" or "shmgm" (baseline.Outcome.Name).
	Name string `json:"name"`
	// Reason says why: the error that stopped it, or what skipped it.
	Reason string `json:"reason"`
}

// Input is what Build reports on.
type Input struct {
	Model  *devices.Neighbourhood
	Result mva.Result
	// Schedule and Eval are the coordinated schedule and its evaluation,
	// both nil when no feasible schedule was found.
	Schedule *devices.Schedule
	Eval     *devices.Evaluation
	// The baselines; nil when not computed.
	Uncoordinated, SHMGM *baseline.Outcome
	// Missing are the baselines not computed, with why: a baseline left
	// out is always named, never dropped silently.
	Missing []MissingBaseline
	// Dropped are the rules of the file no schedule keeps, by home.
	Dropped []DroppedHome
	// LowerBound bounds every plan's flow objective, nil if unknown.
	LowerBound *float64
	Notes      []string
}

// Build assembles the result.
func Build(in Input) (*Homes, error) {
	n := in.Model
	if n == nil {
		return nil, fmt.Errorf("report: no neighbourhood")
	}
	if (in.Schedule == nil) != (in.Eval == nil) {
		return nil, fmt.Errorf("report: a schedule needs its evaluation")
	}
	h := &Homes{
		Result:         in.Result,
		Neighbourhood:  n.Name,
		SlotMinutes:    n.Horizon.SlotMinutes,
		SlotLengths:    n.Horizon.Lengths,
		Slots:          SlotTimes(n.Horizon),
		Currency:       n.Units.Currency,
		HomeCount:      len(n.Homes),
		ObjectiveUnit:  objectiveUnit(n),
		FlowLowerBound: in.LowerBound,
		Notes:          in.Notes,
		Schedules:      []HomePlan{},
		GoalsMissed:    []GoalMissed{},
	}
	dropped := map[string]int{}
	h.Dropped = []DroppedHome{}
	for _, d := range in.Dropped {
		h.Dropped = append(h.Dropped, d)
		h.RulesDropped += len(d.Rules)
		dropped[d.Home] += len(d.Rules)
	}
	for hi := range n.Homes {
		h.RulesTotal += len(n.Homes[hi].Rules)
	}
	h.RulesTotal += h.RulesDropped
	if in.Schedule != nil {
		plans, err := plansOf(n, in.Schedule, in.Eval)
		if err != nil {
			return nil, err
		}
		for i := range plans {
			plans[i].RulesDropped = dropped[plans[i].Home]
			plans[i].RulesTotal += plans[i].RulesDropped
		}
		h.Schedules = plans
		if in.Eval.Feasible {
			f := baseline.FlowObjective(n, in.Eval)
			h.FlowObjective = &f
		}
		sl := slack(n, in.Eval) * powerScale(n)
		h.CommittedSlackKW = &sl
		for _, p := range plans {
			h.EnergyCost += p.EnergyCost
			h.EnergyKWh += p.EnergyKWh
			h.RulesSatisfied += p.RulesSatisfied
			for _, r := range p.Rules {
				if !r.OK && !r.Hard {
					h.GoalsMissed = append(h.GoalsMissed, GoalMissed{Home: p.Home, Rule: r.Rule, Missed: r.Missed, Unit: r.Unit})
				}
			}
		}
		for _, x := range in.Eval.FeederExcess {
			if x > 0 {
				h.FeederExcessKW = scaled(in.Eval.FeederExcess, powerScale(n))
				break
			}
		}
		h.LoadKW = scaled(in.Eval.Load, powerScale(n))
		h.PeakKW = maxOf(h.LoadKW)
	}
	if in.Uncoordinated != nil {
		b, err := baselineOf(n, in.Uncoordinated)
		if err != nil {
			return nil, err
		}
		h.Baselines.Uncoordinated = b
		h.BaselinePeakKW, h.BaselineEnergyCost = &b.PeakKW, &b.EnergyCost
		for i := range h.Schedules {
			if i < len(b.Homes) && b.Homes[i].Home == h.Schedules[i].Home {
				c, pk := b.Homes[i].EnergyCost, b.Homes[i].PeakKW
				h.Schedules[i].AloneEnergyCost, h.Schedules[i].AlonePeakKW = &c, &pk
			}
		}
	}
	h.Baselines.Missing = in.Missing
	if in.SHMGM != nil {
		b, err := baselineOf(n, in.SHMGM)
		if err != nil {
			return nil, err
		}
		h.Baselines.SHMGM = b
		h.SHMGMPeakKW, h.SHMGMEnergyCost = &b.PeakKW, &b.EnergyCost
	}
	return h, nil
}

// JSON returns the result as indented JSON with a trailing newline.
func (h *Homes) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// plansOf describes every home of a schedule.
func plansOf(n *devices.Neighbourhood, s *devices.Schedule, ev *devices.Evaluation) ([]HomePlan, error) {
	if len(s.Homes) != len(n.Homes) || len(ev.Homes) != len(n.Homes) {
		return nil, fmt.Errorf("report: the schedule has %d homes, the neighbourhood %d", len(s.Homes), len(n.Homes))
	}
	ps := powerScale(n)
	base := n.Plans(s, ev)
	out := make([]HomePlan, len(n.Homes))
	for hi := range n.Homes {
		home := &n.Homes[hi]
		p := HomePlan{
			Home:       home.Name,
			LoadKW:     scaled(ev.Homes[hi].Load, ps),
			EnergyKWh:  base[hi].Energy,
			EnergyCost: base[hi].Cost,
			Levels:     base[hi].Levels,
			Rules:      base[hi].Rules,
			RulesTotal: len(home.Rules),

			CurtailedKW:   base[hi].Curtail,
			OverLimitsKWh: base[hi].Over,
			DemandCost:    base[hi].Demand,
			StoredValue:   base[hi].Stored,
		}
		if p.Rules == nil {
			p.Rules = []devices.RuleResult{}
		}
		p.PeakKW = maxOf(p.LoadKW)
		for _, r := range p.Rules {
			if r.OK {
				p.RulesSatisfied++
			}
		}
		for d := range home.Devices {
			dev := &home.Devices[d]
			dp := DevicePlan{Device: dev.Name, Kind: dev.Kind, idle: idleAction(dev)}
			// A refined plan's exact actions first: it shows them,
			// not the compiled levels, so they take the letters.
			acts := dev.Actions
			if slices.ContainsFunc(s.Homes[hi].Actions[d], func(a int) bool { return a >= len(dev.Actions) }) {
				acts = slices.Concat(dev.Exact, dev.Actions)
			}
			for _, a := range acts {
				dp.all = append(dp.all, a.Name)
			}
			for _, a := range s.Homes[hi].Actions[d] {
				dp.Actions = append(dp.Actions, dev.Act(a).Name)
				dp.KW = append(dp.KW, dev.Act(a).Power*ps)
			}
			p.Devices = append(p.Devices, dp)
		}
		out[hi] = p
	}
	return out, nil
}

// PlanOf describes one home's schedule on its own, for an agent that knows
// only its own part of the solution (`hearth run`): the home is evaluated
// alone, so its levels are left out.
func PlanOf(n *devices.Neighbourhood, home int, hs devices.HomeSchedule) (HomePlan, error) {
	if home < 0 || home >= len(n.Homes) {
		return HomePlan{}, fmt.Errorf("report: home %d of %d", home, len(n.Homes))
	}
	one := *n
	one.Homes = n.Homes[home : home+1]
	one.Windows, one.Links, one.FeederLimit = nil, nil, 0
	hs.Levels = nil
	s := &devices.Schedule{Homes: []devices.HomeSchedule{hs}}
	ev, err := one.Evaluate(s)
	if err != nil {
		return HomePlan{}, fmt.Errorf("report: %w", err)
	}
	plans, err := plansOf(&one, s, ev)
	if err != nil {
		return HomePlan{}, err
	}
	return plans[0], nil
}

// idleAction returns the name of the action that draws the least power in
// magnitude: "off", or a battery's "idle" rather than its discharge.
func idleAction(d *devices.Device) string {
	best := 0
	for a := range d.Actions {
		if math.Abs(d.Actions[a].Power) < math.Abs(d.Actions[best].Power) {
			best = a
		}
	}
	return d.Actions[best].Name
}

func baselineOf(n *devices.Neighbourhood, o *baseline.Outcome) (*Baseline, error) {
	if o.Schedule == nil || o.Eval == nil {
		return nil, fmt.Errorf("report: baseline %s has no schedule", o.Name)
	}
	plans, err := plansOf(n, o.Schedule, o.Eval)
	if err != nil {
		return nil, err
	}
	b := &Baseline{
		Feasible:         o.Eval.Feasible,
		Violations:       o.Eval.Violations,
		LoadKW:           scaled(o.Eval.Load, powerScale(n)),
		Rounds:           o.Rounds,
		Moves:            o.Moves,
		Converged:        o.Converged,
		Solves:           o.Solves,
		ApproximateHomes: o.Approximate,
		CoarseHomes:      o.Coarse,
		WallMs:           float64(o.Wall.Microseconds()) / 1000,
		Schedules:        plans,
	}
	if o.Eval.Feasible {
		c := o.Eval.Cost
		f := baseline.FlowObjective(n, o.Eval)
		b.Objective, b.FlowObjective = &c, &f
	}
	b.PeakKW = maxOf(b.LoadKW)
	for _, p := range plans {
		b.EnergyCost += p.EnergyCost
		b.EnergyKWh += p.EnergyKWh
		b.RulesSatisfied += p.RulesSatisfied
		b.Homes = append(b.Homes, HomeFigures{Home: p.Home, EnergyCost: p.EnergyCost, PeakKW: p.PeakKW})
	}
	return b, nil
}

// objectiveUnit is the objectives' unit when the weights leave them in
// the model's units: the power unit squared plus the price unit times the
// power unit ("0.01 kWh² + $0.001" for SHDS imports).
func objectiveUnit(n *devices.Neighbourhood) string {
	dt := n.Horizon.Hours()
	u := n.Units
	if u.Power == "" || u.Currency == "" || u.PowerScale == 0 || u.PriceScale == 0 ||
		math.Abs(n.Weights.Price*dt-1) > 1e-12 || math.Abs(n.Weights.Peak*dt*dt-1) > 1e-12 {
		return ""
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	return fmt.Sprintf("%s %s² + %s%s", g(u.PowerScale*u.PowerScale), u.Power, u.Currency, g(u.PowerScale*u.PriceScale))
}

// slack returns the most the committed caps exceed the neighbourhood's
// draw in one slot (model units), 0 without windows.
func slack(n *devices.Neighbourhood, ev *devices.Evaluation) float64 {
	out := 0.0
	for w, win := range n.Windows {
		for t := win.From; t < win.To && t < len(ev.Load); t++ {
			out = math.Max(out, ev.Committed[w]-ev.Load[t])
		}
	}
	return out
}

// powerScale converts the model's power units to kW: SHDS counts energy
// per slot (Units.Power "kWh"), so its values are divided by the slot
// length in hours.
func powerScale(n *devices.Neighbourhood) float64 {
	ps := n.Units.PowerScale
	if ps == 0 {
		ps = 1
	}
	if n.Units.Power == "kWh" {
		ps /= n.Horizon.Hours()
	}
	return ps
}

func scaled(v []float64, s float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * s
	}
	return out
}

func maxOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

// SlotTimes returns the clock time each slot starts at, "HH:MM".
func SlotTimes(hz devices.Horizon) []string {
	out := make([]string, hz.Slots)
	m := hz.Start
	for t := range out {
		out[t] = clock(m)
		m += hz.Minutes(t)
	}
	return out
}

func clock(min int) string {
	min = ((min % 1440) + 1440) % 1440
	return fmt.Sprintf("%02d:%02d", min/60, min%60)
}
