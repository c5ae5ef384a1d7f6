package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/internal/fixtures"
	"github.com/hearth-dcop/hearth/mqtt"
)

// mqttLine is the text's transport line, as sim prints it for an
// instance and for homes.
var mqttLine = regexp.MustCompile(`mqtt +\S+.*, run \S+: ([\d,]+) envelopes \(([\d,]+) bytes\), (\d+) retransmitted, (\d+) connections`)

// TestSimJSONCarriesMQTTCounters: `hearth sim --json` carries, under
// "mqtt", the counters the text's mqtt line prints — for an instance the
// sums of the per-agent counters beside them, for homes the same object
// the text reads — and the text prints what the JSON of the same kind of
// run says about the connections (one per agent).
func TestSimJSONCarriesMQTTCounters(t *testing.T) {
	// The example with the catalogue's fixed levels: a fraction of the
	// automatic levels' time, the same counters.
	nb := fixtures.ExampleStreet(t, filepath.Join("..", ".."), `power_steps = "fixed"`)
	tests := []struct {
		name  string
		args  []string
		homes bool
	}{
		{"instance", []string{"sim", filepath.Join("..", "..", "examples", "thesis-3.1.xml")}, false},
		{"homes", []string{"sim", nb, "--shmgm-rounds", "-1"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(context.Background(), append(tc.args, "--json"), &out, &errb); code != exitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			var r struct {
				MQTT   *report.MQTT `json:"mqtt"`
				Agents []mqtt.Stats `json:"agents"`
			}
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			if r.MQTT == nil || r.MQTT.Envelopes <= 0 || r.MQTT.Connections <= 0 {
				t.Fatalf("json mqtt %+v", r.MQTT)
			}
			if !tc.homes {
				var env, bytes, re, conn int64
				for _, a := range r.Agents {
					env, bytes, re, conn = env+a.Envelopes, bytes+a.EnvelopeBytes, re+a.Retransmitted, conn+a.Connects
				}
				if got := [4]int64{r.MQTT.Envelopes, r.MQTT.EnvelopeBytes, r.MQTT.Retransmitted, r.MQTT.Connections}; got != [4]int64{env, bytes, re, conn} {
					t.Errorf("json mqtt %v, the agents' sums %v", got, [4]int64{env, bytes, re, conn})
				}
			}
			out.Reset()
			if code := run(context.Background(), tc.args, &out, &errb); code != exitOK {
				t.Fatalf("text: exit %d: %s", code, errb.String())
			}
			m := mqttLine.FindStringSubmatch(out.String())
			if m == nil {
				t.Fatalf("text has no mqtt line:\n%s", out.String())
			}
			conn, _ := strconv.ParseInt(m[4], 10, 64)
			env, _ := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
			if conn != r.MQTT.Connections || env <= 0 {
				t.Errorf("text: %d envelopes, %d connections; json %+v", env, conn, r.MQTT)
			}
		})
	}
}
