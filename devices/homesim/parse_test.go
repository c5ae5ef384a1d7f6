package homesim_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/devices/homesim"
)

func TestParseCommand(t *testing.T) {
	ok := `{"round":"2026-11-26T1700","created":"2026-11-26T16:59:00Z","slot_start":"2026-11-26T17:00:00Z","slot_end":"2026-11-26T18:00:00Z","expires":"2026-11-26T18:05:00Z","action":"charge_32a","power_kw":7.4}`
	c, err := homesim.ParseCommand([]byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if c.Round != "2026-11-26T1700" || c.Action != "charge_32a" || c.PowerKW != 7.4 || c.Expires.Sub(c.SlotEnd) != 5*time.Minute || c.EnergyKWh != nil {
		t.Errorf("parsed %+v", c)
	}
	c, err = homesim.ParseCommand([]byte(strings.Replace(ok, `"power_kw":7.4`, `"power_kw":2.99,"energy_kwh":2.99`, 1)))
	if err != nil || c.EnergyKWh == nil || *c.EnergyKWh != 2.99 {
		t.Errorf("with energy_kwh: %+v, %v", c, err)
	}
	c, err = homesim.ParseCommand([]byte(`{"round":7,"slot_start":"2026-11-26T17:00:00Z","slot_end":"2026-11-26T19:00:00+01:00","action":"off"}`))
	if err != nil || c.Round != "7" || !c.Expires.Equal(c.SlotEnd) {
		t.Errorf("numeric round, no expiry: %+v, %v", c, err)
	}
	for _, c := range []struct{ in, want string }{
		{`[]`, "not a JSON object"},
		{`{"slot_end":"2026-11-26T18:00:00Z","action":"off"}`, "slot_start is missing"},
		{`{"slot_start":"17:00","slot_end":"2026-11-26T18:00:00Z","action":"off"}`, "slot_start = \"17:00\""},
		{`{"slot_start":"2026-11-26T18:00:00Z","slot_end":"2026-11-26T18:00:00Z","action":"off"}`, "not after"},
		{`{"slot_start":"2026-11-26T17:00:00Z","slot_end":"2026-11-26T18:00:00Z"}`, "action is missing"},
		{`{"slot_start":"2026-11-26T17:00:00Z","slot_end":"2026-11-26T18:00:00Z","action":"x","power_kw":1e9}`, "power_kw"},
		{`{"round":{},"slot_start":"2026-11-26T17:00:00Z","slot_end":"2026-11-26T18:00:00Z","action":"x"}`, "round"},
		{`{"action":"x"} {}`, "after the JSON object"},
		{`{"slot_start":"2026-11-26T17:00:00Z","slot_end":"2026-11-26T18:00:00Z","action":"x","energy_kwh":1e9}`, "energy_kwh"},
		{`{"slot_start":"2026-11-26T17:00:00Z","slot_end":"2026-11-26T18:00:00Z","action":"x","energy_kwh":"2"}`, "not a JSON object"},
	} {
		_, err := homesim.ParseCommand([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.in, err, c.want)
		}
	}
}

func FuzzParseCommand(f *testing.F) {
	f.Add([]byte(`{"round":"r","created":"2026-11-26T16:59:00Z","slot_start":"2026-11-26T17:00:00Z","slot_end":"2026-11-26T18:00:00Z","expires":"2026-11-26T18:00:00Z","action":"run","power_kw":0.7}`))
	f.Add([]byte(`{"slot_start":"2026-11-26T17:00:00Z","slot_end":"2026-11-26T17:15:00Z","action":"off","power_kw":-5}`))
	f.Add([]byte(`{"slot_start":"2026-11-26T17:00:00Z","slot_end":"2026-11-26T18:00:00Z","action":"13a","power_kw":2.99,"energy_kwh":2.99}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := homesim.ParseCommand(b)
		if err != nil {
			return
		}
		if c.Action == "" || !c.SlotEnd.After(c.SlotStart) || c.Expires.IsZero() || c.EnergyKWh != nil && (math.IsNaN(*c.EnergyKWh) || math.Abs(*c.EnergyKWh) > 1e5) {
			t.Fatalf("accepted %q as %+v", b, c)
		}
	})
}

func TestParseTripSpec(t *testing.T) {
	s, err := homesim.ParseTripSpec("ev=07:30-17:45@20")
	if err != nil || s.Device != "ev" || s.Leave != 450 || s.Return != 1065 || s.ArriveWith == nil || *s.ArriveWith != 20 {
		t.Fatalf("%+v %v", s, err)
	}
	if s, err := homesim.ParseTripSpec("car=home"); err != nil || !s.Home {
		t.Fatalf("%+v %v", s, err)
	}
	for _, bad := range []string{"ev", "=07:00-08:00", "ev=7-8", "ev=07:00-07:00", "ev=07:00-25:00", "ev=07:00-08:00@-1", "ev=07:00"} {
		if _, err := homesim.ParseTripSpec(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseTripSpec(f *testing.F) {
	f.Add("ev=07:30-17:45@20")
	f.Add("ev=home")
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := homesim.ParseTripSpec(s)
		if err != nil || sp.Home {
			return
		}
		if sp.Leave < 0 || sp.Leave >= 1440 || sp.Return < 0 || sp.Return >= 1440 || sp.Leave == sp.Return {
			t.Fatalf("%q gave %+v", s, sp)
		}
	})
}

func TestParseTime(t *testing.T) {
	loc := time.FixedZone("X", 3600)
	ref := time.Date(2026, 11, 26, 9, 0, 0, 0, loc)
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		{"2026-11-26T17:00:00Z", time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC)},
		{"2026-11-27T06:30", time.Date(2026, 11, 27, 6, 30, 0, 0, loc)},
		{"17:00", time.Date(2026, 11, 26, 17, 0, 0, 0, loc)},
	} {
		got, err := homesim.ParseTime(c.in, loc, ref)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("%s: %s %v, want %s", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "tomorrow", "24:00", "17:0"} {
		if _, err := homesim.ParseTime(bad, loc, ref); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
