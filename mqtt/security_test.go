package mqtt

import (
	"context"
	"log/slog"
	"maps"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/mqtt/broker"
	"github.com/hearth-dcop/hearth/mqtt/envelope"
	"github.com/hearth-dcop/hearth/mqtt/topic"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// waitingAgent runs agent cfg.Agent with a protocol that never starts (the
// other agents never come), so that a test can watch its receive path.
func waitingAgent(t *testing.T, cfg AgentConfig) (*agent, <-chan error, func()) {
	t.Helper()
	cfg, err := cfg.resolve()
	if err != nil {
		t.Fatal(err)
	}
	a := newAgent(cfg, &recorder{})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		errc <- a.run(ctx)
		close(done)
	}()
	stop := func() {
		cancel()
		<-done
	}
	t.Cleanup(stop)
	// Its first status is published after its subscriptions are acknowledged.
	waitFor(t, "the agent's first status", func() bool { return a.ctr.statuses.Load() > 0 })
	return a, errc, stop
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// settle polls cond for up to ten seconds and reports whether it came
// true. A counter an agent bumps on arrival (received) runs ahead of the
// ones it bumps after decoding (dropped, duplicates), so a test that has
// seen every arrival waits for the outcome with settle and then checks
// the counters, printing them if they never came right.
func settle(cond func() bool) bool {
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// rawClient connects a bare paho client: the attacker, or a buggy peer.
func rawClient(url, id, user, pass string, will string) (paho.Client, error) {
	o := paho.NewClientOptions().AddBroker(url).SetClientID(id).SetUsername(user).SetPassword(pass).
		SetAutoReconnect(false).SetConnectTimeout(2 * time.Second).SetProtocolVersion(4)
	if will != "" {
		o.SetWill(will, "offline", 1, true)
	}
	c := paho.NewClient(o)
	tok := c.Connect()
	if !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		return nil, tok.Error()
	}
	return c, nil
}

func mustPublish(t *testing.T, c paho.Client, qos byte, tp string, payload []byte) {
	t.Helper()
	tok := c.Publish(tp, qos, false, payload)
	if !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("publish to %s: %v", tp, tok.Error())
	}
}

