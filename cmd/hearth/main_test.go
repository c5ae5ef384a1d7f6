package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/hearth-dcop/hearth/internal/solvefile"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/mva/protocol"

	"github.com/hearth-dcop/hearth/internal/fixtures"
	"github.com/hearth-dcop/hearth/internal/solve"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/format"
)

// writeFile writes content into a temporary file named name.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestExitCodes(t *testing.T) {
	good := "../../testdata/gpube_4queens.wcsp"
	// Two binary variables, both values of x0 forbidden by a unary hard
	// function: infeasible.
	infeasible := writeFile(t, "inf.wcsp", "inf 2 2 2 10\n2 2\n1 0 0 2\n0 10\n1 10\n2 0 1 0 0\n")
	malformed := writeFile(t, "bad.wcsp", "bad 2 2 1 10\n2 2\n2 0 7 0 0\n")
	// A home whose EV cannot reach 70 kWh in four hours: a well-formed
	// file whose hard rule no schedule keeps (exit 1, like an infeasible
	// solve); with a misspelt key as well it is a bad file first (exit 2).
	// As a soft goal (the default) it is missed, by as little as the
	// charger allows, and the plan stands (exit 0): with the catalogue's
	// fixed levels (power_steps = "fixed"), 4 × 6.6 kWh from 20, 23.6 short.
	home := "[horizon]\nslots = 4\n[[home]]\nname = \"a\"\n[[home.device]]\nname = \"ev\"\nkind = \"ev_wallbox_7kw\"\nrules = [{ rule = \"charge geq 70 before 04:00\", hard = true }]\npower_steps = \"fixed\"\n"
	infeasibleHome := writeFile(t, "inf.toml", home)
	softHome := writeFile(t, "soft.toml", strings.Replace(home, `{ rule = "charge geq 70 before 04:00", hard = true }`, `"charge geq 70 before 04:00"`, 1))
	badInfeasibleHome := writeFile(t, "badinf.toml", home+"[objectiv]\npeak = 1\n")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"no arguments", nil, exitUsage, "", "Usage"},
		{"help", []string{"help"}, exitOK, "Commands", ""},
		{"help solve", []string{"help", "solve"}, exitOK, "-local string", ""},
		{"unknown command", []string{"frobnicate"}, exitUsage, "", "unknown command"},
		{"solve without file", []string{"solve"}, exitUsage, "", "exactly one"},
		{"solve missing file", []string{"solve", "nope.wcsp"}, exitUsage, "", "nope.wcsp"},
		{"solve unknown format", []string{"solve", "x.txt"}, exitUsage, "", "unknown instance format"},
		{"solve malformed", []string{"solve", malformed}, exitUsage, "", "bad.wcsp:3:"},
		{"solve unknown global", []string{"solve", good, "--global", "nope"}, exitUsage, "", "--global"},
		{"solve unknown local", []string{"solve", good, "--local", "nope"}, exitUsage, "", "valid: dfbnb, be, aobb, edac, vac, bruteforce, gibbs, mh"},
		{"solve bad flag", []string{"solve", good, "--frob"}, exitUsage, "", "frob"},
		{"solve bad protocol parameter", []string{"solve", good, "--global", "mgm", "-p", "response=9"}, exitUsage, "", "parameter response = 9"},
		{"solve bad afb parameter", []string{"solve", good, "--global", "afb", "-p", "afb_order=7"}, exitUsage, "", "afb_order = 7"},
		{"solve infeasible", []string{"solve", infeasible}, exitInfeasible, "infeasible", ""},
		{"solve ok, flags after file", []string{"solve", good, "--local", "dfbnb"}, exitOK, "objective   0 (min, optimal)", ""},
		{"solve ok, flags before file", []string{"solve", "--local", "be", good}, exitOK, "objective   0 (min, optimal)", ""},
		{"too many agents", []string{"solve", good, "--agents", "9"}, exitUsage, "", "only 4 variables"},
		{"inspect", []string{"inspect", good, "--agents", "2"}, exitOK, "MVA rows", ""},
		{"sim infeasible rules", []string{"sim", infeasibleHome}, exitInfeasible, "", "inf.toml:8: home[0].device[0].rules[0]:"},
		{"sim missed soft goal", []string{"sim", softHome}, exitOK, `a: "charge geq 70 before 04:00" by 23.6 kWh`, ""},
		{"solve missed soft goal", []string{"solve", softHome}, exitOK, "MISSED: charge geq 70 before 04:00, by 23.6 kWh", ""},
		{"solve missed soft goal json", []string{"solve", softHome, "--json"}, exitOK, `"goals_missed": [
    {
      "home": "a",
      "rule": "charge geq 70 before 04:00",
      "missed": 23.6,
      "unit": "kWh"`, ""},
		{"sim bad file with infeasible rules", []string{"sim", badInfeasibleHome}, exitUsage, "", `did you mean "objective"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), tc.args, &out, &errb)
			if code != tc.code {
				t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), tc.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.stdout, out.String())
			}
			if !strings.Contains(errb.String(), tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, errb.String())
			}
		})
	}
}

// TestSolveJSONThesis31 solves the thesis example written as XCSP and
// checks every field of the result object.
func TestSolveJSONThesis31(t *testing.T) {
	path := filepath.Join(t.TempDir(), "thesis.xml")
	if err := format.WriteFile(path, fixtures.Thesis31()); err != nil {
		t.Fatal(err)
	}
	for _, solver := range solvefile.LocalNames {
		t.Run(solver, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(context.Background(), []string{"solve", path, "--local", solver, "--json"}, &out, &errb); code != exitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			var r mva.Result
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"x0": "1", "x1": "1", "x2": "0", "x3": "1", "x4": "0"}
			// Samplers find the optimum of this tiny problem but never
			// claim to have proved it, and report their parameters;
			// auto is exact on one row (bucket elimination or AOBB).
			sampling := solver == "gibbs" || solver == "mh"
			if r.Objective == nil || *r.Objective != 12 || !r.Feasible || r.Optimal == sampling || r.Sense != "min" {
				t.Errorf("result %+v", r)
			}
			if sampling != (r.Algorithm.Sampling != nil) {
				t.Errorf("sampling report %+v", r.Algorithm.Sampling)
			}
			for k, v := range want {
				if r.Assignment[k] != v {
					t.Errorf("assignment %v, want %v", r.Assignment, want)
					break
				}
			}
			if r.Algorithm.Global != "none" || r.Algorithm.Local != solver {
				t.Errorf("algorithm %+v", r.Algorithm)
			}
			if r.Metrics.NCCC <= 0 {
				t.Errorf("no constraint checks counted: %+v", r.Metrics)
			}
		})
	}
}

func TestInspectThesis31(t *testing.T) {
	path := filepath.Join(t.TempDir(), "thesis.xml")
	if err := format.WriteFile(path, fixtures.Thesis31()); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"inspect", path, "--json"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var r mva.Inspection
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	want := []mva.AgentInspection{
		{Agent: "a0", Local: 3, Boundary: 1, Interior: 2, LocalFns: 3, External: 1, Width: 2, MinDomain: 2, MaxDomain: 2, Rows: 2},
		{Agent: "a1", Local: 2, Boundary: 1, Interior: 1, LocalFns: 1, External: 1, Width: 1, MinDomain: 2, MaxDomain: 2, Rows: 2},
	}
	if len(r.Agents) != 2 || r.Agents[0] != want[0] || r.Agents[1] != want[1] || r.Width != 2 || r.External != 1 {
		t.Errorf("inspect = %+v\nwant agents %+v", r, want)
	}
}

// TestSolveDistributed runs every protocol through the command line on the
// thesis example in all three reformulations.
func TestSolveDistributed(t *testing.T) {
	path := "../../examples/thesis-3.1.xml"
	for _, g := range solve.GlobalNames()[1:] {
		for _, rf := range []string{"mva", "compilation", "decomposition"} {
			t.Run(g+"/"+rf, func(t *testing.T) {
				var out, errb bytes.Buffer
				args := []string{"solve", path, "--global", g, "--reform", rf, "--table", "eager", "--json", "--seed", "3"}
				if code := run(context.Background(), args, &out, &errb); code != exitOK {
					t.Fatalf("exit %d: %s", code, errb.String())
				}
				var r mva.Result
				if err := json.Unmarshal(out.Bytes(), &r); err != nil {
					t.Fatal(err)
				}
				proto, _ := protocol.Lookup(g)
				exact := proto.Exact
				if r.Objective == nil || (exact && (*r.Objective != 12 || !r.Optimal)) || (!exact && r.Optimal) {
					t.Errorf("result %+v", r)
				}
				if r.Algorithm.Global != g || r.Algorithm.Reform != rf || r.Algorithm.Table != "eager" {
					t.Errorf("algorithm %+v", r.Algorithm)
				}
				if r.Metrics.Messages == 0 {
					t.Errorf("no messages counted: %+v", r.Metrics)
				}
				if rf == "decomposition" && r.Metrics.InternalMessages == 0 {
					t.Errorf("decomposition counted no internal messages: %+v", r.Metrics)
				}
			})
		}
	}
}

func TestGenAndSolveExitCodes(t *testing.T) {
	dir := t.TempDir()
	gen := filepath.Join(dir, "r.xml")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"gen random", []string{"gen", "random", "agents=3", "vars=3", "domain=2", "--seed", "4", "-o", gen}, exitOK, "3 agents"},
		{"gen unknown kind", []string{"gen", "nope"}, exitUsage, "unknown kind"},
		{"gen bad parameter", []string{"gen", "random", "agents=x"}, exitUsage, "agents"},
		{"gen not name=value", []string{"gen", "random", "agents"}, exitUsage, "name=value"},
		{"bad -p", []string{"solve", "../../examples/thesis-3.1.xml", "--global", "dgibbs", "-p", "iterations"}, exitUsage, "name=value"},
		{"bad --table", []string{"solve", "../../examples/thesis-3.1.xml", "--table", "nope"}, exitUsage, "lazy, eager"},
		{"bad --reform", []string{"solve", "../../examples/thesis-3.1.xml", "--reform", "nope"}, exitUsage, "--reform"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(context.Background(), tc.args, &out, &errb); code != tc.code {
				t.Errorf("exit %d, want %d: %s", code, tc.code, errb.String())
			}
			if !strings.Contains(errb.String(), tc.stderr) {
				t.Errorf("stderr lacks %q: %s", tc.stderr, errb.String())
			}
		})
	}
	// The generated file solves to the same optimum centrally and with DPOP.
	var a, b, errb bytes.Buffer
	if code := run(context.Background(), []string{"solve", gen, "--json"}, &a, &errb); code != exitOK {
		t.Fatalf("solve: exit %d: %s", code, errb.String())
	}
	if code := run(context.Background(), []string{"solve", gen, "--global", "dpop", "--json"}, &b, &errb); code != exitOK {
		t.Fatalf("solve dpop: exit %d: %s", code, errb.String())
	}
	var ra, rb mva.Result
	if json.Unmarshal(a.Bytes(), &ra) != nil || json.Unmarshal(b.Bytes(), &rb) != nil || ra.Objective == nil || rb.Objective == nil || *ra.Objective != *rb.Objective {
		t.Errorf("central %s vs dpop %s", a.String(), b.String())
	}
}

// TestSolveDefaultAuto: `hearth solve` without --local runs auto, exact,
// and its notes say which solver ran: bucket elimination on a narrow file,
// AOBB on fabe_spot5_29 (width 14), with toulbar2's optimum 8059; an
// explicit --local is kept.
func TestSolveDefaultAuto(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		local string
		note  string
		want  float64
	}{
		{[]string{"../../testdata/gpube_rep_0_x_10.wcsp"}, "auto", "auto chose be", 124},
		{[]string{"../../testdata/fabe_spot5_29.wcsp"}, "auto", "auto chose aobb", 8059},
		{[]string{"../../testdata/gpube_rep_0_x_10.wcsp", "--local", "be"}, "be", "", 124},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"solve", "--json"}, tc.args...)
		if code := run(context.Background(), args, &out, &errb); code != exitOK {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errb.String())
		}
		var r mva.Result
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.Algorithm.Local != tc.local || !r.Optimal || r.Objective == nil || *r.Objective != tc.want || r.Algorithm.Sampling != nil {
			t.Errorf("%v: result %+v", tc.args, r)
		}
		if got := strings.Join(r.Notes, "; "); tc.note == "" && got != "" || !strings.Contains(got, tc.note) {
			t.Errorf("%v: notes %q, want %q", tc.args, got, tc.note)
		}
	}
}
