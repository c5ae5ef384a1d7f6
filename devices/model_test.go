package devices_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
)

// evHome is a home with a 7.4 kW wallbox, 15 kWh in the car, over a
// 10-slot evening of full dynamics.
func evHome(rules ...string) *devices.Neighbourhood {
	e, err := devices.Lookup("ev_wallbox_7kw", "")
	if err != nil {
		panic(err)
	}
	ev, props := e.Instantiate("ev", "", 60)
	props[0].Initial = 15
	h := devices.Home{Name: "alder", Background: make([]float64, 10), Devices: []devices.Device{ev}, Properties: props}
	for _, text := range rules {
		r, err := devices.ParseRule(text, devices.RuleSyntax{Location: "ev"})
		if err != nil {
			panic(err)
		}
		h.Rules = append(h.Rules, r)
	}
	n := &devices.Neighbourhood{
		Horizon: devices.Horizon{Slots: 10, SlotMinutes: 60},
		Prices:  []float64{0.4, 0.4, 0.4, 0.2, 0.2, 0.1, 0.1, 0.1, 0.1, 0.2},
		Windows: []devices.Window{{From: 0, To: 5}, {From: 5, To: 10}},
		Levels:  3, Weights: devices.Weights{Price: 1, Peak: 0.1},
		Homes: []devices.Home{h},
	}
	return n
}

// TestCheckDiagnoses checks that infeasible rules are found statically and
// blamed on the right rule with a reason.
func TestCheckDiagnoses(t *testing.T) {
	tests := []struct {
		rules []string
		blame int
		want  string
	}{
		{[]string{"charge geq 40 before 3"}, 0, "at best ev charge reaches 34.8 kWh"},
		{[]string{"charge leq 60", "charge leq 10"}, 1, "cannot hold from the initial value 15"},
		{[]string{"charge geq 30 before 5", "charge lt 20 after 6"}, 1, "cannot be met together"},
		{[]string{"charge leq 14 at 2"}, 0, "at least ev charge is 15"},
		{[]string{"charge eq 16 at 1"}, 0, "no reachable value"},
	}
	for _, tc := range tests {
		n := evHome(tc.rules...)
		errs := n.Homes[0].Check(n.Horizon, 0)
		if len(errs) != 1 {
			t.Errorf("%v: %d errors %v, want 1", tc.rules, len(errs), errs)
			continue
		}
		var e *devices.Error
		if !errors.As(errs[0], &e) || e.Part != devices.PartRule || e.Index != tc.blame || !errors.Is(e, devices.ErrInfeasible) {
			t.Errorf("%v: %#v, want rule %d infeasible", tc.rules, errs[0], tc.blame)
			continue
		}
		if !strings.Contains(e.Msg, tc.want) {
			t.Errorf("%v: %q, want it to say %q", tc.rules, e.Msg, tc.want)
		}
	}
	if errs := evHome("charge geq 40 before 7", "charge leq 60").Homes[0].Check(evHome().Horizon, 0); len(errs) != 0 {
		t.Errorf("a feasible goal is reported: %v", errs)
	}
}

// TestJointInfeasible checks that models sharing an actuator are checked
// together: a Roomba cannot vacuum more than its battery allows.
func TestJointInfeasible(t *testing.T) {
	e, err := devices.Lookup("Roomba_880", "large")
	if err != nil {
		t.Fatal(err)
	}
	rb, props := e.Instantiate("Roomba_880", "", 60)
	h := devices.Home{Name: "h", Background: make([]float64, 12), Devices: []devices.Device{rb}, Properties: props}
	for _, text := range []string{"1 room cleanliness gt 57 before 7", "0 Roomba_880 charge geq 0"} {
		r, _ := devices.ParseRule(text, devices.RuleSyntax{})
		h.Rules = append(h.Rules, r)
	}
	hz := devices.Horizon{Slots: 12, SlotMinutes: 60, Dynamics: devices.SHDS}
	errs := h.Check(hz, 0)
	if len(errs) != 1 || !errors.Is(errs[0], devices.ErrInfeasible) || !strings.Contains(errs[0].Error(), "share device Roomba_880") {
		t.Fatalf("errors %v, want one joint infeasibility", errs)
	}
	h.Rules[0].T1 = 8 // Example E of shds-model.md: 6 vacuums and a charge fit in slots 1..7.
	if errs := h.Check(hz, 0); len(errs) != 0 {
		t.Fatalf("feasible home reported: %v", errs)
	}
}

