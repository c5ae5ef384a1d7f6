package dmcmc

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/mva/gen"
	"github.com/hearth-dcop/hearth/sampler"
)

// TestWriteMeetingCSV runs a small comparison and checks the CSV against
// its own columns: one line per agent count, seed and algorithm, DPOP's
// cost as every line's optimum, gaps recomputed from cost and optimum,
// sampler columns only for DMCMC.
func TestWriteMeetingCSV(t *testing.T) {
	b := MeetingBench{
		Agents: []int{2, 3}, Seeds: 2,
		Gibbs:  sampler.Options{Runs: 2, Trials: 10, Temperature: 5},
		MH:     sampler.Options{Runs: 3, Trials: 20, Temperature: 5},
		Rounds: 5,
	}
	b.Meeting = gen.DefaultMeeting()
	b.Meeting.Vars = 5
	var buf bytes.Buffer
	if err := WriteMeetingCSV(context.Background(), &buf, b); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(recs[0], MeetingHeader) {
		t.Fatalf("header %v", recs[0])
	}
	recs = recs[1:]
	if want := 2 * 2 * len(Algorithms()); len(recs) != want {
		t.Fatalf("%d lines, want %d", len(recs), want)
	}
	col := func(r []string, name string) string { return r[slices.Index(MeetingHeader, name)] }
	f := func(s string) float64 {
		if s == "inf" {
			return math.Inf(1)
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return x
	}
	for i, r := range recs {
		alg := Algorithms()[i%len(Algorithms())]
		agents := []string{"2", "3"}[i/(2*len(Algorithms()))]
		seed := strconv.Itoa(1 + i/len(Algorithms())%2)
		if col(r, "algorithm") != alg || col(r, "agents") != agents || col(r, "seed") != seed {
			t.Fatalf("line %d: %v, want %s agents %s seed %s", i, r, alg, agents, seed)
		}
		cost, opt, gap := f(col(r, "cost")), f(col(r, "optimum")), col(r, "gap")
		if alg == AlgDPOP && (cost != opt || gap != "0") {
			t.Errorf("line %d: DPOP's cost %v, optimum %v, gap %s", i, cost, opt, gap)
		}
		if cost < opt {
			t.Errorf("line %d: %s's cost %v below the optimum %v", i, alg, cost, opt)
		}
		if g := f(gap); !math.IsInf(cost, 1) && math.Abs(g-(cost-opt)/opt) > 1e-12 {
			t.Errorf("line %d: gap %v for cost %v and optimum %v", i, g, cost, opt)
		}
		sampling := alg == AlgDMCMCGibbs || alg == AlgDMCMCMH
		if (col(r, "runs") != "") != sampling || (col(r, "trials") != "") != sampling {
			t.Errorf("line %d: %s with runs %q trials %q", i, alg, col(r, "runs"), col(r, "trials"))
		}
		if alg == AlgDMCMCMH && (col(r, "runs") != "3" || col(r, "trials") != "20") {
			t.Errorf("line %d: MH runs %s trials %s, want 3 and 20", i, col(r, "runs"), col(r, "trials"))
		}
		if f(col(r, "wall_ms")) <= 0 || f(col(r, "sim_ms")) <= 0 {
			t.Errorf("line %d: times %s, %s", i, col(r, "wall_ms"), col(r, "sim_ms"))
		}
	}
}

func TestRunMeetingOptions(t *testing.T) {
	ctx := context.Background()
	small := MeetingBench{Agents: []int{2}, Seeds: 1, Gibbs: sampler.Options{Runs: 1, Trials: 2}}
	small.Meeting = gen.DefaultMeeting()
	small.Meeting.Vars = 3
	// Without DPOP the optimum and the gaps are unknown.
	b := small
	b.Algorithms = []string{AlgDMCMCGibbs}
	var rows []MeetingRow
	if err := RunMeeting(ctx, b, func(r MeetingRow) error { rows = append(rows, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || !math.IsNaN(rows[0].Optimum) || !math.IsNaN(rows[0].Gap) || rows[0].Runs != 1 {
		t.Errorf("rows %+v", rows)
	}
	stop := errors.New("stop")
	if err := RunMeeting(ctx, small, func(MeetingRow) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("emit's error not returned: %v", err)
	}
	for name, bad := range map[string]MeetingBench{
		"one agent":  {Agents: []int{1}},
		"seeds":      {Seeds: -1},
		"exact":      {Exact: "gibbs"},
		"algorithm":  {Algorithms: []string{"dsa"}},
		"rounds":     {Rounds: -2},
		"generation": {Meeting: gen.MeetingOptions{Agents: 2, Vars: 0}},
	} {
		if err := RunMeeting(ctx, bad, func(MeetingRow) error { return nil }); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := RunMeeting(cctx, small, func(MeetingRow) error { return nil }); err == nil {
		t.Error("a cancelled context ran to the end")
	}
}

func TestGap(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct{ cost, opt, want float64 }{
		{110, 100, 0.1}, {100, 100, 0}, {-90, -100, 0.1}, {inf, 100, inf}, {5, nan, nan}, {5, inf, nan}, {0, 0, 0}, {1, 0, inf},
	} {
		if got := Gap(c.cost, c.opt); !(got == c.want || math.IsNaN(got) && math.IsNaN(c.want)) && math.Abs(got-c.want) > 1e-15 {
			t.Errorf("Gap(%v, %v) = %v, want %v", c.cost, c.opt, got, c.want)
		}
	}
}

// BenchmarkDMCMCvsDPOP solves five-agent meeting instances (the thesis's
// settings, seeds 1–5 in turn) with DPOP and with DMCMC (Gibbs: R = 10,
// T = 100; MH: the same budget), all in the same iteration, and reports
// DPOP's wall time over each DMCMC's (x-faster: above 1 means DMCMC is
// faster) and DMCMC's mean gap to DPOP's optimum in percent. DPOP runs
// with BE (the command line's default local solver) and with DFBnB.
func BenchmarkDMCMCvsDPOP(b *testing.B) {
	mo := gen.DefaultMeeting()
	mo.Agents = 5
	mh := DefaultMH
	mh.Runs, mh.Trials = DefaultGibbs.Runs, DefaultGibbs.Trials
	for _, local := range []string{"be", "dfbnb"} {
		b.Run("dpop-"+local, func(b *testing.B) {
			var dpopT, gibbsT, mhT time.Duration
			var gibbsGap, mhGap float64
			n := 0
			timed := func(run func()) time.Duration {
				s := time.Now()
				run()
				return time.Since(s)
			}
			for b.Loop() {
				seed := uint64(n%5 + 1)
				p, err := gen.Meeting(seed, mo)
				if err != nil {
					b.Fatal(err)
				}
				var opt, g, m float64
				dpopT += timed(func() { opt = solveB(b, p, exact(local, seed)) })
				gibbsT += timed(func() { g = solveB(b, p, dmcmcB(b, "gibbs", DefaultGibbs, seed)) })
				mhT += timed(func() { m = solveB(b, p, dmcmcB(b, "mh", mh, seed)) })
				gibbsGap += Gap(g, opt)
				mhGap += Gap(m, opt)
				n++
			}
			b.ReportMetric(float64(dpopT)/float64(gibbsT), "dpop/gibbs-wall")
			b.ReportMetric(float64(dpopT)/float64(mhT), "dpop/mh-wall")
			b.ReportMetric(100*gibbsGap/float64(n), "gibbs-gap-%")
			b.ReportMetric(100*mhGap/float64(n), "mh-gap-%")
		})
	}
}
