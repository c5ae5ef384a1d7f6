package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/mva/format"
)

// TestHelpGoesToStdout checks that help asked for is printed on stdout
// with exit 0, and usage after a mistake on stderr with exit 2.
func TestHelpGoesToStdout(t *testing.T) {
	tests := []struct {
		args         []string
		code         int
		stdout, errs string // text expected in each; "" expects it empty
	}{
		{[]string{"help"}, exitOK, "Commands:", ""},
		{[]string{"-h"}, exitOK, "Commands:", ""},
		{[]string{"--help"}, exitOK, "Commands:", ""},
		{[]string{"help", "gen"}, exitOK, "Usage: hearth gen", ""},
		{[]string{"solve", "-h"}, exitOK, "Usage: hearth solve", ""},
		{[]string{"gen", "--help"}, exitOK, "--name value", ""},
		{[]string{"bench", "-h"}, exitOK, "Usage: hearth bench", ""},
		{[]string{"version", "-h"}, exitOK, "Usage: hearth version", ""},
		{[]string{"solve", "--frob"}, exitUsage, "", "flag provided but not defined: -frob\nUsage: hearth solve"},
		{[]string{"gen"}, exitUsage, "", "want a KIND\nUsage: hearth gen"},
		{nil, exitUsage, "", "Usage:"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		code := run(context.Background(), tc.args, &out, &errb)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d", tc.args, code, tc.code)
		}
		for _, c := range []struct {
			name, got, want string
		}{{"stdout", out.String(), tc.stdout}, {"stderr", errb.String(), tc.errs}} {
			if c.want == "" && c.got != "" || !strings.Contains(c.got, c.want) {
				t.Errorf("%v: %s is %q, want %q", tc.args, c.name, c.got, c.want)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != exitOK || errb.Len() > 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
		bi, ok := debug.ReadBuildInfo()
		if want := versionLine(bi, ok) + "\n"; out.String() != want || !strings.HasPrefix(want, "hearth ") {
			t.Errorf("%v printed %q, want %q", args, out.String(), want)
		}
	}
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"checkout", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "04cc5ec1"}, {Key: "vcs.time", Value: "2026-11-26T08:00:00Z"}, {Key: "vcs.modified", Value: "true"},
		}}, "hearth (devel) (revision 04cc5ec1, modified, 2026-11-26T08:00:00Z) go1.26.0"},
		{"clean checkout", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "04cc5ec1"}, {Key: "vcs.modified", Value: "false"},
		}}, "hearth (devel) (revision 04cc5ec1) go1.26.0"},
		{"go install", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.3.0"}}, "hearth v0.3.0 go1.26.0"},
		{"test binary", &debug.BuildInfo{}, "hearth (devel)"},
		{"no build info", nil, "hearth (unknown version: built without module information)"},
	}
	for _, tc := range tests {
		if got := versionLine(tc.bi, tc.bi != nil); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestGenFlagSyntax checks that a generator's parameters may be given as
// name=value, --name value and --name=value, with the same instance.
func TestGenFlagSyntax(t *testing.T) {
	dir := t.TempDir()
	forms := [][]string{
		{"meeting", "agents=5", "vars=3"},
		{"meeting", "--agents", "5", "--vars=3"},
		{"--agents", "5", "meeting", "-vars", "3", "--seed", "1"},
	}
	var want []byte
	for i, form := range forms {
		path := filepath.Join(dir, "m"+string(rune('0'+i))+".yaml")
		var out, errb bytes.Buffer
		args := append(append([]string{"gen"}, form...), "-o", path)
		if code := run(context.Background(), args, &out, &errb); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		p, err := format.ReadFile(path, format.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if st := p.Stats(); st.Agents != 5 || st.Variables != 15 {
			t.Errorf("%v: %d agents, %d variables, want 5 and 15", args, st.Agents, st.Variables)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = b
		} else if !bytes.Equal(b, want) {
			t.Errorf("%v wrote another instance than %v", args, forms[0])
		}
	}
	// A yes/no parameter may stand alone or take true/false.
	for _, args := range [][]string{{"gen", "random", "--plant"}, {"gen", "random", "--plant", "false"}, {"gen", "random", "--plant=false"}} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != exitOK {
			t.Errorf("%v: exit %d: %s", args, code, errb.String())
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"gen", "meeting", "--agents"}, "--agents needs a value: write --agents VALUE or agents=VALUE"},
		{[]string{"gen", "meeting", "agents"}, `parameter "agents" is not name=value: write, for instance, agents=5 or --agents 5`},
		{[]string{"gen", "meeting", "--p2", "0.5"}, `unknown parameter "p2"`},
		{[]string{"gen", "meeting", "--frob", "1"}, "flag provided but not defined: -frob"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), tc.args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errb.String(), tc.want)
		}
	}
}
