package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/internal/shdscheck"
)

// TestSimStopped: a homes run stopped by --timeout, or by a signal (its
// context cancelled, as main's signal.NotifyContext does), prints the best
// plan found so far with status feasible and exits 4; the independent
// checker finds every rule kept and every figure right.
func TestSimStopped(t *testing.T) {
	instPath, dictPath := checkedSHDS(t, "dm_7_1_5")
	inst, err := shdscheck.ReadInstance(instPath)
	if err != nil {
		t.Fatal(err)
	}
	dict, err := shdscheck.ReadDictionary(dictPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		flags  []string
		cancel time.Duration
		want   string
	}{
		{"timeout", []string{"--timeout", "300ms"}, 0, "stopped by --timeout 300ms"},
		{"signal", nil, 300 * time.Millisecond, "stopped by a signal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.cancel > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer time.AfterFunc(tc.cancel, cancel).Stop()
			}
			var out, errb bytes.Buffer
			args := append([]string{"sim", "--shds", instPath, "--json"}, tc.flags...)
			if code := run(ctx, args, &out, &errb); code != exitStopped {
				t.Fatalf("exit %d, want %d: %s", code, exitStopped, errb.String())
			}
			if !strings.Contains(out.String(), `"status": "feasible"`) || !strings.Contains(out.String(), tc.want) {
				t.Errorf("status or note %q missing:\n%.2000s", tc.want, out.String())
			}
			o, err := shdscheck.DecodeOutput(out.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			r, err := shdscheck.Check(inst, dict, o.Coordinated())
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Err(); err != nil || r.Rules == 0 || r.Held != r.Rules || r.Claimed != r.Rules {
				t.Errorf("%v: %d of %d rules hold, %d counted kept", err, r.Held, r.Rules, r.Claimed)
			}
		})
	}
}
