package daemon_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"

	"fmt"
	paho "github.com/eclipse/paho.mqtt.golang"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/internal/daemon"
	"github.com/hearth-dcop/hearth/internal/live"
	"github.com/hearth-dcop/hearth/mqtt/broker"
)

// newLiveStreet starts the embedded broker and writes the test street
// (internal/live/testdata/street) into a temporary directory, edited by
// edit (nil: none), on a clock at speed from now0.
func newLiveStreet(t *testing.T, now0 time.Time, speed float64, edit func(name string, src []byte) []byte) (*liveStreet, *broker.Broker) {
	t.Helper()
	b, err := broker.Start(broker.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	dir := t.TempDir()
	for _, f := range []string{"street.toml", "alder.toml", "dogwood.toml"} {
		src, err := os.ReadFile(filepath.Join("..", "live", "testdata", "street", f))
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			src = edit(f, src)
		}
		if f == "street.toml" {
			src = append(src, fmt.Sprintf("\n[broker]\nurl = %q\n", b.URL())...)
		}
		if err := os.WriteFile(filepath.Join(dir, f), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	clock, err := live.NewClock(now0, time.Time{}, speed, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &liveStreet{t: t, url: b.URL(), path: filepath.Join(dir, "street.toml"), clock: clock,
		logs: map[string]*logBuf{}, cancel: map[string]context.CancelFunc{}, done: map[string]chan error{}}
	t.Cleanup(func() {
		for name := range s.cancel {
			s.cancel[name]()
		}
		if t.Failed() || testing.Verbose() {
			for name, l := range s.logs {
				t.Logf("%s's log:\n%s", name, l.String())
			}
		}
	})
	return s, b
}

// timed records messages with the home clock's time at their arrival.
type timed struct {
	clock *live.Clock
	mu    sync.Mutex
	all   []timedMsg
}

type timedMsg struct {
	topic   string
	payload []byte
	at      time.Time
}

func (r *timed) add(_ paho.Client, m paho.Message) {
	at := r.clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, timedMsg{m.Topic(), m.Payload(), at})
}

func (r *timed) snapshot() []timedMsg {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.all)
}

// firstCommand returns the first command received on topic for the slot
// that starts at start.
func firstCommand(t *testing.T, msgs []timedMsg, topic string, start time.Time) (live.Command, time.Time, bool) {
	t.Helper()
	for _, m := range msgs {
		if m.topic != topic {
			continue
		}
		c, err := live.ParseCommand(m.payload)
		if err != nil {
			t.Fatalf("%s: %v", topic, err)
		}
		if mustTime(t, c.SlotStart).Equal(start) {
			return c, m.at, true
		}
	}
	return live.Command{}, time.Time{}, false
}

// TestLiveCommandsOnTime runs two live homes at 720 times the wall
// clock's speed (an hourly slot in 5 s, a simulated minute in 83 ms): the
// command of every device for the slot that starts at 07:00 is the plan
// of the round of that boundary, and it is out by 07:00 and 3 simulated
// minutes. A round that started at the boundary would reach the devices
// only when it ended, minutes into the slot, after the previous round's
// command for it.
func TestLiveCommandsOnTime(t *testing.T) {
	if testing.Short() {
		t.Skip("two live homes over MQTT for two simulated hours")
	}
	day := func(h, m int) time.Time { return time.Date(2026, 11, 26, h, m, 0, 0, time.Local) }
	s, b := newLiveStreet(t, day(5, 50), 720, nil)
	rec := &timed{clock: s.clock}
	c := paho.NewClient(paho.NewClientOptions().AddBroker(b.URL()).SetClientID("test-commands"))
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	defer c.Disconnect(0)
	if tok := c.Subscribe("hearth/home/+/command/+", 1, rec.add); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	s.start("alder")
	s.start("dogwood")
	boundary := day(7, 0)
	topics := []string{live.CommandTopic("hearth", "alder", "ev"), live.CommandTopic("hearth", "dogwood", "battery")}
	deadline := time.Now().Add(20 * time.Second)
	for {
		msgs := rec.snapshot()
		all := true
		for _, tp := range topics {
			if _, _, ok := firstCommand(t, msgs, tp, boundary); !ok {
				all = false
			}
		}
		if all {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no command for the slot of %s on every device", boundary.Format(time.RFC3339))
		}
		time.Sleep(20 * time.Millisecond)
	}
	const late = 3 * time.Minute
	msgs := rec.snapshot()
	for _, tp := range topics {
		cmd, at, _ := firstCommand(t, msgs, tp, boundary)
		if want := "2026-11-26T0700"; cmd.Round != want {
			t.Errorf("%s: the first command for 07:00 is round %s's, want the boundary's round %s", tp, cmd.Round, want)
		}
		if d := at.Sub(boundary); d > late {
			t.Errorf("%s: the command for 07:00 arrived at %s, %v into the slot (at most %v)", tp, at.Format(time.RFC3339), d.Round(time.Second), late)
		}
	}
}

// TestLiveHomesStartedApart starts the two homes of a street an hour and
// a quarter apart on a clock at 720 times the wall clock's speed, with
// rounds that time out after 3 s (36 simulated minutes). The first home
// starts no round alone, which would wait for the other until it timed
// out; when the second comes online both meet in one round, and every
// round either home starts, both complete.
func TestLiveHomesStartedApart(t *testing.T) {
	if testing.Short() {
		t.Skip("two live homes over MQTT for two simulated hours")
	}
	day := func(h, m int) time.Time { return time.Date(2026, 11, 26, h, m, 0, 0, time.Local) }
	s, _ := newLiveStreet(t, day(4, 41), 720, nil)
	s.timeout = 3 * time.Second
	s.start("alder")
	for s.clock.Now().Before(day(5, 58)) {
		time.Sleep(10 * time.Millisecond)
	}
	s.start("dogwood")
	started := regexp.MustCompile(`msg="round starting" agent=\S+ round=(\S+)`)
	completed := regexp.MustCompile(`msg="round complete" agent=\S+ round=(\S+)`)
	rounds := func(re *regexp.Regexp, log string) []string {
		var out []string
		for _, m := range re.FindAllStringSubmatch(log, -1) {
			out = append(out, m[1])
		}
		return out
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(rounds(completed, s.logs["alder"].String())) == 0 || len(rounds(completed, s.logs["dogwood"].String())) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the homes completed no round")
		}
		time.Sleep(20 * time.Millisecond)
	}
	joined := s.clock.Now()
	// Until the round after: a round one home started, the other must
	// have started too by then.
	for s.clock.Now().Before(joined.Add(20 * time.Minute)) {
		time.Sleep(10 * time.Millisecond)
	}
	a, d := s.logs["alder"].String(), s.logs["dogwood"].String()
	for name, l := range map[string]string{"alder": a, "dogwood": d} {
		if strings.Contains(l, "round failed") || strings.Contains(l, "round broken") {
			t.Errorf("%s ran a round that failed", name)
		}
	}
	as, ds := rounds(started, a), rounds(started, d)
	if !slices.Equal(as, ds) {
		t.Errorf("alder started rounds %v, dogwood %v: want the same", as, ds)
	}
	ac, dc := rounds(completed, a), rounds(completed, d)
	if len(ac) == 0 || len(dc) == 0 || ac[0] != dc[0] {
		t.Fatalf("alder's first round complete %v, dogwood's %v: want one round", ac, dc)
	}
	if at, ok := roundTime(ac[0]); !ok || at.Sub(day(5, 58)) > time.Hour {
		t.Errorf("first round %s: want one within a slot of the second home's start", ac[0])
	}
	if !strings.Contains(a, "round skipped: waiting for homes to come online") {
		t.Errorf("alder did not say why it ran no round alone")
	}
}

