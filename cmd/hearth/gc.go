package main

import (
	"os"
	"runtime/debug"

	"github.com/hearth-dcop/hearth/local"
)

// solveGCPercent is the collector's target for a one-shot solve of an
// instance file: the heap may grow to five times its live data between
// collections. A solve's live data is small and short-lived next to what
// its search allocates, so at Go's default (100) the collector costs
// 5–25% of the CPU time of a solve of 10–200 ms (measured against
// toulbar2 on the bench files: README, "Exact search"); at 400 most of it
// goes.
const solveGCPercent = 400

// solveGC sets the collector for a one-shot solve and returns what puts
// the previous settings back (the tests run solves in process). A soft
// memory limit of half the physical memory (twice the exact solvers'
// default budget) keeps the larger target from growing a large solve's
// heap past what the machine holds: near it the collector runs as often
// as it must. GOGC or GOMEMLIMIT in the environment win: then nothing is
// changed.
func solveGC() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	pct := debug.SetGCPercent(solveGCPercent)
	lim := debug.SetMemoryLimit(2 * local.DefaultMemory())
	return func() {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(lim)
	}
}
