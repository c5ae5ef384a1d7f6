package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/internal/solve"
	"github.com/hearth-dcop/hearth/internal/solvefile"
	"github.com/hearth-dcop/hearth/local/gpu"
	"github.com/hearth-dcop/hearth/mqtt"
	"github.com/hearth-dcop/hearth/mqtt/sign"
	"github.com/hearth-dcop/hearth/mqtt/topic"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/pipeline"
)

func runSim(ctx context.Context, e *env, args []string) int {
	var (
		o        solveOptions
		b        brokerOptions
		runID    string
		progress bool
		hf       homeFlags
		tcp      bool
		signed   bool
		insecure bool
	)
	fs := newFlagSet(e, "sim", "FILE [flags]\n\n"+
		"Runs every agent of FILE in this process, each with its own MQTT client, over\n"+
		"an embedded broker on loopback (or --broker), and prints the result of\n"+
		"`hearth solve` with the broker, the run id and per-agent MQTT counters.")
	o.register(fs, "dpop")
	b.register(fs)
	fs.StringVar(&runID, "run-id", "", "the run's id, a topic level (default: a fresh random id)")
	fs.BoolVar(&progress, "progress", false, "print a progress line on stderr even when it is not a terminal")
	hf.register(fs, true)
	fs.BoolVar(&tcp, "tcp", false, "embedded broker: connect the agents to it over loopback TCP, as separate processes would, rather than through memory (slower; measures the network path)")
	fs.BoolVar(&signed, "sign", false, "sign every home's messages with a key made for the run, and check what every agent receives, as hearth run does (the default with --broker; about 3x the CPU of an unsigned run on a complete graph)")
	fs.BoolVar(&insecure, "insecure", false, "with --broker: do not sign")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return flagExit(err)
	}
	path, isHomes, ok := hf.file(pos)
	if !ok {
		fmt.Fprintln(e.stderr, "hearth sim: want exactly one instance FILE (an instance, a neighbourhood .toml, or --shds FILE.json)")
		fs.Usage()
		return exitUsage
	}
	pos = []string{path}
	// A neighbourhood of homes (TOML or SHDS) compiles to a problem and
	// brings its own solver choice, which the flags given override.
	if isHomes && hf.shds == "" {
		if code, ok := energyOnly(ctx, e.stdout, e.stderr, "sim", path, &hf, o.json); ok {
			return code
		}
	}
	var homes *homesolve.Run
	if isHomes {
		if homes, o, err = hf.load(path, fs, o); err != nil {
			return loadExit(e.stderr, "sim", err)
		}
	}
	if err := o.Check(); err != nil {
		fmt.Fprintf(e.stderr, "hearth sim: %v\n", err)
		return exitUsage
	}
	if o.Global == "none" {
		fmt.Fprintf(e.stderr, "hearth sim: --global none solves centrally, with no agents to simulate: `hearth solve %s` does that, or name a protocol\n", hf.arg(path))
		return exitUsage
	}
	if o.Delay != 0 {
		e.log.Warn("--delay is the simulated runtime's latency; over MQTT the real one applies", "delay", o.Delay)
	}
	cfg, err := b.config(o.Global, runID)
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth sim: %v\n", err)
		return exitUsage
	}
	dev, err := solve.OpenGPU(o.GPU)
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth sim: %v\n", err)
		return exitUsage
	}
	if dev != nil {
		defer dev.Close()
	}
	var p *mva.Problem
	if homes != nil {
		p = homes.Problem()
	} else if p, err = loadInstance(pos[0], &o); err != nil {
		fmt.Fprintln(e.stderr, err)
		return exitUsage
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	cfg.Logger = e.log
	if signed && insecure {
		fmt.Fprintln(e.stderr, "hearth sim: give --sign or --insecure, not both")
		return exitUsage
	}
	if signed || (cfg.Broker.URL != "" && !insecure) {
		// Keys that live as long as the run: every home's messages are
		// signed and checked, as between `hearth run` processes. The
		// embedded broker is this process's own, on loopback, so there
		// signing is asked for (it costs: README.md, Signed messages).
		names := mqtt.AgentNames(p)
		if cfg.Keys, err = sign.Ephemeral(names); err != nil {
			fmt.Fprintf(e.stderr, "hearth sim: %v\n", err)
			return exitFailed
		}
		cfg.Homes = names
	}
	if tcp && cfg.Broker.URL != "" {
		fmt.Fprintln(e.stderr, "hearth sim: --tcp applies to the embedded broker; with --broker the agents always use the network")
		return exitUsage
	}
	gc := mqtt.GroupConfig{Config: cfg, EmbeddedTCP: tcp}
	started := time.Now()
	// With --timeout, a homes run's protocol gets two thirds of it, so
	// that the improvement phase has time to work on the best plan even
	// when the protocol has not finished.
	pctx := ctx
	if homes != nil && o.Timeout > 0 {
		var cancel context.CancelFunc
		pctx, cancel = context.WithTimeout(ctx, o.Timeout*2/3)
		defer cancel()
	}
	res, err := simulate(pctx, p, o.Options, dev, gc, progressWriter(e.stderr, progress))
	if err == nil && homes != nil && !res.Feasible && pctx.Err() == nil {
		if o2, ok := solve.HomeRestart(homes, o.Options); ok {
			e.log.Info("no feasible schedule; restarting from the homes' own schedules", "protocol", o.Global)
			if gc.Run != "" {
				gc.Run += "-restart"
			}
			res, err = simulate(pctx, p, o2, dev, gc, progressWriter(e.stderr, progress))
		}
	}
	// A homes run stopped by --timeout or a signal prints the best plan
	// it has: the protocol's when it finished, else the homes' own
	// schedules, improved on the load that flows as far as time allowed.
	var assign []int
	stopped := ""
	mq := mqttSummary(res)
	if homes != nil && pctx.Err() != nil {
		stopped = stopReason(ctx, o.Timeout, started)
		if err != nil || !res.Feasible {
			a, fb, ok := homes.Fallback()
			if !ok {
				fmt.Fprintf(e.stderr, "hearth sim: %s: %s during %s, with no feasible plan yet\n", pos[0], stopped, o.Global)
				return exitFailed
			}
			fb.Algorithm = mva.Algorithm{Global: o.Global, Local: o.Local.Name, Table: o.Table}
			fb.Notes = append(res.Notes, fmt.Sprintf("%s during %s: the plan starts from the homes' own schedules (the protocol's start)", stopped, o.Global))
			assign, res, err, mq = a, solve.MQTTResult{Result: fb}, nil, nil
		}
	}
	if err == nil && homes != nil && res.Feasible && stopped == "" {
		// The descent of the improvement phase between the homes, over
		// MQTT like the protocol: per-slot loads, not schedules.
		dg := gc
		if dg.Run != "" {
			dg.Run += "-descent"
		}
		dg.Timing = dg.Timing.ForAgents(len(p.Agents))
		g := &mqtt.Group{Config: dg}
		a, r2, derr := homes.Descend(pctx, assign, res.Result, g)
		switch {
		case derr == nil:
			assign, res.Result = a, r2
			if mq != nil {
				d := mqttSummary(solve.MQTTResult{Agents: g.Last.Stats})
				mq.Envelopes += d.Envelopes
				mq.EnvelopeBytes += d.EnvelopeBytes
				mq.Retransmitted += d.Retransmitted
				mq.Connections += d.Connections
			}
		case pctx.Err() != nil:
			stopped = stopReason(ctx, o.Timeout, started)
			res.Notes = append(res.Notes, stopped+" during the descent between the homes: the plan improves on the protocol's in process")
		default:
			err = derr
		}
	}
	if err == nil && homes != nil {
		assign, res.Result, stopped, err = finishHomes(ctx, homes, assign, res.Result, stopped, o.Timeout, started)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth sim: %s: %v\n", pos[0], err)
		return energyExit(err)
	}
	res.Instance = pos[0]
	if res.SecurityDrops != nil {
		e.log.Warn("messages dropped as unsigned, forged, replayed or retained on an inbox", "dropped", fmtCounts(res.SecurityDrops))
	}
	if homes != nil {
		if err := hf.render(e.stdout, homes, assign, res.Result, o.json, mq); err != nil {
			fmt.Fprintf(e.stderr, "hearth sim: %s: %v\n", pos[0], err)
			return energyExit(err)
		}
		if stopped != "" {
			return exitStopped
		}
	} else if o.json {
		// The sums the text's mqtt line prints ride beside the
		// per-agent counters.
		b, err := json.MarshalIndent(struct {
			solve.MQTTResult
			MQTT *report.MQTT `json:"mqtt"`
		}{res, mqttSummary(res)}, "", "  ")
		if err != nil {
			fmt.Fprintf(e.stderr, "hearth sim: %v\n", err)
			return exitFailed
		}
		e.stdout.Write(append(b, '\n'))
	} else {
		solvefile.PrintSummary(e.stdout, p, res.Result)
		printMQTTSummary(e.stdout, res)
	}
	return solvefile.ResultExit(res.Result)
}

