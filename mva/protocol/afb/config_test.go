package afb

import (
	"math"
	"strings"
	"testing"
)

// TestParseConfig: every mode off or first by default, the package
// comment's ranges accepted, and an error naming the parameter and its
// range for each value outside them.
func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		params map[string]float64
		want   Config
		err    string
	}{
		{nil, Config{}, ""},
		{map[string]float64{"afb_order": 2, "afb_candidates": 2, "afb_estimate": 1, "afb_hplus": 1, "afb_zero_stop": 1, "afb_recheck": 1},
			Config{Order: OrderLinks, Candidates: CandidatesLex, Estimate: EstimateHybrid, HPlus: true, ZeroStop: true, Recheck: true}, ""},
		{map[string]float64{"afb_order": 1, "rounds": 9}, Config{Order: OrderDegree}, ""},
		{map[string]float64{"afb_order": 3}, Config{}, "parameter afb_order = 3: want an integer in 0..2"},
		{map[string]float64{"afb_estimate": -1}, Config{}, "parameter afb_estimate = -1: want an integer in 0..2"},
		{map[string]float64{"afb_candidates": 1.5}, Config{}, "afb_candidates = 1.5"},
		{map[string]float64{"afb_hplus": 2}, Config{}, "parameter afb_hplus = 2: want an integer in 0..1"},
		{map[string]float64{"afb_recheck": math.NaN()}, Config{}, "afb_recheck = NaN"},
	} {
		c, err := ParseConfig(tc.params)
		if tc.err == "" && (err != nil || c != tc.want) {
			t.Errorf("%v: %+v, %v; want %+v", tc.params, c, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v: error %v, want one with %q", tc.params, err, tc.err)
		}
	}
	if err := (Config{Estimate: 5}).validate(); err == nil || !strings.Contains(err.Error(), "afb_estimate = 5") {
		t.Errorf("validate of estimate 5: %v", err)
	}
}

// FuzzParseConfig: any values of two of the parameters give either a
// Config that validates or an error that names one of them (or, for
// alpha and epsilon, says how they go together); never a panic.
func FuzzParseConfig(f *testing.F) {
	names := []string{"afb_order", "afb_candidates", "afb_estimate", "afb_hplus", "afb_zero_stop", "afb_recheck"}
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
