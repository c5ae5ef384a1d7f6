package mqtt

import (
	"context"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/mqtt/envelope"
	"github.com/hearth-dcop/hearth/mva"
)

// pubRecorder is a paho client that only records what is published.
type pubRecorder struct {
	paho.Client
	mu   sync.Mutex
	pubs []recorded
}

type recorded struct {
	topic   string
	payload []byte
}

func (p *pubRecorder) Publish(tp string, _ byte, _ bool, payload any) paho.Token {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pubs = append(p.pubs, recorded{tp, append([]byte(nil), payload.([]byte)...)})
	return doneToken{}
}

// take returns and forgets what was published.
func (p *pubRecorder) take() []recorded {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.pubs
	p.pubs = nil
	return out
}

// ackAgent is agent a1 of a0, a1, a2, "connected" to a recorder, with its
// peers' statuses seen (nonces 100 and 102).
func ackAgent(t *testing.T) (*agent, *pubRecorder) {
	t.Helper()
	cfg, err := AgentConfig{Config: Config{
		Broker: Broker{URL: "tcp://127.0.0.1:1"}, Run: "r", Protocol: "p", Agents: []string{"a0", "a1", "a2"},
		Logger: testLogger(t), Timing: Timing{StatusInterval: time.Second},
	}, Agent: 1}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	a := newAgent(cfg, &recorder{})
	rec := &pubRecorder{}
	a.tr.client = rec
	a.connected = true
	for j, nonce := range map[int]uint64{0: 100, 2: 102} {
		a.peers[j] = &peerState{seen: true, st: status{V: statusVersion, Agent: cfg.Agents[j], Run: "r", Nonce: nonce, State: stateRunning, N: 3}}
	}
	if err := a.start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return a, rec
}

// deliverFrom hands agent a the next n messages from peer j, in order.
func deliverFrom(t *testing.T, a *agent, j, n int) {
	t.Helper()
	for range n {
		h := envelope.Header{Run: "r", Sender: a.cfg.Agents[j], Receiver: "a1", Protocol: "p", Kind: "K", Seq: a.recv.in[j].next, Count: 1}
		b, err := (&envelope.Envelope{Header: h}).Encode(envelope.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.handle(context.Background(), item{kind: itemMessage, topic: a.layout.Inbox("a1", a.cfg.Agents[j]), payload: b}); err != nil {
			t.Fatal(err)
		}
	}
}

// acksIn decodes the acknowledgements among pubs, by receiver.
func acksIn(t *testing.T, a *agent, pubs []recorded) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, p := range pubs {
		if !envelope.IsAck(p.payload) {
			continue
		}
		k, err := envelope.DecodeAck(p.payload)
		if err != nil {
			t.Fatal(err)
		}
		if p.topic != a.layout.Inbox(k.Receiver, "a1") || k.Sender != "a1" || k.Nonce != a.nonce || k.Run != "r" {
			t.Fatalf("acknowledgement %+v on %s", k, p.topic)
		}
		out[k.Receiver] = k.Delivered
	}
	return out
}