// finishHomes runs what follows a street's protocol in `hearth sim` and
// `hearth solve` alike: on a feasible plan the improvement phase on the
// load that flows (homesolve.Run.Improve), then, unless a stop came
// first, the energy homes' answer (homesolve.Run.Answer). A stopped run
// (stopped names why, or the phase halted for ctx: stopReason) is marked
// feasible, not optimal, and reports no SH-MGM-style baseline it could
// not finish. It returns the plan, its result and the stop's reason, ""
// when none.
func finishHomes(ctx context.Context, homes *homesolve.Run, assign []int, res mva.Result, stopped string, timeout time.Duration, started time.Time) ([]int, mva.Result, string, error) {
	if res.Feasible {
		a, r2, halted, err := homes.Improve(ctx, assign, res)
		if err != nil {
			return assign, res, stopped, err
		}
		assign, res = a, r2
		if halted && stopped == "" {
			stopped = stopReason(ctx, timeout, started)
			res.Notes = append(res.Notes, stopped+" during the improvement phase: the plan is the best found so far")
		}
		if stopped == "" {
			// Energy homes (planner = "energy") and the compiled homes
			// answer each other on the load that flows.
			if assign, res, err = homes.Answer(ctx, assign, res); err != nil {
				return assign, res, stopped, err
			}
		}
	}
	if stopped != "" {
		homes.SkipSHMGM(stopped)
		res.Optimal, res.Status = false, mva.StatusFeasible
		res.Metrics.WallMs = float64(time.Since(started).Microseconds()) / 1000
	}
	return assign, res, stopped, nil
}