// TestLiveOnce runs a round of the street with `hearth run --once`
// (Home.Once) at 05:10 on the wall clock's speed: alder's car has
// published its state (35 kWh, plugged in), dogwood's battery nothing.
// Both homes plan from the slot that holds now (05:00), alder's car from
// its live 35 kWh — the files' 15 kWh could not reach the 40 kWh goal by
// 07:00 — and dogwood's battery, after a bounded wait, from the file's
// value, said once. The plan comes with the current slot's command.
func TestLiveOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("two homes over MQTT")
	}
	day := func(h, m int) time.Time { return time.Date(2026, 11, 26, h, m, 0, 0, time.Local) }
	s, b := newLiveStreet(t, day(5, 10), 1, nil)
	evCmd, evPlan := live.CommandTopic("hearth", "alder", "ev"), "hearth/home/alder/plan/ev"
	c, rec := recorder(t, b.URL(), "test-once", evCmd, evPlan)
	st := fmt.Sprintf(`{"time":%q,"charge":35,"plugged":true}`, s.clock.Now().Format(time.RFC3339))
	if tok := c.Publish(live.StateTopic("hearth", "alder", "ev"), 1, true, st); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	homes := []string{"alder", "dogwood"}
	errs := make([]error, len(homes))
	var wg sync.WaitGroup
	began := time.Now()
	for i, name := range homes {
		hm := s.home(ctx, name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = hm.Once(ctx, "r1")
		}()
	}
	wg.Wait()
	took := time.Since(began)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", homes[i], err)
		}
	}
	if took < daemon.OnceWait || took > daemon.OnceWait+30*time.Second {
		t.Errorf("the round took %v: want the wait for dogwood's state (%v) and a round", took, daemon.OnceWait)
	}
	p := parsePlan(t, rec.await(t, 0, "alder's plan", 10*time.Second, func(m paho.Message) bool { return m.Topic() == evPlan }))
	if got := mustTime(t, p.Slots[0].Start); !got.Equal(day(5, 0)) {
		t.Errorf("slot 0 starts %v, want 05:00, the slot that holds now", got)
	}
	if p.Round != "r1" {
		t.Errorf("plan of round %q, want r1", p.Round)
	}
	if got := charged(p, 2); 35+got < 40 {
		t.Errorf("the plan adds %.1f kWh to the live 35 before 07:00; the goal is 40 (%+v)", got, p.Slots[:2])
	}
	cmd, err := live.ParseCommand(rec.await(t, 0, "alder's command", 10*time.Second, func(m paho.Message) bool { return m.Topic() == evCmd }).Payload())
	if err != nil {
		t.Fatal(err)
	}
	if !mustTime(t, cmd.SlotStart).Equal(day(5, 0)) || cmd.Round != "r1" || cmd.Action != p.Slots[0].Action {
		t.Errorf("command %+v, want slot 05:00's of round r1, %s", cmd, p.Slots[0].Action)
	}
	for _, name := range homes {
		l := s.logs[name].String()
		if n := strings.Count(l, "no live state yet; planning from the file's value"); n != 1 || !strings.Contains(l, "device=battery") {
			t.Errorf("%s said %d times that a device had no live state, want once, for dogwood's battery", name, n)
		}
		if !strings.Contains(l, "live state incomplete") {
			t.Errorf("%s did not say it stopped waiting for the live state", name)
		}
	}
}

