package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/internal/daemon"
	liveclock "github.com/hearth-dcop/hearth/internal/live"
	"github.com/hearth-dcop/hearth/internal/solve"
	"github.com/hearth-dcop/hearth/internal/solvefile"
	"github.com/hearth-dcop/hearth/mqtt"
	"github.com/hearth-dcop/hearth/mva"
)

// runOptions are the flags of `hearth run`.
type runOptions struct {
	solve    solveOptions
	broker   brokerOptions
	sec      securityOptions
	instance string
	agent    string
	runID    string
	once     bool
	attempts int
	logLevel string
	// Homes: the neighbourhood (-c, or --shds), the home, what to
	// publish, and how often to look for changed files.
	config, shds, home string
	homeAssistant      bool
	discovery          string
	watch              time.Duration
	// Clock of a home with [live]: --now, --epoch, --speed.
	now, epoch string
	speed      float64
}

// homes reports whether the flags name a home of a neighbourhood rather
// than an agent of an instance.
func (o *runOptions) homes() bool { return o.config != "" || o.shds != "" || o.home != "" }

const runSynopsis = `--instance FILE --agent NAME [flags]
       hearth run -c NEIGHBOURHOOD.toml --home NAME [flags]

Runs one agent of FILE in this process, over an MQTT broker (--broker): every
agent of the instance runs the same command with its own --agent, on this
machine or another, with the same FILE and solver flags. The agent announces
itself, waits for the others, and runs a coordination round when asked:

  <prefix>/cmd                      {"round": "ID"} runs round ID (hearth round ID sends one, signed)
  <prefix>/ID/result/<agent>        its result (retained JSON; also on stdout with --once)

Every message is signed with the key of --sign-key and checked against the
public keys of the neighbourhood's [keys] (or --keys FILE); a broker off this
machine needs TLS and credentials (--password-file or $HEARTH_MQTT_PASSWORD).
--insecure lifts both requirements.

With --once it runs round --run-id at start and exits. A round whose run
breaks (an agent restarted mid-round) is restarted, up to --attempts times,
as run ID.retry1, ID.retry2, ...

With -c (or --shds FILE) it runs home NAME of a neighbourhood: every home's
process reads the same files (its own copy), with the solver of [solver] and
the broker of [broker] unless flags say otherwise. Rounds also start on the
schedule of [run], on SIGHUP, and when the files change (--watch); each home
asks the others on <prefix>/cmd/<home>. After a round the home publishes its
plan, retained:

  <prefix>/cmd/<home>               {"round": "ID", "at": TIME, "created": TIME, "from": HOME}: a home asks for round ID
  <prefix>/home/<home>/plan/<device>  the device's action and kW per slot
  <prefix>/home/<home>/load         the home's planned draw per slot
  homeassistant/sensor/<home>/...   Home Assistant discovery ([publish], --home-assistant)

With [live] in the file the home also reads its devices' state and the
published series, plans on a rolling horizon (slot 0 holds the clock), runs
a round every slot and when its inputs move, and publishes each device's
command for the current slot (README.md, "Live homes"; --now, --epoch and
--speed set its clock). With --once it waits up to 3 s for the devices'
retained state (what has not come is planned from the files, logged), plans
from the slot that holds the clock, and publishes the current slot's
commands with its plan:

  <prefix>/home/<home>/state/<device>    {"time": …, "charge": 31.5, "plugged": true} (in)
  <prefix>/home/<home>/command/<device>  {"round", "slot_start", "slot_end", "expires", "action", "power_kw"} (out, retained)`

