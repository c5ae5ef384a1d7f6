package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hearth-dcop/hearth/mva"
)

// TextOptions tune the summary.
type TextOptions struct {
	// MaxHomes is the most homes whose schedule tables the summary
	// prints: a neighbourhood of more homes gets one line per home
	// instead, and the tables are on request (a negative MaxHomes, the
	// command line's --schedules) or in the CSV files. 0 means
	// DefaultMaxHomes.
	MaxHomes int
	// BarWidth is the width of the longest load bar; 0 means 32.
	BarWidth int
}

// DefaultMaxHomes is the largest neighbourhood whose schedule tables the
// summary prints unasked.
const DefaultMaxHomes = 8

// maxBarSlots is the longest horizon drawn as one bar per slot; longer
// ones get the sparklines only.
const maxBarSlots = 48

// WriteText prints the human summary: the totals and the comparison with
// the baselines, the load profile as sparklines and bars, and a compact
// schedule table per home (one column per slot, one row per device, '·'
// for a device's lowest-power action, a letter for the others with a
// legend, and the home's kW per slot).
func (h *Homes) WriteText(w io.Writer, o TextOptions) error {
	var b strings.Builder
	if h.HomeCount == 0 && h.EnergyHomes != nil {
		h.energyOnlyText(&b)
		_, err := io.WriteString(w, b.String())
		return err
	}
	h.header(&b)
	h.totals(&b)
	h.profile(&b, o)
	h.tables(&b, o)
	h.energyText(&b)
	h.chartList(&b)
	for _, n := range h.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (h *Homes) header(b *strings.Builder) {
	a := h.Algorithm
	state := "infeasible: no schedule keeps every rule"
	if h.Status == mva.StatusUnknown {
		state = "no schedule found that keeps every rule (not a proof)"
	}
	if h.Feasible {
		state = "best found"
		if h.Optimal {
			state = "optimal"
		}
	}
	homes := thousands(float64(h.HomeCount)) + " homes"
	if h.EnergyHomes != nil {
		homes += fmt.Sprintf(" and %d energy homes (below)", len(h.EnergyHomes.Homes))
	}
	fmt.Fprintf(b, "%s: %s, %s, %s\n", h.Neighbourhood, homes, h.slotsText(), h.span())
	kept := "—"
	if h.Feasible {
		kept = thousands(float64(h.RulesSatisfied))
	}
	fmt.Fprintf(b, "rules   %s of %s kept", kept, thousands(float64(h.RulesTotal)))
	if len(h.Dropped) > 0 {
		names := make([]string, 0, len(h.Dropped))
		for _, d := range h.Dropped {
			names = append(names, fmt.Sprintf("%s (%d)", d.Home, len(d.Rules)))
		}
		homes := "homes"
		if len(h.Dropped) == 1 {
			homes = "home"
		}
		fmt.Fprintf(b, "; %d %s dropped %s rules no schedule keeps: %s", len(h.Dropped), homes, thousands(float64(h.RulesDropped)), strings.Join(names, ", "))
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "solver  %s/%s (%s), %s wall", a.Global, a.Local, state, ms(h.Metrics.WallMs))
	if a.Global != "none" && a.Global != "" {
		fmt.Fprintf(b, ", %s messages", thousands(float64(h.Metrics.Messages)))
	}
	b.WriteString("\n")
	if m := h.MQTT; m != nil {
		via := ""
		if m.Transport == "memory" {
			via = " (agents through memory)"
		}
		fmt.Fprintf(b, "mqtt    %s%s, run %s: %s envelopes (%s bytes), %d retransmitted, %d connections\n",
			m.Broker, via, m.Run, thousands(float64(m.Envelopes)), thousands(float64(m.EnvelopeBytes)), m.Retransmitted, m.Connections)
		if len(m.Dropped) > 0 {
			keys := make([]string, 0, len(m.Dropped))
			for k := range m.Dropped {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for i, k := range keys {
				keys[i] = fmt.Sprintf("%s %d", k, m.Dropped[k])
			}
			fmt.Fprintf(b, "mqtt    dropped: %s\n", strings.Join(keys, ", "))
		}
	}
}

// thousands formats v rounded to an integer with thousands separators:
// 1605740 is "1,605,740".
func thousands(v float64) string {
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// plain formats an objective without an exponent: two decimals below
// 10,000, whole numbers with thousands separators above.
func plain(v float64) string {
	if math.Abs(v) < 1e4 {
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return thousands(v)
}

// objectiveUnit names the unit of the objectives, "" when they are
// weighted sums without one.
func (h *Homes) objectiveUnit() string {
	if h.ObjectiveUnit == "" {
		return ""
	}
	return " (" + h.ObjectiveUnit + ")"
}

func ms(v float64) string {
	if v >= 10000 {
		return fmt.Sprintf("%.1f s", v/1000)
	}
	return fmt.Sprintf("%.1f ms", v)
}

// totals prints the comparison table.
func (h *Homes) totals(b *strings.Builder) {
	type col struct {
		name              string
		cost, kwh, peak   float64
		obj, flow         *float64
		rules             int
		ok, present, base bool
		extra             string
	}
	cols := []col{{name: "coordinated", cost: h.EnergyCost, kwh: h.EnergyKWh, peak: h.PeakKW, obj: h.Objective, flow: h.FlowObjective, rules: h.RulesSatisfied, ok: h.Feasible, present: true}}
	add := func(name string, bl *Baseline) {
		if bl == nil {
			return
		}
		c := col{name: name, cost: bl.EnergyCost, kwh: bl.EnergyKWh, peak: bl.PeakKW, obj: bl.Objective, flow: bl.FlowObjective, rules: bl.RulesSatisfied, ok: true, present: true, base: true}
		if bl.Rounds > 0 {
			conv := "converged"
			if !bl.Converged {
				conv = "round limit, not converged"
			}
			c.extra = fmt.Sprintf("%d rounds, %s", bl.Rounds, conv)
		}
		if bl.ApproximateHomes > 0 {
			if c.extra != "" {
				c.extra += ", "
			}
			c.extra += fmt.Sprintf("%d homes by block descent (too wide to solve exactly)", bl.ApproximateHomes)
		}
		if k := len(bl.CoarseHomes); k > 0 {
			if c.extra != "" {
				c.extra += ", "
			}
			c.extra += fmt.Sprintf("%d homes answered on fewer levels than draws (tables past the limit: %s)", k, listed(bl.CoarseHomes, 5))
		}
		cols = append(cols, c)
	}
	add("uncoordinated", h.Baselines.Uncoordinated)
	add("SH-MGM-style", h.Baselines.SHMGM)
	b.WriteString("\n")
	row := func(label string, cell func(c col) string) {
		fmt.Fprintf(b, "%-22s", label)
		for _, c := range cols {
			fmt.Fprintf(b, "%16s", cell(c))
		}
		b.WriteString("\n")
	}
	row("", func(c col) string { return c.name })
	num := func(f func(c col) float64, format string) func(c col) string {
		return func(c col) string {
			if !c.ok {
				return "—"
			}
			return fmt.Sprintf(format, f(c))
		}
	}
	cur := h.Currency
	if cur == "" {
		cur = "cost"
	}
	row("energy cost ("+cur+")", num(func(c col) float64 { return c.cost }, "%.2f"))
	row("energy (kWh)", num(func(c col) float64 { return c.kwh }, "%.1f"))
	row("peak (kW)", num(func(c col) float64 { return c.peak }, "%.2f"))
	objRow := func(v func(c col) *float64) func(c col) string {
		return func(c col) string {
			if v(c) == nil {
				if c.base {
					return "breaks limit"
				}
				return "—"
			}
			return plain(*v(c))
		}
	}
	row("objective, load", objRow(func(c col) *float64 { return c.flow }))
	row("objective, levels", objRow(func(c col) *float64 { return c.obj }))
	row("rules kept", func(c col) string {
		if !c.ok {
			return "—"
		}
		return fmt.Sprintf("%s/%s", thousands(float64(c.rules)), thousands(float64(h.RulesTotal)))
	})
	if len(cols) > 1 && h.Feasible {
		row("coordinated peak vs", func(c col) string {
			if c.peak <= 0 || !c.base {
				return ""
			}
			return fmt.Sprintf("%+.0f%%", 100*(h.PeakKW-c.peak)/c.peak)
		})
	}
	fmt.Fprintf(b, "objective, load:   the bill plus the peak term on the load that flows%s\n", h.objectiveUnit())
	if lb := h.FlowLowerBound; lb != nil && *lb > 0 {
		var gaps []string
		for _, c := range cols {
			if c.flow != nil {
				gaps = append(gaps, fmt.Sprintf("%s %+.2f%%", c.name, 100*(*c.flow-*lb) / *lb))
			}
		}
		fmt.Fprintf(b, "                   no plan is below %s, a lower bound (%s)\n", plain(*lb), strings.Join(gaps, ", "))
	}
	fmt.Fprintf(b, "objective, levels: the same on the committed levels, what the protocol minimised")
	if h.CommittedSlackKW != nil {
		fmt.Fprintf(b, " (up to %.2f kW above the load)", *h.CommittedSlackKW)
	}
	b.WriteString("\n")
	for _, c := range cols {
		if c.extra != "" {
			fmt.Fprintf(b, "%s: %s\n", c.name, c.extra)
		}
	}
	for _, m := range h.Baselines.Missing {
		fmt.Fprintf(b, "%s: not computed: %s\n", baselineTitle(m.Name), m.Reason)
	}
	h.missed(b)
}

// maxMissedLines bounds the missed goals listed under the totals.
const maxMissedLines = 10

// missed lists the soft goals the plan misses and a soft feeder limit it
// exceeds: the plan stands (exit 0), as close to them as the devices allow.
func (h *Homes) missed(b *strings.Builder) {
	if len(h.GoalsMissed) > 0 {
		fmt.Fprintf(b, "goals missed: %d (no plan meets them; this one comes closest)\n", len(h.GoalsMissed))
	}
	for i, g := range h.GoalsMissed {
		if i == maxMissedLines {
			fmt.Fprintf(b, "  … %d more (--json lists every one under goals_missed)\n", len(h.GoalsMissed)-i)
			break
		}
		fmt.Fprintf(b, "  %s: %q by %s\n", g.Home, g.Rule, amount(g.Missed, g.Unit))
	}
	for w, x := range h.FeederExcessKW {
		if x > 0 {
			fmt.Fprintf(b, "feeder limit exceeded in window %d by %.2f kW (a soft limit: [feeder] hard = true refuses it)\n", w, x)
		}
	}
}

// profile draws the neighbourhood load per slot.
func (h *Homes) profile(b *strings.Builder, o TextOptions) {
	type series struct {
		name string
		load []float64
	}
	var ss []series
	if h.LoadKW != nil {
		ss = append(ss, series{"coordinated", h.LoadKW})
	}
	if u := h.Baselines.Uncoordinated; u != nil {
		ss = append(ss, series{"uncoordinated", u.LoadKW})
	}
	if s := h.Baselines.SHMGM; s != nil {
		ss = append(ss, series{"SH-MGM-style", s.LoadKW})
	}
	if len(ss) == 0 {
		return
	}
	peaks := make([]float64, len(ss))
	for i, s := range ss {
		peaks[i] = maxOf(s.load)
	}
	top, clipped := chartScale(peaks)
	fmt.Fprintf(b, "\nneighbourhood load (kW), %s, scale 0–%.1f kW", h.span(), top)
	var off []string
	for i, s := range ss {
		if clipped[i] {
			off = append(off, fmt.Sprintf("%s peaks at %.1f kW", s.name, peaks[i]))
		}
	}
	if len(off) > 0 {
		fmt.Fprintf(b, "; ↑ above it (%s)", strings.Join(off, ", "))
	}
	b.WriteString("\n")
	for i, s := range ss {
		line := Sparkline(s.load, top)
		if clipped[i] {
			r := []rune(line)
			for t, v := range s.load {
				if v > top {
					r[t] = '↑'
				}
			}
			line = string(r)
		}
		fmt.Fprintf(b, "  %-14s %s  peak %.2f\n", s.name, line, peaks[i])
	}
	if len(h.Slots) > maxBarSlots {
		return
	}
	width := o.BarWidth
	if width <= 0 {
		width = 32
	}
	fmt.Fprintf(b, "\n  %-5s %-*s", "time", width+1, ss[0].name)
	for _, s := range ss {
		fmt.Fprintf(b, " %13s", s.name)
	}
	b.WriteString("\n")
	for t, label := range h.Slots {
		fmt.Fprintf(b, "  %-5s %s ", label, pad(Bar(ss[0].load[t], top, width), width))
		for _, s := range ss {
			fmt.Fprintf(b, " %13.2f", s.load[t])
		}
		b.WriteString("\n")
	}
}

// chartScale returns the scale of a load chart of series with the given
// peaks, and which series it clips. A series whose peak is more than
// twice every other's (the homes alone all charging in the cheapest slot)
// would flatten the others to a line of the lowest blocks, so the scale
// is the others' peak with a quarter of head-room, and that series is
// drawn clipped and said to be; otherwise the scale is the highest peak.
func chartScale(peaks []float64) (float64, []bool) {
	clipped := make([]bool, len(peaks))
	top, at, rest := 0.0, -1, 0.0
	for i, p := range peaks {
		if p > top {
			top, at = p, i
		}
	}
	for i, p := range peaks {
		if i != at {
			rest = math.Max(rest, p)
		}
	}
	if len(peaks) > 1 && rest > 0 && top > 2*rest {
		clipped[at] = true
		return 1.25 * rest, clipped
	}
	return top, clipped
}

// span returns "17:00–07:00", the horizon on the clock.
func (h *Homes) span() string {
	if len(h.Slots) == 0 {
		return ""
	}
	var hh, mm int
	if _, err := fmt.Sscanf(h.Slots[len(h.Slots)-1], "%d:%d", &hh, &mm); err != nil {
		return h.Slots[0]
	}
	last := h.SlotMinutes
	if n := len(h.SlotLengths); n > 0 {
		last = h.SlotLengths[n-1]
	}
	return h.Slots[0] + "–" + clock(hh*60+mm+last)
}

// slotsText says how many slots there are and how long: "24 slots of
// 60 min", or by runs where they differ: "20 slots (8×15 min, 12×60 min)".
func (h *Homes) slotsText() string {
	if len(h.SlotLengths) == 0 {
		return fmt.Sprintf("%d slots of %d min", len(h.Slots), h.SlotMinutes)
	}
	var runs []string
	for i := 0; i < len(h.SlotLengths); {
		j := i
		for j < len(h.SlotLengths) && h.SlotLengths[j] == h.SlotLengths[i] {
			j++
		}
		runs = append(runs, fmt.Sprintf("%d×%d min", j-i, h.SlotLengths[i]))
		i = j
	}
	return fmt.Sprintf("%d slots (%s)", len(h.Slots), strings.Join(runs, ", "))
}

// pad right-pads s with spaces to width runes.
func pad(s string, width int) string {
	if n := utf8.RuneCountInString(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

var sparks = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws v as one block character per value, scaled to top (the
// largest value when top ≤ 0); negative values draw as the lowest block.
func Sparkline(v []float64, top float64) string {
	if top <= 0 {
		top = maxOf(v)
	}
	out := make([]rune, len(v))
	for i, x := range v {
		k := 0
		if top > 0 && x > 0 {
			k = int(math.Round(x / top * float64(len(sparks)-1)))
		}
		out[i] = sparks[min(max(k, 0), len(sparks)-1)]
	}
	return string(out)
}

var eighths = []rune(" ▏▎▍▌▋▊▉")

// Bar draws x as a horizontal bar of at most width cells at scale top, in
// eighths of a cell; a negative x (power fed back) draws as light cells
// after a '-', one per 1/width of top, at least one.
func Bar(x, top float64, width int) string {
	if top <= 0 || width <= 0 || x == 0 {
		return ""
	}
	if x < 0 {
		n := max(1, int(math.Round(math.Min(-x/top, 1)*float64(width))))
		return "-" + strings.Repeat("░", min(n, width-1))
	}
	n := int(math.Round(math.Min(x/top, 1) * float64(width*8)))
	s := strings.Repeat("█", n/8)
	if r := n % 8; r > 0 {
		s += string(eighths[r])
	}
	return s
}

// tables prints a schedule table per home, or for more than MaxHomes
// homes one line per home and where the tables are.
func (h *Homes) tables(b *strings.Builder, o TextOptions) {
	if len(h.Schedules) == 0 {
		return
	}
	limit := o.MaxHomes
	if limit == 0 {
		limit = DefaultMaxHomes
	}
	if limit > 0 && len(h.Schedules) > limit {
		h.homeLines(b)
		return
	}
	labels, cw := columnLabels(h.Slots)
	name := 6
	for _, p := range h.Schedules {
		for _, d := range p.Devices {
			name = max(name, min(utf8.RuneCountInString(d.Device), 24))
		}
	}
	fmt.Fprintf(b, "\nschedules (· = the device's lowest-power action; kW = the home's draw)\n")
	for _, p := range h.Schedules {
		fmt.Fprintf(b, "\n%s  %s\n", p.Home, homeLine(p, h.Currency))
		fmt.Fprintf(b, "  %-*s", name, "")
		for _, l := range labels {
			fmt.Fprintf(b, "%*s", cw, l)
		}
		b.WriteString("\n")
		for _, d := range p.Devices {
			codes, legend := actionCodes(d)
			fmt.Fprintf(b, "  %-*s", name, clip(d.Device, name))
			for _, a := range d.Actions {
				fmt.Fprintf(b, "%*s", cw, codes[a])
			}
			if legend != "" {
				b.WriteString("  " + legend)
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(b, "  %-*s", name, "kW")
		for _, v := range p.LoadKW {
			fmt.Fprintf(b, "%*s", cw, short(v))
		}
		b.WriteString("\n")
		if slices.ContainsFunc(p.CurtailedKW, func(v float64) bool { return v > 0 }) {
			fmt.Fprintf(b, "  %-*s", name, "PV cut")
			for _, v := range p.CurtailedKW {
				fmt.Fprintf(b, "%*s", cw, short(v))
			}
			b.WriteString("  kW of PV curtailed\n")
		}
		if p.OverLimitsKWh > 0 {
			fmt.Fprintf(b, "  OVER LIMITS: %.2f kWh beyond the home's import or export limit\n", p.OverLimitsKWh)
		}
		if p.DemandCost > 0 {
			fmt.Fprintf(b, "  demand charge %.2f %s on its highest import (part of what it pays)\n", p.DemandCost, h.Currency)
		}
		if p.StoredValue != 0 {
			fmt.Fprintf(b, "  stored energy at the end worth %.2f %s (end_value)\n", p.StoredValue, h.Currency)
		}
		for _, r := range p.Rules {
			switch {
			case r.OK:
			case r.Hard:
				fmt.Fprintf(b, "  BROKEN: %s\n", r.Rule)
			default:
				fmt.Fprintf(b, "  MISSED: %s, by %s\n", r.Rule, amount(r.Missed, r.Unit))
			}
		}
	}
}

// homeLines prints one line per home: its bill, what coordination saved
// or cost it, its energy, peak and rules.
func (h *Homes) homeLines(b *strings.Builder) {
	cur := h.Currency
	name := 4
	for _, p := range h.Schedules {
		name = max(name, utf8.RuneCountInString(p.Home))
	}
	fmt.Fprintf(b, "\nhomes (schedule tables: --schedules prints all %d, --csv writes them)\n", len(h.Schedules))
	fmt.Fprintf(b, "  %-*s %10s %12s %9s %9s %10s %7s\n", name, "home", "pays "+cur, "vs alone "+cur, "kWh", "peak kW", "alone kW", "rules")
	for _, p := range h.Schedules {
		vs, alone := "", ""
		if a := p.AloneEnergyCost; a != nil {
			vs = fmt.Sprintf("%+.2f", p.EnergyCost-*a)
		}
		if a := p.AlonePeakKW; a != nil {
			alone = fmt.Sprintf("%.2f", *a)
		}
		rules := fmt.Sprintf("%d/%d", p.RulesSatisfied, p.RulesTotal)
		fmt.Fprintf(b, "  %-*s %10.2f %12s %9.1f %9.2f %10s %7s\n", name, p.Home, p.EnergyCost, vs, p.EnergyKWh, p.PeakKW, alone, rules)
		for _, r := range p.Rules {
			if !r.OK {
				fmt.Fprintf(b, "  %-*s BROKEN: %s\n", name, "", r.Rule)
			}
		}
	}
}

// columnLabels returns the slot headers: hours ("17") when every slot
// starts on the hour, "HH:MM" otherwise, and the column width.
func columnLabels(slots []string) ([]string, int) {
	hours := true
	for _, s := range slots {
		hours = hours && strings.HasSuffix(s, ":00")
	}
	out := make([]string, len(slots))
	for i, s := range slots {
		if hours {
			out[i] = s[:2]
		} else {
			out[i] = s
		}
	}
	if hours {
		return out, 5
	}
	return out, 6
}

// short formats a kW value in at most four characters.
func short(v float64) string {
	switch {
	case math.Abs(v) < 9.95:
		return fmt.Sprintf("%.1f", v)
	case math.Abs(v) < 999.5:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.0fk", v/1000)
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// actionCodes gives each action name of d a one-character code: '·' for
// the device's lowest-power action and the first free letter or digit of
// the name for the others, with a legend of the codes used. Codes are
// handed out in the device's action order (when the plan knows it), so an
// action keeps its letter from one run to the next whatever the plan
// does.
func actionCodes(d DevicePlan) (map[string]string, string) {
	codes := map[string]string{}
	used := map[rune]bool{'·': true}
	order := append(append([]string(nil), d.all...), d.Actions...)
	for _, a := range order {
		if _, ok := codes[a]; ok {
			continue
		}
		if a == d.idle {
			codes[a] = "·"
			continue
		}
		code := ' '
		for _, r := range strings.ToLower(a) + "abcdefghijklmnopqrstuvwxyz0123456789" {
			if (r >= 'a' && r <= 'z' || r >= '0' && r <= '9') && !used[r] {
				code = r
				break
			}
		}
		used[code] = true
		codes[a] = string(code)
	}
	var legend []string
	seen := map[string]bool{}
	for _, a := range order {
		if seen[a] || codes[a] == "·" || !slices.Contains(d.Actions, a) {
			continue
		}
		seen[a] = true
		legend = append(legend, codes[a]+"="+a)
	}
	return codes, strings.Join(legend, " ")
}

// amount writes a shortfall with its unit.
func amount(v float64, unit string) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if math.Abs(v) >= 0.01 {
		s = strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
	}
	if unit != "" {
		s += " " + unit
	}
	return s
}

// homeLine is a home's summary: what it pays, what coordination saved or
// cost it against planning alone, its energy and its peak, each with its
// unit.
func homeLine(p HomePlan, cur string) string {
	s := fmt.Sprintf("pays %.2f %s", p.EnergyCost, cur)
	if a := p.AloneEnergyCost; a != nil {
		switch d := p.EnergyCost - *a; {
		case d < -0.005:
			s += fmt.Sprintf(" (%.2f %s less than planning alone)", -d, cur)
		case d > 0.005:
			s += fmt.Sprintf(" (%.2f %s more than planning alone)", d, cur)
		default:
			s += " (as planning alone)"
		}
	}
	s += fmt.Sprintf("  %.1f kWh  peak %.2f kW", p.EnergyKWh, p.PeakKW)
	if a := p.AlonePeakKW; a != nil {
		s += fmt.Sprintf(" (alone %.2f kW)", *a)
	}
	s += fmt.Sprintf("  rules %d/%d", p.RulesSatisfied, p.RulesTotal)
	missed := 0
	for _, r := range p.Rules {
		if !r.OK && !r.Hard {
			missed++
		}
	}
	if missed > 0 {
		s += fmt.Sprintf(" (%d missed)", missed)
	}
	return s
}

// chartList lists the charts written (--out).
func (h *Homes) chartList(b *strings.Builder) {
	if len(h.Charts) > 0 {
		fmt.Fprintln(b, "\ncharts")
		for _, c := range h.Charts {
			fmt.Fprintf(b, "  %s\n", c)
		}
	}
}

// baselineTitle is a baseline's column name in the text.
func baselineTitle(name string) string {
	if name == "shmgm" {
		return "SH-MGM-style"
	}
	return name
}

// listed joins up to k names, with how many more.
func listed(names []string, k int) string {
	if len(names) <= k {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:k], ", "), len(names)-k)
}
