package live

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/homesolve"
)

const street = "testdata/street/street.toml"

// fixedClock is a clock stopped at t.
func fixedClock(t *testing.T, at time.Time) *Clock {
	t.Helper()
	c, err := NewClock(at, at, 1, func() time.Time { return at })
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newInputs(t *testing.T, home string, now time.Time) *Inputs {
	t.Helper()
	cfg, err := config.Load(street)
	if err != nil {
		t.Fatal(err)
	}
	return NewInputs(cfg, "hearth", home, fixedClock(t, now), nil)
}

func home(r *homesolve.Run, name string) *devices.Home {
	for i := range r.Model().Homes {
		if r.Model().Homes[i].Name == name {
			return &r.Model().Homes[i]
		}
	}
	return nil
}

func initial(h *devices.Home, prop string) float64 {
	for _, p := range h.Properties {
		if p.Name == prop {
			return p.Initial
		}
	}
	return math.NaN()
}

func hasRule(h *devices.Home, text string) bool {
	return slices.ContainsFunc(h.Rules, func(r devices.Rule) bool { return strings.HasPrefix(r.Text, text) })
}

// TestLoadRolling: slot 0 is the slot that holds the round's instant, the
// file's clock times count from it, and the live state replaces the
// file's initial values.
func TestLoadRolling(t *testing.T) {
	now := time.Date(2026, 11, 26, 5, 40, 0, 0, time.Local)
	in := newInputs(t, "alder", now)
	in.Handle(StateTopic("hearth", "alder", "ev"), []byte(fmt.Sprintf(`{"time":%q,"charge":35.04,"plugged":true}`, now.Format(time.RFC3339))))
	in.Handle(StateTopic("hearth", "dogwood", "battery"), []byte(fmt.Sprintf(`{"time":%q,"soc":6}`, now.Format(time.RFC3339))))
	r, hz, notes, err := in.Load(street, homesolve.Overrides{}, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 11, 26, 5, 0, 0, 0, time.Local); !hz.Start.Equal(want) || hz.Slot != time.Hour || hz.Slots != 24 {
		t.Fatalf("horizon %+v, want slot 0 at %v", hz, want)
	}
	if len(notes) != 0 {
		t.Errorf("notes %v with every state fresh", notes)
	}
	n := r.Model()
	if n.Horizon.Start != 5*60 {
		t.Errorf("horizon start %d min, want 300", n.Horizon.Start)
	}
	a, d := home(r, "alder"), home(r, "dogwood")
	if got := initial(a, "charge"); math.Abs(got-35.0) > 1e-9 {
		t.Errorf("alder's charge %g, want the live 35.0 (snapped to 0.1)", got)
	}
	if got := initial(d, "soc"); got != 6 {
		t.Errorf("dogwood's soc %g, want the live 6", got)
	}
	// "before 07:00" from slot 0 at 05:00 is boundary 2; the price
	// periods move with the clock: 17:00–21:00 is slots 12–15.
	for _, rule := range a.Rules {
		if strings.HasPrefix(rule.Text, "charge geq 40") && rule.T1 != 2 {
			t.Errorf("%q at boundary %d, want 2", rule.Text, rule.T1)
		}
	}
	for s, p := range n.Prices {
		clock := (5 + s) % 24
		want := 0.20
		switch {
		case clock >= 17 && clock < 21:
			want = 0.45
		case clock < 6 || clock >= 23:
			want = 0.12
		}
		if p != want {
			t.Errorf("slot %d (%02d:00) price %g, want %g", s, clock, p, want)
		}
	}
}

// TestLoadAwayStaleMissing: a car that is away gets no goal and no
// charging; a stale reading is used and reported once; a missing one
// gives the file's value, reported once; a goal out of reach from the
// live state is relaxed when hard (a soft one is left to the plan).
func TestLoadAwayStaleMissing(t *testing.T) {
	now := time.Date(2026, 11, 26, 6, 10, 0, 0, time.Local)
	in := newInputs(t, "alder", now)
	in.Handle(StateTopic("hearth", "alder", "ev"), []byte(fmt.Sprintf(`{"time":%q,"charge":20,"plugged":false}`, now.Add(-3*time.Hour).Format(time.RFC3339))))
	r, _, notes, err := in.Load(street, homesolve.Overrides{}, now)
	if err != nil {
		t.Fatal(err)
	}
	a, d := home(r, "alder"), home(r, "dogwood")
	if hasRule(a, "charge geq 40") || !hasRule(a, "ev charge leq 20") {
		t.Errorf("away car's rules: %v", a.Rules)
	}
	if got := initial(a, "charge"); got != 20 {
		t.Errorf("stale charge %g, want the last good 20", got)
	}
	if got := initial(d, "soc"); got != 4 {
		t.Errorf("missing soc %g, want the file's 4", got)
	}
	// dogwood's "soc geq 10 at 07:00" (hard) needs 6 kWh in one slot of
	// a 5 kW battery from the file's 4 kWh: one slot's greatest effect
	// is 4.6 kWh as the compiler rounds a charge (down, against the
	// plan), so the goal is what the slot can reach, 8.6.
	if !hasRule(d, "soc geq 10 at 07:00 (relaxed to 8.6: out of reach)") {
		t.Errorf("the unreachable goal was not relaxed: %v", d.Rules)
	}
	var msgs []string
	for _, n := range notes {
		msgs = append(msgs, n.Msg)
	}
	for _, want := range []string{"live state stale", "no live state yet", "goal out of reach"} {
		if !slices.ContainsFunc(msgs, func(m string) bool { return strings.HasPrefix(m, want) }) {
			t.Errorf("notes %q lack %q", msgs, want)
		}
	}
	// Reported once.
	_, _, notes, err = in.Load(street, homesolve.Overrides{}, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		if !strings.HasPrefix(n.Msg, "goal out of reach") {
			t.Errorf("reported again: %v", n)
		}
	}
	// Past forget (6 h) the file's value.
	in2 := newInputs(t, "alder", now)
	in2.Handle(StateTopic("hearth", "alder", "ev"), []byte(fmt.Sprintf(`{"time":%q,"charge":50,"plugged":true}`, now.Add(-7*time.Hour).Format(time.RFC3339))))
	r, _, _, err = in2.Load(street, homesolve.Overrides{}, now)
	if err != nil {
		t.Fatal(err)
	}
	if got := initial(home(r, "alder"), "charge"); got != 15 {
		t.Errorf("forgotten charge %g, want the file's 15", got)
	}
}

// TestLoadSeries: published prices and forecasts replace the file's where
// they cover a slot, averaged over it.
func TestLoadSeries(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.Local)
	in := newInputs(t, "alder", now)
	start := now.Add(-time.Hour)
	vals := make([]string, 8) // 2 h in 15-minute steps: 11:00–13:00
	for i := range vals {
		vals[i] = fmt.Sprint(0.1 * float64(i))
	}
	in.Handle(PriceTopic("hearth", "import"), []byte(fmt.Sprintf(`{"start":%q,"step":"15m","values":[%s]}`, start.Format(time.RFC3339), strings.Join(vals, ","))))
	in.Handle(ForecastTopic("hearth", "dogwood", "pv"), []byte(fmt.Sprintf(`{"start":%q,"step":"1h","values":[3,2]}`, now.Format(time.RFC3339))))
	r, _, _, err := in.Load(street, homesolve.Overrides{}, now)
	if err != nil {
		t.Fatal(err)
	}
	n := r.Model()
	// Slot 0 is 12:00–13:00: steps 4–7, mean 0.55; slot 1 is uncovered.
	if math.Abs(n.Prices[0]-0.55) > 1e-9 || n.Prices[1] != 0.20 {
		t.Errorf("prices %v", n.Prices[:3])
	}
	d := home(r, "dogwood")
	if math.Abs(d.Background[0]-(0.3-3)) > 1e-9 || math.Abs(d.Background[1]-(0.3-2)) > 1e-9 || d.Background[2] != 0.3 {
		t.Errorf("dogwood's background %v", d.Background[:3])
	}
}