func runRun(ctx context.Context, e *env, args []string) int {
	var o runOptions
	fs := newFlagSet(e, "run", runSynopsis)
	o.solve.register(fs, "dpop")
	o.broker.register(fs)
	o.sec.register(fs)
	fs.StringVar(&o.instance, "instance", "", "the instance FILE every agent of the run reads")
	fs.StringVar(&o.agent, "agent", "", "the agent this process runs (its name in FILE)")
	fs.StringVar(&o.runID, "run-id", "", "run round ID at start (required with --once; every agent must be given the same)")
	fs.BoolVar(&o.once, "once", false, "run round --run-id, print the result and exit")
	fs.IntVar(&o.attempts, "attempts", 3, "how many runs a round may take: a run that breaks (an agent restarted mid-round) is started again")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&o.config, "c", "", "homes: the neighbourhood TOML this home's process reads (with --home)")
	fs.StringVar(&o.shds, "shds", "", "homes: an SHDS instance (dm_*.json) instead of -c (with --home)")
	fs.StringVar(&o.home, "home", "", "homes: the home this process runs (its name in the neighbourhood)")
	fs.BoolVar(&o.homeAssistant, "home-assistant", false, "homes: publish Home Assistant discovery configurations too (default [publish] home_assistant)")
	fs.StringVar(&o.discovery, "discovery-prefix", "", "homes: Home Assistant's discovery prefix (default [publish] discovery_prefix, or homeassistant)")
	fs.StringVar(&o.now, "now", "", "homes with [live]: the time the home's clock shows at start (RFC 3339; default the wall clock), for tests and demonstrations")
	fs.StringVar(&o.epoch, "epoch", "", "homes with [live]: the wall-clock time at which the clock shows --now (RFC 3339; default the process's start): give every home of a street the same")
	fs.Float64Var(&o.speed, "speed", 1, "homes with [live]: how many times faster than the wall clock the home's clock runs (with --now)")
	fs.DurationVar(&o.watch, "watch", 3*time.Second, "homes: how often to look for changed input files; a change that holds still for one look is loaded and starts a round (0: never)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if err := o.check(pos); err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %v\n", err)
		return exitUsage
	}
	var level slog.Level
	_ = level.UnmarshalText([]byte(o.logLevel)) // checked by o.check
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "password" {
			log.Warn("--password is visible to every user of this machine (ps): prefer --password-file FILE or $" + passwordEnv)
		}
	})
	if o.homes() {
		return runHome(ctx, e, fs, &o, log)
	}

	cfg, err := o.broker.config(o.solve.Global, "")
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %v\n", err)
		return exitUsage
	}
	cfg.Logger = log
	if cfg.Keys, err = o.sec.secure(config.Keys{}, ""); err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %v\n", err)
		return exitUsage
	}
	dev, err := solve.OpenGPU(o.solve.GPU)
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %v\n", err)
		return exitUsage
	}
	if dev != nil {
		defer dev.Close()
	}
	if o.solve.Delay != 0 {
		log.Warn("--delay is the simulated runtime's latency; over MQTT the real one applies", "delay", o.solve.Delay)
	}
	p, err := loadInstance(o.instance, &o.solve)
	if err != nil {
		fmt.Fprintln(e.stderr, err)
		return exitUsage
	}
	d, err := solve.Prepare(p, o.solve.Options, dev)
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %s: %v\n", o.instance, err)
		return exitFailed
	}
	h, err := daemon.NewAgent(ctx, daemon.AgentConfig{Problem: p, Name: o.agent, Prepared: d.Prepared(), MQTT: cfg, Log: log,
		Instance: o.instance, Attempts: o.attempts})
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %s: %v\n", o.instance, err)
		return daemonExit(err)
	}
	if err := o.sec.require(cfg.Broker, cfg.Keys); err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %v\n", err)
		return exitUsage
	}
	if o.once {
		rep, err := h.Once(ctx, o.runID, nil)
		return printRound(e, o.runID, rep, err, o.solve.json)
	}
	return serveExit(h.Run(ctx, o.runID))
}

// check validates the flags; pos are the positional arguments. The
// solver flags of a home are checked once its file has filled them in.
func (o *runOptions) check(pos []string) error {
	if len(pos) > 0 {
		if homesolve.IsFile(pos[0]) {
			return fmt.Errorf("unexpected argument %q (a neighbourhood is -c FILE --home NAME)", pos[0])
		}
		return fmt.Errorf("unexpected argument %q (the instance is --instance FILE)", pos[0])
	}
	var err error
	if o.homes() {
		err = o.checkHome()
	} else {
		err = o.checkInstance()
	}
	switch {
	case err != nil:
		return err
	case o.once && o.runID == "":
		return errors.New("--once needs --run-id ID, the same for every agent of the round")
	case o.attempts < 1:
		return errors.New("--attempts must be at least 1")
	}
	if o.runID != "" {
		if err := mqtt.CheckRoundID(o.runID); err != nil {
			return fmt.Errorf("--run-id: %w", err)
		}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("--log-level %q: want debug, info, warn or error", o.logLevel)
	}
	return nil
}

func (o *runOptions) checkInstance() error {
	switch {
	case o.instance == "":
		return errors.New("--instance FILE is required (or -c NEIGHBOURHOOD.toml --home NAME for a home)")
	case o.agent == "":
		return errors.New("--agent NAME is required")
	case o.broker.url == "":
		return errors.New("--broker URL is required: every agent process meets the others at a broker (hearth sim runs a whole instance over an embedded one)")
	}
	if err := o.solve.Check(); err != nil {
		return err
	}
	if o.solve.Global == "none" {
		return errors.New("--global none has no agents to run; name a protocol")
	}
	return nil
}

