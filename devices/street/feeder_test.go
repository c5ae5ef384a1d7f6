package street_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/plancheck"
	"github.com/hearth-dcop/hearth/devices/street"
	"github.com/hearth-dcop/hearth/internal/cbc"
)

// TestFeederAgainstCBC: small mixed streets (three seeded energy homes
// and the compiled homes' fixed load and committed caps) under a feeder
// limit that binds, soft and hard. The coordinated plans pass the
// checker, the street's committed caps (plancheck.CheckFeeder, the
// energy homes' highest import per window) keep a hard limit and exceed
// a soft one by no more than CBC's optimum of the whole street as one
// LP does plus rounding, and the street's objective ends within the
// bound below of that LP's optimum, a lower bound on the joint optimum.
func TestFeederAgainstCBC(t *testing.T) {
	cbc.Require(t)
	cases := []struct {
		name string
		seed uint64
		// share is the limit as a share of the street's committed
		// caps with the energy homes planned alone.
		share float64
		hard  bool
		// bound is the gap allowed to CBC's lower bound: best
		// responses under a shared limit stop where no one home can
		// gain alone (measured: see the log).
		bound float64
	}{
		{"soft, binding", 11, 0.7, false, 0.01},
		{"hard, binding", 12, 0.75, true, 0.01},
		{"soft, tight", 13, 0.5, false, 0.01},
		{"hard, loose", 14, 1.2, true, 0.01},
		{"soft, beyond reach", 15, 0.2, false, 0.01},
		{"hard, beyond reach", 16, 0.2, true, 0},
	}
	for i, c := range cases {
		if raceEnabled && i%2 == 1 {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			T := 8
			hs := genStreet(c.seed, 3, T)
			r := rand.New(rand.NewPCG(c.seed, 3))
			base := make([]float64, T)
			for t := range T {
				base[t] = 1 + 4*r.Float64()
			}
			windows := []devices.Window{{From: 0, To: 3}, {From: 3, To: 6}, {From: 6, To: 8}}
			committed := make([]float64, len(windows))
			for w, win := range windows {
				for t := win.From; t < win.To; t++ {
					committed[w] = math.Max(committed[w], base[t])
				}
			}
			pk := peakOver(0.02, T)
			ctx := context.Background()
			ms := plannedAlone(t, hs)
			alone := plancheck.CheckFeeder(0, false, windows, committed, plans(ms))
			limit := c.share * slicesMax(alone.CommittedKW)
			f := street.Feeder{Limit: limit, Hard: c.hard, Miss: 100, Windows: windows, Committed: committed}
			s := &street.Street{Peak: pk, Compiled: [][]float64{base}, Feeder: f}
			res, err := street.CoordinateStreet(ctx, ms, s, street.Options{})
			lb, cerr := lowerBoundErr(t, hs, base, pk, &f)
			switch {
			case errors.Is(cerr, cbc.ErrInfeasible):
				if !errors.Is(err, energy.ErrInfeasible) {
					t.Fatalf("CBC proves the limit of %.2f kW cannot be kept; the street says %v", limit, err)
				}
				t.Logf("limit %.2f kW: refused as CBC proves it must be: %v", limit, err)
				return
			case cerr != nil:
				t.Fatal(cerr)
			case c.hard && errors.Is(err, energy.ErrInfeasible):
				t.Fatalf("refused a hard limit of %.2f kW that CBC keeps at %.4f: %v", limit, lb, err)
			case err != nil:
				t.Fatal(err)
			}
			for _, m := range ms {
				if err := plancheck.Check(m.Home, m.Plan).Err(); err != nil {
					t.Fatal(err)
				}
			}
			fr := plancheck.CheckFeeder(limit, c.hard, windows, committed, plans(ms))
			if len(fr.Violations) > 0 {
				t.Errorf("hard limit broken: %v", fr.Violations)
			}
			gap := (res.Final - lb) / math.Max(math.Abs(lb), 1)
			t.Logf("limit %.2f kW (alone caps %v): committed %v, excess %v; objective alone %.4f, coordinated %.4f (%d rounds, %d moves), CBC lower bound %.4f, gap %.3f%%", limit, rounded(alone.CommittedKW), rounded(fr.CommittedKW), rounded(fr.ExcessKW), res.Start, res.Final, res.Rounds, res.Moves, lb, 100*gap)
			if gap < -1e-4 {
				t.Errorf("objective %.5f below CBC's lower bound %.5f: the models differ", res.Final, lb)
			}
			if gap > c.bound {
				t.Errorf("objective %.5f is %.2f%% above CBC's lower bound %.5f", res.Final, 100*gap, lb)
			}
			if res.Final > res.Start+1e-9 {
				t.Errorf("coordination raised the objective %.5f → %.5f", res.Start, res.Final)
			}
		})
	}
}

func plans(ms []*street.Member) []*energy.Plan {
	out := make([]*energy.Plan, len(ms))
	for i, m := range ms {
		out[i] = m.Plan
	}
	return out
}

func slicesMax(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

func rounded(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Round(x*100) / 100
	}
	return out
}