// TestTargets: a user's targets replace the EV's goal (percent of its
// 60 kWh at the departure's boundary) and add the battery's reserve; bad
// values are refused.
func TestTargets(t *testing.T) {
	now := time.Date(2026, 11, 26, 20, 10, 0, 0, time.Local)
	in := newInputs(t, "alder", now)
	in.Handle(StateTopic("hearth", "alder", "ev"), []byte(fmt.Sprintf(`{"time":%q,"charge":20,"plugged":true}`, now.Format(time.RFC3339))))
	in.Handle(TargetStateTopic("hearth", "alder", "ev", TargetPct), []byte("50"))
	in.Handle(TargetStateTopic("hearth", "alder", "ev", Departure), []byte("06:00"))
	in.Handle(TargetStateTopic("hearth", "dogwood", "battery", ReservePct), []byte("20"))
	r, _, _, err := in.Load(street, homesolve.Overrides{}, now)
	if err != nil {
		t.Fatal(err)
	}
	a, d := home(r, "alder"), home(r, "dogwood")
	if hasRule(a, "charge geq 40 before 07:00") {
		t.Errorf("the file's goal stayed: %v", a.Rules)
	}
	found := false
	for _, rule := range a.Rules {
		// Slot 0 at 20:00: 06:00 is boundary 10; 50% of 60 kWh.
		if rule.Text == "charge geq 50% before 06:00 (target)" && rule.Goal == 30 && rule.T1 == 10 && rule.Prefix == devices.Before {
			found = true
		}
	}
	if !found {
		t.Errorf("no target goal in %v", a.Rules)
	}
	if !slices.ContainsFunc(d.Rules, func(r devices.Rule) bool {
		return r.Text == "soc geq 20% (reserve)" && math.Abs(r.Goal-2.7) < 1e-9 && r.Prefix == devices.Passive
	}) {
		t.Errorf("no reserve in %v", d.Rules)
	}
	cfg, err := config.Load(street)
	if err != nil {
		t.Fatal(err)
	}
	ts := Targets(cfg, "hearth", 0)
	if len(ts) != 2 || ts[1].Name != Departure || len(ts[1].Options) != 24 {
		t.Fatalf("alder's targets %+v", ts)
	}
	for _, tc := range []struct {
		t    int
		in   string
		want string // "" for refused
	}{
		{0, "85", "85"}, {0, "101", ""}, {0, "x", ""}, {0, " 40.0 ", "40"},
		{1, "07:00", "07:00"}, {1, "07:00:00", "07:00"}, {1, "07:30", ""},
	} {
		got, err := CheckTarget(ts[tc.t], []byte(tc.in))
		if (err != nil) != (tc.want == "") || got != tc.want {
			t.Errorf("CheckTarget(%s, %q) = %q, %v", ts[tc.t].Name, tc.in, got, err)
		}
	}
}