// TestEvaluateExampleA recomputes Example A of shds-model.md §3.5 (J = 569)
// from its schedule, in the SHDS integer units.
func TestEvaluateExampleA(t *testing.T) {
	bg := []float64{2, 2, 0, 2, 1, 0, 1, 1, 2, 1, 1, 0}
	washer := devices.Device{Name: "washer", Location: "washer", Actions: []devices.Action{
		{Name: "off", Effects: []devices.Effect{{Property: "laundry_wash"}}},
		{Name: "regular", Power: 4, Effects: []devices.Effect{{Property: "laundry_wash", Delta: 60}}},
	}}
	h := devices.Home{Name: "h1", Background: bg, Devices: []devices.Device{washer},
		Properties: []devices.Property{{Location: "washer", Name: "laundry_wash", Scale: 0.1}}}
	for _, text := range []string{"1 washer laundry_wash eq 60 before 6", "0 washer laundry_wash geq 0", "0 washer laundry_wash leq 60"} {
		r, _ := devices.ParseRule(text, devices.RuleSyntax{})
		h.Rules = append(h.Rules, r)
	}
	n := &devices.Neighbourhood{
		Horizon: devices.Horizon{Slots: 12, SlotMinutes: 60, Dynamics: devices.SHDS},
		Prices:  []float64{19, 19, 19, 19, 22, 22, 24, 84, 84, 22, 22, 19},
		Levels:  100, Weights: devices.Weights{Price: 1, Peak: 1},
		Homes: []devices.Home{h},
	}
	for t := range 12 {
		n.Windows = append(n.Windows, devices.Window{From: t, To: t + 1})
	}
	if err := n.Validate(); err != nil {
		t.Fatal(err)
	}
	s := &devices.Schedule{Homes: []devices.HomeSchedule{{Actions: [][]int{make([]int, 12)}}}}
	s.Homes[0].Actions[0][2] = 1
	ev, err := n.Evaluate(s)
	if err != nil {
		t.Fatal(err)
	}
	if !ev.Feasible || ev.PeakCost != 37 || ev.PriceCost != 532 || ev.Cost != 569 || ev.LoadSquares != 37 || ev.PeakLoad != 4 {
		t.Fatalf("peak %v price %v total %v (%v), want 37 + 532 = 569", ev.PeakCost, ev.PriceCost, ev.Cost, ev.Violations)
	}
	// Running at slot 0 has no effect under SHDS dynamics: the goal fails.
	s.Homes[0].Actions[0][2], s.Homes[0].Actions[0][0] = 0, 1
	if ev, _ := n.Evaluate(s); ev.Feasible || !math.IsInf(ev.Cost, 1) || ev.Homes[0].Rules[0] {
		t.Fatalf("slot 0 run accepted: %+v", ev)
	}
}

func TestLevelCaps(t *testing.T) {
	n := evHome("charge geq 40 before 9")
	// Background 0.4 kW; the wallbox adds 0, 3.7 or 7.4.
	for i := range n.Homes[0].Background {
		n.Homes[0].Background[i] = 0.4
	}
	n.Homes[0].Background[4] = 1.0
	tests := []struct {
		levels int
		w      int
		want   []float64
	}{
		{3, 0, []float64{1.0, 4.7, 8.4}}, // floor is slot 4's least draw 1.0; 4.7 is the middle
		{2, 0, []float64{1.0, 8.4}},
		{1, 1, []float64{7.8}},
		{5, 1, []float64{0.4, 4.1, 7.8}}, // fewer draws than levels: exact
		{2, 1, []float64{0.4, 7.8}},
	}
	for _, tc := range tests {
		n.Levels = tc.levels
		got := n.LevelCaps(0, tc.w)
		if len(got) != len(tc.want) {
			t.Errorf("levels %d window %d: %v, want %v", tc.levels, tc.w, got, tc.want)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-9 {
				t.Errorf("levels %d window %d: %v, want %v", tc.levels, tc.w, got, tc.want)
				break
			}
		}
	}
	caps := []float64{0.4, 4.1, 7.8}
	if devices.Tightest(caps, 4.1000000000000005) != 1 || devices.Tightest(caps, 0) != 0 || devices.Tightest(caps, 9) != -1 {
		t.Error("Tightest")
	}
	labels := devices.LevelLabels(caps, devices.Units{Power: "kW", PowerScale: 1})
	if strings.Join(labels, " ") != "0.00-0.40kW 0.40-4.10kW 4.10-7.80kW" {
		t.Errorf("labels %v", labels)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		edit func(n *devices.Neighbourhood)
		part devices.Part
		want string
	}{
		{func(n *devices.Neighbourhood) { n.Prices = n.Prices[:3] }, devices.PartPrices, "3 prices for 10 slots"},
		{func(n *devices.Neighbourhood) { n.Levels = 0 }, devices.PartLevels, "at least 1"},
		{func(n *devices.Neighbourhood) { n.Windows[1].From = 3 }, devices.PartWindow, "overlaps"},
		{func(n *devices.Neighbourhood) { n.Windows[1].To = 11 }, devices.PartWindow, "inside 0..10"},
		{func(n *devices.Neighbourhood) { n.Homes[0].Background = nil }, devices.PartBackground, "0 background values"},
		{func(n *devices.Neighbourhood) { n.Homes[0].Devices[0].Name = "e v" }, devices.PartDevice, "device name"},
		{func(n *devices.Neighbourhood) { n.Homes[0].Properties[0].Scale = 0 }, devices.PartProperty, "resolution"},
		{func(n *devices.Neighbourhood) { n.Homes[0].Rules[0].T1 = 11 }, devices.PartRule, "outside the horizon"},
		{func(n *devices.Neighbourhood) { n.Homes[0].Rules[0].Property = "soc" }, devices.PartRule, "no property soc"},
		{func(n *devices.Neighbourhood) { n.Homes = append(n.Homes, n.Homes[0]) }, devices.PartHome, "two homes"},
		{func(n *devices.Neighbourhood) { n.Links = [][2]int{{0, 0}} }, devices.PartLinks, "itself"},
		{func(n *devices.Neighbourhood) { n.Weights.Peak = math.NaN() }, devices.PartWeights, "weights"},
		{func(n *devices.Neighbourhood) {
			n.Homes[0].Properties = append(n.Homes[0].Properties, devices.Property{Location: "room", Name: "t", Scale: 1})
			n.Homes[0].Rules = append(n.Homes[0].Rules, devices.Rule{Location: "room", Property: "t", Rel: devices.Geq})
		}, devices.PartRule, "no device of the home changes t"},
	}
	for _, tc := range tests {
		n := evHome("charge geq 40 before 9")
		if err := n.Validate(); err != nil {
			t.Fatal(err)
		}
		tc.edit(n)
		err := n.Validate()
		var e *devices.Error
		if !errors.As(err, &e) || e.Part != tc.part || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want part %s saying %q", err, tc.part, tc.want)
		}
	}
}

