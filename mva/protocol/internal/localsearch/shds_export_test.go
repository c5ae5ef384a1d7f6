package localsearch_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/format/wcsp"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
)

// TestExportSHDSResponses writes, for every home of the SHDS file
// $HEARTH_SHDS_FILE whose response has a min-fill induced width of 15
// or more (the wide homes), the response problem with the other homes
// at their own (uncoordinated) schedules, the first question MGM with
// init=3 asks, as a .wcsp in $HEARTH_EXPORT_RESPONSES, for
// comparing solvers (hearth solve, toulbar2) on it, costs ×100 rounded
// (the format's integers). Skipped unless both are set.
//
// With HEARTH_RESPONSE_TIME=2 it also answers that question with a
// response=3 responder whose exact solve has $HEARTH_RESPONSE_CHECKS
// checks (0: block descent at once), and prints every AND/OR solve's
// bound, time and checks and the response's; HEARTH_NO_SHIFT=1 turns
// AOBBOptions.ShiftRows off for comparison. Its local view is AOBB, so
// that the ℓ_i rows it reads are exact. Four more questions follow, some
// neighbours' values drawn again (seeded) each time, as later MGM rounds
// ask. HEARTH_HOME=N keeps home N alone.
func TestExportSHDSResponses(t *testing.T) {
	file, dir := os.Getenv("HEARTH_SHDS_FILE"), os.Getenv("HEARTH_EXPORT_RESPONSES")
	if file == "" || dir == "" {
		t.Skip("set HEARTH_SHDS_FILE and HEARTH_EXPORT_RESPONSES")
	}
	ctx := context.Background()
	r, err := homesolve.Load(file, true, homesolve.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	p := r.Problem()
	start := r.WithStart(r.Choice()).Start
	if start == nil {
		start = make([]int, len(p.Variables))
	}
	solver := func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("aobb", lp) }
	nodes, _, err := mva.BuildNodes(ctx, mva.Decompose(p), solver, false, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		n.Exact = local.Exact
		nb, err := localsearch.New(n)
		if err != nil {
			t.Fatal(err)
		}
		rowCost := func(ctx context.Context, row int) (localsearch.Cost, error) {
			return localsearch.RowCost(ctx, n.Local, row)
		}
		resp, err := localsearch.NewResponder(n, nb, rowCost, localsearch.ResponseConfig{Mode: localsearch.ResponseSolve, Entries: 1 << 20, BlockEntries: 1})
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]int, len(nb.SlotVars()))
		for s, v := range nb.SlotVars() {
			vals[s] = start[v]
		}
		q, err := resp.ResponseProblem(vals)
		if err != nil {
			t.Fatal(err)
		}
		sub := mva.NewLocalProblem(q, mva.Whole(q))
		c := local.Choose(sub, local.AutoOptions{})
		t.Logf("home %d (%s): %d variables, %d functions: %s", n.ID, q.Agents[0].Name, len(q.Variables), len(q.Functions), c.Reason)
		width := c.Width
		if c.AtLeast {
			// Choose stopped its elimination early: the whole one's.
			_, width = q.PrimalGraph().MinFill(sub.Vars)
		}
		if width < 15 || os.Getenv("HEARTH_HOME") != "" && os.Getenv("HEARTH_HOME") != strconv.Itoa(n.ID) {
			continue
		}
		path := filepath.Join(dir, fmt.Sprintf("%s_home%d.wcsp", filepath.Base(file[:len(file)-len(filepath.Ext(file))]), n.ID))
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := wcsp.Write(f, scaled(q, 100)); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("  wrote %s", path)
		if os.Getenv("HEARTH_RESPONSE_TIME") == "" {
			continue
		}
		n.Exact = autoExact
		checks, _ := strconv.ParseInt(os.Getenv("HEARTH_RESPONSE_CHECKS"), 10, 64)
		resp, err = localsearch.NewResponder(n, nb, rowCost, localsearch.ResponseConfig{Mode: localsearch.ResponseBlocks, Entries: 1 << 20, BlockEntries: localsearch.BlockEntries, Checks: checks})
		if err != nil {
			t.Fatal(err)
		}
		cur := 0
		if lp := n.Local.LP; true {
			b := make([]int, lp.NB)
			for k, v := range lp.Vars[:lp.NB] {
				b[k] = start[v]
			}
			cur = lp.EncodeRow(b)
		}
		tctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		t0 := time.Now()
		row, gain, err := resp.BestMove(tctx, cur, vals)
		cancel()
		t.Logf("  response from row %d: row %d gain %v err %v in %v (%d solves)", cur, row, gain, err, time.Since(t0), resp.Solves())
		if os.Getenv("HEARTH_CHECK_TOULBAR2") != "" && err == nil {
			checkToulbar2(t, path, q, nb, rowCost, row, vals)
		}
		rng := rand.New(rand.NewPCG(uint64(n.ID), 7))
		for q := range 4 {
			for s := range vals {
				if rng.IntN(3) == 0 {
					vals[s] = rng.IntN(nb.SlotDomains[s])
				}
			}
			t0 := time.Now()
			row, gain, err := resp.BestMove(ctx, cur, vals)
			t.Logf("  question %d: row %d gain %v err %v in %v (%d solves)", q, row, gain, err, time.Since(t0), resp.Solves())
		}
	}
}

