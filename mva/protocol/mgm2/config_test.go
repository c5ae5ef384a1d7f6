package mgm2

import (
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
)

// TestParseConfig: the package comment's defaults, and an error naming
// the parameter and its range for each bad value.
func TestParseConfig(t *testing.T) {
	def := Config{Rounds: 50, OfferProb: 0.5, Init: localsearch.InitRandom,
		Response: localsearch.ResponseConfig{Mode: localsearch.ResponseAuto, Entries: localsearch.DefaultResponseEntries, BlockEntries: localsearch.BlockEntries, Checks: localsearch.DefaultResponseChecks}}
	set := def
	set.Rounds, set.OfferProb, set.PositiveOffers, set.MaxOffers, set.AcceptOverUnilateral, set.Init = 3, 1, true, 4, true, localsearch.InitBestRow
	for _, tc := range []struct {
		params map[string]float64
		want   Config
		err    string
	}{
		{nil, def, ""},
		{map[string]float64{"rounds": 3, "offer_prob": 1, "positive_offers": 1, "max_offers": 4, "accept_over_unilateral": 1, "init": 2, "joint": 1}, set, ""},
		{map[string]float64{"offer_prob": 1.5}, Config{}, "mgm2: parameter offer_prob = 1.5: want a probability in [0, 1]"},
		{map[string]float64{"max_offers": 1 << 23}, Config{}, "parameter max_offers = 8.388608e+06: want an integer in 0..4194304"},
		{map[string]float64{"positive_offers": 0.5}, Config{}, "parameter positive_offers = 0.5: want 0 or 1"},
		{map[string]float64{"response_entries": -1}, Config{}, "parameter response_entries = -1"},
	} {
		c, err := ParseConfig(tc.params)
		if tc.err == "" && (err != nil || c != tc.want) {
			t.Errorf("%v: %+v, %v; want %+v", tc.params, c, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v: error %v, want one with %q", tc.params, err, tc.err)
		}
	}
	if err := (Config{Rounds: 1, OfferProb: 2}).validate(); err == nil || !strings.Contains(err.Error(), "offer_prob = 2") {
		t.Errorf("validate of offer_prob 2: %v", err)
	}
}

// FuzzParseConfig: any values of two of the parameters give either a
// Config that validates or an error that names one of them (or, for
// alpha and epsilon, says how they go together); never a panic.
func FuzzParseConfig(f *testing.F) {
	names := []string{"rounds", "offer_prob", "positive_offers", "max_offers", "accept_over_unilateral", "init", "response", "response_entries", "block_entries"}
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
