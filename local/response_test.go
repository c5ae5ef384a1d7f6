package local

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/internal/cputime"
	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/format"
)

// TestImpliedPairs checks withImpliedPairs on a hand-made ternary table
// (y = x + z over small domains, as an SHDS storage chain): the pairs it
// adds forbid exactly the value pairs no allowed triple has, it adds
// nothing for functions with a boundary variable or without Hard entries,
// and it leaves lp's own functions alone.
func TestImpliedPairs(t *testing.T) {
	// Variables: 0 boundary; 1 x ∈ {0,1}, 2 y ∈ {0,1,2}, 3 z ∈ {0,1}.
	doms := []int{2, 2, 3, 2}
	chain := make([]float64, 2*3*2)
	for x := range 2 {
		for y := range 3 {
			for z := range 2 {
				if y != x+z {
					chain[(x*3+y)*2+z] = mva.Hard
				}
			}
		}
	}
	soft := make([]float64, 2*3*2)
	for i := range soft {
		soft[i] = float64(i)
	}
	withBoundary := make([]float64, 2*2*3)
	withBoundary[0] = mva.Hard
	for _, tc := range []struct {
		name  string
		funcs []mva.LocalFunction
		want  map[[2]int][]float64 // scope → costs of the added pairs
	}{
		{"chain", []mva.LocalFunction{{Scope: []int{1, 2, 3}, Costs: chain}}, map[[2]int][]float64{
			// x, y: y ≥ x and y ≤ x+1.
			{1, 2}: {0, 0, mva.Hard, mva.Hard, 0, 0},
			// y, z: the same with z.
			{2, 3}: {0, mva.Hard, 0, 0, mva.Hard, 0},
			// x, z: every pair has its y.
		}},
		{"no hard entries", []mva.LocalFunction{{Scope: []int{1, 2, 3}, Costs: soft}}, nil},
		{"reads the boundary", []mva.LocalFunction{{Scope: []int{0, 1, 2}, Costs: withBoundary}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lp := &mva.LocalProblem{Vars: []int{0, 1, 2, 3}, Domains: doms, NB: 1, Funcs: tc.funcs}
			out, added := withImpliedPairs(lp)
			if added != (len(tc.want) > 0) || len(out.Funcs) != len(tc.funcs)+len(tc.want) {
				t.Fatalf("added %v, %d functions; want %d added", added, len(out.Funcs), len(tc.want))
			}
			if len(lp.Funcs) != len(tc.funcs) {
				t.Fatalf("lp's functions changed: %d", len(lp.Funcs))
			}
			for _, f := range out.Funcs[len(tc.funcs):] {
				want, ok := tc.want[[2]int{f.Scope[0], f.Scope[1]}]
				if !ok || fmt.Sprint(f.Costs) != fmt.Sprint(want) {
					t.Errorf("pair %v: %v, want %v (listed %v)", f.Scope, f.Costs, want, ok)
				}
			}
		})
	}
}

// exactResponseSolver returns Exact's solver of lp as the response
// solver, ok false where Exact gave another (no implied pair);
// HEARTH_RESPONSE_NOPAIRS=1 gives the response solver without the pairs
// (a measuring aid of TestResponseFiles).
func exactResponseSolver(t *testing.T, lp *mva.LocalProblem) (*responseSolver, bool) {
	t.Helper()
	s, err := Exact(lp, 0)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("HEARTH_RESPONSE_NOPAIRS") != "" {
		s = newResponseSolver(lp, lp)
	}
	rs, ok := s.(*responseSolver)
	return rs, ok
}

