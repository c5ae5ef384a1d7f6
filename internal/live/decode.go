package live

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// MaxPayload bounds what the decoders read: state and series are small,
// and a broker may carry anything.
const MaxPayload = 1 << 20

// MaxSeries bounds a series' values (a year of 5-minute steps).
const MaxSeries = 366 * 24 * 12

// Series is a time series of equal steps: a PV or base-load forecast in
// kW, or prices in currency/kWh.
type Series struct {
	Start  time.Time
	Step   time.Duration
	Values []float64
}

type seriesJSON struct {
	Start  string    `json:"start"`
	Step   string    `json:"step"`
	Values []float64 `json:"values"`
}

// ParseSeries decodes {"start": RFC 3339, "step": "15m", "values": [...]}.
func ParseSeries(b []byte) (Series, error) {
	if len(b) > MaxPayload {
		return Series{}, fmt.Errorf("series of %d bytes (at most %d)", len(b), MaxPayload)
	}
	var j seriesJSON
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&j); err != nil {
		return Series{}, fmt.Errorf("series: want {\"start\": RFC 3339, \"step\": \"15m\", \"values\": [numbers]}: %w", err)
	}
	start, err := time.Parse(time.RFC3339, j.Start)
	if err != nil {
		return Series{}, fmt.Errorf("series: start %q is not an RFC 3339 time", j.Start)
	}
	step, err := time.ParseDuration(j.Step)
	if err != nil || step < time.Minute || step > 24*time.Hour {
		return Series{}, fmt.Errorf("series: step %q is not a duration between 1m and 24h", j.Step)
	}
	if len(j.Values) == 0 || len(j.Values) > MaxSeries {
		return Series{}, fmt.Errorf("series: %d values (want 1 to %d)", len(j.Values), MaxSeries)
	}
	for i, v := range j.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e6 {
			return Series{}, fmt.Errorf("series: value %d is %g, out of range", i, v)
		}
	}
	return Series{Start: start, Step: step, Values: j.Values}, nil
}

// End is the end of the series' last step.
func (s Series) End() time.Time { return s.Start.Add(time.Duration(len(s.Values)) * s.Step) }

// Mean is the series' time-weighted mean over [from, to), and false
// unless the series covers the whole of it.
func (s Series) Mean(from, to time.Time) (float64, bool) {
	if len(s.Values) == 0 || s.Step <= 0 || !to.After(from) || from.Before(s.Start) || to.After(s.End()) {
		return 0, false
	}
	sum := 0.0
	for i, v := range s.Values {
		a := s.Start.Add(time.Duration(i) * s.Step)
		b := a.Add(s.Step)
		lo, hi := maxTime(a, from), minTime(b, to)
		if hi.After(lo) {
			sum += v * float64(hi.Sub(lo))
		}
	}
	return sum / float64(to.Sub(from)), true
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// State is one message of a device's state topic.
type State struct {
	// Time is the message's "time" (zero when absent: the time it
	// arrived stands for it).
	Time time.Time
	// Values are the numeric properties, by name.
	Values map[string]float64
	// Plugged is the EV's "plugged", nil when absent.
	Plugged *bool
}

// ParseState decodes {"time": RFC 3339, "<property>": number, …,
// "plugged": bool}.
func ParseState(b []byte) (State, error) {
	if len(b) > MaxPayload {
		return State{}, fmt.Errorf("state of %d bytes (at most %d)", len(b), MaxPayload)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return State{}, fmt.Errorf("state: want a JSON object {\"time\": …, \"charge\": 30.5, \"plugged\": true}: %w", err)
	}
	st := State{Values: map[string]float64{}}
	for k, raw := range m {
		switch k {
		case "time":
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return State{}, errors.New("state: time is not a string")
			}
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return State{}, fmt.Errorf("state: time %q is not an RFC 3339 time", s)
			}
			st.Time = t
		case "plugged":
			var v bool
			if err := json.Unmarshal(raw, &v); err != nil {
				return State{}, errors.New("state: plugged is not true or false")
			}
			st.Plugged = &v
		default:
			var v float64
			if err := json.Unmarshal(raw, &v); err != nil {
				// Other fields (strings, objects) are the publisher's.
				continue
			}
			if math.Abs(v) > 1e9 {
				return State{}, fmt.Errorf("state: %s = %g is out of range", k, v)
			}
			st.Values[k] = v
		}
	}
	return st, nil
}

