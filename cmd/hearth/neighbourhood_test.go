package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
)

// TestSolveNeighbourhood: `hearth solve` takes the neighbourhood `hearth
// sim` takes. Centrally (the default) and with DPOP on the simulated
// runtime it proves the optimum that DPOP over MQTT finds (the example's
// 63.927), and it prints the homes' report.
//
// The street keeps the catalogue's fixed power levels (power_steps =
// "fixed", a fraction of the automatic levels' time) and sim runs no
// improvement phase (--improve -1): the comparison is of the protocol's
// optimum on the committed levels, which `hearth solve` computes.
func TestSolveNeighbourhood(t *testing.T) {
	exampleTOML := copyExample(t, "")
	exampleTOML = filepath.Join(exampleTOML, "neighbourhood.toml")
	want := simHomes(t, exampleTOML)
	for _, global := range []string{"", "dpop"} {
		args := []string{"solve", exampleTOML, "--json"}
		if global != "" {
			args = append(args, "--global", global)
		}
		h := homesJSON(t, args...)
		wantGlobal := global
		if global == "" {
			wantGlobal = "none"
		}
		if h.Objective == nil || math.Abs(*h.Objective-*want.Objective) > 1e-9 || !h.Optimal || h.Status != mva.StatusOptimal || h.Algorithm.Global != wantGlobal {
			t.Errorf("%v: objective %v optimal %v status %q global %s; sim %v", args, h.Objective, h.Optimal, h.Status, h.Algorithm.Global, *want.Objective)
		}
		if len(h.Schedules) != len(exampleHomes) {
			t.Errorf("%v: %d schedules for %d homes", args, len(h.Schedules), len(exampleHomes))
		}
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"solve", exampleTOML}, &out, &errb); code != exitOK || !strings.Contains(out.String(), "solver  none/be (optimal)") {
		t.Errorf("text: exit %d\n%s%s", code, out.String(), errb.String())
	}
}

// TestInspectNeighbourhood: `hearth inspect` shows a neighbourhood's
// per-home decomposition, one agent per home.
func TestInspectNeighbourhood(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"inspect", exampleTOML, "--json"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep mva.Inspection
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Agents) != len(exampleHomes) {
		t.Fatalf("%d agents for %d homes", len(rep.Agents), len(exampleHomes))
	}
	for i, a := range rep.Agents {
		if a.Agent != exampleHomes[i] || a.Boundary == 0 || a.Interior == 0 {
			t.Errorf("agent %d: %+v", i, a)
		}
	}
}

// TestNeighbourhoodUsage: the commands that take a neighbourhood say the
// same about it, and `hearth sim --global none` names the solve that does
// what it cannot.
func TestNeighbourhoodUsage(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"sim", exampleTOML, "--global", "none"}, exitUsage, "`hearth solve " + exampleTOML + "` does that"},
		{[]string{"sim", "--shds", "x.json", "--global", "none"}, exitUsage, "no such file"},
		{[]string{"solve", "--shds", "missing.json"}, exitUsage, "missing.json"},
		{[]string{"inspect", "--shds", "missing.json"}, exitUsage, "missing.json"},
		{[]string{"solve"}, exitUsage, "want exactly one instance FILE (an instance, a neighbourhood .toml, or --shds FILE.json)"},
		{[]string{"inspect"}, exitUsage, "want exactly one instance FILE (an instance, a neighbourhood .toml, or --shds FILE.json)"},
		{[]string{"solve", exampleTOML, "--global", "nope"}, exitUsage, "unknown --global"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		if code := run(context.Background(), tc.args, &out, &errb); code != tc.code || !strings.Contains(errb.String(), tc.stderr) {
			t.Errorf("%v: exit %d, want %d; stderr lacks %q:\n%s", tc.args, code, tc.code, tc.stderr, errb.String())
		}
	}
}