// TestSendAcks: a receiver acknowledges each link to its sender alone, at
// once the first time, then at most once per status interval and only
// with news (or after a duplicate says its acknowledgement was lost); a
// status it publishes counts as an acknowledgement of every link.
func TestSendAcks(t *testing.T) {
	a, rec := ackAgent(t)
	t0 := time.Now()
	deliverFrom(t, a, 0, 3) // acknowledged at once, when delivered
	if got := acksIn(t, a, rec.take()); len(got) != 1 || got["a0"] != 1 {
		t.Fatalf("first acknowledgements %v, want a0: 1", got)
	}
	deliverFrom(t, a, 2, 1)
	a.sendAcks(t0.Add(500 * time.Millisecond))
	if got := acksIn(t, a, rec.take()); len(got) != 1 || got["a2"] != 1 {
		t.Fatalf("acknowledgements %v, want a2: 1 and a0 not before the interval", got)
	}
	a.sendAcks(t0.Add(1100 * time.Millisecond))
	if got := acksIn(t, a, rec.take()); len(got) != 1 || got["a0"] != 3 {
		t.Fatalf("after the interval: %v, want a0: 3", got)
	}
	a.sendAcks(t0.Add(5 * time.Second))
	if got := acksIn(t, a, rec.take()); len(got) != 0 {
		t.Fatalf("nothing new, yet %v", got)
	}
	// A duplicate of message 0 from a2: its sender missed the ack.
	h := envelope.Header{Run: "r", Sender: "a2", Receiver: "a1", Protocol: "p", Kind: "K", Seq: 0, Count: 1}
	b, _ := (&envelope.Envelope{Header: h}).Encode(envelope.Limits{})
	if err := a.handle(context.Background(), item{kind: itemMessage, topic: a.layout.Inbox("a1", "a2"), payload: b}); err != nil {
		t.Fatal(err)
	}
	a.sendAcks(t0.Add(6 * time.Second))
	if got := acksIn(t, a, rec.take()); len(got) != 1 || got["a2"] != 1 {
		t.Fatalf("after a duplicate: %v, want a2: 1 again", got)
	}
	// A status covers every link: nothing left to acknowledge.
	deliverFrom(t, a, 0, 2)
	rec.take()
	a.forcePub = true
	a.publishStatus(t0.Add(7 * time.Second))
	a.sendAcks(t0.Add(20 * time.Second))
	if got := acksIn(t, a, rec.take()); len(got) != 0 {
		t.Fatalf("after a status: %v", got)
	}
	if l := a.lastPub.link(0); l.Delivered != 5 {
		t.Fatalf("status link %+v", l)
	}
}

// TestOnAck: an acknowledgement frees the sender's messages up to its
// count, and is refused when it is another run's or another incarnation's,
// names another sender or receiver than its topic, or counts messages
// never sent.
func TestOnAck(t *testing.T) {
	good := envelope.Ack{Run: "r", Sender: "a0", Receiver: "a1", Nonce: 100, Delivered: 2}
	tests := []struct {
		name   string
		edit   func(*envelope.Ack)
		from   string // the topic's sender
		acked  uint64
		taken  int64 // Stats.AcksIn
		reason string
	}{
		{"taken", nil, "a0", 2, 1, ""},
		{"other run", func(k *envelope.Ack) { k.Run = "q" }, "a0", 0, 0, DropWrongRun},
		{"other incarnation", func(k *envelope.Ack) { k.Nonce = 7 }, "a0", 0, 0, DropStaleAck},
		{"sender not the topic's", func(k *envelope.Ack) { k.Sender = "a2" }, "a0", 0, 0, DropSenderMismatch},
		{"for another agent", func(k *envelope.Ack) { k.Receiver = "a2" }, "a0", 0, 0, DropWrongReceiver},
		{"beyond what was sent", func(k *envelope.Ack) { k.Delivered = 4 }, "a0", 0, 1, ""},
		{"garbage", func(k *envelope.Ack) { k.Run = "" }, "a0", 0, 0, DropMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := ackAgent(t)
			for range 3 {
				if err := a.sendMsg(mva.Message{From: 1, To: 0, Kind: "K", Body: []byte("x")}, true); err != nil {
					t.Fatal(err)
				}
			}
			k := good
			if tc.edit != nil {
				tc.edit(&k)
			}
			b, err := k.Encode()
			if err != nil {
				// An ack no agent would encode: forge its bytes.
				b = []byte{envelope.AckVersion, 0, 0, 0}
			}
			if err := a.handle(context.Background(), item{kind: itemMessage, topic: a.layout.Inbox("a1", tc.from), payload: b}); err != nil {
				t.Fatal(err)
			}
			st := a.ctr.snapshot("a1")
			if l := a.send.out[0]; l.acked != tc.acked || len(l.unacked) != 3-int(tc.acked) {
				t.Errorf("acked %d with %d kept, want %d", l.acked, len(l.unacked), tc.acked)
			}
			if tc.reason != "" && st.Dropped[tc.reason] != 1 {
				t.Errorf("dropped %v, want %s", st.Dropped, tc.reason)
			}
			if tc.reason == "" && len(st.Dropped) != 0 {
				t.Errorf("dropped %v", st.Dropped)
			}
			if st.AcksIn != tc.taken {
				t.Errorf("%d acknowledgements taken, want %d", st.AcksIn, tc.taken)
			}
		})
	}
}
