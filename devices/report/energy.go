package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// EnergyStreet is the part of a result about a street's energy homes
// (planner = "energy": devices/energy plans them, devices/street
// coordinates them with the street on the load that flows, and
// devices/plancheck has accepted every plan).
type EnergyStreet struct {
	Homes []EnergyHome `json:"homes"`
	// Rounds of best responses and the Moves adopted in them.
	Rounds int `json:"rounds"`
	Moves  int `json:"moves"`
	// LoadKW is the whole street's import per slot (the compiled homes'
	// positive draw plus the energy homes' import) and PeakKW its
	// highest; AlonePeakKW that with the energy homes planned alone.
	LoadKW      []float64 `json:"load_kw"`
	PeakKW      float64   `json:"peak_kw"`
	AlonePeakKW float64   `json:"alone_peak_kw"`
	// Objective is the energy homes' costs plus the peak term on the
	// street's import, after coordination; AloneObjective before it.
	Objective      float64 `json:"objective"`
	AloneObjective float64 `json:"alone_objective"`
	// FeederLimitKW is the [feeder] limit (0: none); CommittedKW the
	// whole street's committed caps per coordination window — the
	// compiled homes' levels and each energy home's highest import there
	// — and FeederExcessKW by how much they exceed the limit per window
	// (omitted where they keep it), as devices/plancheck.CheckFeeder
	// measured them.
	FeederLimitKW  float64   `json:"feeder_limit_kw,omitempty"`
	CommittedKW    []float64 `json:"committed_kw,omitempty"`
	FeederExcessKW []float64 `json:"feeder_excess_kw,omitempty"`
}

// EnergyHome is one energy home's plan.
type EnergyHome struct {
	Home string `json:"home"`
	// Bill is import cost − export revenue + demand charge (currency);
	// AloneBill that of the home's plan made alone, and SavedVsAlone
	// AloneBill − Bill (negative: coordination cost the home money).
	Bill         float64 `json:"bill"`
	AloneBill    float64 `json:"alone_bill"`
	SavedVsAlone float64 `json:"saved_vs_alone"`
	// StoredValue is the worth of the energy left at the end.
	StoredValue float64 `json:"stored_value"`
	// PeakKW is the home's highest import, AlonePeakKW planned alone.
	PeakKW      float64 `json:"peak_kw"`
	AlonePeakKW float64 `json:"alone_peak_kw"`
	// ImportKW and ExportKW are the meter per slot.
	ImportKW []float64 `json:"import_kw"`
	ExportKW []float64 `json:"export_kw"`
	Storage  []Storage `json:"storage"`
	// GoalsMissed are the soft goals the plan misses (kWh).
	GoalsMissed []GoalMissed `json:"goals_missed"`
	GoalsTotal  int          `json:"goals_total"`
	// OverLimitsKWh is the energy beyond the home's soft import and
	// export limits ([grid]), as a compiled home's.
	OverLimitsKWh float64 `json:"over_limits_kwh,omitempty"`
	// CommittedKW is what the home commits to per coordination window
	// under a feeder limit: its highest import there (kW).
	CommittedKW []float64 `json:"committed_kw,omitempty"`
}

// Storage is a battery's or EV's plan: power at the bus per slot
// (positive charging, negative discharging) and the stored energy at
// every slot boundary.
type Storage struct {
	Name      string    `json:"name"`
	PowerKW   []float64 `json:"power_kw"`
	EnergyKWh []float64 `json:"energy_kwh"`
}

