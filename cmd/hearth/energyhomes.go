package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/devices/street"
)

// energyOnly runs `hearth solve` or `hearth sim` on a neighbourhood whose
// homes are all energy homes (planner = "energy"): there is no protocol
// to run, so the street is planned and coordinated by devices/street
// (its peak term, [coordination] neighbours and [feeder] limit) and
// printed, with --out and --csv as for compiled homes. handled is false for every other file (and for a file that
// does not load: the homes' loader reports it).
func energyOnly(ctx context.Context, stdout, stderr io.Writer, cmd, path string, hf *homeFlags, asJSON bool) (code int, handled bool) {
	cfg, err := config.Load(path)
	if err != nil || len(cfg.Planners) == 0 || slices.ContainsFunc(cfg.Planners, func(p string) bool { return p != config.PlannerEnergy }) {
		return 0, false
	}
	h, err := street.Report(ctx, cfg, street.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "hearth %s: %v\n", cmd, err)
		return energyExit(err), true
	}
	o := homesolve.Output{Format: "text", Dir: hf.outDir, CSVBeside: hf.csv}
	if asJSON {
		o.Format = "json"
	}
	if err := homesolve.Write(stdout, h, o); err != nil {
		fmt.Fprintf(stderr, "hearth %s: %v\n", cmd, err)
		return exitFailed, true
	}
	return exitOK, true
}

// energyExit is the exit code of a failed homes run: 1 where an energy
// home's hard goals or limits cannot be kept (as for compiled homes'
// hard rules), else 3 (a plan the checker rejects among them).
func energyExit(err error) int {
	if errors.Is(err, energy.ErrInfeasible) {
		return exitInfeasible
	}
	return exitFailed
}
