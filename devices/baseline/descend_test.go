package baseline

import (
	"context"
	"errors"
	"math"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/internal/testhomes"
	"github.com/hearth-dcop/hearth/mqtt"
	"github.com/hearth-dcop/hearth/mqtt/broker"
	"github.com/hearth-dcop/hearth/mva/pipeline"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// descentCase is a street and a feasible start.
type descentCase struct {
	name  string
	n     *devices.Neighbourhood
	start *devices.Schedule
	o     Options
}

// descentCases are up to most cases: with shds, dm_7_1_2 from the homes'
// own schedules (a complete graph; with HEARTH_SHDS_LONG=1 also with
// block responders), then small random streets with chains of links and
// windows of several slots, from a start far from any local optimum.
func descentCases(t *testing.T, most int, shds bool) []descentCase {
	t.Helper()
	ctx := context.Background()
	var cases []descentCase
	if shds {
		n := shdsFile(t, "dm_7_1_2")
		u, err := Uncoordinated(ctx, n, Options{})
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, descentCase{"dm_7_1_2", n, u.Schedule, Options{ExactEntries: 1 << 20}})
		if os.Getenv("HEARTH_SHDS_LONG") != "" {
			cases = append(cases, descentCase{"dm_7_1_2 blocks", n, u.Schedule, Options{forceBlocks: true}})
		}
	}
	for seed := uint64(1); len(cases) < most && seed < 200; seed++ {
		n := testhomes.Random(seed, testhomes.Options{Homes: 4, Slots: 4, Devices: 2, Actions: 2, Mixed: true})
		if n.FeederLimit > 0 {
			continue
		}
		n.Weights.Peak = 2 // a peak term that moves the homes off their own optima
		u, err := Uncoordinated(ctx, n, Options{})
		if err != nil || !u.Eval.Feasible {
			continue
		}
		cases = append(cases, descentCase{name: "random", n: n, start: worstStart(t, n, u.Schedule)})
	}
	return cases
}

// worstStart moves each home in turn, from s, to its schedule that keeps
// the street feasible with the highest flow objective: a start far from
// any local optimum, where many homes move.
func worstStart(t *testing.T, n *devices.Neighbourhood, s *devices.Schedule) *devices.Schedule {
	t.Helper()
	s = cloneSchedule(s)
	for h := range n.Homes {
		worst, pick := math.Inf(-1), s.Homes[h]
		testhomes.Schedules(n, h, func(hs devices.HomeSchedule) {
			trial := cloneSchedule(s)
			trial.Homes[h] = clone(hs)
			ev, err := n.Evaluate(trial)
			if err != nil {
				t.Fatal(err)
			}
			if f := FlowObjective(n, ev); ev.Feasible && f > worst {
				worst, pick = f, clone(hs)
			}
		})
		s.Homes[h] = pick
	}
	return s
}

// TestDescendMatchesImprove: the distributed descent over the simulated
// runtime moves to exactly the schedule of Improve's descent (no escapes)
// from the same start, so its flow objective is the same number.
func TestDescendMatchesImprove(t *testing.T) {
	ctx := context.Background()
	moved := 0
	for _, c := range descentCases(t, 7, true) {
		want, err := Improve(ctx, c.n, c.start, ImproveOptions{Kicks: -1, Options: c.o})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Descend(ctx, c.n, c.start, ImproveOptions{Options: c.o}, &sim.Runtime{}, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ev, err := c.n.Evaluate(got.Schedule)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got.Schedule.Homes, want.Schedule.Homes, sameActions) || FlowObjective(c.n, ev) != want.Flow {
			t.Errorf("%s: distributed %v, in process %v (from %v)", c.name, FlowObjective(c.n, ev), want.Flow, want.Start)
		}
		if !ev.Feasible {
			t.Errorf("%s: %v", c.name, ev.Violations)
		}
		if got.Metrics.Messages == 0 && len(c.n.Linked()) > 0 {
			t.Errorf("%s: no messages counted", c.name)
		}
		moved += got.Moves
		t.Logf("%s: %v → %v, %d rounds (in process %d), %d moves, %d messages", c.name, want.Start, want.Flow, got.Rounds, want.Rounds, got.Moves, got.Metrics.Messages)
	}
	if moved < 20 {
		t.Errorf("only %d moves in all: the cases test little", moved)
	}
}

