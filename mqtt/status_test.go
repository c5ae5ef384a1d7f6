package mqtt

import (
	"io"
	"log/slog"
	"testing"
	"time"
)

func st(state string, sent, delivered []uint64) status {
	return status{V: 1, State: state, Sent: sent, Delivered: delivered}
}

func TestQuiescent(t *testing.T) {
	d, r := stateDone, stateRunning
	tests := []struct {
		name string
		st   []status
		want bool
	}{
		{"single agent done", []status{st(d, []uint64{0}, []uint64{0})}, true},
		{"all done, counts match", []status{
			st(d, []uint64{0, 2}, []uint64{0, 3}),
			st(d, []uint64{3, 0}, []uint64{2, 0}),
		}, true},
		{"message in flight", []status{
			st(d, []uint64{0, 3}, []uint64{0, 3}),
			st(d, []uint64{3, 0}, []uint64{2, 0}),
		}, false},
		{"one running", []status{
			st(d, []uint64{0, 2}, []uint64{0, 3}),
			st(r, []uint64{3, 0}, []uint64{2, 0}),
		}, false},
		{"three agents, balanced totals but not per link", []status{
			st(d, []uint64{0, 1, 0}, []uint64{0, 0, 1}),
			st(d, []uint64{0, 0, 1}, []uint64{0, 0, 0}),
			st(d, []uint64{1, 0, 0}, []uint64{0, 2, 0}),
		}, false},
		{"wrong counter length", []status{
			st(d, []uint64{0}, []uint64{0, 0}),
			st(d, []uint64{0, 0}, []uint64{0, 0}),
		}, false},
	}
	for _, tc := range tests {
		if got := quiescent(tc.st); got != tc.want {
			t.Errorf("%s: got %v", tc.name, got)
		}
	}
}

