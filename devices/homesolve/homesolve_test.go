package homesolve

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/mgm"
)

var exampleTOML = filepath.Join("..", "..", "examples", "neighbourhood", "neighbourhood.toml")

func TestIsFile(t *testing.T) {
	for path, want := range map[string]bool{"street.toml": true, "a/B.TOML": true, "x.xml": false, "dm_7_1_2.json": false, "toml": false} {
		if got := IsFile(path); got != want {
			t.Errorf("IsFile(%q) = %v", path, got)
		}
	}
}

func TestAssignment(t *testing.T) {
	r, err := Load(exampleTOML, false, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	p := r.Problem()
	assign := make([]int, len(p.Variables))
	for v := range assign {
		assign[v] = (v * 7) % p.DomainSize(v)
	}
	back, err := Assignment(p, p.Labels(assign))
	if err != nil || !slices.Equal(back, assign) {
		t.Fatalf("round trip: %v", err)
	}
	labels := p.Labels(assign)
	labels[p.Variables[0].Name] = "no such value"
	if _, err := Assignment(p, labels); err == nil {
		t.Error("a label outside the domain was accepted")
	}
	delete(labels, p.Variables[0].Name)
	if _, err := Assignment(p, labels); err == nil {
		t.Error("a missing variable was accepted")
	}
}

// TestChoice: the choice is the TOML's [solver] (examples/neighbourhood:
// DPOP over bucket elimination, eager tables, seed 1) where the command
// line leaves it open, and the command line's where it does not.
func TestChoice(t *testing.T) {
	r, err := Load(exampleTOML, false, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Choice(); c.Global != "dpop" || c.Local != "be" || c.Table != "eager" || c.Seed != 1 || c.Start != nil {
		t.Errorf("the file's choice: %+v", c)
	}
	r, err = Load(exampleTOML, false, Overrides{Global: "mgm", Seed: 9, SeedSet: true, Params: map[string]float64{"rounds": 3}})
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Choice(); c.Global != "mgm" || c.Local != "be" || c.Seed != 9 || c.Params["rounds"] != 3 {
		t.Errorf("overridden: %+v", c)
	}
}

// hardExample is the example street with every rule hard, as before
// goals were soft, built in memory (New: no soft start).
func hardExample(t *testing.T, o Overrides) *Run {
	t.Helper()
	r, err := Load(exampleTOML, false, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	n := r.Model()
	for hi := range n.Homes {
		for ri := range n.Homes[hi].Rules {
			n.Homes[hi].Rules[ri].Soft = false
		}
	}
	hr, err := New("example", n, o)
	if err != nil {
		t.Fatal(err)
	}
	return hr
}

// TestSoftStartsFromOwnPlans: on a TOML street whose goals are soft,
// D-Gibbs, MGM and MGM-2 start from the homes' own schedules unless the
// user chose the start; exact protocols are left alone.
func TestSoftStartsFromOwnPlans(t *testing.T) {
	for _, tc := range []struct {
		o    Overrides
		want bool
	}{
		{Overrides{Global: "dgibbs"}, true},
		{Overrides{Global: "mgm"}, true},
		{Overrides{Global: "mgm2"}, true},
		{Overrides{Global: "dpop"}, false},
		{Overrides{Global: "mgm", Params: map[string]float64{"init": 0}}, false},
	} {
		r, err := Load(exampleTOML, false, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		c := r.WithStart(r.Choice())
		if got := c.Params["init"] == mgm.InitStart && c.Start != nil; got != tc.want {
			t.Errorf("%+v: starts from the own schedules: %v, want %v (params %v)", tc.o, got, tc.want, c.Params)
		}
		if _, again := r.Restart(c); again {
			t.Errorf("%+v: restarts though the start is chosen", tc.o)
		}
		noted := slices.ContainsFunc(r.Notes(), func(n string) bool { return strings.Contains(n, "the homes' goals are soft") })
		if noted != tc.want {
			t.Errorf("%+v: note %v, want %v: %v", tc.o, noted, tc.want, r.Notes())
		}
	}
}

// TestRestart: where the rules are hard, a protocol that reads init
// restarts from the homes' own schedules (which keep every rule of the
// example), with a note; an exact protocol, or a start the user chose,
// does not.
func TestRestart(t *testing.T) {
	for _, tc := range []struct {
		o    Overrides
		want bool
	}{
		{Overrides{Global: "dgibbs"}, true},
		{Overrides{Global: "mgm"}, true},
		{Overrides{Global: "mgm2"}, true},
		{Overrides{Global: "dpop"}, false},
		{Overrides{Global: "dgibbs", Params: map[string]float64{"init": 0}}, false},
	} {
		r := hardExample(t, tc.o)
		c, ok := r.Restart(r.Choice())
		if ok != tc.want {
			t.Errorf("%+v: restart %v, want %v", tc.o, ok, tc.want)
			continue
		}
		if !ok {
			continue
		}
		if c.Params["init"] != mgm.InitStart || len(c.Start) != len(r.Problem().Variables) {
			t.Errorf("%+v: restart from init %v with a start of %d values", tc.o, c.Params["init"], len(c.Start))
		}
		cost, err := r.Problem().Eval(c.Start)
		if err != nil || math.IsNaN(cost) || mva.IsHard(cost) {
			t.Errorf("%+v: the homes' own schedules cost %v (%v)", tc.o, cost, err)
		}
		if !slices.ContainsFunc(r.Notes(), func(n string) bool { return strings.Contains(n, "restarted from each home's own") }) {
			t.Errorf("%+v: no note of the restart: %v", tc.o, r.Notes())
		}
		if got := r.WithStart(c); got.Start == nil {
			t.Errorf("%+v: WithStart dropped the start of init = %v", tc.o, c.Params["init"])
		}
	}
}
