package main

import (
	"context"
	"errors"
	"github.com/hearth-dcop/hearth/internal/solvefile"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	tb2 "github.com/hearth-dcop/hearth/internal/toulbar2"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/format"
)

// publicRefusals lists the files of testdata/toulbar2 that use toulbar2
// extensions hearth does not read, with the line and words of the error
// each must get: a parse error naming the file, the line and the feature,
// never a panic or a problem read wrong.
var publicRefusals = map[string]struct {
	line int
	msg  string
}{
	"10_1.wcsp":                  {2, "interval domains (negative sizes) are not supported"},
	"donald.wcsp":                {834, `keyword "salldiff"`},
	"knapsack.wcsp":              {3, `keyword "knapsack"`},
	"latin0.wcsp":                {3, `keyword "sgcc"`},
	"latin4.wcsp":                {3, `keyword "salldiff"`},
	"magic3.wcsp":                {499, `keyword "salldiff"`},
	"sudoku.wcsp":                {3, `keyword "salldiff"`},
	"walldiff_simple.wcsp":       {4, `keyword "walldifferent"`},
	"weightedcspconstraint.wcsp": {11, `keyword "wcsp"`},
	"wsum_quad.wcsp":             {4, `keyword "wsum"`},
}

// TestSolveMatchesToulbar2Public reads every file of testdata/toulbar2
// (small public files of toulbar2's repository: testdata/toulbar2/README.md
// says which): the ones in publicRefusals must be refused with their parse
// error; every other one must be solved by auto, aobb, edac and be (be
// left out under -short) to toulbar2's optimum (the energy, to toulbar2's three decimals, for the
// .uai files). Shared cost functions (4queens-bis, oconnell_bayesnet),
// zero potentials and a file without a final newline (test_Z) are among
// them.
func TestSolveMatchesToulbar2Public(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "toulbar2", "*.wcsp"))
	uai, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "toulbar2", "*.uai"))
	files = append(files, uai...)
	if err != nil || len(files) < 10 {
		t.Fatalf("testdata/toulbar2: %d files, %v", len(files), err)
	}
	for name := range publicRefusals {
		if _, err := os.Stat(filepath.Join("..", "..", "testdata", "toulbar2", name)); err != nil {
			t.Errorf("refusal listed for a missing file: %v", err)
		}
	}
	solvers := []string{"auto", "aobb", "edac", "be"}
	if testing.Short() {
		solvers = solvers[:3] // be takes seconds on DBN_15
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			p, err := format.ReadFile(path, format.Options{})
			if want, ok := publicRefusals[name]; ok {
				checkRefusal(t, path, err, want.line, want.msg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r := tb2.Solve(t, path)
			for _, solver := range solvers {
				res, err := solvefile.Central(context.Background(), p, &solvefile.Local{Name: solver}, 1, nil)
				if err != nil {
					t.Fatalf("%s: %v", solver, err)
				}
				if !r.Feasible {
					if res.Feasible {
						t.Errorf("%s: feasible, toulbar2 finds no solution", solver)
					}
					continue
				}
				if !res.Feasible || !res.Optimal {
					t.Fatalf("%s: result not feasible and optimal: %+v", solver, res)
				}
				got := *res.Objective
				if strings.HasSuffix(name, ".uai") {
					// toulbar2 prints the energy to three decimals.
					if math.Abs(got-r.Energy) > 6e-4 {
						t.Errorf("%s: energy %v, toulbar2 %.3f", solver, got, r.Energy)
					}
				} else if got != float64(r.Cost) {
					t.Errorf("%s: optimum %v, toulbar2 %d", solver, got, r.Cost)
				}
			}
		})
	}
}

// checkRefusal checks that err is the parse error of path at line whose
// message holds msg.
func checkRefusal(t *testing.T, path string, err error, line int, msg string) {
	t.Helper()
	var pe *mva.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T), want a *mva.ParseError", err, err)
	}
	if pe.File != path || pe.Line != line || !strings.Contains(pe.Msg, msg) {
		t.Errorf("error %q, want %s:%d: …%s…", err, path, line, msg)
	}
}

