package mgm

import (
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
)

// TestParseConfig: the package comment's defaults, named values, and an
// error naming the parameter and its range for each bad value.
func TestParseConfig(t *testing.T) {
	def := Config{Rounds: 50, Init: localsearch.InitRandom,
		Response: localsearch.ResponseConfig{Mode: localsearch.ResponseAuto, Entries: localsearch.DefaultResponseEntries, BlockEntries: localsearch.BlockEntries, Checks: localsearch.DefaultResponseChecks}}
	blocks := def
	blocks.Rounds, blocks.Init, blocks.Joint, blocks.Quiet, blocks.Response.Mode = 0, localsearch.InitStart, true, true, localsearch.ResponseBlocks
	for _, tc := range []struct {
		params map[string]float64
		want   Config
		err    string
	}{
		{nil, def, ""},
		{map[string]float64{"rounds": 0, "init": InitStart, "joint": 1, "quiet": 1, "response": ResponseBlocks, "offer_prob": 0.2}, blocks, ""},
		{map[string]float64{"rounds": -1}, Config{}, "mgm: parameter rounds = -1: want an integer in 0..1073741824"},
		{map[string]float64{"init": 4}, Config{}, "parameter init = 4: want an integer in 0..3"},
		{map[string]float64{"joint": 2}, Config{}, "parameter joint = 2: want 0 or 1"},
		{map[string]float64{"response": 9}, Config{}, "parameter response = 9: want an integer in 0..3"},
		{map[string]float64{"block_entries": 0}, Config{}, "parameter block_entries = 0"},
	} {
		c, err := ParseConfig(tc.params)
		if tc.err == "" && (err != nil || c != tc.want) {
			t.Errorf("%v: %+v, %v; want %+v", tc.params, c, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v: error %v, want one with %q", tc.params, err, tc.err)
		}
	}
	if err := (Config{Rounds: 1, Init: 7}).validate(); err == nil || !strings.Contains(err.Error(), "init = 7") {
		t.Errorf("validate of init 7: %v", err)
	}
}

// FuzzParseConfig: any values of two of the parameters give either a
// Config that validates or an error that names one of them (or, for
// alpha and epsilon, says how they go together); never a panic.
func FuzzParseConfig(f *testing.F) {
	names := []string{"rounds", "init", "joint", "quiet", "response", "response_entries", "block_entries"}
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
