// Package local holds hearth's exact local solvers: the algorithms that
// fill the rows of an agent's MVA table, the best assignment of its interior
// variables for each assignment of its boundary variables (see mva.Table).
//
//   - BruteForce enumerates every interior assignment. It is the reference
//     the others are tested against, usable only on small interiors.
//   - DFBnB is depth-first branch and bound with an incremental lower bound.
//     Its memory is linear, so it always runs; its time depends on pruning.
//   - BE is bucket elimination. Its time and memory are exponential in the
//     induced width only, and it fills a whole MVA table at once (eager),
//     much faster than row by row when the width is small.
//   - AOBB is AND/OR branch and bound over a pseudo-tree with context
//     caching and mini-bucket heuristics, within a memory budget: exact
//     where BE's tables explode, degrading (smaller i-bound, fewer caches)
//     instead of failing past the budget.
//   - EDAC is depth-first branch and bound maintaining existential
//     directional arc consistency, toulbar2's bound: linear memory, strong
//     where the functions are mostly binary.
//
// Choose and Auto pick BE or AOBB for a subproblem and say why.
//
// The table kernel (Factor, JoinProject) is the join-sum-and-minimise
// operation on dense tables. Bucket elimination runs it once per bucket,
// and DPOP's UTIL phase and the GPU solvers run the same operation, so it
// lives here, planned once and tuned once, instead of in each of them.
//
// Solvers are not safe for concurrent use; create one per goroutine.
package local

import (
	"fmt"
	"strings"

	"github.com/hearth-dcop/hearth/mva"
)

// Names returns the solvers New knows, in the order the command line shows
// them.
func Names() []string { return []string{"dfbnb", "be", "aobb", "edac", "vac", "bruteforce"} }

// New returns the local solver called name for lp: "dfbnb", "be" (with
// default BEOptions), "aobb" (with default AOBBOptions), "edac", "vac"
// (EDAC with virtual arc consistency at the root: NewEDACVAC) or
// "bruteforce".
func New(name string, lp *mva.LocalProblem) (mva.LocalSolver, error) {
	switch name {
	case "dfbnb":
		return NewDFBnB(lp), nil
	case "be":
		be, err := NewBE(lp, BEOptions{})
		if err != nil {
			return nil, err
		}
		return be, nil
	case "aobb":
		return NewAOBB(lp, AOBBOptions{}), nil
	case "edac":
		return NewEDAC(lp), nil
	case "vac":
		return NewEDACVAC(lp), nil
	case "bruteforce":
		return NewBruteForce(lp), nil
	}
	return nil, fmt.Errorf("unknown local solver %q (valid: %s)", name, strings.Join(Names(), ", "))
}