func TestDecodeStatus(t *testing.T) {
	good := status{V: 1, Agent: "a1", Run: "r", Nonce: 1 << 63, Gen: 2, Ver: 5, State: stateDone,
		Sent: []uint64{1, 0, 2}, Delivered: []uint64{3, 0, 1}}
	got, err := decodeStatus(good.encode(), "a1", "r", 3)
	if err != nil || got.Nonce != good.Nonce || got.Delivered[0] != 3 {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	bad := map[string]string{
		"not json":       `{`,
		"trailing":       string(good.encode()) + `{}`,
		"unknown field":  `{"v":1,"agent":"a1","run":"r","state":"done","sent":[0,0,0],"delivered":[0,0,0],"x":1}`,
		"version":        `{"v":2,"agent":"a1","run":"r","state":"done","sent":[0,0,0],"delivered":[0,0,0]}`,
		"other agent":    `{"v":1,"agent":"a2","run":"r","state":"done","sent":[0,0,0],"delivered":[0,0,0]}`,
		"other run":      `{"v":1,"agent":"a1","run":"q","state":"done","sent":[0,0,0],"delivered":[0,0,0]}`,
		"state":          `{"v":1,"agent":"a1","run":"r","state":"asleep","sent":[0,0,0],"delivered":[0,0,0]}`,
		"short counters": `{"v":1,"agent":"a1","run":"r","state":"done","sent":[0,0],"delivered":[0,0,0]}`,
		"negative":       `{"v":1,"agent":"a1","run":"r","state":"done","sent":[-1,0,0],"delivered":[0,0,0]}`,
		"huge":           `{"v":1,"agent":"a1","run":"r","state":"done","sent":[0,0,0],"delivered":[0,0,0],"error":"` + string(make([]byte, 5000)) + `"}`,
	}
	for name, b := range bad {
		if _, err := decodeStatus([]byte(b), "a1", "r", 3); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzDecodeStatus checks that status decoding never panics and that what
// it accepts has the counters the runtime indexes.
func FuzzDecodeStatus(f *testing.F) {
	f.Add(st(stateDone, []uint64{0, 1}, []uint64{2, 0}).encode())
	f.Add([]byte(`{"v":1,"agent":"a1","run":"r","state":"done","sent":[0,0],"delivered":[0,0]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeStatus(b, "a1", "r", 2)
		if err != nil {
			return
		}
		if len(s.Sent) != 2 || len(s.Delivered) != 2 {
			t.Fatalf("accepted %+v", s)
		}
		_, _ = decodePresence(b, "a1")
	})
}

func TestPresenceCodec(t *testing.T) {
	p := presence{V: 1, Agent: "a1", State: "online", Run: "r"}
	if got, err := decodePresence(p.encode(), "a1"); err != nil || got != p {
		t.Fatalf("%+v %v", got, err)
	}
	for _, b := range []string{`{}`, `{"v":1,"agent":"a2","state":"online"}`, `{"v":1,"agent":"a1","state":"away"}`, `x`} {
		if _, err := decodePresence([]byte(b), "a1"); err == nil {
			t.Errorf("accepted %s", b)
		}
	}
}

func TestSenderAckAndRetransmit(t *testing.T) {
	s := newSender(2)
	t0 := time.Unix(0, 0)
	for i := range uint64(3) {
		s.out[1].next++
		s.add(1, sentMsg{seq: i, frags: [][]byte{{1}}, size: 10, sentAt: t0, wait: time.Second})
	}
	if s.ack(1, 4) {
		t.Fatal("acknowledgement beyond what was sent accepted")
	}
	if !s.ack(1, 1) || len(s.out[1].unacked) != 2 || s.bytes != 20 {
		t.Fatalf("after ack: %d unacked, %d bytes", len(s.out[1].unacked), s.bytes)
	}
	if got := s.due(1, false, t0.Add(500*time.Millisecond), time.Second, 4*time.Second); len(got) != 0 {
		t.Fatalf("%d due early", len(got))
	}
	if got := s.due(1, false, t0.Add(time.Second), time.Second, 4*time.Second); len(got) != 2 || got[0].seq != 1 {
		t.Fatalf("due after the timeout: %d", len(got))
	}
	if w := s.out[1].unacked[0].wait; w != 2*time.Second {
		t.Fatalf("back-off %v", w)
	}
	if got := s.due(1, true, t0.Add(time.Second), time.Second, 4*time.Second); len(got) != 2 || s.out[1].unacked[0].wait != time.Second {
		t.Fatal("a resync must resend everything and reset the back-off")
	}
	if !s.ack(1, 3) || len(s.out[1].unacked) != 0 || s.bytes != 0 {
		t.Fatal("full ack left messages")
	}
}

func TestMailboxOverflow(t *testing.T) {
	var c counters
	m := newMailbox(10, &c, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if !m.push(item{payload: make([]byte, 6)}) || m.push(item{payload: make([]byte, 6)}) {
		t.Fatal("the limit was not applied")
	}
	if !m.push(item{kind: itemConnected}) || !m.push(item{payload: make([]byte, 4)}) || !m.push(item{control: true, payload: make([]byte, 100)}) {
		t.Fatal("control items and what fits must be accepted")
	}
	q, over := m.drain()
	if len(q) != 4 || !over {
		t.Fatalf("drained %d items, overflow %v", len(q), over)
	}
	if _, over := m.drain(); over {
		t.Fatal("overflow not reset")
	}
	if !m.push(item{payload: make([]byte, 10)}) {
		t.Fatal("drain did not free the space")
	}
	if _, over := m.drain(); over {
		t.Fatal("overflow after a drain")
	}
	if !m.push(item{payload: make([]byte, 50)}) {
		t.Fatal("an empty mailbox must take a payload over the limit")
	}
	if s := c.snapshot(""); s.Dropped[DropMailboxFull] != 1 || s.MailboxPeak != 110 {
		t.Fatalf("stats %+v", s)
	}
}
