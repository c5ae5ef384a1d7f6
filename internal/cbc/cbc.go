// Package cbc solves a linear or mixed-integer programme written in CPLEX
// LP text with the CBC binary (Debian's coinor-cbc) and returns its
// optimum. Tests use it as the independent truth for plans: each writes
// its own programme from a home's description, never from the planner's
// code, so one place runs the solver and reads its answer.
package cbc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNotInstalled is returned when the cbc binary is not on PATH.
var ErrNotInstalled = errors.New("cbc is not installed (Debian: coinor-cbc)")

// ErrInfeasible is returned when CBC proves the programme has no solution.
var ErrInfeasible = errors.New("cbc: the programme is infeasible")

// Installed reports whether the cbc binary is on PATH.
func Installed() bool {
	_, err := exec.LookPath("cbc")
	return err == nil
}

// Optimum solves prog to optimality (a relative gap of 0) in a scratch
// folder under dir and returns the optimal objective value, ErrInfeasible
// when CBC proves there is none, or an error that carries CBC's output.
func Optimum(ctx context.Context, prog, dir string) (float64, error) {
	bin, err := exec.LookPath("cbc")
	if err != nil {
		return 0, ErrNotInstalled
	}
	work, err := os.MkdirTemp(dir, "cbc")
	if err != nil {
		return 0, fmt.Errorf("cbc: %w", err)
	}
	defer os.RemoveAll(work)
	in, sol := filepath.Join(work, "m.lp"), filepath.Join(work, "m.sol")
	if err := os.WriteFile(in, []byte(prog), 0o600); err != nil {
		return 0, fmt.Errorf("cbc: %w", err)
	}
	out, err := exec.CommandContext(ctx, bin, in, "ratio", "0", "solve", "solu", sol).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("cbc: %w\n%s", err, out)
	}
	f, err := os.Open(sol)
	if err != nil {
		return 0, fmt.Errorf("cbc wrote no solution: %w\n%s", err, out)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	return parseStatus(sc.Text())
}

// parseStatus reads the first line of CBC's solution file:
// "Optimal - objective value 12.5", or a line that says infeasible.
func parseStatus(head string) (float64, error) {
	if strings.Contains(strings.ToLower(head), "infeasible") {
		return 0, ErrInfeasible
	}
	const key = "objective value"
	i := strings.Index(head, key)
	if !strings.HasPrefix(head, "Optimal") || i < 0 {
		return 0, fmt.Errorf("cbc: no optimum: %q", head)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(head[i+len(key):]), 64)
	if err != nil {
		return 0, fmt.Errorf("cbc: objective in %q: %w", head, err)
	}
	return v, nil
}

// Program is a programme in CPLEX LP text, built from its parts: terms
// of the objective ("2.5 x"), constraint rows ("x + y >= 3"), bounds
// ("0 <= x <= 4") and the names of binary variables.
type Program struct {
	Objective, Rows, Bounds, Binaries []string
}

// String writes the programme, minimising the objective.
func (p Program) String() string {
	var b strings.Builder
	b.WriteString("Minimize\n obj: " + strings.Join(p.Objective, " ") + "\nSubject To\n")
	for i, r := range p.Rows {
		fmt.Fprintf(&b, " r%d: %s\n", i, r)
	}
	b.WriteString("Bounds\n")
	for _, s := range p.Bounds {
		b.WriteString(" " + s + "\n")
	}
	if len(p.Binaries) > 0 {
		b.WriteString("Binaries\n " + strings.Join(p.Binaries, " ") + "\n")
	}
	b.WriteString("End\n")
	return b.String()
}
