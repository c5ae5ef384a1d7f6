package daemon_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices/plancheck"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/internal/daemon"
	"github.com/hearth-dcop/hearth/internal/live"
	"github.com/hearth-dcop/hearth/mqtt"
	"github.com/hearth-dcop/hearth/mqtt/broker"
)

// TestEnergyHomeOnce runs `hearth run --once` for an energy home with
// [live] over the embedded broker: its battery's retained state of
// charge (35 % on a meter's topic) and its car's (22 kWh, plugged in, on
// hearth's state topic) are what it plans from, on the rolling horizon
// from the slot that holds the clock (20:10 → 20:00); the plan it
// publishes passes the checker and, replayed here from the published
// kW with the catalogue's figures, keeps the battery in its range and
// charges the car to its goal by 07:00; the commands are the current
// slot's, the same as the plan's slot 0.
// energyOnce runs `hearth run --once` for rowan (testdata/energy) over
// an embedded broker at 20:10, its battery's state of charge soc % and
// its car's state ev (JSON fields) retained; it returns the round, what
// the test's client received under hearth/home/rowan, and the log.
func energyOnce(t *testing.T, soc, ev string) (daemon.EnergyRound, *msgs, *logBuf) {
	t.Helper()
	res, rec, lb, err := energyOnceIn(t, "street.toml", soc, ev)
	if err != nil {
		t.Fatalf("%v\n%s", err, lb.String())
	}
	return res, rec, lb
}

// energyOnceIn is energyOnce for street file (testdata/energy), with the
// round's error.
func energyOnceIn(t *testing.T, file, soc, ev string) (daemon.EnergyRound, *msgs, *logBuf, error) {
	t.Helper()
	return energyOnceHA(t, file, soc, ev, false)
}

// energyOnceHA is energyOnceIn with Home Assistant discovery on or off;
// the messages are those under hearth/home/rowan and, with discovery,
// homeassistant/.
func energyOnceHA(t *testing.T, file, soc, ev string, ha bool) (daemon.EnergyRound, *msgs, *logBuf, error) {
	t.Helper()
	return energyOnceWith(t, file, soc, ev, ha, nil)
}

