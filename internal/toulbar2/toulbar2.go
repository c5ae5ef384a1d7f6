// Package toulbar2 runs Debian's toulbar2, the reference exact solver the
// tests compare hearth's optima with. Without toulbar2 a test is skipped on
// a developer machine and fails in CI (CI set), where scripts/test installs
// it, so a missing install can never turn the comparison green.
package toulbar2

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Result is what toulbar2 reported for one file.
type Result struct {
	// Feasible is false when toulbar2 found no solution.
	Feasible bool
	// Cost is toulbar2's integer optimum (for .uai files its internal
	// scaled cost, not ours).
	Cost int64
	// Energy is the −ln probability toulbar2 prints for .uai files (three
	// decimals), 0 otherwise.
	Energy float64
	// Solution holds one value index per variable.
	Solution []int
}

var optimumRE = regexp.MustCompile(`(?m)^Optimum: (-?\d+)(?: energy: (\S+))?`)

// Solve runs toulbar2 on file, for as long as it takes.
func Solve(t testing.TB, file string) Result {
	t.Helper()
	r, err := run(context.Background(), t, file)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// SolveWithin runs toulbar2 on file within limit of wall time; false when
// it proves nothing by then, or fails (toulbar2 1.1.1 crashes on some
// files of its own repository that use its extensions).
func SolveWithin(t testing.TB, file string, limit time.Duration) (Result, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	r, err := run(ctx, t, file)
	return r, err == nil && ctx.Err() == nil
}

// run runs toulbar2 on file until ctx ends, and reads its optimum and
// solution.
func run(ctx context.Context, t testing.TB, file string) (Result, error) {
	t.Helper()
	bin, err := exec.LookPath("toulbar2")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("toulbar2 is not installed: scripts/test installs it (apt-get install toulbar2)")
		}
		t.Skip("toulbar2 is not installed (apt-get install toulbar2)")
	}
	sol := filepath.Join(t.TempDir(), "sol")
	out, err := exec.CommandContext(ctx, bin, file, "-w="+sol).CombinedOutput()
	if err != nil {
		return Result{}, fmt.Errorf("toulbar2 %s: %v\n%s", file, err, out)
	}
	if bytes.Contains(out, []byte("No solution")) {
		return Result{}, nil
	}
	m := optimumRE.FindSubmatch(out)
	if m == nil {
		return Result{}, fmt.Errorf("toulbar2 %s printed no optimum:\n%s", file, out)
	}
	r := Result{Feasible: true}
	if r.Cost, err = strconv.ParseInt(string(m[1]), 10, 64); err != nil {
		return Result{}, fmt.Errorf("toulbar2 optimum %q: %v", m[1], err)
	}
	if len(m[2]) > 0 {
		if r.Energy, err = strconv.ParseFloat(string(m[2]), 64); err != nil {
			return Result{}, fmt.Errorf("toulbar2 energy %q: %v", m[2], err)
		}
	}
	raw, err := os.ReadFile(sol)
	if err != nil {
		return Result{}, fmt.Errorf("toulbar2 solution: %v", err)
	}
	for _, f := range strings.Fields(string(raw)) {
		v, err := strconv.Atoi(f)
		if err != nil {
			return Result{}, fmt.Errorf("toulbar2 solution value %q: %v", f, err)
		}
		r.Solution = append(r.Solution, v)
	}
	return r, nil
}