// field returns the JSON value at a dot-separated path of b, or b
// itself for path "".
func field(b []byte, path string) ([]byte, error) {
	if len(b) > MaxPayload {
		return nil, fmt.Errorf("payload of %d bytes (at most %d)", len(b), MaxPayload)
	}
	if path == "" {
		return bytes.TrimSpace(b), nil
	}
	var cur json.RawMessage = b
	for _, k := range strings.Split(path, ".") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(cur, &m); err != nil {
			return nil, fmt.Errorf("field %s: the payload is not a JSON object at %q", path, k)
		}
		v, ok := m[k]
		if !ok {
			return nil, fmt.Errorf("field %s: no %q", path, k)
		}
		cur = v
	}
	return bytes.TrimSpace(cur), nil
}

// ParseNumber reads a number at path of a payload: a plain number
// ("42.5"), or a JSON document with the number (or a numeric string, as
// Home Assistant's states are) at path.
func ParseNumber(b []byte, path string) (float64, error) {
	v, err := field(b, path)
	if err != nil {
		return 0, err
	}
	s := strings.Trim(string(v), `"`)
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%.40q is not a number", s)
	}
	return f, nil
}

// ParseBool reads true/false, 1/0, on/off (any case, quoted or not) at
// path of a payload.
func ParseBool(b []byte, path string) (bool, error) {
	v, err := field(b, path)
	if err != nil {
		return false, err
	}
	switch strings.ToLower(strings.Trim(string(v), `"`)) {
	case "true", "1", "on":
		return true, nil
	case "false", "0", "off":
		return false, nil
	}
	return false, fmt.Errorf("%.40q is not true/false, 1/0 or on/off", v)
}

// ParseSeriesCSV decodes a series file: rows "time,value" with RFC 3339
// times one step apart (the step is the first two rows' difference), an
// optional header row first, blank lines and #-comments ignored.
func ParseSeriesCSV(b []byte) (Series, error) {
	if len(b) > 16*MaxPayload {
		return Series{}, fmt.Errorf("series file of %d bytes (at most %d)", len(b), 16*MaxPayload)
	}
	var (
		s     Series
		times []time.Time
	)
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ts, vs, ok := strings.Cut(line, ",")
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(ts))
		if err != nil && len(times) == 0 && !strings.ContainsAny(ts, "0123456789") {
			continue // a header
		}
		if !ok || err != nil {
			return Series{}, fmt.Errorf("line %d: want \"RFC 3339 time,value\", got %.60q", i+1, line)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(vs), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e6 {
			return Series{}, fmt.Errorf("line %d: %.30q is not a number up to 1e6", i+1, strings.TrimSpace(vs))
		}
		if len(times) == 1 {
			s.Step = t.Sub(times[0])
			if s.Step < time.Minute || s.Step > 24*time.Hour {
				return Series{}, fmt.Errorf("line %d: a step of %v (want 1m to 24h between rows)", i+1, s.Step)
			}
		}
		if len(times) >= 1 && !t.Equal(times[len(times)-1].Add(s.Step)) {
			return Series{}, fmt.Errorf("line %d: %s is not one step (%v) after the row before", i+1, ts, s.Step)
		}
		if len(times) == MaxSeries {
			return Series{}, fmt.Errorf("line %d: more than %d rows", i+1, MaxSeries)
		}
		times = append(times, t)
		s.Values = append(s.Values, v)
	}
	if len(times) < 2 {
		return Series{}, errors.New("a series file needs at least two rows, one step apart")
	}
	s.Start = times[0]
	return s, nil
}
