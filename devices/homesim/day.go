package homesim

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/report"
)

// Day is the report of a simulated day: what each home and the street
// actually paid, drew and kept, and, where given, the same figures of
// reference plans (the plan made with perfect information, the homes
// planning alone). `hearth home-sim --json` prints it.
type Day struct {
	Street      string    `json:"street"`
	Start       time.Time `json:"start"`
	SlotMinutes int       `json:"slot_minutes"`
	// Minutes, on a horizon of uneven slots, gives each slot's length.
	Minutes  []int    `json:"minutes,omitempty"`
	Slots    []string `json:"slots"`
	Currency string   `json:"currency"`
	// Complete is true when every home simulated the whole day.
	Complete bool `json:"complete"`
	// Bill is the street's realised bill; PeakKW the greatest slot
	// average of its summed net draw, LoadKW that draw per slot.
	Bill       float64   `json:"bill"`
	PeakKW     float64   `json:"peak_kw"`
	LoadKW     []float64 `json:"load_kw"`
	ImportKWh  float64   `json:"import_kwh"`
	ExportKWh  float64   `json:"export_kwh"`
	GoalsMet   int       `json:"goals_met"`
	GoalsTotal int       `json:"goals_total"`
	// Refusals counts the commands refused or clamped (per device, slot
	// and reason).
	Refusals   int         `json:"refusals"`
	Homes      []HomeDay   `json:"homes"`
	References []Reference `json:"references,omitempty"`
}

// HomeDay is one home's day.
type HomeDay struct {
	Home       string    `json:"home"`
	Bill       float64   `json:"bill"`
	PeakKW     float64   `json:"peak_kw"`
	LoadKW     []float64 `json:"load_kw"`
	ImportKWh  float64   `json:"import_kwh"`
	ExportKWh  float64   `json:"export_kwh"`
	GoalsMet   int       `json:"goals_met"`
	GoalsTotal int       `json:"goals_total"`
	Goals      []Goal    `json:"goals"`
	Refusals   int       `json:"refusals"`
	Trace      *Trace    `json:"trace"`
}

// Reference is a plan's figures to compare the day with.
type Reference struct {
	// Name is "plan" (coordinated, with perfect information) or "alone"
	// (every home planning by itself).
	Name       string    `json:"name"`
	Bill       float64   `json:"bill"`
	PeakKW     float64   `json:"peak_kw"`
	LoadKW     []float64 `json:"load_kw"`
	GoalsMet   int       `json:"goals_met"`
	GoalsTotal int       `json:"goals_total"`
	Homes      []RefHome `json:"homes"`
}

// RefHome is one home's figures under a reference plan.
type RefHome struct {
	Home   string  `json:"home"`
	Bill   float64 `json:"bill"`
	PeakKW float64 `json:"peak_kw"`
}

// References returns the coordinated plan of a homes result and, where
// it carries one, the uncoordinated baseline, as references.
func References(h *report.Homes) []Reference {
	plan := Reference{Name: "plan", Bill: h.EnergyCost, PeakKW: h.PeakKW, LoadKW: h.LoadKW, GoalsMet: h.RulesSatisfied, GoalsTotal: h.RulesTotal}
	for _, s := range h.Schedules {
		plan.Homes = append(plan.Homes, RefHome{Home: s.Home, Bill: s.EnergyCost, PeakKW: s.PeakKW})
	}
	out := []Reference{plan}
	if u := h.Baselines.Uncoordinated; u != nil {
		alone := Reference{Name: "alone", Bill: u.EnergyCost, PeakKW: u.PeakKW, LoadKW: u.LoadKW, GoalsMet: u.RulesSatisfied, GoalsTotal: h.RulesTotal}
		for _, f := range u.Homes {
			alone.Homes = append(alone.Homes, RefHome{Home: f.Home, Bill: f.EnergyCost, PeakKW: f.PeakKW})
		}
		out = append(out, alone)
	}
	return out
}