// energyText prints the energy homes' section.
func (h *Homes) energyText(b *strings.Builder) {
	e := h.EnergyHomes
	if e == nil {
		return
	}
	cur := h.Currency
	fmt.Fprintf(b, "\nenergy homes (continuous power, devices/energy; every plan checked by devices/plancheck)\n")
	fmt.Fprintf(b, "street peak with them %.2f kW (%.2f kW with the energy homes planned alone); %d rounds of best responses, %d moves\n", e.PeakKW, e.AlonePeakKW, e.Rounds, e.Moves)
	fmt.Fprintf(b, "street load (kW) %s\n", Sparkline(e.LoadKW, e.PeakKW))
	if e.FeederLimitKW > 0 {
		state := "kept in every window"
		if e.FeederExcessKW != nil {
			var over []string
			for w, x := range e.FeederExcessKW {
				if x > 0 {
					over = append(over, fmt.Sprintf("window %d by %.2f kW", w, x))
				}
			}
			state = "EXCEEDED in " + strings.Join(over, ", ")
		}
		fmt.Fprintf(b, "feeder limit %.2f kW on the committed caps, energy homes included: %s (kW per window: %s)\n", e.FeederLimitKW, state, kwList(e.CommittedKW))
	}
	labels, cw := columnLabels(h.Slots)
	name := 6
	for _, p := range e.Homes {
		for _, s := range p.Storage {
			name = max(name, min(utf8.RuneCountInString(s.Name), 24))
		}
	}
	for _, p := range e.Homes {
		kept := p.GoalsTotal - len(p.GoalsMissed)
		fmt.Fprintf(b, "\n%s  pays %.2f %s (alone %.2f, saved %+.2f)  peak %.2f kW (alone %.2f)  goals %d/%d\n", p.Home, p.Bill, cur, p.AloneBill, p.SavedVsAlone, p.PeakKW, p.AlonePeakKW, kept, p.GoalsTotal)
		fmt.Fprintf(b, "  %-*s", name, "")
		for _, l := range labels {
			fmt.Fprintf(b, "%*s", cw, l)
		}
		b.WriteString("\n")
		for _, s := range p.Storage {
			fmt.Fprintf(b, "  %-*s", name, clip(s.Name, name))
			for _, v := range s.PowerKW {
				fmt.Fprintf(b, "%*s", cw, shortKW(v))
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(b, "  %-*s", name, "kW")
		for t := range p.ImportKW {
			fmt.Fprintf(b, "%*s", cw, shortKW(p.ImportKW[t]-p.ExportKW[t]))
		}
		b.WriteString("\n")
		for _, s := range p.Storage {
			fmt.Fprintf(b, "  %s %.1f→%.1f kWh\n", s.Name, s.EnergyKWh[0], s.EnergyKWh[len(s.EnergyKWh)-1])
		}
		for _, g := range p.GoalsMissed {
			fmt.Fprintf(b, "  MISSED: %s, by %s\n", g.Rule, amount(g.Missed, g.Unit))
		}
		if p.CommittedKW != nil {
			fmt.Fprintf(b, "  commits (highest import per window) %s kW\n", kwList(p.CommittedKW))
		}
		if p.OverLimitsKWh > 0 {
			fmt.Fprintf(b, "  OVER LIMITS: %.2f kWh beyond the home's import or export limit\n", p.OverLimitsKWh)
		}
	}
}

// kwList prints powers as "1.20, 3.40".
func kwList(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(s, ", ")
}

// shortKW is short for continuous powers: what rounds to 0.0 prints as
// 0.0, never -0.0.
func shortKW(v float64) string {
	if math.Abs(v) < 0.05 {
		v = 0
	}
	return short(v)
}

// energyOnlyText prints a street of energy homes only.
func (h *Homes) energyOnlyText(b *strings.Builder) {
	fmt.Fprintf(b, "%s: %d energy homes, %s, %s\n", h.Neighbourhood, len(h.EnergyHomes.Homes), h.slotsText(), h.span())
	h.energyText(b)
	h.chartList(b)
	for _, n := range h.Notes {
		fmt.Fprintf(b, "note: %s\n", n)
	}
}

// slotHours is slot t's length in hours.
func (h *Homes) slotHours(t int) float64 {
	if t < len(h.SlotLengths) {
		return float64(h.SlotLengths[t]) / 60
	}
	return float64(h.SlotMinutes) / 60
}

// energyRows adds the energy homes' rows to the schedule and homes
// tables of WriteCSV.
func (h *Homes) energyRows(sched, homes [][]string) ([][]string, [][]string) {
	e := h.EnergyHomes
	if e == nil {
		return sched, homes
	}
	for _, p := range e.Homes {
		for _, s := range p.Storage {
			for t, v := range s.PowerKW {
				act := "idle"
				switch {
				case v > 0:
					act = "charge"
				case v < 0:
					act = "discharge"
				}
				sched = append(sched, []string{p.Home, s.Name, strconv.Itoa(t), act, num(v), h.slotStart(t)})
			}
		}
		kwh := 0.0
		for t := range p.ImportKW {
			kwh += (p.ImportKW[t] - p.ExportKW[t]) * h.slotHours(t)
		}
		homes = append(homes, []string{p.Home, num(kwh), num(p.Bill), num(p.PeakKW), strconv.Itoa(p.GoalsTotal - len(p.GoalsMissed)), strconv.Itoa(p.GoalsTotal)})
	}
	return sched, homes
}

// energySeries is NAME-energy.csv's rows (EnergyHeader).
func (h *Homes) energySeries() [][]string {
	e := h.EnergyHomes
	var rows [][]string
	for t, v := range e.LoadKW {
		rows = append(rows, []string{"street", "load", strconv.Itoa(t), num(v), "", h.slotStart(t)})
	}
	for _, p := range e.Homes {
		for t := range p.ImportKW {
			rows = append(rows, []string{p.Home, "meter", strconv.Itoa(t), num(p.ImportKW[t] - p.ExportKW[t]), "", h.slotStart(t)})
		}
		for _, s := range p.Storage {
			for t, v := range s.PowerKW {
				rows = append(rows, []string{p.Home, s.Name, strconv.Itoa(t), num(v), num(s.EnergyKWh[t+1]), h.slotStart(t)})
			}
		}
	}
	return rows
}

// NetKW returns home p's meter per slot: import − export (kW, negative
// where it feeds back).
func (p *EnergyHome) NetKW() []float64 {
	out := make([]float64, len(p.ImportKW))
	for t := range out {
		out[t] = p.ImportKW[t] - p.ExportKW[t]
	}
	return out
}
