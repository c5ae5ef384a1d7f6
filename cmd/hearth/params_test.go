package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
)

// TestNamedParams: -p init=start runs what -p init=3 runs, and a name a
// parameter does not know is a usage error that lists the names it does.
func TestNamedParams(t *testing.T) {
	path := "../../examples/thesis-3.1.xml"
	solve := func(params ...string) (mva.Result, int, string) {
		args := []string{"solve", path, "--global", "mgm", "--json", "--seed", "5"}
		for _, p := range params {
			args = append(args, "-p", p)
		}
		var out, errb bytes.Buffer
		code := run(context.Background(), args, &out, &errb)
		var r mva.Result
		if code == exitOK {
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
		}
		return r, code, errb.String()
	}
	for _, pair := range [][2]string{{"init=best", "init=2"}, {"response=solve", "response=2"}, {"init=random", "init=1"}} {
		a, ca, ea := solve(pair[0], "rounds=4")
		b, cb, eb := solve(pair[1], "rounds=4")
		if ca != exitOK || cb != exitOK {
			t.Fatalf("%v: exit %d %d: %s %s", pair, ca, cb, ea, eb)
		}
		if a.Objective == nil || b.Objective == nil || *a.Objective != *b.Objective || a.Metrics.Messages != b.Metrics.Messages {
			t.Errorf("%s and %s differ: %+v %+v", pair[0], pair[1], a, b)
		}
	}
	_, code, stderr := solve("init=strat")
	if code != exitUsage || !strings.Contains(stderr, `"strat" is not a number or one of best, first, random, start`) {
		t.Errorf("init=strat: exit %d: %s", code, stderr)
	}
	_, code, stderr = solve("rounds=many")
	if code != exitUsage || !strings.Contains(stderr, `"many" is not a number`) {
		t.Errorf("rounds=many: exit %d: %s", code, stderr)
	}
}
