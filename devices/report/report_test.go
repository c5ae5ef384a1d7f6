package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/baseline"
	"github.com/hearth-dcop/hearth/devices/shds"
	"github.com/hearth-dcop/hearth/mva"
)

// fixture is a report of the example neighbourhood whose "coordinated"
// schedule is the SH-MGM-style one: any valid schedule will do to check
// the report's arithmetic and files.
type fixture struct {
	n     *devices.Neighbourhood
	homes *Homes
	in    Input
}

func example(t *testing.T) fixture {
	t.Helper()
	cfg, err := config.Load(filepath.Join("..", "..", "examples", "neighbourhood", "neighbourhood.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return build(t, cfg.Neighbourhood)
}

func build(t *testing.T, n *devices.Neighbourhood) fixture {
	t.Helper()
	u, err := baseline.Uncoordinated(context.Background(), n, baseline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := baseline.SHMGM(context.Background(), n, baseline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	obj := s.Eval.Cost
	in := Input{
		Model:    n,
		Result:   mva.Result{Instance: n.Name, Sense: "min", Objective: &obj, Feasible: true, Assignment: map[string]string{}, Algorithm: mva.Algorithm{Global: "dpop", Local: "be"}},
		Schedule: s.Schedule, Eval: s.Eval, Uncoordinated: u, SHMGM: s,
		Notes: []string{"a note"},
	}
	h, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	return fixture{n: n, homes: h, in: in}
}

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func TestJSONFieldsAreConsistent(t *testing.T) {
	f := example(t)
	b, err := f.homes.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"instance", "objective", "feasible", "assignment", "algorithm", "metrics",
		"energy_cost", "peak_kw", "baseline_peak_kw", "baseline_energy_cost", "rules_satisfied", "rules_total",
		"load_kw", "schedules", "shmgm_peak_kw", "shmgm_energy_cost", "baselines", "slots", "notes"} {
		if _, ok := m[k]; !ok {
			t.Errorf("the result has no %q", k)
		}
	}
	var h Homes
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	sum, rules, total := 0.0, 0, 0
	load := make([]float64, len(h.Slots))
	for _, p := range h.Schedules {
		sum += p.EnergyCost
		rules += p.RulesSatisfied
		total += p.RulesTotal
		for i, v := range p.LoadKW {
			load[i] += v
		}
		if p.PeakKW != slices.Max(p.LoadKW) {
			t.Errorf("home %s: peak %v, max of its load %v", p.Home, p.PeakKW, slices.Max(p.LoadKW))
		}
		for _, d := range p.Devices {
			if len(d.Actions) != len(h.Slots) || len(d.KW) != len(h.Slots) {
				t.Errorf("home %s device %s: %d actions, %d kW for %d slots", p.Home, d.Device, len(d.Actions), len(d.KW), len(h.Slots))
			}
		}
	}
	if !near(sum, h.EnergyCost) {
		t.Errorf("energy_cost %v, the homes' costs add up to %v", h.EnergyCost, sum)
	}
	if h.PeakKW != slices.Max(h.LoadKW) {
		t.Errorf("peak_kw %v, max of load_kw %v", h.PeakKW, slices.Max(h.LoadKW))
	}
	for i := range load {
		if !near(load[i], h.LoadKW[i]) {
			t.Errorf("slot %d: load_kw %v, the homes add up to %v", i, h.LoadKW[i], load[i])
		}
	}
	if rules != h.RulesSatisfied || total != h.RulesTotal || h.RulesSatisfied != h.RulesTotal {
		t.Errorf("rules %d/%d, homes %d/%d", h.RulesSatisfied, h.RulesTotal, rules, total)
	}
	if *h.BaselinePeakKW != h.Baselines.Uncoordinated.PeakKW || *h.SHMGMEnergyCost != h.Baselines.SHMGM.EnergyCost {
		t.Error("the flat baseline fields disagree with baselines")
	}
	if h.Baselines.Uncoordinated.Objective == nil || h.Baselines.SHMGM.Rounds == 0 {
		t.Errorf("baselines incomplete: %+v %+v", h.Baselines.Uncoordinated, h.Baselines.SHMGM)
	}
	// Independent totals: the evaluation's price cost (weight 1 in the
	// example) and the model's load.
	if !near(h.EnergyCost, f.in.Eval.PriceCost/f.n.Weights.Price) {
		t.Errorf("energy_cost %v, the evaluation's price %v", h.EnergyCost, f.in.Eval.PriceCost)
	}
	if h.PeakKW != f.in.Eval.PeakLoad {
		t.Errorf("peak_kw %v, the evaluation's %v", h.PeakKW, f.in.Eval.PeakLoad)
	}
}

// TestSHDSUnits checks the conversion of SHDS's deci-kWh per slot and
// cents: 1 h slots, so a slot's kWh are its kW.
func TestSHDSUnits(t *testing.T) {
	r, err := shds.ReadFile(filepath.Join("..", "shds", "testdata", "dm_7_1_2.json"), shds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := build(t, r.Neighbourhood)
	h := f.homes
	for i, v := range h.LoadKW {
		if !near(v, f.in.Eval.Load[i]/10) {
			t.Errorf("slot %d: %v kW from %v deci-kWh", i, v, f.in.Eval.Load[i])
		}
	}
	// The bill in $ is the evaluation's price (cents × deci-kWh, Δ = 1,
	// weight 1) / 1000.
	if !near(h.EnergyCost, f.in.Eval.PriceCost/1000) {
		t.Errorf("energy cost %v $, want %v", h.EnergyCost, f.in.Eval.PriceCost/1000)
	}
	if h.Currency != "$" || h.SlotMinutes != 60 || h.Slots[0] != "00:00" || h.Slots[11] != "11:00" {
		t.Errorf("currency %q, slots %d min %v", h.Currency, h.SlotMinutes, h.Slots)
	}
}

func TestInfeasibleResult(t *testing.T) {
	f := example(t)
	in := f.in
	in.Schedule, in.Eval = nil, nil
	in.Result = mva.Result{Instance: "x", Sense: "min", Assignment: map[string]string{}}
	h, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if h.LoadKW != nil || len(h.Schedules) != 0 || h.RulesTotal == 0 || h.HomeCount != len(f.n.Homes) {
		t.Errorf("infeasible report: %+v", h)
	}
	var b bytes.Buffer
	if err := h.WriteText(&b, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "infeasible") {
		t.Errorf("summary does not say infeasible:\n%s", b.String())
	}
	in.Eval = f.in.Eval
	if _, err := Build(in); err == nil {
		t.Error("Build accepted an evaluation without its schedule")
	}
}

func TestCSVShapes(t *testing.T) {
	f := example(t)
	dir := t.TempDir()
	files, err := f.homes.WriteCSV(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		header []string
		rows   int
	}{
		"elm-close-schedule.csv": {ScheduleHeader, 0},
		"elm-close-load.csv":     {LoadHeader, f.n.Horizon.Slots},
		"elm-close-homes.csv":    {HomesHeader, len(f.n.Homes)},
	}
	sched := want["elm-close-schedule.csv"]
	for _, h := range f.n.Homes {
		sched.rows += len(h.Devices) * f.n.Horizon.Slots
	}
	want["elm-close-schedule.csv"] = sched
	if len(files) != len(want) {
		t.Fatalf("files %v", files)
	}
	for _, path := range files {
		w, ok := want[filepath.Base(path)]
		if !ok {
			t.Fatalf("unexpected file %s", path)
		}
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(fh).ReadAll()
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(recs[0], w.header) || len(recs)-1 != w.rows {
			t.Errorf("%s: header %v, %d rows; want %v, %d", path, recs[0], len(recs)-1, w.header, w.rows)
		}
		for _, r := range recs[1:] {
			if len(r) != len(w.header) || slices.Contains(r, "") {
				t.Errorf("%s: row %v", path, r)
			}
		}
	}
}

func TestChartsAreWritten(t *testing.T) {
	f := example(t)
	dir := t.TempDir()
	files, err := f.homes.WriteCharts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || filepath.Ext(files[0]) != ".png" || filepath.Ext(files[1]) != ".svg" {
		t.Fatalf("files %v", files)
	}
	fh, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(fh)
	fh.Close()
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 200 {
		t.Errorf("PNG is %v", b)
	}
	svg, err := os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("coordinated")) {
		t.Errorf("SVG of %d bytes has no chart", len(svg))
	}
}

func TestTextSummary(t *testing.T) {
	f := example(t)
	var b bytes.Buffer
	if err := f.homes.WriteText(&b, TextOptions{MaxHomes: 2}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// More homes than MaxHomes: one line per home, no schedule tables.
	for _, s := range []string{"elm-close", "uncoordinated", "SH-MGM-style", "peak (kW)", "17:00–07:00", "\n  alder ", "\n  cedar ", "--schedules prints all", "note: a note", "↑"} {
		if !strings.Contains(out, s) {
			t.Errorf("summary lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "\nalder ") || strings.Contains(out, "schedules (·") {
		t.Errorf("summary prints schedule tables for more homes than MaxHomes:\n%s", out)
	}
	b.Reset()
	if err := f.homes.WriteText(&b, TextOptions{MaxHomes: -1}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"\nalder ", "\ncedar ", "schedules (·"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("summary with every schedule lacks %q:\n%s", s, b.String())
		}
	}
}

func TestSparklineAndBar(t *testing.T) {
	for _, c := range []struct {
		v    []float64
		top  float64
		want string
	}{
		{[]float64{0, 7, 14}, 14, "▁▅█"},
		{[]float64{-1, 0, 2}, 0, "▁▁█"},
		{[]float64{1, 1}, 4, "▃▃"},
	} {
		if got := Sparkline(c.v, c.top); got != c.want {
			t.Errorf("Sparkline(%v, %v) = %q, want %q", c.v, c.top, got, c.want)
		}
	}
	for _, c := range []struct {
		x, top float64
		width  int
		want   string
	}{
		{10, 10, 4, "████"},
		{5, 10, 4, "██"},
		{1, 16, 2, "▏"},
		{0, 10, 4, ""},
		{20, 10, 2, "██"},
		{-5, 10, 4, "-░░"},
		{-0.1, 10, 4, "-░"},
	} {
		if got := Bar(c.x, c.top, c.width); got != c.want {
			t.Errorf("Bar(%v, %v, %d) = %q, want %q", c.x, c.top, c.width, got, c.want)
		}
	}
}

func TestActionCodes(t *testing.T) {
	d := DevicePlan{Actions: []string{"idle", "charge", "discharge", "charge", "idle"}, idle: "idle"}
	codes, legend := actionCodes(d)
	if codes["idle"] != "·" || codes["charge"] != "c" || codes["discharge"] != "d" || legend != "c=charge d=discharge" {
		t.Errorf("codes %v legend %q", codes, legend)
	}
	d = DevicePlan{Actions: []string{"run", "rest"}, idle: "off"}
	codes, _ = actionCodes(d)
	if codes["run"] == codes["rest"] {
		t.Errorf("codes %v collide", codes)
	}
	// Letters follow the device's actions, not the plan: charge_32a keeps
	// its letter whether or not charge_16a runs first.
	all := []string{"off", "charge_16a", "charge_32a"}
	a, _ := actionCodes(DevicePlan{Actions: []string{"charge_32a", "charge_16a"}, idle: "off", all: all})
	b, legend := actionCodes(DevicePlan{Actions: []string{"charge_32a", "off"}, idle: "off", all: all})
	if a["charge_32a"] != b["charge_32a"] || a["charge_16a"] != "c" || legend != "h=charge_32a" {
		t.Errorf("codes %v then %v (legend %q)", a, b, legend)
	}
}

var start = time.Date(2025, 1, 6, 17, 0, 0, 0, time.UTC)

func TestPublications(t *testing.T) {
	f := example(t)
	pubs, err := Publications(f.n, f.homes.Schedules, PublishOptions{Prefix: "street/hearth", Start: start, HomeAssistant: true})
	if err != nil {
		t.Fatal(err)
	}
	devicesN := 0
	for _, h := range f.n.Homes {
		devicesN += len(h.Devices)
	}
	if want := 2 * (devicesN + len(f.n.Homes)); len(pubs) != want {
		t.Fatalf("%d publications, want %d", len(pubs), want)
	}
	topics := map[string][]byte{}
	seenState := false
	for _, p := range pubs {
		if !p.Retained {
			t.Errorf("%s is not retained", p.Topic)
		}
		if !json.Valid(p.Payload) {
			t.Fatalf("%s: invalid JSON %s", p.Topic, p.Payload)
		}
		isConfig := strings.HasPrefix(p.Topic, "homeassistant/")
		if isConfig && seenState {
			t.Errorf("discovery %s comes after a state", p.Topic)
		}
		seenState = seenState || !isConfig
		topics[p.Topic] = p.Payload
	}
	var plan PlanPayload
	if err := json.Unmarshal(topics["street/hearth/home/alder/plan/ev"], &plan); err != nil {
		t.Fatal(err)
	}
	alder := f.homes.Schedules[0]
	if plan.Home != "alder" || plan.Device != "ev" || len(plan.Slots) != f.n.Horizon.Slots ||
		plan.Slots[0].Time != "17:00" || plan.Slots[0].Start != "2025-01-06T17:00:00Z" || plan.Slots[13].End != "2025-01-07T07:00:00Z" ||
		plan.Slots[5].Action != alder.Devices[0].Actions[5] || plan.Slots[5].KW != alder.Devices[0].KW[5] {
		t.Errorf("plan %+v", plan)
	}
	var load LoadPayload
	if err := json.Unmarshal(topics["street/hearth/home/alder/load"], &load); err != nil {
		t.Fatal(err)
	}
	if load.Slots[3].KW != alder.LoadKW[3] || load.PeakKW != alder.PeakKW {
		t.Errorf("load %+v", load)
	}
	// Home Assistant's node_id form, the home's name a whole level.
	for id, tp := range map[string]string{
		"hearth_alder_ev":        "homeassistant/sensor/alder/hearth_alder_ev/config",
		"hearth_alder_load":      "homeassistant/sensor/alder/hearth_alder_load/config",
		"hearth_dogwood_battery": "homeassistant/sensor/dogwood/hearth_dogwood_battery/config",
	} {
		var cfg map[string]any
		if err := json.Unmarshal(topics[tp], &cfg); err != nil {
			t.Fatalf("%s: %v", tp, err)
		}
		for _, k := range []string{"name", "unique_id", "state_topic", "value_template", "json_attributes_topic", "device"} {
			if _, ok := cfg[k]; !ok {
				t.Errorf("%s: no %q", id, k)
			}
		}
		if cfg["unique_id"] != id || !strings.HasPrefix(cfg["state_topic"].(string), "street/hearth/home/") || cfg["state_topic"] != cfg["json_attributes_topic"] {
			t.Errorf("%s: %v", id, cfg)
		}
		if _, ok := topics[cfg["state_topic"].(string)]; !ok {
			t.Errorf("%s: nothing is published on its state topic", id)
		}
	}
}

func TestPublicationErrors(t *testing.T) {
	f := example(t)
	if _, err := Publications(f.n, f.homes.Schedules, PublishOptions{HomeAssistant: true}); err == nil {
		t.Error("discovery without a start time")
	}
	for _, prefix := range []string{"a/+/b", "$SYS", "a//b"} {
		if _, err := Publications(f.n, f.homes.Schedules, PublishOptions{Prefix: prefix}); err == nil {
			t.Errorf("prefix %q accepted", prefix)
		}
	}
	bad := slices.Clone(f.homes.Schedules)
	bad[0].Home = "a/b"
	if _, err := Publications(f.n, bad, PublishOptions{}); err == nil {
		t.Error("home name with '/' accepted")
	}
	// A '.' is a valid topic level but not a Home Assistant node id.
	bad[0].Home = "alder.7"
	if _, err := Publications(f.n, bad, PublishOptions{}); err != nil {
		t.Errorf("home name with '.' refused without discovery: %v", err)
	}
	if _, err := Publications(f.n, bad, PublishOptions{Start: start, HomeAssistant: true}); err == nil {
		t.Error("home name with '.' accepted as a Home Assistant node id")
	}
	pubs, err := Publications(f.n, f.homes.Schedules, PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pubs[0].Topic != "hearth/home/alder/plan/ev" || bytes.Contains(pubs[0].Payload, []byte(`"start"`)) {
		t.Errorf("default prefix or times: %s %s", pubs[0].Topic, pubs[0].Payload)
	}
}

// TestPlanOf checks the one-home description against the whole
// neighbourhood's.
func TestPlanOf(t *testing.T) {
	f := example(t)
	for hi := range f.n.Homes {
		p, err := PlanOf(f.n, hi, f.in.Schedule.Homes[hi])
		if err != nil {
			t.Fatal(err)
		}
		q := f.homes.Schedules[hi]
		if p.Home != q.Home || !slices.Equal(p.LoadKW, q.LoadKW) || !near(p.EnergyCost, q.EnergyCost) || p.RulesSatisfied != q.RulesSatisfied || len(p.Devices) != len(q.Devices) {
			t.Errorf("home %d: %+v, in the neighbourhood %+v", hi, p, q)
		}
		for d := range p.Devices {
			if !slices.Equal(p.Devices[d].Actions, q.Devices[d].Actions) {
				t.Errorf("home %d device %d: %v vs %v", hi, d, p.Devices[d].Actions, q.Devices[d].Actions)
			}
		}
	}
	if _, err := PlanOf(f.n, len(f.n.Homes), devices.HomeSchedule{}); err == nil {
		t.Error("PlanOf accepted a home out of range")
	}
}

// TestHomeVersusAlone: each home's line says what it pays against
// planning alone, computed from the uncoordinated baseline's own plan of
// that home (an independent evaluation of its schedule).
func TestHomeVersusAlone(t *testing.T) {
	f := example(t)
	uplans := f.n.Plans(f.in.Uncoordinated.Schedule, f.in.Uncoordinated.Eval)
	var b bytes.Buffer
	if err := f.homes.WriteText(&b, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, p := range f.homes.Schedules {
		if p.AloneEnergyCost == nil || !near(*p.AloneEnergyCost, uplans[i].Cost) || !near(*p.AlonePeakKW, uplans[i].Peak) {
			t.Fatalf("%s: alone %v / %v, the baseline's plan %v / %v", p.Home, p.AloneEnergyCost, p.AlonePeakKW, uplans[i].Cost, uplans[i].Peak)
		}
		line := p.Home + "  " + homeLine(p, f.homes.Currency)
		if !strings.Contains(b.String(), line) || !strings.Contains(line, "planning alone") || !strings.Contains(line, "(alone ") {
			t.Fatalf("summary lacks %q", line)
		}
	}
}

// TestDroppedRulesCount: rules the importer dropped count in the totals
// and the headline names their homes.
func TestDroppedRulesCount(t *testing.T) {
	f := example(t)
	in := f.in
	home := f.n.Homes[1].Name
	in.Dropped = []DroppedHome{{Home: home, Rules: []string{"r1", "r2"}}}
	h, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if h.RulesTotal != f.homes.RulesTotal+2 || h.RulesDropped != 2 || h.RulesSatisfied != f.homes.RulesSatisfied {
		t.Errorf("rules %d/%d, %d dropped; without the drop %d/%d", h.RulesSatisfied, h.RulesTotal, h.RulesDropped, f.homes.RulesSatisfied, f.homes.RulesTotal)
	}
	if p := h.Schedules[1]; p.RulesDropped != 2 || p.RulesTotal != f.homes.Schedules[1].RulesTotal+2 {
		t.Errorf("home %s: %d dropped of %d", p.Home, p.RulesDropped, p.RulesTotal)
	}
	var b bytes.Buffer
	if err := h.WriteText(&b, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("rules   %d of %d kept; 1 home dropped 2 rules no schedule keeps: %s (2)", h.RulesSatisfied, h.RulesTotal, home)
	if !strings.Contains(b.String(), want) {
		t.Errorf("headline lacks %q:\n%s", want, b.String())
	}
}

func TestThousands(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 1605740.4: "1,605,740", -1234567: "-1,234,567", 12.5: "13"} {
		if got := thousands(v); got != want {
			t.Errorf("thousands(%v) = %q, want %q", v, got, want)
		}
	}
}
