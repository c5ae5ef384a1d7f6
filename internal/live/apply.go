package live

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/homesolve"
)

// Horizon is the rolling horizon of a round: slot 0 starts at Start, the
// start of the slot that holds the round's instant.
type Horizon struct {
	Start time.Time
	// Slot is slot 0's length, by which rounds move; every slot's where
	// Bounds is nil.
	Slot  time.Duration
	Slots int
	// Bounds, for slots of different lengths ([horizon] segments, laid
	// from slot 0 every round), holds each boundary's offset from Start
	// (Slots+1 of them); nil when every slot lasts Slot.
	Bounds []time.Duration
}

// NewHorizon returns the rolling horizon of hz whose slot 0 starts at
// start.
func NewHorizon(start time.Time, hz devices.Horizon) Horizon {
	h := Horizon{Start: start, Slot: time.Duration(hz.SlotMinutes) * time.Minute, Slots: hz.Slots}
	if hz.Uneven() {
		h.Bounds = make([]time.Duration, hz.Slots+1)
		for t := range hz.Slots {
			h.Bounds[t+1] = h.Bounds[t] + time.Duration(hz.Minutes(t))*time.Minute
		}
	}
	return h
}

// offset returns boundary b's offset from Start.
func (h Horizon) offset(b int) time.Duration {
	if h.Bounds != nil {
		return h.Bounds[b]
	}
	return time.Duration(b) * h.Slot
}

// Times returns slot t's start and end.
func (h Horizon) Times(t int) (time.Time, time.Time) {
	return h.Start.Add(h.offset(t)), h.Start.Add(h.offset(t + 1))
}

// End returns the end of the horizon's last slot.
func (h Horizon) End() time.Time { return h.Start.Add(h.offset(h.Slots)) }

// SlotOf returns the index of the slot that holds t, and false outside
// the horizon.
func (h Horizon) SlotOf(t time.Time) (int, bool) {
	if t.Before(h.Start) || h.Slot <= 0 {
		return 0, false
	}
	if h.Bounds != nil {
		d := t.Sub(h.Start)
		for k := range h.Slots {
			if d < h.Bounds[k+1] {
				return k, true
			}
		}
		return h.Slots, false
	}
	k := int(t.Sub(h.Start) / h.Slot)
	return k, k < h.Slots
}

// Note is something the inputs of a round say that the user should know:
// a stale or missing reading, a goal left out.
type Note struct {
	Msg  string
	Args []any
}

// Load builds the neighbourhood of a round planned from instant at: the
// files read with slot 0 moved to the slot that holds at
// (config.LoadWith), every home's device state and series put in, and
// compiled (homesolve.FromConfig). Goals that the live state makes
// impossible (a car plugged in too late to reach its target by its
// departure) are left out, the same in every home's process, so that the
// plan goes ahead; the notes say which.
func (in *Inputs) Load(path string, o homesolve.Overrides, at time.Time) (*homesolve.Run, Horizon, []Note, error) {
	cfg, hz, notes, err := in.LoadConfig(path, at)
	if err != nil {
		return nil, hz, notes, err
	}
	for range 8 {
		r, err := homesolve.FromConfig(path, cfg, o)
		if err == nil {
			return r, hz, notes, nil
		}
		dropped := dropInfeasible(cfg.Neighbourhood, err)
		if len(dropped) == 0 {
			return nil, hz, notes, err
		}
		for _, d := range dropped {
			notes = append(notes, Note{Msg: "goal out of reach from the live state; " + d[2], Args: []any{"home", d[0], "rule", d[1]}})
		}
	}
	return nil, hz, notes, errors.New("goals out of reach could not be left out")
}

