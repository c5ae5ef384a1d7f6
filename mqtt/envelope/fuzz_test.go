package envelope

import (
	"bytes"
	"testing"
)

// FuzzDecodeEnvelope checks that Decode never panics, that what it accepts
// satisfies every documented bound, and that the encoding is canonical:
// re-encoding an accepted envelope gives back the same bytes.
func FuzzDecodeEnvelope(f *testing.F) {
	lim := Limits{MaxPayload: 64, MaxMessage: 256}
	for _, e := range []Envelope{sample()} {
		b, _ := e.Encode(lim)
		f.Add(b)
	}
	h := sample().Header
	for _, e := range Split(h, bytes.Repeat([]byte("xyz"), 50), 64) {
		b, _ := e.Encode(lim)
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{1, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := Decode(b, lim)
		if err != nil {
			return
		}
		if len(e.Payload) > 64 || e.Total > 256 || e.Index >= e.Count {
			t.Fatalf("accepted out-of-bounds envelope %+v", e.Header)
		}
		again, err := e.Encode(lim)
		if err != nil {
			t.Fatalf("decoded envelope does not encode: %v", err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("encoding not canonical:\n in %x\nout %x", b, again)
		}
	})
}

// FuzzDecodeMulticast checks that DecodeMulticast never panics, that what
// it accepts is within its bounds, that SeqOf agrees with Receivers, and
// that the encoding is canonical.
func FuzzDecodeMulticast(f *testing.F) {
	lim := Limits{MaxPayload: 64, MaxMessage: 256}
	m := sampleMulticast()
	b, _ := m.Encode(lim)
	f.Add(b)
	f.Add([]byte{MulticastVersion})
	f.Add([]byte{MulticastVersion, 1, 'r', 1, 's', 1, 'p', 0, 3, 0, 5, 1, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMulticast(b, lim)
		if err != nil {
			return
		}
		rs := m.Receivers()
		if len(m.Payload) > 64 || len(rs) == 0 || len(rs) >= m.Agents {
			t.Fatalf("accepted out-of-bounds multicast: %d-byte payload, %d receivers of %d", len(m.Payload), len(rs), m.Agents)
		}
		for k, r := range rs {
			if r.Index >= m.Agents || (k > 0 && r.Index <= rs[k-1].Index) {
				t.Fatalf("receivers %v of %d agents", rs, m.Agents)
			}
			if seq, ok := m.SeqOf(r.Index); !ok || seq != r.Seq {
				t.Fatalf("SeqOf(%d) = %d, %v; Receivers says %d", r.Index, seq, ok, r.Seq)
			}
		}
		m.To = rs
		again, err := m.Encode(lim)
		if err != nil {
			t.Fatalf("decoded multicast does not encode: %v", err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("encoding not canonical:\n in %x\nout %x", b, again)
		}
	})
}
