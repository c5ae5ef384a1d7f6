package compile_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices/compile"
	cbcsolve "github.com/hearth-dcop/hearth/internal/cbc"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// stepsHome writes a random home with one catalogue EV charger (7.4 or
// 11 kW, 60 kWh) and a hard goal by the horizon's end under random
// hourly prices, its levels given by steps (a power_steps line, or ""
// for the catalogue's two), and the goal's figures for the LP.
func stepsHome(seed uint64, steps string) (text string, T int, prices []float64, maxKW, eff, need float64) {
	rng := rand.New(rand.NewPCG(seed, 0x57e9))
	T = 6 + rng.IntN(3)
	kind, maxKW := "ev_wallbox_7kw", 7.4
	if rng.IntN(2) == 0 {
		kind, maxKW = "ev_wallbox_11kw", 11
	}
	eff = 0.89
	initial := float64(10 + rng.IntN(20))
	// Up to half of what the greatest power stores over the horizon,
	// in kWh with one decimal: rarely a whole number of any level.
	need = math.Round(math.Min((0.15+0.35*rng.Float64())*maxKW*eff*float64(T), 55-initial)*10) / 10
	prices = make([]float64, T)
	var ps []string
	for t := range prices {
		prices[t] = float64(10+rng.IntN(40)) / 100
		ps = append(ps, strconv.FormatFloat(prices[t], 'f', -1, 64))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[horizon]\nslots = %d\n[coordination]\nwindows = []\n[objective]\npeak = 0\n[prices]\nper_slot = [%s]\n", T, strings.Join(ps, ", "))
	fmt.Fprintf(&b, "[[home]]\nname = \"h\"\nbackground_kw = 0\n[[home.device]]\nname = \"ev\"\nkind = %q\n%s\ninitial = { charge = %g }\n", kind, steps, initial)
	fmt.Fprintf(&b, "rules = [{ rule = \"charge geq %g before %02d:00\", hard = true }]\n", initial+need, T)
	return b.String(), T, prices, maxKW, eff, need
}

// continuousLP is the continuous optimum of a stepsHome: any power from
// 0 to the greatest in each slot, the goal's energy stored at the
// efficiency, each kWh at its slot's price. Written from the home's
// figures alone.
func continuousLP(T int, prices []float64, maxKW, eff, need float64) string {
	var p cbcsolve.Program
	var stored []string
	for t := range T {
		p.Objective = append(p.Objective, fmt.Sprintf("+ %g p%d", prices[t], t))
		stored = append(stored, fmt.Sprintf("+ %g p%d", eff, t))
		p.Bounds = append(p.Bounds, fmt.Sprintf("0 <= p%d <= %g", t, maxKW))
	}
	p.Rows = append(p.Rows, strings.Join(stored, " ")+fmt.Sprintf(" >= %g", need))
	return p.String()
}

// TestAutoStepsAgainstLP: on seeded homes with an EV and a goal, the
// automatic power levels (power_steps = "auto") bring the compiled
// optimum closer to the continuous optimum CBC finds than the
// catalogue's two fixed levels do: the mean gap shrinks, and no home's
// gap exceeds what its quantum allows (one quantum of stored energy
// and the rounding of each slot's current, at the dearest price).
func TestAutoStepsAgainstLP(t *testing.T) {
	if _, err := exec.LookPath("cbc"); err != nil {
		t.Skip("cbc is not installed (Debian: coinor-cbc)")
	}
	homes := 12
	if raceEnabled {
		homes = 4
	}
	var gapFixed, gapAuto float64
	for seed := range uint64(homes) {
		var got [2]float64
		var lpText string
		for i, steps := range []string{"", `power_steps = "auto"`} {
			text, T, prices, maxKW, eff, need := stepsHome(seed, steps)
			lpText = continuousLP(T, prices, maxKW, eff, need)
			cfg, err := config.Parse(fmt.Sprintf("steps%d.toml", seed), []byte(text), nil)
			if err != nil {
				t.Fatalf("seed %d: %v\n%s", seed, err, text)
			}
			c, err := compile.Compile(cfg.Neighbourhood, compile.Options{})
			if err != nil {
				t.Fatalf("seed %d: %v\n%s", seed, err, text)
			}
			lp := mva.NewLocalProblem(c.Problem, mva.Whole(c.Problem))
			s, err := local.New("be", lp)
			if err != nil {
				t.Fatal(err)
			}
			got[i], err = s.SolveRow(context.Background(), nil, make([]int, lp.NumInterior()))
			if err != nil || math.IsInf(got[i], 1) {
				t.Fatalf("seed %d: %v %v\n%s", seed, got[i], err, text)
			}
		}
		want, ok := cbcsolve.Solve(t, lpText)
		if !ok {
			t.Fatalf("seed %d: the continuous LP is infeasible\n%s", seed, lpText)
		}
		if got[0] < want-1e-6 || got[1] < want-1e-6 {
			t.Fatalf("seed %d: a discrete plan (%g fixed, %g auto) beats the continuous optimum %g", seed, got[0], got[1], want)
		}
		gf, ga := (got[0]-want)/want, (got[1]-want)/want
		t.Logf("seed %d: continuous %.4f, two levels %.4f (+%.1f%%), automatic %.4f (+%.1f%%)", seed, want, got[0], 100*gf, got[1], 100*ga)
		gapFixed += gf
		gapAuto += ga
	}
	gapFixed /= float64(homes)
	gapAuto /= float64(homes)
	t.Logf("mean gap to the continuous optimum: two levels %.2f%%, automatic %.2f%%", 100*gapFixed, 100*gapAuto)
	if gapAuto >= gapFixed {
		t.Fatalf("automatic levels' mean gap %.2f%% is not below the two levels' %.2f%%", 100*gapAuto, 100*gapFixed)
	}
}
