package sign

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// seeded returns a signer whose key comes from seed, with a clock that
// starts at a fixed instant, so that tests are deterministic.
func seeded(t testing.TB, name string, seed byte) *Signer {
	t.Helper()
	s, err := NewSigner(name, ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return at }
	return s
}

func TestSealOpen(t *testing.T) {
	alder, birch, ctl := seeded(t, "alder", 1), seeded(t, "birch", 2), seeded(t, "ctl", 3)
	mallory := seeded(t, "alder", 9) // claims alder's name with another key
	ring := NewKeyring()
	for _, s := range []*Signer{alder, birch} {
		if err := ring.Add(s.Name(), s.Public(), false); err != nil {
			t.Fatal(err)
		}
	}
	if err := ring.Add("ctl", ctl.Public(), true); err != nil {
		t.Fatal(err)
	}
	const inbox = "hearth/r1/inbox/birch/alder"
	bin := []byte{1, 2, 3, 0xfa, 'h', 's'}
	obj := []byte(`{"v":2,"agent":"alder","state":"done"}`)
	onlyAlder := func(s string) bool { return s == "alder" }
	flip := func(b []byte, i int) []byte { c := bytes.Clone(b); c[i] ^= 1; return c }
	for _, tc := range []struct {
		name    string
		payload []byte // received
		topic   string // received on
		allow   func(string) bool
		want    []byte
		err     error
	}{
		{name: "binary", payload: alder.Seal(inbox, bin), topic: inbox, allow: onlyAlder, want: bin},
		{name: "json", payload: alder.Seal(inbox, obj), topic: inbox, allow: onlyAlder, want: obj},
		{name: "empty object", payload: alder.Seal(inbox, []byte("{ }")), topic: inbox, want: []byte("{ }")},
		{name: "empty binary", payload: alder.Seal(inbox, nil), topic: inbox, want: []byte{}},
		{name: "controller", payload: ctl.Seal("hearth/cmd", []byte(`{"round":"r2"}`)), topic: "hearth/cmd", allow: ring.IsController, want: []byte(`{"round":"r2"}`)},
		{name: "home as controller", payload: alder.Seal("hearth/cmd", []byte(`{"round":"r2"}`)), topic: "hearth/cmd", allow: ring.IsController, err: ErrNotAllowed},
		{name: "unsigned binary", payload: bin, topic: inbox, err: ErrUnsigned},
		{name: "unsigned json", payload: obj, topic: inbox, err: ErrUnsigned},
		{name: "wrong topic", payload: alder.Seal(inbox, bin), topic: "hearth/r2/inbox/birch/alder", err: ErrBadSignature},
		{name: "wrong topic json", payload: alder.Seal(inbox, obj), topic: "hearth/r1/status/alder", err: ErrBadSignature},
		{name: "tampered binary", payload: flip(alder.Seal(inbox, bin), len(alder.Seal(inbox, bin))-1), topic: inbox, err: ErrBadSignature},
		{name: "tampered json", payload: bytes.Replace(alder.Seal(inbox, obj), []byte("done"), []byte("fail"), 1), topic: inbox, err: ErrBadSignature},
		{name: "tampered time", payload: flip(alder.Seal(inbox, bin), len(magic)+1+len("alder")+7), topic: inbox, err: ErrBadSignature},
		{name: "wrong key", payload: mallory.Seal(inbox, bin), topic: inbox, err: ErrBadSignature},
		{name: "signer not allowed", payload: birch.Seal(inbox, bin), topic: inbox, allow: onlyAlder, err: ErrNotAllowed},
		{name: "unknown signer", payload: seeded(t, "eve", 5).Seal(inbox, bin), topic: inbox, err: ErrUnknownSigner},
		{name: "truncated", payload: alder.Seal(inbox, bin)[:20], topic: inbox, err: ErrMalformed},
		{name: "json member not last", payload: []byte(`{"hearth_sig":{"by":"alder","t":1,"sig":"AA"},"x":1}`), topic: inbox, err: ErrMalformed},
		{name: "json bad member", payload: []byte(`{"x":1,"hearth_sig":{"by":"alder","t":1,"sig":"AA"}}`), topic: inbox, err: ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ring.Open(tc.topic, tc.payload, tc.allow)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Open: %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if !bytes.Equal(m.Content, tc.want) {
				t.Fatalf("content %q, want %q", m.Content, tc.want)
			}
		})
	}
}

// TestSealJSONStaysJSON: a consumer that cannot verify (Home Assistant,
// jq) still reads a sealed object, with the same fields.
func TestSealJSONStaysJSON(t *testing.T) {
	s := seeded(t, "alder", 1)
	b := s.Seal("hearth/home/alder/load", []byte(`{"home":"alder","peak_kw":3.5}`))
	if !bytes.HasPrefix(b, []byte(`{"home":"alder","peak_kw":3.5,"hearth_sig":{"by":"alder","t":`)) {
		t.Fatalf("sealed JSON %s", b)
	}
}

