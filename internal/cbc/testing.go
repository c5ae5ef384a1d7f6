package cbc

import (
	"context"
	"errors"
	"testing"
)

// Solve is Optimum for tests: ok is false where CBC proves prog
// infeasible, and any other failure ends the test with the programme.
func Solve(tb testing.TB, prog string) (v float64, ok bool) {
	tb.Helper()
	v, err := Optimum(context.Background(), prog, tb.TempDir())
	if errors.Is(err, ErrInfeasible) {
		return 0, false
	}
	if err != nil {
		tb.Fatalf("%v\n%s", err, prog)
	}
	return v, true
}

// Require skips the test or benchmark where the cbc binary is not on
// PATH (scripts/test installs it, so CI runs every CBC check).
func Require(tb testing.TB) {
	tb.Helper()
	if !Installed() {
		tb.Skip(ErrNotInstalled)
	}
}
