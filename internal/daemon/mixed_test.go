package daemon_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/internal/daemon"
	"github.com/hearth-dcop/hearth/internal/live"
	"github.com/hearth-dcop/hearth/mqtt"
	"github.com/hearth-dcop/hearth/mqtt/broker"
)

// TestMixedStreetRun: a mixed street's long-running homes — alder, a
// compiled home, and rowan, an energy home — on a clock at 60× that
// starts at 21:54, within the compiled home's plan-ahead of 22:00: alder
// plans the 22:00 slot round at once, its protocol and then the phases
// in which the two answer each other in turn (mixed.go; here alder's
// answer keeps its plan, which ends them); rowan's first street round
// (every home online, on the 21:00 horizon) does not wait for alder's
// load of that horizon, since alder's final load says it plans 22:00's
// (Compiled.Ahead), so rowan joins the 22:00 slot round in time. Both
// publish their commands of that round, and neither waits out the
// round's time-out. (TestRunMixedStreet in cmd/hearth compares such a
// round's plans with hearth sim's.)
//
// It is left out under the race detector, where rowan's LPs take most
// of a minute, and with -short.
//
// It runs twice: alder's wallbox on the catalogue's fixed levels, and on
// automatic ones, where after the round alder's refined plan gives the
// objective it reports (plans.go) and, after the phases, its refined
// load, on which rowan scores the street (mixed.go's refinedPhase):
// neither waits for the other there either.
func TestMixedStreetRun(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("a simulated slot round at 60×: the energy home's LPs take most of a minute under the race detector")
	}
	fixed := filepath.Join("testdata", "energy", "mixed-live.toml")
	t.Run("fixed levels", func(t *testing.T) { mixedStreetRun(t, fixed) })
	t.Run("automatic levels", func(t *testing.T) {
		dir := t.TempDir()
		rowan, err := filepath.Abs(filepath.Join("testdata", "energy", "rowan.toml"))
		if err != nil {
			t.Fatal(err)
		}
		street, err := os.ReadFile(fixed)
		if err != nil {
			t.Fatal(err)
		}
		alder, err := os.ReadFile(filepath.Join("..", "live", "testdata", "street", "alder.toml"))
		if err != nil {
			t.Fatal(err)
		}
		st := strings.Replace(string(street), `homes = ["rowan.toml", "../../../live/testdata/street/alder.toml"]`, fmt.Sprintf("homes = [%q, \"alder.toml\"]", rowan), 1)
		var lines []string
		for _, ln := range strings.Split(string(alder), "\n") {
			if !strings.HasPrefix(ln, "power_steps") {
				lines = append(lines, ln)
			}
		}
		if st == string(street) || len(lines) == len(strings.Split(string(alder), "\n")) {
			t.Fatal("mixed-live.toml or alder.toml: no homes line or fixed levels to change")
		}
		path := filepath.Join(dir, "mixed-live.toml")
		if err := os.WriteFile(path, []byte(st), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "alder.toml"), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		mixedStreetRun(t, path)
	})
}

// mixedStreetRun is TestMixedStreetRun on the street at path.
func mixedStreetRun(t *testing.T, path string) {
	b, err := broker.Start(broker.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	now0 := time.Date(2026, 11, 26, 21, 54, 0, 0, time.Local)
	clock, err := live.NewClock(now0, time.Time{}, 60, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, rec := recorder(t, b.URL(), "test-mixed-street-run", "hearth/home/+/command/#")
	retainStates(t, c, now0, [][3]string{{"rowan", "ev", `"charge":25,"plugged":true`}, {"alder", "ev", `"charge":20,"plugged":true`}})
	conf, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	s := &liveStreet{t: t, url: b.URL(), path: path, clock: clock,
		logs: map[string]*logBuf{}, cancel: map[string]context.CancelFunc{}, done: map[string]chan error{}}
	s.start("alder")
	ctx, cancel := context.WithCancel(context.Background())
	rowanLog := &logBuf{}
	cfg := mqtt.Config{Broker: mqtt.Broker{URL: b.URL()}, Timing: mqtt.Timing{ConnectTimeout: 5 * time.Second}}
	eh, err := daemon.NewEnergyHome(daemon.HomeConfig{Path: path, Home: "rowan", MQTT: cfg, Clock: clock,
		Log: slog.New(slog.NewTextHandler(rowanLog, &slog.HandlerOptions{Level: slog.LevelInfo}))}, conf)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- eh.Run(ctx) }()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(10 * time.Second):
			t.Error("rowan did not stop")
		}
		s.stop("alder")
		if t.Failed() {
			t.Logf("rowan:\n%s", rowanLog.String())
			t.Logf("alder:\n%s", s.logs["alder"].String())
		}
	}()
	const round = "2026-11-26T2200"
	for _, h := range []string{"alder", "rowan"} {
		rec.await(t, 0, h+"'s command of the 22:00 slot round", 30*time.Second, func(m paho.Message) bool {
			cmd, err := live.ParseCommand(m.Payload())
			return strings.HasPrefix(m.Topic(), "hearth/home/"+h+"/command/") && err == nil && cmd.Round == round
		})
	}
	line := func(l *logBuf, msg string) string {
		for _, ln := range strings.Split(l.String(), "\n") {
			if strings.Contains(ln, msg) && strings.Contains(ln, "round="+round) {
				return ln
			}
		}
		return ""
	}
	if ln := line(rowanLog, "energy home coordinated with the street"); !strings.Contains(ln, `missing=""`) {
		t.Errorf("rowan: the 22:00 round: %q, want none missing", ln)
	}
	if ln := line(s.logs["alder"], "mixed street: the compiled homes answered the energy homes"); ln == "" {
		t.Error("alder: no answer to the energy homes in the 22:00 round")
	}
	for name, l := range map[string]*logBuf{"rowan": rowanLog, "alder": s.logs["alder"]} {
		if ln := line(l, "did not come"); ln != "" {
			t.Errorf("%s waited out the round's time-out: %s", name, ln)
		}
		if ln := line(l, "plans not shared"); ln != "" {
			t.Errorf("%s: %s", name, ln)
		}
	}
}
