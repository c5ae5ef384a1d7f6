package live

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/report"
)

// The user targets a live home offers (Home Assistant's number and select
// entities): an EV's charge to reach, in % of its battery, and the time
// it leaves; a home battery's reserve, in %, that it keeps in every slot.
const (
	TargetPct  = "target_pct"
	Departure  = "departure"
	ReservePct = "reserve_pct"
)

// ReserveRule ends the text of the rule a battery's reserve becomes, by
// which energy homes (which take no rules in every slot) find it.
const ReserveRule = " (reserve)"

// Default EV targets where neither the file's goal nor the user gives one.
const (
	defaultTargetPct = 80
	defaultDeparture = "07:00"
)

// TargetStateTopic is P/home/H/target/D/<target>: the value in effect,
// retained, published by the home.
func TargetStateTopic(prefix, home, device, target string) string {
	return prefix + "/" + levelHome + "/" + home + "/target/" + device + "/" + target
}

// Targets are the targets of home hi of cfg.
func Targets(cfg *config.Config, prefix string, hi int) []report.Target {
	n := cfg.Neighbourhood
	home := n.Homes[hi].Name
	var out []report.Target
	t := func(dl config.DeviceLive, name, label string) report.Target {
		return report.Target{Device: dl.Device, Name: name, Label: dl.Device + " " + label,
			CommandTopic: SetTopic(prefix, home, dl.Device, name), StateTopic: TargetStateTopic(prefix, home, dl.Device, name)}
	}
	for _, dl := range cfg.Devices[hi] {
		switch {
		case dl.EV:
			pct := t(dl, TargetPct, "target charge")
			pct.Min, pct.Max, pct.Step, pct.Unit = 0, 100, 5, "%"
			dep := t(dl, Departure, "departure")
			for m := 0; m < 1440; m += n.Horizon.SlotMinutes {
				dep.Options = append(dep.Options, fmt.Sprintf("%02d:%02d", m/60, m%60))
			}
			out = append(out, pct, dep)
		case dl.Property != "":
			r := t(dl, ReservePct, "reserve")
			r.Min, r.Max, r.Step, r.Unit = 0, 100, 5, "%"
			out = append(out, r)
		}
	}
	return out
}

// CheckTarget validates a value sent for a target and returns it as the
// home publishes it.
func CheckTarget(t report.Target, payload []byte) (string, error) {
	s := strings.TrimSpace(string(payload))
	if len(t.Options) > 0 {
		// Home Assistant's time format HH:MM:SS is taken too.
		if len(s) == 8 && strings.HasSuffix(s, ":00") {
			s = s[:5]
		}
		if !slices.Contains(t.Options, s) {
			return "", fmt.Errorf("%s: %.20q is not one of the slot boundaries (%s, %s, …)", t.Name, s, t.Options[0], t.Options[min(1, len(t.Options)-1)])
		}
		return s, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || v < t.Min || v > t.Max {
		return "", fmt.Errorf("%s: %.20q is not a number from %g to %g", t.Name, s, t.Min, t.Max)
	}
	return strconv.FormatFloat(v, 'f', -1, 64), nil
}

// applyTargets puts home h's targets for device dl into its rules: an
// EV's goal becomes "charge geq PCT% before DEPARTURE" (from the user's
// values, else the file's goal, else 80% before 07:00), a battery's
// reserve a rule that holds in every slot.
func (in *Inputs) applyTargets(h *devices.Home, dl config.DeviceLive, loc string, hz Horizon) {
	get := func(name string) (string, bool) {
		v, ok := in.targets[[3]string{h.Name, dl.Device, name}]
		return v, ok
	}
	switch {
	case dl.EV:
		pctS, okP := get(TargetPct)
		dep, okD := get(Departure)
		if !okP && !okD {
			return
		}
		pct, dept := float64(defaultTargetPct), defaultDeparture
		var keep []devices.Rule
		for _, r := range h.Rules {
			if r.Location == loc && r.Property == dl.Property && !isBound(r) {
				if r.Rel == devices.Geq && r.Prefix == devices.Before && dl.Full > 0 {
					pct = r.Goal / dl.Full * 100
					m := hz.Start.Hour()*60 + hz.Start.Minute() + int(hz.offset(r.T1)/time.Minute)
					dept = fmt.Sprintf("%02d:%02d", m%1440/60, m%60)
				}
				continue
			}
			keep = append(keep, r)
		}
		if okP {
			pct, _ = strconv.ParseFloat(pctS, 64)
		}
		if okD {
			dept = dep
		}
		b, ok := boundaryOf(dept, hz)
		if !ok {
			h.Rules = keep
			return
		}
		goal := snap(pct/100*dl.Full, dl.Resolution)
		r, err := devices.ParseRule(fmt.Sprintf("%s %s geq %s before %d", loc, dl.Property, fmtNum(goal), b), devices.RuleSyntax{})
		if err == nil {
			r.Text = fmt.Sprintf("%s geq %s%% before %s (target)", dl.Property, fmtNum(pct), dept)
			keep = append(keep, r)
		}
		h.Rules = keep
	case dl.Property != "":
		s, ok := get(ReservePct)
		if !ok {
			return
		}
		pct, _ := strconv.ParseFloat(s, 64)
		if pct <= 0 {
			return
		}
		goal := snap(pct/100*dl.Full, dl.Resolution)
		r, err := devices.ParseRule(fmt.Sprintf("%s %s geq %s", loc, dl.Property, fmtNum(goal)), devices.RuleSyntax{})
		if err == nil {
			r.Text = fmt.Sprintf("%s geq %s%%%s", dl.Property, fmtNum(pct), ReserveRule)
			h.Rules = append(h.Rules, r)
		}
	}
}

// boundaryOf is the slot boundary of the next clock time s ("HH:MM")
// after the horizon's start (a time equal to it is the next day's), and
// false past the horizon.
func boundaryOf(s string, hz Horizon) (int, bool) {
	var hh, mm int
	if _, err := fmt.Sscanf(s, "%d:%d", &hh, &mm); err != nil {
		return 0, false
	}
	slot := int(hz.Slot / time.Minute)
	if slot <= 0 {
		return 0, false
	}
	d := ((hh*60+mm-(hz.Start.Hour()*60+hz.Start.Minute()))%1440 + 1440) % 1440
	if d == 0 {
		d = 1440
	}
	if hz.Bounds != nil {
		// The first boundary at or after d.
		for b, o := range hz.Bounds {
			if o >= time.Duration(d)*time.Minute {
				return b, true
			}
		}
		return 0, false
	}
	b := (d + slot - 1) / slot
	return b, b <= hz.Slots
}
