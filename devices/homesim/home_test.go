package homesim_test

import (
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/homesim"
	"github.com/hearth-dcop/hearth/devices/homesim/tracecheck"
)

// street reads testdata/street.toml: one home of four slots with a
// battery, an EV with a goal, a dishwasher and PV (tracecheck's tests
// read it too).
func street(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/street.toml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func load(t *testing.T, src string) *devices.Neighbourhood {
	t.Helper()
	cfg, err := config.Parse("street.toml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Neighbourhood
}

var day = time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC)

// pv0 is the street's pv_kw.
var pv0 = []float64{2.0, 1.0, 0, 0}

func cmd(slot int, action string, kw float64) homesim.Command {
	s := day.Add(time.Duration(slot) * time.Hour)
	return homesim.Command{Round: "r", Created: s.Add(-time.Minute), SlotStart: s, SlotEnd: s.Add(time.Hour), Expires: s.Add(time.Hour), Action: action, PowerKW: kw}
}

// TestHomePhysics runs a home through commands worked out by hand:
// a battery that fills within the first slot, an EV that leaves and comes
// back with more charge, a dishwasher asked to run after its programme is
// done, an over-powered discharge, and checks the meter, the bill, the
// clamps and the independent replay.
func TestHomePhysics(t *testing.T) {
	n := load(t, street(t))
	back := 30.0
	h, err := homesim.NewHome(n, 0, day, day, homesim.Options{PV: pv0, Trips: []homesim.Trip{{Device: "ev", Leave: 19 * 60, Return: 20 * 60, ArriveWith: &back}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dev string
		c   homesim.Command
	}{
		{"battery", cmd(0, "charge", 5)},
		{"battery", cmd(1, "discharge", -5)},
		{"battery", cmd(3, "discharge", -8)},
		{"ev", cmd(0, "charge_32a", 7.4)},
		{"ev", cmd(1, "charge_32a", 7.4)},
		{"ev", cmd(2, "charge_32a", 7.4)},
		{"dishwasher", cmd(0, "run", 0.7)},
		{"dishwasher", cmd(1, "run", 0.7)},
		{"dishwasher", cmd(2, "run", 0.7)},
	} {
		if err := h.Command(c.dev, c.c); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Command("kettle", cmd(0, "on", 1)); err == nil {
		t.Fatal("a command for a device the home lacks was accepted")
	}
	h.Advance(day.Add(4 * time.Hour))
	tr := h.Trace()
	if !tr.Complete() {
		t.Fatalf("trace covers boundaries %d..%d", tr.From, tr.To)
	}
	// Worked by hand, with the model's figures (the catalogue's 4.75 kWh
	// stored and 5.26 kWh spent per hour at 5 kW, rounded against the
	// plan to the 0.1 kWh step: 4.7 and 5.3): the battery takes
	// 1.5 kWh / 0.94 to fill from 12 to 13.5; the EV draws 7.4 kW for
	// two slots; the dishwasher runs two hours; discharge at 5 kW takes
	// 5.3 kWh out.
	wantNet := []float64{0.5 - 2 + 1.5/0.94 + 7.4 + 0.7, 0.5 - 1 - 5 + 7.4 + 0.7, 0.5, 0.5 - 5}
	for s, want := range wantNet {
		if got := tr.Slots[s].NetKWh; math.Abs(got-want) > 1e-9 {
			t.Errorf("slot %d: net %.6f kWh, want %.6f", s, got, want)
		}
	}
	bill := 0.20*(wantNet[0]+wantNet[1]+wantNet[2]) - 0.05*4.5
	d := homesim.NewDay(n, []*homesim.Trace{tr})
	if math.Abs(d.Bill-bill) > 1e-9 || math.Abs(d.PeakKW-wantNet[0]) > 1e-9 || math.Abs(d.ExportKWh-4.5) > 1e-9 {
		t.Errorf("day: bill %.6f (want %.6f), peak %.6f (want %.6f), export %g", d.Bill, bill, d.PeakKW, wantNet[0], d.ExportKWh)
	}
	soc, ev, dw := tr.Properties[n.Homes[0].Property("battery", "soc")], tr.Properties[n.Homes[0].Property("ev", "charge")], tr.Properties[n.Homes[0].Property("dishwasher", "progress")]
	wantSoC := []float64{12, 13.5, 13.5 - 5.3, 13.5 - 5.3, 13.5 - 2*5.3}
	wantEV := []float64{10, 10 + 6.6, 10 + 13.2, 10 + 13.2, 30}
	wantDW := []float64{0, 50, 100, 100, 100}
	for i := range wantSoC {
		if math.Abs(soc.Values[i]-wantSoC[i]) > 1e-6 || math.Abs(ev.Values[i]-wantEV[i]) > 1e-6 || math.Abs(dw.Values[i]-wantDW[i]) > 1e-6 {
			t.Errorf("boundary %d: soc %.4f ev %.4f progress %.4f, want %.4f %.4f %.4f", i, soc.Values[i], ev.Values[i], dw.Values[i], wantSoC[i], wantEV[i], wantDW[i])
		}
	}
	refused := func(slot, dev int) []string { return tr.Slots[slot].Devices[dev].Refused }
	for _, c := range []struct {
		slot, dev int
		reason    string
	}{{0, 0, "full"}, {3, 0, "above the greatest discharging power"}, {2, 1, "not plugged in"}, {2, 2, "at its bound"}} {
		if !slices.Contains(refused(c.slot, c.dev), c.reason) {
			t.Errorf("slot %d device %d: refusals %v, want %q", c.slot, c.dev, refused(c.slot, c.dev), c.reason)
		}
	}
	if d.GoalsMet != d.GoalsTotal {
		t.Errorf("goals %d/%d: %+v", d.GoalsMet, d.GoalsTotal, d.Homes[0].Goals)
	}
	rep := tracecheck.Check(n, 0, pv0, tr)
	if !rep.OK() || len(rep.Missed) > 0 {
		t.Fatalf("replay: %v; missed %v", rep.Violations, rep.Missed)
	}
	if math.Abs(rep.Bill-bill) > 1e-9 || math.Abs(rep.PeakKW-wantNet[0]) > 1e-9 {
		t.Errorf("replay: bill %.6f peak %.6f", rep.Bill, rep.PeakKW)
	}
	// The day as a schedule of the model: the battery and the car by the
	// action commanded (idle without one), the dishwasher by what it ran
	// longest — nothing in slot 2, its programme done.
	hs := tr.Schedule(&n.Homes[0])
	for d, want := range [][]string{
		{"charge", "discharge", "idle", "discharge"},
		{"charge_32a", "charge_32a", "charge_32a", "off"},
		{"run", "run", "off", "off"},
	} {
		dev := &n.Homes[0].Devices[d]
		var got []string
		for _, a := range hs.Actions[d] {
			got = append(got, dev.Actions[a].Name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s's schedule %v, want %v", dev.Name, got, want)
		}
	}
}

// TestIdleWithoutCommands: no command, an expired one, or one for a
// later slot leaves every device idle; the base load's noise is seeded.
func TestIdleWithoutCommands(t *testing.T) {
	n := load(t, street(t))
	run := func(seed uint64) *homesim.Trace {
		h, err := homesim.NewHome(n, 0, day, day, homesim.Options{PV: pv0, Noise: 0.2, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		c := cmd(0, "charge_32a", 7.4)
		c.Expires = day.Add(30 * time.Minute)
		h.Command("ev", c)
		h.Command("battery", cmd(3, "charge", 5))
		h.Advance(day.Add(3 * time.Hour))
		return h.Trace()
	}
	a, b, c := run(1), run(1), run(2)
	if got := a.Slots[0].Devices[1].InKWh; math.Abs(got-3.7) > 1e-9 {
		t.Errorf("EV drew %.4f kWh in slot 0, want 3.7 (half an hour before its command expired)", got)
	}
	for s := range 3 {
		if a.Slots[s].Devices[0].InKWh != 0 || a.Slots[s].BackgroundKWh != b.Slots[s].BackgroundKWh {
			t.Errorf("slot %d: battery %.4f kWh; background %.4f vs %.4f with the same seed", s, a.Slots[s].Devices[0].InKWh, a.Slots[s].BackgroundKWh, b.Slots[s].BackgroundKWh)
		}
	}
	if a.Slots[0].BackgroundKWh == c.Slots[0].BackgroundKWh || a.Slots[0].BackgroundKWh == 0.5 {
		t.Errorf("background %.4f (seed 1) and %.4f (seed 2): want seeded noise", a.Slots[0].BackgroundKWh, c.Slots[0].BackgroundKWh)
	}
	if a.Complete() || a.To != 3 {
		t.Errorf("a run to 20:00 observed boundaries %d..%d", a.From, a.To)
	}
	if rep := tracecheck.Check(n, 0, pv0, a); !rep.OK() {
		t.Fatal(rep.Violations)
	}
}

func TestDayStart(t *testing.T) {
	hz := devices.Horizon{Slots: 14, SlotMinutes: 60, Start: 17 * 60}
	at := func(d, h, m int) time.Time { return time.Date(2026, 11, d, h, m, 0, 0, time.UTC) }
	for _, c := range []struct{ now, want time.Time }{
		{at(26, 17, 0), at(26, 17, 0)},
		{at(26, 16, 50), at(26, 17, 0)},
		{at(27, 3, 0), at(26, 17, 0)},
		{at(27, 7, 0), at(27, 17, 0)},
	} {
		if got := homesim.DayStart(hz, c.now); !got.Equal(c.want) {
			t.Errorf("DayStart(%s) = %s, want %s", c.now, got, c.want)
		}
	}
}

// TestAsSimulated: the neighbourhood a perfect-information planner sees
// has the base load the simulator draws, slot by slot.
func TestAsSimulated(t *testing.T) {
	n := load(t, street(t))
	o := homesim.Options{PV: pv0, Noise: 0.3, Seed: 5}
	m := homesim.AsSimulated(n, o, [][]float64{pv0})
	h, err := homesim.NewHome(n, 0, day, day, o)
	if err != nil {
		t.Fatal(err)
	}
	h.Advance(day.Add(4 * time.Hour))
	tr := h.Trace()
	for s := range 4 {
		got := m.Homes[0].Background[s]
		want := tr.Slots[s].BackgroundKWh - tr.Slots[s].PVKWh
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("slot %d: planner's background %.6f, simulated %.6f", s, got, want)
		}
	}
	if n.Homes[0].Background[0] != 0.5-2.0 {
		t.Errorf("AsSimulated changed the original: %v", n.Homes[0].Background)
	}
	if same := homesim.AsSimulated(n, homesim.Options{}, [][]float64{pv0}); !slices.Equal(same.Homes[0].Background, n.Homes[0].Background) {
		t.Errorf("without noise: %v, want %v", same.Homes[0].Background, n.Homes[0].Background)
	}
}

// TestExactCurrents: a wallbox on automatic levels (power_steps "auto")
// runs the exact current a refined plan commands ("13a", 2.99 kW, not
// one of the compiled levels) as a set point storing 89 % of its draw,
// as it does a compiled level's current ("charge_15a") — the physical
// charger, not the levels the compiler rounded down to whole quanta; the
// replay passes, and the day as a schedule of the model reads the exact
// current back.
func TestExactCurrents(t *testing.T) {
	src := strings.Replace(street(t), "kind = \"ev_wallbox_7kw\"\npower_steps = \"fixed\"", "kind = \"ev_wallbox_7kw\"", 1)
	n := load(t, src)
	ev := &n.Homes[0].Devices[n.Homes[0].Device("ev")]
	if len(ev.Exact) == 0 || actionOf(ev.Actions, "13a") >= 0 || actionOf(ev.Exact, "13a") < 0 {
		t.Fatalf("the wallbox is not on automatic levels with 13a exact only: %d levels, %d exact", len(ev.Actions), len(ev.Exact))
	}
	h, err := homesim.NewHome(n, 0, day, day, homesim.Options{PV: pv0})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []homesim.Command{cmd(0, "13a", 2.99), cmd(1, "charge_15a", 3.45), cmd(2, "32a", 7.36)} {
		if err := h.Command("ev", c); err != nil {
			t.Fatal(err)
		}
	}
	h.Advance(day.Add(4 * time.Hour))
	tr := h.Trace()
	d := n.Homes[0].Device("ev")
	charge := tr.Properties[n.Homes[0].Property("ev", "charge")].Values
	want := []float64{10, 10 + 0.89*2.99, 10 + 0.89*(2.99+3.45), 10 + 0.89*(2.99+3.45+7.36), 10 + 0.89*(2.99+3.45+7.36)}
	for i := range want {
		if math.Abs(charge[i]-want[i]) > 1e-6 {
			t.Errorf("boundary %d: charge %.4f, want %.4f", i, charge[i], want[i])
		}
	}
	for s, kw := range []float64{2.99, 3.45, 7.36, 0} {
		if got := tr.Slots[s].Devices[d].InKWh; math.Abs(got-kw) > 1e-9 || len(tr.Slots[s].Devices[d].Refused) > 0 {
			t.Errorf("slot %d: drew %.4f kWh (want %.4f), refused %v", s, got, kw, tr.Slots[s].Devices[d].Refused)
		}
	}
	if rep := tracecheck.Check(n, 0, pv0, tr); !rep.OK() {
		t.Errorf("replay: %v", rep.Violations)
	}
	hs := tr.Schedule(&n.Homes[0])
	var got []string
	for _, a := range hs.Actions[d] {
		got = append(got, ev.Act(a).Name)
	}
	if want := []string{"13a", "charge_15a", "32a", "off"}; !slices.Equal(got, want) {
		t.Errorf("the car's schedule %v, want %v", got, want)
	}
}

// TestExactBatteryPowers: a home battery on automatic levels runs the
// finer powers a refined plan commands (Device.Exact, in_/out_, whose
// stored energies are rounded to 50 Wh in the plan's disfavour) as set
// points at its one efficiency, 95 % each way: charging at 1.053 kW for
// an hour stores 1.0 kWh (the plan counted 1.0), discharging 0.285 kW
// takes 0.3 kWh (the plan counted 0.3); the replay passes.
func TestExactBatteryPowers(t *testing.T) {
	src := strings.Replace(street(t), "kind = \"home_battery\"\npower_steps = \"fixed\"\ninitial = { soc = 12.0 }", "kind = \"home_battery\"\ninitial = { soc = 6.0 }", 1)
	n := load(t, src)
	bat := &n.Homes[0].Devices[n.Homes[0].Device("battery")]
	for _, name := range []string{"in_1.053kw", "out_0.285kw"} {
		if actionOf(bat.Exact, name) < 0 || actionOf(bat.Actions, name) >= 0 {
			t.Fatalf("the battery is not on automatic levels with %s exact only: %d levels, %d exact", name, len(bat.Actions), len(bat.Exact))
		}
	}
	h, err := homesim.NewHome(n, 0, day, day, homesim.Options{PV: pv0})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []homesim.Command{cmd(0, "in_1.053kw", 1.053), cmd(1, "out_0.285kw", -0.285)} {
		if err := h.Command("battery", c); err != nil {
			t.Fatal(err)
		}
	}
	h.Advance(day.Add(2 * time.Hour))
	tr := h.Trace()
	d := n.Homes[0].Device("battery")
	soc := tr.Properties[n.Homes[0].Property("battery", "soc")].Values
	want := []float64{6, 6 + 0.95*1.053, 6 + 0.95*1.053 - 0.285/0.95}
	for i := range want {
		// The efficiencies are the strongest actions', whose powers are
		// rounded to the watt (4.987 kW out for 5.25 kWh: 94.99 %).
		if math.Abs(soc[i]-want[i]) > 1e-3 {
			t.Errorf("boundary %d: soc %.4f, want %.4f", i, soc[i], want[i])
		}
	}
	for s := range 2 {
		if r := tr.Slots[s].Devices[d].Refused; len(r) > 0 {
			t.Errorf("slot %d: refused %v", s, r)
		}
	}
	if rep := tracecheck.Check(n, 0, pv0, tr); !rep.OK() {
		t.Errorf("replay: %v", rep.Violations)
	}
}

func actionOf(acts []devices.Action, name string) int {
	return slices.IndexFunc(acts, func(a devices.Action) bool { return a.Name == name })
}

// TestCommandEnergy: a storage given a command's energy_kwh delivers it
// by the slot's end, counting from the slot's start or the command's
// creation, whichever is later — worked by hand on the street's car
// (7.4 kW, 6.6 of 7.4 kWh stored): 2 kWh commanded but received half-way
// through slot 0 are drawn at 4 kW in the half hour left; 7 kWh received
// a quarter into slot 1 need 9.33 kW and get the 7.4 kW the box has
// (5.55 kWh); in slot 2 a command of 1 kWh runs at 1 kW until a round
// made at 19:30 replaces it with 1 kWh from then (2 kW): 1.5 kWh.
func TestCommandEnergy(t *testing.T) {
	n := load(t, street(t))
	h, err := homesim.NewHome(n, 0, day, day, homesim.Options{PV: pv0})
	if err != nil {
		t.Fatal(err)
	}
	energy := func(c homesim.Command, e float64) homesim.Command {
		c.EnergyKWh = &e
		return c
	}
	at := func(m int) time.Time { return day.Add(time.Duration(m) * time.Minute) }
	late := energy(cmd(2, "charge_16a", 1), 1)
	replaced := late
	replaced.Created = at(150)
	replaced = energy(replaced, 1)
	for _, step := range []struct {
		at time.Time
		c  homesim.Command
	}{
		{at(30), energy(cmd(0, "charge_16a", 2), 2)},
		{at(75), energy(cmd(1, "charge_32a", 7), 7)},
		{at(120), late},
		{at(150), replaced},
	} {
		h.Advance(step.at)
		if err := h.Command("ev", step.c); err != nil {
			t.Fatal(err)
		}
	}
	h.Advance(day.Add(4 * time.Hour))
	tr := h.Trace()
	d := n.Homes[0].Device("ev")
	eta := 6.6 / 7.4
	drawn := []float64{2, 7.4 * 0.75, 1.5, 0}
	v := 10.0
	charge := tr.Properties[n.Homes[0].Property("ev", "charge")].Values
	for s, want := range drawn {
		ds := tr.Slots[s].Devices[d]
		if math.Abs(ds.InKWh-want) > 1e-9 || len(ds.Refused) > 0 {
			t.Errorf("slot %d: drew %.6f kWh, want %.6f (refused %v)", s, ds.InKWh, want, ds.Refused)
		}
		v += eta * want
		if math.Abs(charge[s+1]-v) > 1e-6 {
			t.Errorf("boundary %d: charge %.6f, want %.6f", s+1, charge[s+1], v)
		}
	}
	if rep := tracecheck.Check(n, 0, pv0, tr); !rep.OK() {
		t.Errorf("replay: %v", rep.Violations)
	}
}