// NewDay builds the report of traces, one per simulated home of n.
func NewDay(n *devices.Neighbourhood, traces []*Trace) *Day {
	hz := n.Horizon
	d := &Day{Street: n.Name, SlotMinutes: hz.SlotMinutes, Slots: report.SlotTimes(hz), Currency: n.Units.Currency,
		LoadKW: make([]float64, hz.Slots), Complete: len(traces) > 0}
	if hz.Uneven() {
		d.Minutes = slices.Clone(hz.Lengths)
	}
	if d.Currency == "" {
		d.Currency = "$"
	}
	for _, tr := range traces {
		hi := -1
		for i := range n.Homes {
			if n.Homes[i].Name == tr.Home {
				hi = i
			}
		}
		if hi < 0 {
			continue
		}
		d.Start = tr.Start
		d.Complete = d.Complete && tr.Complete()
		hd := HomeDay{Home: tr.Home, Trace: tr, LoadKW: make([]float64, hz.Slots)}
		for t, st := range tr.Slots {
			if st.SimulatedS > 0 {
				hd.LoadKW[t] = st.NetKWh / (st.SimulatedS / 3600)
				hd.PeakKW = math.Max(hd.PeakKW, hd.LoadKW[t])
			}
			d.LoadKW[t] += hd.LoadKW[t]
			hd.Bill += st.Bill
			hd.ImportKWh += st.ImportKWh
			hd.ExportKWh += st.ExportKWh
			for _, ds := range st.Devices {
				hd.Refusals += len(ds.Refused)
			}
		}
		hd.Goals = tr.Goals(hz, &n.Homes[hi])
		for _, g := range hd.Goals {
			if g.OK {
				hd.GoalsMet++
			}
		}
		hd.GoalsTotal = len(hd.Goals)
		d.Bill += hd.Bill
		d.ImportKWh += hd.ImportKWh
		d.ExportKWh += hd.ExportKWh
		d.GoalsMet += hd.GoalsMet
		d.GoalsTotal += hd.GoalsTotal
		d.Refusals += hd.Refusals
		d.Homes = append(d.Homes, hd)
	}
	for _, l := range d.LoadKW {
		d.PeakKW = math.Max(d.PeakKW, l)
	}
	return d
}

// JSON returns the report as indented JSON.
func (d *Day) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func (d *Day) reference(name string) *Reference {
	for i := range d.References {
		if d.References[i].Name == name {
			return &d.References[i]
		}
	}
	return nil
}

