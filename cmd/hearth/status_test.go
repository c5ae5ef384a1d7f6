package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
)

// TestResultStatus: a result says what the run proved. On
// testdata/random-seed3.xml (`hearth gen random --seed 3`) the exact
// protocols and the central solver find the optimum, while MGM, MGM-2 and
// D-Gibbs, from their first rows, end on an infeasible assignment: that
// proves nothing (exit 3, status unknown), where before it was reported
// as infeasibility (exit 1). On a problem with no feasible assignment the
// complete algorithms prove it (exit 1); incomplete ones and sampled rows
// still say only that they found none.
func TestResultStatus(t *testing.T) {
	random := "testdata/random-seed3.xml"
	// Both values of x0 forbidden by a unary hard function.
	infeasible := writeFile(t, "inf.wcsp", "inf 2 2 2 10\n2 2\n1 0 0 2\n0 10\n1 10\n2 0 1 0 0\n")
	tests := []struct {
		args   []string
		code   int
		status mva.Status
		text   string
	}{
		{[]string{"solve", random}, exitOK, mva.StatusOptimal, "(min, optimal)"},
		{[]string{"solve", random, "--global", "dpop"}, exitOK, mva.StatusOptimal, "(min, optimal)"},
		{[]string{"solve", random, "--global", "afb"}, exitOK, mva.StatusOptimal, "(min, optimal)"},
		{[]string{"solve", random, "--global", "mgm"}, exitFailed, mva.StatusUnknown, "no feasible assignment found (not a proof: mgm is incomplete)"},
		{[]string{"solve", random, "--global", "mgm2"}, exitFailed, mva.StatusUnknown, "not a proof: mgm2 is incomplete"},
		{[]string{"solve", random, "--global", "dgibbs"}, exitFailed, mva.StatusUnknown, "not a proof: dgibbs is incomplete"},
		{[]string{"sim", random, "--global", "mgm"}, exitFailed, mva.StatusUnknown, "not a proof: mgm is incomplete"},
		{[]string{"solve", infeasible}, exitInfeasible, mva.StatusInfeasible, "infeasible: every assignment violates a hard constraint"},
		{[]string{"solve", infeasible, "--global", "dpop"}, exitInfeasible, mva.StatusInfeasible, "infeasible: every assignment"},
		{[]string{"solve", infeasible, "--global", "afb"}, exitInfeasible, mva.StatusInfeasible, "infeasible: every assignment"},
		{[]string{"sim", infeasible, "--global", "dpop"}, exitInfeasible, mva.StatusInfeasible, "infeasible: every assignment"},
		{[]string{"solve", infeasible, "--global", "mgm"}, exitFailed, mva.StatusUnknown, "not a proof: mgm is incomplete"},
		{[]string{"solve", infeasible, "--local", "gibbs"}, exitFailed, mva.StatusUnknown, "not a proof: --local gibbs samples"},
		{[]string{"solve", infeasible, "--global", "dpop", "--local", "gibbs"}, exitFailed, mva.StatusUnknown, "not a proof: --local gibbs samples"},
	}
	var optimum *float64
	for _, tc := range tests {
		name := strings.Join(tc.args, " ")
		var out, errb bytes.Buffer
		if code := run(context.Background(), tc.args, &out, &errb); code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", name, code, tc.code, out.String(), errb.String())
		}
		if !strings.Contains(out.String(), tc.text) {
			t.Errorf("%s: output lacks %q:\n%s", name, tc.text, out.String())
		}
		out.Reset()
		run(context.Background(), append(tc.args, "--json"), &out, &errb)
		var r mva.Result
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("%s --json: %v\n%s", name, err, out.String())
		}
		if r.Status != tc.status || r.Feasible != (tc.code == exitOK) {
			t.Errorf("%s: status %q feasible %v, want %q", name, r.Status, r.Feasible, tc.status)
		}
		if tc.status == mva.StatusOptimal && tc.args[1] == random {
			// The exact protocols agree with the central solver.
			if optimum == nil {
				optimum = r.Objective
			} else if *r.Objective != *optimum {
				t.Errorf("%s: objective %v, central %v", name, *r.Objective, *optimum)
			}
		}
	}
}
