package tracecheck_test

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/homesim"
	"github.com/hearth-dcop/hearth/devices/homesim/tracecheck"
)

var (
	day = time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC)
	pv0 = []float64{2.0, 1.0, 0, 0}
)

func load(t *testing.T) *devices.Neighbourhood {
	t.Helper()
	src, err := os.ReadFile("../testdata/street.toml") // homesim's test street
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("street.toml", src, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Neighbourhood
}

func cmd(slot int, action string, kw float64) homesim.Command {
	s := day.Add(time.Duration(slot) * time.Hour)
	return homesim.Command{Round: "r", Created: s.Add(-time.Minute), SlotStart: s, SlotEnd: s.Add(time.Hour), Expires: s.Add(time.Hour), Action: action, PowerKW: kw}
}

// handTrace is a day written by hand, not by the simulator: the battery
// charges at 5 kW in slot 0 (4.7 kWh stored: the model's charge per
// hour, 95% of 5 kWh rounded down to its 0.1 kWh step), the EV charges at 7.4 kW
// in slots 1 and 2 (6.6 kWh each), the dishwasher runs in slots 2 and 3.
func handTrace() *homesim.Trace {
	tr := &homesim.Trace{Home: "h", Start: day, SlotMinutes: 60, From: 0, To: 4}
	names := []string{"battery", "ev", "dishwasher"}
	in := [][]float64{{5, 0, 0, 0}, {0, 7.4, 7.4, 0}, {0, 0, 0.7, 0.7}}
	for s := range 4 {
		st := homesim.SlotTrace{Start: day.Add(time.Duration(s) * time.Hour), SimulatedS: 3600, BackgroundKWh: 0.5, PVKWh: pv0[s]}
		st.NetKWh = 0.5 - pv0[s]
		for d, name := range names {
			ds := homesim.DeviceSlot{Device: name, InKWh: in[d][s]}
			if name == "dishwasher" {
				ds.RunS = map[string]float64{"off": 3600}
				if in[d][s] > 0 {
					ds.RunS = map[string]float64{"run": 3600}
				}
			}
			st.NetKWh += in[d][s]
			st.Devices = append(st.Devices, ds)
		}
		st.ImportKWh, st.ExportKWh = math.Max(st.NetKWh, 0), math.Max(-st.NetKWh, 0)
		st.Bill = 0.20*st.ImportKWh - 0.05*st.ExportKWh
		tr.Slots = append(tr.Slots, st)
	}
	prop := func(loc, name string, v []float64) homesim.PropertyTrace {
		p := homesim.PropertyTrace{Location: loc, Name: name, Values: v}
		for s := range 4 {
			p.Min = append(p.Min, math.Min(v[s], v[s+1]))
			p.Max = append(p.Max, math.Max(v[s], v[s+1]))
		}
		return p
	}
	tr.Properties = []homesim.PropertyTrace{
		prop("battery", "soc", []float64{12, 12 + 4.7, 16.7, 16.7, 16.7}),
		prop("ev", "charge", []float64{10, 10, 16.6, 23.2, 23.2}),
		prop("dishwasher", "progress", []float64{0, 0, 0, 50, 100}),
	}
	return tr
}

// TestHandTrace: a trace written by hand with the battery charged past
// its 13.5 kWh (and staying there) is refused for that and nothing else,
// and its bill is the hand-computed one.
func TestHandTrace(t *testing.T) {
	n := load(t)
	if got := n.Homes[0].Devices; got[0].Name != "battery" || got[1].Name != "ev" || got[2].Name != "dishwasher" {
		t.Fatalf("devices %v", got)
	}
	rep := tracecheck.Check(n, 0, pv0, handTrace())
	if len(rep.Violations) != 4 {
		t.Fatalf("violations %q, want the battery above 13.5 kWh in each of the 4 slots, and nothing else", rep.Violations)
	}
	for _, v := range rep.Violations {
		if !contains(v, "battery soc reached 16.7, above its physical maximum 13.5") {
			t.Errorf("violation %q", v)
		}
	}
	if len(rep.Missed) != 1 || rep.Missed[0] != "battery soc leq 13.5 (bound of home_battery)" {
		t.Errorf("missed %q, want the battery's bound only", rep.Missed)
	}
	// Net per slot: 0.5−2+5, 0.5−1+7.4, 0.5+7.4+0.7, 0.5+0.7.
	want := 0.20 * (3.5 + 6.9 + 8.6 + 1.2)
	if math.Abs(rep.Bill-want) > 1e-9 || math.Abs(rep.PeakKW-8.6) > 1e-9 {
		t.Errorf("bill %.6f peak %.6f, want %.6f and 8.6", rep.Bill, rep.PeakKW, want)
	}
	tr := handTrace()
	tr.Properties[2].Values[4] = 90
	tr.Properties[2].Max[3] = 90
	if rep := tracecheck.Check(n, 0, pv0, tr); len(rep.Missed) != 2 || rep.Missed[0] != "progress geq 100 before 21:00" {
		t.Errorf("a dishwasher stopped at 90%%: missed %v", rep.Missed)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestCheckerCatchesTampering: the replay must reject traces whose
// physics does not add up.
func TestCheckerCatchesTampering(t *testing.T) {
	n := load(t)
	base := func() *homesim.Trace {
		h, err := homesim.NewHome(n, 0, day, day, homesim.Options{PV: pv0})
		if err != nil {
			t.Fatal(err)
		}
		h.Command("ev", cmd(0, "charge_32a", 7.4))
		h.Command("battery", cmd(1, "discharge", -5))
		h.Command("dishwasher", cmd(2, "run", 0.7))
		h.Advance(day.Add(4 * time.Hour))
		return h.Trace()
	}
	if rep := tracecheck.Check(n, 0, pv0, base()); !rep.OK() {
		t.Fatalf("untouched trace: %v", rep.Violations)
	}
	for _, c := range []struct {
		name string
		edit func(tr *homesim.Trace)
	}{
		{"free energy", func(tr *homesim.Trace) { tr.Properties[1].Values[1] += 1 }},
		{"meter", func(tr *homesim.Trace) { tr.Slots[0].NetKWh -= 1 }},
		{"over power", func(tr *homesim.Trace) {
			tr.Slots[0].Devices[1].InKWh *= 2
			tr.Slots[0].NetKWh += 7.4
			tr.Properties[1].Values[1] += 6.6
		}},
		{"over the top", func(tr *homesim.Trace) { tr.Properties[0].Max[1] = 14 }},
		{"unplugged", func(tr *homesim.Trace) { tr.Slots[0].Devices[1].Car = true }},
		{"run time", func(tr *homesim.Trace) { tr.Slots[2].Devices[2].RunS["run"] /= 2 }},
		{"bill", func(tr *homesim.Trace) { tr.Slots[3].Bill = 0 }},
	} {
		tr := base()
		c.edit(tr)
		if rep := tracecheck.Check(n, 0, pv0, tr); rep.OK() {
			t.Errorf("%s: the replay accepted a broken trace", c.name)
		}
	}
}

// TestAutoLevelsCar: an EV on automatic levels (the default), whose
// currents are credited with whole quanta and so run by their actions,
// still leaves on a trip and comes back with the file's charge; the
// replay accepts its day and rejects it drawing while away or coming
// back while it is not a car.
func TestAutoLevelsCar(t *testing.T) {
	src, err := os.ReadFile("../testdata/street.toml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(src), "kind = \"ev_wallbox_7kw\"\npower_steps = \"fixed\"\n", "kind = \"ev_wallbox_7kw\"\n", 1)
	cfg, err := config.Parse("street.toml", []byte(text), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Neighbourhood
	ev := &n.Homes[0].Devices[n.Homes[0].Device("ev")]
	if len(ev.Actions) < 5 {
		t.Fatalf("the EV has %d actions, want automatic levels", len(ev.Actions))
	}
	top := ev.Actions[len(ev.Actions)-1]
	base := func() *homesim.Trace {
		// Away 18:00–19:00, back with the file's 10 kWh.
		h, err := homesim.NewHome(n, 0, day, day, homesim.Options{PV: pv0, Trips: []homesim.Trip{{Device: "ev", Leave: 18 * 60, Return: 19 * 60}}})
		if err != nil {
			t.Fatal(err)
		}
		h.Command("ev", cmd(0, top.Name, top.Power))
		h.Command("ev", cmd(2, top.Name, top.Power))
		h.Advance(day.Add(4 * time.Hour))
		return h.Trace()
	}
	tr := base()
	if rep := tracecheck.Check(n, 0, pv0, tr); !rep.OK() {
		t.Fatalf("untouched trace: %v", rep.Violations)
	}
	evi := n.Homes[0].Device("ev")
	if got := tr.Slots[2].Devices[evi].Returned; got >= 0 {
		t.Errorf("the car came back with %g kWh more than it left with, want less (it charged in slot 0)", got)
	}
	for _, c := range []struct {
		name string
		edit func(tr *homesim.Trace)
	}{
		{"draws while away", func(tr *homesim.Trace) { tr.Slots[0].Devices[evi].PluggedS = 0 }},
		{"comes back as no car", func(tr *homesim.Trace) { tr.Slots[2].Devices[evi].Car = false }},
	} {
		tr := base()
		c.edit(tr)
		if rep := tracecheck.Check(n, 0, pv0, tr); rep.OK() {
			t.Errorf("%s: the replay accepted a broken trace", c.name)
		}
	}
}
