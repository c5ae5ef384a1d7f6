package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/internal/shdscheck"
)

// checkedSHDSDirs are where TestSHDSChecked looks for the Des Moines
// instances: the shared data beside the repository, else the copy of
// dm_7_1_2 the checker's tests carry.
var checkedSHDSDirs = []string{
	filepath.Join("..", "..", "..", "shared", "data", "shds"),
	sharedSHDS,
	filepath.Join("..", "..", "internal", "shdscheck", "testdata"),
}

func checkedSHDS(t *testing.T, name string) (inst, dict string) {
	t.Helper()
	for _, d := range checkedSHDSDirs {
		p := filepath.Join(d, name+".json")
		if _, err := os.Stat(p); err == nil {
			return p, filepath.Join(d, "DeviceDictionary.json")
		}
	}
	t.Skipf("no %s in %v", name, checkedSHDSDirs)
	return "", ""
}

// TestSHDSChecked runs `hearth sim --shds FILE --json` on the 7-home Des
// Moines instances and has the independent checker of internal/shdscheck
// recompute the plan and both baselines from the instance: every rule
// counted as kept must hold on the replayed trajectories, and the
// reported per-slot load, peak (to 1e-6 kW), bill (relative 1e-6, at the
// file's prices), objective (relative 1e-9, under the definition the
// report names) and objective on the load that flows must equal the
// recomputed ones. It logs the objective on the load that
// actually flows, Σ_t L_t² + bill at the file's prices, of hearth and of
// the SH-MGM-style baseline. Last, a plan broken in one slot must fail
// the check. Under -race only dm_7_1_2 and dm_7_1_6 run unless
// HEARTH_SHDS_LONG=1.
func TestSHDSChecked(t *testing.T) {
	names := []string{"dm_7_1_2", "dm_7_1_3", "dm_7_1_4", "dm_7_1_5", "dm_7_1_6"}
	if raceEnabled && os.Getenv("HEARTH_SHDS_LONG") == "" {
		// Under the race detector the three others take minutes on 2
		// cores; HEARTH_SHDS_LONG=1 runs them.
		names = []string{"dm_7_1_2", "dm_7_1_6"}
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			instPath, dictPath := checkedSHDS(t, name)
			inst, err := shdscheck.ReadInstance(instPath)
			if err != nil {
				t.Fatal(err)
			}
			dict, err := shdscheck.ReadDictionary(dictPath)
			if err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			if code := run(context.Background(), []string{"sim", "--shds", instPath, "--json"}, &out, &errb); code != exitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			o, err := shdscheck.DecodeOutput(out.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			plans := []struct {
				name string
				p    *shdscheck.Plan
			}{{"hearth", o.Coordinated()}, {"uncoordinated", o.Baselines.Uncoordinated}, {"shmgm", o.Baselines.SHMGM}}
			real := map[string]*shdscheck.Report{}
			for _, pl := range plans {
				if pl.p == nil || len(pl.p.Schedules) == 0 {
					t.Fatalf("%s: no schedules in the output", pl.name)
				}
				r, err := shdscheck.Check(inst, dict, pl.p)
				if err != nil {
					t.Fatal(err)
				}
				if err := r.Err(); err != nil {
					t.Errorf("%s: %v", pl.name, err)
				}
				if r.Rules == 0 || r.Held != r.Rules || r.Claimed != r.Rules || len(r.DroppedHomes) > 0 {
					t.Errorf("%s: %d of %d rules hold, %d counted kept, homes dropped %v", pl.name, r.Held, r.Rules, r.Claimed, r.DroppedHomes)
				}
				if pl.p.Objective == nil || r.Matched == "" {
					t.Errorf("%s: reported objective %v not recomputed", pl.name, pl.p.Objective)
				}
				if pl.name == "hearth" && r.Values == 0 {
					t.Errorf("hearth: no property values compared")
				}
				for _, f := range r.Findings {
					t.Errorf("%s: %s", pl.name, f)
				}
				if pl.p.FlowObjective == nil {
					t.Errorf("%s: no objective on the load that flows", pl.name)
				}
				real[pl.name] = r
			}
			h, b := real["hearth"], real["shmgm"]
			t.Logf("objective on the real load (0.01 kWh² + $0.001): hearth %.0f, SH-MGM-style %.0f (converged %v), ratio %.3f; peaks %.1f and %.1f kW; reported objective is %q",
				h.RealObjective, b.RealObjective, o.Baselines.SHMGM.Converged, h.RealObjective/b.RealObjective, h.Peak, b.Peak, h.Matched)
			// Issue 22: at most the baseline's on the real load, as the
			// checker recomputes both (the improvement phase restarts
			// from the baseline's plan, among others).
			if h.RealObjective > b.RealObjective*(1+1e-12) {
				t.Errorf("hearth's objective on the real load %.1f is above the SH-MGM-style baseline's %.1f", h.RealObjective, b.RealObjective)
			}

			// Mutation: the first device that runs in some slot idles there
			// instead; the checker must object (a rule or the load).
			var raw map[string]any
			if err := json.Unmarshal(out.Bytes(), &raw); err != nil {
				t.Fatal(err)
			}
			// The improvement phase's descent ran between the homes over
			// MQTT (the plan checked above is its outcome, improved on).
			if notes := fmt.Sprint(raw["notes"]); !strings.Contains(notes, "descent on the load that flows between the homes") {
				t.Errorf("no descent between the homes in the notes: %s", notes)
			}
			if !idleOneSlot(raw) {
				t.Fatal("no running device to mutate")
			}
			mb, _ := json.Marshal(raw)
			mo, err := shdscheck.DecodeOutput(mb)
			if err != nil {
				t.Fatal(err)
			}
			r, err := shdscheck.Check(inst, dict, mo.Coordinated())
			if err != nil {
				t.Fatal(err)
			}
			if r.Err() == nil {
				t.Errorf("a device idled in one slot passed the check")
			}
		})
	}
}

