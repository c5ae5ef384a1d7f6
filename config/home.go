package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hearth-dcop/hearth/devices"
)

// homeSrc remembers where each part of a home came from, so that model
// errors can name the file, line and key.
type homeSrc struct {
	src     *source
	path    string // key prefix of the home: "" for a home file, "home[i]" inline
	live    []DeviceLive
	sensors []SensorLive
	pv      []float64
	devices []string // per device
	props   []string // per property
	rules   []string // per rule
	planner string   // PlannerCompiled or PlannerEnergy
	sizes   map[string]devices.Sizing
}

func (hs *homeSrc) key(k string) string { return join(hs.path, k) }

// homeReader builds one home.
type homeReader struct {
	l     *loader
	n     *node
	hz    devices.Horizon
	ck    clock
	h     devices.Home
	hs    *homeSrc
	props map[[2]string]int
	// bounds say, per property with a physical range (a catalogue
	// entry's, or a custom device's range key), where the range came
	// from.
	bounds map[[2]string]bounds
	// pct are the rules whose goal is in percent (indices in h.Rules).
	pct []int
	// stores are the properties custom devices store, with the key of
	// the device that must declare their range.
	stores map[[2]string]string
	// autos are the catalogue devices with automatic levels, by device
	// index: their entry before sizing and their figures (autoNeeds).
	autos map[int]autoDevice
	// ruleToks are the time tokens each rule was written with, by index
	// in h.Rules (awayGoals).
	ruleToks map[int][]string
}

// autoDevice is a device with automatic levels as its [[device]] gave it.
type autoDevice struct {
	entry devices.Entry
	sz    devices.Sizing
	loc   string
	n     *node
	scale float64 // the sized entry's resolution of what it stores
}

type bounds struct {
	label string // "bound of home_battery", "range of radiator"
	key   string
}

func (l *loader) home(n *node, hz devices.Horizon, ck clock, defName string) (devices.Home, *homeSrc) {
	r := &homeReader{l: l, n: n, hz: hz, ck: ck, hs: &homeSrc{src: n.src, path: n.path}, props: map[[2]string]int{}, bounds: map[[2]string]bounds{}, stores: map[[2]string]string{}}
	r.h.Name = defName
	if s, ok := n.str("name"); ok {
		r.h.Name = s
	}
	if r.h.Name == "" {
		n.errorf("name", "a home needs a name")
	} else if !devices.ValidName(r.h.Name) {
		n.errorf("name", "home name %q: use letters, digits, '_', '-' or '.'", r.h.Name)
	}
	r.planner()
	r.background()
	r.pv()
	r.meter()
	if r.l.series != nil {
		for _, k := range []string{"pv_file", "background_file"} {
			r.l.seriesFile(n, k, SeriesKey{Home: r.h.Name, What: strings.TrimSuffix(k, "_file")}, r.l.series)
		}
	}
	r.rules(n, "")
	for _, d := range n.tables("device") {
		r.device(d)
	}
	for _, s := range n.tables("sensor") {
		r.sensor(s)
	}
	r.ranges()
	r.percentGoals()
	r.awayGoals()
	r.tripGoals()
	r.autoNeeds()
	r.addBounds()
	n.done(append([]string{"name", "planner", "background_kw", "pv_kw", "pv_file", "background_file", "rules", "device", "sensor"}, meterKeys...)...)
	return r.h, r.hs
}

func (r *homeReader) background() {
	H := r.hz.Slots
	r.h.Background = make([]float64, H)
	v, ok := r.n.m["background_kw"]
	if !ok {
		return
	}
	if f, isNum := asNumber(v); isNum {
		r.n.used["background_kw"] = true
		for t := range r.h.Background {
			r.h.Background[t] = f
		}
		return
	}
	bg, ok := r.n.nums("background_kw")
	if !ok {
		return
	}
	if len(bg) != H {
		r.n.errorf("background_kw", "%d values for %d slots: give one value per slot, or a single number for all", len(bg), H)
		return
	}
	copy(r.h.Background, r.l.rotate(bg, r.ck, r.n, "background_kw"))
}

