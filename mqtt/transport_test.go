package mqtt

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"

	"github.com/hearth-dcop/hearth/mqtt/broker"
)

// testTransport is agent a1's transport of a two-agent run, not connected.
func testTransport(t *testing.T, url, user, pass string) (*transport, *mailbox) {
	t.Helper()
	cfg, err := AgentConfig{Config: Config{
		Broker: Broker{URL: url, Username: user, Password: pass}, Run: "r", Protocol: "p",
		Agents: []string{"a0", "a1"}, Timing: fastTiming, Logger: testLogger(t),
	}, Agent: 1}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	ctr := &counters{}
	mb := newMailbox(1<<20, ctr, cfg.Logger)
	tr := newTransport(cfg, mb, ctr, cfg.Logger)
	t.Cleanup(func() { tr.close(100 * time.Millisecond) })
	return tr, mb
}

// doneToken is a paho token that has already completed with err.
type doneToken struct{ err error }

var closedCh = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (d doneToken) Wait() bool                     { return true }
func (d doneToken) WaitTimeout(time.Duration) bool { return true }
func (d doneToken) Done() <-chan struct{}          { return closedCh }
func (d doneToken) Error() error                   { return d.err }

// flakyClient fails the next `fails` calls to Connect at once, as paho's
// does while an earlier Disconnect is still under way, and records what
// the transport asks of it.
type flakyClient struct {
	paho.Client
	fails, connects atomic.Int32

	mu        sync.Mutex
	callbacks int // SubscribeMultiple calls given a callback
	subscribe int // SubscribeMultiple calls
}

func (f *flakyClient) Connect() paho.Token {
	f.connects.Add(1)
	if f.fails.Add(-1) >= 0 {
		return doneToken{errors.New("status is disconnecting, must be disconnected")}
	}
	return f.Client.Connect()
}

func (f *flakyClient) SubscribeMultiple(filters map[string]byte, cb paho.MessageHandler) paho.Token {
	f.mu.Lock()
	f.subscribe++
	if cb != nil {
		f.callbacks++
	}
	f.mu.Unlock()
	return f.Client.SubscribeMultiple(filters, cb)
}

// isRefusal reports whether err is a broker's refusal of the credentials
// (mochi answers "not authorised" to a wrong password).
func isRefusal(err error) bool {
	return errors.Is(err, packets.ErrorRefusedBadUsernameOrPassword) || errors.Is(err, packets.ErrorRefusedNotAuthorised)
}

// waitItem waits for a mailbox item of kind k, dropping the others.
func waitItem(t *testing.T, mb *mailbox, k itemKind) {
	t.Helper()
	waitItemWhere(t, mb, func(it item) bool { return it.kind == k })
}

// waitItemWhere waits for a mailbox item that ok accepts, dropping the
// others.
func waitItemWhere(t *testing.T, mb *mailbox, ok func(item) bool) item {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		items, _ := mb.drain()
		for _, it := range items {
			if ok(it) {
				return it
			}
		}
		select {
		case <-mb.ready:
		case <-deadline:
			t.Fatal("no such mailbox item")
		}
	}
}

// TestSubscribeWithoutRoutes: the subscriptions must go through paho's
// default handler. A callback would make paho add one route per filter
// (an agent of a 200-agent run has 401), scan them all for every message
// received, and hand a message to every route it matches.
func TestSubscribeWithoutRoutes(t *testing.T) {
	b := startBroker(t, broker.Config{})
	tr, mb := testTransport(t, b.URL(), "", "")
	if err := tr.connect(testContext(t)); err != nil {
		t.Fatal(err)
	}
	waitItem(t, mb, itemConnected)
	rec := &flakyClient{Client: tr.client}
	tr.onConnect(rec) // as paho calls it after a reconnection
	waitItem(t, mb, itemConnected)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.subscribe == 0 || rec.callbacks != 0 {
		t.Fatalf("%d subscriptions, %d with a callback", rec.subscribe, rec.callbacks)
	}
	// And the default handler delivers: the agent's own status topic.
	if tok := tr.publish(tr.layout.Status("a1"), false, []byte("x")); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	it := waitItemWhere(t, mb, func(it item) bool { return it.kind == itemMessage && it.topic == tr.layout.Status("a1") })
	if string(it.payload) != "x" {
		t.Fatalf("received %q", it.payload)
	}
}

