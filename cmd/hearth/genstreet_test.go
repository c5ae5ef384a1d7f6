package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/internal/shdscheck"
)

// TestGenStreet: `hearth gen shds-street` writes the same file for the
// same seed, and the street it writes runs through `hearth sim --shds`
// with a plan the independent checker accepts.
func TestGenStreet(t *testing.T) {
	srcDir := filepath.Join("..", "..", "devices", "shds", "testdata")
	dir := t.TempDir()
	gen := func(out string, seed string) {
		t.Helper()
		var o, e bytes.Buffer
		args := []string{"gen", "shds-street", "--homes", "5", "--seed", seed, "-o", out,
			filepath.Join(srcDir, "dm_7_1_2.json"), filepath.Join(srcDir, "dm_21_1_2.json")}
		if code := run(context.Background(), args, &o, &e); code != exitOK {
			t.Fatalf("gen: exit %d: %s", code, e.String())
		}
	}
	a, b, c := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"), filepath.Join(dir, "c.json")
	gen(a, "4")
	gen(b, "4")
	gen(c, "5")
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	cb, _ := os.ReadFile(c)
	if !bytes.Equal(ab, bb) || bytes.Equal(ab, cb) {
		t.Fatalf("seed 4 twice: equal %v; seeds 4 and 5: equal %v", bytes.Equal(ab, bb), bytes.Equal(ab, cb))
	}

	var o, e bytes.Buffer
	if code := run(context.Background(), []string{"sim", "--shds", a, "--json"}, &o, &e); code != exitOK {
		t.Fatalf("sim: exit %d: %s", code, e.String())
	}
	inst, err := shdscheck.DecodeInstance(ab)
	if err != nil {
		t.Fatal(err)
	}
	dict, err := shdscheck.ReadDictionary(filepath.Join(srcDir, "DeviceDictionary.json"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := shdscheck.DecodeOutput(o.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	r, err := shdscheck.Check(inst, dict, out.Coordinated())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Err(); err != nil || r.Homes != 5 || r.Held != r.Rules || r.Rules == 0 {
		t.Errorf("checked %d homes, %d of %d rules hold: %v", r.Homes, r.Held, r.Rules, err)
	}

	for _, args := range [][]string{
		{"gen", "shds-street", "--homes", "0", filepath.Join(srcDir, "dm_7_1_2.json")},
		{"gen", "shds-street", "--homes", "3", "--from", dir, "--match", "none*.json"},
		{"gen", "shds-street", "--homes", "3", filepath.Join(dir, "missing.json")},
	} {
		var o, e bytes.Buffer
		if code := run(context.Background(), args, &o, &e); code != exitUsage || !strings.Contains(e.String(), "shds-street") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error", args, code, e.String())
		}
	}
}
