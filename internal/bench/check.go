package bench

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// tolerance is the relative difference under which two objectives are
// equal; generated costs are whole numbers, so sums are exact, but
// instances read from files need not be.
const tolerance = 1e-9

func same(a, b float64) bool {
	return math.Abs(a-b) <= tolerance*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// Score fills every row's Reference and GapPct from the rows of the same
// instance: the reference is the optimum an exact algorithm proved or,
// when none did, the best objective found. Rows without a feasible
// solution keep NaN.
func Score(rows []Row) {
	type ref struct {
		cost  float64
		proof bool
		sense string
	}
	refs := map[string]*ref{}
	for _, r := range rows {
		if r.Status != StatusOK {
			continue
		}
		c := r.cost()
		f := refs[r.Key()]
		switch {
		case f == nil:
			refs[r.Key()] = &ref{c, r.Optimal, r.Sense}
		case r.Optimal && !f.proof:
			*f = ref{c, true, r.Sense}
		case r.Optimal == f.proof && c < f.cost:
			f.cost = c
		}
	}
	for i := range rows {
		r := &rows[i]
		r.Reference, r.GapPct = math.NaN(), math.NaN()
		f := refs[r.Key()]
		if f == nil {
			continue
		}
		r.Reference = f.cost
		if f.sense == "max" {
			r.Reference = -f.cost
		}
		if r.Status == StatusOK {
			r.GapPct = 100 * (r.cost() - f.cost) / math.Max(math.Abs(f.cost), 1e-12)
		}
	}
}

// Check reports what is wrong with rows, all of it joined: error rows
// (a solver failed in a way that is not a time or memory limit), exact
// algorithms that disagree on an instance's optimum or on its
// feasibility, solutions better than a proved optimum, and NaN or
// negative metrics in finished rows.
func Check(rows []Row) error {
	var errs []error
	byKey := map[string][]Row{}
	var keys []string
	for _, r := range rows {
		if r.Status == StatusError {
			errs = append(errs, fmt.Errorf("%s: %s", describe(r), r.Error))
		}
		if r.Status == StatusOK || r.Status == StatusInfeasible {
			for _, m := range []struct {
				name string
				x    float64
			}{{"sim_time_ms", r.SimTimeMs}, {"wall_ms", r.WallMs}, {"nccc", float64(r.NCCC)},
				{"messages", float64(r.Messages)}, {"internal_messages", float64(r.Internal)}} {
				if math.IsNaN(m.x) || m.x < 0 {
					errs = append(errs, fmt.Errorf("%s: %s is %v", describe(r), m.name, m.x))
				}
			}
		}
		if r.Status == StatusOK && (math.IsNaN(r.Objective) || math.IsInf(r.Objective, 0)) {
			errs = append(errs, fmt.Errorf("%s: status ok with objective %v", describe(r), r.Objective))
		}
		k := r.Key()
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], r)
	}
	for _, k := range keys {
		errs = append(errs, checkInstance(byKey[k])...)
	}
	return errors.Join(errs...)
}

// checkInstance compares the rows of one instance.
func checkInstance(rows []Row) []error {
	var errs []error
	var proof *Row
	var provedInfeasible *Row
	for i := range rows {
		r := &rows[i]
		exact := r.Optimal || (r.Status == StatusInfeasible && isExactConfig(*r))
		if !exact {
			continue
		}
		if r.Status == StatusInfeasible {
			provedInfeasible = r
			continue
		}
		if proof == nil {
			proof = r
			continue
		}
		if !same(r.cost(), proof.cost()) {
			errs = append(errs, fmt.Errorf("%s: exact algorithms disagree: %s proved %v, %s proved %v",
				instanceOf(*r), proof.Algorithm, proof.Objective, r.Algorithm, r.Objective))
		}
	}
	for _, r := range rows {
		if r.Status != StatusOK {
			continue
		}
		if provedInfeasible != nil {
			errs = append(errs, fmt.Errorf("%s: %s proved the instance infeasible but %s found objective %v",
				instanceOf(r), provedInfeasible.Algorithm, r.Algorithm, r.Objective))
		}
		if proof != nil && r.cost() < proof.cost() && !same(r.cost(), proof.cost()) {
			errs = append(errs, fmt.Errorf("%s: %s found %v, better than the optimum %v that %s proved",
				instanceOf(r), r.Algorithm, r.Objective, proof.Objective, proof.Algorithm))
		}
	}
	return errs
}

// isExactConfig reports whether a row's configuration proves what it
// returns (used for infeasibility, where Optimal is false).
func isExactConfig(r Row) bool {
	a := Algorithm{Global: r.Global, Local: r.Local}
	return a.Exact()
}

func instanceOf(r Row) string {
	return fmt.Sprintf("%s %s=%s seed %d", r.Experiment, r.Sweep, r.XLabel, r.Seed)
}

func describe(r Row) string {
	return fmt.Sprintf("%s: %s (%s)", instanceOf(r), r.Algorithm, r.Device)
}

// Merge concatenates row sets, such as the CPU rows of this machine and
// the GPU rows of another: a later row replaces an earlier one with the
// same instance, algorithm and device. References and gaps are computed
// again over the union.
func Merge(sets ...[]Row) []Row {
	var out []Row
	at := map[string]int{}
	for _, set := range sets {
		for _, r := range set {
			k := strings.Join([]string{r.Key(), r.Algorithm, r.Device}, "\x00")
			if i, ok := at[k]; ok {
				out[i] = r
				continue
			}
			at[k] = len(out)
			out = append(out, r)
		}
	}
	Score(out)
	return out
}

// sortedLabels returns the distinct x labels of rows in order of X.
func sortedLabels(rows []Row) []string {
	type lx struct {
		label string
		x     float64
	}
	seen := map[string]bool{}
	var ls []lx
	for _, r := range rows {
		if !seen[r.XLabel] {
			seen[r.XLabel] = true
			ls = append(ls, lx{r.XLabel, r.X})
		}
	}
	slices.SortStableFunc(ls, func(a, b lx) int {
		switch {
		case a.x < b.x:
			return -1
		case a.x > b.x:
			return 1
		}
		return 0
	})
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.label
	}
	return out
}