// LoadConfig is Load without the compiling: the files read on the rolling
// horizon from the slot that holds at, with every home's live inputs put
// in. Energy homes (planner = "energy") are planned from it, not
// compiled; an EV that is away carries the rule AwayRule marks.
func (in *Inputs) LoadConfig(path string, at time.Time) (*config.Config, Horizon, []Note, error) {
	// Clock times in the files are local, whatever zone the request's
	// "at" was written in.
	at = at.Local()
	// The slots are aligned by the length the home started with; a file
	// edited to another length takes it from this load on.
	start := SlotStart(at, time.Duration(in.cfg.Neighbourhood.Horizon.SlotMinutes)*time.Minute)
	cfg, err := config.LoadWith(path, config.LoadOptions{Rolling: true, Start: start.Hour()*60 + start.Minute()})
	if err != nil {
		return nil, Horizon{}, nil, err
	}
	slot := time.Duration(cfg.Neighbourhood.Horizon.SlotMinutes) * time.Minute
	if s := SlotStart(at, slot); !s.Equal(start) {
		if cfg, err = config.LoadWith(path, config.LoadOptions{Rolling: true, Start: s.Hour()*60 + s.Minute()}); err != nil {
			return nil, Horizon{}, nil, err
		}
		start = s
	}
	hz := NewHorizon(start, cfg.Neighbourhood.Horizon)
	notes := in.readFiles(cfg)
	notes = append(notes, in.apply(cfg, hz, in.clock.Now())...)
	return cfg, hz, notes, nil
}

// AwayRule ends the text of the rule that keeps an away EV's charge where
// it is (no goal on it applies while it is away).
const AwayRule = " (away: no charging)"

// dropInfeasible relaxes or removes the rules err names as infeasible
// and returns them as (home, rule text, what became of it). A goal to
// reach at least a value (geq, gt) is lowered to what the home's devices
// can reach by its time at full power (a car that came home late is
// charged as far as it can be by its departure); another goal, or one
// already relaxed, is left out.
func dropInfeasible(n *devices.Neighbourhood, err error) [][3]string {
	var errs []*devices.Error
	var walk func(error)
	walk = func(e error) {
		var de *devices.Error
		if errors.As(e, &de) && de.Infeasible && de.Part == devices.PartRule {
			errs = append(errs, de)
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
		} else if u := errors.Unwrap(e); u != nil && !errors.As(e, &de) {
			walk(u)
		}
	}
	walk(err)
	byHome := map[string][]int{}
	for _, de := range errs {
		byHome[de.Home] = append(byHome[de.Home], de.Index)
	}
	var out [][3]string
	for hi := range n.Homes {
		h := &n.Homes[hi]
		idx := byHome[h.Name]
		if len(idx) == 0 {
			continue
		}
		var keep []devices.Rule
		for ri, r := range h.Rules {
			if !slices.Contains(idx, ri) || isBound(r) {
				keep = append(keep, r)
				continue
			}
			if g, ok := reachable(n.Horizon, h, r); ok {
				text, _, _ := strings.Cut(r.Text, " "+relaxedMark)
				r.Goal = g
				r.Text = fmt.Sprintf("%s %s%s: out of reach)", text, relaxedMark, fmtNum(g))
				keep = append(keep, r)
				out = append(out, [3]string{h.Name, text, "relaxed to " + fmtNum(g)})
				continue
			}
			out = append(out, [3]string{h.Name, r.Text, "left out of this round"})
		}
		h.Rules = keep
	}
	return out
}

// relaxedMark marks a relaxed goal's text.
const relaxedMark = "(relaxed to "

