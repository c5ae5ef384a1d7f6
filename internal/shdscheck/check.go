package shdscheck

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Output is the part of `hearth sim --shds FILE --json` the checker reads:
// the coordinated plan at the top level and the baselines beside it.
type Output struct {
	Objective      *float64          `json:"objective"`
	Feasible       bool              `json:"feasible"`
	Assignment     map[string]string `json:"assignment"`
	EnergyCost     *float64          `json:"energy_cost"`
	PeakKW         *float64          `json:"peak_kw"`
	LoadKW         []float64         `json:"load_kw"`
	RulesSatisfied int               `json:"rules_satisfied"`
	RulesTotal     int               `json:"rules_total"`
	// RulesDropped are rules of the file hearth left out as infeasible,
	// counted in RulesTotal.
	RulesDropped  int      `json:"rules_dropped"`
	FlowObjective *float64 `json:"flow_objective"`
	Baselines     struct {
		Uncoordinated *Plan `json:"uncoordinated"`
		SHMGM         *Plan `json:"shmgm"`
	} `json:"baselines"`
	Schedules []HomePlan `json:"schedules"`
}

// Plan is one street schedule with what hearth reports about it.
type Plan struct {
	Objective *float64 `json:"objective"`
	// FlowObjective is what hearth reports as the objective on the load
	// that flows; it must equal RealObjective.
	FlowObjective  *float64   `json:"flow_objective"`
	Feasible       bool       `json:"feasible"`
	EnergyCost     *float64   `json:"energy_cost"`
	PeakKW         *float64   `json:"peak_kw"`
	LoadKW         []float64  `json:"load_kw"`
	RulesSatisfied int        `json:"rules_satisfied"`
	Rounds         int        `json:"rounds"`
	Converged      bool       `json:"converged"`
	Schedules      []HomePlan `json:"schedules"`
	// Assignment holds the solver's variables (property values per
	// slot); only the coordinated plan has it.
	Assignment map[string]string `json:"-"`
}

// HomePlan is one home's schedule.
type HomePlan struct {
	Home       string       `json:"home"`
	Devices    []DevicePlan `json:"devices"`
	LoadKW     []float64    `json:"load_kw"`
	EnergyCost float64      `json:"energy_cost"`
	Levels     []string     `json:"levels"`
	Rules      []RuleResult `json:"rules"`
}

// DevicePlan is one device's action in every slot.
type DevicePlan struct {
	Device  string    `json:"device"`
	Actions []string  `json:"actions"`
	KW      []float64 `json:"kw"`
}

// RuleResult is a rule and whether hearth counts it as kept.
type RuleResult struct {
	Rule string `json:"rule"`
	OK   bool   `json:"ok"`
}

// ReadOutput reads hearth's JSON result.
func ReadOutput(path string) (*Output, error) { return readFile(path, DecodeOutput) }

// readFile reads path and decodes it, naming the file in the error.
func readFile[T any](path string, decode func([]byte) (*T, error)) (*T, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("shdscheck: %w", err)
	}
	v, err := decode(b)
	if err != nil {
		return nil, fmt.Errorf("shdscheck: %s: %w", path, err)
	}
	return v, nil
}

// DecodeOutput decodes hearth's JSON result.
func DecodeOutput(b []byte) (*Output, error) {
	var o Output
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, err
	}
	return &o, nil
}

// Coordinated returns the coordinated plan of an output.
func (o *Output) Coordinated() *Plan {
	return &Plan{
		Objective:      o.Objective,
		FlowObjective:  o.FlowObjective,
		Feasible:       o.Feasible,
		EnergyCost:     o.EnergyCost,
		PeakKW:         o.PeakKW,
		LoadKW:         o.LoadKW,
		RulesSatisfied: o.RulesSatisfied,
		Schedules:      o.Schedules,
		Assignment:     o.Assignment,
	}
}

