package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/internal/solve"
	"github.com/hearth-dcop/hearth/mqtt"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// TestRunHomeDescent runs every home of dm_7_1_2 with `hearth run --once`
// in this process over the embedded broker: after MGM the homes run the
// improvement phase's descent between them (per-slot loads over MQTT),
// and each home's plan must be the one the in-process path gives — MGM on
// the simulated runtime, then baseline.Descend on it (itself Improve's
// descent, devices/baseline.TestDescendMatchesImprove).
func TestRunHomeDescent(t *testing.T) {
	path := filepath.Join("..", "..", "devices", "shds", "testdata", "dm_7_1_2.json")
	ctx := testCtx(t, 120*time.Second)
	r, err := homesolve.Load(path, true, homesolve.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	res, assign, err := solve.Homes(ctx, r, solve.HomeOptions(r, solve.Defaults()), nil)
	if err != nil || !res.Feasible {
		t.Fatalf("in process: %v (feasible %v)", err, res.Feasible)
	}
	_, want, err := r.Descend(ctx, assign, res, &sim.Runtime{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(want.Notes, "\n"), "descent on the load that flows") {
		t.Fatalf("no descent in process: %v", want.Notes)
	}
	homes := mqtt.AgentNames(r.Problem())
	b := startEmbedded(t)
	args := append([]string{"run", "--insecure", "--shds", path, "--broker", b.URL(), "--run-id", "descent"}, fastFlags...)
	differ := 0
	for i, rep := range runHomesOnce(t, ctx, args, homes) {
		if !rep.Feasible {
			t.Errorf("home %s: not feasible", homes[i])
		}
		for k, v := range rep.Assignment {
			if want.Assignment[k] != v {
				t.Errorf("home %s: %s = %s, in process %s", homes[i], k, v, want.Assignment[k])
			}
			if res.Assignment[k] != v {
				differ++
			}
		}
		// The protocol's agent's counters, then the descent's.
		if len(rep.Stats) != 2 || rep.Stats[1].Sent == 0 {
			t.Errorf("home %s: counters %+v, want the protocol's and the descent's", homes[i], rep.Stats)
		}
	}
	if differ == 0 {
		t.Error("the descent changed no value: the test shows nothing")
	}
}