// pv reads pv_kw, the rooftop PV forecast (kW per slot, or one number
// for every slot), and subtracts it from the background: the home's draw
// is net of its PV, negative when it feeds back (billed at the export
// price where [prices] gives one).
func (r *homeReader) pv() {
	v, ok := r.n.m["pv_kw"]
	if !ok {
		return
	}
	H := r.hz.Slots
	pv := make([]float64, H)
	if f, isNum := asNumber(v); isNum {
		r.n.used["pv_kw"] = true
		for t := range pv {
			pv[t] = f
		}
	} else {
		vals, ok := r.n.nums("pv_kw")
		if !ok {
			return
		}
		if len(vals) != H {
			r.n.errorf("pv_kw", "%d values for %d slots: give one value per slot, or a single number for all", len(vals), H)
			return
		}
		copy(pv, r.l.rotate(vals, r.ck, r.n, "pv_kw"))
	}
	r.hs.pv = pv
	for t, p := range pv {
		if p < 0 || p > 1e6 {
			r.n.errorf("pv_kw", "%g kW in slot %d: PV output is a non-negative power", p, t)
			return
		}
		r.h.Background[t] -= p
	}
}

// rules reads the rules key of a home or device: an array whose elements
// are rules as strings (soft goals) or tables { rule = "…", hard = true }.
func (r *homeReader) rules(n *node, loc string) {
	l, ok := n.list("rules")
	if !ok {
		return
	}
	for i, v := range l {
		key := index(n.key("rules"), i)
		switch x := v.(type) {
		case string:
			r.rule(x, key, loc, false)
		case map[string]any:
			t := newNode(n.src, key, x)
			text, ok := t.str("rule")
			if !ok {
				if !t.has("rule") {
					t.src.errorf(t.path, "a rule table needs rule = \"…\" (e.g. { rule = \"charge geq 40 before 07:00\", hard = true })")
				}
				t.done("rule", "hard")
				continue
			}
			hard, _ := t.boolean("hard")
			r.rule(text, key, loc, hard)
			t.done("rule", "hard")
		default:
			n.src.errorf(key, "want a rule: a string such as \"charge geq 40 before 07:00\" or a table { rule = \"…\", hard = true }, got %s", typeName(v))
		}
	}
}

// rule parses a rule; loc is the default location of a device's rules.
// Rules are soft goals unless hard: a plan that cannot meet a soft one
// misses it by as little as it can (Weights.Miss per missing unit).
// A goal written in percent ("charge geq 80% before 07:30") is kept for
// percentGoals, which converts it once the devices are known.
func (r *homeReader) rule(text, key, loc string, hard bool) {
	parsed, pct := text, false
	if f := strings.Fields(text); len(f) > 0 {
		for i, tok := range f {
			if g, ok := strings.CutSuffix(tok, "%"); ok && i > 0 {
				if _, rel := devices.ParseRelation(f[i-1]); rel {
					f[i], pct = g, true
				}
			}
		}
		parsed = strings.Join(f, " ")
	}
	var toks []string
	conv := func(tok string) (int, error) { toks = append(toks, tok); return r.ck.goalBoundary(tok) }
	if r.ck.rolling {
		// On a rolling horizon a window's ends are read together
		// (clock.rollingTimes).
		conv = func(tok string) (int, error) { toks = append(toks, tok); return 0, nil }
	}
	rule, err := devices.ParseRule(parsed, devices.RuleSyntax{Location: loc, Time: conv})
	if err == nil && r.ck.rolling {
		err = r.ck.rollingTimes(&rule, toks)
	}
	if errors.Is(err, errBeyond) {
		return
	}
	if err != nil {
		r.hs.src.errorf(key, "%v", err)
		return
	}
	rule.Text = strings.TrimSpace(text)
	rule.Soft = !hard
	if pct {
		r.pct = append(r.pct, len(r.h.Rules))
	}
	if len(toks) > 0 {
		if r.ruleToks == nil {
			r.ruleToks = map[int][]string{}
		}
		r.ruleToks[len(r.h.Rules)] = toks
	}
	r.h.Rules = append(r.h.Rules, rule)
	r.hs.rules = append(r.hs.rules, key)
}

