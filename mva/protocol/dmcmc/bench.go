package dmcmc

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/gen"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
	"github.com/hearth-dcop/hearth/mva/protocol/mgm"
	"github.com/hearth-dcop/hearth/mva/protocol/mgm2"
	"github.com/hearth-dcop/hearth/mva/sim"
	"github.com/hearth-dcop/hearth/sampler"
)

// The algorithms of the meeting comparison, as the CSV names them.
const (
	AlgDMCMCGibbs = "dmcmc-gibbs"
	AlgDMCMCMH    = "dmcmc-mh"
	AlgDPOP       = "dpop"
	AlgMGM        = "mgm"
	AlgMGM2       = "mgm2"
)

// Algorithms lists every algorithm of the comparison, DPOP first: its
// optimum is the reference of the others' gaps.
func Algorithms() []string {
	return []string{AlgDPOP, AlgDMCMCGibbs, AlgDMCMCMH, AlgMGM, AlgMGM2}
}

// FigureAgents are the agent counts of the thesis's Figure 5.7 (DMCMC
// against DPOP, MGM and MGM-2, 2 to 100 agents).
var FigureAgents = []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 40, 60, 80, 100}

// DefaultGibbs is DMCMC-Gibbs's sampling in the comparison: the thesis's
// R = 10 runs of T = 100 sweeps, at τ = 5. Meeting costs are priorities
// (1–10) times dislikes (0–10), so at the sampler's default τ = 1 one unit
// of cost already weighs e, the chains are nearly greedy and stall in the
// local minima the conflict constraints make: over 20 five-agent
// instances the mean gap to the optimum is 4.1% at τ = 1, 1.9% at τ = 2,
// 0.5% at τ = 5 and 1.9% at τ = 10.
var DefaultGibbs = sampler.Options{Runs: 10, Trials: 100, Temperature: 5}

// DefaultMH is DMCMC-MH's sampling: the thesis's R = 100 runs of T = 500
// proposals with the paper's normal proposal, at the same τ as Gibbs.
var DefaultMH = sampler.Options{Runs: 100, Trials: 500, Temperature: 5}

// MeetingBench configures WriteMeetingCSV and RunMeeting. The zero value
// runs every algorithm on three instances of 2, 5 and 10 agents.
type MeetingBench struct {
	// Agents lists the agent counts, each at least 2; nil means 2, 5 and
	// 10. FigureAgents is the thesis's range.
	Agents []int
	// Seeds is the number of instances per agent count (generator seeds
	// 1..Seeds); 0 means 3. Every algorithm run on an instance uses its
	// seed too.
	Seeds int
	// Meeting shapes the instances (its Agents is overwritten); the zero
	// value means gen.DefaultMeeting(), the thesis's settings.
	Meeting gen.MeetingOptions
	// Gibbs and MH configure DMCMC's samplers; their Seed is ignored. Zero
	// values mean DefaultGibbs and DefaultMH.
	Gibbs, MH sampler.Options
	// Exact is the exact local solver of DPOP, MGM and MGM-2: "dfbnb"
	// (the default: 10–20 times faster than "be" on these agents, whose 9
	// private events form dense conflict graphs) or "be".
	Exact string
	// Rounds is the number of MGM and MGM-2 rounds; 0 means their default.
	Rounds int
	// Algorithms restricts the runs to these names (see Algorithms); nil
	// means all. Without DPOP the optimum and the gaps are unknown.
	Algorithms []string
}

// MeetingRow is one run of the comparison, one CSV line.
type MeetingRow struct {
	Agents    int
	Algorithm string
	Seed      uint64
	// Runs and Trials are the sampler's R and T (0 for the others).
	Runs, Trials int
	// WallMs is the run's wall-clock time (tables included), SimMs its
	// simulated time (agents compute concurrently; mva.Metrics).
	WallMs, SimMs float64
	// Cost is the true cost of the answer, +Inf when it is infeasible.
	Cost float64
	// Optimum is DPOP's cost on the same instance, NaN when DPOP was not
	// run; Gap is (Cost − Optimum)/|Optimum|, NaN when unknown (and +Inf
	// for an infeasible answer).
	Optimum, Gap float64
}

func (b MeetingBench) withDefaults() (MeetingBench, error) {
	if b.Agents == nil {
		b.Agents = []int{2, 5, 10}
	}
	for _, n := range b.Agents {
		if n < 2 {
			return b, fmt.Errorf("dmcmc: %d agents: a meeting needs at least 2", n)
		}
	}
	switch {
	case b.Seeds == 0:
		b.Seeds = 3
	case b.Seeds < 0:
		return b, fmt.Errorf("dmcmc: %d seeds", b.Seeds)
	}
	if b.Meeting == (gen.MeetingOptions{}) {
		b.Meeting = gen.DefaultMeeting()
	}
	if b.Gibbs == (sampler.Options{}) {
		b.Gibbs = DefaultGibbs
	}
	if b.MH == (sampler.Options{}) {
		b.MH = DefaultMH
	}
	if b.Exact == "" {
		b.Exact = "dfbnb"
	}
	if !slices.Contains(local.Names(), b.Exact) {
		return b, fmt.Errorf("dmcmc: unknown exact local solver %q", b.Exact)
	}
	if b.Rounds < 0 {
		return b, fmt.Errorf("dmcmc: %d rounds", b.Rounds)
	}
	if b.Algorithms == nil {
		b.Algorithms = Algorithms()
	}
	for _, a := range b.Algorithms {
		if !slices.Contains(Algorithms(), a) {
			return b, fmt.Errorf("dmcmc: unknown algorithm %q (valid: %v)", a, Algorithms())
		}
	}
	return b, nil
}

