package dpop

import (
	"strings"
	"testing"
)

// TestParseConfig: the documented defaults, the accepted values, and an
// error that names the parameter and what it takes for each bad one.
func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		params map[string]float64
		want   Config
		err    string // substring of the error; "" for none
	}{
		{nil, Config{MaxUtilEntries: 1 << 24, Heuristic: MostNeighbours}, ""},
		{map[string]float64{"max_util_entries": 1, "heuristic": 1}, Config{MaxUtilEntries: 1, Heuristic: LowestID}, ""},
		{map[string]float64{"rounds": 7}, DefaultConfig(), ""}, // another protocol's
		{map[string]float64{"max_util_entries": 0}, Config{}, "max_util_entries = 0: want a whole number in 1..2147483647"},
		{map[string]float64{"max_util_entries": 2.5}, Config{}, "max_util_entries = 2.5"},
		{map[string]float64{"max_util_entries": 1 << 31}, Config{}, "max_util_entries"},
		{map[string]float64{"heuristic": 2}, Config{}, "heuristic = 2: want 0 (most neighbours first) or 1 (lowest id first)"},
		{map[string]float64{"heuristic": 0.5}, Config{}, "heuristic = 0.5"},
	} {
		c, err := ParseConfig(tc.params)
		if tc.err == "" && (err != nil || c != tc.want) {
			t.Errorf("%v: %+v, %v; want %+v", tc.params, c, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v: error %v, want one with %q", tc.params, err, tc.err)
		}
	}
	if err := (Config{MaxUtilEntries: 8, Heuristic: 3}).validate(); err == nil || !strings.Contains(err.Error(), "heuristic = 3") {
		t.Errorf("validate of heuristic 3: %v", err)
	}
}

// FuzzParseConfig: any values of two of the parameters give either a
// Config that validates or an error that names one of them (or, for
// alpha and epsilon, says how they go together); never a panic.
func FuzzParseConfig(f *testing.F) {
	names := []string{"max_util_entries", "heuristic"}
	f.Add(uint8(0), 1.0, uint8(1), 0.0)
	f.Add(uint8(2), -1.0, uint8(3), 0.5)
	f.Fuzz(func(t *testing.T, i uint8, a float64, j uint8, b float64) {
		ni, nj := names[int(i)%len(names)], names[int(j)%len(names)]
		params := map[string]float64{ni: a, nj: b}
		c, err := ParseConfig(params)
		if err == nil {
			if err := c.validate(); err != nil {
				t.Fatalf("%v: parsed %+v does not validate: %v", params, c, err)
			}
			return
		}
		if msg := err.Error(); !strings.Contains(msg, ni) && !strings.Contains(msg, nj) {
			t.Fatalf("%v: error %q names neither parameter", params, msg)
		}
	})
}
