// Command hearth-solve solves one instance file (.wcsp, .uai, XCSP
// .xml/.xcsp) with hearth's local solvers, exactly as `hearth solve FILE
// --global none` does: the same
// --local values (auto by default), --memory, --timeout, --json and text
// output, notes, exit codes and collector settings, through the same code
// (internal/solvefile).
//
// It is a second, lean binary for comparing solvers on standard files
// (the toulbar2 table of scripts/bench-toulbar2) and for boxes that only
// need the local solver: it links no plotting, MQTT, homes, bench or
// daemon code, whose package inits cost every `hearth` process 2.5–3 ms
// of CPU and ~400 page faults before it reads its file (docs/DESIGN.md,
// "Process start-up"), nor yaml.v3. What it does not do — protocols
// between agents (--global), neighbourhoods (.toml, --shds), pyDCOP's
// YAML files, the GPU — it refuses with the `hearth` command to use
// instead.
//
// Usage:
//
//	hearth-solve FILE [flags]
//
// Exit codes: 0 solved, 1 proved infeasible, 2 bad input or usage, 3 the
// solver could not finish (a memory limit, a time-out, an interrupt) or
// found no feasible assignment without proving there is none.
//
// Build: CGO_ENABLED=0 go build -o bin/hearth-solve ./cmd/hearth-solve
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hearth-dcop/hearth/internal/solvefile"
)

const name = "hearth-solve"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := solvefile.Profile(name, os.Stderr)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfile()
	stop()
	os.Exit(code)
}

// options are hearth-solve's flags: those of `hearth solve` that a
// central solve of an instance file reads, plus --global and --gpu, which
// take only the values that keep it central and on the CPU.
type options struct {
	local   solvefile.Local
	agents  int
	seed    uint64
	timeout time.Duration
	json    bool
	global  string
	gpu     string
}

// refusedFlags are `hearth solve`'s flags that hearth-solve has no use
// for, each with what to run instead. They are declared, so that giving
// one says so instead of "flag provided but not defined".
var refusedFlags = []struct {
	name, why string
	isBool    bool
}{
	{"table", "MVA tables are for protocols between agents: use 'hearth solve FILE --global PROTOCOL --table ...'", false},
	{"reform", "reformulations are for protocols between agents: use 'hearth solve FILE --global PROTOCOL --reform ...'", false},
	{"max-entries", "the compilation reformulation is for protocols between agents: use 'hearth solve FILE --global PROTOCOL --max-entries ...'", false},
	{"delay", "simulated latency is for protocols between agents: use 'hearth solve FILE --global PROTOCOL --delay ...'", false},
	{"p", "protocol parameters are for protocols between agents: use 'hearth solve FILE --global PROTOCOL -p ...'", false},
	{"shds", "SHDS streets are neighbourhoods: use 'hearth solve --shds FILE'", false},
	{"out", "charts are for neighbourhoods: use 'hearth solve NEIGHBOURHOOD.toml --out DIR'", false},
	{"csv", "CSV files are for neighbourhoods: use 'hearth solve NEIGHBOURHOOD.toml --csv'", true},
	{"schedules", "schedules are for neighbourhoods: use 'hearth solve NEIGHBOURHOOD.toml --schedules'", true},
	{"improve", "the improvement phase is for neighbourhoods: use 'hearth solve NEIGHBOURHOOD.toml --improve N'", false},
	{"shmgm-rounds", "the SH-MGM baseline is for neighbourhoods: use 'hearth solve NEIGHBOURHOOD.toml --shmgm-rounds N'", false},
}

// refused is a declared flag whose every use is an error naming the
// `hearth` command that takes it.
type refused struct {
	why    string
	isBool bool
}

func (r refused) String() string   { return "" }
func (r refused) IsBoolFlag() bool { return r.isBool }
func (r refused) Set(string) error { return fmt.Errorf("not a flag of %s: %s", name, r.why) }

