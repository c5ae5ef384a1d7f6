package cbc

import (
	"context"
	"errors"
	"math"
	"testing"
)

// TestOptimum: programmes whose optima are worked by hand.
func TestOptimum(t *testing.T) {
	if !Installed() {
		t.Skip(ErrNotInstalled)
	}
	for _, c := range []struct {
		name, prog string
		want       float64
		err        error
	}{
		// x + y ≥ 3, x ≤ 2: the cheaper x takes 2, y the remaining 1.
		{"lp", "Minimize\n obj: 1 x + 3 y\nSubject To\n c1: x + y >= 3\nBounds\n x <= 2\nEnd\n", 5, nil},
		// An integer y ≥ 1.5 rounds up to 2.
		{"mip", "Minimize\n obj: y\nSubject To\n c1: y >= 1.5\nGenerals\n y\nEnd\n", 2, nil},
		{"infeasible", "Minimize\n obj: x\nSubject To\n c1: x >= 3\nBounds\n x <= 2\nEnd\n", 0, ErrInfeasible},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Optimum(context.Background(), c.prog, t.TempDir())
			if !errors.Is(err, c.err) {
				t.Fatalf("error %v, want %v", err, c.err)
			}
			if err == nil && math.Abs(got-c.want) > 1e-9 {
				t.Fatalf("optimum %g, want %g", got, c.want)
			}
		})
	}
}

// TestParseStatus: CBC's first solution line, and what is not one.
func TestParseStatus(t *testing.T) {
	for _, c := range []struct {
		head string
		want float64
		ok   bool
	}{
		{"Optimal - objective value 12.5", 12.5, true},
		{"Optimal - objective value -0.25", -0.25, true},
		{"Infeasible - objective value 0", 0, false},
		{"Stopped on time - objective value 3", 0, false},
		{"", 0, false},
		{"Optimal - objective value x", 0, false},
	} {
		got, err := parseStatus(c.head)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("%q: %g, %v", c.head, got, err)
		}
	}
}

// TestProgram: a programme built from parts is the text written by hand,
// and solves to the same optimum (min x + 3y, x + y ≥ 3, x ≤ 2, y
// binary: x 2, y 1, cost 5).
func TestProgram(t *testing.T) {
	p := Program{Objective: []string{"1 x", "+ 3 y"}, Rows: []string{"x + y >= 3"}, Bounds: []string{"x <= 2"}, Binaries: []string{"y"}}
	want := "Minimize\n obj: 1 x + 3 y\nSubject To\n r0: x + y >= 3\nBounds\n x <= 2\nBinaries\n y\nEnd\n"
	if got := p.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if !Installed() {
		t.Skip(ErrNotInstalled)
	}
	v, err := Optimum(context.Background(), p.String(), t.TempDir())
	if err != nil || math.Abs(v-5) > 1e-9 {
		t.Fatalf("optimum %g, %v; want 5", v, err)
	}
}
