package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/internal/daemon"
	"github.com/hearth-dcop/hearth/internal/solve"
)

// runHome is `hearth run -c neighbourhood.toml --home NAME` (or --shds):
// it loads the neighbourhood, resolves the broker and the solver from the
// file and the flags, and hands the home to internal/daemon.
func runHome(ctx context.Context, e *env, fs *flag.FlagSet, o *runOptions, log *slog.Logger) int {
	path, shds := o.config, false
	if o.shds != "" {
		path, shds = o.shds, true
	}
	flags := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { flags[f.Name] = true })
	hopts := homeOptionsFrom(fs, &o.solve)
	// The file is read once: an energy home (or any home of a street of
	// energy homes, which has no compiled problem) goes to
	// runEnergyHome; a compiled home is compiled from the same load,
	// without the street's energy homes.
	var r *homesolve.Run
	if shds {
		var err error
		if r, err = homesolve.Load(path, true, hopts); err != nil {
			return loadExit(e.stderr, "run", err)
		}
	} else {
		c, err := config.Load(path)
		if err != nil {
			return loadExit(e.stderr, "run", err)
		}
		en, comp := daemon.EnergyHomes(c)
		if daemon.IsEnergyHome(c, o.home) || len(en) > 0 && len(comp) == 0 {
			return runEnergyHome(ctx, e, fs, o, log, path, c)
		}
		if len(en) > 0 && !c.Live.On {
			fmt.Fprintf(e.stderr, "hearth run: %s: homes %s say planner = \"energy\", and hearth run plans energy homes only with [live] (docs/toml.md): "+
				"without it home %s would plan as if they were not there; add [live], or plan the street with hearth sim\n", path, strings.Join(en, ", "), o.home)
			return exitUsage
		}
		if r, err = homesolve.FromConfig(path, c, hopts); err != nil {
			return loadExit(e.stderr, "run", err)
		}
	}
	for _, n := range r.Notes() {
		log.Warn(n)
	}
	if o.solve.Delay != 0 {
		log.Warn("--delay is the simulated runtime's latency; over MQTT the real one applies", "delay", o.solve.Delay)
	}
	so, err := solve.HomeRun(r, o.solve.Options)
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %s: %v\n", path, err)
		return exitUsage
	}
	b := homeBroker(flags, o.broker, r.Config())
	if b.url == "" {
		fmt.Fprintf(e.stderr, "hearth run: %s: no broker: a home meets the others at an MQTT broker that every home reaches; "+
			"set url in the file's [broker] (the same for every home) or give --broker URL. "+
			"Run Mosquitto on a machine every home reaches (apt install mosquitto); "+
			"to try the neighbourhood on one machine, `hearth sim %s` runs every home over an embedded broker\n", path, path)
		return exitUsage
	}
	cfg, err := b.config(so.Global, "")
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %v\n", err)
		return exitUsage
	}
	cfg.Logger = log
	var keys config.Keys
	if c := r.Config(); c != nil {
		keys = c.Keys
	}
	if cfg.Keys, err = o.sec.secure(keys, o.home); err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %s: %v\n", path, err)
		return exitUsage
	}
	dev, err := solve.OpenGPU(so.GPU)
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %v\n", err)
		return exitUsage
	}
	if dev != nil {
		defer dev.Close()
	}
	hc := daemon.HomeConfig{Path: path, SHDS: shds, Overrides: hopts, Home: o.home, MQTT: cfg, Log: log,
		Attempts: o.attempts, Watch: o.watch,
		Prepare: func(r *homesolve.Run) (daemon.Prepared, error) {
			opts, err := solve.HomeRun(r, o.solve.Options)
			if err != nil {
				return daemon.Prepared{}, err
			}
			d, err := solve.Prepare(r.Problem(), opts, dev)
			if err != nil {
				return daemon.Prepared{}, err
			}
			return d.Prepared(), nil
		}}
	if flags["home-assistant"] {
		hc.HomeAssistant = &o.homeAssistant
	}
	if hc.Clock, err = o.clock(); err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %v\n", err)
		return exitUsage
	}
	if flags["discovery-prefix"] {
		hc.DiscoveryPrefix = &o.discovery
	}
	if !o.once {
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
		hc.Hangup = hup
	}
	hm, err := daemon.NewHome(ctx, hc, r)
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %s: %v\n", path, err)
		return daemonExit(err)
	}
	if err := o.sec.require(cfg.Broker, cfg.Keys); err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %s: %v\n", path, err)
		return exitUsage
	}
	if o.once {
		rep, err := hm.Once(ctx, o.runID)
		return printRound(e, o.runID, rep, err, o.solve.json)
	}
	return serveExit(hm.Run(ctx, o.runID))
}

// homeBroker returns a home's broker settings: the file's [broker], where
// the flags given (set) do not override it. TLS files of the file apply
// only to a TLS URL, so that --broker tcp://… can stand in for a file's
// ssl:// broker.
func homeBroker(set map[string]bool, flags brokerOptions, c *config.Config) brokerOptions {
	b := flags
	if c == nil {
		return b
	}
	fb := c.Broker
	take := func(name string, dst *string, v string) {
		if !set[name] && v != "" {
			*dst = v
		}
	}
	take("broker", &b.url, fb.URL)
	take("username", &b.username, fb.Username)
	if !set["password-file"] {
		take("password", &b.password, fb.Password)
	}
	take("prefix", &b.prefix, fb.TopicPrefix)
	if isTLS(b.url) {
		take("ca", &b.ca, fb.CAFile)
		take("cert", &b.cert, fb.CertFile)
		take("key", &b.key, fb.KeyFile)
	}
	return b
}

func isTLS(url string) bool {
	for _, s := range []string{"ssl://", "tls://", "mqtts://", "wss://"} {
		if strings.HasPrefix(url, s) {
			return true
		}
	}
	return false
}