func TestCatalogue(t *testing.T) {
	for _, kind := range devices.Kinds() {
		for _, size := range []string{"", "small", "large"} {
			e, err := devices.Lookup(kind, size)
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			d, props := e.Instantiate("dev", "", 30)
			if len(d.Actions) < 2 || len(props) == 0 {
				t.Fatalf("%s: %d actions, %d properties", kind, len(d.Actions), len(props))
			}
			for i := 1; i < len(d.Actions); i++ {
				if d.Actions[i].Power < d.Actions[i-1].Power {
					t.Fatalf("%s: actions not sorted by power", kind)
				}
			}
			h := devices.Home{Name: "h", Background: make([]float64, 4), Devices: []devices.Device{d}, Properties: props}
			for _, p := range props {
				h.Rules = append(h.Rules, e.Bounds(p.Name, p.Location)...)
				if !d.Affects(p.Location, p.Name) {
					t.Fatalf("%s: property %s at %s is not wired to the device", kind, p.Name, p.Location)
				}
			}
			n := &devices.Neighbourhood{Horizon: devices.Horizon{Slots: 4, SlotMinutes: 30}, Prices: make([]float64, 4), Levels: 2, Homes: []devices.Home{h}}
			if err := n.Validate(); err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
		}
	}
	if _, err := devices.Lookup("toaster", ""); err == nil || !strings.Contains(err.Error(), "ev_wallbox_7kw") {
		t.Errorf("unknown kind: %v", err)
	}
	if _, err := devices.Lookup("Tesla_S", "huge"); err == nil {
		t.Error("unknown size accepted")
	}
	// Slot scaling: half-hour slots halve effects, keep power.
	e, _ := devices.Lookup("dishwasher", "")
	d, _ := e.Instantiate("dw", "", 30)
	if d.Actions[1].Power != 0.7 || d.Actions[1].Effects[0].Delta != 25 {
		t.Errorf("dishwasher at 30 min: %+v", d.Actions[1])
	}
	// SHDS entries keep the dictionary's house-type figures and wiring.
	e, _ = devices.Lookup("Tesla_S", "large")
	d, props := e.Instantiate("car", "", 60)
	if d.Actions[1].Name != "charge_72a" || d.Actions[1].Power != 17 || props[0].Location != "car" || props[0].Initial != 30 {
		t.Errorf("Tesla_S large: %+v %+v", d, props)
	}
}

func TestDictionary(t *testing.T) {
	d, err := devices.ParseDictionary(devices.SHDSDictionary())
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != 3 || len(d[0]) != 19 {
		t.Fatalf("%d house types, %d devices", len(d), len(d[0]))
	}
	bad := []string{`{}`, `[]`, `[{"x": {"type": "lamp", "location": "room"}}]`, `[{"x": {"type": "actuator", "location": "room"}}]`,
		`[{"x": {"type": "sensor", "location": "room", "sensing_properties": ["t"]}}]`}
	for _, b := range bad {
		if _, err := devices.ParseDictionary([]byte(b)); err == nil {
			t.Errorf("%s accepted", b)
		}
	}
}