// TestDescendThenImprove: Improve from the distributed descent's
// schedule ends where Improve from the start does — its own first descent
// from there moves nobody, and its escapes then draw the same — so a run
// that descends over MQTT and escapes in process plans exactly what the
// in-process phase plans.
func TestDescendThenImprove(t *testing.T) {
	ctx := context.Background()
	for _, c := range descentCases(t, 3, false) {
		o := ImproveOptions{Kicks: 3, Seed: 5, Options: c.o}
		want, err := Improve(ctx, c.n, c.start, o)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Descend(ctx, c.n, c.start, o, &sim.Runtime{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Improve(ctx, c.n, d.Schedule, o)
		if err != nil {
			t.Fatal(err)
		}
		if got.Flow != want.Flow || !slices.EqualFunc(got.Schedule.Homes, want.Schedule.Homes, sameActions) {
			t.Errorf("%s: %v after the distributed descent, %v in process", c.name, got.Flow, want.Flow)
		}
	}
}

// TestDescendMQTT: over MQTT (the embedded broker, a client per home) the
// descent gives the in-process schedule too, also when every home runs in
// a process of its own (a group per home, as `hearth run` does).
func TestDescendMQTT(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := descentCases(t, 1, false)[0]
	want, err := Improve(ctx, c.n, c.start, ImproveOptions{Kicks: -1, Options: c.o})
	if err != nil {
		t.Fatal(err)
	}
	timing := mqtt.Timing{KeepAlive: 5 * time.Second, ConnectTimeout: 2 * time.Second, ReconnectMax: 100 * time.Millisecond,
		StatusInterval: 50 * time.Millisecond, RetransmitAfter: 2 * time.Second}
	g := &mqtt.Group{Config: mqtt.GroupConfig{Config: mqtt.Config{Protocol: "flowbr", Timing: timing}}}
	got, err := Descend(ctx, c.n, c.start, ImproveOptions{Options: c.o}, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got.Schedule.Homes, want.Schedule.Homes, sameActions) {
		t.Errorf("over MQTT: a schedule other than the in-process descent's")
	}
	if got.Metrics.Messages == 0 {
		t.Error("no messages counted")
	}
	t.Logf("%d rounds, %d moves, %d messages, %d bytes", got.Rounds, got.Moves, got.Metrics.Messages, got.Metrics.TotalMessageBytes)

	// A group per home on one broker, as separate `hearth run` homes.
	b, err := broker.Start(broker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	H := len(c.n.Homes)
	parts := make([]*Descent, H)
	errs := make([]error, H)
	var wg sync.WaitGroup
	for i := range H {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := &mqtt.Group{Config: mqtt.GroupConfig{Config: mqtt.Config{Broker: mqtt.Broker{URL: b.URL()}, Protocol: "flowbr", Run: "descent", Timing: timing}}}
			parts[i], errs[i] = Descend(ctx, c.n, c.start, ImproveOptions{Options: c.o}, g, []int{i})
		}()
	}
	wg.Wait()
	for i := range H {
		if errs[i] != nil {
			t.Fatalf("home %d: %v", i, errs[i])
		}
		if !sameActions(parts[i].Schedule.Homes[i], want.Schedule.Homes[i]) {
			t.Errorf("home %d alone: a schedule other than the in-process descent's", i)
		}
	}
}

// TestDescendFeeder: on random streets whose homes are all neighbours,
// with a feeder limit that binds, the distributed descent moves to
// Improve's schedule (no escapes), which keeps the limit; on some streets
// the limit changes the descent. The start is flat (SH-MGM-style under a
// heavy peak weight) and the descent runs under a light one, so that the
// homes crowd the cheap slots until the limit stops them.
func TestDescendFeeder(t *testing.T) {
	ctx := context.Background()
	bound, checked := 0, 0
	for seed := uint64(1); seed <= 400 && (bound < 3 || checked < 10); seed++ {
		flat := testhomes.Random(seed, testhomes.Options{Homes: 4, Slots: 4, Devices: 2, Actions: 2, Mixed: true})
		flat.Links, flat.FeederLimit = nil, 0
		flat.Weights.Peak = 2
		u, err := SHMGM(ctx, flat, Options{})
		if err != nil || !u.Eval.Feasible {
			continue
		}
		free := *flat
		free.Weights.Peak = 0.001
		ev, err := free.Evaluate(u.Schedule)
		if err != nil {
			t.Fatal(err)
		}
		top := 0.0
		for _, c := range ev.Committed {
			top = math.Max(top, c)
		}
		unlimited, err := Descend(ctx, &free, u.Schedule, ImproveOptions{}, &sim.Runtime{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := free
		n.FeederLimit = top
		want, err := Improve(ctx, &n, u.Schedule, ImproveOptions{Kicks: -1})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Descend(ctx, &n, u.Schedule, ImproveOptions{}, &sim.Runtime{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		if !slices.EqualFunc(got.Schedule.Homes, want.Schedule.Homes, sameActions) {
			t.Errorf("seed %d: distributed and in-process descents differ", seed)
		}
		gev, err := n.Evaluate(got.Schedule)
		if err != nil {
			t.Fatal(err)
		}
		for w, c := range gev.Committed {
			if !devices.Fits(c, n.FeederLimit) {
				t.Errorf("seed %d: window %d commits %v, limit %v", seed, w, c, n.FeederLimit)
			}
		}
		if !slices.EqualFunc(got.Schedule.Homes, unlimited.Schedule.Homes, sameActions) {
			bound++
		}
	}
	if bound == 0 || checked < 10 {
		t.Errorf("%d streets, the limit changed the descent on %d: the test shows little", checked, bound)
	}
	t.Logf("%d streets, the limit binding on %d", checked, bound)
}

// TestDescendRefuses: a feeder limit on a street whose homes are not all
// neighbours, a start of the wrong size and owned
// homes out of order are errors, not a wrong plan.
func TestDescendRefuses(t *testing.T) {
	ctx := context.Background()
	c := descentCases(t, 1, false)[0]
	fed := *c.n
	fed.FeederLimit = 1000
	fed.Links = [][2]int{{0, 1}} // not every home sees every load
	if _, err := Descend(ctx, &fed, c.start, ImproveOptions{}, &sim.Runtime{}, nil); !errors.Is(err, ErrDescentFeeder) {
		t.Errorf("feeder limit: %v", err)
	}
	short := &devices.Schedule{Homes: c.start.Homes[1:]}
	if _, err := Descend(ctx, c.n, short, ImproveOptions{}, &sim.Runtime{}, nil); err == nil {
		t.Error("a start with a home missing was accepted")
	}
	if _, err := Descend(ctx, c.n, c.start, ImproveOptions{}, &sim.Runtime{}, []int{2, 1}); err == nil {
		t.Error("owned homes out of order were accepted")
	}
}

var _ pipeline.Runtime = (*sim.Runtime)(nil)
