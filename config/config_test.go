package config_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/compile"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
	"github.com/hearth-dcop/hearth/mva/sim"
)

const example = "../examples/neighbourhood/neighbourhood.toml"

// TestExample loads the example neighbourhood, checks what it says and
// what the defaults fill in, and solves it exactly with DPOP: every rule
// holds and the reported cost is the schedule's.
func TestExample(t *testing.T) {
	cfg, err := config.Load(example)
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Neighbourhood
	if n.Name != "elm-close" || n.Horizon.Slots != 14 || n.Horizon.SlotMinutes != 60 || n.Horizon.Start != 17*60 || n.Horizon.Dynamics != devices.Full {
		t.Fatalf("horizon %+v", n.Horizon)
	}
	if n.Prices[0] != 0.45 || n.Prices[4] != 0.20 || n.Prices[6] != 0.12 || n.Prices[13] != 0.20 {
		t.Fatalf("prices %v", n.Prices)
	}
	if fmt.Sprint(n.Windows) != "[{0 4} {4 8} {8 14}]" || n.Levels != 3 || n.FeederLimit != 40 || n.Weights != (devices.Weights{Price: 1, Peak: 0.02, Miss: devices.DefaultMissPenalty}) {
		t.Fatalf("coordination %v levels %d feeder %v weights %+v", n.Windows, n.Levels, n.FeederLimit, n.Weights)
	}
	if cfg.Solver.Global != "dpop" || cfg.Solver.Local != "be" || cfg.Solver.Table != "eager" || cfg.Solver.GPU != "auto" || cfg.Solver.Seed != 1 {
		t.Fatalf("solver %+v", cfg.Solver)
	}
	if !cfg.Broker.Embedded() || cfg.Broker.TopicPrefix != "hearth" {
		t.Fatalf("broker %+v", cfg.Broker)
	}
	var names []string
	for _, h := range n.Homes {
		names = append(names, h.Name)
	}
	if strings.Join(names, ",") != "alder,birch,cedar,dogwood" || n.Links != nil {
		t.Fatalf("homes %v links %v", names, n.Links)
	}
	alder := n.Homes[0]
	// The EV's rule, its catalogue bounds (0 and 60 kWh), the dishwasher's
	// rule and its bounds.
	if len(alder.Rules) != 6 || alder.Rules[2].Text != "ev charge geq 0 (bound of ev_wallbox_7kw)" {
		t.Fatalf("alder rules %+v", alder.Rules)
	}
	if alder.Rules[0].Prefix != devices.Before || alder.Rules[0].T1 != 14 {
		t.Fatalf("07:00 is boundary %d, want 14", alder.Rules[0].T1)
	}
	c, err := compile.Compile(n, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sol, err := sim.Solve(context.Background(), c.Problem, sim.Options{
		Protocol: dpop.New,
		Solver:   func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("be", lp) },
		Eager:    true,
		Seed:     1,
	})
	if err != nil {
		t.Fatal(err)
	}
	s, ev, err := c.Report(sol.Assign)
	if err != nil {
		t.Fatal(err)
	}
	plans := n.Plans(s, ev)
	bill := 0.0
	for _, p := range plans {
		bill += p.Cost
		if len(p.Actions) != len(n.Homes[0].Devices) && p.Home == "alder" || len(p.Levels) != 3 || len(p.Load) != 14 {
			t.Fatalf("plan %+v", p)
		}
		for _, r := range p.Rules {
			if !r.OK {
				t.Errorf("%s: %s broken", p.Home, r.Rule)
			}
		}
	}
	if math.Abs(bill-ev.PriceCost) > 1e-9 || len(plans[0].Actions["ev"]) != 14 {
		t.Fatalf("bill %v, price cost %v", bill, ev.PriceCost)
	}
	if !sol.Optimal || !ev.Feasible || math.Abs(ev.Cost-sol.Cost) > 1e-9 {
		t.Fatalf("optimal %v feasible %v (%v): cost %v, evaluation %v", sol.Optimal, ev.Feasible, ev.Violations, sol.Cost, ev.Cost)
	}
	for hi, he := range ev.Homes {
		for ri, ok := range he.Rules {
			if !ok {
				t.Errorf("%s: rule %q broken", n.Homes[hi].Name, n.Homes[hi].Rules[ri].Text)
			}
		}
	}
}

// files is an in-memory file system for Parse.
type files map[string]string

func (f files) read(p string) ([]byte, error) {
	if s, ok := f[p]; ok {
		return []byte(s), nil
	}
	return nil, fs.ErrNotExist
}

const home = `name = "alder"
background_kw = 0.4

[[device]]
name = "ev"
kind = "ev_wallbox_7kw"
initial = { charge = 15.0 }
rules = ["charge geq 40 before 07:00"]
`

func neighbourhood(extra string) string {
	return `homes = ["alder.toml"]
[horizon]
start = "17:00"
slots = 14
` + extra
}

