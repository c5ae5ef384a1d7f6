// Command hearth is the binary of the hearth engine: it solves
// distributed constraint optimisation problems with multi-variable agents
// and, for smart homes, schedules appliances across a neighbourhood.
// (cmd/hearth-solve is a lean second binary for `hearth solve FILE
// --global none` alone.)
//
// Usage:
//
//	hearth solve FILE [flags]     solve an instance and print the result
//	hearth inspect FILE [flags]   show the MVA decomposition of an instance
//	hearth gen KIND [k=v ...]     generate a benchmark instance
//	hearth sim FILE [flags]       run every agent over MQTT in one process
//	hearth run --instance FILE --agent NAME [flags]
//	                              run one agent in its own process, over a broker
//	hearth run -c NEIGHBOURHOOD.toml --home NAME [flags]
//	                              run one home: rounds on command, schedule, SIGHUP
//	                              or edited files; publishes its plan
//	hearth home-sim -c NEIGHBOURHOOD.toml (--home NAME | --all) [flags]
//	                              virtual homes: execute the homes' commands,
//	                              publish their state, report the day
//	hearth bench NAME [flags]     reproduce a published experiment (--list)
//	hearth plan FILE.json|-       plan one home from an evcc optimizer request
//	hearth serve --listen ADDR    answer the evcc optimizer's HTTP API
//	hearth devices                list the device catalogue (also: hearth help devices)
//	hearth help [COMMAND]         show help (also -h, and COMMAND -h)
//	hearth version                print the module version and VCS revision
//
// Exit codes: 0 solved, 1 proved infeasible, 2 bad input or usage, 3 the
// solver could not finish (a memory limit, a time-out, an interrupt) or
// found no feasible assignment without proving there is none.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/hearth-dcop/hearth/internal/solvefile"
)

// Exit codes, documented in the package comment and README.md.
// The first four are a solve's (internal/solvefile), which hearth-solve
// shares.
const (
	exitOK         = solvefile.ExitOK
	exitInfeasible = solvefile.ExitInfeasible
	exitUsage      = solvefile.ExitUsage
	exitFailed     = solvefile.ExitFailed
	// exitStopped: --timeout or a signal stopped a homes run, which
	// printed the best plan found so far (status feasible).
	exitStopped = 4
)

// command is one sub-command of the binary.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *env, args []string) int
}

// env carries what a command may touch, so that tests run commands
// in-process with buffers instead of the real streams.
type env struct {
	stdout, stderr io.Writer
	log            *slog.Logger
}

func commands() []command {
	return []command{
		{"solve", "solve an instance file and print the result", runSolve},
		{"inspect", "print the MVA decomposition of an instance file", runInspect},
		{"gen", "generate a benchmark instance (random, radar, meeting, grid, scalefree, randgraph, microgrid)", runGen},
		{"sim", "run every agent of an instance over MQTT in this process (embedded broker) and print the result", runSim},
		{"run", "run one agent of an instance, or one home of a neighbourhood (-c FILE --home NAME), as a long-running MQTT process", runRun},
		{"keygen", "make a home's (or a controller's) signing key and print its public key for the neighbourhood's [keys]", runKeygen},
		{"round", "ask every home of a neighbourhood for a round: a signed command on <prefix>/cmd", runRound},

		{"home-sim", "simulate homes (-c FILE --home NAME or --all) that execute `hearth run`'s commands on an accelerated clock, publish their state, and report the day as it happened", runHomeSim},
		{"bench", "run an experiment of the papers and write CSV, plots and a summary", runBench},
		{"plan", "plan one home from an evcc optimizer request (FILE.json or -) and print the response", runPlan},
		{"devices", "list the device catalogue: kinds, actions, properties and their ranges (also: hearth help devices)", runDevices},
		{"serve", "answer the evcc optimizer's HTTP API (POST /optimize/charge-schedule) with hearth's planner", runServe},
		{"version", "print hearth's module version and VCS revision (also --version)", runVersion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := solvefile.Profile("hearth", os.Stderr)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfile()
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	errw := &watchWriter{w: stderr}
	e := &env{
		stdout: stdout,
		stderr: errw,
		log:    slog.New(slog.NewTextHandler(errw, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name := args[0]
	if name == "--version" || name == "-version" {
		name = "version"
	}
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		if len(args) > 1 {
			for _, c := range commands() {
				if c.name == args[1] {
					return c.run(ctx, e, []string{"-h"})
				}
			}
		}
		usage(stdout)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(ctx, e, args[1:])
		}
	}
	fmt.Fprintf(stderr, "hearth: unknown command %q\n\n", name)
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "hearth — distributed constraint optimisation for multi-variable agents and smart homes")
	fmt.Fprintln(w, "\nUsage:\n  hearth COMMAND [arguments] [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'hearth help COMMAND' for a command's flags.")
	fmt.Fprintln(w, "Exit codes: 0 solved, 1 infeasible, 2 bad input or usage, 3 solver could not finish.")
}

// parseArgs parses flags that may come before or after the positional
// arguments (solvefile.ParseArgs, which hearth-solve shares).
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	return solvefile.ParseArgs(fs, args)
}

// watchWriter records whether anything was written through it: a
// command's stderr, so that usage text asked for (-h) goes to stdout while
// usage after an error follows the error to stderr. Loggers write to it
// from other goroutines (an MQTT client's warnings) while the command
// prints, so the flag is atomic; the writer underneath serialises its own
// writes as before.
type watchWriter struct {
	w     io.Writer
	wrote atomic.Bool
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.wrote.Store(true)
	return w.w.Write(p)
}

// newFlagSet returns a flag set that reports errors instead of exiting. Its
// usage goes to stdout when asked for (-h, help COMMAND) and to stderr
// after an error has been reported there.
func newFlagSet(e *env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		out := e.stderr
		if w, ok := e.stderr.(*watchWriter); ok && !w.wrote.Load() {
			out = e.stdout
		}
		fmt.Fprintf(out, "Usage: hearth %s %s\n\nFlags:\n", name, synopsis)
		fs.SetOutput(out)
		fs.PrintDefaults()
		fs.SetOutput(e.stderr)
	}
	return fs
}

// flagExit maps a flag parsing error to an exit code: -h is not a failure.
func flagExit(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitUsage
}