// percentGoals turns goals in percent into the property's natural unit:
// a percentage of the top of its physical range (a catalogue battery's or
// EV's capacity). A property without a known top cannot take one.
func (r *homeReader) percentGoals() {
	for _, ri := range r.pct {
		rule := &r.h.Rules[ri]
		k := [2]string{rule.Location, rule.Property}
		var top *float64
		if i, ok := r.props[k]; ok {
			top = r.h.Properties[i].Max
		}
		if top == nil {
			r.hs.src.errorf(r.hs.rules[ri], "rule %q: a goal in %% needs a property whose full value is known (a catalogue battery's soc, an EV's charge, a custom device's range); write the goal in the property's unit", rule.Text)
			continue
		}
		if rule.Goal < 0 || rule.Goal > 100 {
			r.hs.src.errorf(r.hs.rules[ri], "rule %q: %g%% is not a percentage between 0 and 100", rule.Text, rule.Goal)
			continue
		}
		rule.Goal = rule.Goal / 100 * *top
	}
}

func (r *homeReader) device(n *node) {
	name, _ := n.str("name")
	if name == "" {
		n.errorf("name", "a device needs a name (it names the device in rules and schedules)")
		n.done()
		return
	}
	if slices.ContainsFunc(r.h.Devices, func(d devices.Device) bool { return d.Name == name }) {
		n.errorf("name", "two devices are called %q; give each a different name", name)
	}
	if !devices.ValidName(name) {
		n.errorf("name", "device name %q: use letters, digits, '_', '-' or '.'", name)
	}
	loc, _ := n.str("location")
	kind, hasKind := n.str("kind")
	size, _ := n.str("size")
	var dev devices.Device
	var props []devices.Property
	var entry *devices.Entry
	switch {
	case hasKind && n.has("actions"):
		n.errorf("actions", "give either kind (a catalogue entry) or actions (a custom device), not both")
		return
	case hasKind:
		e, err := devices.Lookup(kind, size)
		if err != nil {
			k := "kind"
			if size != "" && strings.HasPrefix(err.Error(), "size") {
				k = "size"
			}
			msg := err.Error()
			if c := closest(kind, devices.Kinds()); c != "" && k == "kind" {
				msg = fmt.Sprintf("unknown device kind %q; did you mean %q?", kind, c)
			}
			n.errorf(k, "%s", msg)
			n.done(append([]string{"name", "kind", "size", "location", "initial", "drift", "resolution", "rules", "cycle_cost", "soc", "plugged"}, slices.Concat(sizingKeys, storageKeys, windowKeys)...)...)
			return
		}
		sz, key, ok := sizing(n)
		if _, sizable := devices.SizingDefaults(e.Kind); !ok && !sizable && n.has("power_steps") {
			n.errorf("power_steps", "kind %q has no power levels to choose (those that do: home_battery, ev_wallbox_7kw, ev_wallbox_11kw)", e.Kind)
		}
		if r.autoByDefault(n, e.Kind) {
			sz.Auto, ok = true, true
			if key == "" {
				key = "kind"
			}
		}
		if ok {
			sz.SlotHours = float64(r.hz.SlotMinutes) / 60
			sized, err := e.Sized(sz)
			if err != nil && sz.Auto && !n.has("power_steps") {
				// Levels chosen by default, not asked for: the
				// catalogue's fixed levels, and their error if any.
				sz.Auto = false
				sized, err = e.Sized(sz)
			}
			if err != nil {
				n.errorf(key, "%v", err)
			} else {
				if sz.Auto {
					if r.autos == nil {
						r.autos = map[int]autoDevice{}
					}
					r.autos[len(r.h.Devices)] = autoDevice{entry: e, sz: sz, loc: loc, n: n, scale: sized.Properties[0].Scale}
				}
				e = sized
				r.hs.sized(name, sz)
			}
		}
		dev, props = e.Instantiate(name, loc, r.hz.SlotMinutes)
		byLength(&dev, e, name, loc, r.hz)
		entry = &e
		for _, p := range props {
			if p.Min != nil || p.Max != nil {
				r.bounds[[2]string{p.Location, p.Name}] = bounds{label: "bound of " + e.Kind, key: n.key("kind")}
			}
		}
		if n.has("range") {
			n.errorf("range", "a catalogue device's range is its own (capacity_kwh and reserve_kwh resize a battery or EV); range is for custom devices")
		}
	case n.has("actions"):
		if _, key, ok := sizing(n); ok {
			n.errorf(key, "size parameters apply to catalogue kinds (home_battery, ev_wallbox_7kw, ev_wallbox_11kw); a custom device gives its actions' power and effects itself")
		}
		dev, props = r.custom(n, name, loc)
		r.customRange(n, name, props)
	default:
		n.errorf("kind", "a device needs kind = \"…\" (one of %s) or actions = [{name = \"off\", power_kw = 0}, …]", strings.Join(devices.Kinds(), ", "))
		n.done(append([]string{"name", "kind", "size", "location", "initial", "drift", "resolution", "rules", "actions", "range", "cycle_cost", "soc", "plugged"}, slices.Concat(storageKeys, windowKeys)...)...)
		return
	}
	if v, ok := n.num("cycle_cost"); ok {
		if v < 0 || v > 1e6 {
			n.errorf("cycle_cost", "cycle_cost = %g: want a non-negative cost per kWh through the device (0 for none)", v)
		} else {
			dev.CycleCost = v
		}
	}
	r.storage(n, &dev, props)
	r.window(n, &dev, props)
	r.overrides(n, name, props)
	r.deviceLive(n, name, props, entry)
	r.h.Devices = append(r.h.Devices, dev)
	r.hs.devices = append(r.hs.devices, n.path)
	for _, p := range props {
		r.property(p, n.path)
	}
	r.rules(n, name)
	n.done(append([]string{"name", "kind", "size", "location", "initial", "drift", "resolution", "rules", "actions", "range", "cycle_cost", "soc", "plugged"}, slices.Concat(sizingKeys, storageKeys, windowKeys)...)...)
}

