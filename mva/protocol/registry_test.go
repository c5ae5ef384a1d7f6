package protocol

import (
	"slices"
	"testing"
)

// TestRegistry: every protocol is registered once under its --global name,
// and exactly the complete ones (DPOP, AFB) are marked exact: the result
// object's status rests on it.
func TestRegistry(t *testing.T) {
	want := map[string]bool{"afb": true, "dgibbs": false, "dpop": true, "mgm": false, "mgm2": false}
	names := Names()
	if !slices.IsSorted(names) || len(names) != len(want) {
		t.Fatalf("names %v", names)
	}
	for _, n := range names {
		p, ok := Lookup(n)
		if !ok || p.Name != n || p.New == nil || p.Exact != want[n] {
			t.Errorf("%s: %+v %v, exact want %v", n, p, ok, want[n])
		}
	}
	if _, ok := Lookup("none"); ok {
		t.Error(`"none" is not a protocol`)
	}
}

// TestParamValue: the names mean the numbers README.md's parameter table
// gives them.
func TestParamValue(t *testing.T) {
	want := map[string]map[string]float64{
		"init":     {"first": 0, "random": 1, "best": 2, "start": 3},
		"response": {"auto": 0, "enumerate": 1, "solve": 2, "blocks": 3},
		"interior": {"best": 0, "gibbs": 1},
	}
	for param, names := range want {
		got := ParamValueNames(param)
		if len(got) != len(names) {
			t.Errorf("%s: names %v, want %v", param, got, names)
		}
		for name, v := range names {
			if f, ok := ParamValue(param, name); !ok || f != v {
				t.Errorf("%s=%s: %v %v, want %v", param, name, f, ok, v)
			}
		}
	}
	if _, ok := ParamValue("rounds", "many"); ok {
		t.Error("rounds takes numbers only")
	}
	if _, ok := ParamValue("init", "3"); ok {
		t.Error(`"3" is a number, not a name`)
	}
	if names := ParamValueNames("rounds"); names != nil {
		t.Errorf("rounds: names %v", names)
	}
}
