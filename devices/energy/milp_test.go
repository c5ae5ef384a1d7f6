package energy_test

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"

	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/energy/internal/homegen"
	"github.com/hearth-dcop/hearth/devices/energy/internal/milp"
	"github.com/hearth-dcop/hearth/devices/plancheck"
)

// gap is the planner's excess over the continuous MILP optimum relative
// to the optimum's magnitude, or to 1 currency when the optimum is within
// 1 currency of zero (a relative gap means nothing there).
func gap(hearth, opt float64) float64 {
	return (hearth - opt) / math.Max(math.Abs(opt), 1)
}

// TestAgainstMILP is the truth test of issue 17: seeded homes with PV, one
// to three batteries, an EV with goals, two-way prices, limits,
// permissions and demand charges, in hourly, quarter-hour and mixed slots,
// solved by the planner and by CBC as a MILP of the same description
// (package internal/milp). Every plan passes the independent checker,
// never costs less than CBC's optimum beyond rounding (that would mean
// the two models differ), and stays within milp.GapBound of it, the
// median within milp.MedianBound: issue 17's 1% on every home.
// HEARTH_MILP_HOMES sets the number of homes (default 50, 2 under the
// race detector; 60 or more for the long run) and HEARTH_MILP_DAY=1 adds
// 96-slot days.
func TestAgainstMILP(t *testing.T) {
	if _, err := exec.LookPath("cbc"); err != nil {
		t.Skip(milp.ErrNoSolver)
	}
	n := 50
	if raceEnabled {
		n = 2
	}
	if s := os.Getenv("HEARTH_MILP_HOMES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	shapes := []homegen.Shape{homegen.Hourly, homegen.Quarter, homegen.Mixed}
	if os.Getenv("HEARTH_MILP_DAY") == "1" {
		shapes = append(shapes, homegen.Day96)
	}
	var gaps []float64
	for i := range n {
		seed := uint64(i + 1)
		shape := shapes[i%len(shapes)]
		h := homegen.Home(seed, shape)
		p, lps, root, err := energy.SolveStats(h, energy.Options{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		rep := plancheck.Check(h, p)
		if err := rep.Err(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		opt, err := milp.Solve(context.Background(), h, t.TempDir())
		if errors.Is(err, milp.ErrNoSolver) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		g := gap(p.Cost(), opt.Cost)
		gaps = append(gaps, g)
		t.Logf("seed %d shape %d: hearth %.4f (economic %.4f), cbc %.4f (economic %.4f), gap %.3f%%, missed %d; %d LPs, relaxation %.4f", seed, shape, p.Cost(), p.Objective, opt.Cost, opt.Objective, 100*g, len(p.Missed), lps, root)
		if root > opt.Cost+1e-5*math.Max(math.Abs(opt.Cost), 1) {
			t.Errorf("seed %d: the relaxation's optimum %.5f is above CBC's %.5f: it is no relaxation", seed, root, opt.Cost)
		}
		if g > milp.GapBound {
			t.Errorf("seed %d: hearth's cost %.5f is %.2f%% above CBC's optimum %.5f", seed, p.Cost(), 100*g, opt.Cost)
		}
		if g < -1e-5 {
			t.Errorf("seed %d: hearth's cost %.5f is below CBC's optimum %.5f: the models differ", seed, p.Cost(), opt.Cost)
		}
	}
	slices.Sort(gaps)
	if len(gaps) > 0 {
		med := gaps[len(gaps)/2]
		t.Logf("gap median %.3f%%, max %.3f%% over %d homes", 100*med, 100*gaps[len(gaps)-1], len(gaps))
		if med > milp.MedianBound && len(gaps) >= 10 {
			t.Errorf("median gap %.3f%% above %.1f%%", 100*med, 100*milp.MedianBound)
		}
	}
}