// autoByDefault reports whether a catalogue device of kind that gives
// no power_steps takes automatic power levels
// (devices.Sizing.Auto) by default: a storage the catalogue can size
// (home_battery, ev_wallbox_7kw, ev_wallbox_11kw) in a compiled home,
// since its fixed levels (an EV at 3.7 or 7.4 kW, a battery at ±5 kW)
// cost plans up to 14 % above the wallbox's own optimum (README,
// "Automatic levels"). An energy home (planner = "energy") plans
// continuous power and reads only the strongest levels, which stay the
// catalogue's; a device that sets its own resolution keeps the fixed
// levels, whose stored energy follows it (automatic levels store whole
// quanta of their own). A street with [live] takes them too: its rounds
// refine a wallbox's plan never behind the solved one in the slot that
// runs (refine.HomeRolling), and home-sim runs the exact currents as set
// points (docs/DESIGN.md, "Live streets take automatic levels").
func (r *homeReader) autoByDefault(n *node, kind string) bool {
	if _, sizable := devices.SizingDefaults(kind); !sizable {
		return false
	}
	return !n.has("power_steps") && !n.has("resolution") && r.hs.planner != PlannerEnergy
}

// sizingKeys are a sizable catalogue device's parameters
// (devices.Sizing), in the order errors name them.
var sizingKeys = []string{"capacity_kwh", "reserve_kwh", "max_charge_kw", "min_charge_kw", "max_discharge_kw", "charge_efficiency", "discharge_efficiency", "power_steps"}

// sizing reads a device's size parameters; ok is false when it gives
// none. key is the first one given, for errors.
func sizing(n *node) (sz devices.Sizing, key string, ok bool) {
	for _, k := range sizingKeys {
		if !n.has(k) {
			continue
		}
		if k == "power_steps" {
			if raw, _ := n.get(k); raw != nil {
				if _, isStr := raw.(string); isStr {
					v, _ := n.str(k)
					switch v {
					case "fixed":
						// The catalogue's own levels: sized only
						// where another parameter is given.
					case "auto":
						sz.Auto = true
					default:
						n.errorf(k, "power_steps = %q: want \"auto\" (the default), \"fixed\" (the catalogue's levels) or a number of levels from 1 to 16", v)
						sz.Auto = true
					}
					if v != "fixed" && !ok {
						key, ok = k, true
					}
					continue
				}
			}
		}
		if !ok {
			key, ok = k, true
		}
		if k == "power_steps" {
			if v, good := n.integer(k); good {
				sz.Steps = int(v)
				if v < 1 || v > 16 {
					n.errorf(k, "power_steps = %d: want 1 to 16 levels", v)
				}
			}
			continue
		}
		v, good := n.num(k)
		if !good {
			continue
		}
		if v <= 0 {
			n.errorf(k, "%s = %g: want a positive number (leave it out for the catalogue's figure)", k, v)
			continue
		}
		switch k {
		case "capacity_kwh":
			sz.CapacityKWh = v
		case "reserve_kwh":
			sz.ReserveKWh = v
		case "max_charge_kw":
			sz.MaxChargeKW = v
		case "min_charge_kw":
			sz.MinChargeKW = v
		case "max_discharge_kw":
			sz.MaxDischargeKW = v
		case "charge_efficiency":
			sz.ChargeEff = v
		case "discharge_efficiency":
			sz.DischargeEff = v
		}
	}
	return sz, key, ok
}

