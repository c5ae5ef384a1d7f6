package mva

import "testing"

// TestConclude checks the status rule itself.
func TestConclude(t *testing.T) {
	for _, tc := range []struct {
		feasible, optimal, complete bool
		want                        Status
	}{
		{true, true, true, StatusOptimal},
		{true, false, true, StatusFeasible},
		{true, false, false, StatusFeasible},
		{false, false, true, StatusInfeasible},
		{false, false, false, StatusUnknown},
	} {
		r := Result{Feasible: tc.feasible, Optimal: tc.optimal}
		r.Conclude(tc.complete)
		if r.Status != tc.want {
			t.Errorf("feasible %v optimal %v complete %v: %q, want %q", tc.feasible, tc.optimal, tc.complete, r.Status, tc.want)
		}
	}
}
