package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/mva"
)

// flowOf recomputes the objective on the load that flows from a
// result's street load and bill (testdata/descent.toml weighs the bill 1
// and the squared load of its hourly slots 0.05 per kW²), apart from
// the code that reports it.
func flowOf(load []float64, bill float64) float64 {
	sq := 0.0
	for _, l := range load {
		sq += l * l
	}
	return bill + 0.05*sq
}

// TestTOMLImproveDefault: on a TOML street, `hearth sim` runs the
// improvement phase's descent without escapes by default — between the
// homes over MQTT, then from the SH-MGM-style baseline's plan in process
// — and the plan it reports is at most the baseline's on the load that
// flows, where DPOP's own plan (--improve -1, or [solver] improve = -1
// in the file) is far above it. Every rule holds in each.
func TestTOMLImproveDefault(t *testing.T) {
	const file = "testdata/descent.toml"
	noPhase := filepath.Join(t.TempDir(), "descent.toml")
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(noPhase, []byte(strings.Replace(string(src), "seed = 1", "seed = 1\nimprove = -1", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(h report.Homes) (coord, shmgm float64) {
		t.Helper()
		b := h.Baselines.SHMGM
		if b == nil || !b.Feasible {
			t.Fatalf("no feasible SH-MGM-style baseline: %+v", h.Baselines)
		}
		if h.RulesSatisfied != h.RulesTotal || b.RulesSatisfied != h.RulesTotal {
			t.Errorf("rules kept: %d and the baseline's %d of %d", h.RulesSatisfied, b.RulesSatisfied, h.RulesTotal)
		}
		return flowOf(h.LoadKW, h.EnergyCost), flowOf(b.LoadKW, b.EnergyCost)
	}
	h := homesJSON(t, "sim", file, "--json")
	coord, shmgm := check(h)
	if coord > shmgm+1e-9 {
		t.Errorf("default: the plan's objective on the load that flows %.4f, above the baseline's %.4f", coord, shmgm)
	}
	notes := strings.Join(h.Notes, "\n")
	for _, want := range []string{"descent on the load that flows between the homes", "restarted, in process, from the SH-MGM-style baseline's plan", "0 escapes"} {
		if !strings.Contains(notes, want) {
			t.Errorf("default: no note %q in\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "the homes' own schedules (objective") {
		t.Errorf("default: the descent restarted from the homes' own schedules too:\n%s", notes)
	}
	for _, args := range [][]string{{"sim", file, "--json", "--improve", "-1"}, {"sim", noPhase, "--json"}} {
		h := homesJSON(t, args...)
		dpop, shmgm := check(h)
		if dpop < shmgm*1.5 || strings.Contains(strings.Join(h.Notes, "\n"), "load that flows") {
			t.Errorf("%v: DPOP's plan %.4f on the load that flows against the baseline's %.4f (want it far above: the phase is what closes the gap), notes %v", args, dpop, shmgm, h.Notes)
		}
	}
}

// TestSolveImproveDefault: `hearth solve` of a TOML street runs the same
// improvement phase as `hearth sim` by default — the descent on the load
// that flows from the central optimum on committed levels, restarted from
// the SH-MGM-style baseline's plan — so the plan it reports is at most
// the baseline's on the load that flows (recomputed here from the
// printed load and bill, apart from the code that reports it), its
// reported objective on that load is the recomputed one, and sim and
// solve report the same baselines. Every rule holds (the report itself
// passes devices/homecheck). With --improve -1 solve prints the central
// optimum on committed levels, far above the baseline on that load.
func TestSolveImproveDefault(t *testing.T) {
	const file = "testdata/descent.toml"
	h := homesJSON(t, "solve", file, "--json")
	b := h.Baselines.SHMGM
	if b == nil || !b.Feasible || h.FlowObjective == nil || b.FlowObjective == nil {
		t.Fatalf("no feasible SH-MGM-style baseline or no objective on the load that flows: %+v", h.Baselines)
	}
	if h.RulesSatisfied != h.RulesTotal || b.RulesSatisfied != h.RulesTotal {
		t.Errorf("rules kept: %d and the baseline's %d of %d", h.RulesSatisfied, b.RulesSatisfied, h.RulesTotal)
	}
	coord, shmgm := flowOf(h.LoadKW, h.EnergyCost), flowOf(b.LoadKW, b.EnergyCost)
	if coord > shmgm+1e-9 {
		t.Errorf("solve: the plan's objective on the load that flows %.4f, above the baseline's %.4f", coord, shmgm)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"solve", *h.FlowObjective, coord}, {"baseline", *b.FlowObjective, shmgm}} {
		if math.Abs(c.got-c.want) > 1e-6*math.Max(1, c.want) {
			t.Errorf("%s: reported objective on the load that flows %.6f, recomputed %.6f", c.name, c.got, c.want)
		}
	}
	notes := strings.Join(h.Notes, "\n")
	for _, want := range []string{"improved on the load that flows after the central solve", "restarted, in process, from the SH-MGM-style baseline's plan"} {
		if !strings.Contains(notes, want) {
			t.Errorf("solve: no note %q in\n%s", want, notes)
		}
	}
	s := homesJSON(t, "sim", file, "--json")
	if sb := s.Baselines.SHMGM; sb == nil || sb.FlowObjective == nil || math.Abs(*sb.FlowObjective-*b.FlowObjective) > 1e-9*math.Max(1, *b.FlowObjective) {
		t.Errorf("sim and solve report different SH-MGM-style baselines: %+v and %+v", sb, b)
	}
	if s.FlowObjective == nil || math.Abs(*s.FlowObjective-*h.FlowObjective) > 1e-3*math.Max(1, *h.FlowObjective) {
		t.Errorf("sim's objective on the load that flows %v, solve's %.4f", s.FlowObjective, *h.FlowObjective)
	}
	plain := homesJSON(t, "solve", file, "--json", "--improve", "-1")
	if got := flowOf(plain.LoadKW, plain.EnergyCost); got < shmgm*1.5 || strings.Contains(strings.Join(plain.Notes, "\n"), "load that flows") {
		t.Errorf("--improve -1: the central plan's %.4f on the load that flows against the baseline's %.4f (want it far above), notes %v", got, shmgm, plain.Notes)
	}
}

// TestSolveStopped: a `hearth solve` of a street whose --timeout ends
// before the solver has a plan prints the homes' own schedules (improved
// on the load that flows as far as time allows), status feasible, every
// rule kept, and exits with the code of a stopped run, as `hearth sim`
// does; the report passed devices/homecheck on its way out.
func TestSolveStopped(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"solve", "testdata/descent.toml", "--json", "--timeout", "1ns"}, &out, &errb)
	if code != exitStopped {
		t.Fatalf("exit %d, want %d: %s", code, exitStopped, errb.String())
	}
	var h report.Homes
	if err := json.Unmarshal(out.Bytes(), &h); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if h.Status != mva.StatusFeasible || h.RulesSatisfied != h.RulesTotal || len(h.Schedules) != 3 {
		t.Errorf("status %q, rules %d of %d, %d schedules", h.Status, h.RulesSatisfied, h.RulesTotal, len(h.Schedules))
	}
	if notes := strings.Join(h.Notes, "\n"); !strings.Contains(notes, "stopped by --timeout 1ns during the solve") {
		t.Errorf("no stop in the notes:\n%s", notes)
	}
}