func homesolveOverrides() homesolve.Overrides { return homesolve.Overrides{} }

// TestExampleRolls: the README's example street, read as a rolling
// horizon, compiles from every hour of the day (its windows are clock
// spans, its night rate crosses midnight in the rolled horizon, goals out
// of reach from the files' values are repaired).
func TestExampleRolls(t *testing.T) {
	const ex = "../../examples/neighbourhood/neighbourhood.toml"
	cfg, err := config.Load(ex)
	if err != nil {
		t.Fatal(err)
	}
	for h := 0; h < 24; h += 5 {
		now := time.Date(2026, 11, 26, h, 20, 0, 0, time.Local)
		in := NewInputs(cfg, "hearth", "alder", fixedClock(t, now), nil)
		r, hz, _, err := in.Load(ex, homesolve.Overrides{}, now)
		if err != nil {
			t.Fatalf("%02d:20: %v", h, err)
		}
		n := r.Model()
		if hz.Start.Hour() != h || n.Horizon.Start != h*60 {
			t.Errorf("%02d:20: slot 0 at %v (%d min)", h, hz.Start, n.Horizon.Start)
		}
		// Every slot whose clock time lies in 17:00–07:00 is in a window,
		// no other is, and windows are ordered and disjoint.
		inWin := make([]bool, n.Horizon.Slots)
		prev := 0
		for _, w := range n.Windows {
			if w.From < prev || w.To <= w.From {
				t.Errorf("%02d:20: windows %v", h, n.Windows)
			}
			prev = w.To
			for s := w.From; s < w.To; s++ {
				inWin[s] = true
			}
		}
		for s, got := range inWin {
			c := (h + s) % 24
			if want := c >= 17 || c < 7; got != want {
				t.Errorf("%02d:20: slot %d (%02d:00) in a window: %v, want %v", h, s, c, got, want)
			}
		}
	}
}

