package shdscheck

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func load(t testing.TB, name string) (*Instance, Dictionary) {
	t.Helper()
	in, err := ReadInstance(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := ReadDictionary(filepath.Join("testdata", "DeviceDictionary.json"))
	if err != nil {
		t.Fatal(err)
	}
	return in, d
}

// homePlan builds one home's plan from the actions that are not idle
// (device → slot → action), with every kept rule of the file marked kept
// and the load and the power per device as the caller claims them.
func homePlan(t *testing.T, in *Instance, d Dictionary, home string, run map[string]map[int]string) HomePlan {
	t.Helper()
	h := in.Agents[home]
	hp := HomePlan{Home: home}
	H := in.Horizon
	load := make([]float64, H)
	for tt := range load {
		load[tt] = float64(q10(h.Background[tt])) / 10
	}
	for _, a := range actuatorsOf(h) {
		dev := d[h.HouseType][a]
		dp := DevicePlan{Device: a, Actions: make([]string, H), KW: make([]float64, H)}
		for tt := 0; tt < H; tt++ {
			an, ok := run[a][tt]
			if !ok {
				an = "off"
			}
			dp.Actions[tt] = an
			if act := dev.Actions[an]; act != nil {
				dp.KW[tt] = float64(q10(act.Power)) / 10
				load[tt] += dp.KW[tt]
			}
		}
		hp.Devices = append(hp.Devices, dp)
	}
	hp.LoadKW = load
	for _, r := range h.Rules {
		hp.Rules = append(hp.Rules, RuleResult{Rule: r, OK: true})
	}
	return hp
}

func slots(action string, ts ...int) map[int]string {
	m := map[int]string{}
	for _, t := range ts {
		m[t] = action
	}
	return m
}

// example is one of the worked examples of shds-model.md §3.5: a home
// alone (no neighbour load), its optimal schedule from the note's table,
// the trajectory values the table prints, and J = ΣP² + Σc·P, which the
// note confirms with JaCoP and an independent dynamic program.
type example struct {
	name, file, home string
	run              map[string]map[int]string
	values           map[string]string // assignment key (without home) → value
	j                int64
}

var examples = []example{
	{"A before, goal met initially", "dm_7_1_2", "h1",
		map[string]map[int]string{"GE_WSM2420D3WW_wash": slots("regular", 2)},
		map[string]string{"GE_WSM2420D3WW_wash.laundry_wash#1": "0.0|0", "GE_WSM2420D3WW_wash.laundry_wash#2": "60.0|1", "Tesla_S.charge#2": "30"},
		569},
	{"B after, satisfied through persistence", "dm_7_1_2", "h2",
		map[string]map[int]string{"Tesla_S": slots("charge_48a", 1, 2, 3, 5), "GE_WSM2420D3WW_wash": slots("regular", 4)},
		map[string]string{"Tesla_S.charge#3": "70.5", "Tesla_S.charge#5": "84.0", "GE_WSM2420D3WW_wash.laundry_wash#8": "60"},
		62732},
	{"C drift, passive bounds, coupled Roomba", "dm_7_1_2", "h5",
		map[string]map[int]string{"Rheem_XE40M12ST45U1": slots("heat", 2, 3, 6), "Roomba_880": slots("vacuum", 7, 8, 9, 10)},
		map[string]string{"water_tank.water_temp#11": "31.6", "water_tank.water_temp#3": "68.5", "room.cleanliness#10": "80.8", "Roomba_880.charge#10": "19.6"},
		6569},
	{"D at, oven heat leaking into the room", "dm_21_1_2", "h3",
		map[string]map[int]string{"Kenmore_790.91312013": slots("broil", 1, 3)},
		map[string]string{"Kenmore_790.91312013.bake#5": "150", "room.temperature_heat#3": "16.5", "room.temperature_heat#11": "9.3"},
		26967},
	{"E strict gt, tight battery", "dm_21_1_2", "h17",
		map[string]map[int]string{"Dyson_AM09": slots("heat", 1, 2, 3), "Roomba_880": {1: "vacuum", 2: "vacuum", 3: "vacuum", 4: "vacuum", 5: "vacuum", 6: "charge", 7: "vacuum"}},
		map[string]string{"room.temperature_heat#3": "25.5", "room.cleanliness#7": "60.0", "Roomba_880.charge#5": "7.0", "Roomba_880.charge#6": "48.6"},
		2024},
}

func (e example) plan(t *testing.T, in *Instance, d Dictionary) *Plan {
	hp := homePlan(t, in, d, e.home, e.run)
	p := &Plan{Schedules: []HomePlan{hp}, Assignment: map[string]string{}}
	for k, v := range e.values {
		p.Assignment[e.home+"/"+k] = v
	}
	p.RulesSatisfied = len(hp.Rules)
	return p
}

// TestWorkedExamples: the checker reproduces the note's worked examples
// exactly — trajectories, rules, per-slot draw and objective.
func TestWorkedExamples(t *testing.T) {
	for _, e := range examples {
		t.Run(e.name, func(t *testing.T) {
			in, d := load(t, e.file)
			p := e.plan(t, in, d)
			r, err := Check(in, d, p)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			if r.RealObjectiveCents != e.j {
				t.Errorf("J = %d, want %d", r.RealObjectiveCents, e.j)
			}
			if r.Rules != len(in.Agents[e.home].Rules) || r.Held != r.Rules || r.Values != len(e.values) {
				t.Errorf("rules %d held of %d, values %d: want all %d held and %d values", r.Held, r.Rules, r.Values, len(in.Agents[e.home].Rules), len(e.values))
			}
			if len(r.DroppedHomes) != len(in.Agents)-1 {
				t.Errorf("dropped homes %v", r.DroppedHomes)
			}
		})
	}
}

// TestMutations: a broken plan or a wrong figure is caught, each with a
// problem that names it.
func TestMutations(t *testing.T) {
	byName := map[string]example{}
	for _, e := range examples {
		byName[e.home+" "+e.file] = e
	}
	tests := []struct {
		name, ex string
		mutate   func(p *Plan)
		want     string
	}{
		{"E: one heat slot fewer breaks gt 23", "h17 dm_21_1_2", func(p *Plan) {
			setAction(p, "Dyson_AM09", 3, "off", 0)
		}, `rule "1 room temperature_heat gt 23 before 11" is counted as kept but does not hold`},
		{"A: washing at 6 misses before 6", "h1 dm_7_1_2", func(p *Plan) {
			setAction(p, "GE_WSM2420D3WW_wash", 2, "off", 0)
			setAction(p, "GE_WSM2420D3WW_wash", 6, "regular", 0.4)
		}, `rule "1 GE_WSM2420D3WW_wash laundry_wash eq 60 before 6" is counted as kept but does not hold`},
		{"D: broil at 6 misses at 5", "h3 dm_21_1_2", func(p *Plan) {
			setAction(p, "Kenmore_790.91312013", 3, "off", 0)
			setAction(p, "Kenmore_790.91312013", 6, "broil", 10.5)
		}, `bake eq 150 at 5" is counted as kept but does not hold`},
		{"C: a vacuum slot fewer", "h5 dm_7_1_2", func(p *Plan) {
			setAction(p, "Roomba_880", 10, "off", 0)
		}, `cleanliness gt 75 after 4" is counted as kept but does not hold`},
		{"a broken rule counted as broken is a disagreement too", "h17 dm_21_1_2", func(p *Plan) {
			p.Schedules[0].Rules[0].OK = false
			p.RulesSatisfied--
		}, "is counted as broken but holds"},
		{"reported load", "h2 dm_7_1_2", func(p *Plan) {
			p.Schedules[0].LoadKW[4] += 0.1
		}, "home h2: slot 4: reported load"},
		{"reported device power", "h2 dm_7_1_2", func(p *Plan) {
			p.Schedules[0].Devices[1].KW[1] = 11.6
		}, "charge_48a at slot 1 reported 11.6 kW"},
		{"unknown action", "h2 dm_7_1_2", func(p *Plan) {
			p.Schedules[0].Devices[1].Actions[1] = "charge_72a"
		}, `has no action "charge_72a"`},
		{"device the home lacks", "h2 dm_7_1_2", func(p *Plan) {
			p.Schedules[0].Devices[0].Device = "Dyson_AM09"
		}, "device Dyson_AM09 is not one of its actuators"},
		{"rule not in the file", "h2 dm_7_1_2", func(p *Plan) {
			p.Schedules[0].Rules[0].Rule = "1 Tesla_S charge gt 70 after 1"
		}, "is not a kept rule of the instance"},
		{"trajectory value", "h17 dm_21_1_2", func(p *Plan) {
			p.Assignment["h17/room.temperature_heat#3"] = "25.4"
		}, "recomputed 25.5"},
		{"reported peak", "h2 dm_7_1_2", func(p *Plan) {
			v := 11.5
			p.PeakKW = &v
		}, "reported peak 11.5 kW, recomputed 11.6 kW"},
		{"reported bill", "h2 dm_7_1_2", func(p *Plan) {
			v := 17.0
			p.EnergyCost = &v
		}, "reported bill $17.0000"},
		{"reported objective", "h2 dm_7_1_2", func(p *Plan) {
			v := 62733.0
			p.Objective = &v
		}, "reported objective 62733 matches none"},
		{"rules kept headline", "h2 dm_7_1_2", func(p *Plan) {
			p.RulesSatisfied++
		}, "reported 7 rules kept, the schedules mark 6"},
		{"draw outside its committed level", "h2 dm_7_1_2", func(p *Plan) {
			p.Schedules[0].Levels = []string{"0.00-0.20kWh", "0.00-11.40kWh", "0.00-11.60kWh", "0.00-11.60kWh", "0.00-0.50kWh", "0.00-11.50kWh", "0.00-0.20kWh", "0.00-0.00kWh", "0.00-0.20kWh", "0.00-0.20kWh", "0.00-0.20kWh", "0.00-0.00kWh"}
		}, "slot 1: draw 11.5 kWh outside its committed level 0.00-11.40kWh"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, ok := byName[tc.ex]
			if !ok {
				t.Fatalf("no example %s", tc.ex)
			}
			in, d := load(t, e.file)
			p := e.plan(t, in, d)
			r, err := Check(in, d, p)
			if err != nil || r.Err() != nil {
				t.Fatalf("unmutated: %v %v", err, r.Err())
			}
			tc.mutate(p)
			r, err = Check(in, d, p)
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprint(r.Problems)
			if !strings.Contains(got, tc.want) {
				t.Errorf("problems %s\nwant one containing %q", got, tc.want)
			}
		})
	}
}