func env(t *testing.T, edit func(*envelope.Envelope)) []byte {
	t.Helper()
	e := envelope.Envelope{
		Header:  envelope.Header{Run: "r", Sender: "a0", Receiver: "a1", Protocol: "p", Kind: "K", Count: 1, Total: 2},
		Payload: []byte("hi"),
	}
	if edit != nil {
		edit(&e)
	}
	b, err := e.Encode(envelope.Limits{MaxPayload: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkAlive(t *testing.T, errc <-chan error) {
	t.Helper()
	select {
	case err := <-errc:
		t.Fatalf("the agent stopped: %v", err)
	default:
	}
}

// TestMalformedPayloads publishes every kind of bad payload to an agent's
// topics: each is dropped and counted under its reason, nothing reaches
// the protocol, and the agent goes on.
func TestMalformedPayloads(t *testing.T) {
	b := startBroker(t, broker.Config{})
	a, errc, _ := waitingAgent(t, AgentConfig{Config: Config{
		Broker: Broker{URL: b.URL()}, Run: "r", Protocol: "p", Agents: []string{"a0", "a1", "a2"},
		Timing: fastTiming, Logger: testLogger(t), Limits: Limits{MaxPayload: 1024},
	}, Agent: 1})
	c, err := rawClient(b.URL(), "intruder", "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(0)
	l := topic.Layout{Prefix: "hearth", Run: "r"}
	inbox := l.Inbox("a1", "a0")
	v2 := env(t, nil)
	v2[0] = 2
	valid := env(t, nil)
	frag := func(total int) []byte {
		return env(t, func(e *envelope.Envelope) { e.Seq, e.Index, e.Count, e.Total = 5, 0, 2, total })
	}
	cases := []struct {
		topic   string
		payload []byte
		reason  string
	}{
		{inbox, nil, DropMalformed},
		{inbox, []byte{1, 0x80}, DropMalformed},
		{inbox, []byte("hello"), DropVersion},
		{inbox, v2, DropVersion},
		{inbox, env(t, func(e *envelope.Envelope) { e.Payload, e.Total = make([]byte, 2000), 2000 }), DropTooLarge},
		{l.Inbox("a1", "zz"), env(t, func(e *envelope.Envelope) { e.Sender = "zz" }), DropUnknownSender},
		{l.Inbox("a1", "a1"), env(t, func(e *envelope.Envelope) { e.Sender = "a1" }), DropUnknownSender},
		{inbox, env(t, func(e *envelope.Envelope) { e.Run = "other" }), DropWrongRun},
		{inbox, env(t, func(e *envelope.Envelope) { e.Sender = "a2" }), DropSenderMismatch},
		{inbox, env(t, func(e *envelope.Envelope) { e.Receiver = "a2" }), DropWrongReceiver},
		{inbox, env(t, func(e *envelope.Envelope) { e.Protocol = "q" }), DropWrongProtocol},
		{inbox, frag(10), ""},
		{inbox, frag(11), DropBadFragment},
		{l.Status("a0"), []byte("{not json"), DropMalformed},
		{topic.PresenceTopic("hearth", "a0"), []byte("?"), DropMalformed},
		{inbox, valid, ""},
		{inbox, valid, ""}, // a duplicate
	}
	want := map[string]int64{}
	for _, tc := range cases {
		mustPublish(t, c, 1, tc.topic, tc.payload)
		if tc.reason != "" {
			want[tc.reason]++
		}
	}
	waitFor(t, "the duplicate", func() bool { return a.ctr.duplicates.Load() == 1 })
	st := a.ctr.snapshot("a1")
	if !maps.Equal(st.Dropped, want) {
		t.Fatalf("dropped %v, want %v", st.Dropped, want)
	}
	if st.Delivered != 0 || st.Received != 15 {
		t.Fatalf("received %d inbox payloads, delivered %d", st.Received, st.Delivered)
	}
	// A foreign topic can reach an agent through a persistent session's
	// old subscriptions; inject one directly.
	if err := a.handle(context.Background(), item{kind: itemMessage, topic: "elsewhere/x", payload: valid}); err != nil {
		t.Fatal(err)
	}
	checkAlive(t, errc)
}

// TestACL checks the embedded broker's per-home access rules: with home
// a0's credentials an intruder can neither connect as another home, nor
// read a1's inbox, nor publish as a2, nor forge a1's status or presence;
// what it can publish (as a0, on a0's own topic, with a forged envelope
// sender) is dropped by the receiver. Then a whole DPOP run goes through
// the same rules with every home on its own credentials.
func TestACL(t *testing.T) {
	names := []string{"a0", "a1", "a2"}
	var users []broker.User
	for _, n := range names {
		users = append(users, broker.User{Name: n, Password: "pw-" + n})
	}
	b := startBroker(t, broker.Config{Users: users})
	agentCfg := func(run string, i int) AgentConfig {
		return AgentConfig{Config: Config{
			Broker: Broker{URL: b.URL(), Username: names[i], Password: "pw-" + names[i]},
			Run:    run, Protocol: "p", Agents: names, Timing: fastTiming, Logger: testLogger(t),
		}, Agent: i}
	}
	a, errc, stop := waitingAgent(t, agentCfg("r", 1))

	// An agent with bad credentials fails at once instead of retrying.
	bad := agentCfg("r", 2)
	bad.Broker.Password = "nope"
	if _, _, err := RunAgent(testContext(t), bad, &recorder{}); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("bad credentials: %v", err)
	}

	for _, tc := range []struct{ name, id, user, pass, will string }{
		{"wrong password", "hearth-a0", "a0", "nope", ""},
		{"anonymous", "hearth-a0", "", "", ""},
		{"another home's client id", "hearth-a1", "a0", "pw-a0", ""},
		{"last will on another home's presence", "hearth-a0", "a0", "pw-a0", "hearth/presence/a1"},
	} {
		if c, err := rawClient(b.URL(), tc.id, tc.user, tc.pass, tc.will); err == nil {
			c.Disconnect(0)
			t.Errorf("%s: connected", tc.name)
		}
	}

	c, err := rawClient(b.URL(), "hearth-a0", "a0", "pw-a0", "hearth/presence/a0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(0)
	for filter, allowed := range map[string]bool{
		"hearth/r/inbox/a1/+": false, "hearth/#": false, "hearth/+/inbox/+/+": false,
		// No wildcard on status and presence topics: see transport.filters.
		"hearth/r/inbox/a0/+": true, "hearth/r/status/a1": true, "hearth/presence/a2": true,
	} {
		tok := c.Subscribe(filter, 1, func(paho.Client, paho.Message) {})
		if !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			t.Fatalf("subscribe %s: %v", filter, tok.Error())
		}
		code := tok.(*paho.SubscribeToken).Result()[filter]
		if (code <= 2) != allowed {
			t.Errorf("subscribe %s: code %#x", filter, code)
		}
	}
	l := topic.Layout{Prefix: "hearth", Run: "r"}
	forgedA2 := env(t, func(e *envelope.Envelope) { e.Sender = "a2" })
	failed := status{V: statusVersion, Agent: "a1", Run: "r", State: stateFailed, Error: "forged", N: 3}.encode()
	// Refused publications: QoS 0, which the broker drops silently (at
	// QoS 1 an MQTT 3.1.1 broker disconnects the client instead).
	mustPublish(t, c, 0, l.Inbox("a1", "a2"), forgedA2)
	mustPublish(t, c, 0, l.Status("a1"), failed)
	mustPublish(t, c, 0, l.Status("a2"), failed)
	mustPublish(t, c, 0, topic.PresenceTopic("hearth", "a1"), []byte("x"))
	// Allowed at the broker, refused by the receiver.
	mustPublish(t, c, 1, l.Inbox("a1", "a0"), forgedA2)
	mustPublish(t, c, 1, l.Inbox("a1", "a0"), env(t, func(e *envelope.Envelope) { e.Protocol = "marker" }))
	waitFor(t, "the marker", func() bool { return a.ctr.snapshot("").Dropped[DropWrongProtocol] == 1 })
	st := a.ctr.snapshot("a1")
	want := map[string]int64{DropSenderMismatch: 1, DropWrongProtocol: 1}
	if st.Received != 2 || !maps.Equal(st.Dropped, want) {
		t.Fatalf("received %d, dropped %v; want 2 and %v", st.Received, st.Dropped, want)
	}
	checkAlive(t, errc)
	c.Disconnect(0)
	stop()

	// A real run under the same rules.
	p := randomProblem(6, 3)
	truth := simTruth(t, p, nil)
	cfg := GroupConfig{
		Config:      Config{Broker: Broker{URL: b.URL()}, Run: "r2", Protocol: "dpop", Timing: fastTiming, Logger: testLogger(t)},
		Credentials: func(a string) (string, string) { return a, "pw-" + a },
	}
	got, gr, err := solveGroup(testContext(t), p, sim.Options{Protocol: dpop.New, Solver: dfbnb, Seed: 1}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkSameAnswer(t, got, gr, truth)
}

// TestForcedReconnect replaces a live connection the way an agent does when
// its own status is not echoed: the agent must reconnect, resubscribe and
// announce itself again.
func TestForcedReconnect(t *testing.T) {
	b := startBroker(t, broker.Config{})
	a, errc, _ := waitingAgent(t, AgentConfig{Config: Config{
		Broker: Broker{URL: b.URL()}, Run: "r", Protocol: "p", Agents: []string{"a0", "a1"},
		Timing: fastTiming, Logger: testLogger(t),
	}, Agent: 1})
	before := a.ctr.statuses.Load()
	if err := a.tr.reconnect(testContext(t)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the second connection", func() bool { return a.ctr.connects.Load() == 2 })
	waitFor(t, "a new status", func() bool { return a.ctr.statuses.Load() > before })
	checkAlive(t, errc)
}

// TestWrongRunLogsItsTopic: a payload of another run (a persistent session
// can keep an earlier run's subscriptions) is dropped, and the log names
// the topic it came on, not this run's.
func TestWrongRunLogsItsTopic(t *testing.T) {
	var logs logSink
	cfg, err := AgentConfig{Config: Config{
		Broker: Broker{URL: "tcp://127.0.0.1:1"}, Run: "r", Protocol: "p", Agents: []string{"a0", "a1"},
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	}, Agent: 1}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	a := newAgent(cfg, &recorder{})
	old := topic.Layout{Prefix: "hearth", Run: "earlier"}
	for _, tp := range []string{old.Status("a0"), old.Inbox("a1", "a0")} {
		if err := a.handle(context.Background(), item{kind: itemMessage, topic: tp, payload: []byte("x")}); err != nil {
			t.Fatal(err)
		}
		logs.mu.Lock()
		line := logs.buf.String()
		logs.buf.Reset()
		logs.mu.Unlock()
		if !strings.Contains(line, "reason=wrong_run") || !strings.Contains(line, "topic="+tp+" ") {
			t.Errorf("%s: logged %q", tp, line)
		}
	}
	if n := a.ctr.snapshot("a1").Dropped[DropWrongRun]; n != 2 {
		t.Errorf("%d wrong_run drops, want 2", n)
	}
}