func TestDefaults(t *testing.T) {
	cfg, err := config.Parse("n.toml", []byte(`[[home]]
name = "solo"
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Neighbourhood
	if n.Name != "n" || n.Horizon.Slots != 24 || n.Horizon.SlotMinutes != 60 || n.Levels != 4 || len(n.Windows) != 1 || n.Windows[0] != (devices.Window{From: 0, To: 24}) {
		t.Fatalf("defaults %+v", n)
	}
	if n.Prices[5] != config.DefaultPrice || n.Weights.Peak != config.DefaultPeakWeight || n.FeederLimit != 0 || len(n.Homes[0].Background) != 24 {
		t.Fatalf("defaults %+v", n)
	}
	if cfg.Solver.Global != "dpop" || cfg.Solver.Timeout != 0 || !cfg.Broker.Embedded() {
		t.Fatalf("defaults %+v %+v", cfg.Solver, cfg.Broker)
	}
}

func TestSettings(t *testing.T) {
	fsys := files{"/x/alder.toml": home, "/x/ca.pem": "pem"}
	cfg, err := config.Parse("/x/n.toml", []byte(neighbourhood(`
[coordination]
every = "4h"
levels = 2
[solver]
global = "mgm"
local = "dfbnb"
table = "lazy"
gpu = "off"
seed = 42
timeout = "30s"
params = { cycles = 50, p = 0.5 }
[broker]
url = "ssl://broker.example.org:8883"
username = "u"
password = "p"
ca_file = "ca.pem"
topic_prefix = "street/7"
[prices]
per_slot = [1,2,3,4,5,6,7,8,9,10,11,12,13,14]
currency = "EUR"
`)), fsys.read)
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Neighbourhood
	if fmt.Sprint(n.Windows) != "[{0 4} {4 8} {8 12} {12 14}]" || n.Levels != 2 || n.Prices[13] != 14 || n.Units.Currency != "EUR" {
		t.Fatalf("%v %d %v", n.Windows, n.Levels, n.Prices)
	}
	s := cfg.Solver
	if s.Global != "mgm" || s.Local != "dfbnb" || s.Table != "lazy" || s.GPU != "off" || s.Seed != 42 || s.Timeout != 30*time.Second || s.Params["cycles"] != 50 || s.Params["p"] != 0.5 {
		t.Fatalf("solver %+v", s)
	}
	b := cfg.Broker
	if b.Embedded() || b.CAFile != "/x/ca.pem" || b.Username != "u" || b.TopicPrefix != "street/7" {
		t.Fatalf("broker %+v", b)
	}
	if cfg.HomeFiles[0] != "/x/alder.toml" {
		t.Fatalf("home files %v", cfg.HomeFiles)
	}
}

// TestErrors checks that every fault names its file, line and key and
// says what to do.
func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		nb   string // the neighbourhood file /x/n.toml
		home string // /x/alder.toml; "" means the good one
		file string // want
		line int
		key  string
		msg  string
		// alone: this must be the only error (no cascade of follow-on
		// errors from one mistake).
		alone bool
		extra files
		// infeasible: the only faults are rules no schedule can keep
		// (exit 1, not a bad file).
		infeasible bool
	}{
		{name: "syntax", nb: "homes = [\n\"a\"\nx = ", file: "/x/n.toml", line: 3, key: "homes", msg: "not valid TOML"},
		{name: "unknown key", nb: neighbourhood("[horizn]\n"), file: "/x/n.toml", line: 5, key: "horizn", msg: `did you mean "horizon"`},
		{name: "wrong type", nb: "homes = [\"alder.toml\"]\n[horizon]\nslots = \"12\"\n", file: "/x/n.toml", line: 3, key: "horizon.slots", msg: "want an integer"},
		{name: "zero levels", nb: neighbourhood("[coordination]\nlevels = 0\n"), file: "/x/n.toml", line: 6, key: "coordination.levels", msg: "at least one level"},
		{name: "solver", nb: neighbourhood("[solver]\nglobal = \"dpopp\"\n"), file: "/x/n.toml", line: 6, key: "solver.global", msg: `did you mean "dpop"`},
		{name: "gpu", nb: neighbourhood("[solver]\ngpu = \"yes\"\n"), file: "/x/n.toml", line: 6, key: "solver.gpu", msg: "auto, on, off"},
		{name: "missing home file", nb: "homes = [\"alder.toml\",\n  \"birch.toml\"]\n", file: "/x/n.toml", line: 2, key: "homes[1]", msg: "cannot read"},
		{name: "no homes", nb: "name = \"x\"\n", file: "/x/n.toml", msg: "no homes"},
		{name: "window order", nb: neighbourhood("[coordination]\nwindows = [[\"17:00\", \"21:00\"],\n  [\"20:00\", \"23:00\"]]\n"), file: "/x/n.toml", line: 7, key: "coordination.windows[1]", msg: "overlaps"},
		{name: "window empty", nb: neighbourhood("[coordination]\nwindows = [[\"21:00\", \"17:00\"]]\n"), file: "/x/n.toml", line: 6, key: "coordination.windows[0]", msg: "empty"},
		{name: "every", nb: neighbourhood("[coordination]\nevery = \"90m\"\n"), file: "/x/n.toml", line: 6, key: "coordination.every", msg: "60-minute slots"},
		{name: "per slot", nb: neighbourhood("[prices]\nper_slot = [0.1, 0.2]\n"), file: "/x/n.toml", line: 6, key: "prices.per_slot", msg: "2 prices for 14 slots"},
		{name: "period", nb: neighbourhood("[prices]\nperiods = [{ from = \"17:00\", to = \"17:30\", price = 1 }]\n"), file: "/x/n.toml", line: 6, key: "prices.periods[0].to", msg: "not a slot boundary"},
		{name: "feeder", nb: neighbourhood("[feeder]\nlimit_kw = 0.1\nhard = true\n"), file: "/x/n.toml", line: 6, key: "feeder.limit_kw", msg: "cannot draw less than 0.40 kW", infeasible: true},
		{name: "neighbour", nb: neighbourhood("") + "", file: "/x/n.toml", line: 1, key: "neighbours[0]", msg: `"aldr" is not a home`},
		{name: "tls", nb: neighbourhood("[broker]\nurl = \"tcp://b:1883\"\nca_file = \"ca.pem\"\n"), file: "/x/n.toml", line: 7, key: "broker.ca_file", msg: "TLS broker URL", extra: files{"/x/ca.pem": "x"}},
		{name: "broker url", nb: neighbourhood("[broker]\nurl = \"http://b\"\n"), file: "/x/n.toml", line: 6, key: "broker.url", msg: "scheme"},
		{name: "tls file", nb: neighbourhood("[broker]\nurl = \"ssl://b:8883\"\nca_file = \"nope.pem\"\n"), file: "/x/n.toml", line: 7, key: "broker.ca_file", msg: "cannot read"},
		{name: "home syntax", nb: neighbourhood(""), home: "name = \"alder\"\nname = \"b\"\n", file: "/x/alder.toml", line: 2, key: "name", msg: "not valid TOML"},
		{name: "unknown kind", nb: neighbourhood(""), home: "[[device]]\nname = \"ev\"\nkind = \"tesla\"\n", file: "/x/alder.toml", line: 3, key: "device[0].kind", msg: "unknown device kind"},
		{name: "kind and actions", nb: neighbourhood(""), home: "[[device]]\nname = \"ev\"\nkind = \"dryer\"\nactions = []\n", file: "/x/alder.toml", line: 4, key: "device[0].actions", msg: "not both"},
		{name: "no kind", nb: neighbourhood(""), home: "[[device]]\nname = \"ev\"\n", file: "/x/alder.toml", line: 1, key: "device[0].kind", msg: "a device needs kind"},
		{name: "misspelt kind", nb: neighbourhood(""), home: home + "\n[[device]]\nname = \"dw\"\nkind = \"dishwaser\"\nrules = [\"progress geq 100 before 07:00\"]\n", file: "/x/alder.toml", line: 12, key: "device[1].kind", msg: `did you mean "dishwasher"`, alone: true},
		{name: "device key", nb: neighbourhood(""), home: home + "\n[[device]]\nname = \"dw\"\nkind = \"dishwasher\"\npower = 3\n", file: "/x/alder.toml", line: 13, key: "device[1].power", msg: "unknown key"},
		{name: "duplicate device", nb: neighbourhood(""), home: home + "\n[[device]]\nname = \"ev\"\nkind = \"dishwasher\"\n", file: "/x/alder.toml", line: 11, key: "device[1].name", msg: "two devices"},
		{name: "unknown property", nb: neighbourhood(""), home: strings.Replace(home, "charge geq 40", "soc geq 40", 1), file: "/x/alder.toml", line: 8, key: "device[0].rules[0]", msg: "no property soc at ev"},
		{name: "unknown device in rule", nb: neighbourhood(""), home: "rules = [\"car charge geq 40 before 07:00\"]\n" + home, file: "/x/alder.toml", line: 1, key: "rules[0]", msg: "no property charge at car"},
		{name: "time outside", nb: neighbourhood(""), home: strings.Replace(home, "07:00", "09:00", 1), file: "/x/alder.toml", line: 8, key: "device[0].rules[0]", msg: "outside the horizon 17:00–07:00"},
		{name: "window off grid", nb: neighbourhood("[coordination]\nwindows = [[\"17:00\", \"17:30\"]]\n"), file: "/x/n.toml", line: 6, key: "coordination.windows[0]", msg: "not a slot boundary"},
		{name: "percent without range", nb: neighbourhood(""), home: "[[device]]\nname = \"heater\"\nactions = [{ name = \"on\", power_kw = 2, effects = { t = 1 } }]\nrules = [\"t geq 50% before 07:00\"]\n", file: "/x/alder.toml", line: 4, key: "device[0].rules[0]", msg: "a goal in % needs"},
		{name: "rule syntax", nb: neighbourhood(""), home: strings.Replace(home, "geq", "atleast", 1), file: "/x/alder.toml", line: 8, key: "device[0].rules[0]", msg: "unknown relation"},
		{name: "infeasible", nb: neighbourhood(""), home: strings.Replace(home, `["charge geq 40 before 07:00"]`, `[{ rule = "charge geq 40 before 19:00", hard = true }]`, 1), file: "/x/alder.toml", line: 8, key: "device[0].rules[0]", msg: "at best ev charge reaches 28.0966 kWh", infeasible: true},
		{name: "infeasible bound", nb: neighbourhood(""), home: strings.Replace(home, `["charge geq 40 before 07:00"]`, `[{ rule = "charge geq 70 before 07:00", hard = true }]`, 1), file: "/x/alder.toml", line: 8, key: "device[0].rules[0]", msg: "cannot be satisfied", infeasible: true},
		{name: "initial", nb: neighbourhood(""), home: strings.Replace(home, "charge = 15.0", "soc = 15.0", 1), file: "/x/alder.toml", line: 7, key: "device[0].initial.soc", msg: "changes no property \"soc\""},
		{name: "background", nb: neighbourhood(""), home: strings.Replace(home, "0.4", "[0.4, 0.5]", 1), file: "/x/alder.toml", line: 2, key: "background_kw", msg: "2 values for 14 slots"},
		{name: "sensor", nb: neighbourhood(""), home: home + "\n[[sensor]]\nlocation = \"ev\"\nproperty = \"charge\"\nresolution = -1\n", file: "/x/alder.toml", line: 13, key: "sensor[0].resolution", msg: "must be positive"},
		{name: "home name", nb: neighbourhood(""), home: "name = \"al der\"\n", file: "/x/alder.toml", line: 1, key: "name", msg: "use letters"},
		{name: "planner", nb: neighbourhood(""), home: "planner = \"lp\"\n" + home, file: "/x/alder.toml", line: 1, key: "planner", msg: "want \"compiled\""},
		{name: "inline without name", nb: "[[home]]\nbackground_kw = 1\n", file: "/x/n.toml", line: 1, key: "home[0].name", msg: "needs a name"},
		{name: "custom without range", nb: neighbourhood(""), home: "[[device]]\nname = \"heater\"\nactions = [{ name = \"on\", power_kw = 2, effects = { t = 1 } }]\n", file: "/x/alder.toml", line: 3, key: "device[0].actions", msg: "declares no range: add range = { t = [MIN, MAX] }"},
		{name: "custom range shape", nb: neighbourhood(""), home: "[[device]]\nname = \"heater\"\nactions = [{ name = \"on\", power_kw = 2, effects = { t = 1 } }]\nrange = { t = [5] }\n", file: "/x/alder.toml", line: 4, key: "device[0].range.t", msg: "want [MIN, MAX]"},
		{name: "custom range property", nb: neighbourhood(""), home: "[[device]]\nname = \"heater\"\nactions = [{ name = \"on\", power_kw = 2, effects = { t = 1 } }]\nrange = { t = [0, 5], u = [0, 1] }\n", file: "/x/alder.toml", line: 4, key: "device[0].range.u", msg: "stores no property \"u\""},
		{name: "custom initial outside range", nb: neighbourhood(""), home: "[[device]]\nname = \"heater\"\nactions = [{ name = \"on\", power_kw = 2, effects = { t = 1 } }]\nrange = { t = [10, 20] }\n", file: "/x/alder.toml", line: 4, key: "device[0].range.t", msg: "cannot hold from the initial value 0.0", infeasible: true},
		{name: "sensor topic", nb: neighbourhood(""), home: home + "\n[[sensor]]\nlocation = \"living\"\nproperty = \"temperature\"\ntopic = \"ha/#\"\n", file: "/x/alder.toml", line: 13, key: "sensor[0].topic", msg: "without wildcards"},
		{name: "sensor field without topic", nb: neighbourhood(""), home: home + "\n[[sensor]]\nlocation = \"living\"\nproperty = \"temperature\"\nfield = \"t\"\n", file: "/x/alder.toml", line: 13, key: "sensor[0].field", msg: "give topic"},
		{name: "sensor field", nb: neighbourhood(""), home: home + "\n[[sensor]]\nlocation = \"living\"\nproperty = \"temperature\"\ntopic = \"a/b\"\nfield = \"a.\"\n", file: "/x/alder.toml", line: 14, key: "sensor[0].field", msg: "JSON field path"},
		{name: "sensor half range", nb: neighbourhood(""), home: home + "\n[[sensor]]\nlocation = \"ev\"\nproperty = \"charge\"\nmin = 1\n", file: "/x/alder.toml", line: 13, key: "sensor[0].min", msg: "give both min and max"},
		{name: "rule table", nb: neighbourhood(""), home: strings.Replace(home, `["charge geq 40 before 07:00"]`, `[{ hard = true }]`, 1), file: "/x/alder.toml", line: 8, key: "device[0].rules[0]", msg: "needs rule ="},
		{name: "rule hard type", nb: neighbourhood(""), home: strings.Replace(home, `["charge geq 40 before 07:00"]`, `[{ rule = "charge geq 40 before 07:00", hard = "yes" }]`, 1), file: "/x/alder.toml", line: 8, key: "device[0].rules[0].hard", msg: "want true or false"},
		{name: "rule type", nb: neighbourhood(""), home: strings.Replace(home, `["charge geq 40 before 07:00"]`, `[40]`, 1), file: "/x/alder.toml", line: 8, key: "device[0].rules[0]", msg: "want a rule"},
		{name: "miss penalty", nb: neighbourhood("[objective]\nmiss = 0\n"), file: "/x/n.toml", line: 6, key: "objective.miss", msg: "must be positive"},
		{name: "cycle cost", nb: neighbourhood(""), home: home + "\n[[device]]\nname = \"b\"\nkind = \"home_battery\"\ncycle_cost = -1\n", file: "/x/alder.toml", line: 13, key: "device[1].cycle_cost", msg: "non-negative"},
		{name: "live stale", nb: neighbourhood("[live]\nstale = \"soon\"\n"), file: "/x/n.toml", line: 6, key: "live.stale", msg: "not a duration"},
		{name: "live forget", nb: neighbourhood("[live]\nstale = \"2h\"\nforget = \"1h\"\n"), file: "/x/n.toml", line: 7, key: "live.forget", msg: "at least stale"},
		{name: "live off plan", nb: neighbourhood("[live]\noff_plan_kwh = -1\n"), file: "/x/n.toml", line: 6, key: "live.off_plan_kwh", msg: "positive energy"},
		{name: "live window", nb: neighbourhood("[live]\n[coordination]\nwindows = [[1, 3]]\n"), file: "/x/n.toml", line: 7, key: "coordination.windows[0]", msg: "clock times on the 60-minute slot grid"},
		{name: "live key", nb: neighbourhood("[live]\nstael = \"1h\"\n"), file: "/x/n.toml", line: 6, key: "live.stael", msg: `did you mean "stale"`},
		{name: "soc unit", nb: neighbourhood(""), home: home + "soc = { topic = \"evcc/loadpoints/1/vehicleSoc\", unit = \"V\" }\n", file: "/x/alder.toml", line: 9, key: "device[0].soc.unit", msg: `want "kWh" or "%"`},
		{name: "soc topic", nb: neighbourhood(""), home: home + "soc = { topic = \"evcc/+/soc\" }\n", file: "/x/alder.toml", line: 9, key: "device[0].soc.topic", msg: "without wildcards"},
		{name: "soc field", nb: neighbourhood(""), home: home + "soc = { topic = \"a/b\", field = \"x..y\" }\n", file: "/x/alder.toml", line: 9, key: "device[0].soc.field", msg: "JSON field path"},
		{name: "soc no topic", nb: neighbourhood(""), home: home + "soc = { unit = \"%\" }\n", file: "/x/alder.toml", line: 9, key: "device[0].soc.topic", msg: "give the MQTT topic"},
		{name: "soc key", nb: neighbourhood(""), home: home + "soc = { topic = \"a/b\", units = \"%\" }\n", file: "/x/alder.toml", line: 9, key: "device[0].soc.units", msg: `did you mean "unit"`},
		{name: "soc of a dishwasher", nb: neighbourhood(""), home: home + "\n[[device]]\nname = \"dw\"\nkind = \"dishwasher\"\nsoc = { topic = \"a/b\" }\n", file: "/x/alder.toml", line: 13, key: "device[1].soc", msg: "stores no energy"},
		{name: "plugged battery", nb: neighbourhood(""), home: home + "\n[[device]]\nname = \"b\"\nkind = \"home_battery\"\nplugged = { topic = \"a/b\" }\n", file: "/x/alder.toml", line: 13, key: "device[1].plugged", msg: "not an EV charger"},
		{name: "custom action", nb: neighbourhood(""), home: "[[device]]\nname = \"heater\"\nactions = [{ name = \"on\", power_kw = \"2\" }]\n", file: "/x/alder.toml", line: 3, key: "device[0].actions[0].power_kw", msg: "want a number"},
	}
	for _, tc := range tests {
		fsys := files{"/x/alder.toml": home}
		if tc.home != "" {
			fsys["/x/alder.toml"] = tc.home
		}
		for k, v := range tc.extra {
			fsys[k] = v
		}
		nb := tc.nb
		if tc.name == "neighbour" {
			nb = "neighbours = [[\"alder\", \"aldr\"]]\n" + nb
		}
		_, err := config.Parse("/x/n.toml", []byte(nb), fsys.read)
		var es config.Errors
		if !errors.As(err, &es) {
			t.Errorf("%s: error %v, want config.Errors", tc.name, err)
			continue
		}
		found := false
		for _, e := range es {
			if e.File == tc.file && e.Line == tc.line && e.Key == tc.key && strings.Contains(e.Msg, tc.msg) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: got\n%v\nwant %s:%d: %s: …%s…", tc.name, err, tc.file, tc.line, tc.key, tc.msg)
		}
		if got := es.Infeasible(); got != tc.infeasible {
			t.Errorf("%s: Infeasible() = %v, want %v:\n%v", tc.name, got, tc.infeasible, err)
		}
		if got := errors.Is(err, devices.ErrInfeasible); got != tc.infeasible {
			t.Errorf("%s: errors.Is(err, devices.ErrInfeasible) = %v, want %v", tc.name, got, tc.infeasible)
		}
		if tc.alone && len(es) != 1 {
			t.Errorf("%s: %d errors, want only the one:\n%v", tc.name, len(es), err)
		}
		// The printed form is file:line: key: message.
		if want := fmt.Sprintf("%s:%d: ", tc.file, tc.line); tc.line > 0 && !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q does not contain %q", tc.name, err.Error(), want)
		}
	}
}

// TestFeederManyHomes: a limit over more homes than one table holds (3^13
// level combinations) loads, and compiles with per-home budgets.
func TestFeederManyHomes(t *testing.T) {
	var b strings.Builder
	b.WriteString("[feeder]\nlimit_kw = 50\n")
	for i := range 13 {
		fmt.Fprintf(&b, "[[home]]\nname = \"h%d\"\n[[home.device]]\nname = \"ev\"\nkind = \"ev_wallbox_7kw\"\n", i)
	}
	cfg, err := config.Parse("n.toml", []byte(b.String()), nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := compile.Compile(cfg.Neighbourhood, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	budgets := 0
	for _, f := range c.Problem.Functions {
		if strings.HasPrefix(f.Name, "feeder:") {
			budgets++
		}
	}
	if budgets == 0 {
		t.Error("no per-home feeder functions")
	}
}

// FuzzLoad checks that no configuration makes the loader panic and that
// what it accepts is a valid model.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		neighbourhood("[coordination]\nlevels = 2\nwindows = [[\"17:00\", \"21:00\"]]\n[objective]\npeak = 0.1\n[feeder]\nlimit_kw = 30\n"),
		"[[home]]\nname = \"a\"\nrules = [\"x t geq 1 before 3\"]\n[[home.device]]\nname = \"x\"\nactions = [{name=\"on\", power_kw=1, effects={t=1}}]\n[[home.sensor]]\nlocation = \"x\"\nproperty = \"t\"\n",
		"homes = [\"alder.toml\"]\n[horizon]\nslots = 3\ndynamics = \"shds\"\n[prices]\nperiods = [{from=\"01:00\", to=\"02:00\", price=2}]\n",
		"[objective]\nmiss = 5\n[feeder]\nlimit_kw = 3\nhard = true\n[[home]]\nname = \"a\"\nrules = [\"x t geq 1 before 3\", { rule = \"x t leq 4\", hard = true }]\n[[home.device]]\nname = \"x\"\ncycle_cost = 0.1\nactions = [{name=\"on\", power_kw=1, effects={t=1}}]\nrange = { t = [0, 5] }\n[[home.sensor]]\nlocation = \"x\"\nproperty = \"t\"\nmin = 0\nmax = 6\n",
		neighbourhood("[live]\nstale = \"10m\"\nforget = \"1h\"\noff_plan_kwh = 0.5\n[prices]\nperiods = [{from=\"23:00\", to=\"06:00\", price=0.1}]\n"),
		"[live]\n[[home]]\nname = \"a\"\n[[home.sensor]]\nlocation = \"living\"\nproperty = \"temperature\"\ntopic = \"ha/sensor/t/state\"\nfield = \"a.b\"\nunit = \"°C\"\n",
	} {
		f.Add([]byte(s), []byte(home))
	}
	// A car's plugged-in window (arrival, departure).
	f.Add([]byte(neighbourhood("")), []byte(windowHome))
	f.Add([]byte(neighbourhood("")), []byte(strings.Replace(windowHome, "departure = \"06:30\"\n", "departure = \"06:30\"\narrival_charge = \"25%\"\n", 1)))
	f.Fuzz(func(t *testing.T, nb, hm []byte) {
		fsys := files{"/x/alder.toml": string(hm)}
		cfg, err := config.Parse("/x/n.toml", nb, fsys.read)
		if err != nil {
			var es config.Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %v is not a non-empty config.Errors", err)
			}
			return
		}
		if err := cfg.Neighbourhood.Validate(); err != nil {
			t.Fatalf("accepted an invalid model: %v", err)
		}
	})
}

// TestBoundsWithoutRules: a catalogue device's physical range holds even
// when no rule names its property (issue 17: a home_battery with no rule
// discharged to −98.5 kWh). The exact optimum of a battery home on a flat
// tariff with a peak-free objective would empty the battery without its
// bounds; with them every index stays in [0, 13.5] kWh.
func TestBoundsWithoutRules(t *testing.T) {
	cfg, err := config.Parse("n.toml", []byte(`[horizon]
slots = 6
[coordination]
windows = []
[[home]]
name = "h"
background_kw = 1
[[home.device]]
name = "battery"
kind = "home_battery"
initial = { soc = 5.0 }
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := cfg.Neighbourhood.Homes[0]
	var texts []string
	for _, r := range h.Rules {
		texts = append(texts, r.Text)
	}
	if strings.Join(texts, "; ") != "battery soc geq 0 (bound of home_battery); battery soc leq 13.5 (bound of home_battery)" {
		t.Fatalf("rules %q", texts)
	}
	c, err := compile.Compile(cfg.Neighbourhood, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sol, err := sim.Solve(context.Background(), c.Problem, sim.Options{
		Protocol: dpop.New,
		Solver:   func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("be", lp) },
		Eager:    true,
		Seed:     1,
	})
	if err != nil {
		t.Fatal(err)
	}
	_, ev, err := c.Report(sol.Assign)
	if err != nil {
		t.Fatal(err)
	}
	if !ev.Feasible {
		t.Fatalf("violations %v", ev.Violations)
	}
	for _, v := range ev.Homes[0].Values[0] {
		if v < 0 || v > 13.5 {
			t.Fatalf("soc trajectory %v leaves [0, 13.5]", ev.Homes[0].Values[0])
		}
	}
}

// TestSizing: a home sizes its battery and EV charger with parameters;
// the actions and the always-on range follow, and bad figures are
// refused with the key named.
func TestSizing(t *testing.T) {
	cfg, err := config.Parse("n.toml", []byte(`[horizon]
slots = 4
[coordination]
windows = []
[[home]]
name = "h"
background_kw = 0.5
[[home.device]]
name = "battery"
kind = "home_battery"
capacity_kwh = 10
reserve_kwh = 1
max_charge_kw = 3
max_discharge_kw = 4
charge_efficiency = 0.9
discharge_efficiency = 0.8
power_steps = 2
initial = { soc = 5.0 }
[[home.device]]
name = "ev"
kind = "ev_wallbox_11kw"
min_charge_kw = 1.4
power_steps = 3
rules = ["charge geq 30 before 4"]
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := cfg.Neighbourhood.Homes[0]
	var acts []string
	for _, d := range h.Devices {
		for _, a := range d.Actions {
			acts = append(acts, fmt.Sprintf("%s %s %g %v", d.Name, a.Name, a.Power, a.Effects))
		}
	}
	want := []string{
		"battery discharge_4kw -4 [{soc -5}]", "battery discharge_2kw -2 [{soc -2.5}]", "battery idle 0 []",
		// Stored energy is rounded to the 0.1 kWh resolution in the
		// plan's disfavour (Entry.conservative): 1.35 → 1.3, 1.246 → 1.2.
		"battery charge_1.5kw 1.5 [{soc 1.3}]", "battery charge_3kw 3 [{soc 2.7}]",
		"ev off 0 []", "ev charge_1.4kw 1.4 [{charge 1.2}]", "ev charge_6.2kw 6.2 [{charge 5.5}]", "ev charge_11kw 11 [{charge 9.7}]",
	}
	if strings.Join(acts, "; ") != strings.Join(want, "; ") {
		t.Fatalf("actions\n%s\nwant\n%s", strings.Join(acts, "\n"), strings.Join(want, "\n"))
	}
	var rules []string
	for _, r := range h.Rules {
		rules = append(rules, r.Text)
	}
	if !slices.Contains(rules, "battery soc geq 1 (bound of home_battery)") || !slices.Contains(rules, "battery soc leq 10 (bound of home_battery)") {
		t.Fatalf("rules %q", rules)
	}
	c, err := compile.Compile(cfg.Neighbourhood, compile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sol, err := sim.Solve(context.Background(), c.Problem, sim.Options{
		Protocol: dpop.New,
		Solver:   func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("be", lp) },
		Eager:    true,
		Seed:     1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ev, err := c.Report(sol.Assign); err != nil || !ev.Feasible {
		t.Fatalf("sized home: %v %v", err, ev.Violations)
	}
	for _, tc := range []struct{ body, want string }{
		{"kind = \"ev_wallbox_7kw\"\nreserve_kwh = 2", "reserve_kwh: reserve_kwh, max_discharge_kw, discharge_efficiency: ev_wallbox_7kw cannot discharge"},
		{"kind = \"home_battery\"\npower_steps = 0", "power_steps: power_steps = 0"},
		{"kind = \"home_battery\"\ncapacity_kwh = -3", "capacity_kwh: capacity_kwh = -3"},
		{"kind = \"home_battery\"\ncharge_efficiency = 1.5", "charge_efficiency = 1.5: want a share in (0, 1]"},
		{"kind = \"dishwasher\"\ncapacity_kwh = 3", "kind \"dishwasher\" takes no size parameters"},
		{"actions = [{name = \"off\", power_kw = 0}]\ncapacity_kwh = 3", "size parameters apply to catalogue kinds"},
	} {
		_, err := config.Parse("n.toml", []byte("[[home]]\nname = \"h\"\n[[home.device]]\nname = \"d\"\n"+tc.body+"\n"), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.body, err, tc.want)
		}
	}
}

// TestGoalTimesAndPercent: a goal's clock time inside a slot applies at
// that slot's end (issue 17: "before 07:30" with hourly slots was
// refused), and a goal in percent is a share of the property's range.
func TestGoalTimesAndPercent(t *testing.T) {
	cfg, err := config.Parse("n.toml", []byte(`[horizon]
start = "17:00"
slots = 14
[coordination]
windows = []
[[home]]
name = "h"
[[home.device]]
name = "ev"
kind = "ev_wallbox_7kw"
capacity_kwh = 50
initial = { charge = 10.0 }
rules = ["charge geq 80% before 06:30", "charge geq 20 at 18:15"]
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	rules := cfg.Neighbourhood.Homes[0].Rules
	if r := rules[0]; r.T1 != 14 || r.Goal != 40 || r.Text != "charge geq 80% before 06:30" {
		t.Fatalf("rule %+v: want boundary 14 (07:00) and 40 kWh", r)
	}
	if r := rules[1]; r.T1 != 2 || r.Goal != 20 {
		t.Fatalf("rule %+v: want boundary 2 (19:00)", r)
	}
}

// TestExportAndPV: a home with rooftop PV feeds back what it does not
// use, and is paid the export price for it, not the price (issue 17).
func TestExportAndPV(t *testing.T) {
	cfg, err := config.Parse("n.toml", []byte(`[horizon]
slots = 3
[prices]
per_slot = [0.30, 0.20, 0.40]
export_default = 0.05
currency = "€"
[coordination]
windows = []
[[home]]
name = "h"
background_kw = 0.5
pv_kw = [3.0, 0.0, 1.0]
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Neighbourhood
	if fmt.Sprint(n.Homes[0].Background) != "[-2.5 0.5 -0.5]" || fmt.Sprint(n.ExportPrices) != "[0.05 0.05 0.05]" || n.Units.Currency != "€" {
		t.Fatalf("background %v export %v currency %q", n.Homes[0].Background, n.ExportPrices, n.Units.Currency)
	}
	ev, err := n.Evaluate(&devices.Schedule{Homes: []devices.HomeSchedule{{Actions: [][]int{}}}})
	if err != nil {
		t.Fatal(err)
	}
	// −2.5 kWh at 0.05, 0.5 kWh at 0.20, −0.5 kWh at 0.05.
	if want := -2.5*0.05 + 0.5*0.20 - 0.5*0.05; math.Abs(ev.Homes[0].Price-want) > 1e-12 {
		t.Fatalf("bill %v, want %v", ev.Homes[0].Price, want)
	}
	for _, tc := range []struct{ body, want string }{
		{"[prices]\ndefault = 0.1\nexport_default = 0.2\n", "export price 0.2 above slot 0's price 0.1"},
		{"[prices]\nexport_per_slot = [0.1]\n", "1 export prices for 24 slots"},
		{"[[home]]\nname = \"h\"\npv_kw = -1\n", "PV output is a non-negative power"},
	} {
		body := tc.body
		if !strings.Contains(body, "[[home]]") {
			body += "[[home]]\nname = \"h\"\n"
		}
		_, err := config.Parse("n.toml", []byte(body), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.body, err, tc.want)
		}
	}
}

// TestSoftAndHardRules: rules written as strings are soft goals, tables
// with hard = true are hard, and physical ranges — a catalogue device's,
// a custom device's range, a sensor's min and max — are hard bounds.
func TestSoftAndHardRules(t *testing.T) {
	cfg, err := config.Parse("n.toml", []byte(`[horizon]
slots = 4
[feeder]
limit_kw = 30
[[home]]
name = "h"
rules = ["room t geq 2 before 3", { rule = "room t leq 8", hard = true }]
[[home.device]]
name = "heater"
location = "room"
actions = [{ name = "off", power_kw = 0 }, { name = "on", power_kw = 1, effects = { t = 1 } }]
range = { t = [0, 9] }
[[home.device]]
name = "fan"
location = "hall"
actions = [{ name = "off", power_kw = 0 }, { name = "on", power_kw = 0.1, effects = { air = 1 } }]
[[home.sensor]]
location = "hall"
property = "air"
min = 0
max = 3
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Neighbourhood
	if !n.FeederSoft || n.Weights.Miss != devices.DefaultMissPenalty {
		t.Errorf("feeder soft %v, miss %v: want a soft feeder limit and the default penalty", n.FeederSoft, n.Weights.Miss)
	}
	var got []string
	for _, r := range n.Homes[0].Rules {
		got = append(got, fmt.Sprintf("%s soft=%v", r.Text, r.Soft))
	}
	want := []string{
		"room t geq 2 before 3 soft=true",
		"room t leq 8 soft=false",
		"room t geq 0 (range of heater) soft=false",
		"room t leq 9 (range of heater) soft=false",
		"hall air geq 0 (range of sensor hall air) soft=false",
		"hall air leq 3 (range of sensor hall air) soft=false",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("rules\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, p := range n.Homes[0].Properties {
		if p.Min == nil || p.Max == nil {
			t.Errorf("property %s %s has no range", p.Location, p.Name)
		}
	}
}

// TestLive reads [live] and a device's live sources, and checks that a
// live neighbourhood is read as a rolling horizon: a price period across
// midnight, a goal at slot 0's start meaning the next day's, and per-slot
// values rotated to a moved start.
func TestLive(t *testing.T) {
	hm := home + "soc = { topic = \"evcc/loadpoints/1/vehicleSoc\", unit = \"%\", field = \"data.soc\" }\nplugged = { topic = \"evcc/loadpoints/1/connected\" }\n" +
		"\n[[device]]\nname = \"bat\"\nkind = \"home_battery\"\n"
	nb := `homes = ["alder.toml"]
[horizon]
start = "17:00"
slots = 4
[prices]
per_slot = [1, 2, 3, 4]
periods = [{ from = "19:00", to = "18:00", price = 9 }]
[live]
stale = "10m"
command_grace = "1m"
`
	nb = strings.Replace(nb, "per_slot = [1, 2, 3, 4]\n", "", 1)
	fsys := files{"/x/alder.toml": strings.Replace(hm, "before 07:00", "before 17:00", 1)}
	cfg, err := config.Parse("/x/n.toml", []byte(nb), fsys.read)
	if err != nil {
		t.Fatal(err)
	}
	lv := cfg.Live
	if !lv.On || lv.Stale != 10*time.Minute || lv.Forget != config.DefaultForget || lv.OffPlanKWh != config.DefaultOffPlanKWh || lv.CommandGrace != time.Minute {
		t.Errorf("[live] %+v", lv)
	}
	if d := cfg.Devices[0]; len(d) != 2 || d[0].Property != "charge" || d[0].Full != 60 || !d[0].EV || d[0].SoC == nil ||
		*d[0].SoC != (config.Source{Topic: "evcc/loadpoints/1/vehicleSoc", Unit: "%", Field: "data.soc"}) ||
		d[0].Plugged == nil || d[0].Plugged.Topic != "evcc/loadpoints/1/connected" ||
		d[1].Property != "soc" || d[1].Full != 13.5 || d[1].EV || d[1].SoC != nil {
		t.Errorf("devices %+v", cfg.Devices)
	}
	if len(cfg.Sensors) != 1 || len(cfg.Sensors[0]) != 0 {
		t.Errorf("sensors %+v, want none with a topic", cfg.Sensors)
	}
	n := cfg.Neighbourhood
	// 19:00–18:00 wraps: every slot but 18:00–19:00 (slot 1).
	if want := []float64{9, config.DefaultPrice, 9, 9}; !slices.Equal(n.Prices, want) {
		t.Errorf("prices %v, want %v", n.Prices, want)
	}
	// "before 17:00" from a 17:00 start is the next day's: past the
	// 4-slot horizon, so left out.
	for _, r := range n.Homes[0].Rules {
		if strings.HasPrefix(r.Text, "charge geq 40") {
			t.Errorf("a goal past the horizon kept: %+v", r)
		}
	}
	// Moved to 19:00, per-slot values rotate: the file's slot 2 (19:00)
	// is slot 0.
	dir := t.TempDir()
	nb2 := strings.Replace(nb, "periods = [{ from = \"19:00\", to = \"18:00\", price = 9 }]", "per_slot = [1, 2, 3, 4]", 1)
	if err := os.WriteFile(filepath.Join(dir, "n.toml"), []byte(nb2), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alder.toml"), []byte(strings.Replace(home, "background_kw = 0.4", "background_kw = [0.1, 0.2, 0.3, 0.4]", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err = config.LoadWith(filepath.Join(dir, "n.toml"), config.LoadOptions{Rolling: true, Start: 19 * 60})
	if err != nil {
		t.Fatal(err)
	}
	n = cfg.Neighbourhood
	if n.Horizon.Start != 19*60 || !slices.Equal(n.Prices, []float64{3, 4, 1, 2}) || !slices.Equal(n.Homes[0].Background, []float64{0.3, 0.4, 0.1, 0.2}) {
		t.Errorf("start %d, prices %v, background %v", n.Horizon.Start, n.Prices, n.Homes[0].Background)
	}
}

// TestRollingWindows reads goals on a rolling horizon from several
// instants, against boundaries worked by hand: a goal whose time has
// passed is the next day's (here past the horizon, so left out), a
// window that has begun keeps its boundaries still ahead from 1 (0 is
// the state read now) up to its end or the horizon's, and one that has
// not begun and ends past the horizon is left out.
func TestRollingWindows(t *testing.T) {
	hm := `name = "dogwood"
background_kw = 0.3
rules = ["living temperature geq 19.5 within 18:00 21:00", "living temperature geq 18 within 23:00 02:00"]

[[device]]
name = "radiator"
location = "living"
actions = [{ name = "off", power_kw = 0.0 }, { name = "on", power_kw = 1.0, effects = { temperature = 1.0 } }]
range = { temperature = [10, 30] }
rules = ["living temperature geq 17 before 07:00"]

[[sensor]]
location = "living"
property = "temperature"
initial = 19.0
`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dogwood.toml"), []byte(hm), 0o644); err != nil {
		t.Fatal(err)
	}
	type win struct{ t1, t2 int }
	gone := win{-1, -1}
	tests := []struct {
		slot    string
		slots   int
		start   int // minutes after midnight
		evening win // within 18:00 21:00
		night   win // within 23:00 02:00
		morning int // before 07:00: T1, -1 left out
	}{
		// From 17:00 (the file's start) nothing has begun.
		{"1h", 14, 17 * 60, win{1, 4}, win{6, 9}, 14},
		// At 18:00 the evening window begins: 19:00, 20:00, 21:00 ahead.
		{"1h", 14, 18 * 60, win{1, 3}, win{5, 8}, 13},
		{"1h", 14, 19 * 60, win{1, 2}, win{4, 7}, 12},
		{"1h", 14, 20 * 60, win{1, 1}, win{3, 6}, 11},
		// At 21:00 it has ended: the next day's is past the horizon.
		{"1h", 14, 21 * 60, gone, win{2, 5}, 10},
		// Past midnight the night window is running.
		{"1h", 14, 1 * 60, gone, win{1, 1}, 6},
		{"1h", 14, 2 * 60, gone, gone, 5},
		// At 07:00 the morning goal has passed (tomorrow's is beyond).
		{"1h", 14, 7 * 60, win{11, 14}, gone, -1},
		// From 06:00 the evening window starts at 18:00 and ends past
		// the horizon (20:00): a later round includes it whole.
		{"1h", 14, 6 * 60, gone, gone, 1},
		// A window that has begun and runs past the horizon keeps the
		// part inside it: from 19:00 on a 1-slot horizon, 20:00.
		{"1h", 1, 19 * 60, win{1, 1}, gone, -1},
		// Half-hour slots at 19:30: 20:00, 20:30, 21:00 ahead.
		{"30m", 28, 19*60 + 30, win{1, 3}, win{7, 13}, 23},
	}
	for _, tc := range tests {
		name := fmt.Sprintf("%s@%02d:%02d", tc.slot, tc.start/60, tc.start%60)
		t.Run(name, func(t *testing.T) {
			nb := fmt.Sprintf("homes = [\"dogwood.toml\"]\n[horizon]\nstart = \"17:00\"\nslots = %d\nslot = %q\n[live]\n", tc.slots, tc.slot)
			p := filepath.Join(dir, name+".toml")
			if err := os.WriteFile(p, []byte(nb), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.LoadWith(p, config.LoadOptions{Rolling: true, Start: tc.start})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]devices.Rule{}
			for _, r := range cfg.Neighbourhood.Homes[0].Rules {
				got[r.Text] = r
			}
			for text, want := range map[string]win{
				"living temperature geq 19.5 within 18:00 21:00": tc.evening,
				"living temperature geq 18 within 23:00 02:00":   tc.night,
			} {
				r, ok := got[text]
				switch {
				case want == gone && ok:
					t.Errorf("%s: kept as within %d %d, want left out", text, r.T1, r.T2)
				case want != gone && !ok:
					t.Errorf("%s: left out, want within %d %d", text, want.t1, want.t2)
				case ok && (r.Prefix != devices.Within || r.T1 != want.t1 || r.T2 != want.t2):
					t.Errorf("%s: %s %d %d, want within %d %d", text, r.Prefix, r.T1, r.T2, want.t1, want.t2)
				}
			}
			r, ok := got["living temperature geq 17 before 07:00"]
			switch {
			case tc.morning < 0 && ok:
				t.Errorf("before 07:00 kept at %d, want left out", r.T1)
			case tc.morning >= 0 && (!ok || r.T1 != tc.morning):
				t.Errorf("before 07:00: %v %d, want %d", ok, r.T1, tc.morning)
			}
		})
	}
}