// TestSeriesFiles: series from CSV files, read again at every round, under
// the published series; a broken file is reported once and left out.
func TestSeriesFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"street.toml", "alder.toml", "dogwood.toml"} {
		b, err := os.ReadFile(filepath.Join("testdata", "street", f))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		switch f {
		case "street.toml":
			s = strings.Replace(s, "default = 0.20\n", "default = 0.20\nimport_file = \"prices.csv\"\n", 1)
		case "dogwood.toml":
			s = strings.Replace(s, "pv_kw = 0.0\n", "pv_kw = 0.0\npv_file = \"pv.csv\"\n", 1)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.Local)
	row := func(h int, v float64) string {
		return fmt.Sprintf("%s,%g\n", now.Add(time.Duration(h)*time.Hour).Format(time.RFC3339), v)
	}
	write := func(name, s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("prices.csv", "time,price\n"+row(0, 0.05)+row(1, 0.07))
	write("pv.csv", "# kW\n"+row(0, 2)+row(1, 1))
	path := filepath.Join(dir, "street.toml")
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	in := NewInputs(cfg, "hearth", "alder", fixedClock(t, now), nil)
	r, _, notes, err := in.Load(path, homesolve.Overrides{}, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range notes {
		if strings.HasPrefix(x.Msg, "series file") {
			t.Errorf("good files reported: %v", x)
		}
	}
	n := r.Model()
	if n.Prices[0] != 0.05 || n.Prices[1] != 0.07 || n.Prices[2] != 0.20 {
		t.Errorf("prices %v", n.Prices[:3])
	}
	if d := home(r, "dogwood"); math.Abs(d.Background[0]-(0.3-2)) > 1e-9 || math.Abs(d.Background[1]-(0.3-1)) > 1e-9 {
		t.Errorf("dogwood's background %v", d.Background[:3])
	}
	// A published series wins; an edited file applies at the next round.
	in.Handle(PriceTopic("hearth", "import"), []byte(fmt.Sprintf(`{"start":%q,"step":"1h","values":[0.5]}`, now.Format(time.RFC3339))))
	write("pv.csv", row(0, 3)+row(1, 3))
	r, _, _, err = in.Load(path, homesolve.Overrides{}, now)
	if err != nil {
		t.Fatal(err)
	}
	if n := r.Model(); n.Prices[0] != 0.5 || n.Prices[1] != 0.20 || math.Abs(home(r, "dogwood").Background[0]-(0.3-3)) > 1e-9 {
		t.Errorf("prices %v, dogwood %v", n.Prices[:2], home(r, "dogwood").Background[:2])
	}
	// Broken: reported once, the file's per-slot value stands.
	write("pv.csv", row(0, 3)+"2026-11-26T13:00:00Z;3\n")
	for k := range 2 {
		r, _, notes, err = in.Load(path, homesolve.Overrides{}, now)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, x := range notes {
			if strings.HasPrefix(x.Msg, "series file not read") {
				n++
			}
		}
		if n != 1-k {
			t.Errorf("round %d: %d reports of the broken file, want %d", k, n, 1-k)
		}
		if got := home(r, "dogwood").Background[0]; got != 0.3 {
			t.Errorf("round %d: dogwood's background %g, want the file's 0.3", k, got)
		}
	}
}

func TestParseSeriesCSV(t *testing.T) {
	for _, tc := range []struct {
		in   string
		err  string
		n    int
		step time.Duration
	}{
		{in: "time,kw\n2026-11-26T06:00:00Z,1\n2026-11-26T06:15:00Z,2\n", n: 2, step: 15 * time.Minute},
		{in: "# x\n\n2026-11-26T06:00:00Z, 1\n2026-11-26T07:00:00Z ,2\n2026-11-26T08:00:00Z,3", n: 3, step: time.Hour},
		{in: "2026-11-26T06:00:00Z,1\n", err: "at least two rows"},
		{in: "2026-11-26T06:00:00Z,1\n2026-11-26T06:15:00Z,2\n2026-11-26T07:00:00Z,3\n", err: "line 3: 2026-11-26T07:00:00Z is not one step"},
		{in: "2026-11-26T06:00:00Z,x\n2026-11-26T06:15:00Z,2\n", err: "line 1"},
		{in: "2026-11-26T06:00:00Z,1\n2026-11-26T06:00:30Z,2\n", err: "a step of 30s"},
		{in: "06:00,1\n07:00,2\n", err: "line 1"},
	} {
		s, err := ParseSeriesCSV([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || len(s.Values) != tc.n || s.Step != tc.step {
			t.Errorf("%q: %+v %v", tc.in, s, err)
		}
	}
}

func FuzzParseSeriesCSV(f *testing.F) {
	f.Add([]byte("time,kw\n2026-11-26T06:00:00Z,1\n2026-11-26T06:15:00Z,2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSeriesCSV(b)
		if err == nil && (len(s.Values) < 2 || s.Step < time.Minute) {
			t.Fatalf("accepted %+v", s)
		}
	})
}

// TestLoadAhead: a round started ahead of its boundary (06:00, read at
// 05:30) carries a stored energy read before slot 0 on to its start by
// the command the device runs (every home reads every home's retained
// commands): alder's car at 20 kWh charging at charge_32a (6.6 kWh an
// hour, the catalogue's) for the half hour left is 23.3 at 06:00, worked
// by hand. A command that does not cover the reading, a car that is
// away, a reading inside slot 0 and one without a command stay as read.
func TestLoadAhead(t *testing.T) {
	six := time.Date(2026, 11, 26, 6, 0, 0, 0, time.Local)
	half := six.Add(-30 * time.Minute)
	cmd := func(from time.Time, action string) []byte {
		return []byte(fmt.Sprintf(`{"round":"r","created":%q,"slot_start":%q,"slot_end":%q,"expires":%q,"action":%q,"power_kw":7.4}`,
			from.Format(time.RFC3339), from.Format(time.RFC3339), from.Add(time.Hour).Format(time.RFC3339), from.Add(time.Hour).Format(time.RFC3339), action))
	}
	for _, tc := range []struct {
		name    string
		read    time.Time
		plugged bool
		command []byte
		want    float64
	}{
		{"ahead, charging", half, true, cmd(six.Add(-time.Hour), "charge_32a"), 23.3},
		{"ahead, off", half, true, cmd(six.Add(-time.Hour), "off"), 20},
		{"a later slot's command", half, true, cmd(six, "charge_32a"), 20},
		{"away", half, false, cmd(six.Add(-time.Hour), "charge_32a"), 20},
		{"read inside slot 0", six.Add(10 * time.Minute), true, cmd(six, "charge_32a"), 20},
		{"no command", half, true, nil, 20},
	} {
		in := newInputs(t, "alder", six)
		in.Handle(StateTopic("hearth", "alder", "ev"), []byte(fmt.Sprintf(`{"time":%q,"charge":20,"plugged":%v}`, tc.read.Format(time.RFC3339), tc.plugged)))
		if tc.command != nil {
			in.Handle(CommandTopic("hearth", "alder", "ev"), tc.command)
		}
		at := six
		if tc.read.After(six) {
			at = tc.read
		}
		r, _, _, err := in.Load(street, homesolve.Overrides{}, at)
		if err != nil {
			t.Fatal(err)
		}
		if got := initial(home(r, "alder"), "charge"); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: alder's charge %g at slot 0, want %g", tc.name, got, tc.want)
		}
	}
	if !slices.Contains(newInputs(t, "dogwood", six).Topics(), CommandTopic("hearth", "alder", "ev")) {
		t.Error("a home does not read the other homes' commands")
	}
}
