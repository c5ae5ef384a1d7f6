package homesim_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/baseline"
	"github.com/hearth-dcop/hearth/devices/homesim"
	"github.com/hearth-dcop/hearth/devices/homesim/tracecheck"
)

// unevenHome is one home on slots of different lengths: a battery that
// the evening's prices make discharge and the night's charge, an EV due
// inside a coarse slot (02:00–03:00, 01:00–03:00), and a dishwasher.
const unevenHome = `name = "uneven"
[horizon]
start = "22:00"
segments = SEGMENTS
[prices]
default = 0.30
export_default = 0.05
periods = [{ from = "22:00", to = "23:00", price = 0.45 }, { from = "23:00", to = "03:00", price = 0.12 }]
[[home]]
name = "h"
background_kw = 0.8
[[home.device]]
name = "battery"
kind = "home_battery"
initial = { soc = 8.0 }
[[home.device]]
name = "ev"
kind = "ev_wallbox_7kw"
initial = { charge = 12.0 }
rules = ["charge geq 30 before 02:30"]
[[home.device]]
name = "dishwasher"
kind = "dishwasher"
rules = ["progress geq 100 before 01:00"]
`

// TestUnevenSlotsPlayPlan feeds a virtual home the commands `hearth run`
// would publish for the home's own plan on a horizon of uneven slots —
// every round a command for slot 0's span, the slot length by which
// rounds move, so that a coarse slot's action comes as several commands
// — and checks that the home ends every slot at the state the plan says
// (a wallbox on automatic levels at what its currents store exactly),
// replayed apart from the simulator with each slot's own hours and
// figures (devices.Action.EffectIn), that its meter and bill are the
// plan's, and that the independent trace replay accepts the day.
func TestUnevenSlotsPlayPlan(t *testing.T) {
	for _, c := range []struct{ name, segments, header string }{
		{"fine then hours", `[{ slot = "15m", count = 4 }, { slot = "1h", count = 4 }]`,
			"Thu 26 Nov 22:00 – Fri 27 Nov 03:00 (8 slots of different lengths, 4×15 + 4×60 min)"},
		{"fine, coarse, fine", `[{ slot = "30m", count = 2 }, { slot = "2h", count = 2 }, { slot = "1h", count = 2 }, { slot = "30m", count = 2 }]`,
			"Thu 26 Nov 22:00 – Fri 27 Nov 06:00 (8 slots of different lengths, 2×30 + 2×120 + 2×60 + 2×30 min)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			day := day.Add(5 * time.Hour) // 22:00
			n := load(t, strings.ReplaceAll(unevenHome, "SEGMENTS", c.segments))
			hz := n.Horizon
			if !hz.Uneven() {
				t.Fatal("the horizon is not uneven")
			}
			out, err := baseline.Uncoordinated(context.Background(), n, baseline.Options{})
			if err != nil {
				t.Fatal(err)
			}
			h := &n.Homes[0]
			acts := out.Schedule.Homes[0].Actions
			if homesim.DayStart(hz, day) != day {
				t.Fatalf("day start %s", homesim.DayStart(hz, day))
			}
			end := homesim.DayEnd(hz, day)
			sim, err := homesim.NewHome(n, 0, day, day, homesim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			// The runner's rounds: every slot-0 length, each publishing
			// the command of the plan's slot that holds the round.
			bounds := homesim.Bounds(hz)
			round := time.Duration(hz.SlotMinutes) * time.Minute
			for at := day; at.Before(end); at = at.Add(round) {
				k := 0
				for day.Add(bounds[k+1]).Compare(at) <= 0 {
					k++
				}
				for d := range h.Devices {
					a := h.Devices[d].Actions[acts[d][k]]
					err := sim.Command(h.Devices[d].Name, homesim.Command{Round: at.Format(time.TimeOnly), Created: at.Add(-time.Second),
						SlotStart: at, SlotEnd: at.Add(round), Expires: at.Add(round), Action: a.Name, PowerKW: a.Power})
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			sim.Advance(end)
			tr := sim.Trace()
			if !tr.Complete() || len(tr.Minutes) != hz.Slots {
				t.Fatalf("trace covers boundaries %d..%d, lengths %v", tr.From, tr.To, tr.Minutes)
			}
			// The plan's trajectory, replayed with each slot's figures.
			want := make([]float64, len(h.Properties))
			for p := range h.Properties {
				want[p] = h.Properties[p].Initial
			}
			bill := 0.0
			imp, exp := n.Tariff(0)
			for k := range hz.Slots {
				net := h.Background[k]
				for d := range h.Devices {
					a := &h.Devices[d].Actions[acts[d][k]]
					net += a.Power
					// A wallbox on automatic levels stores what its
					// current physically does (the exact action of the
					// level's current, "charge_15a" → "15a"), which the
					// level credits rounded down to whole quanta.
					if ex := h.Devices[d].Exact; len(ex) > 0 {
						if i := slices.IndexFunc(ex, func(e devices.Action) bool { return "charge_"+e.Name == a.Name }); i >= 0 {
							a = &ex[i]
						}
					}
					for p := range h.Properties {
						if !h.Devices[d].Affects(h.Properties[p].Location, h.Properties[p].Name) {
							continue
						}
						if e, ok := a.EffectIn(h.Properties[p].Name, hz, k); ok {
							want[p] += e
						}
					}
				}
				for p := range h.Properties {
					want[p] += h.Properties[p].Drift * hz.Ratio(k)
					got := tr.Properties[p].Values[k+1]
					if math.Abs(got-want[p]) > 1e-6 {
						t.Errorf("slot %d (%d min) ends with %s %s %.6f, the plan says %.6f", k, hz.Minutes(k), h.Properties[p].Location, h.Properties[p].Name, got, want[p])
					}
				}
				e := net * hz.SlotHours(k)
				if got := tr.Slots[k].NetKWh; math.Abs(got-e) > 1e-6 {
					t.Errorf("slot %d: meter %.6f kWh, the plan's %.6f", k, got, e)
				}
				if tr.Slots[k].Start != day.Add(bounds[k]) || math.Abs(tr.Slots[k].SimulatedS-tr.SlotSeconds(k)) > 1e-6 {
					t.Errorf("slot %d: starts %s, %g s simulated of %g", k, tr.Slots[k].Start, tr.Slots[k].SimulatedS, tr.SlotSeconds(k))
				}
				if e >= 0 {
					bill += imp[k] * e
				} else {
					bill += exportAt(imp, exp, k) * e
				}
			}
			d := homesim.NewDay(n, []*homesim.Trace{tr})
			if math.Abs(d.Bill-bill) > 1e-6 {
				t.Errorf("realised bill %.6f, the plan's %.6f", d.Bill, bill)
			}
			var text strings.Builder
			if err := d.WriteText(&text); err != nil || !strings.Contains(text.String(), c.header) {
				t.Errorf("day report (%v) lacks %q:\n%s", err, c.header, text.String())
			}
			if d.Refusals != 0 || d.GoalsMet != d.GoalsTotal {
				t.Errorf("%d commands clamped, %d/%d goals kept", d.Refusals, d.GoalsMet, d.GoalsTotal)
			}
			rep := tracecheck.Check(n, 0, nil, tr)
			if !rep.OK() || len(rep.Missed) > 0 || math.Abs(rep.Bill-bill) > 1e-6 {
				t.Errorf("replay: %v, missed %v, bill %.6f", rep.Violations, rep.Missed, rep.Bill)
			}
			moved := false
			for k := range hz.Slots {
				moved = moved || h.Devices[0].Actions[acts[0][k]].Power != 0
			}
			if !moved {
				t.Error("the plan never uses the battery: the case checks nothing of storage")
			}
		})
	}
}

func exportAt(imp, exp []float64, t int) float64 {
	if exp != nil {
		return exp[t]
	}
	return imp[t]
}
