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
