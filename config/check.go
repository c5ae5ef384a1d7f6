package config

import (
	"errors"
	"fmt"

	"github.com/hearth-dcop/hearth/devices"
)

// check runs the model's own validation and the static feasibility
// analysis, and reports their faults at the keys they came from.
func (l *loader) check(src *source, nk nbKeys, n *devices.Neighbourhood, srcs []*homeSrc) {
	if err := n.Validate(); err != nil {
		l.report(src, nk, n, srcs, err)
		return
	}
	// A rolling horizon's rules are checked once the live state is in
	// (internal/live): the file's initial values need not hold now.
	for hi := range n.Homes {
		if l.opts.Rolling {
			break
		}
		for _, err := range n.Homes[hi].Check(n.Horizon, 0) {
			l.report(src, nk, n, srcs, err)
		}
	}
	if n.FeederLimit > 0 {
		// A limit over more homes than one table holds is split into
		// per-home budgets by the compiler (devices/compile).
		for w, win := range n.Windows {
			lo := 0.0
			for hi := range n.Homes {
				lo += n.LevelCaps(hi, w)[0]
			}
			if !devices.Fits(lo, n.FeederLimit) && !n.FeederSoft {
				src.infeasiblef("feeder.limit_kw", "in window %d (slots %d–%d) the homes cannot draw less than %.2f kW together, above the limit %g kW; raise the limit or move load out of the window", w, win.From, win.To, lo, n.FeederLimit)
			}
		}
	}
}

// report turns model errors into configuration errors.
func (l *loader) report(src *source, nk nbKeys, n *devices.Neighbourhood, srcs []*homeSrc, err error) {
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	} else {
		list = []error{err}
	}
	for _, e := range list {
		var de *devices.Error
		if !errors.As(e, &de) {
			src.errorf("", "%v", e)
			continue
		}
		errorf := (*source).errorf
		if de.Infeasible {
			errorf = (*source).infeasiblef
		}
		if de.Home == "" {
			errorf(src, nbKey(nk, de), "%s", de.Msg)
			continue
		}
		hi := -1
		for i := range n.Homes {
			if n.Homes[i].Name == de.Home {
				hi = i
				break
			}
		}
		if hi < 0 {
			errorf(src, "", "%v", de)
			continue
		}
		hs := srcs[hi]
		errorf(hs.src, homeKey(hs, de), "%s", de.Msg)
	}
}

func pick(keys []string, i int, def string) string {
	if i >= 0 && i < len(keys) {
		return keys[i]
	}
	return def
}

func homeKey(hs *homeSrc, e *devices.Error) string {
	switch e.Part {
	case devices.PartRule:
		return pick(hs.rules, e.Index, hs.key("rules"))
	case devices.PartDevice:
		return pick(hs.devices, e.Index, hs.key("device"))
	case devices.PartProperty:
		return pick(hs.props, e.Index, hs.path)
	case devices.PartBackground:
		return hs.key("background_kw")
	case devices.PartPrices:
		return hs.key("prices") // the home's own tariff or grid
	case devices.PartHome:
		return hs.key("name")
	}
	return hs.path
}

func nbKey(nk nbKeys, e *devices.Error) string {
	switch e.Part {
	case devices.PartWindow:
		return pick(nk.windows, e.Index, "coordination")
	case devices.PartPrices:
		return "prices"
	case devices.PartLevels:
		return "coordination.levels"
	case devices.PartFeeder:
		return "feeder.limit_kw"
	case devices.PartLinks:
		return fmt.Sprintf("neighbours[%d]", max(e.Index, 0))
	case devices.PartWeights:
		return "objective"
	}
	return string(e.Part)
}
