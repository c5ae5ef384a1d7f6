package envelope

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

func TestSplitSizes(t *testing.T) {
	h := sample().Header
	for _, tc := range []struct{ n, max, want int }{
		{0, 10, 1}, {1, 10, 1}, {10, 10, 1}, {11, 10, 2}, {20, 10, 2}, {21, 10, 3},
	} {
		body := make([]byte, tc.n)
		es := Split(h, body, tc.max)
		if len(es) != tc.want {
			t.Fatalf("%d bytes by %d: %d fragments, want %d", tc.n, tc.max, len(es), tc.want)
		}
		sum := 0
		for i, e := range es {
			if err := e.Check(len(e.Payload), Limits{MaxPayload: tc.max}); err != nil {
				t.Fatalf("fragment %d: %v", i, err)
			}
			sum += len(e.Payload)
		}
		if sum != tc.n {
			t.Fatalf("fragments hold %d bytes, want %d", sum, tc.n)
		}
	}
}

// TestReassembleInterleaved sends several messages of random sizes on
// several links, their fragments shuffled together with duplicates, every
// fragment going through the encoder and decoder; every message must come
// out exactly once, intact, and the reassembler must end empty.
func TestReassembleInterleaved(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 7))
		maxPayload := 1 + r.IntN(64)
		lim := Limits{MaxPayload: maxPayload, MaxMessage: 4096}
		type msg struct {
			key  Key
			body []byte
		}
		var msgs []msg
		var wire [][]byte
		for link := range 3 {
			for seq := range uint64(4) {
				body := make([]byte, r.IntN(600))
				for i := range body {
					body[i] = byte(r.Uint32())
				}
				k := Key{Link: link, Seq: seq}
				msgs = append(msgs, msg{k, body})
				h := sample().Header
				h.Seq = seq
				h.Sender = []string{"a1", "a2", "a3"}[link]
				for _, e := range Split(h, body, maxPayload) {
					b, err := e.Encode(lim)
					if err != nil {
						t.Fatal(err)
					}
					wire = append(wire, b)
					if r.IntN(4) == 0 {
						wire = append(wire, b) // duplicate
					}
				}
			}
		}
		r.Shuffle(len(wire), func(i, j int) { wire[i], wire[j] = wire[j], wire[i] })

		var ra Reassembler
		got := map[Key][]byte{}
		dups := 0
		for _, b := range wire {
			e, err := Decode(b, lim)
			if err != nil {
				t.Fatal(err)
			}
			k := Key{Link: map[string]int{"a1": 0, "a2": 1, "a3": 2}[e.Sender], Seq: e.Seq}
			if _, done := got[k]; done {
				dups++ // the caller's link layer drops these by sequence number
				continue
			}
			body, ok, err := ra.Add(k, &e, false)
			switch {
			case errors.Is(err, ErrDuplicate):
				dups++
			case err != nil:
				t.Fatalf("seed %d: %v", seed, err)
			case ok:
				got[k] = body
			}
		}
		for _, m := range msgs {
			if !bytes.Equal(got[m.key], m.body) {
				t.Fatalf("seed %d: message %+v: got %d bytes, want %d", seed, m.key, len(got[m.key]), len(m.body))
			}
		}
		if ra.Pending() != 0 || ra.Bytes() != 0 {
			t.Fatalf("seed %d: %d pending, %d bytes left", seed, ra.Pending(), ra.Bytes())
		}
	}
}

func frags(t *testing.T, seq uint64, n, maxPayload int) []Envelope {
	t.Helper()
	h := sample().Header
	h.Seq = seq
	return Split(h, bytes.Repeat([]byte{byte(seq)}, n), maxPayload)
}

func TestReassemblerLimits(t *testing.T) {
	ra := Reassembler{MaxPending: 2, MaxBytes: 3 * (10 + fragmentOverhead)}
	a, b, c := frags(t, 1, 30, 10), frags(t, 2, 30, 10), frags(t, 3, 30, 10)
	mustAdd := func(k Key, e *Envelope, exempt bool, want error) {
		t.Helper()
		if _, _, err := ra.Add(k, e, exempt); !errors.Is(err, want) {
			t.Fatalf("Add %+v: got %v, want %v", k, err, want)
		}
	}
	mustAdd(Key{0, 1}, &a[0], false, nil)
	mustAdd(Key{0, 2}, &b[0], false, nil)
	mustAdd(Key{0, 3}, &c[0], false, ErrLimit) // a third message
	if ra.Has(Key{0, 3}) {
		t.Fatal("refused message left behind")
	}
	mustAdd(Key{0, 1}, &a[1], false, nil)
	mustAdd(Key{0, 2}, &b[1], false, ErrLimit) // bytes
	mustAdd(Key{0, 1}, &a[1], false, ErrDuplicate)
	// The message a link waits for passes, and stops counting.
	mustAdd(Key{0, 3}, &c[0], true, nil)
	mustAdd(Key{0, 2}, &b[1], true, nil)
	if got := ra.Bytes(); got != 2*(10+fragmentOverhead) {
		t.Fatalf("bytes %d after exempting message 2", got)
	}
	mustAdd(Key{0, 1}, &a[2], false, nil)
	ra.DiscardLink(0, 3, false)
	if ra.Pending() != 1 || ra.Bytes() != 0 {
		t.Fatalf("after DiscardLink: %d pending, %d bytes", ra.Pending(), ra.Bytes())
	}
	ra.DiscardLink(0, 0, true)
	if ra.Pending() != 0 {
		t.Fatal("DiscardLink(all) left messages")
	}
}

func TestReassemblerInconsistent(t *testing.T) {
	var ra Reassembler
	a := frags(t, 1, 30, 10)
	if _, _, err := ra.Add(Key{0, 1}, &a[0], false); err != nil {
		t.Fatal(err)
	}
	other := a[1]
	other.Total = 29
	if _, _, err := ra.Add(Key{0, 1}, &other, false); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("got %v", err)
	}
	if ra.Pending() != 0 || ra.Bytes() != 0 {
		t.Fatal("inconsistent message kept")
	}
	// Lengths that do not add up: three 9-byte fragments of a 30-byte body.
	for i := range 3 {
		e := a[i]
		e.Payload = e.Payload[:9]
		_, ok, err := ra.Add(Key{0, 2}, &e, false)
		if i < 2 && (err != nil || ok) {
			t.Fatalf("fragment %d: %v %v", i, ok, err)
		}
		if i == 2 && !errors.Is(err, ErrInconsistent) {
			t.Fatalf("short message: got %v", err)
		}
	}
	if ra.Pending() != 0 || ra.Bytes() != 0 {
		t.Fatal("short message kept")
	}
}