// setAction changes one slot of a device and keeps the device's and the
// home's reported power consistent with kw, so only the rule can fail.
func setAction(p *Plan, device string, t int, action string, kw float64) {
	hp := &p.Schedules[0]
	for i := range hp.Devices {
		dp := &hp.Devices[i]
		if dp.Device == device {
			hp.LoadKW[t] += kw - dp.KW[t]
			dp.Actions[t], dp.KW[t] = action, kw
		}
	}
}

// TestObjectiveDefinitions: the reported objective is matched against the
// real-load and committed-level definitions, at exact and whole-cent
// prices, and the match is named; a bill at whole-cent prices is a
// finding, not a problem.
func TestObjectiveDefinitions(t *testing.T) {
	in, d := load(t, "dm_7_1_2")
	e := examples[1] // h2 alone
	p := e.plan(t, in, d)
	r, err := Check(in, d, p)
	if err != nil {
		t.Fatal(err)
	}
	levels := make([]string, in.Horizon)
	for tt, l := range r.Load {
		levels[tt] = fmt.Sprintf("%.2f-%.2fkWh", float64(l)/10, float64(l+1)/10)
	}
	p.Schedules[0].Levels = levels
	r, _ = Check(in, d, p)
	cents := r.BillCents
	for _, tc := range []struct {
		obj  float64
		want string
	}{
		{r.RealObjective, "real load, file prices"},
		{float64(r.RealObjectiveCents), "real load, whole-cent prices"},
		{float64(r.LevelObjective), "committed levels, whole-cent prices"},
	} {
		p.Objective, p.EnergyCost = &tc.obj, &cents
		r, err := Check(in, d, p)
		if err != nil || r.Err() != nil {
			t.Fatalf("%v %v", err, r.Err())
		}
		if r.Matched != tc.want || len(r.Findings) != 1 {
			t.Errorf("objective %v matched %q, findings %v; want %q and the cents finding", tc.obj, r.Matched, r.Findings, tc.want)
		}
	}
	if r.MaxSlack != 0.1 {
		t.Errorf("max slack %v kW, want 0.1", r.MaxSlack)
	}
}

