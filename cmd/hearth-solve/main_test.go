package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
)

// forbidden are the packages hearth-solve must not link: their inits
// (gonum/plot's fonts, mochi-mqtt's packet table, go-latex's symbol
// tables, yaml.v3's reflection) are what the binary exists to skip, and
// hearth's own homes, bench, daemon, MQTT and protocol code and pyDCOP's
// reader pull them in.
var forbidden = []string{
	"gonum.org/v1/plot",
	"github.com/mochi-mqtt",
	"latex",
	"yaml",
	"github.com/hearth-dcop/hearth/mva/format/pydcop",
	"github.com/hearth-dcop/hearth/devices",
	"github.com/hearth-dcop/hearth/internal/bench",
	"github.com/hearth-dcop/hearth/internal/daemon",
	"github.com/hearth-dcop/hearth/internal/solve",
	"github.com/hearth-dcop/hearth/mqtt",
	"github.com/hearth-dcop/hearth/mva/pipeline",
}

// TestLean: the packages the binary links (go list -deps) include none of
// forbidden, so that a new import in internal/solvefile or below cannot
// silently bring the start-up cost back.
func TestLean(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), out)
	}
	for _, d := range deps {
		for _, f := range forbidden {
			// internal/solvefile is allowed; internal/solve itself is not.
			if d == f || strings.HasPrefix(d, f+"/") || (!strings.HasPrefix(f, "github.com/hearth-dcop/") && strings.Contains(d, f)) {
				t.Errorf("hearth-solve links %s (forbidden: %s)", d, f)
			}
		}
	}
}

// TestRefused: what hearth-solve does not do is a usage error (exit 2)
// that names the flag or file and the `hearth` command to use instead;
// -h prints the usage on stdout.
func TestRefused(t *testing.T) {
	const file = "../../testdata/fabe_test_0.wcsp"
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string // text expected on stdout; "" expects it empty
		stderr string // text expected first on stderr; "" expects it empty
	}{
		{"help", []string{"-h"}, 0, "Usage: hearth-solve FILE", ""},
		{"no file", nil, 2, "", "hearth-solve: want exactly one instance FILE\nUsage: hearth-solve"},
		{"two files", []string{file, file}, 2, "", "hearth-solve: want exactly one instance FILE"},
		{"protocol", []string{file, "--global", "dpop"}, 2, "", "hearth-solve: --global dpop: hearth-solve solves centrally only (--global none); for a protocol between agents use 'hearth solve " + file + " --global dpop'"},
		{"gpu on", []string{file, "--gpu", "on"}, 2, "", "hearth-solve: --gpu on: hearth-solve runs on the CPU only; use a cuda build's 'hearth solve " + file + " --gpu on'"},
		{"gpu unknown", []string{file, "--gpu", "x"}, 2, "", `hearth-solve: unknown --gpu "x"`},
		{"pydcop", []string{"x.yml"}, 2, "", "hearth-solve: x.yml is a pyDCOP YAML file: hearth-solve reads .wcsp, .uai and .xml/.xcsp and links no YAML parser; use 'hearth solve x.yml'"},
		{"neighbourhood", []string{"street.TOML"}, 2, "", "hearth-solve: street.TOML is a neighbourhood: hearth-solve solves instance files only; use 'hearth solve street.TOML'"},
		{"shds", []string{"--shds", "dm.json"}, 2, "", `invalid value "dm.json" for flag -shds: not a flag of hearth-solve: SHDS streets are neighbourhoods: use 'hearth solve --shds FILE'`},
		{"table", []string{file, "--table", "eager"}, 2, "", `invalid value "eager" for flag -table: not a flag of hearth-solve: MVA tables are for protocols`},
		{"csv", []string{file, "--csv"}, 2, "", "invalid boolean flag csv: not a flag of hearth-solve: CSV files are for neighbourhoods"},
		{"param", []string{file, "-p", "rounds=3"}, 2, "", "flag -p: not a flag of hearth-solve: protocol parameters"},
		{"unknown local", []string{file, "--local", "x"}, 2, "", `hearth-solve: unknown --local "x" (valid:`},
		{"negative memory", []string{file, "--memory", "-1"}, 2, "", "hearth-solve: --memory -1 must not be negative"},
		{"gpu off solves", []string{file, "--gpu", "off", "--global", "none"}, 0, "objective   191 (min, optimal)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), tc.args, &out, &errb)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, errb.String())
			}
			if tc.stdout == "" && out.Len() > 0 || !strings.Contains(out.String(), tc.stdout) {
				t.Errorf("stdout %q, want %q", out.String(), tc.stdout)
			}
			if tc.stderr == "" && errb.Len() > 0 || !strings.Contains(errb.String(), tc.stderr) {
				t.Errorf("stderr %q, want %q", errb.String(), tc.stderr)
			}
		})
	}
}
