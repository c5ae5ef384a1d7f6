package core_test

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/mva/format"
	"github.com/hearth-dcop/hearth/mva/format/core"
)

// TestReadFileAsFormat: core reads every XCSP, WCSP and UAI file of
// testdata into the problem package format reads (format delegates to it,
// so this guards the split: same kind, shape, agents, name and costs of a
// few assignments), with and without --agents; it refuses pyDCOP YAML and
// unknown extensions with the file's name, and reports a missing file.
func TestReadFileAsFormat(t *testing.T) {
	files, err := filepath.Glob("../../../testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	for _, path := range files {
		kind, ok := core.KindOf(path)
		fkind, ferr := format.KindOf(path)
		if ok != (ferr == nil && fkind != format.PyDCOP) || (ok && kind != fkind) {
			t.Errorf("%s: core kind %q %v, format kind %q %v", path, kind, ok, fkind, ferr)
		}
		if !ok {
			continue
		}
		for _, agents := range []int{0, 3} {
			o := core.Options{Agents: agents}
			p, err := core.ReadFile(path, o)
			q, ferr := format.ReadFile(path, o)
			if (err == nil) != (ferr == nil) {
				t.Fatalf("%s agents %d: core %v, format %v", path, agents, err, ferr)
			}
			if err != nil {
				continue
			}
			read++
			if p.Name != q.Name || !reflect.DeepEqual(p.Stats(), q.Stats()) || !reflect.DeepEqual(p.Agents, q.Agents) {
				t.Errorf("%s agents %d: core %q %+v, format %q %+v", path, agents, p.Name, p.Stats(), q.Name, q.Stats())
			}
			for _, v := range []int{0, 1} { // all-zero and, where it fits, all-one
				a := make([]int, len(p.Variables))
				for i := range a {
					a[i] = min(v, len(p.Variables[i].Domain)-1)
				}
				c, err := p.Eval(a)
				d, ferr := q.Eval(a)
				if c != d || (err == nil) != (ferr == nil) {
					t.Errorf("%s: cost of %v: core %v %v, format %v %v", path, a, c, err, d, ferr)
				}
			}
		}
	}
	if read < 10 {
		t.Errorf("read %d problems from ../../../testdata; want the repository's files", read)
	}
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.wcsp")
	for _, tc := range []struct{ path, want string }{
		{"x.yaml", "x.yaml: unknown instance format (want .xml/.xcsp, .wcsp or .uai)"},
		{"x.toml", "x.toml: unknown instance format"},
		{missing, missing},
	} {
		if _, err := core.ReadFile(tc.path, core.Options{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.path, err, tc.want)
		}
	}
}
