package energy_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/energy/internal/homegen"
	"github.com/hearth-dcop/hearth/devices/energy/internal/milp"
	"github.com/hearth-dcop/hearth/devices/plancheck"
	"github.com/hearth-dcop/hearth/internal/cbc"
)

// TestCapsAtOwnPlan: a street hands a home a hard cap equal to its own
// plan's import (its share of a hard feeder limit that the street keeps
// exactly), or a little below. Generated homes capped so over the second
// quarter of the horizon are degenerate programmes (seeds 2010 and 2026
// once ended in "the interior-point method did not converge": the primal
// residual rose from 1e-15 to 1e-7 as the gap closed, then further; 200
// seeds 2000–2199 at 0 and 0.05 kW below all pass, too slow for the
// default suite). Each is planned within
// milp.GapBound of CBC's optimum, the plan passing the checker, or
// refused with energy.ErrInfeasible exactly where CBC proves it must be.
func TestCapsAtOwnPlan(t *testing.T) {
	cbc.Require(t)
	seeds := []uint64{2010, 2026, 2008}
	if raceEnabled {
		seeds = seeds[:2]
	}
	for _, seed := range seeds {
		// below: how far under the plan's import the caps sit (kW).
		for _, below := range []float64{0, 1e-3, 0.05} {
			shape := []homegen.Shape{homegen.Hourly, homegen.Mixed}[seed%2]
			h := homegen.Home(seed, shape)
			alone, err := energy.Solve(context.Background(), h, energy.Options{})
			if err != nil {
				t.Fatalf("seed %d alone: %v", seed, err)
			}
			T := len(h.Dt)
			h.Grid.Cap = make([]float64, T)
			for t := range T {
				h.Grid.Cap[t] = math.NaN()
				if t >= T/4 && t < T/2 {
					h.Grid.Cap[t] = math.Max(alone.Import[t]-below, 0)
				}
			}
			p, err := energy.Solve(context.Background(), h, energy.Options{})
			if err != nil && !errors.Is(err, energy.ErrInfeasible) {
				t.Errorf("seed %d, %g kW below: neither a plan nor energy.ErrInfeasible: %v", seed, below, err)
				continue
			}
			if err == nil {
				if err := plancheck.Check(h, p).Err(); err != nil {
					t.Errorf("seed %d, %g kW below: %v", seed, below, err)
					continue
				}
			}
			opt, cerr := milp.Solve(context.Background(), h, t.TempDir())
			switch {
			case errors.Is(cerr, milp.ErrInfeasible):
				if err == nil {
					t.Errorf("seed %d, %g kW below: CBC proves the caps cannot be kept; hearth planned", seed, below)
				}
			case cerr != nil:
				t.Fatal(cerr)
			case err != nil:
				t.Errorf("seed %d, %g kW below: CBC plans at %.5f, hearth refuses: %v", seed, below, opt.Cost, err)
			default:
				g := gap(p.Cost(), opt.Cost)
				t.Logf("seed %d, %g kW below: hearth %.5f, cbc %.5f, gap %.4f%%", seed, below, p.Cost(), opt.Cost, 100*g)
				if g > milp.GapBound || g < -1e-5 {
					t.Errorf("seed %d, %g kW below: gap %.3f%% outside [0, %.0f%%]", seed, below, 100*g, 100*milp.GapBound)
				}
			}
		}
	}
}