// checkToulbar2 compares the response row's ℓ_i with toulbar2's optimum
// of the same response problem written to path (costs ×100 rounded): ℓ_i
// must be at most the float cost of toulbar2's assignment, and ×100 at
// least toulbar2's optimum less the rounding of every function. An
// answer by block descent may fail it: that is what the check is for.
func checkToulbar2(t *testing.T, path string, q *mva.Problem, nb *localsearch.Neighbourhood, rowCost localsearch.LocalCost, row int, vals []int) {
	t.Helper()
	sol := filepath.Join(t.TempDir(), "sol")
	out, err := exec.Command("toulbar2", path, "-w="+sol).CombinedOutput()
	m := regexp.MustCompile(`(?m)^Optimum: (-?\d+)`).FindSubmatch(out)
	if err != nil || m == nil {
		t.Logf("  toulbar2 gave no optimum (%v): %.200s", err, out)
		return
	}
	opt, _ := strconv.ParseFloat(string(m[1]), 64)
	raw, err := os.ReadFile(sol)
	if err != nil {
		t.Fatal(err)
	}
	var x []int
	for _, f := range strings.Fields(string(raw)) {
		v, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		x = append(x, v)
	}
	theirs, err := q.Eval(x)
	if err != nil {
		t.Fatal(err)
	}
	ell, err := nb.Ell(context.Background(), rowCost, row, vals)
	if err != nil {
		t.Fatal(err)
	}
	slack := 0.5*float64(len(q.Functions)) + 1
	ok := ell.Hard == 0 && ell.Soft <= theirs+1e-9*math.Abs(theirs) && 100*ell.Soft >= opt-slack
	t.Logf("  toulbar2: optimum %.0f (/100), its assignment costs %.4f; the response's ℓ %v: exact %v", opt, theirs, ell, ok)
	if !ok {
		t.Errorf("%s: the response's ℓ %v is not toulbar2's optimum %.0f/100 (its assignment %.4f)", path, ell, opt, theirs)
	}
}

// scaled returns q with every finite cost times k, rounded to an integer
// (the wcsp format's costs): SHDS costs are cents of kWh² and tenths of a
// cent with float residue (473.69999999999993).
func scaled(q *mva.Problem, k float64) *mva.Problem {
	s := *q
	s.Offset = math.Round(q.Offset * k)
	s.Functions = make([]mva.Function, len(q.Functions))
	for i, f := range q.Functions {
		c := make([]float64, len(f.Costs))
		for e, x := range f.Costs {
			if !mva.IsHard(x) {
				x = math.Round(x * k)
			}
			c[e] = x
		}
		s.Functions[i] = mva.Function{Name: f.Name, Scope: f.Scope, Costs: c}
	}
	return &s
}

// autoExact is local.Exact, its AND/OR solves logged.
func autoExact(lp *mva.LocalProblem, entries int) (mva.LocalSolver, error) {
	if entries > 0 {
		return local.Exact(lp, entries)
	}
	// HEARTH_NO_SHIFT=1: without AOBBOptions.ShiftRows, for comparison.
	return timedSolver{local.NewAOBB(lp, local.AOBBOptions{ShiftRows: os.Getenv("HEARTH_NO_SHIFT") == ""})}, nil
}

type timedSolver struct{ *local.AOBB }

func (s timedSolver) SolveRow(ctx context.Context, b, in []int) (float64, error) {
	t0, c0 := time.Now(), s.Checks()
	c, err := s.AOBB.SolveRow(ctx, b, in)
	fmt.Printf("    solve %v: %v %v %.3g checks %s\n", b[len(b)-12:], c, time.Since(t0), float64(s.Checks()-c0), s.Describe())
	return c, err
}

func (s timedSolver) SolveRowWithin(ctx context.Context, b, in []int, ub float64, checks int64) (float64, bool, bool, error) {
	t0, c0 := time.Now(), s.Checks()
	c, found, done, err := s.AOBB.SolveRowWithin(ctx, b, in, ub, checks)
	fmt.Printf("    within %v ub %.6g: %v found %v done %v %v %.3g checks %s\n", b[len(b)-12:], ub, c, found, done, time.Since(t0), float64(s.Checks()-c0), s.Describe())
	return c, found, done, err
}
