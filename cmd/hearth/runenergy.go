package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/internal/daemon"
	liveclock "github.com/hearth-dcop/hearth/internal/live"
)

// runEnergyHome is `hearth run -c street.toml --home NAME` (and
// --once) for a street of energy homes (planner = "energy") with [live]:
// the home plans from its live state with devices/energy, coordinates
// with the street's other energy homes over MQTT (internal/energyround),
// and publishes the checked plan, the current slot's commands and, with
// [publish] home_assistant, Home Assistant discovery (internal/daemon,
// EnergyHome), once or at every slot boundary and input change. A file
// without [live] is refused, saying why. In a mixed street the energy homes and the
// compiled homes answer each other in phases (internal/daemon, mixed.go)
// as `hearth sim` alternates them in process.
func runEnergyHome(ctx context.Context, e *env, fs *flag.FlagSet, o *runOptions, log *slog.Logger, path string, c *config.Config) int {
	if err := daemon.CheckEnergyHome(c, path, o.home); err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %v\n", err)
		return exitUsage
	}
	flags := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { flags[f.Name] = true })
	b := homeBroker(flags, o.broker, c)
	if b.url == "" {
		fmt.Fprintf(e.stderr, "hearth run: %s: no broker: set url in the file's [broker] or give --broker URL\n", path)
		return exitUsage
	}
	cfg, err := b.config("", "")
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %v\n", err)
		return exitUsage
	}
	cfg.Logger = log
	if cfg.Keys, err = o.sec.secure(c.Keys, o.home); err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %s: %v\n", path, err)
		return exitUsage
	}
	if err := o.sec.require(cfg.Broker, cfg.Keys); err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %s: %v\n", path, err)
		return exitUsage
	}
	hc := daemon.HomeConfig{Path: path, Home: o.home, MQTT: cfg, Log: log}
	if flags["home-assistant"] {
		hc.HomeAssistant = &o.homeAssistant
	}
	if flags["discovery-prefix"] {
		hc.DiscoveryPrefix = &o.discovery
	}
	if hc.Clock, err = o.clock(); err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %v\n", err)
		return exitUsage
	}
	eh, err := daemon.NewEnergyHome(hc, c)
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth run: %v\n", err)
		return daemonExit(err)
	}
	if !o.once {
		return serveExit(eh.Run(ctx))
	}
	res, err := eh.Once(ctx, o.runID)
	if err != nil {
		fmt.Fprintf(e.stderr, "hearth run: round %s: %v\n", o.runID, err)
		return daemonExit(err)
	}
	return printEnergyRound(e, res, o.solve.json)
}

// energyRoundJSON is what `hearth run --once --json` prints for an
// energy home.
type energyRoundJSON struct {
	Round string          `json:"round"`
	Slot0 string          `json:"slot0"`
	Home  string          `json:"home"`
	Bill  float64         `json:"bill"`
	Plan  report.HomePlan `json:"plan"`
	// Commands are the current slot's, by device.
	Commands map[string]liveclock.Command `json:"commands"`
	// Street is the coordination with the other energy homes.
	Street energyStreetJSON `json:"street"`
	Notes  []string         `json:"notes"`
}

// energyStreetJSON is an energy home's round of best responses over
// MQTT.
type energyStreetJSON struct {
	// Homes are the energy homes of the round; Compiled the street's
	// compiled homes, whose published loads of the round were the
	// background, CompiledMissing those whose did not come.
	Homes           []string `json:"homes"`
	Compiled        []string `json:"compiled,omitempty"`
	CompiledMissing []string `json:"compiled_missing,omitempty"`
	// Answers counts the phases in which the energy homes answered the
	// compiled homes' answers to theirs (a mixed street).
	Answers   int      `json:"answers,omitempty"`
	Sweeps    int      `json:"sweeps"`
	Moves     int      `json:"moves"`
	Objective float64  `json:"objective"`
	Missing   []string `json:"missing"`
	Dropped   int      `json:"dropped"`
}

func printEnergyRound(e *env, res daemon.EnergyRound, asJSON bool) int {
	out := energyRoundJSON{Round: res.Round, Slot0: res.Horizon.Start.Format(time.RFC3339), Home: res.Home.Name,
		Bill:     res.Plan.ImportCost - res.Plan.ExportRevenue + res.Plan.DemandCost,
		Plan:     daemon.EnergyHomePlan(res.Home, res.Plan),
		Commands: map[string]liveclock.Command{},
		Street: energyStreetJSON{Homes: res.Homes, Compiled: res.Compiled, CompiledMissing: res.CompiledMissing, Answers: res.Answers, Sweeps: res.Street.Sweeps, Moves: res.Street.Moves, Objective: res.Street.Objective,
			Missing: res.Street.Missing, Dropped: res.Street.Dropped}}
	switch st := out.Street; {
	case res.Alone:
		out.Notes = append(out.Notes, "planned alone: no other energy home to coordinate with (or the street's peak term is off); the neighbours' load is taken as zero")
	case len(st.Missing) > 0:
		out.Notes = append(out.Notes, fmt.Sprintf("the round ended at its time-out without the loads of %s: this home's plan as it stood then", strings.Join(st.Missing, ", ")))
	default:
		out.Notes = append(out.Notes, fmt.Sprintf("coordinated with %d energy homes over MQTT: %d sweeps, %d moves, street objective %.4f", len(st.Homes), st.Sweeps, st.Moves, st.Objective))
	}
	if out.Street.Homes == nil {
		out.Street.Homes = []string{}
	}
	if out.Street.Missing == nil {
		out.Street.Missing = []string{}
	}
	if len(res.CompiledMissing) > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("the loads of compiled homes %s did not come by the time-out: answered without them", strings.Join(res.CompiledMissing, ", ")))
	} else if len(res.Compiled) > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("answered the compiled homes' plans of the round (%s), and they this home's: %d phases after the first", strings.Join(res.Compiled, ", "), res.Answers))
	}
	if out.Street.Dropped > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d load messages dropped (unsigned, forged or malformed; see the log)", out.Street.Dropped))
	}
	for _, p := range res.Commands {
		c, err := liveclock.ParseCommand(p.Payload)
		if err != nil {
			fmt.Fprintf(e.stderr, "hearth run: %v\n", err)
			return exitFailed
		}
		out.Commands[p.Topic[strings.LastIndex(p.Topic, "/")+1:]] = c
	}
	if asJSON {
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			fmt.Fprintf(e.stderr, "hearth run: %v\n", err)
			return exitFailed
		}
		e.stdout.Write(append(b, '\n'))
		return exitOK
	}
	fmt.Fprintf(e.stdout, "round %s: energy home %s, slot 0 at %s, bill %.2f over the horizon (%s)\n", out.Round, out.Home, out.Slot0, out.Bill, strings.Join(out.Notes, "; "))
	if len(out.Commands) == 0 {
		fmt.Fprintln(e.stdout, "  no commands: the clock's now lies outside the plan's horizon (a round named for another time)")
	}
	for _, d := range slices.Sorted(maps.Keys(out.Commands)) {
		c := out.Commands[d]
		fmt.Fprintf(e.stdout, "  %s: %s %.3f kW until %s\n", d, c.Action, c.PowerKW, c.SlotEnd)
	}
	return exitOK
}
