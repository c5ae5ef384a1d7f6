package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/energy/evcc"
)

// runPlan answers one evcc optimizer request (devices/energy/evcc) read
// from FILE or standard input ("-") and prints the response.
func runPlan(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "plan", "FILE.json|- [flags]")
	gap := fs.Float64("gap", energy.DefaultGap, "stop when no plan can be better by more than this fraction of the cost (0 < gap < 1)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if !(*gap > 0 && *gap < 1) {
		fmt.Fprintf(e.stderr, "hearth plan: --gap %g: want a fraction in (0, 1), e.g. 0.001\n", *gap)
		return exitUsage
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "hearth plan: want exactly one request FILE.json, or - for standard input")
		fs.Usage()
		return exitUsage
	}
	var in io.Reader = os.Stdin
	if pos[0] != "-" {
		f, err := os.Open(pos[0])
		if err != nil {
			fmt.Fprintln(e.stderr, "hearth plan:", err)
			return exitUsage
		}
		defer f.Close()
		in = f
	}
	resp, err := evcc.Plan(ctx, in, energy.Options{Gap: *gap})
	var fe *evcc.FieldError
	switch {
	case errors.As(err, &fe):
		fmt.Fprintf(e.stderr, "hearth plan: %s: %v\n", pos[0], err)
		return exitUsage
	case err != nil:
		fmt.Fprintln(e.stderr, "hearth plan:", err)
		return exitFailed
	}
	b, _ := json.MarshalIndent(resp, "", "  ")
	fmt.Fprintf(e.stdout, "%s\n", b)
	if resp.Status != "Optimal" {
		return exitInfeasible
	}
	return exitOK
}
