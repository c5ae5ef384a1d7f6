package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/homesim"
	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/internal/solve"
	"github.com/hearth-dcop/hearth/mqtt"
	"github.com/hearth-dcop/hearth/mqtt/broker"
	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// tripFlags collects repeated --car flags.
type tripFlags []homesim.TripSpec

func (t *tripFlags) String() string { return "" }
func (t *tripFlags) Set(s string) error {
	sp, err := homesim.ParseTripSpec(s)
	if err != nil {
		return err
	}
	*t = append(*t, sp)
	return nil
}

// runHomeSim is `hearth home-sim -c FILE --home NAME|--all`: virtual homes
// that execute the commands `hearth run` publishes and report the day as
// it happened (devices/homesim).
func runHomeSim(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "home-sim", "-c NEIGHBOURHOOD.toml (--home NAME | --all) [flags]")
	var (
		file, home, nowS, epochS, untilS, serve, logLevel string
		all, asJSON, compare                              bool
		speed, noise                                      float64
		seed                                              uint64
		duration, publish, step                           time.Duration
		cars                                              tripFlags
		b                                                 brokerOptions
	)
	fs.StringVar(&file, "c", "", "the neighbourhood `FILE` (the same files hearth run reads)")
	fs.StringVar(&home, "home", "", "the home to simulate")
	fs.BoolVar(&all, "all", false, "simulate every home of the file (one MQTT client each) and report the street")
	fs.StringVar(&nowS, "now", "", "simulated time at the start: RFC 3339, 2026-11-26T17:00 (local) or 17:00 (today) (default: the start of the file's next horizon)")
	fs.StringVar(&epochS, "epoch", "", "wall time (RFC 3339) at which the simulated clock reads --now, so that processes started apart share one clock (default: now)")
	fs.Float64Var(&speed, "speed", 1, "how many times faster than the wall the simulated clock runs, e.g. 120")
	fs.StringVar(&untilS, "until", "", "simulated time to stop at, as --now (default: the end of the day's horizon)")
	fs.DurationVar(&duration, "duration", 0, "simulated time to run for (instead of --until)")
	fs.Float64Var(&noise, "noise", 0.1, "relative σ of the base load's noise per slot (0: the file's background exactly)")
	fs.Uint64Var(&seed, "seed", 1, "seed of the base load's noise")
	fs.Var(&cars, "car", "a car's daily `TRIP`, DEVICE=LEAVE-RETURN[@CHARGE] (e.g. ev=07:30-17:45@20) or DEVICE=home; repeatable (default: an EV with arrival and departure in its file keeps that window, other EVs are away outside the file's horizon; both come back with its initial charge)")
	fs.DurationVar(&publish, "publish", homesim.DefaultPublish, "how often (simulated) each home publishes its devices' state, besides every slot boundary")
	fs.DurationVar(&step, "step", homesim.DefaultStep, "simulation step (simulated time)")
	fs.StringVar(&serve, "serve", "", "start an embedded MQTT broker listening on ADDR (e.g. 127.0.0.1:1883) for the homes and their agents, when no broker is named")
	fs.BoolVar(&compare, "compare", false, "also plan the day with perfect information (coordinated, solved centrally, knowing the base load the homes will draw) and with every home alone, and report the day against both")
	fs.BoolVar(&asJSON, "json", false, "print the day's report as JSON (with every home's trace)")
	fs.StringVar(&logLevel, "log-level", "warn", "debug, info (every clamped command), warn or error")
	fs.StringVar(&b.url, "broker", "", "MQTT broker URL (default the file's [broker] url; with neither, an embedded broker, see --serve)")
	fs.StringVar(&b.username, "username", "", "MQTT username")
	fs.StringVar(&b.password, "password", "", "MQTT password (default $"+passwordEnv+")")
	fs.StringVar(&b.ca, "ca", "", "PEM file of the broker's CA (ssl:// URLs)")
	fs.StringVar(&b.cert, "cert", "", "PEM client certificate (with --key)")
	fs.StringVar(&b.key, "key", "", "PEM key of --cert")
	fs.StringVar(&b.prefix, "prefix", mqtt.DefaultPrefix, "MQTT topic prefix")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagExit(err)
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(e.stderr, "hearth home-sim: "+format+"\n", a...)
		return exitUsage
	}
	switch {
	case len(pos) > 0:
		return usage("unexpected arguments %s", strings.Join(pos, " "))
	case file == "":
		return usage("-c FILE is required: the neighbourhood file the homes' agents read")
	case (home == "") == !all:
		return usage("give --home NAME or --all")
	case duration < 0:
		return usage("--duration %s: want a positive duration", duration)
	case duration > 0 && untilS != "":
		return usage("give --until or --duration, not both")
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(logLevel)); err != nil {
		return usage("--log-level %q: want debug, info, warn or error", logLevel)
	}
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	cfg, err := config.Load(file)
	if err != nil {
		return loadExit(e.stderr, "home-sim", err)
	}
	n := cfg.Neighbourhood
	var homes []int
	for i := range n.Homes {
		if all || n.Homes[i].Name == home {
			homes = append(homes, i)
		}
	}
	if len(homes) == 0 {
		var names []string
		for _, h := range n.Homes {
			names = append(names, h.Name)
		}
		return usage("%s has no home %q (homes: %s)", file, home, strings.Join(names, ", "))
	}
	wall := time.Now()
	start := homesim.DayStart(n.Horizon, wall)
	if nowS != "" {
		if start, err = homesim.ParseTime(nowS, time.Local, wall); err != nil {
			return usage("--now %v", err)
		}
	}
	epoch := wall
	if epochS != "" {
		if epoch, err = time.Parse(time.RFC3339Nano, epochS); err != nil {
			return usage("--epoch %q: want an RFC 3339 wall time, e.g. 2026-11-26T12:00:05Z", epochS)
		}
	}
	day := homesim.DayStart(n.Horizon, start)
	until := homesim.DayEnd(n.Horizon, day)
	switch {
	case duration > 0:
		until = start.Add(duration)
	case untilS != "":
		if until, err = homesim.ParseTime(untilS, time.Local, start); err != nil {
			return usage("--until %v", err)
		}
	}
	if !until.After(start) {
		return usage("the run would end (%s) before it starts (%s)", until.Format(time.RFC3339), start.Format(time.RFC3339))
	}
	if speed <= 0 || speed > 1e5 {
		return usage("--speed %g: want a factor between 0 and 100000", speed)
	}
	if noise < 0 || noise > 1 {
		return usage("--noise %g: want a relative σ between 0 and 1", noise)
	}
	for _, c := range cars {
		found := false
		for _, hi := range homes {
			found = found || n.Homes[hi].Device(c.Device) >= 0
		}
		if !found {
			return usage("--car %s: no simulated home has a device %q", c.Device, c.Device)
		}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	b = homeBroker(set, b, cfg)
	if err := topic.CheckPrefix(b.prefix); err != nil {
		return usage("--prefix: %v", err)
	}
	if b.password == "" {
		b.password = os.Getenv(passwordEnv)
	}
	hb := homesim.Broker{URL: b.url, Username: b.username, Password: b.password}
	if b.url == "" {
		addr := serve
		if addr == "" {
			addr = broker.DefaultAddr
		}
		eb, err := broker.Start(broker.Config{Addr: addr, Prefix: b.prefix})
		if err != nil {
			fmt.Fprintf(e.stderr, "hearth home-sim: embedded broker: %v\n", err)
			return exitFailed
		}
		defer eb.Close()
		hb.URL = eb.URL()
		fmt.Fprintf(e.stderr, "hearth home-sim: embedded broker at %s\n", eb.URL())
	} else if serve != "" {
		return usage("--serve starts a broker; the file or --broker names one already (%s)", b.url)
	}
	if isTLS(b.url) {
		if hb.TLS, err = mqtt.LoadTLS(b.ca, b.cert, b.key); err != nil {
			return usage("%v", err)
		}
	}
	var refs []homesim.Reference
	if compare {
		sim := homesim.AsSimulated(n, homesim.Options{Noise: noise, Seed: seed}, cfg.PV)
		if refs, _, err = dayReferences(ctx, file, sim); err != nil {
			fmt.Fprintf(e.stderr, "hearth home-sim: --compare: %v\n", err)
			return exitFailed
		}
	}
	rc := homesim.Config{Model: n, Homes: homes, Prefix: b.prefix, Broker: hb,
		Clock: homesim.Clock{Start: start, Epoch: epoch, Speed: speed}, Until: until,
		Options: homesim.Options{Noise: noise, Seed: seed, Step: step},
		Trips: func(hi int) []homesim.Trip {
			h := &n.Homes[hi]
			return homesim.ApplyTrips(homesim.DefaultTrips(n, hi), cars, func(d string) bool { return h.Device(d) >= 0 })
		},
		PV: cfg.PV, Publish: publish, Log: log}
	d, err := homesim.Run(ctx, rc)
	if err != nil && d == nil {
		fmt.Fprintf(e.stderr, "hearth home-sim: %v\n", err)
		return exitFailed
	}
	d.References = refs
	if asJSON {
		out, jerr := d.JSON()
		if jerr != nil {
			fmt.Fprintf(e.stderr, "hearth home-sim: %v\n", jerr)
			return exitFailed
		}
		e.stdout.Write(out)
	} else if werr := d.WriteText(e.stdout); werr != nil {
		fmt.Fprintf(e.stderr, "hearth home-sim: %v\n", werr)
		return exitFailed
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth home-sim: stopped early: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// dayReferences plans the day of n (the file's neighbourhood with the
// base load the virtual homes will draw, homesim.AsSimulated) with
// perfect information — the coordinated optimum, solved centrally by
// bucket elimination — and with every home alone (the uncoordinated
// baseline), for the day report to compare with; and the result whose
// schedules they are.
func dayReferences(ctx context.Context, file string, n *devices.Neighbourhood) ([]homesim.Reference, *report.Homes, error) {
	r, err := homesolve.New(file, n, homesolve.Overrides{Global: "none", Local: "be", Rounds: -1})
	if err != nil {
		return nil, nil, err
	}
	res, assign, err := solve.Homes(ctx, r, solve.HomeOptions(r, solve.Defaults()), nil)
	if err != nil {
		return nil, nil, err
	}
	if assign == nil {
		return nil, nil, fmt.Errorf("%s: no plan keeps every rule", file)
	}
	h, err := r.Report(assign, res)
	if err != nil {
		return nil, nil, err
	}
	return homesim.References(h), h, nil
}
