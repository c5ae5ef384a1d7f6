package mva_test

import (
	"testing"

	"github.com/hearth-dcop/hearth/internal/fixtures"
	"github.com/hearth-dcop/hearth/mva"
)

// TestInspectThesis31 checks the figures of the thesis's Figure 3.1
// example, counted by hand: a0 owns x0..x2 (boundary x0), a1 owns x3, x4
// (boundary x3), one function between them.
func TestInspectThesis31(t *testing.T) {
	r := mva.Inspect(fixtures.Thesis31())
	want := []mva.AgentInspection{
		{Agent: "a0", Local: 3, Boundary: 1, Interior: 2, LocalFns: 3, External: 1, Width: 2, MinDomain: 2, MaxDomain: 2, Rows: 2},
		{Agent: "a1", Local: 2, Boundary: 1, Interior: 1, LocalFns: 1, External: 1, Width: 1, MinDomain: 2, MaxDomain: 2, Rows: 2},
	}
	if len(r.Agents) != 2 || r.Agents[0] != want[0] || r.Agents[1] != want[1] || r.Width != 2 || r.External != 1 || r.Variables != 5 || r.Functions != 5 {
		t.Errorf("Inspect = %+v\nwant agents %+v", r, want)
	}
}
