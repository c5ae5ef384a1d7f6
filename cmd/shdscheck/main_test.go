package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The output in testdata is `hearth sim --shds dm_7_1_2.json --json` at
// the commit that added it; the instance and dictionary are the checker's
// copies.
var (
	inst = filepath.Join("..", "..", "internal", "shdscheck", "testdata", "dm_7_1_2.json")
	out  = filepath.Join("testdata", "dm_7_1_2.out.json")
)

func TestRun(t *testing.T) {
	var o, e bytes.Buffer
	if code := run([]string{inst, out}, &o, &e); code != 0 {
		t.Fatalf("exit %d: %s%s", code, o.String(), e.String())
	}
	for _, want := range []string{
		"hearth: homes 7 (dropped 0), rules 44 held of 44 listed",
		"uncoordinated: homes 7",
		"shmgm: homes 7",
		"reported objective 337733 (committed levels, whole-cent prices)",
		"finding: the reported bill $53.190 uses prices truncated to whole cents",
	} {
		if !strings.Contains(o.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, o.String())
		}
	}

	// A baseline schedule with one slot changed fails the check.
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte(`"baselines"`))
	j := bytes.Index(b[i:], []byte(`"charge_48a"`))
	if i < 0 || j < 0 {
		t.Fatal("no baseline EV charge to mutate")
	}
	mut := append(append(append([]byte{}, b[:i+j]...), []byte(`"off"`)...), b[i+j+len(`"charge_48a"`):]...)
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, mut, 0o644); err != nil {
		t.Fatal(err)
	}
	o.Reset()
	if code := run([]string{"-dict", filepath.Join(filepath.Dir(inst), "DeviceDictionary.json"), inst, bad}, &o, &e); code != 1 || !strings.Contains(o.String(), "PROBLEM") {
		t.Errorf("mutated baseline: exit %d\n%s", code, o.String())
	}

	for _, args := range [][]string{{inst}, {inst, "missing.json"}, {"missing.json", out}} {
		var o, e bytes.Buffer
		if code := run(args, &o, &e); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