func (o *runOptions) checkHome() error {
	switch {
	case o.instance != "" || o.agent != "":
		return errors.New("give either --instance FILE --agent NAME or -c NEIGHBOURHOOD.toml --home NAME, not both")
	case o.config != "" && o.shds != "":
		return errors.New("give either -c NEIGHBOURHOOD.toml or --shds FILE, not both")
	case o.config == "" && o.shds == "":
		return errors.New("--home needs the neighbourhood: -c NEIGHBOURHOOD.toml (or --shds FILE)")
	case o.home == "":
		return errors.New("--home NAME is required: the home this process runs")
	case o.watch < 0:
		return errors.New("--watch must not be negative (0 never looks for changed files)")
	}
	if _, err := o.clock(); err != nil {
		return err
	}
	return nil
}

// clock is the clock of --now, --epoch and --speed (nil: the wall clock).
func (o *runOptions) clock() (*liveclock.Clock, error) {
	if o.now == "" && o.epoch == "" && o.speed == 1 {
		return nil, nil
	}
	now, err := liveclock.ParseNow(o.now)
	if err != nil {
		return nil, fmt.Errorf("--now %q: %w", o.now, err)
	}
	epoch, err := liveclock.ParseNow(o.epoch)
	if err != nil {
		return nil, fmt.Errorf("--epoch %q: %w", o.epoch, err)
	}
	c, err := liveclock.NewClock(now, epoch, o.speed, nil)
	if err != nil {
		return nil, fmt.Errorf("--speed: %w", err)
	}
	return c, nil
}

// daemonExit is the exit code of an error building or running a daemon:
// 2 for the configuration's, 1 for a hard limit the street cannot keep
// (energy.ErrInfeasible), 3 for the run's.
func daemonExit(err error) int {
	switch {
	case errors.Is(err, daemon.ErrConfig):
		return exitUsage
	case errors.Is(err, energy.ErrInfeasible):
		// A hard limit the street cannot keep: exit 1, as `hearth sim`.
		return exitInfeasible
	}
	return exitFailed
}

// serveExit is the exit code of a daemon's Run: 0 when it stopped on a
// signal, 3 when the broker refused it.
func serveExit(err error) int {
	if err != nil {
		return exitFailed
	}
	return exitOK
}

// printRound prints the result of `hearth run --once` and returns the
// exit code.
func printRound(e *env, round string, rep daemon.RoundResult, err error, asJSON bool) int {
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth run: round %s: %v\n", round, err)
		if errors.Is(err, energy.ErrInfeasible) {
			return exitInfeasible // a mixed street's hard feeder limit, as `hearth sim`
		}
		return exitFailed
	}
	if asJSON {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			fmt.Fprintf(e.stderr, "hearth run: %v\n", err)
			return exitFailed
		}
		e.stdout.Write(append(b, '\n'))
	} else {
		printReport(e.stdout, rep)
	}
	return solvefile.ResultExit(mva.Result{Feasible: rep.Feasible, Status: rep.Status})
}

func fmtObjective(o *float64) string {
	if o == nil {
		return "unknown"
	}
	return solvefile.FormatCost(*o)
}

func printReport(w io.Writer, r daemon.RoundResult) {
	state := "best found"
	if r.Optimal {
		state = "optimal"
	}
	if !r.Feasible {
		state = "infeasible"
		if r.Status == mva.StatusUnknown {
			state = "no feasible assignment found, not a proof"
		}
	}
	fmt.Fprintf(w, "agent       %s, round %s (run %s, %d attempt(s))\n", r.Agent, r.Round, r.Run, r.Attempts)
	fmt.Fprintf(w, "objective   %s (%s, %s); own functions %s\n", fmtObjective(r.Objective), r.Sense, state, fmtObjective(r.LocalObjective))
	var b strings.Builder
	n := 0
	for _, v := range slices.Sorted(maps.Keys(r.Assignment)) {
		if n == solvefile.MaxListed {
			fmt.Fprintf(&b, " … (%d more; --json prints all)", len(r.Assignment)-solvefile.MaxListed)
			break
		}
		fmt.Fprintf(&b, " %s=%s", v, r.Assignment[v])
		n++
	}
	fmt.Fprintf(w, "assignment %s\n", b.String())
	if len(r.Dropped) > 0 {
		fmt.Fprintf(w, "warning     messages dropped as unsigned, forged, replayed or retained on an inbox: %s (see the log)\n", fmtCounts(r.Dropped))
	}
}

// fmtCounts writes counts by key, sorted: "retained 2, unsigned 4".
func fmtCounts(m map[string]int64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