// energyOnceWith is energyOnceHA with more retained messages (topic to
// payload) published before the round.
func energyOnceWith(t *testing.T, file, soc, ev string, ha bool, retained map[string]string) (daemon.EnergyRound, *msgs, *logBuf, error) {
	t.Helper()
	b, err := broker.Start(broker.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	path := filepath.Join("testdata", "energy", file)
	now0 := time.Date(2026, 11, 26, 20, 10, 0, 0, time.Local)
	clock, err := live.NewClock(now0, time.Time{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, rec := recorder(t, b.URL(), "test-energy", "hearth/home/rowan/#")
	if ha {
		if tok := c.Subscribe("homeassistant/#", 1, rec.add); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
	}
	pub := func(tp, payload string) {
		t.Helper()
		if tok := c.Publish(tp, 1, true, payload); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
	}
	pub("meter/battery/soc", soc)
	pub(live.StateTopic("hearth", "rowan", "ev"), fmt.Sprintf(`{"time":%q,%s}`, clock.Now().Format(time.RFC3339), ev))
	for tp, v := range retained {
		pub(tp, v)
	}
	conf, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	lb := &logBuf{}
	log := slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg := mqtt.Config{Broker: mqtt.Broker{URL: b.URL()}, Timing: mqtt.Timing{ConnectTimeout: 5 * time.Second}}
	eh, err := daemon.NewEnergyHome(daemon.HomeConfig{Path: path, Home: "rowan", MQTT: cfg, Log: log, Clock: clock, HomeAssistant: &ha}, conf)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := eh.Once(ctx, "")
	return res, rec, lb, err
}

func TestEnergyHomeOnce(t *testing.T) {
	res, rec, lb := energyOnce(t, "35", `"charge":22,"plugged":true`)
	if want := time.Date(2026, 11, 26, 20, 0, 0, 0, time.Local); !res.Horizon.Start.Equal(want) {
		t.Errorf("slot 0 starts %v, want %v (the slot that holds 20:10)", res.Horizon.Start, want)
	}
	// The catalogue's home_battery: 13.5 kWh, 5 kW, 95 % each way; 35 %
	// of it is 4.725 kWh (to the property's resolution). Its
	// ev_wallbox_11kw stores 89 % of what it draws.
	const capKWh, eta, evEta = 13.5, 0.95, 0.89
	// The payloads' kW are rounded to the watt.
	const tol = 0.02
	bat := res.Home.Storage[0]
	if bat.Name != "battery" || math.Abs(bat.Initial-0.35*capKWh) > 0.05 {
		t.Errorf("battery planned from %g kWh, want 35%% of %g", bat.Initial, capKWh)
	}
	if ev := res.Home.Storage[1]; ev.Name != "ev" || ev.Initial != 22 {
		t.Errorf("ev planned from %g kWh, want the live 22", ev.Initial)
	}
	if err := plancheck.Check(res.Home, res.Plan).Err(); err != nil {
		t.Errorf("published plan fails the checker: %v", err)
	}
	if !strings.Contains(lb.String(), "neighbours' load is taken as zero") {
		t.Errorf("the log does not say the home plans alone:\n%s", lb.String())
	}

	plans, cmds := rowanPlans(t, rec)
	// Replay the published plans, apart from the planner and the checker.
	soc := 0.35 * capKWh
	evKWh := 22.0
	for k, s := range parsePlan(t, plans["battery"]).Slots {
		if s.KW > 0 {
			soc += s.KW * eta
		} else {
			soc += s.KW / eta
		}
		if soc < -tol || soc > capKWh+tol || math.Abs(s.KW) > 5+1e-9 {
			t.Errorf("battery slot %d: %g kW leaves %g kWh, outside [0, %g]", k, s.KW, soc, capKWh)
		}
	}
	evPlan := parsePlan(t, plans["ev"])
	for _, s := range evPlan.Slots {
		if s.Time == "07:00" {
			break
		}
		evKWh += s.KW * evEta
	}
	if evKWh < 40-tol {
		t.Errorf("the car holds %g kWh at 07:00, want 40", evKWh)
	}
	for dev, cmd := range cmds {
		slot0 := parsePlan(t, plans[dev]).Slots[0]
		if !mustTime(t, cmd.SlotStart).Equal(res.Horizon.Start) || cmd.PowerKW != slot0.KW || cmd.Action != slot0.Action || cmd.Round != "2026-11-26T2000" {
			t.Errorf("%s: command %+v, want the plan's slot 0 %+v", dev, cmd, slot0)
		}
		if mustTime(t, cmd.Expires).Sub(mustTime(t, cmd.SlotEnd)) != 5*time.Minute {
			t.Errorf("%s: expires %s for a slot ending %s, want command_grace's 5m after", dev, cmd.Expires, cmd.SlotEnd)
		}
	}
}

// TestEnergyHomeFails: a round with no plan to publish (a hard goal no
// plan can meet) fails and publishes neither plan nor command.
func TestEnergyHomeFails(t *testing.T) {
	_, rec, lb, err := energyOnceIn(t, "hard.toml", "35", `"charge":22,"plugged":true`)
	if err == nil || !strings.Contains(err.Error(), `hard goal "charge geq 60 before 21:00"`) {
		t.Fatalf("err = %v, want the hard goal out of reach named\n%s", err, lb.String())
	}
	// The test's client saw its own retained state only; a plan or
	// command would have come before Once returned (QoS 1, published
	// and acknowledged), so a short settle suffices.
	time.Sleep(200 * time.Millisecond)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, m := range rec.all {
		if strings.Contains(m.Topic(), "/plan/") || strings.Contains(m.Topic(), "/command/") {
			t.Errorf("a failed round published %s", m.Topic())
		}
	}
}

// TestEnergyHomeAway: a car that is away (plugged false) neither
// charges nor discharges in any slot, and its goal does not apply; its
// command is idle at 0 kW.
func TestEnergyHomeAway(t *testing.T) {
	res, rec, lb := energyOnce(t, "35", `"charge":22,"plugged":false`)
	ev := res.Home.Storage[1]
	if len(ev.Goals) != 0 || len(ev.Available) != res.Home.Slots() || slices.Contains(ev.Available, true) {
		t.Errorf("away car: goals %v, available %v; want none and never", ev.Goals, ev.Available)
	}
	for k := range res.Plan.Charge[1] {
		if res.Plan.Charge[1][k] > 1e-9 || res.Plan.Discharge[1][k] > 1e-9 {
			t.Errorf("away car charges %g / discharges %g kW in slot %d", res.Plan.Charge[1][k], res.Plan.Discharge[1][k], k)
		}
	}
	m := rec.await(t, 0, "the car's command", 10*time.Second, func(m paho.Message) bool {
		return m.Topic() == live.CommandTopic("hearth", "rowan", "ev")
	})
	if cmd, err := live.ParseCommand(m.Payload()); err != nil || cmd.Action != "idle" || cmd.PowerKW != 0 {
		t.Errorf("away car's command %s (%v), want idle at 0 kW\n%s", m.Payload(), err, lb.String())
	}
}

// TestEnergyHomeRun runs a long-running energy home on a clock 60
// times the wall clock's speed from 20:58:30: it plans at once (round of
// the 20:00 slot), again within moments of its battery's state moving
// off the plan (35 % → 80 %), and at the 21:00 boundary, whose command
// it publishes for the new slot.
// rowanPlans waits for rowan's two plans and two commands among what rec
// recorded and returns them by device.
func rowanPlans(t *testing.T, rec *msgs) (map[string]paho.Message, map[string]live.Command) {
	t.Helper()
	plans := map[string]paho.Message{}
	cmds := map[string]live.Command{}
	rec.await(t, 0, "the plans and commands", 10*time.Second, func(m paho.Message) bool {
		dev := m.Topic()[strings.LastIndex(m.Topic(), "/")+1:]
		switch {
		case strings.HasPrefix(m.Topic(), "hearth/home/rowan/plan/"):
			plans[dev] = m
		case strings.HasPrefix(m.Topic(), "hearth/home/rowan/command/"):
			cmd, err := live.ParseCommand(m.Payload())
			if err != nil {
				t.Fatal(err)
			}
			cmds[dev] = cmd
		}
		return len(plans) == 2 && len(cmds) == 2
	})
	return plans, cmds
}

// watchRowan starts a broker and a client, id, that records everything
// under rowan's topics; both close when the test ends.
func watchRowan(t *testing.T, id string) (*broker.Broker, paho.Client, *msgs) {
	t.Helper()
	b, err := broker.Start(broker.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	c, rec := recorder(t, b.URL(), id, "hearth/home/rowan/#")
	return b, c, rec
}

// runRowan runs the energy home rowan of the file at path as a
// long-running home on the broker at url; stop cancels it, waits for it
// (10 s at most) and logs what it logged when the test failed.
func runRowan(t *testing.T, url, path string, clock *live.Clock) (lb *logBuf, stop func()) {
	t.Helper()
	conf, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	lb = &logBuf{}
	log := slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg := mqtt.Config{Broker: mqtt.Broker{URL: url}, Timing: mqtt.Timing{ConnectTimeout: 5 * time.Second}}
	eh, err := daemon.NewEnergyHome(daemon.HomeConfig{Path: path, Home: "rowan", MQTT: cfg, Log: log, Clock: clock}, conf)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eh.Run(ctx) }()
	return lb, func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(10 * time.Second):
			t.Error("the home did not stop")
		}
		if t.Failed() {
			t.Logf("log:\n%s", lb.String())
		}
	}
}

func TestEnergyHomeRun(t *testing.T) {
	path := filepath.Join("testdata", "energy", "street.toml")
	clock, err := live.NewClock(time.Date(2026, 11, 26, 20, 58, 30, 0, time.Local), time.Time{}, 60, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, c, rec := watchRowan(t, "test-energy-run")
	pub := func(tp, payload string) {
		t.Helper()
		if tok := c.Publish(tp, 1, true, payload); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
	}
	pub("meter/battery/soc", "35")
	pub(live.StateTopic("hearth", "rowan", "ev"), fmt.Sprintf(`{"time":%q,"charge":22,"plugged":true}`, clock.Now().Format(time.RFC3339)))
	lb, stop := runRowan(t, b.URL(), path, clock)
	defer stop()
	command := func(from int, round string) live.Command {
		t.Helper()
		m := rec.await(t, from, "the command of round "+round, 10*time.Second, func(m paho.Message) bool {
			cmd, err := live.ParseCommand(m.Payload())
			return m.Topic() == live.CommandTopic("hearth", "rowan", "battery") && err == nil && cmd.Round == round
		})
		cmd, _ := live.ParseCommand(m.Payload())
		return cmd
	}
	command(0, "2026-11-26T2000")
	mark := rec.mark()
	pub("meter/battery/soc", "80")
	rec.await(t, mark, "a plan after the battery moved off the plan", 10*time.Second, func(m paho.Message) bool {
		if m.Topic() != "hearth/home/rowan/plan/battery" {
			return false
		}
		p := parsePlan(t, m)
		return len(p.Round) == len("2006-01-02T150405") && strings.HasPrefix(p.Round, "2026-11-26T")
	})
	cmd := command(mark, "2026-11-26T2100")
	// Logged after the plan was published, so by now.
	if !strings.Contains(lb.String(), "battery off the plan") {
		t.Errorf("the log does not say why the home planned again:\n%s", lb.String())
	}
	if want := time.Date(2026, 11, 26, 21, 0, 0, 0, time.Local); !mustTime(t, cmd.SlotStart).Equal(want) {
		t.Errorf("21:00's command is for the slot from %s", cmd.SlotStart)
	}
}

// TestEnergyStreetMixed: in a street that mixes energy homes with
// compiled homes, hearth run runs the energy home and refuses to run a
// compiled home as one, naming it.
func TestEnergyStreetMixed(t *testing.T) {
	conf, err := config.Load(filepath.Join("testdata", "energy", "mixed.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := daemon.NewEnergyHome(daemon.HomeConfig{Path: "mixed.toml", Home: "rowan"}, conf); err != nil {
		t.Errorf("energy home of a mixed street: %v", err)
	}
	_, err = daemon.NewEnergyHome(daemon.HomeConfig{Path: "mixed.toml", Home: "alder"}, conf)
	if !errors.Is(err, daemon.ErrNotEnergyHome) || !errors.Is(err, daemon.ErrConfig) {
		t.Fatalf("err = %v, want ErrNotEnergyHome and ErrConfig", err)
	}
	for _, want := range []string{"alder", "compiled"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}

// TestEnergyStreetRun runs the two energy homes of testdata/energy's
// pair.toml as long-running homes on clocks 60 times the wall clock's
// from 20:58:30: each plans its first round alone, and the slot round at
// 21:00 is the street's — both homes take part, every load comes (no
// home missing), and both publish their commands for the 21:00 slot,
// also where the round when both came online ran past the boundary.
func TestEnergyStreetRun(t *testing.T) {
	b, err := broker.Start(broker.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	path := filepath.Join("testdata", "energy", "pair.toml")
	now0 := time.Date(2026, 11, 26, 20, 58, 30, 0, time.Local)
	c, rec := recorder(t, b.URL(), "test-energy-street-run", "hearth/home/+/command/#")
	retainStates(t, c, now0, [][3]string{{"hazel", "battery", `"soc":3`}, {"ivy", "ev", `"charge":10,"plugged":true`}})
	conf, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	homes := []string{"hazel", "ivy"}
	logs := make([]*logBuf, len(homes))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, len(homes))
	for i, h := range homes {
		clock, err := live.NewClock(now0, time.Time{}, 60, nil)
		if err != nil {
			t.Fatal(err)
		}
		logs[i] = &logBuf{}
		log := slog.New(slog.NewTextHandler(logs[i], &slog.HandlerOptions{Level: slog.LevelInfo}))
		cfg := mqtt.Config{Broker: mqtt.Broker{URL: b.URL()}, Timing: mqtt.Timing{ConnectTimeout: 5 * time.Second}}
		eh, err := daemon.NewEnergyHome(daemon.HomeConfig{Path: path, Home: h, MQTT: cfg, Log: log, Clock: clock}, conf)
		if err != nil {
			t.Fatal(err)
		}
		go func() { done <- eh.Run(ctx) }()
	}
	defer func() {
		cancel()
		for range homes {
			select {
			case err := <-done:
				if err != nil {
					t.Error(err)
				}
			case <-time.After(10 * time.Second):
				t.Error("a home did not stop")
			}
		}
		if t.Failed() {
			for i, h := range homes {
				t.Logf("%s:\n%s", h, logs[i].String())
			}
		}
	}()
	for _, h := range homes {
		rec.await(t, 0, h+"'s command of the 21:00 slot round", 20*time.Second, func(m paho.Message) bool {
			cmd, err := live.ParseCommand(m.Payload())
			return strings.HasPrefix(m.Topic(), "hearth/home/"+h+"/command/") && err == nil && cmd.Round == "2026-11-26T2100"
		})
	}
	for i, h := range homes {
		var line string
		for _, l := range strings.Split(logs[i].String(), "\n") {
			if strings.Contains(l, "energy home coordinated with the street") && strings.Contains(l, "round=2026-11-26T2100") {
				line = l
			}
		}
		if !strings.Contains(line, "homes=2") || !strings.Contains(line, `missing=""`) || strings.Contains(line, "sweeps=0") {
			t.Errorf("%s: the 21:00 round: %q, want 2 homes, sweeps, none missing", h, line)
		}
	}
}

// TestEnergyHomeDiscovery: with Home Assistant discovery on, an energy
// home publishes, retained, a sensor configuration for each device and
// for its load, as compiled homes do: the plan's state topic, a
// default_entity_id (not the object_id Home Assistant 2026.4 drops) and
// the home's availability topic, which says online while it runs.
func TestEnergyHomeDiscovery(t *testing.T) {
	res, rec, lb, err := energyOnceHA(t, "street.toml", "35", `"charge":22,"plugged":true`, true)
	if err != nil {
		t.Fatalf("%v\n%s", err, lb.String())
	}
	for _, p := range res.Plans {
		if strings.HasPrefix(p.Topic, "homeassistant/") && !p.Retained {
			t.Errorf("%s is not retained", p.Topic)
		}
	}
	configs := map[string]map[string]any{}
	rec.await(t, 0, "the discovery configurations", 10*time.Second, func(m paho.Message) bool {
		if strings.HasPrefix(m.Topic(), "homeassistant/sensor/rowan/") {
			var c map[string]any
			if err := json.Unmarshal(m.Payload(), &c); err != nil {
				t.Fatalf("%s: %v", m.Topic(), err)
			}
			configs[m.Topic()] = c
		}
		return len(configs) == 3
	})
	states := map[string]bool{}
	for tp, c := range configs {
		if _, ok := c["object_id"]; ok {
			t.Errorf("%s carries object_id", tp)
		}
		if id, _ := c["default_entity_id"].(string); !strings.HasPrefix(id, "sensor.") {
			t.Errorf("%s: default_entity_id %v", tp, c["default_entity_id"])
		}
		av, _ := c["availability"].([]any)
		if len(av) != 1 || av[0].(map[string]any)["topic"] != live.AvailabilityTopic("hearth", "rowan") {
			t.Errorf("%s: availability %v", tp, c["availability"])
		}
		st, _ := c["state_topic"].(string)
		states[st] = true
	}
	for _, want := range []string{"hearth/home/rowan/plan/battery", "hearth/home/rowan/plan/ev", "hearth/home/rowan/load"} {
		if !states[want] {
			t.Errorf("no sensor on %s: %v", want, states)
		}
	}
}

// TestEnergyHomeOnceUneven is TestEnergyHomeOnce on a horizon of 8
// quarter hours and then 22 hours (testdata/energy/uneven.toml): the
// round lays the pattern from the quarter hour that holds 20:10, each
// slot planned with its own hours; the published plans, replayed here
// with each slot's hours from its start and end, keep the battery in
// its range and charge the car to its goal by 07:00, and the commands
// cover slot 0's quarter hour.
func TestEnergyHomeOnceUneven(t *testing.T) {
	res, rec, lb, err := energyOnceIn(t, "uneven.toml", "35", `"charge":22,"plugged":true`)
	if err != nil {
		t.Fatalf("%v\n%s", err, lb.String())
	}
	start := time.Date(2026, 11, 26, 20, 0, 0, 0, time.Local)
	if !res.Horizon.Start.Equal(start) || res.Horizon.Slots != 30 || !res.Horizon.End().Equal(start.Add(24*time.Hour)) {
		t.Errorf("horizon %+v, want 30 slots from %v over 24 h", res.Horizon, start)
	}
	want := append(slices.Repeat([]float64{0.25}, 8), slices.Repeat([]float64{1}, 22)...)
	if !slices.Equal(res.Home.Dt, want) {
		t.Errorf("slot hours %v, want %v", res.Home.Dt, want)
	}
	if err := plancheck.Check(res.Home, res.Plan).Err(); err != nil {
		t.Errorf("published plan fails the checker: %v", err)
	}
	plans, cmds := rowanPlans(t, rec)
	const capKWh, eta, evEta, tol = 13.5, 0.95, 0.89, 0.02
	hours := func(s report.PlanSlot) float64 {
		return mustTime(t, s.End).Sub(mustTime(t, s.Start)).Hours()
	}
	soc := 0.35 * capKWh
	for k, s := range parsePlan(t, plans["battery"]).Slots {
		if h := hours(s); h != want[k] {
			t.Fatalf("battery slot %d lasts %g h, want %g", k, h, want[k])
		}
		if s.KW > 0 {
			soc += s.KW * eta * hours(s)
		} else {
			soc += s.KW / eta * hours(s)
		}
		if soc < -tol || soc > capKWh+tol {
			t.Errorf("battery slot %d: %g kW leaves %g kWh, outside [0, %g]", k, s.KW, soc, capKWh)
		}
	}
	evKWh := 22.0
	for _, s := range parsePlan(t, plans["ev"]).Slots {
		if !mustTime(t, s.Start).Before(start.Add(11 * time.Hour)) {
			break // 07:00 is the boundary 11 h after 20:00
		}
		evKWh += s.KW * evEta * hours(s)
	}
	if evKWh < 40-tol {
		t.Errorf("the car holds %g kWh at 07:00, want 40", evKWh)
	}
	for dev, cmd := range cmds {
		if !mustTime(t, cmd.SlotStart).Equal(start) || !mustTime(t, cmd.SlotEnd).Equal(start.Add(15*time.Minute)) {
			t.Errorf("%s: command for %s–%s, want slot 0's quarter hour", dev, cmd.SlotStart, cmd.SlotEnd)
		}
	}
}

// TestEnergyHomeTargets: an energy home offers the targets compiled live
// homes do, as Home Assistant controls (a number for the car's target
// charge in %, a select of its departure among the slot boundaries, a
// number for the battery's reserve in %), and plans with the values in
// effect on their retained state topics: with 90 % by 06:00 and a 50 %
// reserve the car holds 90 % of its battery at 06:00 and the battery
// never goes below half, where the same round without them lets it
// (the case would check nothing otherwise).
func TestEnergyHomeTargets(t *testing.T) {
	const soc, ev = "70", `"charge":22,"plugged":true`
	targets := map[string]string{
		live.TargetStateTopic("hearth", "rowan", "ev", live.TargetPct):       "90",
		live.TargetStateTopic("hearth", "rowan", "ev", live.Departure):       "06:00",
		live.TargetStateTopic("hearth", "rowan", "battery", live.ReservePct): "50",
	}
	res, rec, lb, err := energyOnceWith(t, "street.toml", soc, ev, true, targets)
	if err != nil {
		t.Fatalf("%v\n%s", err, lb.String())
	}
	// Discovery: one control per target (report.TargetPublications,
	// retained), on the set and state topics, available while the home
	// is.
	configs := map[string]map[string]any{}
	rec.await(t, 0, "the targets' discovery configurations", 10*time.Second, func(m paho.Message) bool {
		if strings.HasPrefix(m.Topic(), "homeassistant/number/rowan/") || strings.HasPrefix(m.Topic(), "homeassistant/select/rowan/") {
			var c map[string]any
			if err := json.Unmarshal(m.Payload(), &c); err != nil {
				t.Fatalf("%s: %v", m.Topic(), err)
			}
			configs[m.Topic()] = c
		}
		return len(configs) == 3
	})
	for _, w := range []struct{ topic, device, target, unit string }{
		{"homeassistant/number/rowan/hearth_rowan_ev_target_pct/config", "ev", live.TargetPct, "%"},
		{"homeassistant/select/rowan/hearth_rowan_ev_departure/config", "ev", live.Departure, ""},
		{"homeassistant/number/rowan/hearth_rowan_battery_reserve_pct/config", "battery", live.ReservePct, "%"},
	} {
		c := configs[w.topic]
		if c == nil {
			t.Errorf("no %s: %v", w.topic, slices.Collect(maps.Keys(configs)))
			continue
		}
		unit, _ := c["unit_of_measurement"].(string)
		av, _ := c["availability"].([]any)
		if c["command_topic"] != live.SetTopic("hearth", "rowan", w.device, w.target) || c["state_topic"] != live.TargetStateTopic("hearth", "rowan", w.device, w.target) ||
			unit != w.unit || len(av) != 1 || av[0].(map[string]any)["topic"] != live.AvailabilityTopic("hearth", "rowan") {
			t.Errorf("%s: %v", w.topic, c)
		}
		if w.target == live.Departure {
			opts, _ := c["options"].([]any)
			if len(opts) != 24 || opts[6] != "06:00" {
				t.Errorf("%s: options %v, want the 24 hourly boundaries", w.topic, opts)
			}
		}
	}
	// The plan: slot 0 is 20:00, so 06:00 is boundary 10.
	bat, car := res.Home.Storage[0], res.Home.Storage[1]
	reserve := 0.5 * bat.Capacity
	low := func(r daemon.EnergyRound) float64 {
		m := math.Inf(1)
		for _, e := range r.Plan.Energy[0][1:] {
			m = math.Min(m, e)
		}
		return m
	}
	if got := low(res); got < reserve-1e-6 {
		t.Errorf("the battery falls to %.3f kWh, below its 50%% reserve %.3f", got, reserve)
	}
	if got, want := res.Plan.Energy[1][10], 0.9*car.Capacity; got < want-0.05 {
		t.Errorf("the car holds %.3f kWh at 06:00, want 90%% of %g = %.3f (goals %+v)", got, car.Capacity, want, car.Goals)
	}
	if err := plancheck.Check(res.Home, res.Plan).Err(); err != nil {
		t.Errorf("plan fails the checker: %v", err)
	}
	free, _, lb2, err := energyOnceWith(t, "street.toml", soc, ev, false, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, lb2.String())
	}
	if got := low(free); got >= reserve-1e-6 {
		t.Errorf("without the reserve the battery stays above %.3f kWh too (%.3f): the case checks nothing", reserve, got)
	}
	if got := free.Plan.Energy[1][10]; got >= 0.9*car.Capacity-0.05 {
		t.Errorf("without the targets the car holds %.3f kWh at 06:00 too: the case checks nothing", got)
	}
	// A battery below its reserve is kept where it is, not asked to be
	// above it in slot 0.
	under, _, lb3, err := energyOnceWith(t, "street.toml", "30", ev, false, targets)
	if err != nil {
		t.Fatalf("%v\n%s", err, lb3.String())
	}
	if got, start := low(under), under.Home.Storage[0].Initial; got < start-1e-6 || math.Abs(start-0.3*bat.Capacity) > 0.05 {
		t.Errorf("from %.3f kWh (30%%) under a 50%% reserve the battery falls to %.3f", start, got)
	}
}

// TestEnergyHomeSetTarget: a long-running energy home reads its targets'
// command topics as compiled homes do. Payloads that are not a value of
// the control (text, out of range, not a slot boundary, empty) are
// refused with a warning naming the topic, and never reach the state
// topic; 95 % is published, retained, as the value in effect, and the
// home plans again at once, charging the car more than before.
func TestEnergyHomeSetTarget(t *testing.T) {
	path := filepath.Join("testdata", "energy", "street.toml")
	clock, err := live.NewClock(time.Date(2026, 11, 26, 20, 10, 0, 0, time.Local), time.Time{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, c, rec := watchRowan(t, "test-energy-set")
	pub := func(tp, payload string, retained bool) {
		t.Helper()
		if tok := c.Publish(tp, 1, retained, payload); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
	}
	pub("meter/battery/soc", "35", true)
	pub(live.StateTopic("hearth", "rowan", "ev"), fmt.Sprintf(`{"time":%q,"charge":22,"plugged":true}`, clock.Now().Format(time.RFC3339)), true)
	lb, stop := runRowan(t, b.URL(), path, clock)
	defer stop()
	// charged is what an EV plan draws (kW summed over its hourly slots).
	charged := func(m paho.Message) float64 {
		kwh := 0.0
		for _, s := range parsePlan(t, m).Slots {
			kwh += max(s.KW, 0)
		}
		return kwh
	}
	const evPlan = "hearth/home/rowan/plan/ev"
	before := charged(rec.await(t, 0, "the first plan", 10*time.Second, func(m paho.Message) bool { return m.Topic() == evPlan }))
	pct := live.SetTopic("hearth", "rowan", "ev", live.TargetPct)
	dep := live.SetTopic("hearth", "rowan", "ev", live.Departure)
	bad := []struct{ topic, payload string }{
		{pct, "ninety"}, {pct, "150"}, {pct, "-5"}, {pct, "NaN"}, {pct, ""},
		{dep, "25:00"}, {dep, "06:30"}, {dep, strings.Repeat("9", 5000)},
		{live.SetTopic("hearth", "rowan", "battery", live.ReservePct), "1e400"},
	}
	for _, p := range bad {
		pub(p.topic, p.payload, false)
	}
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(lb.String(), "target refused") < len(bad) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d bad targets refused", strings.Count(lb.String(), "target refused"), len(bad))
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, p := range bad {
		if !strings.Contains(lb.String(), "topic="+p.topic) {
			t.Errorf("no warning names %s", p.topic)
		}
	}
	from := rec.mark()
	pub(pct, "95", false)
	state := live.TargetStateTopic("hearth", "rowan", "ev", live.TargetPct)
	m := rec.await(t, from, "the target in effect", 10*time.Second, func(m paho.Message) bool { return strings.HasPrefix(m.Topic(), "hearth/home/rowan/target/") })
	if m.Topic() != state || string(m.Payload()) != "95" {
		t.Errorf("%s = %q, want %s = 95 (no bad value in effect)", m.Topic(), m.Payload(), state)
	}
	// 95 % of the catalogue EV's battery is more than its 40 kWh goal:
	// a plan that charges it more (await fails after 10 s without one).
	rec.await(t, from, "a plan that charges the car more after 95 % was set", 10*time.Second, func(m paho.Message) bool {
		return m.Topic() == evPlan && charged(m) > before+1
	})
}

// retainStates publishes each {home, device, fields} of states as the
// device's retained live state at now, the JSON fields after its time.
func retainStates(t *testing.T, c paho.Client, now time.Time, states [][3]string) {
	t.Helper()
	for _, s := range states {
		payload := fmt.Sprintf(`{"time":%q,%s}`, now.Format(time.RFC3339), s[2])
		if tok := c.Publish(live.StateTopic("hearth", s[0], s[1]), 1, true, payload); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
	}
}
