package gen

import (
	"testing"

	"github.com/hearth-dcop/hearth/mva"
)

func TestRadarConfigurations(t *testing.T) {
	// Table 3.1: configuration → number of agents.
	for _, c := range []struct{ cols, rows, agents int }{
		{8, 4, 2}, {8, 8, 4}, {12, 8, 6}, {16, 8, 8}, {20, 8, 10},
	} {
		o := DefaultRadar()
		o.Cols, o.Rows = c.cols, c.rows
		p, err := Radar(1, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Agents) != c.agents {
			t.Errorf("%dx%d: %d agents, want %d", c.cols, c.rows, len(p.Agents), c.agents)
		}
		checkRadar(t, p, o)
	}
}

func checkRadar(t *testing.T, p *mva.Problem, o RadarOptions) {
	t.Helper()
	for i, n := range varsPerAgent(p) {
		if n != o.BlockCols*o.BlockRows {
			t.Fatalf("controller %d has %d radars, want %d", i, n, o.BlockCols*o.BlockRows)
		}
	}
	for _, v := range p.Variables {
		if len(v.Domain) != 4 {
			t.Fatalf("radar %s has %d directions", v.Name, len(v.Domain))
		}
	}
	if len(p.Functions) < o.Phenomena {
		t.Fatalf("%d phenomena, want at least %d", len(p.Functions), o.Phenomena)
	}
	// Radars are connected through phenomena, hence the agents too.
	var edges []edge
	for e := range primal(p) {
		edges = append(edges, e)
	}
	if !connected(len(p.Variables), edges) {
		t.Fatal("the radars are not connected")
	}
	if !agentsConnected(p) {
		t.Fatal("the controllers are not connected")
	}
	for _, f := range p.Functions {
		if len(f.Scope) < 1 || len(f.Scope) > o.MaxArity {
			t.Fatalf("phenomenon %s has %d radars, want 1..%d", f.Name, len(f.Scope), o.MaxArity)
		}
		// A phenomenon has one weight: every entry is −w, 0 or Hard, and
		// some assignment observes it.
		w := 0.0
		for _, c := range f.Costs {
			switch {
			case c == 0 || mva.IsHard(c):
			case w == 0 && c >= -float64(o.MaxWeight) && c <= -float64(o.MinWeight):
				w = c
			case c != w:
				t.Fatalf("phenomenon %s has costs %v and %v", f.Name, w, c)
			}
		}
		if w == 0 {
			t.Fatalf("phenomenon %s can never be observed", f.Name)
		}
	}
}

func TestRadarOptions(t *testing.T) {
	o := DefaultRadar()
	o.Cols, o.Rows, o.BlockCols, o.BlockRows = 6, 6, 3, 2
	o.Range, o.MaxArity, o.MaxSize, o.Critical, o.Phenomena = 1.5, 3, 3, 0.5, 200
	for seed := range uint64(3) {
		p, err := Radar(seed, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Agents) != 6 {
			t.Fatalf("%d agents, want 6", len(p.Agents))
		}
		checkRadar(t, p, o)
		hard := 0
		for _, f := range p.Functions {
			if feasibleEntries(f) < len(f.Costs) {
				hard++
			}
		}
		if hard == 0 {
			t.Fatal("no critical phenomenon among hundreds")
		}
	}
}

func TestRadarFeasible(t *testing.T) {
	o := DefaultRadar()
	o.Cols, o.Rows, o.BlockCols, o.BlockRows = 4, 2, 2, 2
	o.Critical = 0.8
	for seed := range uint64(10) {
		p, err := Radar(seed, o)
		if err != nil {
			t.Fatal(err)
		}
		// Every phenomenon can be observed, so the optimum is negative.
		if b, d := checkFeasible(t, p, "bruteforce"), checkFeasible(t, p, "dfbnb"); b != d || b >= 0 {
			t.Fatalf("seed %d: brute force %v, dfbnb %v", seed, b, d)
		}
	}
}

func TestScans(t *testing.T) {
	for _, c := range []struct {
		dx, dy float64
		want   [4]bool
	}{
		{0, 1, [4]bool{true, false, false, false}},
		{2, 1, [4]bool{false, true, false, false}},
		{0.5, -3, [4]bool{false, false, true, false}},
		{-1, 0, [4]bool{false, false, false, true}},
		{1, 1, [4]bool{true, true, false, false}},
		{0, 0, [4]bool{true, true, true, true}},
	} {
		for d := range 4 {
			if got := scans(d, c.dx, c.dy); got != c.want[d] {
				t.Errorf("scans(%s, %v, %v) = %v", directions[d], c.dx, c.dy, got)
			}
		}
	}
}
