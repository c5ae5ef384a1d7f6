package solve

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/hearth-dcop/hearth/internal/solvefile"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/devices/homesolve/homesolvetest"
	"github.com/hearth-dcop/hearth/mva/protocol/mgm"

	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/mva"
)

var exampleTOML = filepath.Join("..", "..", "examples", "neighbourhood", "neighbourhood.toml")

// sharedSHDS is the data set folder of the project checkout; tests that
// need files beyond the importer's testdata skip without it.
const sharedSHDS = "/work/shared/data/shds"

func solveRun(t *testing.T, r *homesolve.Run) (mva.Result, []int) {
	t.Helper()
	res, assign, err := Homes(context.Background(), r, HomeOptions(r, Defaults()), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res, assign
}

func TestHomesExample(t *testing.T) {
	r, err := homesolve.Load(exampleTOML, false, homesolve.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if o := HomeOptions(r, Defaults()); o.Global != "dpop" || o.Local.Name != "be" || o.Seed != 1 {
		t.Errorf("the example's [solver] gives %s/%s seed %d", o.Global, o.Local.Name, o.Seed)
	}
	res, assign := solveRun(t, r)
	if !res.Optimal {
		t.Error("DPOP with bucket elimination did not prove optimality")
	}
	h := homesolvetest.CheckSchedule(t, r, res, assign, true)
	if h.PeakKW >= *h.BaselinePeakKW {
		t.Errorf("coordination does not lower the example's peak: %v vs %v kW", h.PeakKW, *h.BaselinePeakKW)
	}

	dir := t.TempDir()
	var out bytes.Buffer
	if err := r.Render(&out, assign, res, "json", dir); err != nil {
		t.Fatal(err)
	}
	var got report.Homes
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if got.EnergyCost != h.EnergyCost || got.PeakKW != h.PeakKW || len(got.Charts) != 2 || got.Objective == nil || h.Objective == nil || *got.Objective != *h.Objective {
		t.Errorf("JSON: cost %v peak %v charts %v objective %v, the report's %v", got.EnergyCost, got.PeakKW, got.Charts, got.Objective, h.Objective)
	}
	fh, err := os.Open(got.Charts[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(fh); err != nil {
		t.Error(err)
	}
	fh.Close()

	out.Reset()
	if err := r.Render(&out, nil, res, "csv", dir); err != nil {
		t.Fatal(err)
	}
	files := strings.Fields(out.String())
	if len(files) != 5 {
		t.Fatalf("csv printed %v", files)
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}

	out.Reset()
	if err := r.Render(&out, assign, res, "text", dir); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"dpop/be (optimal)", "uncoordinated", "alder", got.Charts[0]} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("summary lacks %q:\n%s", s, out.String())
		}
	}
	if err := r.Render(&out, assign, res, "yaml", ""); err == nil {
		t.Error("unknown format accepted")
	}
}

// TestHomesInfeasibleByTheFeeder: every home's hard rules can be kept
// alone, but not within the hard feeder limit together, which only the
// solver finds: the result is infeasible and the summary says so. (Soft,
// the default, the goals would be missed instead.)
func TestHomesInfeasibleByTheFeeder(t *testing.T) {
	dir := t.TempDir()
	toml := `name = "tight"
[horizon]
slots = 2
[coordination]
windows = [["00:00", "02:00"]]
levels = 2
[feeder]
limit_kw = 8
hard = true
[[home]]
name = "a"
[[home.device]]
name = "ev"
kind = "ev_wallbox_11kw"
initial = { charge = 20.0 }
rules = [{ rule = "charge geq 30 before 02:00", hard = true }]
[[home]]
name = "b"
[[home.device]]
name = "ev"
kind = "ev_wallbox_11kw"
initial = { charge = 20.0 }
rules = [{ rule = "charge geq 30 before 02:00", hard = true }]
`
	path := filepath.Join(dir, "tight.toml")
	if err := os.WriteFile(path, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := homesolve.Load(path, false, homesolve.Overrides{})
	if err != nil {
		t.Fatalf("%v", err)
	}
	res, assign := solveRun(t, r)
	if res.Feasible || assign != nil {
		t.Fatalf("feasible: %v", res.Assignment)
	}
	var out bytes.Buffer
	if err := r.Render(&out, nil, res, "text", ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "infeasible") {
		t.Errorf("summary:\n%s", out.String())
	}
}

func shdsPath(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join("..", "..", "devices", "shds", "testdata", name+".json")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	p = filepath.Join(sharedSHDS, name+".json")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no %s", name)
	}
	return p
}

// TestHomesSHDS runs published instances with the SHDS defaults (MGM with
// joint moves, or D-Gibbs on the command line; bucket elimination for the MVA rows, or --local auto over 3
// levels where homes are too wide for it, with D-Gibbs then starting
// from the uncoordinated schedules); HEARTH_SHDS_LONG=1 adds dm_7_1_3 to
// dm_7_1_5 and dm_35_1_6 (seconds each, a minute under -race).
func TestHomesSHDS(t *testing.T) {
	tests := []struct {
		name string
		opts homesolve.Overrides
		// global is the protocol chosen: MGM unless the command line
		// names another.
		global string
		// blocks: some homes are too wide for a best response by
		// bucket elimination (dm_7_1_3, dm_7_1_6, dm_35_1_6), and answer
		// by exact search within response_checks (block descent past
		// it, response = 3) from their own schedules.
		blocks bool
		long   bool
		// restart: D-Gibbs (on the command line) from its first rows
		// finds nothing feasible and runs again from the uncoordinated
		// schedules (Restart), where it trades 2 kW of peak for a lower
		// bill on dm_35_1_6 (the objective is lower; most of its sampled
		// rows are infeasible, so it hardly moves): the peak is not
		// checked.
		restart bool
	}{
		{name: "dm_7_1_2", global: "mgm"},
		{name: "dm_7_1_3", global: "mgm", blocks: true},
		{name: "dm_7_1_4", global: "mgm", long: true},
		{name: "dm_7_1_6", global: "mgm", blocks: true},
		{name: "dm_35_1_6", global: "mgm", blocks: true, long: true},
		{name: "dm_35_1_6", opts: homesolve.Overrides{Global: "dgibbs"}, global: "dgibbs", long: true, restart: true},
	}
	for _, tc := range tests {
		if tc.long && os.Getenv("HEARTH_SHDS_LONG") == "" {
			continue
		}
		t.Run(tc.name+"/"+tc.global, func(t *testing.T) {
			r, err := homesolve.Load(shdsPath(t, tc.name), true, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			o := HomeOptions(r, Defaults())
			if o.Global != tc.global || o.Local.Name != "be" && o.Local.Name != solvefile.LocalAuto || o.Table != "lazy" {
				t.Errorf("SHDS defaults: %s/%s %s, want %s", o.Global, o.Local.Name, o.Table, tc.global)
			}
			blocks := o.Params["response"] == mgm.ResponseBlocks
			if blocks != tc.blocks {
				t.Errorf("block-descent responses %v, want %v (params %v)", blocks, tc.blocks, o.Params)
			}
			if exact := o.Params["response_checks"] == homesolve.ExactResponseChecks; tc.global == "mgm" && exact != tc.blocks {
				t.Errorf("exact responses within %v checks: %v, want %v", o.Params["response_checks"], exact, tc.blocks)
			}
			if started := o.Params["init"] == mgm.InitStart && o.Start != nil; started != tc.blocks {
				t.Errorf("started from the homes' own schedules: %v, want %v (init %v)", started, tc.blocks, o.Params["init"])
			}
			if homes := len(r.Problem().Agents); tc.global == "mgm" && o.Params["rounds"] != float64(2*homes) {
				t.Errorf("MGM rounds %v, want two per home (%d)", o.Params["rounds"], 2*homes)
			}
			if tc.global == "mgm" && (o.Params["joint"] != 1 || o.Params["quiet"] != 1) {
				t.Errorf("MGM without joint moves or the quiet stop on a complete graph: %v", o.Params)
			}
			if chose := slices.ContainsFunc(r.Notes(), func(n string) bool { return strings.HasPrefix(n, "MGM with joint moves") }); chose != (tc.opts.Global == "") {
				t.Errorf("note of the protocol choice: %v, want %v: %v", chose, tc.opts.Global == "", r.Notes())
			}
			res, assign := solveRun(t, r)
			h := homesolvetest.CheckSchedule(t, r, res, assign, !tc.restart)
			restarted := slices.ContainsFunc(h.Notes, func(n string) bool { return strings.Contains(n, "restarted") })
			if restarted != tc.restart {
				t.Errorf("restarted %v, want %v: %v", restarted, tc.restart, h.Notes)
			}
			u := h.Baselines.Uncoordinated.Objective
			if (restarted || tc.blocks) && (u == nil || *res.Objective > *u+1e-6) {
				t.Errorf("started from the uncoordinated schedules (objective %v), ended at %v", u, *res.Objective)
			}
			if h.SHMGMPeakKW == nil || h.Baselines.SHMGM.RulesSatisfied != h.RulesTotal {
				t.Fatalf("SH-MGM baseline missing or breaking rules: %v", h.Notes)
			}
			// MGM is the SH-MGM protocol over committed levels, with
			// joint moves: its peak must land near the baseline's
			// (measured: 23.5 against 21.0 kW on dm_7_1_2; 21.4 against
			// 15.8 on dm_7_1_4, where joint moves reach another fixed
			// point than one home at a time, and the converged baseline
			// now sits lower than the 17.5 it had when this limit was
			// 1.35). The wide homes are further (30.3 against 22.5 kW on
			// dm_7_1_3, 21.6 against 16.9 on dm_7_1_6, 168.7 against
			// 124.8 on dm_35_1_6, measured with block descent), yet a
			// third of the uncoordinated peak.
			limit := 1.4
			if tc.blocks {
				limit = 1.5
			}
			if tc.global == "mgm" && h.PeakKW > limit**h.SHMGMPeakKW {
				t.Errorf("MGM peak %.1f kW, more than %.0f%% above SH-MGM-style's %.1f", h.PeakKW, 100*(limit-1), *h.SHMGMPeakKW)
			}
			// On the objective both minimise (bill plus the squared
			// committed load), MGM beats the baseline: 0.57–1.00× of it
			// on the 7- to 71-home instances.
			if o := h.Baselines.SHMGM.Objective; tc.global == "mgm" && (o == nil || *res.Objective > *o) {
				t.Errorf("MGM objective %v above SH-MGM-style's %v", *res.Objective, o)
			}
		})
	}
	// A protocol on the command line wins over the SHDS choice.
	r, err := homesolve.Load(shdsPath(t, "dm_7_1_2"), true, homesolve.Overrides{Global: "dgibbs"})
	if err != nil {
		t.Fatal(err)
	}
	if o := HomeOptions(r, Defaults()); o.Global != "dgibbs" || o.Params["rounds"] != 0 {
		t.Errorf("--global dgibbs gave %s with rounds %v", o.Global, o.Params["rounds"])
	}
}

// TestHomePublications: one home's publications from its own variables
// alone are the neighbourhood's publications for that home.
func TestHomePublications(t *testing.T) {
	r, err := homesolve.Load(exampleTOML, false, homesolve.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	_, assign := solveRun(t, r)
	all, err := r.Publications(assign, report.PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := r.Problem()
	for home := range p.Agents {
		mine := make([]int, len(assign))
		for v := range p.Variables {
			if p.Variables[v].Agent == home {
				mine[v] = assign[v]
			}
		}
		got, err := r.HomePublications(mine, home, report.PublishOptions{})
		if err != nil {
			t.Fatal(err)
		}
		prefix := "hearth/home/" + p.Agents[home].Name + "/"
		var want []report.Publication
		for _, q := range all {
			if strings.HasPrefix(q.Topic, prefix) {
				want = append(want, q)
			}
		}
		if !slices.EqualFunc(got, want, func(a, b report.Publication) bool {
			return a.Topic == b.Topic && bytes.Equal(a.Payload, b.Payload) && a.Retained == b.Retained
		}) {
			t.Errorf("home %d: %d publications, the neighbourhood has %d", home, len(got), len(want))
		}
	}
	if _, err := r.HomePublications(assign, 99, report.PublishOptions{}); err == nil {
		t.Error("home out of range accepted")
	}
}
