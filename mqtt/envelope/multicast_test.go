package envelope

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

func sampleMulticast() Multicast {
	return Multicast{
		Run: "run-1", Sender: "a1", Protocol: "dgibbs", Kind: "VALUE", Agents: 300, NCCC: 1 << 33,
		To:      []Receiver{{0, 41}, {2, 40}, {3, 40}, {250, 1 << 20}, {299, 40}},
		Payload: []byte("values"),
	}
}

func TestMulticastRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Multicast)
	}{
		{"plain", func(*Multicast) {}},
		{"one receiver", func(m *Multicast) { m.To = m.To[3:4] }},
		{"two agents", func(m *Multicast) { m.Agents, m.To = 2, []Receiver{{1, 0}} }},
		{"empty body and kind", func(m *Multicast) { m.Kind, m.Payload = "", nil }},
		{"max seq", func(m *Multicast) { m.To[2].Seq = ^uint64(0) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := sampleMulticast()
			tc.edit(&m)
			b, err := m.Encode(Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !IsMulticast(b) || IsAck(b) {
				t.Fatal("not told apart from acknowledgements")
			}
			if _, err := Decode(b, Limits{}); !errors.Is(err, ErrVersion) {
				t.Errorf("Decode of a multicast: %v, want ErrVersion", err)
			}
			got, err := DecodeMulticast(b, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Run != m.Run || got.Sender != m.Sender || got.Protocol != m.Protocol || got.Kind != m.Kind ||
				got.Agents != m.Agents || got.NCCC != m.NCCC || !bytes.Equal(got.Payload, m.Payload) {
				t.Errorf("got %+v, want %+v", got, m)
			}
			if r := got.Receivers(); !slices.Equal(r, m.To) {
				t.Errorf("receivers %v, want %v", r, m.To)
			}
			// SeqOf, for every index, against the list.
			for i := range m.Agents {
				k := slices.IndexFunc(m.To, func(r Receiver) bool { return r.Index == i })
				seq, ok := got.SeqOf(i)
				if ok != (k >= 0) || (ok && seq != m.To[k].Seq) {
					t.Errorf("SeqOf(%d) = %d, %v; want %v", i, seq, ok, k >= 0)
				}
			}
			h := got.Header("a7", 12)
			if h.Receiver != "a7" || h.Seq != 12 || h.Count != 1 || h.Total != len(m.Payload) || h.Check(len(got.Payload), Limits{}) != nil {
				t.Errorf("header %+v", h)
			}
		})
	}
}

func TestMulticastRefused(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Multicast)
	}{
		{"no receivers", func(m *Multicast) { m.To = nil }},
		{"receiver out of range", func(m *Multicast) { m.To = []Receiver{{300, 1}} }},
		{"receivers out of order", func(m *Multicast) { m.To = []Receiver{{3, 1}, {2, 1}} }},
		{"receiver twice", func(m *Multicast) { m.To = []Receiver{{3, 1}, {3, 1}} }},
		{"one agent", func(m *Multicast) { m.Agents, m.To = 1, []Receiver{{0, 0}} }},
		{"every agent a receiver", func(m *Multicast) { m.Agents, m.To = 2, []Receiver{{0, 0}, {1, 0}} }},
		{"bad sender", func(m *Multicast) { m.Sender = "a/b" }},
		{"no protocol", func(m *Multicast) { m.Protocol = "" }},
		{"payload too large", func(m *Multicast) { m.Payload = make([]byte, 65) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := sampleMulticast()
			tc.edit(&m)
			if b, err := m.Encode(Limits{MaxPayload: 64}); err == nil {
				t.Errorf("encoded %x", b)
			}
		})
	}
	// Decoding: a hand-made list whose base is not the smallest sequence
	// number (not canonical), truncations and trailing bytes.
	m := sampleMulticast()
	b, err := m.Encode(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(b) - len(m.Payload) {
		if _, err := DecodeMulticast(b[:n], Limits{}); err == nil {
			t.Errorf("truncated to %d bytes: accepted", n)
		}
	}
	one := Multicast{Run: "r", Sender: "s", Protocol: "p", Agents: 3, To: []Receiver{{1, 5}}}
	b, err = one.Encode(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	// base 5, seq 0 → base 4, seq 1: same receiver seq, not canonical.
	bad := bytes.Clone(b)
	i := bytes.Index(bad, []byte{3, 0, 5, 1, 1, 0})
	if i < 0 {
		t.Fatalf("layout changed: %x", b)
	}
	bad[i+2], bad[i+5] = 4, 1
	if _, err := DecodeMulticast(bad, Limits{}); !errors.Is(err, ErrMalformed) {
		t.Errorf("non-minimal base: %v", err)
	}
}