// reachable is the most a geq/gt goal's property can reach by the goal's
// time from its initial value, every device that raises it at its
// greatest effect in every slot, rounded down to the property's step. A
// goal already relaxed that is still out of reach (the devices' steps
// cannot land on it without passing the property's bound) is lowered by
// one slot's greatest effect more. ok is false for other goals and when
// nothing above the initial value is reachable.
func reachable(hz devices.Horizon, h *devices.Home, r devices.Rule) (float64, bool) {
	if r.Rel != devices.Geq && r.Rel != devices.Gt {
		return 0, false
	}
	pi := h.Property(r.Location, r.Property)
	if pi < 0 {
		return 0, false
	}
	p := h.Properties[pi]
	// per(t) is the most the property can rise in slot t (its length's
	// drift and effects on a horizon of uneven slots).
	per := func(t int) float64 {
		v := p.DriftIn(hz, t)
		for d := range h.Devices {
			dev := &h.Devices[d]
			if !dev.Affects(r.Location, r.Property) {
				continue
			}
			best := 0.0
			for _, a := range dev.Actions {
				if e, ok := a.EffectIn(r.Property, hz, t); ok {
					best = math.Max(best, e)
				}
			}
			v += best
		}
		return v
	}
	v := p.Initial + per(0)*float64(r.T1)
	if hz.Uneven() {
		v = p.Initial
		for t := range min(r.T1, hz.Slots) {
			v += per(t)
		}
	}
	if strings.Contains(r.Text, relaxedMark) {
		v = r.Goal - math.Max(per(0), 0)
	}
	for _, b := range h.Rules {
		if isBound(b) && b.Location == r.Location && b.Property == r.Property && (b.Rel == devices.Leq || b.Rel == devices.Lt) {
			v = math.Min(v, b.Goal)
		}
	}
	step := p.Scale
	if step <= 0 {
		step = 0.1
	}
	v = math.Floor(v/step-1e-9) * step
	if r.Rel == devices.Gt {
		v -= step
	}
	if v <= p.Initial+1e-9 {
		return 0, false
	}
	return v, true
}

// isBound reports whether a rule is a catalogue device's physical bound,
// which no live state can make impossible and which is never left out.
func isBound(r devices.Rule) bool { return strings.Contains(r.Text, "(bound of ") }

// apply puts the inputs into cfg's neighbourhood for horizon hz, as of
// now; it returns the notes (stale and missing readings, reported once
// until the reading is good again).
func (in *Inputs) apply(cfg *config.Config, hz Horizon, now time.Time) []Note {
	in.mu.Lock()
	defer in.mu.Unlock()
	var notes []Note
	n := cfg.Neighbourhood
	slotTimes := hz.Times
	// A published series, else the file's.
	get := func(topic string, k config.SeriesKey) (Series, bool) {
		if s, ok := in.series[topic]; ok {
			return s, true
		}
		s, ok := in.files[cfg.SeriesFiles[k]]
		return s, ok && cfg.SeriesFiles[k] != ""
	}
	fill := func(dst []float64, topic string, k config.SeriesKey) bool {
		s, ok := get(topic, k)
		if !ok {
			return false
		}
		used := false
		for t := range dst {
			if v, ok := s.Mean(slotTimes(t)); ok {
				dst[t], used = v, true
			}
		}
		return used
	}
	fill(n.Prices, PriceTopic(in.prefix, "import"), config.SeriesKey{What: "import"})
	if s, ok := get(PriceTopic(in.prefix, "export"), config.SeriesKey{What: "export"}); ok {
		if n.ExportPrices == nil {
			n.ExportPrices = slices.Clone(n.Prices)
		}
		for t := range n.ExportPrices {
			if v, ok := s.Mean(slotTimes(t)); ok {
				n.ExportPrices[t] = v
			}
		}
	}
	// An export price above the import price would pay a home to import
	// and export at once; the model refuses it, so cap it.
	for t := range n.ExportPrices {
		n.ExportPrices[t] = math.Min(n.ExportPrices[t], n.Prices[t])
	}
	for hi := range n.Homes {
		in.applyHomePrices(n, hi, slotTimes)
		h := &n.Homes[hi]
		pv := cfg.PV[hi]
		if pv == nil {
			pv = make([]float64, len(h.Background))
		}
		base := make([]float64, len(h.Background))
		for t := range base {
			base[t] = h.Background[t] + pv[t]
		}
		newPV := slices.Clone(pv)
		changed := fill(base, ForecastTopic(in.prefix, h.Name, "background"), config.SeriesKey{Home: h.Name, What: "background"})
		if fill(newPV, ForecastTopic(in.prefix, h.Name, "pv"), config.SeriesKey{Home: h.Name, What: "pv"}) {
			changed = true
			for t := range newPV {
				newPV[t] = math.Max(newPV[t], 0)
			}
			// Energy homes read the forecast itself (street.FromHome).
			cfg.PV[hi] = newPV
		}
		if changed {
			for t := range base {
				h.Background[t] = base[t] - newPV[t]
			}
			if h.Meter != nil && h.Meter.Curtail != nil {
				m := *h.Meter     // a copy: the file's meter may be shared
				m.Curtail = newPV // curtailable PV follows its forecast
				h.Meter = &m
			}
		}
		for _, dl := range cfg.Devices[hi] {
			notes = in.applyDevice(cfg, h, dl, hz, now, notes)
		}
		notes = in.applyProps(cfg, h, now, notes)
	}
	return notes
}