// custom reads a device's own actions; effects are per hour.
func (r *homeReader) custom(n *node, name, loc string) (devices.Device, []devices.Property) {
	if loc == "" {
		loc = name
	}
	f := float64(r.hz.SlotMinutes) / 60
	dev := devices.Device{Name: name, Location: loc}
	var props []devices.Property
	for _, a := range n.tables("actions") {
		an, _ := a.str("name")
		if an == "" {
			a.errorf("name", "an action needs a name")
		}
		if slices.ContainsFunc(dev.Actions, func(x devices.Action) bool { return x.Name == an }) {
			a.errorf("name", "two actions are called %q", an)
		}
		pw, _ := a.num("power_kw")
		act := devices.Action{Name: an, Power: pw}
		names, eff := a.numbers("effects")
		for _, p := range names {
			act.Effects = append(act.Effects, devices.Effect{Property: p, Delta: eff[p] * f})
			if !slices.ContainsFunc(props, func(x devices.Property) bool { return x.Name == p }) {
				props = append(props, devices.Property{Location: loc, Name: p, Scale: 0.1})
			}
		}
		dev.Actions = append(dev.Actions, act)
		a.done("name", "power_kw", "effects")
	}
	if len(dev.Actions) == 0 {
		n.errorf("actions", "a custom device needs at least one action")
	}
	devices.SortActions(dev.Actions)
	return dev, props
}

// customRange reads a custom device's range = { PROPERTY = [MIN, MAX] }:
// the physical range of what it stores, which every plan keeps in every
// slot. A property may take its range from its [[sensor]] (min, max)
// instead; ranges checks that every one has one.
func (r *homeReader) customRange(n *node, name string, props []devices.Property) {
	for _, p := range props {
		r.stores[[2]string{p.Location, p.Name}] = n.path
	}
	t, ok := n.table("range")
	if !ok {
		return
	}
	names := make([]string, 0, len(t.m))
	for k := range t.m {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, pn := range names {
		i := slices.IndexFunc(props, func(x devices.Property) bool { return x.Name == pn })
		vals, ok := t.nums(pn)
		switch {
		case i < 0:
			var have []string
			for _, x := range props {
				have = append(have, x.Name)
			}
			t.errorf(pn, "device %s stores no property %q (its actions change %s)", name, pn, strings.Join(have, ", "))
			continue
		case !ok:
			continue
		case len(vals) != 2 || vals[0] > vals[1]:
			t.errorf(pn, "want [MIN, MAX] with MIN ≤ MAX, the physical range of %s", pn)
			continue
		}
		lo, hi := vals[0], vals[1]
		props[i].Min, props[i].Max = &lo, &hi
		r.bounds[[2]string{props[i].Location, pn}] = bounds{label: "range of " + name, key: t.key(pn)}
	}
}

// ranges checks that every property a custom device stores has a range
// (from the device's range key or its [[sensor]]'s min and max).
func (r *homeReader) ranges() {
	keys := make([][2]string, 0, len(r.stores))
	for k := range r.stores {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]string) int { return strings.Compare(a[0]+" "+a[1], b[0]+" "+b[1]) })
	for _, k := range keys {
		i, ok := r.props[k]
		if !ok {
			continue
		}
		p := &r.h.Properties[i]
		if p.Min == nil || p.Max == nil {
			dev := r.stores[k]
			r.hs.src.errorf(join(dev, "actions"), "the device stores %s %s but declares no range: add range = { %s = [MIN, MAX] } to the device (or min and max to the property's [[sensor]]), the physical limits every plan must keep", k[0], k[1], k[1])
		}
	}
}

// noDrift refuses a drift in an energy home: devices/energy's storages
// keep their energy between slots (no self-discharge term), so a drift
// would be dropped without a word.
const noDrift = "an energy home (planner = \"energy\") cannot honour a drift: its storages keep their energy between slots; leave drift out, or plan the home with the compiled planner"