func TestParseRuleErrors(t *testing.T) {
	for _, s := range []string{
		"", "1 room", "2 room temperature_heat geq 8", "0 room temperature_heat about 8",
		"0 room temperature_heat geq eight", "0 room temperature_heat geq 8 extra",
		"1 room temperature_heat geq 8 before", "1 room temperature_heat geq 8 soon 3",
		"1 room temperature_heat geq 8 before 13", "1 room temperature_heat geq 8 after 11",
		"1 room temperature_heat geq 8 at 12", "1 room temperature_heat geq 8 within 5 5",
		"1 room temperature_heat geq 8 before 3 4",
	} {
		if _, err := parseRule(s, 12); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"1 Tesla_S charge leq 59 before 3", "0 room cleanliness geq 0", "1 room x eq 1 within 2 5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseRule(s, 12)
		if err == nil {
			lo, hi, _ := r.window(12)
			if lo < 0 || hi > 12 || lo > hi {
				t.Fatalf("%q: window [%d,%d)", s, lo, hi)
			}
			r.holds(make([]int64, 12))
		}
	})
}

// FuzzCheck: any output JSON, however wrong, gives problems or an error,
// never a panic.
func FuzzCheck(f *testing.F) {
	in, d := load(f, "dm_7_1_2")
	f.Add([]byte(`{"objective":1,"schedules":[{"home":"h1","devices":[{"device":"Tesla_S","actions":["off"],"kw":[0]}],"levels":["x"],"rules":[{"rule":"0 Tesla_S charge geq 0","ok":true}]}]}`))
	f.Add([]byte(`{"schedules":[{"home":"h9"},{"home":"h1","load_kw":[1,2]}],"assignment":{"h1/Tesla_S.charge#99":"1"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := DecodeOutput(b)
		if err != nil {
			return
		}
		if _, err := Check(in, d, o.Coordinated()); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzDecodeInstance(f *testing.F) {
	f.Add([]byte(`{"horizon":2,"granularity":60,"priceSchema":[1,2],"agents":{"h1":{"backgroundLoad":[0,0],"houseType":0,"rules":["0 room cleanliness geq 0"]}}}`))
	_, d := load(f, "dm_7_1_2")
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := DecodeInstance(b)
		if err != nil {
			return
		}
		_, _ = Check(in, d, &Plan{})
	})
}
