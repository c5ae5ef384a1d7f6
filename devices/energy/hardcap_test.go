package energy_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/energy/internal/milp"
	"github.com/hearth-dcop/hearth/devices/plancheck"
	"github.com/hearth-dcop/hearth/internal/cbc"
)

// TestHardCapAtEmptyBattery: hazel of cmd/hearth/testdata/energy-run
// answering its street under a hard feeder limit of 5 and 6.5 kW (the
// homes' files as devices/street handed them to the planner; a negative
// cap in the file means none, JSON having no NaN). Its share of the
// limit caps its import in slots 4–7 below its load, so its battery
// must carry those slots and ends them empty: a degenerate optimum at
// which the interior-point method's factor loses pivots, and which
// once made it report "did not converge" at the root (`hearth sim` exit
// 3). CBC is the truth of feasibility: where it plans, hearth plans
// within milp.GapBound of its cost and the checker accepts the plan;
// where it proves the caps cannot be kept (the caps of slots 4–7
// lowered by shift kW), hearth's error wraps energy.ErrInfeasible and
// names the home and a cap.
func TestHardCapAtEmptyBattery(t *testing.T) {
	cases := []struct {
		name, file string
		// shift moves the caps of slots 4–7 (kW).
		shift float64
		// steps drops the street's import steps, for CBC's cost.
		steps bool
	}{
		{"5 kW street", "hard-cap-5kw.json", 0, false},
		{"6.5 kW street", "hard-cap-6.5kw.json", 0, false},
		{"5 kW street, no steps", "hard-cap-5kw.json", 0, true},
		{"6.5 kW street, no steps", "hard-cap-6.5kw.json", 0, true},
		{"5 kW street, caps 0.5 kW looser", "hard-cap-5kw.json", 0.5, true},
		{"5 kW street, caps 0.01 kW tighter", "hard-cap-5kw.json", -0.01, true},
		{"5 kW street, caps 0.1 kW tighter", "hard-cap-5kw.json", -0.1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := os.ReadFile("testdata/" + c.file)
			if err != nil {
				t.Fatal(err)
			}
			var h energy.Home
			if err := json.Unmarshal(b, &h); err != nil {
				t.Fatal(err)
			}
			if c.steps {
				// CBC's model has no import steps: they price the
				// street's peak, they do not constrain.
				h.Grid.ImportSteps = nil
			}
			for i, v := range h.Grid.Cap {
				switch {
				case v < 0:
					h.Grid.Cap[i] = math.NaN()
				case i >= 4 && i < 8:
					h.Grid.Cap[i] = math.Max(v+c.shift, 0)
				}
			}
			p, err := energy.Solve(context.Background(), &h, energy.Options{})
			if err != nil && !errors.Is(err, energy.ErrInfeasible) {
				t.Fatalf("neither a plan nor energy.ErrInfeasible: %v", err)
			}
			if err == nil {
				if err := plancheck.Check(&h, p).Err(); err != nil {
					t.Fatal(err)
				}
			}
			cbc.Require(t)
			opt, cerr := milp.Solve(context.Background(), &h, t.TempDir())
			switch {
			case errors.Is(cerr, milp.ErrInfeasible):
				if err == nil {
					t.Fatalf("CBC proves the caps cannot be kept; hearth planned at %.5f", p.Cost())
				}
				if msg := err.Error(); !strings.Contains(msg, "home hazel") || !strings.Contains(msg, "cap") {
					t.Errorf("the refusal names neither the home nor the cap: %v", err)
				}
				t.Logf("refused as CBC proves it must be: %v", err)
			case cerr != nil:
				t.Fatal(cerr)
			case err != nil:
				t.Fatalf("CBC plans at %.5f; hearth refused: %v", opt.Cost, err)
			case !c.steps:
				// CBC's optimum leaves the steps out: feasibility only.
				t.Logf("hearth %.5f (coordination %.5f); CBC plans too", p.Cost(), p.Coordination)
			default:
				g := gap(p.Cost(), opt.Cost)
				t.Logf("hearth %.5f, cbc %.5f: gap %.4f%%", p.Cost(), opt.Cost, 100*g)
				if g > milp.GapBound || g < -1e-5 {
					t.Errorf("gap %.3f%% outside [0, %.0f%%]", 100*g, 100*milp.GapBound)
				}
			}
		})
	}
}