// applyDevice puts a device's stored energy and plugged state into h.
func (in *Inputs) applyDevice(cfg *config.Config, h *devices.Home, dl config.DeviceLive, hz Horizon, now time.Time, notes []Note) []Note {
	di := slices.IndexFunc(h.Devices, func(d devices.Device) bool { return d.Name == dl.Device })
	if di < 0 || dl.Property == "" {
		return notes
	}
	loc := h.Devices[di].Location
	pi := h.Property(loc, dl.Property)
	if pi < 0 {
		return notes
	}
	in.applyTargets(h, dl, loc, hz)
	p := &h.Properties[pi]
	k := key{h.Name, dl.Device, "soc"}
	if r, ok := in.readings[k]; ok {
		age := now.Sub(r.at)
		switch {
		case age <= cfg.Live.Stale:
			p.Initial = snap(in.ahead(cfg, h, di, pi, dl, r, hz.Start), p.Scale)
		case age <= cfg.Live.Forget:
			p.Initial = snap(in.ahead(cfg, h, di, pi, dl, r, hz.Start), p.Scale)
			if !r.reported {
				r.reported = true
				notes = append(notes, Note{Msg: "live state stale; planning from the last good value", Args: []any{"home", h.Name, "device", dl.Device, "value", r.v, "age", age.Round(time.Second).String()}})
			}
		case !in.missing[k]:
			in.missing[k] = true
			notes = append(notes, Note{Msg: "live state too old; planning from the file's value", Args: []any{"home", h.Name, "device", dl.Device, "age", age.Round(time.Second).String(), "file", p.Initial}})
		}
	} else if !in.missing[k] {
		in.missing[k] = true
		notes = append(notes, Note{Msg: "no live state yet; planning from the file's value", Args: []any{"home", h.Name, "device", dl.Device, "topic", in.sourceTopic(h.Name, dl), "file", p.Initial}})
	}
	if !dl.EV {
		return notes
	}
	pk := key{h.Name, dl.Device, "plugged"}
	r, ok := in.readings[pk]
	if !ok || now.Sub(r.at) > cfg.Live.Forget {
		return notes
	}
	if d := &h.Devices[di]; d.Plug != nil && len(h.Background) > 0 {
		// A plugged-in window ([[device]] arrival, departure) is the
		// forecast of the slots ahead; the live state wins for the
		// current one, slot 0. A car home before the window's arrival
		// stays until its departure: the slots the window has it away
		// from now to that arrival are plugged in.
		away := make([]bool, len(h.Background))
		copy(away, d.Away)
		if r.plugged {
			t := 0
			for ; t < len(away) && away[t]; t++ {
				away[t] = false
			}
			if _, ok := p.Reset[t]; ok && t > 0 {
				// Home already, with the charge read live: that
				// arrival's charge is not planned.
				p.Reset = maps.Clone(p.Reset)
				delete(p.Reset, t)
			}
		} else {
			away[0] = true
		}
		d.Away = away
		return notes
	}
	if r.plugged {
		return notes
	}
	// The car is away: no goal on its charge applies to this plan, and
	// the charge cannot grow.
	var keep []devices.Rule
	for _, rule := range h.Rules {
		if rule.Location == loc && rule.Property == dl.Property && !isBound(rule) {
			continue
		}
		keep = append(keep, rule)
	}
	stay, err := devices.ParseRule(fmt.Sprintf("%s %s leq %s", loc, dl.Property, fmtNum(p.Initial)), devices.RuleSyntax{})
	if err == nil {
		stay.Text += AwayRule
		keep = append(keep, stay)
	}
	h.Rules = keep
	return notes
}