// stopReason says what stopped a run: its --timeout, or a signal.
func stopReason(ctx context.Context, timeout time.Duration, started time.Time) string {
	if timeout > 0 && (ctx.Err() == nil || errors.Is(ctx.Err(), context.DeadlineExceeded)) {
		return fmt.Sprintf("stopped by --timeout %v", timeout)
	}
	return fmt.Sprintf("stopped by a signal after %.1f s", time.Since(started).Seconds())
}

// simulate is solve.MQTT with a progress line on pl, when not nil.
func simulate(ctx context.Context, p *mva.Problem, o solve.Options, dev *gpu.Device, cfg mqtt.GroupConfig, pl *progressLine) (solve.MQTTResult, error) {
	var progress *pipeline.Progress
	if pl != nil {
		progress = &pipeline.Progress{}
		defer pl.run(progress, time.Now())()
	}
	return solve.MQTT(ctx, p, o, dev, cfg, progress)
}

// mqttSummary sums the agents' transport counters, the figures
// printMQTTSummary prints and a homes result carries under "mqtt".
func mqttSummary(r solve.MQTTResult) *report.MQTT {
	m := &report.MQTT{Broker: r.Broker, Transport: r.Transport, Run: r.Run}
	for _, s := range r.Agents {
		m.Envelopes += s.Envelopes
		m.EnvelopeBytes += s.EnvelopeBytes
		m.Retransmitted += s.Retransmitted
		m.Connections += s.Connects
		for k, v := range s.Dropped {
			if m.Dropped == nil {
				m.Dropped = map[string]int64{}
			}
			m.Dropped[k] += v
		}
	}
	return m
}

func printMQTTSummary(w io.Writer, r solve.MQTTResult) {
	m := mqttSummary(r)
	via := ""
	if m.Transport == "memory" {
		via = " (agents through memory)"
	}
	fmt.Fprintf(w, "mqtt        %s%s, run %s: %d envelopes (%d bytes), %d retransmitted, %d connections\n",
		m.Broker, via, m.Run, m.Envelopes, m.EnvelopeBytes, m.Retransmitted, m.Connections)
	if len(m.Dropped) > 0 {
		fmt.Fprintf(w, "dropped     %v\n", m.Dropped)
	}
	if sec := mqtt.SecurityDropped(r.Agents); sec != nil {
		fmt.Fprintf(w, "warning     messages dropped as unsigned, forged, replayed or retained on an inbox: %s\n", fmtCounts(sec))
	}
}

// progressLine prints `hearth sim`'s progress on stderr: rewritten in
// place on a terminal, one line per interval otherwise.
type progressLine struct {
	w        io.Writer
	terminal bool
	every    time.Duration
}

// progressWriter returns the progress line for w, or nil when there should
// be none: only on a terminal (isTerminal, shared with hearth bench),
// unless forced.
func progressWriter(w io.Writer, force bool) *progressLine {
	tty := isTerminal(w)
	if !tty && !force {
		return nil
	}
	every := time.Second
	if tty {
		every = 200 * time.Millisecond
	}
	return &progressLine{w: w, terminal: tty, every: every}
}