// Report is what Check recomputed for one plan. Energy is in deci-kWh
// per slot (0.1 kWh, which with 60-minute slots is 0.1 kW) and the
// objectives are in the data set's integer units: squared deci-kWh plus
// the bill in 0.001 $ (note §4.1), the units of hearth's `objective`.
type Report struct {
	Homes        int
	DroppedHomes []string // homes of the file with no schedule
	// Rules: the kept rules (note §3.2) of the scheduled homes that the
	// plan lists; Held: how many of them hold on the recomputed
	// trajectories; Claimed: how many the plan counts as kept.
	Rules, Held, Claimed int
	// DroppedRules are kept rules of the file that the plan does not
	// list (homes or components dropped as infeasible).
	DroppedRules int
	// Values counts the solver's property values compared with the
	// recomputed trajectories.
	Values int

	Load []int64 // street load per slot, deci-kWh
	Peak float64 // kW
	// Bill is at the file's prices, BillCents at prices truncated to
	// whole cents (the reference solver's q100), both in $.
	Bill, BillCents float64
	// RealObjective is Σ_t L_t² + bill on the load that flows, at the
	// file's prices; RealObjectiveCents the same at whole-cent prices.
	RealObjective      float64
	RealObjectiveCents int64
	// HasLevels: the plan carries committed levels. LevelObjective is
	// Σ_t (Σ_h cap_h(t))² plus the whole-cent bill, cap being the upper
	// end of each home's committed level; MaxSlack the largest Σ_h
	// cap_h(t) − L_t over slots, in kW.
	HasLevels      bool
	LevelObjective int64
	MaxSlack       float64

	// Matched names the definition the reported objective equals, ""
	// when none.
	Matched string
	// Findings are named, known deviations (prices truncated to cents);
	// Problems are disagreements between the plan and the recomputation.
	Findings []string
	Problems []string
}

// Err returns the problems as one error, nil when there are none.
func (r *Report) Err() error {
	if len(r.Problems) == 0 {
		return nil
	}
	n := len(r.Problems)
	ps := r.Problems
	if n > 20 {
		ps = ps[:20]
	}
	return fmt.Errorf("shdscheck: %d problems: %s", n, strings.Join(ps, "; "))
}

func (r *Report) problem(format string, a ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, a...))
}

// model is a (location, property) pair with its sensor's initial value
// and the home's actuators that affect it.
type model struct {
	loc, prop string
	init      int64
	actuators []string
}

