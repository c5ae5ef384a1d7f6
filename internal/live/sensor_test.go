package live

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices/homesolve"
)

// sensorStreet writes the example street with dogwood's living-room
// [[sensor]] reading its own topic (a thermostat that is no device of
// the plan; field "" for a plain number) and returns the street's path.
func sensorStreet(t *testing.T, field string) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"live", "neighbourhood"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyFile := func(from, to string, edit func(string) string) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, []byte(edit(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	same := func(s string) string { return s }
	copyFile(liveStreet, filepath.Join(dir, "live", "street.toml"), same)
	for _, h := range []string{"alder", "birch", "cedar"} {
		copyFile("../../examples/neighbourhood/"+h+".toml", filepath.Join(dir, "neighbourhood", h+".toml"), same)
	}
	src := `topic = "homeassistant/sensor/living_temp/state"` + "\n"
	if field != "" {
		src += `field = "` + field + `"` + "\n"
	}
	copyFile("../../examples/neighbourhood/dogwood.toml", filepath.Join(dir, "neighbourhood", "dogwood.toml"), func(s string) string {
		out := strings.Replace(s, `unit = "°C"`+"\n", `unit = "°C"`+"\n"+src, 1)
		if out == s {
			t.Fatal("dogwood.toml: no [[sensor]] unit to add the topic after")
		}
		return out
	})
	return filepath.Join(dir, "live", "street.toml")
}

// TestSensorTopic reads a [[sensor]] from its own topic into the
// round's initial value of its property, under the rules every live
// input follows: snapped to the property's resolution (0.5 °C), a value
// outside the physical range (10–30 °C) by more than 5 % of it ignored,
// a stale reading used and reported once, one past forget (6 h) giving
// way to the file's value (19.0), none yet reported once. The file's
// value is 19.0 in every case where the live one does not stand.
func TestSensorTopic(t *testing.T) {
	const topic = "homeassistant/sensor/living_temp/state"
	t0 := time.Date(2026, 11, 26, 17, 10, 0, 0, time.Local)
	for _, tc := range []struct {
		name, field, payload string
		age                  time.Duration
		want                 float64
		note                 string // a note the round must report ("" none about the sensor)
	}{
		{name: "plain", payload: "18.2", want: 18.0},
		{name: "json field", field: "attributes.temperature", payload: `{"attributes":{"temperature":21.3}}`, want: 21.5},
		{name: "stale", payload: "17.4", age: 45 * time.Minute, want: 17.5, note: "live state stale"},
		{name: "past forget", payload: "17.4", age: 7 * time.Hour, want: 19.0, note: "live state too old"},
		{name: "out of range", payload: "500", want: 19.0, note: "no live state yet"},
		{name: "not a number", payload: "warm", want: 19.0, note: "no live state yet"},
		{name: "field absent", field: "temperature", payload: `{"temp":18}`, want: 19.0, note: "no live state yet"},
		{name: "none", want: 19.0, note: "no live state yet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := sensorStreet(t, tc.field)
			cfg, err := config.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			now := t0
			clk, err := NewClock(t0, t0, 1, func() time.Time { return now })
			if err != nil {
				t.Fatal(err)
			}
			in := NewInputs(cfg, "hearth", "dogwood", clk, nil)
			if !strings.Contains(strings.Join(in.Topics(), " "), topic) {
				t.Fatalf("not subscribed to %s: %v", topic, in.Topics())
			}
			if tc.payload != "" {
				in.Handle(topic, []byte(tc.payload))
			}
			now = t0.Add(tc.age)
			for round := range 2 {
				r, _, notes, err := in.Load(path, homesolve.Overrides{}, now)
				if err != nil {
					t.Fatal(err)
				}
				if got := initial(home(r, "dogwood"), "temperature"); got != tc.want {
					t.Errorf("round %d: living temperature starts at %g, want %g", round, got, tc.want)
				}
				var about []string
				for _, n := range notes {
					for _, a := range n.Args {
						if a == "living temperature" {
							about = append(about, n.Msg)
						}
					}
				}
				switch {
				case round == 1 && len(about) > 0:
					t.Errorf("round 1 reports again: %v", about)
				case round == 0 && tc.note == "" && len(about) > 0:
					t.Errorf("unexpected notes %v", about)
				case round == 0 && tc.note != "" && (len(about) != 1 || !strings.HasPrefix(about[0], tc.note)):
					t.Errorf("notes %v, want one %q", about, tc.note)
				}
			}
		})
	}
}

// TestUnread counts what a process that plans once waits for: every
// stored energy, every car's plugged state and every [[sensor]] topic of
// the street, and not the other properties devices move (a dishwasher's
// progress, a room under its radiator), which many appliances never
// publish.
func TestUnread(t *testing.T) {
	path := sensorStreet(t, "")
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 26, 17, 10, 0, 0, time.Local)
	in := NewInputs(cfg, "hearth", "dogwood", fixedClock(t, now), nil)
	// alder's and cedar's cars (charge, plugged), dogwood's battery, the
	// living room's thermostat.
	if got := in.Unread(); got != 6 {
		t.Errorf("%d unread before any message, want 6", got)
	}
	stamp := now.Format(time.RFC3339)
	for topic, payload := range map[string]string{
		StateTopic("hearth", "alder", "ev"):        `{"time":"` + stamp + `","charge":20,"plugged":true}`,
		StateTopic("hearth", "cedar", "ev"):        `{"time":"` + stamp + `","charge":30,"plugged":false}`,
		StateTopic("hearth", "dogwood", "battery"): `{"time":"` + stamp + `","soc":8}`,
	} {
		in.Handle(topic, []byte(payload))
	}
	if got := in.Unread(); got != 1 {
		t.Errorf("%d unread with only the thermostat silent, want 1", got)
	}
	in.Handle("homeassistant/sensor/living_temp/state", []byte("19.6"))
	if got := in.Unread(); got != 0 {
		t.Errorf("%d unread with every device state and sensor read, want 0", got)
	}
}