// WriteText writes the report people read: the street's realised bill,
// peak and goals against the references, the load per slot, and each
// home's figures and missed goals.
func (d *Day) WriteText(w io.Writer) error {
	var b strings.Builder
	span := ""
	if len(d.Slots) > 0 {
		mins := len(d.Slots) * d.SlotMinutes
		if d.Minutes != nil {
			mins = 0
			for _, m := range d.Minutes {
				mins += m
			}
		}
		end := d.Start.Add(time.Duration(mins) * time.Minute)
		span = fmt.Sprintf("%s – %s", d.Start.Format("Mon 2 Jan 15:04"), end.Format("Mon 2 Jan 15:04"))
	}
	lengths := fmt.Sprintf("%d min", d.SlotMinutes)
	if d.Minutes != nil {
		lengths = "different lengths, " + segments(d.Minutes)
	}
	fmt.Fprintf(&b, "%s: the day as it happened, %d homes, %s (%d slots of %s)\n", d.Street, len(d.Homes), span, len(d.Slots), lengths)
	if !d.Complete {
		b.WriteString("note: part of the day was not simulated; the figures cover what was\n")
	}
	refs := d.References
	fmt.Fprintf(&b, "\n%-16s%12s", "", "realised")
	for _, r := range refs {
		fmt.Fprintf(&b, "%12s", r.Name)
	}
	b.WriteString("\n")
	row := func(label string, v float64, f func(r *Reference) float64, format string) {
		fmt.Fprintf(&b, "%-16s%12s", label, fmt.Sprintf(format, v))
		for i := range refs {
			fmt.Fprintf(&b, "%12s", fmt.Sprintf(format, f(&refs[i])))
		}
		b.WriteString("\n")
	}
	row("bill ("+d.Currency+")", d.Bill, func(r *Reference) float64 { return r.Bill }, "%.2f")
	row("peak (kW)", d.PeakKW, func(r *Reference) float64 { return r.PeakKW }, "%.2f")
	fmt.Fprintf(&b, "%-16s%12s", "goals kept", fmt.Sprintf("%d/%d", d.GoalsMet, d.GoalsTotal))
	for _, r := range refs {
		fmt.Fprintf(&b, "%12s", fmt.Sprintf("%d/%d", r.GoalsMet, r.GoalsTotal))
	}
	fmt.Fprintf(&b, "\n%-16s%12d\n", "commands clamped", d.Refusals)
	if p := d.reference("plan"); p != nil && p.Bill != 0 {
		fmt.Fprintf(&b, "realised bill %+.1f%% against the plan", 100*(d.Bill-p.Bill)/math.Abs(p.Bill))
		if a := d.reference("alone"); a != nil && a.PeakKW > 0 {
			fmt.Fprintf(&b, "; realised peak %+.0f%% against the homes alone", 100*(d.PeakKW-a.PeakKW)/a.PeakKW)
		}
		b.WriteString("\n")
	}
	top := d.PeakKW
	for _, r := range refs {
		for _, l := range r.LoadKW {
			top = math.Max(top, l)
		}
	}
	fmt.Fprintf(&b, "\nstreet load (kW), scale 0–%.1f kW\n", top)
	fmt.Fprintf(&b, "  %-10s %s  peak %.2f\n", "realised", report.Sparkline(d.LoadKW, top), d.PeakKW)
	for _, r := range refs {
		fmt.Fprintf(&b, "  %-10s %s  peak %.2f\n", r.Name, report.Sparkline(r.LoadKW, top), r.PeakKW)
	}
	fmt.Fprintf(&b, "\n  %-6s%10s", "time", "realised")
	for _, r := range refs {
		fmt.Fprintf(&b, "%10s", r.Name)
	}
	b.WriteString("\n")
	for t, s := range d.Slots {
		fmt.Fprintf(&b, "  %-6s%10.2f", s, d.LoadKW[t])
		for _, r := range refs {
			v := math.NaN()
			if t < len(r.LoadKW) {
				v = r.LoadKW[t]
			}
			fmt.Fprintf(&b, "%10.2f", v)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	for _, h := range d.Homes {
		var bills, peaks []string
		for _, r := range refs {
			for _, rh := range r.Homes {
				if rh.Home == h.Home {
					bills = append(bills, fmt.Sprintf("%s %.2f", r.Name, rh.Bill))
					peaks = append(peaks, fmt.Sprintf("%s %.2f", r.Name, rh.PeakKW))
				}
			}
		}
		paren := func(l []string) string {
			if len(l) == 0 {
				return ""
			}
			return " (" + strings.Join(l, ", ") + ")"
		}
		fmt.Fprintf(&b, "%-10s pays %.2f %s%s  peak %.2f kW%s  goals %d/%d", h.Home, h.Bill, d.Currency, paren(bills), h.PeakKW, paren(peaks), h.GoalsMet, h.GoalsTotal)
		if h.Refusals > 0 {
			fmt.Fprintf(&b, "  %d commands clamped", h.Refusals)
		}
		b.WriteString("\n")
		for _, g := range h.Goals {
			switch {
			case !g.Observed:
				fmt.Fprintf(&b, "  not observed: %s\n", g.Rule)
			case !g.OK:
				fmt.Fprintf(&b, "  missed: %s (reached %.2f)\n", g.Rule, g.Value)
			}
		}
		h.writeDevices(&b, d.Slots)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeDevices prints each device's energy per slot (kWh, negative when
// it fed the home) under the slot times.
func (h *HomeDay) writeDevices(b *strings.Builder, slots []string) {
	tr := h.Trace
	if tr == nil || len(tr.Slots) == 0 {
		return
	}
	fmt.Fprintf(b, "  %-12s", "")
	for _, s := range slots {
		fmt.Fprintf(b, "%6s", strings.SplitN(s, ":", 2)[0])
	}
	b.WriteString("\n")
	names := make([]string, len(tr.Slots[0].Devices))
	for d, ds := range tr.Slots[0].Devices {
		names[d] = ds.Device
	}
	for d, name := range names {
		fmt.Fprintf(b, "  %-12s", clip(name, 12))
		for _, st := range tr.Slots {
			e := st.Devices[d].InKWh - st.Devices[d].OutKWh
			if math.Abs(e) < 0.005 {
				fmt.Fprintf(b, "%6s", "·")
			} else {
				fmt.Fprintf(b, "%6.1f", e)
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "  %-12s", "kW")
	for _, l := range h.LoadKW {
		fmt.Fprintf(b, "%6.1f", l)
	}
	b.WriteString("\n")
	var props []string
	for _, p := range tr.Properties {
		if len(p.Values) > 0 {
			props = append(props, fmt.Sprintf("%s %s %.1f→%.1f", p.Location, p.Name, p.Values[max(tr.From, 0)], p.Values[max(tr.To, 0)]))
		}
	}
	sort.Strings(props)
	if len(props) > 0 {
		fmt.Fprintf(b, "  %s\n", strings.Join(props, "; "))
	}
	b.WriteString("\n")
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// segments writes slot lengths in minutes as runs, "4×15 + 20×60 min".
func segments(mins []int) string {
	var parts []string
	for i := 0; i < len(mins); {
		j := i
		for j < len(mins) && mins[j] == mins[i] {
			j++
		}
		parts = append(parts, fmt.Sprintf("%d×%d", j-i, mins[i]))
		i = j
	}
	return strings.Join(parts, " + ") + " min"
}