// TestSolveMatchesToulbar2Wider is the wider check of issue 18 on a folder
// of public files kept out of the repository (HEARTH_WIDER_DIR; the files
// and their sources: docs/bench/toulbar2-wider.md): every file hearth
// reads and toulbar2 proves within HEARTH_WIDER_LIMIT (a duration, 60s
// by default) must get toulbar2's optimum from auto when auto proves one
// within the limit; a file hearth refuses must get a parse error naming
// it and a line. Skipped without HEARTH_WIDER_DIR.
func TestSolveMatchesToulbar2Wider(t *testing.T) {
	dir := os.Getenv("HEARTH_WIDER_DIR")
	if dir == "" {
		t.Skip("HEARTH_WIDER_DIR is not set")
	}
	limit := time.Minute
	if s := os.Getenv("HEARTH_WIDER_LIMIT"); s != "" {
		var err error
		if limit, err = time.ParseDuration(s); err != nil {
			t.Fatalf("HEARTH_WIDER_LIMIT: %v", err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.wcsp"))
	uai, _ := filepath.Glob(filepath.Join(dir, "*.uai"))
	files = append(files, uai...)
	if len(files) == 0 {
		t.Fatalf("no .wcsp or .uai files in %s", dir)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			p, err := format.ReadFile(path, format.Options{})
			if err != nil {
				var pe *mva.ParseError
				if !errors.As(err, &pe) || pe.File != path || pe.Line == 0 {
					t.Fatalf("refused without a parse error naming the file and line: %v", err)
				}
				t.Logf("refused: %v", err)
				return
			}
			want, ok := toulbar2Within(t, path, limit)
			if !ok {
				t.Skipf("toulbar2 proves no optimum within %v", limit)
			}
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			defer cancel()
			res, err := solvefile.Central(ctx, p, &solvefile.Local{Name: "auto"}, 1, nil)
			if err != nil || !res.Optimal {
				t.Skipf("auto proves no optimum within %v: %v", limit, err)
			}
			// toulbar2 prints a .uai file's energy to three decimals.
			if got := *res.Objective; got != want && (!strings.HasSuffix(path, ".uai") || math.Abs(got-want) > 6e-4) {
				t.Errorf("auto: optimum %v, toulbar2 %v", got, want)
			}
		})
	}
}

// toulbar2Within returns toulbar2's optimum for path (the −ln energy for
// .uai files), false when it proves none within limit (toulbar2.Solve
// waits as long as it takes, and toulbar2 needs minutes on some of the
// wider files) or crashes.
func toulbar2Within(t *testing.T, path string, limit time.Duration) (float64, bool) {
	t.Helper()
	r, ok := tb2.SolveWithin(t, path, limit)
	if !ok || !r.Feasible {
		return 0, false
	}
	if strings.HasSuffix(path, ".uai") {
		return r.Energy, true
	}
	return float64(r.Cost), true
}

// TestFormatCornersMatchToulbar2 solves small files that use the corners
// of the wcsp format where a reader could part from toulbar2's, and checks
// hearth's optimum (or infeasibility) against toulbar2's on each: a tuple
// listed twice (the last cost stands, in toulbar2 as in hearth), at arity 1
// to 4; an arity-0 function with and without its one tuple, and one at the
// upper bound; a default cost at or above the upper bound; a cost equal to
// it; shared tables reused with another number in the default cost's place
// and by their second index. Where another reading could change the
// answer (the tuple that stands, the constant's source, the table a reuse
// copies), the files are built so that it would.
func TestFormatCornersMatchToulbar2(t *testing.T) {
	tests := []struct{ name, src string }{
		{"duplicate tuple, arity 1", "d 1 2 1 100\n2\n1 0 50 2\n0 1\n0 7\n"},
		{"duplicate tuple, arity 2", "d 2 2 1 100\n2 2\n2 0 1 50 2\n0 0 1\n0 0 7\n"},
		{"duplicate tuple, arity 3", "d 3 2 1 100\n2 2 2\n3 0 1 2 50 2\n0 0 0 1\n0 0 0 7\n"},
		{"duplicate tuple, arity 4", "d 4 2 1 100\n2 2 2 2\n4 0 1 2 3 50 2\n0 0 0 0 1\n0 0 0 0 7\n"},
		{"constant from its tuple", "c 1 2 2 100\n2\n0 5 1\n3\n1 0 0 1\n1 1\n"},
		{"constant from its default", "c 1 2 2 100\n2\n0 5 0\n1 0 0 1\n1 1\n"},
		{"constant at the bound", "c 1 2 2 100\n2\n0 100 0\n1 0 0 1\n1 1\n"},
		{"default at the bound", "d 2 2 1 10\n2 2\n2 0 1 10 1\n1 1 3\n"},
		{"default past the bound", "d 2 2 1 10\n2 2\n2 0 1 99 2\n1 1 3\n0 1 12\n"},
		{"cost at the bound", "u 1 2 1 5\n2\n1 0 5 1\n1 4\n"},
		{"shared reuse, another default", "s 3 2 3 100\n2 2 2\n-2 0 1 9 1\n0 0 0\n2 1 2 0 -1\n1 1 0 1\n0 50\n"},
		{"shared reuse of the second", "s 4 2 4 100\n2 2 2 2\n-2 0 1 9 1\n0 0 0\n-2 0 1 3 1\n1 1 0\n2 2 3 2 -2\n1 2 0 1\n0 50\n"},
	}
	dir := t.TempDir()
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "corner"+strconv.Itoa(i)+".wcsp")
			if err := os.WriteFile(path, []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			r := tb2.Solve(t, path)
			p, err := format.ReadFile(path, format.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := solvefile.Central(context.Background(), p, &solvefile.Local{Name: "auto"}, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case res.Feasible != r.Feasible:
				t.Errorf("feasible %v, toulbar2 %v", res.Feasible, r.Feasible)
			case r.Feasible && *res.Objective != float64(r.Cost):
				t.Errorf("optimum %v, toulbar2 %d", *res.Objective, r.Cost)
			}
		})
	}
}
