package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/baseline"
	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/internal/solve"
	"github.com/hearth-dcop/hearth/mva"
)

// This file wires the homes' solver policy (devices/homesolve) to the
// commands: the flags that override a neighbourhood's [solver]; the
// choice as solve.Options and its solve (solve.Homes) are
// internal/solve's.

// homeOptionsFrom reads the solver flags the user gave on fs (those left
// at their defaults do not override the TOML).
func homeOptionsFrom(fs *flag.FlagSet, o *solveOptions) homesolve.Overrides {
	var h homesolve.Overrides
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "global":
			h.Global = o.Global
		case "local":
			h.Local = o.Local.Name
		case "table":
			h.Table = o.Table
		case "gpu":
			h.GPU = o.GPU
		case "seed":
			h.Seed, h.SeedSet = o.Seed, true
		case "p":
			h.Params = maps.Clone(o.Params)
		case "timeout":
			h.Timeout = o.Timeout
		}
	})
	return h
}

// loadExit prints an error of homesolve.Load and returns the exit code: 1 for
// rules no schedule can satisfy, 3 for a problem too large to build, 2 for
// everything else (a bad file). config.Errors print as they are, one
// "file:line: key: message" per line.
func loadExit(w io.Writer, cmd string, err error) int {
	var ce config.Errors
	if errors.As(err, &ce) {
		fmt.Fprintln(w, ce.Error())
		// A file with faults of its own is a bad file even where some
		// of its rules are also infeasible.
		if ce.Infeasible() {
			return exitInfeasible
		}
		return exitUsage
	}
	fmt.Fprintf(w, "hearth %s: %v\n", cmd, err)
	switch {
	case errors.Is(err, devices.ErrInfeasible):
		return exitInfeasible
	case errors.Is(err, devices.ErrTooLarge):
		return exitFailed
	}
	return exitUsage
}

// baselineFlags are the command line's bounds on the SH-MGM-style
// baseline.
type baselineFlags struct {
	rounds int
	kicks  int
}

func (b *baselineFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&b.kicks, "improve", 0, fmt.Sprintf("homes: escapes of the improvement phase on the load that flows, after the protocol (0: %d for SHDS files, fewer past 109 homes (%d kicked homes in all); for TOML neighbourhoods its descent without escapes, restarted from the SH-MGM-style baseline's plan; -1: no improvement phase)", baseline.DefaultKicks, baseline.DefaultKickedHomes))
	fs.IntVar(&b.rounds, "shmgm-rounds", 0, "homes: rounds of the SH-MGM-style baseline, which stops earlier when no home gains (0: max(100, 2·homes); -1: skip it); bounded by rounds, never by time, so that it is the same on any machine")
}

// apply puts the flags into h.
func (b *baselineFlags) apply(h homesolve.Overrides) homesolve.Overrides {
	h.Rounds = b.rounds
	h.Kicks = b.kicks
	return h
}

// homeFlags are the flags of the commands that take a neighbourhood
// (`hearth solve`, `hearth sim`, `hearth inspect`): an SHDS file instead
// of FILE, and for solve and sim the outputs and the baselines.
type homeFlags struct {
	shds      string
	outDir    string
	csv       bool
	schedules bool
	bl        baselineFlags
}

// register declares --shds and, with outputs, --out, --csv and the
// baselines' flags.
func (h *homeFlags) register(fs *flag.FlagSet, outputs bool) {
	fs.StringVar(&h.shds, "shds", "", "homes: a published SHDS instance (dm_*.json) instead of FILE")
	if !outputs {
		return
	}
	fs.StringVar(&h.outDir, "out", "", "homes: write the load-profile charts (PNG, SVG) and, with --csv, the CSV files into this folder")
	fs.BoolVar(&h.csv, "csv", false, "homes: also write the schedule, load profile and per-home CSV files (into --out, or the current folder) and list them after the summary")
	fs.BoolVar(&h.schedules, "schedules", false, fmt.Sprintf("homes: print every home's schedule table (the summary prints them unasked up to %d homes, one line per home past that)", report.DefaultMaxHomes))
	h.bl.register(fs)
}

// file returns the command's one FILE (or --shds's), and whether it is a
// neighbourhood; ok is false when there is not exactly one.
func (h *homeFlags) file(pos []string) (path string, homes, ok bool) {
	if h.shds != "" && len(pos) == 0 {
		pos = []string{h.shds}
	}
	if len(pos) != 1 {
		return "", false, false
	}
	return pos[0], h.shds != "" || homesolve.IsFile(pos[0]), true
}

// arg is path as the command line names it: --shds FILE or FILE.
func (h *homeFlags) arg(path string) string {
	if h.shds != "" {
		return "--shds " + path
	}
	return path
}

// load loads the neighbourhood path (the flags given on fs override its
// [solver]) and returns o with its solver choice.
func (h *homeFlags) load(path string, fs *flag.FlagSet, o solveOptions) (*homesolve.Run, solveOptions, error) {
	r, err := homesolve.Load(path, h.shds != "", h.bl.apply(homeOptionsFrom(fs, &o)))
	if err != nil {
		return nil, o, err
	}
	o.Options = solve.HomeOptions(r, o.Options)
	return r, o, nil
}

// render prints a neighbourhood's result: text (with --csv, the CSV
// files too, listed after it) or JSON (asJSON), and the charts with
// --out; mq, when not nil, is the MQTT run's counters.
func (h *homeFlags) render(w io.Writer, r *homesolve.Run, assign []int, res mva.Result, asJSON bool, mq *report.MQTT) error {
	rep, err := r.Report(assign, res)
	if err != nil {
		return err
	}
	rep.MQTT = mq
	o := homesolve.Output{Format: "text", Dir: h.outDir, CSVBeside: h.csv}
	if asJSON {
		o.Format = "json"
	}
	if h.schedules {
		o.Text.MaxHomes = -1
	}
	return homesolve.Write(w, rep, o)
}