// TestReconnect covers transport.reconnect's outcomes: it retries a
// Connect that fails at once, gives up with ctx, stops on close, and
// reports a refusal (which no retry can change) as an error.
func TestReconnect(t *testing.T) {
	t.Run("retries", func(t *testing.T) {
		b := startBroker(t, broker.Config{})
		tr, mb := testTransport(t, b.URL(), "", "")
		if err := tr.connect(testContext(t)); err != nil {
			t.Fatal(err)
		}
		waitItem(t, mb, itemConnected)
		fc := &flakyClient{Client: tr.client}
		fc.fails.Store(3)
		tr.client = fc
		if err := tr.reconnect(testContext(t)); err != nil {
			t.Fatal(err)
		}
		if n := fc.connects.Load(); n != 4 {
			t.Fatalf("%d Connect calls, want 4 (3 failures then success)", n)
		}
		waitItem(t, mb, itemConnected)
		if !tr.client.IsConnectionOpen() {
			t.Fatal("not connected after reconnect")
		}
	})
	t.Run("ctx ends", func(t *testing.T) {
		b := startBroker(t, broker.Config{})
		tr, _ := testTransport(t, b.URL(), "", "")
		if err := tr.connect(testContext(t)); err != nil {
			t.Fatal(err)
		}
		fc := &flakyClient{Client: tr.client}
		fc.fails.Store(1 << 30) // never connects again
		tr.client = fc
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := tr.reconnect(ctx)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
			t.Fatalf("got %v after %v", err, time.Since(start))
		}
		if n := fc.connects.Load(); n < 3 {
			t.Fatalf("only %d attempts in 500 ms", n)
		}
	})
	t.Run("close stops it", func(t *testing.T) {
		b := startBroker(t, broker.Config{})
		tr, _ := testTransport(t, b.URL(), "", "")
		if err := tr.connect(testContext(t)); err != nil {
			t.Fatal(err)
		}
		fc := &flakyClient{Client: tr.client}
		fc.fails.Store(1 << 30)
		tr.client = fc
		errc := make(chan error, 1)
		go func() { errc <- tr.reconnect(context.Background()) }()
		waitFor(t, "a failed attempt", func() bool { return fc.connects.Load() > 1 })
		tr.close(100 * time.Millisecond)
		select {
		case err := <-errc:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("reconnect went on after close")
		}
	})
	t.Run("refused", func(t *testing.T) {
		users := func(pw string) []broker.User { return []broker.User{{Name: "a1", Password: pw}} }
		b := startBroker(t, broker.Config{Users: users("old")})
		tr, _ := testTransport(t, b.URL(), "a1", "old")
		if err := tr.connect(testContext(t)); err != nil {
			t.Fatal(err)
		}
		// The broker comes back with other credentials for the home.
		addr := b.Addr()
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		startBroker(t, broker.Config{Addr: addr, Users: users("new")})
		err := tr.reconnect(testContext(t))
		if !isRefusal(err) || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("got %v, want the refusal", err)
		}
	})
}

// TestReconnectFailureStopsAgent: an agent whose connection must be
// replaced (its own status not echoed) and that the broker then refuses
// stops with that error instead of waiting on no connection.
func TestReconnectFailureStopsAgent(t *testing.T) {
	users := func(pw string) []broker.User { return []broker.User{{Name: "a1", Password: pw}} }
	b := startBroker(t, broker.Config{Users: users("old")})
	a, errc, _ := waitingAgent(t, AgentConfig{Config: Config{
		Broker: Broker{URL: b.URL(), Username: "a1", Password: "old"}, Run: "r", Protocol: "p",
		Agents: []string{"a0", "a1"}, Timing: fastTiming, Logger: testLogger(t),
	}, Agent: 1})
	addr := b.Addr()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	startBroker(t, broker.Config{Addr: addr, Users: users("new")})
	a.replaceConnection(context.Background())
	select {
	case err := <-errc:
		if !isRefusal(err) {
			t.Fatalf("the agent stopped with %v, want the refusal", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the agent still waits")
	}
}