// Check recomputes a plan from the instance and the dictionary and
// compares every figure the plan reports. It returns an error only when
// the instance or dictionary cannot be interpreted; disagreements with
// the plan are the report's Problems.
func Check(in *Instance, dict Dictionary, p *Plan) (*Report, error) {
	if len(dict) != 3 {
		return nil, fmt.Errorf("shdscheck: the dictionary has %d house types, want 3", len(dict))
	}
	H := in.Horizon
	r := &Report{Load: make([]int64, H)}
	byName := map[string]*HomePlan{}
	for i := range p.Schedules {
		hp := &p.Schedules[i]
		if byName[hp.Home] != nil {
			r.problem("home %s scheduled twice", hp.Home)
			continue
		}
		if in.Agents[hp.Home] == nil {
			r.problem("home %s is not in the instance", hp.Home)
			continue
		}
		byName[hp.Home] = hp
	}
	names := make([]string, 0, len(in.Agents))
	for n := range in.Agents {
		names = append(names, n)
	}
	sort.Strings(names)
	capSum := make([]int64, H)
	levelsSeen := 0
	for _, name := range names {
		hp := byName[name]
		if hp == nil {
			r.DroppedHomes = append(r.DroppedHomes, name)
			continue
		}
		r.Homes++
		load, caps, err := checkHome(in, dict, name, hp, p.Assignment, r)
		if err != nil {
			return nil, err
		}
		for t := range load {
			r.Load[t] += load[t]
		}
		if caps != nil {
			levelsSeen++
			for t := range caps {
				capSum[t] += caps[t]
			}
		}
	}
	if levelsSeen > 0 && levelsSeen != r.Homes {
		r.problem("%d of %d homes carry levels", levelsSeen, r.Homes)
	}
	r.HasLevels = levelsSeen > 0 && levelsSeen == r.Homes

	var sq, cents int64
	var exact float64
	peak := int64(math.MinInt64)
	for t, l := range r.Load {
		sq += l * l
		cents += q100(in.Prices[t]) * l
		exact += in.Prices[t] * 100 * float64(l)
		peak = max(peak, l)
	}
	r.Peak = float64(peak) / 10
	r.Bill = exact / 1000
	r.BillCents = float64(cents) / 1000
	r.RealObjective = float64(sq) + exact
	r.RealObjectiveCents = sq + cents
	var capSq int64
	var capExact float64
	if r.HasLevels {
		slack := int64(math.MinInt64)
		for t, c := range capSum {
			capSq += c * c
			slack = max(slack, c-r.Load[t])
		}
		capExact = float64(capSq) + exact
		r.LevelObjective = capSq + cents
		r.MaxSlack = float64(slack) / 10
	}

	// Reported figures against the recomputed ones.
	if len(p.LoadKW) > 0 {
		if len(p.LoadKW) != H {
			r.problem("load_kw has %d slots, horizon %d", len(p.LoadKW), H)
		} else {
			for t, v := range p.LoadKW {
				if math.Abs(v*10-float64(r.Load[t])) > 1e-6 {
					r.problem("slot %d: reported load %.4g kW, recomputed %.4g kW", t, v, float64(r.Load[t])/10)
				}
			}
		}
	}
	if p.PeakKW != nil && math.Abs(*p.PeakKW-r.Peak) > 1e-6 {
		r.problem("reported peak %.4g kW, recomputed %.4g kW", *p.PeakKW, r.Peak)
	}
	if p.EnergyCost != nil {
		switch b := *p.EnergyCost; {
		case near(b, r.Bill, 1e-6):
		case near(b, r.BillCents, 1e-6):
			r.Findings = append(r.Findings, fmt.Sprintf("the reported bill $%.3f uses prices truncated to whole cents; at the file's prices it is $%.3f (%+.2f%%)",
				b, r.Bill, 100*(r.Bill-b)/b))
		default:
			r.problem("reported bill $%.4f, recomputed $%.4f at the file's prices ($%.4f at whole-cent prices)", b, r.Bill, r.BillCents)
		}
	}
	if p.Objective != nil {
		o := *p.Objective
		cands := []struct {
			name string
			v    float64
			ok   bool
		}{
			{"real load, file prices", r.RealObjective, true},
			{"real load, whole-cent prices", float64(r.RealObjectiveCents), true},
			{"committed levels, file prices", capExact, r.HasLevels},
			{"committed levels, whole-cent prices", float64(r.LevelObjective), r.HasLevels},
		}
		for _, c := range cands {
			if c.ok && near(o, c.v, 1e-9) {
				r.Matched = c.name
				break
			}
		}
		if r.Matched == "" {
			r.problem("reported objective %.6g matches none of: real load %.6g (%.6g at whole cents), committed levels %.6g (%.6g at whole cents)",
				o, r.RealObjective, float64(r.RealObjectiveCents), capExact, float64(r.LevelObjective))
		}
	}
	if p.FlowObjective != nil && !near(*p.FlowObjective, r.RealObjective, 1e-9) {
		r.problem("reported objective on the load that flows %.6g, recomputed %.6g (at the file's prices)", *p.FlowObjective, r.RealObjective)
	}
	if p.RulesSatisfied != r.Claimed {
		r.problem("reported %d rules kept, the schedules mark %d", p.RulesSatisfied, r.Claimed)
	}
	return r, nil
}

// near compares with a relative tolerance (and 1e-9 absolute).
func near(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))+1e-9
}