// TestHardFeederEnergyRun: the three energy homes of
// cmd/hearth/testdata/energy-run under a hard feeder limit. At 5 and
// 6.5 kW hazel's share of the limit caps its import below its load in
// slots 4–7, so that its battery must carry them and ends them empty: a
// degenerate programme on which the planner once reported "the
// interior-point method did not converge" (`hearth sim` exit 3). Every
// limit ends either in plans that pass the checker and keep the limit,
// or in an error wrapping energy.ErrInfeasible that names the feeder
// limit — never another error — and CBC's relaxation of the whole
// street (a lower bound: no minimum charging power) is the truth where
// it proves a limit cannot be kept. CBC's MILP of the whole street with
// the real minimum charging power and plugged-in slots decides every
// limit: the street keeps each one the MILP keeps (4 kW only with the
// breakout phases, 4.25 and 4.5 kW only since a home whose capped answer
// is infeasible answers with the windows priced) and refuses the one it
// proves infeasible (3 kW).
func TestHardFeederEnergyRun(t *testing.T) {
	cases := []struct {
		limit float64
		// kept: the street keeps the limit (measured; CBC's
		// relaxation keeps 5, 6.5 and 8 kW and proves 3 kW cannot
		// be kept).
		kept bool
		// race: the case also runs under the race detector, where
		// each costs seconds of best responses (devices/energy's
		// TestHardCapAtEmptyBattery keeps hazel's 5 and 6.5 kW
		// programmes, TestFeederAgainstCBC a refused hard limit).
		race bool
	}{
		{5, true, true},
		{6.5, true, false},
		{8, true, false},
		{3, false, false},
		{4, true, false},
		{4.25, true, false},
		{4.5, true, false},
	}
	_, noCBC := exec.LookPath("cbc")
	for _, c := range cases {
		t.Run(fmt.Sprintf("%g kW", c.limit), func(t *testing.T) {
			if raceEnabled && !c.race {
				t.Skip("seconds of best responses under the race detector")
			}
			cfg, err := config.Load("../../cmd/hearth/testdata/energy-run/street.toml")
			if err != nil {
				t.Fatal(err)
			}
			n := cfg.Neighbourhood
			n.FeederLimit, n.FeederSoft = c.limit, false
			rest, ms, err := street.Split(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(rest.Homes) != 0 || len(ms) != 3 {
				t.Fatalf("%d compiled and %d energy homes, want 0 and 3", len(rest.Homes), len(ms))
			}
			s := street.StreetOf(n, ms, nil, nil)
			ctx := context.Background()
			if err := street.PlanAlone(ctx, ms, street.Options{}); err != nil {
				t.Fatal(err)
			}
			res, err := street.CoordinateStreet(ctx, ms, s, street.Options{})
			if err != nil {
				if !errors.Is(err, energy.ErrInfeasible) || !strings.Contains(err.Error(), fmt.Sprintf("hard feeder limit %g kW", c.limit)) {
					t.Fatalf("neither plans nor a refusal naming the feeder limit: %v", err)
				}
				t.Logf("refused: %v", err)
			} else {
				for _, m := range ms {
					if err := plancheck.Check(m.Home, m.Plan).Err(); err != nil {
						t.Fatal(err)
					}
				}
				fr := plancheck.CheckFeeder(c.limit, true, s.Feeder.Windows, nil, plans(ms))
				if len(fr.Violations) > 0 {
					t.Fatalf("hard limit broken: %v", fr.Violations)
				}
				t.Logf("kept: committed %v kW after %d rounds, %d moves", rounded(fr.CommittedKW), res.Rounds, res.Moves)
			}
			if (err == nil) != c.kept {
				t.Errorf("kept %v, want %v: %v", err == nil, c.kept, err)
			}
			if noCBC != nil {
				return
			}
			var hs []*energy.Home
			for _, m := range ms {
				hs = append(hs, m.Home)
			}
			f := s.Feeder
			f.Committed = make([]float64, len(f.Windows))
			_, cerr := lowerBoundErr(t, hs, nil, s.Peak, &f)
			switch {
			case errors.Is(cerr, cbc.ErrInfeasible):
				if err == nil {
					t.Fatalf("CBC proves the limit of %g kW cannot be kept; the street kept it", c.limit)
				}
				t.Logf("CBC proves it infeasible")
			case cerr != nil:
				t.Fatal(cerr)
			default:
				t.Logf("CBC's relaxation keeps it")
			}
			// Whether any plan of the street keeps the limit: the MILP
			// with the real minimum charging power, without the peak
			// term (it does not change what is feasible; with it CBC
			// takes half a minute).
			_, merr := streetCBC(t, hs, nil, street.Peak{}, &f, true)
			switch {
			case errors.Is(merr, cbc.ErrInfeasible):
				if err == nil {
					t.Fatalf("CBC's MILP proves the limit of %g kW cannot be kept; the street kept it", c.limit)
				}
				t.Logf("CBC's MILP with the minimum charging power proves it infeasible")
			case merr != nil:
				t.Fatal(merr)
			case err != nil:
				t.Errorf("CBC's MILP with the minimum charging power keeps the limit of %g kW; the best responses end above it", c.limit)
			default:
				t.Logf("CBC's MILP with the minimum charging power keeps it")
			}
		})
	}
}
