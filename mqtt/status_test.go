package mqtt

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// st is a status in the dense form of format version 1 (a counter per
// agent, zeros included), converted to the sparse links: the tests state
// counters the way a reader thinks of them, and the conversion is the
// independent truth the sparse form must agree with.
func st(state string, sent, delivered []uint64) status {
	s := status{V: statusVersion, State: state, N: len(sent)}
	for j := range sent {
		if sent[j] != 0 || delivered[j] != 0 {
			s.Links = append(s.Links, linkCount{Peer: j, Sent: sent[j], Delivered: delivered[j]})
		}
	}
	return s
}

// denseQuiescent is quiescence by its definition over dense counters.
func denseQuiescent(state []string, sent, delivered [][]uint64) bool {
	for i := range state {
		if state[i] != stateDone {
			return false
		}
		for j := range state {
			if sent[i][j] != delivered[j][i] {
				return false
			}
		}
	}
	return true
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
		{"a link only its receiver lists", []status{
			st(d, []uint64{0, 0}, []uint64{0, 0}),
			st(d, []uint64{0, 0}, []uint64{1, 0}),
		}, false},
		{"a link only its sender lists", []status{
			st(d, []uint64{0, 1}, []uint64{0, 0}),
			st(d, []uint64{0, 0}, []uint64{0, 0}),
		}, false},
		{"another run size", []status{
			st(d, []uint64{0}, []uint64{0}),
			st(d, []uint64{0, 0}, []uint64{0, 0}),
		}, false},
	}
	for _, tc := range tests {
		if got := quiescent(tc.st); got != tc.want {
			t.Errorf("%s: got %v", tc.name, got)
		}
	}
}

// TestQuiescentSparseMatchesDense draws random counters, most links idle
// and most states done, and compares the sparse check with the definition.
func TestQuiescentSparseMatchesDense(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	agree := map[bool]int{}
	for range 5000 {
		n := 1 + r.IntN(6)
		state := make([]string, n)
		sent, delivered := make([][]uint64, n), make([][]uint64, n)
		for i := range n {
			state[i] = stateDone
			if r.IntN(10) == 0 {
				state[i] = stateRunning
			}
			sent[i], delivered[i] = make([]uint64, n), make([]uint64, n)
		}
		for i := range n {
			for j := range n {
				if i == j || r.IntN(3) != 0 {
					continue
				}
				c := uint64(r.IntN(4))
				sent[i][j], delivered[j][i] = c, c
				if r.IntN(8) == 0 { // a message in flight, or a stale count
					delivered[j][i] = uint64(r.IntN(4))
				}
			}
		}
		sts := make([]status, n)
		for i := range n {
			sts[i] = st(state[i], sent[i], delivered[i])
		}
		want := denseQuiescent(state, sent, delivered)
		if got := quiescent(sts); got != want {
			t.Fatalf("%d agents, states %v, sent %v, delivered %v: got %v, want %v", n, state, sent, delivered, got, want)
		}
		agree[want]++
	}
	if agree[true] < 100 || agree[false] < 100 {
		t.Fatalf("the draws hardly exercise one side: %v", agree)
	}
}

