package samplertest

import (
	"fmt"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
)

// Chain is one configuration of the distribution tests' chains: the
// sampler (an index into the kinds gibbs, mh-normal, mh-discrete, in that
// order), the boundary row, the sampler options that matter here (zero
// meaning the samplers' default) and which trials count: every Thin-th
// after Burn, in each run.
type Chain struct {
	Kind, Row    int
	Seed         uint64
	Runs, Trials int
	Temperature  float64
	RepairSweeps int
	Burn, Thin   int
	NoHastings   bool // accept the normal proposal without its Hastings correction
}

// Recorder runs a chain configuration on DistProblem's agent and returns
// how often each interior state (StateIndex over the interior domains)
// was visited at the counted trials.
type Recorder[C int | uint64] func(c Chain) []C

// Stationary is the distribution test of the samplers, written once so
// that the CPU samplers and their device twins pass the very same one:
// the states visited by long chains against π(z) ∝ exp(−cost(z)/τ) by
// enumeration, for each kind, on two rows and two temperatures, by a
// chi-square test at level 10⁻⁶ (on thinned chains, so that the samples
// are close to independent), with negative controls that must fail it:
// the same samples against π at a temperature 25% off, and the normal
// proposal accepted as the paper writes it, without the Hastings
// correction for clamping. names are the kinds' names, in Chain.Kind's
// order; lp is DistProblem(t).
func Stationary[C int | uint64](t testing.TB, lp *mva.LocalProblem, names []string, record Recorder[C]) {
	t.Helper()
	if len(names) != 3 || names[1] != "mh-normal" {
		t.Fatalf("kinds %v, want gibbs, mh-normal, mh-discrete", names)
	}
	thin := []int{4, 8, 16} // per kind: MH moves less per trial
	cases := []struct {
		row int
		tau float64
	}{{0, 1}, {0, 0.5}, {1, 1}}
	for k := range names {
		for _, c := range cases {
			name := fmt.Sprintf("%s row %d τ=%v", names[k], c.row, c.tau)
			counts := record(Chain{Kind: k, Row: c.row, Seed: uint64(10*k + c.row), Runs: 40, Trials: 1000 * thin[k],
				Temperature: c.tau, Burn: 100, Thin: thin[k]})
			chi, df := ChiSquare(counts, Target(lp, c.row, c.tau))
			lim := ChiLimit(df)
			wrong, _ := ChiSquare(counts, Target(lp, c.row, 1.25*c.tau))
			t.Logf("%s: χ² = %.1f (df %d, limit %.1f); against τ×1.25: %.1f", name, chi, df, lim, wrong)
			if df != 29 {
				t.Fatalf("%d feasible states, want 30", df+1)
			}
			if chi > lim {
				t.Errorf("%s: χ² = %.1f > %.1f: not sampling π", name, chi, lim)
			}
			if wrong < 4*lim {
				t.Errorf("%s: negative control χ² = %.1f, not above 4×%.1f: the test lacks power", name, wrong, lim)
			}
		}
	}

	// Without the Hastings ratio the clamped normal proposal favours the
	// ends of the 3-value domains: the chain misses π.
	counts := record(Chain{Kind: 1, Row: 0, Seed: 7, Runs: 40, Trials: 8000, Burn: 100, Thin: 8, NoHastings: true})
	chi, df := ChiSquare(counts, Target(lp, 0, 1))
	t.Logf("mh-normal without Hastings correction: χ² = %.1f (limit %.1f)", chi, ChiLimit(df))
	if chi < 4*ChiLimit(df) {
		t.Errorf("mh-normal without Hastings correction: χ² = %.1f, expected far above %.1f", chi, ChiLimit(df))
	}
}

// LeavesInfeasibility checks that chains started infeasible with repair
// off still reach π (the lexicographic energy walks them out): the
// chi-square test of Stationary on row 1, for each kind.
func LeavesInfeasibility[C int | uint64](t testing.TB, lp *mva.LocalProblem, names []string, record Recorder[C]) {
	t.Helper()
	for k := range names {
		counts := record(Chain{Kind: k, Row: 1, Seed: 5, Runs: 40, Trials: 8000, RepairSweeps: -1, Burn: 100, Thin: 16})
		chi, df := ChiSquare(counts, Target(lp, 1, 1))
		if lim := ChiLimit(df); chi > lim {
			t.Errorf("%s without repair: χ² = %.1f > %.1f", names[k], chi, lim)
		}
	}
}