// overrides applies a device's initial, drift and resolution tables to
// the properties it brings.
func (r *homeReader) overrides(n *node, name string, props []devices.Property) {
	f := float64(r.hz.SlotMinutes) / 60
	for _, key := range []string{"initial", "drift", "resolution"} {
		names, vals := n.numbers(key)
		for _, p := range names {
			i := slices.IndexFunc(props, func(x devices.Property) bool { return x.Name == p })
			if i < 0 {
				var have []string
				for _, x := range props {
					have = append(have, x.Name)
				}
				n.src.errorf(join(n.key(key), p), "device %s changes no property %q (it changes %s); use a [[sensor]] for other properties", name, p, strings.Join(have, ", "))
				continue
			}
			v := vals[p]
			switch key {
			case "initial":
				props[i].Initial = v
			case "drift":
				if v != 0 && r.hs.planner == PlannerEnergy {
					n.src.errorf(join(n.key(key), p), noDrift)
					continue
				}
				props[i].Drift = v * f
			case "resolution":
				if v <= 0 {
					n.src.errorf(join(n.key(key), p), "the resolution must be positive, e.g. 0.1")
					continue
				}
				props[i].Scale = v
			}
		}
	}
}

// property adds a property, or overrides an existing one when the
// declaration comes from a sensor.
func (r *homeReader) property(p devices.Property, key string) {
	k := [2]string{p.Location, p.Name}
	if _, ok := r.props[k]; ok {
		return
	}
	r.props[k] = len(r.h.Properties)
	r.h.Properties = append(r.h.Properties, p)
	r.hs.props = append(r.hs.props, key)
}

func (r *homeReader) sensor(n *node) {
	loc, _ := n.str("location")
	prop, _ := n.str("property")
	if loc == "" || prop == "" {
		n.errorf("", "a sensor needs location = \"…\" and property = \"…\"")
		n.done(sensorKeys...)
		return
	}
	k := [2]string{loc, prop}
	i, ok := r.props[k]
	if !ok {
		r.property(devices.Property{Location: loc, Name: prop, Scale: 0.1}, n.path)
		i = r.props[k]
	} else {
		r.hs.props[i] = n.path
	}
	p := &r.h.Properties[i]
	if v, ok := n.num("initial"); ok {
		p.Initial = v
	}
	if v, ok := n.num("drift"); ok {
		if v != 0 && r.hs.planner == PlannerEnergy {
			n.errorf("drift", noDrift)
		} else {
			p.Drift = v * float64(r.hz.SlotMinutes) / 60
		}
	}
	if v, ok := n.num("resolution"); ok {
		if v <= 0 {
			n.errorf("resolution", "the resolution must be positive, e.g. 0.1")
		} else {
			p.Scale = v
		}
	}
	if v, ok := n.str("unit"); ok {
		p.Unit = v
	}
	lo, okLo := n.num("min")
	hi, okHi := n.num("max")
	switch {
	case okLo != okHi:
		n.errorf("min", "give both min and max (the property's physical range), or neither")
	case okLo && lo > hi:
		n.errorf("min", "min %g is above max %g", lo, hi)
	case okLo:
		p.Min, p.Max = &lo, &hi
		if _, has := r.bounds[k]; !has {
			r.bounds[k] = bounds{label: "range of sensor " + loc + " " + prop, key: n.key("min")}
		}
	}
	r.sensorLive(n, loc, prop)
	n.done(sensorKeys...)
}

// sensorKeys are the keys of a [[sensor]].
var sensorKeys = []string{"location", "property", "initial", "drift", "resolution", "unit", "min", "max", "topic", "field"}