// RunMeeting runs the comparison and hands every run to emit as soon as
// it is done: for each agent count and seed, DPOP first (when selected),
// whose optimum the other rows of the instance are measured against.
func RunMeeting(ctx context.Context, b MeetingBench, emit func(MeetingRow) error) error {
	b, err := b.withDefaults()
	if err != nil {
		return err
	}
	order := slices.DeleteFunc(Algorithms(), func(a string) bool { return !slices.Contains(b.Algorithms, a) })
	for _, n := range b.Agents {
		mo := b.Meeting
		mo.Agents = n
		for seed := uint64(1); seed <= uint64(b.Seeds); seed++ {
			p, err := gen.Meeting(seed, mo)
			if err != nil {
				return fmt.Errorf("dmcmc: %w", err)
			}
			opt := math.NaN()
			for _, alg := range order {
				row, err := b.run(ctx, alg, p, seed)
				if err != nil {
					return fmt.Errorf("dmcmc: %d agents, seed %d, %s: %w", n, seed, alg, err)
				}
				row.Agents = n
				if alg == AlgDPOP {
					opt = row.Cost
				}
				row.Optimum, row.Gap = opt, Gap(row.Cost, opt)
				if err := emit(row); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Gap is the relative gap (cost − optimum)/|optimum|: 0 at the optimum,
// NaN when the optimum is unknown (NaN or infinite), +Inf for an
// infeasible cost. An optimum of 0 gives 0 for a cost of 0 and +Inf above.
func Gap(cost, optimum float64) float64 {
	switch {
	case math.IsNaN(optimum) || math.IsInf(optimum, 0):
		return math.NaN()
	case math.IsInf(cost, 1):
		return math.Inf(1)
	case cost == optimum:
		return 0
	case optimum == 0:
		return math.Inf(1)
	}
	return (cost - optimum) / math.Abs(optimum)
}

// run solves p with one algorithm.
func (b MeetingBench) run(ctx context.Context, alg string, p *mva.Problem, seed uint64) (MeetingRow, error) {
	row := MeetingRow{Algorithm: alg, Seed: seed}
	exact := func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New(b.Exact, lp) }
	var params map[string]float64
	if b.Rounds > 0 {
		params = map[string]float64{"rounds": float64(b.Rounds)}
	}
	var o sim.Options
	var err error
	switch alg {
	case AlgDPOP:
		o = sim.Options{Protocol: dpop.New, Solver: exact, Eager: true, Seed: seed}
	case AlgMGM:
		o = sim.Options{Protocol: mgm.New, Solver: exact, Seed: seed, Params: params}
	case AlgMGM2:
		o = sim.Options{Protocol: mgm2.New, Solver: exact, Seed: seed, Params: params}
	case AlgDMCMCGibbs:
		row.Runs, row.Trials = b.Gibbs.Runs, b.Gibbs.Trials
		o, err = SimOptions("gibbs", b.Gibbs, seed, nil)
	case AlgDMCMCMH:
		row.Runs, row.Trials = b.MH.Runs, b.MH.Trials
		o, err = SimOptions("mh", b.MH, seed, nil)
	}
	if err != nil {
		return row, err
	}
	start := time.Now()
	sol, err := sim.Solve(ctx, p, o)
	if err != nil {
		return row, err
	}
	row.WallMs = float64(time.Since(start).Microseconds()) / 1000
	row.SimMs = sol.Outcome.Metrics.SimTimeMs
	row.Cost = sol.Cost
	return row, nil
}

// MeetingHeader is the CSV header of WriteMeetingCSV.
var MeetingHeader = []string{"agents", "algorithm", "seed", "runs", "trials", "wall_ms", "sim_ms", "cost", "optimum", "gap"}

// WriteMeetingCSV runs the comparison (RunMeeting) and writes one CSV line
// per run under MeetingHeader, flushed as it goes so that a long run can
// be watched: runs and trials are empty for algorithms that do not
// sample, optimum and gap empty when unknown, cost and gap "inf" for an
// infeasible answer; gap is a fraction (0.01 is 1%). Times are in
// milliseconds.
func WriteMeetingCSV(ctx context.Context, w io.Writer, b MeetingBench) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(MeetingHeader); err != nil {
		return fmt.Errorf("dmcmc: %w", err)
	}
	num := func(x float64) string {
		switch {
		case math.IsNaN(x):
			return ""
		case math.IsInf(x, 1):
			return "inf"
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	count := func(x int) string {
		if x == 0 {
			return ""
		}
		return strconv.Itoa(x)
	}
	err := RunMeeting(ctx, b, func(r MeetingRow) error {
		rec := []string{
			strconv.Itoa(r.Agents), r.Algorithm, strconv.FormatUint(r.Seed, 10),
			count(r.Runs), count(r.Trials),
			strconv.FormatFloat(r.WallMs, 'f', 3, 64), strconv.FormatFloat(r.SimMs, 'f', 3, 64),
			num(r.Cost), num(r.Optimum), num(r.Gap),
		}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("dmcmc: %w", err)
		}
		cw.Flush()
		return cw.Error()
	})
	cw.Flush()
	if err != nil {
		return err
	}
	return cw.Error()
}
