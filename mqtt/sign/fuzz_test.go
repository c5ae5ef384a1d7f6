package sign

import (
	"bytes"
	"testing"
	"time"
)

// FuzzOpen: Parse and Open never panic, and whatever opens under alder's
// key was sealed by it: its content sealed again for the same topic, with
// the same time stamp, gives back the same bytes (Ed25519 signatures are
// deterministic), so the framing has exactly one encoding.
func FuzzOpen(f *testing.F) {
	s := seeded(f, "alder", 1)
	ring := NewKeyring()
	if err := ring.AddSigner(s); err != nil {
		f.Fatal(err)
	}
	f.Add("t", s.Seal("t", []byte{1, 2, 3}))
	f.Add("t", s.Seal("t", []byte(`{"a":1}`)))
	f.Add("t", s.Seal("t", []byte(`{}`)))
	f.Add("t", []byte(`{"x":1,"hearth_sig":{"by":"alder","t":1,"sig":"AA"}}`))
	f.Add("t", []byte("\xfahs\x01\x05alder"))
	f.Fuzz(func(t *testing.T, topic string, b []byte) {
		Parse(b)
		m, err := ring.Open(topic, b, nil)
		if err != nil {
			return
		}
		again, err := NewSigner("alder", s.key)
		if err != nil {
			t.Fatal(err)
		}
		again.last, again.now = m.Time-1, func() time.Time { return time.Unix(0, 0) }
		if got := again.Seal(topic, m.Content); !bytes.Equal(got, b) {
			t.Fatalf("opened %q but sealing its content gives %q", b, got)
		}
	})
}

// FuzzSealOpen: whatever a signer seals, in either form, opens to the
// same content on its topic, and on no other.
func FuzzSealOpen(f *testing.F) {
	s := seeded(f, "alder", 1)
	ring := NewKeyring()
	if err := ring.AddSigner(s); err != nil {
		f.Fatal(err)
	}
	for _, c := range []string{"", "{}", "{ }", "{,}", `{"a":1}`, "\x01\x02", `{"hearth_sig":1}`} {
		f.Add("t", []byte(c))
	}
	f.Fuzz(func(t *testing.T, topic string, content []byte) {
		b := s.Seal(topic, content)
		m, err := ring.Open(topic, b, nil)
		if err != nil || !bytes.Equal(m.Content, content) {
			t.Fatalf("sealed %q, opened %q: %v", content, m.Content, err)
		}
		if _, err := ring.Open(topic+"x", b, nil); err == nil {
			t.Fatalf("sealed %q for %q, opened on %q", content, topic, topic+"x")
		}
	})
}
