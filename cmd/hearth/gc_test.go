package main

import (
	"runtime/debug"
	"testing"
)

// TestSolveGC: a solve raises the collector's target and sets a soft
// memory limit, and puts both back; GOGC or GOMEMLIMIT in the environment
// leave them alone.
func TestSolveGC(t *testing.T) {
	for _, tc := range []struct {
		name, env, val string
		changes        bool
	}{
		{"default", "", "", true},
		{"GOGC set", "GOGC", "100", false},
		{"GOMEMLIMIT set", "GOMEMLIMIT", "1GiB", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOGC", "")
			t.Setenv("GOMEMLIMIT", "")
			if tc.env != "" {
				t.Setenv(tc.env, tc.val)
			}
			pct := debug.SetGCPercent(-1)
			debug.SetGCPercent(pct)
			lim := debug.SetMemoryLimit(-1)
			restore := solveGC()
			gotPct := debug.SetGCPercent(-1)
			debug.SetGCPercent(gotPct)
			gotLim := debug.SetMemoryLimit(-1)
			restore()
			if tc.changes && (gotPct != solveGCPercent || gotLim == lim) {
				t.Errorf("during the solve: GOGC %d, limit %d; want %d and a limit other than %d", gotPct, gotLim, solveGCPercent, lim)
			}
			if !tc.changes && (gotPct != pct || gotLim != lim) {
				t.Errorf("with %s set: GOGC %d, limit %d; want them unchanged (%d, %d)", tc.env, gotPct, gotLim, pct, lim)
			}
			after := debug.SetGCPercent(-1)
			debug.SetGCPercent(after)
			if after != pct || debug.SetMemoryLimit(-1) != lim {
				t.Errorf("after: GOGC %d, limit %d; want %d, %d back", after, debug.SetMemoryLimit(-1), pct, lim)
			}
		})
	}
}