// TestResponseSolverEqualsBruteForce checks Exact's response solver
// (EDAC on the problem with its implied pairs, AOBB past EDAC's budget)
// against brute force on the rows of seeded random subproblems with
// n-ary Hard entries: the optimum, the assignment's cost, found against
// a bound at, above and below the optimum, and a budget too small for
// either solver (done false, or an answer checked the same way); with
// EDAC's budget set to 1 check every row goes to AOBB, checked too. The
// rows follow each other on one solver, so that EDAC starts from the last
// answer's cost, and where it finds nothing cheaper answers with it.
func TestResponseSolverEqualsBruteForce(t *testing.T) {
	ctx := context.Background()
	checked, viaAOBB, fromPrev := 0, 0, 0
	for seed := range int64(400) {
		p := randprob.New(seed, randprob.Options{
			Agents: 1 + int(seed%2), Vars: 6 + int(seed%6), MinDomain: 2, MaxDomain: 4, MaxArity: 3 + int(seed%2),
			Functions: 6 + int(seed%8), HardProb: []float64{0.2, 0.4, 0.8}[seed%3], IntCosts: seed%2 == 0, MaxCost: 20, Locality: 0.7,
		})
		if space(p) > 1<<14 {
			continue
		}
		d := mva.Decompose(p)
		for i := range d.Subs {
			lp := mva.NewLocalProblem(p, &d.Subs[i])
			if lp.NumInterior() == 0 {
				continue
			}
			rs, ok := exactResponseSolver(t, lp)
			if !ok {
				continue // no implied pair: AOBB, as before
			}
			ref := NewBruteForce(lp)
			rows, err := lp.Rows()
			if err != nil {
				t.Fatal(err)
			}
			for r := 0; r < rows; r += 1 + rows/5 {
				tag := fmt.Sprintf("seed %d sub %d row %d", seed, i, r)
				b := make([]int, lp.NB)
				lp.DecodeRow(r, b)
				want, err := ref.SolveRow(ctx, b, make([]int, lp.NumInterior()))
				if err != nil {
					t.Fatal(err)
				}
				for _, tc := range []struct{ checks, edac int64 }{{0, 0}, {1 << 30, 0}, {1, 0}, {0, 1}} {
					for _, ub := range []float64{math.Inf(1), want, want + 1, want - 1} {
						got := make([]int, lp.NumInterior())
						rs.edacChecks = tc.edac
						c, found, done, err := rs.SolveRowWithin(ctx, b, got, ub, tc.checks)
						if err != nil || !done && tc.checks != 1 {
							t.Fatalf("%s: budget %d ub %v: done %v, %v", tag, tc.checks, ub, done, err)
						}
						if !done {
							continue // one check: past the budget, as it should
						}
						if rs.byAOBB {
							viaAOBB++
						}
						if rs.fromPrev {
							fromPrev++
						}
						wantFound := !mva.IsHard(want) && want < ub
						if found != wantFound {
							t.Fatalf("%s: ub %v: found %v, brute force %v", tag, ub, found, want)
						}
						if !found {
							continue
						}
						if !sameCost(c, want) {
							t.Fatalf("%s: %v, brute force %v", tag, c, want)
						}
						if e := evalRow(lp, r, got); e != c {
							t.Fatalf("%s: reports %v, its assignment %v costs %v", tag, c, got, e)
						}
					}
				}
				checked++
			}
		}
	}
	t.Logf("%d rows checked, %d answers by AOBB, %d the last row's", checked, viaAOBB, fromPrev)
	if checked < 100 || viaAOBB == 0 || fromPrev == 0 {
		t.Fatalf("%d rows checked, %d answers by AOBB, %d the last row's", checked, viaAOBB, fromPrev)
	}
}

// TestResponseFiles runs Exact's response solver (the solver best
// responses get) on each .wcsp of HEARTH_RESPONSE_FILES (comma separated;
// exported with TestExportHardResponses in internal/solve) and logs its
// optimum, checks, nodes and CPU time (the median of HEARTH_RESPONSE_RUNS
// runs, each on a new solver): a measuring aid, skipped without the
// variable. HEARTH_RESPONSE_AOBB=1 runs AOBB (ShiftRows) instead, as
// Exact did before EDAC answered; HEARTH_RESPONSE_NOGAC=1 turns naryGAC
// off, HEARTH_RESPONSE_NOPAIRS=1 runs EDAC without the implied pairs.
func TestResponseFiles(t *testing.T) {
	files, runs := measureFiles(t, "HEARTH_RESPONSE_FILES", "HEARTH_RESPONSE_RUNS")
	for _, f := range files {
		p, err := format.ReadFile(f, format.Options{})
		if err != nil {
			t.Fatal(err)
		}
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		in := make([]int, lp.NumInterior())
		var (
			v    float64
			cpus []time.Duration
			desc string
			chk  int64
		)
		for range runs {
			c0 := cputime.Used()
			if os.Getenv("HEARTH_RESPONSE_AOBB") != "" {
				// The AND/OR search the responses had before EDAC
				// answered them, for its checks' cost.
				a := NewAOBB(lp, AOBBOptions{ShiftRows: true})
				if v, err = a.SolveRow(context.Background(), nil, in); err != nil {
					t.Fatal(err)
				}
				cpus = append(cpus, cputime.Used()-c0)
				desc, chk = a.Describe()+", 0 nodes", a.Checks()
				continue
			}
			rs, ok := exactResponseSolver(t, lp)
			if !ok {
				t.Fatalf("%s: Exact gave another solver than the response solver", f)
			}
			rs.edac.noNaryGAC = os.Getenv("HEARTH_RESPONSE_NOGAC") != ""
			if v, err = rs.SolveRow(context.Background(), nil, in); err != nil {
				t.Fatal(err)
			}
			cpus = append(cpus, cputime.Used()-c0)
			desc, chk = fmt.Sprintf("%s; %d GAC removals", rs.Describe(), rs.edac.naryGACRemovals), rs.Checks()
		}
		slices.Sort(cpus)
		t.Logf("%s: %.0f checks=%d cpu=%v %s", filepath.Base(f), v+p.Offset, chk, cpus[len(cpus)/2].Round(100*time.Microsecond), desc)
	}
}