// idleOneSlot sets the first non-"off" action of the coordinated plan to
// "off", leaving every reported figure as it was.
func idleOneSlot(raw map[string]any) bool {
	scheds, _ := raw["schedules"].([]any)
	for _, s := range scheds {
		devs, _ := s.(map[string]any)["devices"].([]any)
		for _, d := range devs {
			acts, _ := d.(map[string]any)["actions"].([]any)
			for i, a := range acts {
				if a != "off" {
					acts[i] = "off"
					return true
				}
			}
		}
	}
	return false
}

// TestSHDSSolveChecked: `hearth solve --shds FILE --global mgm` runs the
// improvement phase `hearth sim` runs (escapes and restarts, on the load
// that flows), and the independent checker of internal/shdscheck, which
// recomputes the plans and both baselines from the instance, finds every
// rule held, the reported figures right and hearth's objective on the
// real load at most the SH-MGM-style baseline's.
func TestSHDSSolveChecked(t *testing.T) {
	instPath, dictPath := checkedSHDS(t, "dm_7_1_2")
	inst, err := shdscheck.ReadInstance(instPath)
	if err != nil {
		t.Fatal(err)
	}
	dict, err := shdscheck.ReadDictionary(dictPath)
	if err != nil {
		t.Fatal(err)
	}
	// Without --global an SHDS street is solved by sim's protocol (its
	// central problem is too wide): the same run as --global mgm.
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"solve", "--shds", instPath, "--json"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var alg struct {
		Algorithm struct{ Global string } `json:"algorithm"`
	}
	if err := json.Unmarshal(out.Bytes(), &alg); err != nil || alg.Algorithm.Global != "mgm" {
		t.Errorf("solve --shds without --global ran %q (%v), want sim's mgm", alg.Algorithm.Global, err)
	}
	o, err := shdscheck.DecodeOutput(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	real := map[string]*shdscheck.Report{}
	for name, p := range map[string]*shdscheck.Plan{"hearth": o.Coordinated(), "shmgm": o.Baselines.SHMGM} {
		if p == nil || len(p.Schedules) == 0 {
			t.Fatalf("%s: no schedules in the output", name)
		}
		r, err := shdscheck.Check(inst, dict, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Err(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if r.Rules == 0 || r.Held != r.Rules || r.Claimed != r.Rules {
			t.Errorf("%s: %d of %d rules hold, %d counted kept", name, r.Held, r.Rules, r.Claimed)
		}
		for _, f := range r.Findings {
			t.Errorf("%s: %s", name, f)
		}
		real[name] = r
	}
	h, b := real["hearth"], real["shmgm"]
	t.Logf("objective on the real load: hearth %.0f, SH-MGM-style %.0f", h.RealObjective, b.RealObjective)
	if h.RealObjective > b.RealObjective*(1+1e-12) {
		t.Errorf("hearth solve's objective on the real load %.1f is above the SH-MGM-style baseline's %.1f", h.RealObjective, b.RealObjective)
	}
	var raw struct{ Notes []string }
	if err := json.Unmarshal(out.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(raw.Notes, "\n"); !strings.Contains(notes, "improved on the load that flows after mgm") {
		t.Errorf("no improvement phase in the notes:\n%s", notes)
	}
}
