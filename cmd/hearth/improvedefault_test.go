package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/devices/report"
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
