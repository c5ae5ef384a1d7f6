package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/homesim"
	"github.com/hearth-dcop/hearth/devices/homesim/tracecheck"
	"github.com/hearth-dcop/hearth/internal/mosquitto"
)

// liveStreet is the live example street (README.md, ./scripts/run).
const liveStreet = "../../examples/live/street.toml"

// liveBillMargin and liveObjectiveMargin are how far above the perfect
// plan's (the whole night and the base load the homes drew known at
// 17:00, solved centrally) the street's realised bill and objective may
// be. The homes plan by the objective — bill, committed peak, goals —
// re-planning every slot on a rolling horizon that knows neither the
// slots of a running coordination window that have passed nor the
// noise of the base load to come, so they commit to different windows
// than the perfect plan (internal/live's TestRollingDay shows how, in
// process, without timing). Measured here on automatic power levels
// (the default since live streets take them; by hand, the same
// processes, a machine at load 20): bill 15.69 $ against 15.19 $
// (+3.3 %), objective (bill and committed peak) 64.62 against 42.67
// (+51.4 %), every goal kept: dogwood's battery and cedar's car both
// charge in the 01:00 window, where the perfect plan puts the battery in
// the 21:00 one, and the noise takes dogwood's import in the 17:00
// window above the nothing it planned (its tightest level 3.9 kW). On
// the catalogue's fixed levels the same night measured bill 19.35 to
// 20.08 $ against 15.65 $ (+23.6 % to +28.3 %), objective 65.94 and
// 68.22 against 64.22: the automatic levels' perfect plan is a third
// cheaper, and the live night's objective about what it was, its bill a
// fifth lower. Below the perfect plan is no fault.
const (
	liveBillMargin      = 0.30
	liveObjectiveMargin = 0.60
)

// liveLead is how much earlier than the night's start the homes'
// agents start (wall time): their clock shows 16:40 at 240×, so that
// their first round is the one at 17:00, as for agents that were running
// before the night began, not one on the grid after they are up (17:20
// or later: the first slot ran a third of it or more without commands).
const liveLead = 5 * time.Second