// run prints the line every interval until the returned function is
// called, which clears it on a terminal.
func (pl *progressLine) run(ob *pipeline.Progress, start time.Time) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(pl.every)
		defer t.Stop()
		for {
			select {
			case <-done:
				if pl.terminal {
					fmt.Fprint(pl.w, "\r\033[K")
				} else {
					pl.print(ob, time.Since(start)) // the final count, for logs
				}
				return
			case now := <-t.C:
				pl.print(ob, now.Sub(start))
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

func (pl *progressLine) print(ob *pipeline.Progress, elapsed time.Duration) {
	n, started, done, delivered, sent := ob.Snapshot()
	var rate float64
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(delivered) / s
	}
	line := fmt.Sprintf("sim %5.1fs  agents %d: %d started, %d done  messages %d sent, %d delivered (%.0f/s)",
		elapsed.Seconds(), n, started, done, sent, delivered, rate)
	if pl.terminal {
		fmt.Fprint(pl.w, "\r\033[K"+line)
		return
	}
	fmt.Fprintln(pl.w, strings.TrimSpace(line))
}

// brokerOptions are the MQTT flags of `hearth sim` and `hearth run`.
type brokerOptions struct {
	url, username, password string
	passwordFile            string
	ca, cert, key           string
	prefix                  string
	timing                  mqtt.Timing
	noMulticast             bool
}

// passwordEnv is read when --password is not given, so that a password
// need not appear in the process list.
const passwordEnv = "HEARTH_MQTT_PASSWORD"

func (b *brokerOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&b.url, "broker", "", "MQTT broker URL, e.g. tcp://host:1883 or ssl://host:8883 (sim: default an embedded broker on loopback)")
	fs.StringVar(&b.username, "username", "", "MQTT username (with per-home ACLs: the home's name)")
	fs.StringVar(&b.password, "password", "", "MQTT password: visible to every user of the machine in ps, prefer --password-file or $"+passwordEnv)
	fs.StringVar(&b.passwordFile, "password-file", "", "a file whose first line is the MQTT password (default $"+passwordEnv+")")
	fs.StringVar(&b.ca, "ca", "", "PEM file of the CA that signed the broker's certificate (ssl:// URLs; default the system's roots)")
	fs.StringVar(&b.cert, "cert", "", "PEM client certificate, for brokers that ask for one (with --key)")
	fs.StringVar(&b.key, "key", "", "PEM key of --cert")
	fs.StringVar(&b.prefix, "prefix", mqtt.DefaultPrefix, "MQTT topic prefix; may hold several levels, e.g. street-7/hearth")
	fs.DurationVar(&b.timing.KeepAlive, "keepalive", 30*time.Second, "MQTT keep-alive")
	fs.DurationVar(&b.timing.ReconnectMax, "reconnect-max", 10*time.Second, "longest wait between reconnection attempts")
	fs.DurationVar(&b.timing.StatusInterval, "status-interval", 0, "how often a running agent republishes its status, its acknowledgements (default 1s, or 50ms per agent above 20 agents)")
	fs.DurationVar(&b.timing.RetransmitAfter, "retransmit-after", 0, "first retransmission of a message not acknowledged, then doubling up to 8x (default 30s, at least 3 status intervals)")
	fs.BoolVar(&b.noMulticast, "no-multicast", false, "send every message on its receiver's inbox, never once on the sender's multicast topic (for brokers whose ACLs forbid reading other agents' topics)")
	fs.DurationVar(&b.timing.ConnectTimeout, "connect-timeout", 0, "bound of one connection attempt, and of the wait for the broker to echo an agent's first status (default 10s, or 300ms per agent above 33 agents)")
}

// config returns the MQTT configuration the flags describe for a run of
// protocol (run may be empty: a fresh id is drawn).
func (b *brokerOptions) config(protocol, run string) (mqtt.Config, error) {
	if err := topic.CheckPrefix(b.prefix); err != nil {
		return mqtt.Config{}, fmt.Errorf("--prefix: %w", err)
	}
	if run != "" {
		if err := topic.CheckName(run); err != nil {
			return mqtt.Config{}, fmt.Errorf("--run-id: %w", err)
		}
	}
	cfg := mqtt.Config{
		Broker:      mqtt.Broker{URL: b.url, Username: b.username, Password: b.password},
		Prefix:      b.prefix,
		Run:         run,
		Protocol:    protocol,
		Timing:      b.timing,
		NoMulticast: b.noMulticast,
	}
	if b.passwordFile != "" {
		if b.password != "" {
			return cfg, errors.New("give the password once: --password-file or --password, not both")
		}
		pw, err := readPasswordFile(b.passwordFile)
		if err != nil {
			return cfg, err
		}
		cfg.Broker.Password = pw
	}
	if cfg.Broker.Password == "" {
		cfg.Broker.Password = os.Getenv(passwordEnv)
	}
	if b.ca != "" || b.cert != "" || b.key != "" {
		if !strings.HasPrefix(b.url, "ssl://") && !strings.HasPrefix(b.url, "tls://") && !strings.HasPrefix(b.url, "wss://") {
			return cfg, errors.New("--ca, --cert and --key need a TLS broker URL (ssl://host:8883)")
		}
		t, err := mqtt.LoadTLS(b.ca, b.cert, b.key)
		if err != nil {
			return cfg, err
		}
		cfg.Broker.TLS = t
	}
	return cfg, nil
}
