package solvefile

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/hearth-dcop/hearth/mva"
)

// Exit codes of a solve, documented in cmd/hearth's package comment and
// README.md; hearth and hearth-solve share them.
const (
	ExitOK         = 0
	ExitInfeasible = 1
	ExitUsage      = 2
	ExitFailed     = 3
)

// ResultExit is the exit code of a result: 0 with a feasible assignment,
// 1 when infeasibility was proved, 3 when an incomplete algorithm found
// no feasible assignment, which proves nothing.
func ResultExit(r mva.Result) int {
	switch {
	case r.Feasible:
		return ExitOK
	case r.Status == mva.StatusInfeasible:
		return ExitInfeasible
	}
	return ExitFailed
}

// unproved names what keeps a run that found no feasible assignment from
// being a proof: an incomplete protocol, or sampled rows.
func unproved(a mva.Algorithm) string {
	if a.Sampling != nil {
		return "--local " + a.Local + " samples"
	}
	return a.Global + " is incomplete"
}

// MaxListed bounds the assignment printed in the human summary.
const MaxListed = 40

// PrintSummary prints the human summary of r, a result on p: the text
// output of `hearth solve`, `hearth sim` and hearth-solve.
func PrintSummary(w io.Writer, p *mva.Problem, r mva.Result) {
	st := p.Stats()
	fmt.Fprintf(w, "instance    %s (%d variables, %d functions, %d agents)\n", r.Instance, st.Variables, st.Functions, st.Agents)
	if r.Status == mva.StatusUnknown {
		fmt.Fprintf(w, "result      no feasible assignment found (not a proof: %s)\n", unproved(r.Algorithm))
	} else if !r.Feasible {
		fmt.Fprintln(w, "result      infeasible: every assignment violates a hard constraint")
	} else {
		state := "best found"
		if r.Optimal {
			state = "optimal"
		}
		fmt.Fprintf(w, "objective   %s (%s, %s)\n", FormatCost(*r.Objective), r.Sense, state)
	}
	a := r.Algorithm
	fmt.Fprintf(w, "solver      global=%s local=%s table=%s reform=%s\n", a.Global, a.Local, a.Table, a.Reform)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note        %s\n", n)
	}
	m := r.Metrics
	if a.Global == "none" {
		fmt.Fprintf(w, "time        %.3f ms wall, %d constraint checks\n", m.WallMs, m.NCCC)
	} else {
		fmt.Fprintf(w, "time        %.3f ms wall, %.3f ms simulated, %d NCCC\n", m.WallMs, m.SimTimeMs, m.NCCC)
		fmt.Fprintf(w, "messages    %d between agents (%d bytes, largest %d), %d inside agents\n",
			m.Messages, m.TotalMessageBytes, m.MaxMessageBytes, m.InternalMessages)
	}
	if !r.Feasible {
		return
	}
	names := make([]string, 0, len(p.Variables)) // file order
	for v := range p.Variables {
		names = append(names, p.Variables[v].Name)
	}
	var b strings.Builder
	for i, n := range names {
		if i == MaxListed {
			fmt.Fprintf(&b, " … (%d more; --json prints all)", len(names)-MaxListed)
			break
		}
		fmt.Fprintf(&b, " %s=%s", n, r.Assignment[n])
	}
	fmt.Fprintf(w, "assignment %s\n", b.String())
}

// FormatCost prints integers without a decimal point and other numbers
// with the shortest exact representation.
func FormatCost(c float64) string {
	if c == math.Trunc(c) && math.Abs(c) < 1e15 {
		return fmt.Sprintf("%.0f", c)
	}
	return fmt.Sprintf("%g", c)
}