// ahead returns the stored energy of reading r of device di (property
// pi of h) carried on to start, slot 0's start, where r was read before
// it: a round started ahead of its boundary reads the state then
// (README, "Live homes"), while the device goes on running the command
// of its current slot until the boundary — at full power, the last
// quarter of an hour of an 11 kW wallbox is 2.5 kWh. The energy the
// command's action moves in that time (the model's figure, per slot of
// the file's length) is added, within the property's range; a car that
// is away, or a device whose command does not cover the reading, is
// left where it was read. Every home reads every home's commands
// (retained), so every home carries a reading on alike.
func (in *Inputs) ahead(cfg *config.Config, h *devices.Home, di, pi int, dl config.DeviceLive, r *reading, start time.Time) float64 {
	v := r.v
	c, ok := in.running[key{h.Name, dl.Device, "command"}]
	if !ok || !r.at.Before(start) || r.at.Before(c.start) || !r.at.Before(c.end) {
		return v
	}
	if pr, ok := in.readings[key{h.Name, dl.Device, "plugged"}]; dl.EV && ok && !pr.plugged {
		return v
	}
	dev := &h.Devices[di]
	byName := func(a devices.Action) bool { return a.Name == c.action }
	var act *devices.Action
	if ai := slices.IndexFunc(dev.Actions, byName); ai >= 0 {
		act = &dev.Actions[ai]
	} else if ai := slices.IndexFunc(dev.Exact, byName); ai >= 0 {
		act = &dev.Exact[ai]
	}
	slotH := float64(cfg.Neighbourhood.Horizon.SlotMinutes) / 60
	if act == nil || slotH <= 0 {
		return v
	}
	prop := &h.Properties[pi]
	for _, e := range act.Effects {
		if e.Property == prop.Name {
			end := start
			if c.end.Before(end) {
				end = c.end
			}
			v += e.Delta / slotH * end.Sub(r.at).Hours()
		}
	}
	if prop.Min != nil {
		v = math.Max(v, *prop.Min)
	}
	if prop.Max != nil {
		v = math.Min(v, *prop.Max)
	}
	return v
}

func (in *Inputs) sourceTopic(home string, dl config.DeviceLive) string {
	if dl.SoC != nil {
		return dl.SoC.Topic
	}
	return StateTopic(in.prefix, home, dl.Device)
}

// snap rounds v to the property's resolution.
func snap(v, scale float64) float64 {
	if scale <= 0 {
		return v
	}
	return math.Round(v/scale) * scale
}

func fmtNum(v float64) string { return fmt.Sprintf("%.6g", v) }

// readFiles reads the series files of cfg (every round: a file edited
// between rounds applies to the next). A file that does not read is
// reported once per content and leaves the series out.
func (in *Inputs) readFiles(cfg *config.Config) []Note {
	in.mu.Lock()
	defer in.mu.Unlock()
	var notes []Note
	paths := make([]string, 0, len(cfg.SeriesFiles))
	for _, p := range cfg.SeriesFiles {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range slices.Compact(paths) {
		b, err := os.ReadFile(p)
		var s Series
		if err == nil {
			s, err = ParseSeriesCSV(b)
		}
		if err != nil {
			delete(in.files, p)
			if msg := err.Error(); in.fileErrs[p] != msg {
				in.fileErrs[p] = msg
				notes = append(notes, Note{Msg: "series file not read; the file's per-slot values stand", Args: []any{"file", p, "err", msg}})
			}
			continue
		}
		delete(in.fileErrs, p)
		in.files[p] = s
	}
	return notes
}