// checkHome replays one home and returns its draw per slot (deci-kWh) and
// the upper ends of its committed levels (nil when it has none).
func checkHome(in *Instance, dict Dictionary, name string, hp *HomePlan, assign map[string]string, r *Report) ([]int64, []int64, error) {
	H := in.Horizon
	home := in.Agents[name]
	devs := dict[home.HouseType]
	acts := actuatorsOf(home)
	has := map[string]bool{}
	for _, a := range acts {
		d := devs[a]
		if d == nil || d.Type != "actuator" {
			return nil, nil, fmt.Errorf("shdscheck: home %s: actuator %s is not in the dictionary for house type %d", name, a, home.HouseType)
		}
		has[a] = true
	}
	// x[a][t]: the action of actuator a in slot t; absent devices idle
	// (lowest power, ties by name: note §2.3).
	x := map[string][]*Action{}
	for _, a := range acts {
		idle := idleAction(devs[a])
		x[a] = make([]*Action, H)
		for t := range x[a] {
			x[a][t] = idle
		}
	}
	for _, dp := range hp.Devices {
		if !has[dp.Device] {
			r.problem("home %s: device %s is not one of its actuators %v", name, dp.Device, acts)
			continue
		}
		if len(dp.Actions) != H || len(dp.KW) != H {
			r.problem("home %s: device %s has %d actions and %d powers, horizon %d", name, dp.Device, len(dp.Actions), len(dp.KW), H)
			continue
		}
		for t, an := range dp.Actions {
			a := devs[dp.Device].Actions[an]
			if a == nil {
				r.problem("home %s: device %s has no action %q (slot %d)", name, dp.Device, an, t)
				continue
			}
			x[dp.Device][t] = a
			if math.Abs(dp.KW[t]*10-float64(q10(a.Power))) > 1e-6 {
				r.problem("home %s: %s %s at slot %d reported %.4g kW, the dictionary %.4g kW", name, dp.Device, an, t, dp.KW[t], float64(q10(a.Power))/10)
			}
		}
	}

	load := make([]int64, H)
	for t := range load {
		load[t] = q10(home.Background[t])
		for _, a := range acts {
			load[t] += q10(x[a][t].Power)
		}
	}
	if len(hp.LoadKW) != H {
		r.problem("home %s: load_kw has %d slots, horizon %d", name, len(hp.LoadKW), H)
	} else {
		for t := range load {
			if math.Abs(hp.LoadKW[t]*10-float64(load[t])) > 1e-6 {
				r.problem("home %s: slot %d: reported load %.4g kW, recomputed %.4g kW", name, t, hp.LoadKW[t], float64(load[t])/10)
			}
		}
	}

	// Rules: parse, find the kept ones (note §3.2), build their models.
	var rules []rule
	for _, s := range home.Rules {
		ru, err := parseRule(s, H)
		if err != nil {
			return nil, nil, fmt.Errorf("shdscheck: home %s: %w", name, err)
		}
		rules = append(rules, ru)
	}
	models := map[[2]string]*model{}
	modelOf := func(loc, prop string) (*model, error) {
		k := [2]string{loc, prop}
		if m := models[k]; m != nil {
			return m, nil
		}
		m := &model{loc: loc, prop: prop}
		found := false
		for _, d := range sortedNames(devs) {
			dev := devs[d]
			if dev.Type == "sensor" && dev.Location == loc && len(dev.Senses) > 0 && dev.Senses[0] == prop {
				if found {
					return nil, fmt.Errorf("shdscheck: home %s: two sensors for %s %s", name, loc, prop)
				}
				found = true
				m.init = q10(*dev.Initial)
			}
		}
		if !found {
			return nil, fmt.Errorf("shdscheck: home %s: no sensor for %s %s", name, loc, prop)
		}
		for _, a := range acts {
			dev := devs[a]
			if (dev.Location == loc || a == loc) && affects(dev, prop) {
				m.actuators = append(m.actuators, a)
			}
		}
		models[k] = m
		return m, nil
	}
	activeAffects := map[string]bool{} // properties some active rule's model can change
	for _, ru := range rules {
		if !ru.active {
			continue
		}
		m, err := modelOf(ru.loc, ru.prop)
		if err != nil {
			return nil, nil, err
		}
		for _, a := range m.actuators {
			for _, act := range devs[a].Actions {
				for _, e := range act.Effects {
					activeAffects[e.Property] = true
				}
			}
		}
	}
	kept := map[string]int{} // rule text → count kept
	keptRule := map[string]rule{}
	for _, ru := range rules {
		if ru.active || activeAffects[ru.prop] {
			kept[ru.text]++
			keptRule[ru.text] = ru
		}
	}
	traj := func(m *model) []int64 {
		s := make([]int64, H)
		s[0] = m.init
		for t := 1; t < H; t++ {
			s[t] = s[t-1]
			for _, a := range m.actuators {
				s[t] += q10(deltaOf(x[a][t], m.prop))
			}
		}
		return s
	}
	trajs := map[[2]string][]int64{}
	listed := map[string]int{}
	for _, rr := range hp.Rules {
		ru, ok := keptRule[rr.Rule]
		if !ok || listed[rr.Rule] >= kept[rr.Rule] {
			r.problem("home %s: rule %q is not a kept rule of the instance", name, rr.Rule)
			continue
		}
		listed[rr.Rule]++
		m, err := modelOf(ru.loc, ru.prop)
		if err != nil {
			return nil, nil, err
		}
		k := [2]string{m.loc, m.prop}
		if trajs[k] == nil {
			trajs[k] = traj(m)
		}
		holds := ru.holds(trajs[k])
		r.Rules++
		if holds {
			r.Held++
		}
		if rr.OK {
			r.Claimed++
		}
		switch {
		case rr.OK && !holds:
			r.problem("home %s: rule %q is counted as kept but does not hold (trajectory %v)", name, rr.Rule, trajs[k])
		case !rr.OK && holds:
			r.problem("home %s: rule %q is counted as broken but holds", name, rr.Rule)
		}
	}
	for text, n := range kept {
		r.DroppedRules += n - listed[text]
	}

	// The solver's own property values, "home/LOC.PROP#t" = "v" or "v|flag".
	prefix := name + "/"
	for key, val := range assign {
		rest, ok := strings.CutPrefix(key, prefix)
		if !ok {
			continue
		}
		mp, ts, ok := strings.Cut(rest, "#")
		if !ok {
			continue
		}
		dot := strings.LastIndexByte(mp, '.')
		if dot < 0 {
			continue
		}
		s := trajs[[2]string{mp[:dot], mp[dot+1:]}]
		if s == nil {
			continue
		}
		t, err := strconv.Atoi(ts)
		if err != nil || t < 0 || t >= H {
			r.problem("assignment %s: slot %q", key, ts)
			continue
		}
		vs, _, _ := strings.Cut(val, "|")
		v, err := strconv.ParseFloat(vs, 64)
		if err != nil {
			r.problem("assignment %s: value %q", key, val)
			continue
		}
		r.Values++
		if math.Abs(v*10-float64(s[t])) > 1e-6 {
			r.problem("assignment %s = %s, recomputed %.1f", key, val, float64(s[t])/10)
		}
	}

	if hp.Levels == nil {
		return load, nil, nil
	}
	if len(hp.Levels) != H {
		r.problem("home %s: %d levels, horizon %d", name, len(hp.Levels), H)
		return load, nil, nil
	}
	caps := make([]int64, H)
	for t, lv := range hp.Levels {
		lo, hi, err := parseLevel(lv)
		if err != nil {
			r.problem("home %s: slot %d: %v", name, t, err)
			continue
		}
		caps[t] = hi
		if load[t] < lo || load[t] > hi {
			r.problem("home %s: slot %d: draw %.1f kWh outside its committed level %s", name, t, float64(load[t])/10, lv)
		}
	}
	return load, caps, nil
}

