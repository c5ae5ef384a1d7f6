package xcsp_test

import (
	"os"
	"reflect"
	"testing"

	"github.com/hearth-dcop/hearth/mva/format/wcsp"
	"github.com/hearth-dcop/hearth/mva/format/xcsp"
)

// TestSameAsWCSP checks the FRODO sample against its twin in wcsp format:
// the same scopes and tables, function by function.
func TestSameAsWCSP(t *testing.T) {
	xf, err := os.Open("testdata/gpube_rep_0_x_10.xml")
	if err != nil {
		t.Fatal(err)
	}
	defer xf.Close()
	x, err := xcsp.Read(xf, "gpube_rep_0_x_10.xml")
	if err != nil {
		t.Fatal(err)
	}
	wf, err := os.Open("../wcsp/testdata/gpube_rep_0_x_10.wcsp")
	if err != nil {
		t.Fatal(err)
	}
	defer wf.Close()
	w, err := wcsp.Read(wf, "gpube_rep_0_x_10.wcsp")
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Functions) != len(w.Functions) || len(x.Variables) != len(w.Variables) {
		t.Fatalf("%d functions over %d variables in XCSP, %d over %d in wcsp",
			len(x.Functions), len(x.Variables), len(w.Functions), len(w.Variables))
	}
	for i := range x.Functions {
		fx, fw := &x.Functions[i], &w.Functions[i]
		if !reflect.DeepEqual(fx.Scope, fw.Scope) || !reflect.DeepEqual(fx.Costs, fw.Costs) {
			t.Errorf("function %d: %s%v differs from %s%v", i, fx.Name, fx.Scope, fw.Name, fw.Scope)
		}
	}
	for i := range x.Variables {
		if !reflect.DeepEqual(x.Variables[i].Domain, w.Variables[i].Domain) {
			t.Errorf("variable %d: domain %v in XCSP, %v in wcsp", i, x.Variables[i].Domain, w.Variables[i].Domain)
		}
	}
}