// TestLiveHomePrices: a series of dogwood's own import prices
// (hearth/home/dogwood/prices/import) makes dogwood ask for a round
// within a slot, at 720 times the wall clock's speed; both homes plan it
// from the same neighbourhood (internal/live's TestHomePrices checks the
// tariff it gives dogwood).
func TestLiveHomePrices(t *testing.T) {
	if testing.Short() {
		t.Skip("two live homes over MQTT")
	}
	day := func(h, m int) time.Time { return time.Date(2026, 11, 26, h, m, 0, 0, time.Local) }
	s, b := newLiveStreet(t, day(5, 5), 720, nil)
	const batPlan = "hearth/home/dogwood/plan/battery"
	c, rec := recorder(t, b.URL(), "test-prices", batPlan)
	s.start("alder")
	s.start("dogwood")
	rec.await(t, 0, "dogwood's first plan", 20*time.Second, func(m paho.Message) bool { return m.Topic() == batPlan })
	from := rec.mark()
	priced := s.clock.Now()
	start := live.SlotStart(priced, time.Hour)
	tp := live.HomePriceTopic("hearth", "dogwood", "import")
	body := fmt.Sprintf(`{"start":%q,"step":"1h","values":[0.01,0.01,0.01]}`, start.Format(time.RFC3339))
	if tok := c.Publish(tp, 1, true, body); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	m := rec.await(t, from, "dogwood's plan after its new prices", 20*time.Second, func(m paho.Message) bool {
		if m.Topic() != batPlan {
			return false
		}
		p := parsePlan(t, m)
		at, ok := roundTime(p.Round)
		if len(p.Round) == len("2006-01-02T1504") {
			at = at.Add(-15 * time.Minute) // a slot round plans ahead of its boundary
		}
		return ok && at.After(priced)
	})
	p := parsePlan(t, m)
	if d := mustTime(t, p.Created).Sub(priced); d > time.Hour {
		t.Errorf("re-planned %v after dogwood's new prices, more than a slot", d)
	}
	asked := regexp.MustCompile(`msg="round requested" agent=dogwood round=(\S+) why="new series on ` + regexp.QuoteMeta(tp) + `"`)
	got := asked.FindStringSubmatch(s.logs["dogwood"].String())
	if got == nil {
		t.Fatalf("dogwood did not ask for a round for its new prices")
	}
	if strings.Contains(s.logs["alder"].String(), `why="new series on `+tp) {
		t.Errorf("alder asked for a round for dogwood's prices")
	}
	digest := regexp.MustCompile(`msg="live round inputs" agent=\S+ round=` + got[1] + ` slot0=\S+ model=(\S+)`)
	var da, dd []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		da, dd = digest.FindStringSubmatch(s.logs["alder"].String()), digest.FindStringSubmatch(s.logs["dogwood"].String())
		if da != nil && dd != nil {
			break
		}
	}
	if da == nil || dd == nil || da[1] != dd[1] {
		t.Errorf("round %s: alder's model %v, dogwood's %v: want the same", got[1], da, dd)
	}
}

