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