// TestLiveStreetDay is the end-to-end check, processes as in
// deployment: over Mosquitto, four `hearth run` homes with [live] and
// four virtual homes (`hearth home-sim --all`, one MQTT client each)
// live through the example's night (17:00 to 07:00) at 240 times the
// wall clock. What the virtual homes actually did is replayed by
// tracecheck, apart from both the simulator and the planner: no physical
// bound broken, every goal kept; the realised bill and objective are
// within liveBillMargin and liveObjectiveMargin above the
// perfect-information plan's, and the street's realised peak below the
// peak of the homes planning alone.
func TestLiveStreetDay(t *testing.T) {
	if testing.Short() {
		t.Skip("a simulated night over Mosquitto (about 75 s)")
	}
	b := mosquitto.Start(t, mosquitto.Options{})
	// 240×: an hour-long slot takes 15 s. At 720× (./scripts/run) a
	// round's commands reach the homes a few simulated minutes into the
	// slot, and on a loaded machine under -race a two-slot programme
	// (cedar's oven) was once left short by that; at 240× the delay is a
	// third as long.
	speed := "240"
	now := "2026-11-26T17:00:00Z"
	epoch := time.Now().Add(liveLead).UTC().Format(time.RFC3339Nano)
	for _, h := range []string{"alder", "birch", "cedar", "dogwood"} {
		// Unsigned (--insecure): the fault matrix runs a signed street;
		// this test is about the day the homes live.
		startProc(t, "run-"+h, "run", "-c", liveStreet, "--home", h, "--broker", b.URL(), "--insecure",
			"--now", now, "--epoch", epoch, "--speed", speed, "--log-level", "info")
	}
	sim := startProc(t, "home-sim", "home-sim", "-c", liveStreet, "--all", "--broker", b.URL(),
		"--now", now, "--epoch", epoch, "--speed", speed, "--noise", "0.05", "--seed", "7", "--json", "--log-level", "info",
		// Steps of 15 s (62.5 ms of wall time): a command that reaches
		// the home a few tens of milliseconds after its slot began runs
		// from at most 15 simulated seconds late, not a minute (a
		// one-slot programme's goal is kept to one minute).
		"--step", "15s")
	select {
	case <-sim.done:
	case <-time.After(8 * time.Minute):
		t.Fatal("home-sim still running after 8 minutes")
	}
	if code := sim.cmd.ProcessState.ExitCode(); code != exitOK {
		t.Fatalf("home-sim: exit %d", code)
	}
	var d homesim.Day
	if err := json.Unmarshal([]byte(sim.out.String()), &d); err != nil {
		t.Fatalf("home-sim --json: %v", err)
	}
	if !d.Complete || len(d.Homes) != 4 {
		t.Fatalf("the day was not simulated whole: complete %v, %d homes", d.Complete, len(d.Homes))
	}
	cfg, err := config.Load(liveStreet)
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Neighbourhood
	bill := 0.0
	for hi, hd := range d.Homes {
		if hd.Home != n.Homes[hi].Name {
			t.Fatalf("home %d is %s, the file's %s", hi, hd.Home, n.Homes[hi].Name)
		}
		rep := tracecheck.Check(n, hi, cfg.PV[hi], hd.Trace)
		for _, v := range rep.Violations {
			t.Errorf("%s: %s", hd.Home, v)
		}
		for _, m := range rep.Missed {
			t.Errorf("%s: goal missed: %s", hd.Home, m)
		}
		if len(rep.Missed) > 0 {
			logTrace(t, hd.Trace)
		}
		t.Logf("%s: realised bill %.2f", hd.Home, rep.Bill)
		bill += rep.Bill
	}
	drawn := homesim.AsSimulated(n, homesim.Options{Noise: 0.05, Seed: 7}, cfg.PV)
	refs, ref, err := dayReferences(context.Background(), liveStreet, drawn)
	if err != nil {
		t.Fatal(err)
	}
	plan, alone := refs[0], refs[1]
	// The objective the homes plan by (bill, committed peak, goals), of
	// the day as it happened and of the perfect plan, both priced on the
	// base load the homes drew.
	var done, planned devices.Schedule
	for hi, hd := range d.Homes {
		done.Homes = append(done.Homes, hd.Trace.Schedule(&n.Homes[hi]))
		planned.Homes = append(planned.Homes, homesim.PlanSchedule(&n.Homes[hi], ref.Schedules[hi]))
	}
	evDone, err := drawn.Evaluate(&done)
	if err != nil {
		t.Fatal(err)
	}
	evPlan, err := drawn.Evaluate(&planned)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("objective: realised %.2f (bill %.2f, peak %.2f, miss %.2f), perfect plan %.2f (bill %.2f, peak %.2f, miss %.2f)",
		evDone.Cost, evDone.PriceCost, evDone.PeakCost, evDone.MissCost, evPlan.Cost, evPlan.PriceCost, evPlan.PeakCost, evPlan.MissCost)
	// Goals are judged above by tracecheck on what the devices did, to
	// the second. The model's replay (Trace.Schedule) reads each slot as
	// the action that ran longest in it, so a programme a late command
	// split across two slots can read as never finished and be charged
	// as a missed goal the home kept (CI on a loaded machine: miss
	// 280.00 with every goal kept and two commands clamped). So the
	// realised objective compared here is the bill and the committed
	// peak, with the goals tracecheck found kept.
	realised := evDone.PriceCost + evDone.PeakCost
	if realised > evPlan.Cost*(1+liveObjectiveMargin) {
		t.Errorf("realised objective %.2f (bill and peak; goals kept), more than %.0f%% above the perfect-information plan's %.2f", realised, 100*liveObjectiveMargin, evPlan.Cost)
	}
	peak := 0.0
	for _, l := range d.LoadKW {
		peak = math.Max(peak, l)
	}
	t.Logf("realised bill %.2f (plan %.2f, alone %.2f), peak %.2f kW (plan %.2f, alone %.2f), %d commands clamped",
		bill, plan.Bill, alone.Bill, peak, plan.PeakKW, alone.PeakKW, d.Refusals)
	if bill > plan.Bill*(1+liveBillMargin) {
		t.Errorf("realised bill %.2f, more than %.0f%% above the perfect-information plan's %.2f", bill, 100*liveBillMargin, plan.Bill)
	}
	if peak >= alone.PeakKW {
		t.Errorf("realised street peak %.2f kW, not below the homes-alone peak %.2f kW", peak, alone.PeakKW)
	}
}

// logTrace logs what a home did, for a goal missed: its properties at
// the slot boundaries and each device's actions, slot by slot.
func logTrace(t *testing.T, tr *homesim.Trace) {
	t.Helper()
	var b strings.Builder
	for _, p := range tr.Properties {
		fmt.Fprintf(&b, "\n  %s %s:", p.Location, p.Name)
		for _, v := range p.Values {
			fmt.Fprintf(&b, " %.2f", v)
		}
	}
	for d := range tr.Slots[0].Devices {
		fmt.Fprintf(&b, "\n  %s:", tr.Slots[0].Devices[d].Device)
		for _, st := range tr.Slots {
			var runs []string
			for name, sec := range st.Devices[d].RunS {
				runs = append(runs, fmt.Sprintf("%s %.0fm", name, sec/60))
			}
			slices.Sort(runs)
			fmt.Fprintf(&b, " [%s]", strings.Join(runs, ", "))
		}
	}
	t.Logf("%s, from %s:%s", tr.Home, tr.Start.Format("15:04"), b.String())
}

// startProc starts the test binary as `hearth ARGS` with TZ=UTC (the
// street's clock times are read in the processes' zone); it is stopped
// when the test ends, its log shown when the test fails.
func startProc(t *testing.T, name string, args ...string) *agentProc {
	t.Helper()
	p := &agentProc{name: name, out: &syncBuffer{}, errb: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], args...)
	p.cmd.Env = append(os.Environ(), execEnv+"=1", "TZ=UTC")
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.errb
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() || os.Getenv("HEARTH_TEST_LOGS") != "" {
			log := p.errb.String()
			if len(log) > 6000 {
				log = "…" + log[len(log)-6000:]
			}
			t.Logf("%s (pid %d):\n%s", name, p.cmd.Process.Pid, log)
		}
	})
	return p
}
