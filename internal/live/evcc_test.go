package live

import (
	"encoding/json"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
)

// The files of examples/live-evcc: a home whose state comes from evcc's
// MQTT API, and the Home Assistant automations that drive evcc from the
// home's commands.
const (
	evccStreet = "../../examples/live-evcc/street.toml"
	evccHA     = "../../examples/live-evcc/homeassistant.yaml"
)

// evccWritable are the evcc settings the automations may write (docs.evcc.io,
// MQTT API: writable topics take the value on <topic>/set), with the
// values each accepts.
var evccWritable = map[string][]string{
	"evcc/loadpoints/1/mode/set":       {"off", "pv", "minpv", "now"},
	"evcc/loadpoints/1/maxCurrent/set": nil, // amperes
	"evcc/site/batteryMode/set":        {"normal", "hold", "charge"},
}

// TestEvccState: the example's state topics are evcc's, in evcc's units
// (vehicleSoc and battery/soc in %, connected true/false), and reach the
// plan as kWh.
func TestEvccState(t *testing.T) {
	cfg, err := config.Load(evccStreet)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Live.On || cfg.Live.OffPlanKWh != 2 || cfg.Live.CommandGrace != 5*time.Minute {
		t.Errorf("[live] %+v", cfg.Live)
	}
	now := time.Date(2026, 11, 26, 21, 5, 0, 0, time.Local)
	in := NewInputs(cfg, "hearth", "linden", fixedClock(t, now), nil)
	topics := in.Topics()
	for _, want := range []string{"evcc/loadpoints/1/vehicleSoc", "evcc/loadpoints/1/connected", "evcc/site/battery/soc"} {
		if !slices.Contains(topics, want) {
			t.Errorf("no subscription to %s in %v", want, topics)
		}
	}
	in.Handle("evcc/loadpoints/1/vehicleSoc", []byte("50"))
	in.Handle("evcc/loadpoints/1/connected", []byte("true"))
	in.Handle("evcc/site/battery/soc", []byte("40"))
	r, _, notes, err := in.Load(evccStreet, homesolveOverrides(), now)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		if strings.Contains(n.Msg, "no live state") {
			t.Errorf("note %v", n)
		}
	}
	h := &r.Model().Homes[0]
	if got := initial(h, "charge"); got != 30 {
		t.Errorf("car at 50%% of 60 kWh: %g kWh, want 30", got)
	}
	if got := initial(h, "soc"); math.Abs(got-5.4) > 1e-9 {
		t.Errorf("battery at 40%% of 13.5 kWh: %g kWh, want 5.4", got)
	}
}

// TestEvccAutomations checks the Home Assistant automations against
// hearth's command payload, the catalogue's actions and evcc's writable
// topics.
func TestEvccAutomations(t *testing.T) {
	b, err := os.ReadFile(evccHA)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		MQTT struct {
			Sensor []map[string]any `yaml:"sensor"`
		} `yaml:"mqtt"`
		Automation []map[string]any `yaml:"automation"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	// Every field the templates read is one a command has.
	var cmd map[string]any
	c, _ := json.Marshal(Command{})
	if err := json.Unmarshal(c, &cmd); err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?:cmd|value_json)\.([a-z_]+)|state_attr\([^,]+, '([a-z_]+)'\)`).FindAllStringSubmatch(string(b), -1) {
		f := m[1] + m[2]
		if _, ok := cmd[f]; !ok {
			t.Errorf("the automations read %q, which a command lacks", f)
		}
	}
	// Triggers and the sensor read the home's command topics.
	topics := map[string]bool{}
	for _, s := range doc.MQTT.Sensor {
		topics[s["state_topic"].(string)] = true
	}
	for _, a := range doc.Automation {
		for _, tr := range a["triggers"].([]any) {
			if tp, ok := tr.(map[string]any)["topic"]; ok {
				topics[tp.(string)] = true
			}
		}
	}
	for _, d := range []string{"ev", "battery"} {
		if !topics[CommandTopic("hearth", "linden", d)] {
			t.Errorf("nothing reads %s", CommandTopic("hearth", "linden", d))
		}
	}
	// Every publication goes to a writable evcc topic.
	pubs := regexp.MustCompile(`topic: (evcc/\S+)`).FindAllStringSubmatch(string(b), -1)
	if len(pubs) != 3 {
		t.Errorf("%d evcc publications, want 3", len(pubs))
	}
	for _, p := range pubs {
		if _, ok := evccWritable[p[1]]; !ok {
			t.Errorf("%s is not a writable evcc topic", p[1])
		}
	}
	// The battery's modes cover the catalogue's actions, onto evcc's.
	bat, err := devices.Lookup("home_battery", "")
	if err != nil {
		t.Fatal(err)
	}
	// The street's own devices, on automatic power levels (the default):
	// the actions its commands name, a wallbox's exact currents (13a)
	// among them.
	cfg, err := config.Load(evccStreet)
	if err != nil {
		t.Fatal(err)
	}
	home := cfg.Neighbourhood.Homes[0]
	street := map[string][]devices.Action{}
	for _, d := range home.Devices {
		street[d.Kind] = slices.Concat(d.Actions, d.Exact)
	}
	if len(street["home_battery"]) <= len(bat.Actions) || len(street["ev_wallbox_11kw"]) <= 5 {
		t.Fatalf("the street's battery has %d actions and its wallbox %d: not on automatic levels", len(street["home_battery"]), len(street["ev_wallbox_11kw"]))
	}
	modes := doc.Automation[1]["variables"].(map[string]any)["modes"].(map[string]any)
	family := regexp.MustCompile(`split\('_'\)\[0\]`)
	if !family.MatchString(doc.Automation[1]["variables"].(map[string]any)["action"].(string)) {
		t.Errorf("the battery automation does not read the action's family (before its first _)")
	}
	for _, a := range slices.Concat(bat.Actions, street["home_battery"]) {
		f, _, _ := strings.Cut(a.Name, "_")
		m, ok := modes[f].(string)
		if !ok || !slices.Contains(evccWritable["evcc/site/batteryMode/set"], m) {
			t.Errorf("battery action %s maps to %v, not an evcc battery mode", a.Name, modes[f])
		}
	}
	// The car's current comes from its action's name: at 230 V per
	// phase it gives the action's power (one phase at 7 kW, three at
	// 11 kW).
	amps := regexp.MustCompile(`(\d+)a$`)
	for kind, phases := range map[string]float64{"ev_wallbox_7kw": 1, "ev_wallbox_11kw": 3} {
		e, err := devices.Lookup(kind, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range slices.Concat(e.Actions, street[kind]) {
			if a.Name == "off" {
				continue
			}
			m := amps.FindStringSubmatch(a.Name)
			if m == nil {
				t.Errorf("%s %s: no current in the name", kind, a.Name)
				continue
			}
			var amp float64
			_ = json.Unmarshal([]byte(m[1]), &amp)
			if kw := amp * 230 * phases / 1000; math.Abs(kw-a.Power) > 0.1 {
				t.Errorf("%s %s: %g A on %g phases is %.2f kW, the action %.2f kW", kind, a.Name, amp, phases, kw, a.Power)
			}
		}
	}
}