// wroteWriter records whether anything was written through it, so that
// usage asked for (-h) goes to stdout and usage after an error follows the
// error to stderr.
type wroteWriter struct {
	w     io.Writer
	wrote bool
}

func (w *wroteWriter) Write(p []byte) (int, error) {
	w.wrote = true
	return w.w.Write(p)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	errw := &wroteWriter{w: stderr}
	var o options
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(errw)
	fs.Usage = func() {
		out := io.Writer(errw)
		if !errw.wrote {
			out = stdout
		}
		fmt.Fprintf(out, "Usage: %s FILE [flags]\n\n"+
			"Solves one instance file (.wcsp, .uai, .xml/.xcsp) centrally with hearth's\n"+
			"local solvers, as 'hearth solve FILE --global none' does, in a binary that\n"+
			"links nothing else. Protocols between agents, neighbourhoods, pyDCOP's YAML\n"+
			"files and the GPU are 'hearth solve''s.\n\nFlags:\n", name)
		fs.SetOutput(out)
		fs.PrintDefaults()
		fs.SetOutput(errw)
	}
	solvefile.RegisterLocal(fs, &o.local, solvefile.LocalAuto)
	solvefile.RegisterRun(fs, &o.agents, &o.seed, &o.timeout, &o.json)
	fs.StringVar(&o.global, "global", "none", "protocol between agents: only none (the central solve); for the protocols use 'hearth solve FILE --global PROTOCOL'")
	fs.StringVar(&o.gpu, "gpu", "auto", "auto or off: hearth-solve always runs on the CPU (auto finds no device, as in hearth's non-cuda build); for the GPU use a cuda build's 'hearth solve --gpu on'")
	for _, f := range refusedFlags {
		fs.Var(refused{why: f.why, isBool: f.isBool}, f.name, "not hearth-solve's: "+f.why)
	}
	pos, err := solvefile.ParseArgs(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return solvefile.ExitOK
		}
		return solvefile.ExitUsage
	}
	if len(pos) != 1 {
		fmt.Fprintf(errw, "%s: want exactly one instance FILE\n", name)
		fs.Usage()
		return solvefile.ExitUsage
	}
	path := pos[0]
	if err := o.check(path); err != nil {
		fmt.Fprintf(errw, "%s: %v\n", name, err)
		return solvefile.ExitUsage
	}
	job := solvefile.Job{Cmd: name, Path: path, Agents: o.agents, Memory: o.local.Memory,
		Timeout: o.timeout, JSON: o.json, Local: o.local, Seed: o.seed}
	return job.Run(ctx, stdout, errw)
}

// check refuses what hearth-solve does not do, naming the `hearth`
// command that does, then validates the local solver's flags as `hearth
// solve` does.
func (o *options) check(path string) error {
	if o.global != "none" {
		return fmt.Errorf("--global %s: hearth-solve solves centrally only (--global none); for a protocol between agents use 'hearth solve %s --global %s'", o.global, path, o.global)
	}
	switch o.gpu {
	case "auto", "off":
	case "on":
		return fmt.Errorf("--gpu on: hearth-solve runs on the CPU only; use a cuda build's 'hearth solve %s --gpu on'", path)
	default:
		return fmt.Errorf("unknown --gpu %q (valid: auto, off; the GPU is a cuda build's 'hearth solve --gpu on')", o.gpu)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".toml":
		// A neighbourhood (devices/homesolve.IsFile); its homes are
		// compiled by code this binary does not link.
		return fmt.Errorf("%s is a neighbourhood: hearth-solve solves instance files only; use 'hearth solve %s'", path, path)
	case ".yaml", ".yml":
		// mva/format's pyDCOP reader needs yaml.v3, whose init and pages
		// are a tenth of what this binary saves (docs/DESIGN.md,
		// "hearth-solve").
		return fmt.Errorf("%s is a pyDCOP YAML file: hearth-solve reads .wcsp, .uai and .xml/.xcsp and links no YAML parser; use 'hearth solve %s'", path, path)
	}
	return o.local.Validate()
}
