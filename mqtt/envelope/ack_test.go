package envelope

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestAckRoundTrip(t *testing.T) {
	for _, a := range []Ack{
		{Run: "r", Sender: "a1", Receiver: "a0", Nonce: 1 << 63, Delivered: 0},
		{Run: "run-7", Sender: "maison-é", Receiver: "家", Nonce: 1, Delivered: ^uint64(0)},
		{Run: strings.Repeat("r", 128), Sender: strings.Repeat("s", 128), Receiver: strings.Repeat("x", 128), Nonce: ^uint64(0), Delivered: ^uint64(0)},
	} {
		b, err := a.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !IsAck(b) || len(b) > maxAck {
			t.Fatalf("%+v: %d bytes, IsAck %v", a, len(b), IsAck(b))
		}
		got, err := DecodeAck(b)
		if err != nil || got != a {
			t.Fatalf("round trip of %+v: %+v, %v", a, got, err)
		}
		// An ack is never mistaken for an envelope, nor the reverse.
		if _, err := Decode(b, Limits{}); !errors.Is(err, ErrVersion) {
			t.Fatalf("Decode of an ack: %v", err)
		}
	}
	env, err := (&Envelope{Header: Header{Run: "r", Sender: "a", Receiver: "b", Protocol: "p", Count: 1}}).Encode(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if IsAck(env) || IsAck(nil) {
		t.Fatal("an envelope or nothing taken for an ack")
	}
	if _, err := DecodeAck(env); !errors.Is(err, ErrVersion) {
		t.Fatalf("DecodeAck of an envelope: %v", err)
	}
}

func TestAckRefused(t *testing.T) {
	good, err := (&Ack{Run: "r", Sender: "a1", Receiver: "a0", Nonce: 5, Delivered: 300}).Encode()
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string][]byte{
		"empty":           {},
		"trailing byte":   append(bytes.Clone(good), 0),
		"truncated":       good[:len(good)-1],
		"non-minimal":     append(append(bytes.Clone(good[:len(good)-2]), 0xac|0x80, 0x82), 0), // 300 in three bytes
		"bad run":         {AckVersion, 1, '/', 2, 'a', '1', 2, 'a', '0', 5, 0},
		"empty sender":    {AckVersion, 1, 'r', 0, 2, 'a', '0', 5, 0},
		"name too long":   append([]byte{AckVersion, 0x81, 0x01}, bytes.Repeat([]byte("x"), 129)...),
		"too long in all": append([]byte{AckVersion}, make([]byte, maxAck)...),
	}
	for name, b := range bad {
		if _, err := DecodeAck(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := (&Ack{Run: "r", Sender: "a+", Receiver: "a0"}).Encode(); err == nil {
		t.Error("an ack with a wildcard in a name encoded")
	}
}

// FuzzDecodeAck checks that DecodeAck never panics and that its encoding
// is canonical: what it accepts encodes back to the same bytes.
func FuzzDecodeAck(f *testing.F) {
	b, _ := (&Ack{Run: "r", Sender: "a1", Receiver: "a0", Nonce: 9, Delivered: 3}).Encode()
	f.Add(b)
	f.Add([]byte{AckVersion})
	f.Add([]byte{1, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := DecodeAck(b)
		if err != nil {
			return
		}
		again, err := a.Encode()
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("%+v: re-encoded %x, %v; input %x", a, again, err, b)
		}
	})
}
