package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/internal/solve"
)

// simJSON is `hearth sim --json`.
func simJSON(t *testing.T, args ...string) solve.MQTTResult {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(context.Background(), append(append([]string{"sim"}, args...), "--json"), &out, &errb); code != exitOK {
		t.Fatalf("sim: exit %d: %s", code, errb.String())
	}
	var r solve.MQTTResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("sim: %v\n%s", err, out.String())
	}
	return r
}

// TestSimSameRunAsSolve: DPOP is deterministic and the MQTT link layer
// delivers every message exactly once, so `hearth sim` must give
// `hearth solve`'s answer with the same messages and bytes — internal
// ones included when decomposition puts several protocol agents in one
// agent — and one counter set per protocol agent.
func TestSimSameRunAsSolve(t *testing.T) {
	path := genInstance(t, "random", "agents=4", "vars=4", "domain=3", "--seed", "9")
	for _, rf := range []string{"mva", "decomposition"} {
		t.Run(rf, func(t *testing.T) {
			want := solveJSON(t, path, "--global", "dpop", "--reform", rf)
			got := simJSON(t, path, "--global", "dpop", "--reform", rf, "--run-id", "same-"+rf)
			if got.Objective == nil || *got.Objective != *want.Objective || got.Optimal != want.Optimal {
				t.Errorf("objective %v (optimal %v), want %v (%v)", fmtObjective(got.Objective), got.Optimal, fmtObjective(want.Objective), want.Optimal)
			}
			for k, v := range want.Assignment {
				if got.Assignment[k] != v {
					t.Errorf("%s = %s, want %s", k, got.Assignment[k], v)
				}
			}
			gm, wm := got.Metrics, want.Metrics
			if gm.Messages != wm.Messages || gm.InternalMessages != wm.InternalMessages ||
				gm.TotalMessageBytes != wm.TotalMessageBytes || gm.MaxMessageBytes != wm.MaxMessageBytes {
				t.Errorf("metrics %+v, simulated %+v", gm, wm)
			}
			if rf == "decomposition" && gm.InternalMessages == 0 {
				t.Error("decomposition counted no internal messages")
			}
			if got.Run != "same-"+rf || !strings.HasPrefix(got.Broker, "tcp://127.0.0.1:") || got.Algorithm.Reform != rf {
				t.Errorf("run %q broker %q algorithm %+v", got.Run, got.Broker, got.Algorithm)
			}
			var delivered int64
			for _, s := range got.Agents {
				delivered += s.Delivered
				if s.Agent == "" || s.Connects < 1 || s.WallMs <= 0 {
					t.Errorf("agent counters %+v", s)
				}
			}
			if delivered != gm.Messages+gm.InternalMessages {
				t.Errorf("%d messages delivered, %d sent", delivered, gm.Messages+gm.InternalMessages)
			}
		})
	}
}

// TestSimSampling runs D-Gibbs, whose answer is not unique, and checks
// only that it is a real one: feasible on an instance without hard
// entries, with the protocol's messages counted.
func TestSimSampling(t *testing.T) {
	path := genInstance(t, "randgraph", "agents=8", "p1=0.4", "p2=1", "--seed", "4")
	got := simJSON(t, path, "--global", "dgibbs", "-p", "iterations=5")
	if !got.Feasible || got.Objective == nil || got.Optimal || got.Metrics.Messages == 0 || len(got.Agents) != 8 {
		t.Errorf("result %+v", got.Result)
	}
}

func TestSimUsage(t *testing.T) {
	path := genInstance(t, "random", "agents=2", "vars=2", "domain=2")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no file", []string{"sim"}, exitUsage, "exactly one"},
		{"global none", []string{"sim", path, "--global", "none"}, exitUsage, "--global none"},
		{"ca without TLS", []string{"sim", path, "--ca", "ca.pem"}, exitUsage, "TLS broker URL"},
		{"missing CA", []string{"sim", path, "--broker", "ssl://127.0.0.1:1", "--ca", "/nonexistent.pem"}, exitUsage, "nonexistent"},
		{"bad prefix", []string{"sim", path, "--prefix", "a/#"}, exitUsage, "--prefix"},
		{"bad run id", []string{"sim", path, "--run-id", "a/b"}, exitUsage, "--run-id"},
		{"unknown table", []string{"sim", path, "--table", "x"}, exitUsage, "--table"},
		{"unreachable broker", []string{"sim", path, "--broker", "tcp://127.0.0.1:1", "--timeout", "300ms"}, exitFailed, "deadline"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb syncBuffer
			if code := run(context.Background(), tc.args, &out, &errb); code != tc.code {
				t.Errorf("exit %d, want %d: %s", code, tc.code, errb.String())
			}
			if !strings.Contains(errb.String(), tc.stderr) {
				t.Errorf("stderr lacks %q: %s", tc.stderr, errb.String())
			}
		})
	}
}

// TestSimProgress: --progress prints the progress line where stderr is
// not a terminal, ending with the final count; without it nothing.
func TestSimProgress(t *testing.T) {
	path := genInstance(t, "random", "agents=3", "vars=3", "domain=3")
	for _, force := range []bool{true, false} {
		var out, errb syncBuffer
		args := []string{"sim", path}
		if force {
			args = append(args, "--progress")
		}
		if code := run(context.Background(), args, &out, &errb); code != exitOK {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		line := "agents 3: 3 started, 3 done"
		if got := strings.Contains(errb.String(), line); got != force {
			t.Errorf("--progress %v: stderr %q", force, errb.String())
		}
		if !strings.Contains(out.String(), "mqtt        tcp://127.0.0.1:") {
			t.Errorf("summary lacks the broker:\n%s", out.String())
		}
	}
}

// TestSimLoad200 is the load figure: a D-Gibbs neighbourhood of
// 200 agents, each with its own MQTT client, over the embedded broker, on
// whatever this machine is. It logs messages per second and the round's
// latency (README.md reports them). The race detector and -short scale
// it down to 40 agents.
func TestSimLoad200(t *testing.T) {
	n := 200
	if testing.Short() || raceEnabled {
		n = 40
	}
	// About six neighbours each, as in the GPU-DBE random graphs; p2=1
	// keeps every entry feasible, since D-Gibbs does not prove anything.
	p1 := strconv.FormatFloat(6/float64(n-1), 'f', 4, 64)
	path := genInstance(t, "randgraph", "agents="+strconv.Itoa(n), "p1="+p1, "p2=1", "--seed", "1")
	start := time.Now()
	got := simJSON(t, path, "--global", "dgibbs", "-p", "iterations=10", "--timeout", "9m")
	wall := time.Since(start)
	if !got.Feasible || len(got.Agents) != n {
		t.Fatalf("result %+v with %d agents", got.Result, len(got.Agents))
	}
	var envelopes, statuses, retrans int64
	var slowest float64
	for _, s := range got.Agents {
		envelopes += s.Envelopes
		statuses += s.Statuses
		retrans += s.Retransmitted
		slowest = max(slowest, s.WallMs)
	}
	m := got.Metrics
	t.Logf("%d agents, D-Gibbs 10 iterations: %d messages in %.1f s (%.0f messages/s), round latency %.1f s (slowest agent %.1f s), %d statuses, %d retransmitted, command %.1f s",
		n, m.Messages, m.WallMs/1000, float64(m.Messages)/(m.WallMs/1000), m.WallMs/1000, slowest/1000, statuses, retrans, wall.Seconds())
}