// TestLiveStaleRound: a queued round whose slot 0 has passed (here a
// controller's round named by 04:00, at about 05:20) would plan slots
// that are over, and its plan would give no commands: both homes drop it
// unrun, say so once, publish no plan for it, and run the round behind
// it (one named by the current slot).
func TestLiveStaleRound(t *testing.T) {
	if testing.Short() {
		t.Skip("two live homes over MQTT")
	}
	day := func(h, m int) time.Time { return time.Date(2026, 11, 26, h, m, 0, 0, time.Local) }
	s, b := newLiveStreet(t, day(5, 2), 600, nil)
	evPlan := "hearth/home/alder/plan/ev"
	c, rec := recorder(t, b.URL(), "test-stale", evPlan)
	s.start("alder")
	s.start("dogwood")
	rec.await(t, 0, "alder's first plan", 20*time.Second, func(m paho.Message) bool { return m.Topic() == evPlan })
	const stale = "2026-11-26T0400"
	// The round behind it, named by no time: it plans from the clock.
	const fresh = "after-stale"
	mark := rec.mark()
	for _, round := range []string{stale, fresh} {
		if tok := c.Publish("hearth/cmd", 1, false, `{"round":"`+round+`"}`); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
	}
	rec.await(t, mark, "the plan of round "+fresh, 20*time.Second, func(m paho.Message) bool {
		return m.Topic() == evPlan && parsePlan(t, m).Round == fresh
	})
	rec.mu.Lock()
	for _, m := range rec.all[mark:] {
		if m.Topic() == evPlan && parsePlan(t, m).Round == stale {
			t.Errorf("a plan of round %s published", stale)
		}
	}
	rec.mu.Unlock()
	dropped := regexp.MustCompile(`msg="round's first slot has passed; dropped unrun" agent=\w+ round=` + stale)
	for _, home := range []string{"alder", "dogwood"} {
		l := s.logs[home].String()
		if n := len(dropped.FindAllString(l, -1)); n != 1 {
			t.Errorf("%s said %d times that it dropped round %s, want once", home, n, stale)
		}
		if regexp.MustCompile(`round complete" agent=\w+ round=` + stale).MatchString(l) {
			t.Errorf("%s ran round %s", home, stale)
		}
	}
}