func TestReplay(t *testing.T) {
	s := seeded(t, "alder", 1)
	ring := NewKeyring()
	if err := ring.AddSigner(s); err != nil {
		t.Fatal(err)
	}
	const tp = "hearth/r1/status/alder"
	older := s.Seal(tp, []byte(`{"state":"running"}`))
	newer := s.Seal(tp, []byte(`{"state":"done"}`))
	other := s.Seal("hearth/r1/status/birch", []byte(`{"state":"x"}`))
	var r Replay
	for i, tc := range []struct {
		topic   string
		payload []byte
		fresh   bool
	}{
		{tp, older, true},
		{tp, newer, true},
		{tp, newer, true},  // the same again: a redelivery
		{tp, older, false}, // a replay of the older one
		{"hearth/r1/status/birch", other, true},
	} {
		m, err := ring.Open(tc.topic, tc.payload, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Fresh(tc.topic, m); got != tc.fresh {
			t.Fatalf("step %d: Fresh = %v, want %v", i, got, tc.fresh)
		}
	}
}

// TestStampsIncrease: a clock that stands still or goes back never gives
// a signer's messages equal or decreasing time stamps.
func TestStampsIncrease(t *testing.T) {
	s := seeded(t, "alder", 1)
	clock := []time.Time{time.Unix(100, 0), time.Unix(100, 0), time.Unix(50, 0), time.Unix(200, 0)}
	i := 0
	s.now = func() time.Time { i++; return clock[i-1] }
	var last int64
	for range clock {
		m, _, err := Parse(s.Seal("t", []byte("x")))
		if err != nil {
			t.Fatal(err)
		}
		if m.Time <= last {
			t.Fatalf("time %d after %d", m.Time, last)
		}
		last = m.Time
	}
}

func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	s := seeded(t, "alder", 1)
	path := filepath.Join(dir, "alder.key")
	if err := WriteKey(path, s); err != nil {
		t.Fatal(err)
	}
	if err := WriteKey(path, s); err == nil {
		t.Fatal("WriteKey replaced an existing key file")
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v", st.Mode().Perm(), err)
	}
	got, err := LoadKey(path, "alder")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Public().Equal(s.Public()) || got.Name() != "alder" {
		t.Fatalf("loaded %s %s", got.Name(), FormatPublic(got.Public()))
	}
	if _, err := LoadKey(path, "birch"); err == nil {
		t.Fatal("alder's key loaded as birch's")
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(path, "alder"); err == nil {
		t.Fatal("a world-readable key file was accepted")
	}
	pub, err := ParsePublic(FormatPublic(s.Public()))
	if err != nil || !pub.Equal(s.Public()) {
		t.Fatalf("ParsePublic: %v", err)
	}
	for _, bad := range []string{"", "ed25519:", "ed25519:AAAA", "rsa:" + FormatPublic(s.Public())[8:]} {
		if _, err := ParsePublic(bad); err == nil {
			t.Errorf("ParsePublic(%q) accepted", bad)
		}
	}
	// A keyring refuses a private key that does not match the
	// configuration's public key of the same name.
	ring := NewKeyring()
	if err := ring.Add("alder", seeded(t, "alder", 2).Public(), false); err != nil {
		t.Fatal(err)
	}
	if err := ring.AddSigner(s); err == nil {
		t.Fatal("a mismatched key was accepted")
	}
}

// TestOpenRandom: random bytes, and sealed payloads with random bytes
// changed, never open (a checker apart from Open: ed25519 itself).
func TestOpenRandom(t *testing.T) {
	s := seeded(t, "alder", 1)
	ring := NewKeyring()
	if err := ring.AddSigner(s); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		b := s.Seal("t", []byte(`{"i":1}`))
		if i%2 == 1 {
			b = s.Seal("t", []byte{byte(i), 7})
		}
		// Opened once intact, so that the keyring remembers it: the
		// changed copy must still be checked.
		if _, err := ring.Open("t", b, nil); err != nil {
			t.Fatal(err)
		}
		j := rng.IntN(len(b))
		b[j] ^= byte(1 + rng.IntN(255))
		if m, err := ring.Open("t", b, nil); err == nil {
			t.Fatalf("byte %d changed, still opens: %q", j, m.Content)
		}
	}
}

// TestOpenRemembered: a payload opened once opens again from memory with
// the same result, but not on another topic, nor for a signer the caller
// does not allow there.
func TestOpenRemembered(t *testing.T) {
	s := seeded(t, "alder", 1)
	ring := NewKeyring()
	if err := ring.AddSigner(s); err != nil {
		t.Fatal(err)
	}
	for _, content := range [][]byte{[]byte(`{"a":1}`), {1, 2, 3}} {
		b := s.Seal("t1", content)
		for range 2 {
			m, err := ring.Open("t1", b, nil)
			if err != nil || !bytes.Equal(m.Content, content) || m.Signer != "alder" {
				t.Fatalf("open %q: %+v, %v", content, m, err)
			}
		}
		if _, err := ring.Open("t2", b, nil); !errors.Is(err, ErrBadSignature) {
			t.Fatalf("remembered for another topic: %v", err)
		}
		if _, err := ring.Open("t1", b, func(string) bool { return false }); !errors.Is(err, ErrNotAllowed) {
			t.Fatalf("remembered for a signer not allowed: %v", err)
		}
	}
}