// parseLevel reads "0.20-11.70kWh" into deci-kWh bounds.
func parseLevel(s string) (lo, hi int64, err error) {
	body, ok := strings.CutSuffix(s, "kWh")
	if ok {
		a, b, cut := strings.Cut(body, "-")
		if cut {
			x, e1 := strconv.ParseFloat(a, 64)
			y, e2 := strconv.ParseFloat(b, 64)
			if e1 == nil && e2 == nil && x <= y {
				return int64(math.Round(x * 10)), int64(math.Round(y * 10)), nil
			}
		}
	}
	return 0, 0, fmt.Errorf("level %q is not LO-HIkWh", s)
}

func affects(d *Device, prop string) bool {
	for _, a := range d.Actions {
		for _, e := range a.Effects {
			if e.Property == prop {
				return true
			}
		}
	}
	return false
}

func deltaOf(a *Action, prop string) float64 {
	for _, e := range a.Effects {
		if e.Property == prop {
			return e.Delta
		}
	}
	return 0
}

// idleAction is the lowest-power action, ties broken by name.
func idleAction(d *Device) *Action {
	var best *Action
	bestName := ""
	for n, a := range d.Actions {
		if best == nil || a.Power < best.Power || a.Power == best.Power && n < bestName {
			best, bestName = a, n
		}
	}
	return best
}

func sortedNames(m map[string]*Device) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
