package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestHearthSolveSameOutput: hearth-solve (cmd/hearth-solve, built here)
// prints what `hearth solve FILE` with --global none prints — text and
// JSON, the notes, the errors (with its own name for "hearth solve") and
// the exit code — on .wcsp, .uai and XCSP files, with the local
// solvers and options it shares, a file with a syntax error (the message
// names the file and line), a missing file and a solve stopped by
// --timeout. Only the measured times may differ. The two run the same
// code (internal/solvefile); this keeps them from drifting apart where
// their mains differ (flags, defaults, validation).
func TestHearthSolveSameOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/hearth-solve")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build cmd/hearth-solve")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "hearth-solve")
	build := exec.Command(gobin, "build", "-o", bin, "../hearth-solve")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ../hearth-solve: %v\n%s", err, out)
	}
	bad := filepath.Join(dir, "bad.wcsp")
	if err := os.WriteFile(bad, []byte("bad 3 2 1 10\n2 2 2\n1 0 5 x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	td := "../../testdata/"
	for _, tc := range []struct {
		name string
		args []string // after FILE; both commands get the same
		file string
		code int
		// namesFile: the error must name the file (a load or solve error).
		namesFile bool
	}{
		{"wcsp auto", nil, td + "fabe_test_0.wcsp", exitOK, false},
		{"wcsp home edac", []string{"--local", "edac"}, td + "shds_dm_7_1_5_home1.wcsp", exitOK, false},
		{"wcsp aobb memory", []string{"--local", "aobb", "--memory", "64"}, td + "fabe_test_1.wcsp", exitOK, false},
		{"uai auto", nil, td + "fabe_misc_simple2.uai", exitOK, false},
		{"uai be", []string{"--local", "be"}, td + "fabe_grid_50-12-5.uai", exitOK, false},
		{"xcsp agents", []string{"--agents", "3"}, td + "gpube_rep_0_x_10.xml", exitOK, false},
		{"gibbs seeded", []string{"--local", "gibbs", "--seed", "7", "--runs", "2", "--trials", "20"}, td + "gpube_4queens.wcsp", -1, false},
		{"vac", []string{"--local", "vac"}, td + "gen_fap32.wcsp", exitOK, false},
		{"syntax error", nil, bad, exitUsage, true},
		{"missing file", nil, filepath.Join(dir, "none.wcsp"), exitUsage, true},
		{"timeout", []string{"--local", "bruteforce", "--timeout", "1ns"}, td + "fabe_spot5_29.wcsp", exitFailed, true},
		{"bad --local", []string{"--local", "nope"}, td + "fabe_test_0.wcsp", exitUsage, false},
	} {
		for _, asJSON := range []bool{false, true} {
			name := tc.name
			args := append([]string{tc.file}, tc.args...)
			if asJSON {
				name += " json"
				args = append(args, "--json")
			}
			t.Run(name, func(t *testing.T) {
				var out, errb bytes.Buffer
				code := run(context.Background(), append([]string{"solve"}, args...), &out, &errb)
				cmd := exec.Command(bin, args...)
				var lout, lerr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &lout, &lerr
				lcode := 0
				if err := cmd.Run(); err != nil {
					var ee *exec.ExitError
					if !errors.As(err, &ee) {
						t.Fatal(err)
					}
					lcode = ee.ExitCode()
				}
				if code != lcode || (tc.code >= 0 && code != tc.code) {
					t.Errorf("exit: hearth solve %d, hearth-solve %d, want %d\nstderr: %s", code, lcode, tc.code, errb.String())
				}
				if tc.namesFile && !strings.Contains(errb.String(), tc.file) {
					t.Errorf("stderr %q does not name %s", errb.String(), tc.file)
				}
				if tc.name == "syntax error" && !strings.Contains(errb.String(), bad+":3:") {
					t.Errorf("stderr %q does not name line 3 of %s", errb.String(), bad)
				}
				want := strings.ReplaceAll(errb.String(), "hearth solve:", "hearth-solve:")
				// A usage error prints each command's own usage after it.
				if got := lerr.String(); firstLine(got) != firstLine(want) {
					t.Errorf("stderr:\nhearth solve: %q\nhearth-solve: %q", want, got)
				}
				if asJSON && out.Len() > 0 {
					a, b := untimedJSON(t, out.Bytes()), untimedJSON(t, lout.Bytes())
					if !reflect.DeepEqual(a, b) {
						t.Errorf("JSON differs:\nhearth solve: %s\nhearth-solve: %s", out.String(), lout.String())
					}
				} else if a, b := untimedText(out.String()), untimedText(lout.String()); a != b {
					t.Errorf("output differs:\nhearth solve:\n%s\nhearth-solve:\n%s", a, b)
				}
			})
		}
	}
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// untimedText is a text summary without its time line.
func untimedText(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if !strings.HasPrefix(line, "time ") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// untimedJSON decodes a result object and drops its measured times.
func untimedJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if mt, ok := m["metrics"].(map[string]any); ok {
		delete(mt, "wall_ms")
		delete(mt, "sim_time_ms")
	}
	return m
}