func TestDecodeStatus(t *testing.T) {
	good := status{V: statusVersion, Agent: "a1", Run: "r", Nonce: 1 << 63, Gen: 2, Ver: 5, State: stateDone, N: 3,
		Links: []linkCount{{Peer: 0, Sent: 1, Delivered: 3}, {Peer: 2, Sent: 2, Delivered: 1}}}
	got, err := decodeStatus(good.encode(), "a1", "r", 1, 3)
	if err != nil || !reflect.DeepEqual(got, good) {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	if l := got.link(2); l.Sent != 2 || l.Delivered != 1 {
		t.Fatalf("link 2: %+v", l)
	}
	if l := got.link(1); l != (linkCount{Peer: 1}) {
		t.Fatalf("unlisted link: %+v", l)
	}
	waiting := status{V: statusVersion, Agent: "a1", Run: "r", State: stateWaiting, N: 3}
	if b := waiting.encode(); !strings.Contains(string(b), `"peers":[]`) {
		t.Errorf("an agent without links: %s", b)
	} else if got, err := decodeStatus(b, "a1", "r", 1, 3); err != nil || len(got.Links) != 0 {
		t.Errorf("an agent without links: %+v %v", got, err)
	}
	hdr := `"v":2,"agent":"a1","run":"r","state":"done","n":3`
	bad := map[string]string{
		"not json":          `{`,
		"trailing":          string(good.encode()) + `{}`,
		"unknown field":     `{` + hdr + `,"peers":[],"sent":[],"delivered":[],"x":1}`,
		"other agent":       `{"v":2,"agent":"a2","run":"r","state":"done","n":3,"peers":[],"sent":[],"delivered":[]}`,
		"other run":         `{"v":2,"agent":"a1","run":"q","state":"done","n":3,"peers":[],"sent":[],"delivered":[]}`,
		"state":             `{"v":2,"agent":"a1","run":"r","state":"asleep","n":3,"peers":[],"sent":[],"delivered":[]}`,
		"other run size":    `{"v":2,"agent":"a1","run":"r","state":"done","n":4,"peers":[],"sent":[],"delivered":[]}`,
		"short counters":    `{` + hdr + `,"peers":[0,2],"sent":[1],"delivered":[1,1]}`,
		"peer out of range": `{` + hdr + `,"peers":[3],"sent":[1],"delivered":[1]}`,
		"negative peer":     `{` + hdr + `,"peers":[-1],"sent":[1],"delivered":[1]}`,
		"itself":            `{` + hdr + `,"peers":[1],"sent":[1],"delivered":[1]}`,
		"peers unordered":   `{` + hdr + `,"peers":[2,0],"sent":[1,1],"delivered":[1,1]}`,
		"peer twice":        `{` + hdr + `,"peers":[0,0],"sent":[1,1],"delivered":[1,1]}`,
		"negative count":    `{` + hdr + `,"peers":[0],"sent":[-1],"delivered":[1]}`,
		"huge":              `{` + hdr + `,"peers":[],"sent":[],"delivered":[],"error":"` + strings.Repeat("x", 5000) + `"}`,
		"error too long":    `{` + hdr + `,"peers":[],"sent":[],"delivered":[],"error":"` + strings.Repeat("x", maxStatusError+1) + `"}`,
	}
	for name, b := range bad {
		_, err := decodeStatus([]byte(b), "a1", "r", 1, 3)
		if err == nil || errors.Is(err, errStatusVersion) {
			t.Errorf("%s: got %v, want a malformed status", name, err)
		}
	}
	// Another format version is told apart, whatever its fields.
	for _, b := range []string{
		`{"v":1,"agent":"a1","run":"r","state":"done","sent":[0,0,0],"delivered":[0,0,0]}`,
		`{"v":3,"agent":"a1","future":true}`,
	} {
		if _, err := decodeStatus([]byte(b), "a1", "r", 1, 3); !errors.Is(err, errStatusVersion) {
			t.Errorf("%s: got %v, want a version error", b, err)
		}
	}
}

// FuzzDecodeStatus checks that status decoding never panics, that what it
// accepts is valid for the agent that indexes it (peers in range, in
// order, never itself) and that it encodes back to a status that decodes
// to the same value.
func FuzzDecodeStatus(f *testing.F) {
	f.Add(st(stateDone, []uint64{0, 1, 0}, []uint64{2, 0, 0}).encode())
	f.Add([]byte(`{"v":2,"agent":"a1","run":"r","state":"done","n":3,"peers":[0,2],"sent":[1,0],"delivered":[0,4]}`))
	f.Add([]byte(`{"v":1,"agent":"a1","run":"r","state":"done","sent":[0,0,0],"delivered":[0,0,0]}`))
	f.Add([]byte(`{"v":2,"agent":"a1","run":"r","nonce":7,"gen":1,"ver":3,"state":"failed","error":"x","n":3,"peers":[0,2],"sent":[1,0],"delivered":[0,4]}`))
	f.Add([]byte(`{"v":2,"agent":"a1","run":"r","nonce":18446744073709551615,"gen":0,"ver":0,"state":"done","n":3,"peers":[],"sent":[],"delivered":[]}`))
	f.Add(status{V: statusVersion, Agent: "a1", Run: "r", State: stateDone, N: 3, HasWave: true,
		Wave: waveReport{Join: 4, Rep: 3, Sent: 17, Delivered: 17, Done: true}}.encode())
	f.Add([]byte(`{"v":2,"agent":"a1","run":"r","nonce":0,"gen":0,"ver":0,"state":"done","n":3,"peers":[],"sent":[],"delivered":[],"wave":[2,3,0,0,1,0]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		// The canonical parser accepts only what encoding/json reads
		// the same.
		if w, ok := parseCanonicalStatus(b); ok {
			var want wireStatus
			if err := parseStatusJSON(b, &want); err != nil || !reflect.DeepEqual(w, want) {
				t.Fatalf("%s: canonical parse %+v, encoding/json %+v, %v", b, w, want, err)
			}
		}
		s, err := decodeStatus(b, "a1", "r", 1, 3)
		if err != nil {
			_, _ = decodePresence(b, "a1")
			return
		}
		for k, l := range s.Links {
			if l.Peer < 0 || l.Peer >= 3 || l.Peer == 1 || (k > 0 && l.Peer <= s.Links[k-1].Peer) {
				t.Fatalf("accepted links %+v", s.Links)
			}
		}
		again, err := decodeStatus(s.encode(), "a1", "r", 1, 3)
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("re-encoding %+v: %+v, %v", s, again, err)
		}
	})
}

func TestPresenceCodec(t *testing.T) {
	p := presence{V: presenceVersion, Agent: "a1", State: "online", Run: "r"}
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

// TestCanonicalStatus checks that every status encode writes takes the
// canonical parser (the fast path is not silently skipped) and reads as
// encoding/json reads it, and that non-canonical spellings fall back.
func TestCanonicalStatus(t *testing.T) {
	many := status{V: statusVersion, Agent: "h251", Run: "run-ab12", Nonce: math.MaxUint64, Gen: 3, Ver: 99, State: stateRunning, N: 300}
	for j := range 299 {
		many.Links = append(many.Links, linkCount{Peer: j, Sent: uint64(j * 7), Delivered: math.MaxUint64 - uint64(j)})
	}
	for _, s := range []status{
		st(stateDone, []uint64{0, 1, 0}, []uint64{2, 0, 0}),
		{V: statusVersion, Agent: "a1", Run: "r", State: stateFailed, Error: `the broker <refused> "x" & 'y'`, N: 3},
		{V: statusVersion, Agent: "a1", Run: "r", State: stateWaiting, Error: "plain words", N: 3},
		{V: statusVersion, Agent: "a1", Run: "r", State: stateDone, N: 3, HasWave: true,
			Wave: waveReport{Join: 9, Rep: 9, Sent: math.MaxUint64, Delivered: 5, Done: true, Term: true}},
		many,
	} {
		b := s.encode()
		w, ok := parseCanonicalStatus(b)
		var want wireStatus
		if err := parseStatusJSON(b, &want); err != nil {
			t.Fatal(err)
		}
		escaped := bytes.Contains(b, []byte(`\`))
		if ok == escaped || ok && !reflect.DeepEqual(w, want) {
			t.Errorf("%.120s: canonical %v (escapes %v) %+v, encoding/json %+v", b, ok, escaped, w, want)
		}
	}
	for _, b := range []string{
		`{"v":2, "agent":"a1","run":"r","nonce":0,"gen":0,"ver":0,"state":"done","n":3,"peers":[],"sent":[],"delivered":[]}`,
		`{"v":02,"agent":"a1","run":"r","nonce":0,"gen":0,"ver":0,"state":"done","n":3,"peers":[],"sent":[],"delivered":[]}`,
		`{"v":2,"agent":"a1","run":"r","nonce":18446744073709551616,"gen":0,"ver":0,"state":"done","n":3,"peers":[],"sent":[],"delivered":[]}`,
		`{"v":2,"agent":"a1","run":"r","nonce":0,"gen":0,"ver":0,"state":"done","error":"","n":3,"peers":[],"sent":[],"delivered":[]}`,
		`{"v":2,"agent":"a1","run":"r","nonce":0,"gen":0,"ver":0,"state":"done","n":3,"peers":[-1],"sent":[1],"delivered":[1]}`,
		`{"v":2,"agent":"a1","run":"r","nonce":0,"gen":0,"ver":0,"state":"done","n":3,"peers":null,"sent":[],"delivered":[]}`,
		`{"agent":"a1","v":2,"run":"r","nonce":0,"gen":0,"ver":0,"state":"done","n":3,"peers":[],"sent":[],"delivered":[]}`,
	} {
		if _, ok := parseCanonicalStatus([]byte(b)); ok {
			t.Errorf("canonical parser accepted %s", b)
		}
	}
}

// BenchmarkDecodeStatus compares the canonical parser with encoding/json
// on the status of a home of a 251-home complete graph.
func BenchmarkDecodeStatus(b *testing.B) {
	s := status{V: statusVersion, Agent: "h1", Run: "run-ab12", Nonce: 1 << 60, Gen: 3, Ver: 99, State: stateRunning, N: 251}
	for j := 1; j < 251; j++ {
		s.Links = append(s.Links, linkCount{Peer: j, Sent: 70, Delivered: 69})
	}
	enc := s.encode()
	b.Run("canonical", func(b *testing.B) {
		for b.Loop() {
			if _, ok := parseCanonicalStatus(enc); !ok {
				b.Fatal("not canonical")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		var w wireStatus
		for b.Loop() {
			if err := parseStatusJSON(enc, &w); err != nil {
				b.Fatal(err)
			}
		}
	})
}