// addBounds adds the physical range of every property that has one — a
// catalogue device's, a custom device's range, a sensor's min and max —
// as hard passive rules pointing at where the range came from, whether
// or not a rule mentions the property: physics is always on (a
// home_battery nobody writes a rule for still stays between empty and
// full). Properties a rule mentions come first, in order of mention, then
// the others in the order their devices were declared.
func (r *homeReader) addBounds() {
	have := map[string]bool{}
	sig := func(rule *devices.Rule) string {
		return rule.Location + " " + rule.Property + " " + rule.Rel.String() + " " + fmt.Sprint(rule.Goal) + " " + rule.Prefix.String()
	}
	for i := range r.h.Rules {
		if rule := &r.h.Rules[i]; !rule.Soft {
			have[sig(rule)] = true
		}
	}
	mentioned := map[[2]string]bool{}
	var order [][2]string
	for _, rule := range r.h.Rules {
		k := [2]string{rule.Location, rule.Property}
		if !mentioned[k] {
			mentioned[k] = true
			order = append(order, k)
		}
	}
	for _, p := range r.h.Properties {
		k := [2]string{p.Location, p.Name}
		if !mentioned[k] {
			mentioned[k] = true
			order = append(order, k)
		}
	}
	for _, k := range order {
		b, ok := r.bounds[k]
		i, known := r.props[k]
		if !ok || !known {
			continue
		}
		p := &r.h.Properties[i]
		var rules []devices.Rule
		if p.Min != nil {
			rules = append(rules, devices.Rule{Location: k[0], Property: k[1], Rel: devices.Geq, Goal: *p.Min})
		}
		if p.Max != nil {
			rules = append(rules, devices.Rule{Location: k[0], Property: k[1], Rel: devices.Leq, Goal: *p.Max})
		}
		for _, rule := range rules {
			rule.Text = strings.TrimPrefix(rule.String(), "0 ")
			if have[sig(&rule)] {
				continue
			}
			have[sig(&rule)] = true
			rule.Text += " (" + b.label + ")"
			r.h.Rules = append(r.h.Rules, rule)
			r.hs.rules = append(r.hs.rules, b.key)
		}
	}
}

// autoNeeds sizes again each device with automatic levels whose stored
// property has goals (≥, in its unit once percentages are resolved):
// knowing what the goals ask beyond the initial value, a wallbox chooses
// a quantum that meets them with little to spare (devices.Sizing.Needs).
// Only the device's actions change.
func (r *homeReader) autoNeeds() {
	for di, a := range r.autos {
		dev := &r.h.Devices[di]
		if len(a.entry.Properties) == 0 {
			continue
		}
		pi := r.h.Property(dev.Name, a.entry.Properties[0].Name)
		if pi < 0 {
			continue
		}
		if sc := r.h.Properties[pi].Scale; a.scale != a.entry.Properties[0].Scale && sc != a.scale {
			// A wallbox's or battery's levels are whole quanta of its own resolution;
			// another would round them, maybe in the plan's favour.
			a.n.errorf("power_steps", "power_steps = \"auto\" stores %s's %s to %g %s (its levels are whole quanta of it); leave out the resolution %g", dev.Name, a.entry.Properties[0].Name, a.scale, a.entry.Properties[0].Unit, sc)
			continue
		}
		prop := &r.h.Properties[pi]
		var needs []float64
		for _, rule := range r.h.Rules {
			// A goal counts from the initial value, or from the charge
			// the car last came back with before it (arrival_charge).
			from, last := prop.Initial, 0
			for i, v := range prop.Reset {
				if i < rule.T1 && i > last {
					from, last = v, i
				}
			}
			if rule.Location == dev.Name && rule.Property == a.entry.Properties[0].Name && rule.Rel == devices.Geq && rule.Goal > from {
				needs = append(needs, rule.Goal-from)
			}
		}
		if len(needs) == 0 {
			continue
		}
		sz := a.sz
		sz.Needs = needs
		sized, err := a.entry.Sized(sz)
		if err != nil {
			continue // sized without needs already: keep that
		}
		d, _ := sized.Instantiate(dev.Name, a.loc, r.hz.SlotMinutes)
		byLength(&d, sized, dev.Name, a.loc, r.hz)
		dev.Actions, dev.Exact = d.Actions, d.Exact
	}
}

// byLength gives a catalogue device on a horizon of uneven slots its
// effects for every slot length but the first (devices.Action.ByLength),
// each instantiated for its own length: a storage's charge per slot is
// rounded down to whole steps per slot, so a coarse slot's is not the
// first length's rounded figure scaled up.
func byLength(dev *devices.Device, e devices.Entry, name, loc string, hz devices.Horizon) {
	for _, m := range hz.Lengths {
		if _, done := dev.Actions[0].ByLength[m]; done || m == hz.SlotMinutes {
			continue
		}
		other, _ := e.Instantiate(name, loc, m)
		for k := range dev.Actions {
			if dev.Actions[k].ByLength == nil {
				dev.Actions[k].ByLength = map[int][]devices.Effect{}
			}
			dev.Actions[k].ByLength[m] = other.Actions[k].Effects
		}
		for k := range dev.Exact {
			if dev.Exact[k].ByLength == nil {
				dev.Exact[k].ByLength = map[int][]devices.Effect{}
			}
			dev.Exact[k].ByLength[m] = other.Exact[k].Effects
		}
	}
}
