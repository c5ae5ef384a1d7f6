package dgibbs

import (
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
)

// TestParseConfig: the package comment's defaults, named values, N from
// α and ε, and an error naming the parameter for each bad value.
func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		params map[string]float64
		want   Config
		err    string
	}{
		{nil, Config{Iterations: DefaultIterations, Temperature: 1, Init: localsearch.InitFirst, Interior: InteriorBest}, ""},
		{map[string]float64{"alpha": 0.1, "epsilon": 0.05, "temperature": 5, "init": 3, "interior": 1},
			Config{Iterations: 200, Temperature: 5, Init: localsearch.InitStart, Interior: InteriorGibbs}, ""},
		{map[string]float64{"iterations": 0}, Config{}, "dgibbs: parameter iterations = 0: want an integer in 1..1073741824"},
		{map[string]float64{"temperature": -2}, Config{}, "dgibbs: temperature = -2: want a positive finite number"},
		{map[string]float64{"interior": 2}, Config{}, "parameter interior = 2: want an integer in 0..1"},
		{map[string]float64{"alpha": 0.1}, Config{}, "alpha and epsilon go together"},
	} {
		c, err := ParseConfig(tc.params)
		if tc.err == "" && (err != nil || c != tc.want) {
			t.Errorf("%v: %+v, %v; want %+v", tc.params, c, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v: error %v, want one with %q", tc.params, err, tc.err)
		}
	}
	if err := (Config{Iterations: 1, Temperature: 1, Interior: 3}).validate(); err == nil || !strings.Contains(err.Error(), "interior = 3") {
		t.Errorf("validate of interior 3: %v", err)
	}
}

// FuzzParseConfig: any values of two of the parameters give either a
// Config that validates or an error that names one of them (or, for
// alpha and epsilon, says how they go together); never a panic.
func FuzzParseConfig(f *testing.F) {
	names := []string{"iterations", "alpha", "epsilon", "temperature", "init", "interior"}
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
