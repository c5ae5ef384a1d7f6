package live

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseSeries(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		err  string // "" for none
		want Series
	}{
		{in: `{"start":"2026-11-26T06:00:00Z","step":"15m","values":[1,2.5]}`, want: Series{Start: t0, Step: 15 * time.Minute, Values: []float64{1, 2.5}}},
		{in: `{"start":"2026-11-26T06:00:00Z","step":"1h","values":[]}`, err: "0 values"},
		{in: `{"start":"06:00","step":"1h","values":[1]}`, err: "not an RFC 3339"},
		{in: `{"start":"2026-11-26T06:00:00Z","step":"10s","values":[1]}`, err: "step"},
		{in: `{"start":"2026-11-26T06:00:00Z","step":"1h","values":[1e300]}`, err: "out of range"},
		{in: `{"start":"2026-11-26T06:00:00Z","step":"1h","values":[1],"extra":1}`, err: "unknown field"},
		{in: `[1,2,3]`, err: "want {"},
	} {
		got, err := ParseSeries([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !got.Start.Equal(tc.want.Start) || got.Step != tc.want.Step || len(got.Values) != len(tc.want.Values) {
			t.Errorf("%s: %+v %v", tc.in, got, err)
		}
	}
}

// TestSeriesMean checks the time-weighted mean against a sum over
// minutes, computed apart.
func TestSeriesMean(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	s := Series{Start: t0, Step: 15 * time.Minute, Values: []float64{1, 2, 3, 4, 5, 6, 7, 8}}
	perMinute := func(from, to time.Time) float64 {
		sum, n := 0.0, 0
		for m := from; m.Before(to); m = m.Add(time.Minute) {
			sum += s.Values[int(m.Sub(t0)/(15*time.Minute))]
			n++
		}
		return sum / float64(n)
	}
	for _, tc := range []struct {
		from, to time.Duration
		ok       bool
	}{
		{0, time.Hour, true},
		{10 * time.Minute, 70 * time.Minute, true},
		{time.Hour, 2 * time.Hour, true},
		{time.Hour, 2*time.Hour + time.Minute, false},
		{-time.Minute, time.Hour, false},
	} {
		got, ok := s.Mean(t0.Add(tc.from), t0.Add(tc.to))
		if ok != tc.ok {
			t.Errorf("[%v, %v): covered %v, want %v", tc.from, tc.to, ok, tc.ok)
			continue
		}
		if ok && math.Abs(got-perMinute(t0.Add(tc.from), t0.Add(tc.to))) > 1e-9 {
			t.Errorf("[%v, %v): mean %g, want %g", tc.from, tc.to, got, perMinute(t0.Add(tc.from), t0.Add(tc.to)))
		}
	}
}

func TestParseState(t *testing.T) {
	st, err := ParseState([]byte(`{"time":"2026-11-26T06:00:00Z","charge":31.5,"plugged":false,"note":"x"}`))
	if err != nil || st.Values["charge"] != 31.5 || st.Plugged == nil || *st.Plugged || st.Time.Hour() != 6 || len(st.Values) != 1 {
		t.Fatalf("%+v %v", st, err)
	}
	for _, in := range []string{`{"time":6}`, `{"plugged":"maybe"}`, `{"charge":1e12}`, `not json`, `{"time":"yesterday"}`} {
		if _, err := ParseState([]byte(in)); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}

func TestParseValues(t *testing.T) {
	for _, tc := range []struct {
		in, field string
		want      float64
		err       bool
	}{
		{"42.5", "", 42.5, false},
		{" 7 \n", "", 7, false},
		{`"55"`, "", 55, false},
		{`{"state":"61.2","attributes":{}}`, "state", 61.2, false},
		{`{"data":{"soc":80}}`, "data.soc", 80, false},
		{`{"data":{"soc":80}}`, "data.x", 0, true},
		{`unavailable`, "", 0, true},
		{`NaN`, "", 0, true},
		{`{"a":1}`, "a.b", 0, true},
	} {
		got, err := ParseNumber([]byte(tc.in), tc.field)
		if (err != nil) != tc.err || !tc.err && got != tc.want {
			t.Errorf("ParseNumber(%q, %q) = %g, %v", tc.in, tc.field, got, err)
		}
	}
	for _, tc := range []struct {
		in, field string
		want      bool
		err       bool
	}{
		{"true", "", true, false}, {"ON", "", true, false}, {"1", "", true, false},
		{"false", "", false, false}, {`"off"`, "", false, false}, {"0", "", false, false},
		{`{"connected":true}`, "connected", true, false},
		{"yes", "", false, true}, {`{"x":1}`, "connected", false, true},
	} {
		got, err := ParseBool([]byte(tc.in), tc.field)
		if (err != nil) != tc.err || !tc.err && got != tc.want {
			t.Errorf("ParseBool(%q, %q) = %v, %v", tc.in, tc.field, got, err)
		}
	}
}

func FuzzParseSeries(f *testing.F) {
	f.Add([]byte(`{"start":"2026-11-26T06:00:00Z","step":"15m","values":[1,2.5]}`))
	f.Add([]byte(`{"start":"2026-11-26T06:00:00Z","step":"1h","values":[-1]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSeries(b)
		if err != nil {
			return
		}
		if len(s.Values) == 0 || s.Step < time.Minute {
			t.Fatalf("accepted %+v", s)
		}
		// Any covered interval has a finite mean within the values' range.
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range s.Values {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		if m, ok := s.Mean(s.Start, s.End()); !ok || m < lo-1e-6 || m > hi+1e-6 {
			t.Fatalf("mean %g %v outside [%g, %g]", m, ok, lo, hi)
		}
	})
}

func FuzzParseState(f *testing.F) {
	f.Add([]byte(`{"time":"2026-11-26T06:00:00Z","charge":31.5,"plugged":false}`))
	f.Add([]byte(`{"soc":4}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := ParseState(b)
		if err != nil {
			return
		}
		for k, v := range st.Values {
			if math.IsNaN(v) || math.Abs(v) > 1e9 || k == "time" || k == "plugged" {
				t.Fatalf("accepted %s = %g", k, v)
			}
		}
	})
}

func FuzzParseValue(f *testing.F) {
	f.Add([]byte(`{"state":"61.2"}`), "state")
	f.Add([]byte(`true`), "")
	f.Fuzz(func(t *testing.T, b []byte, field string) {
		if v, err := ParseNumber(b, field); err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			t.Fatalf("accepted %g", v)
		}
		_, _ = ParseBool(b, field)
	})
}

func TestClock(t *testing.T) {
	wall := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return wall }
	c, err := NewClock(time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC), wall, 120, now)
	if err != nil {
		t.Fatal(err)
	}
	wall = wall.Add(30 * time.Second)
	if got := c.Now().UTC(); !got.Equal(time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC)) {
		t.Errorf("after 30 s at 120×: %v, want 07:00", got)
	}
	if w := c.Wall(time.Hour); w != 30*time.Second {
		t.Errorf("an hour takes %v of the wall clock, want 30s", w)
	}
	if _, err := NewClock(time.Time{}, time.Time{}, 0, nil); err == nil {
		t.Error("speed 0 accepted")
	}
	for _, tc := range []struct{ at, want string }{
		{"2026-11-26T06:07:00Z", "2026-11-26T06:00:00Z"},
		{"2026-11-26T06:15:00Z", "2026-11-26T06:15:00Z"},
		{"2026-11-26T23:59:59Z", "2026-11-26T23:45:00Z"},
	} {
		at, _ := time.Parse(time.RFC3339, tc.at)
		if got := SlotStart(at, 15*time.Minute).Format(time.RFC3339); got != tc.want {
			t.Errorf("SlotStart(%s) = %s, want %s", tc.at, got, tc.want)
		}
	}
}
