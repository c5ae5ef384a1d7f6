// Package sign authenticates hearth's MQTT payloads: every payload a home
// (or a controller) publishes carries an Ed25519 signature by the home's
// key, made over the topic, the signer's name, a time stamp and the
// payload, and receivers that hold the neighbourhood's public keys
// (Keyring) drop what is unsigned, signed by a key that may not publish on
// the topic, signed badly, or older than what they already have from that
// signer on that topic (Replay).
//
// # Why this scheme
//
// MQTT 3.1.1, which hearth speaks, has no room beside the payload (MQTT 5's
// user properties would be one), and a broker authorises topics, never
// payloads: on a broker without per-home rules — the quick start's
// `mosquitto -p 1883`, `hearth sim`'s embedded broker — anyone may publish
// anything anywhere. So the signature travels in the payload and, as in
// COSE's Sig_structure (RFC 9052 §4.4) with the topic as external
// associated data, or in Teserakt E4's public-key mode (timestamp, sender
// id and signature ahead of the message), it covers what the receiver
// already knows and the payload does not say: the topic. A payload signed
// for one home's inbox, one run or one round cannot be moved to another
// topic; and a time stamp that each signer makes strictly increasing lets
// receivers refuse a replay of an older message (Replay). Ed25519: small
// keys that fit a line of TOML, deterministic signatures, no parameters to
// get wrong, in Go's standard library.
//
// # Signed bytes
//
//	"hearth-mqtt-sig-v1" 0x00
//	uvarint len(topic)  topic
//	uvarint len(signer) signer
//	time      8 bytes, big-endian: Unix nanoseconds, strictly increasing per Signer
//	content   the payload as the application wrote it
//
// # Wire forms
//
// Binary payloads (envelopes, acknowledgements) take a header:
//
//	0xFA 'h' 's' 0x01   magic and version (0xFA is no envelope version)
//	uvarint len(signer) signer
//	time      8 bytes, big-endian
//	signature 64 bytes
//	content
//
// JSON objects (statuses, presence, commands, results, plans) stay JSON, so
// that mosquitto_sub, jq and Home Assistant — which cannot verify — still
// read them: the signature is appended as the object's last member,
//
//	{…, "hearth_sig":{"by":"alder","t":1764151200000000000,"sig":"<base64url>"}}
//
// and the content is the object without it ({…} as written before). Seal
// chooses the form: a payload that begins with '{' and ends with '}' is
// a JSON object.
package sign

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// Errors of Open; the MQTT runtime counts drops by them.
var (
	// ErrUnsigned: the payload carries no signature.
	ErrUnsigned = errors.New("unsigned")
	// ErrMalformed: the signature's framing does not decode.
	ErrMalformed = errors.New("malformed signature")
	// ErrUnknownSigner: the signer has no key in the keyring.
	ErrUnknownSigner = errors.New("unknown signer")
	// ErrNotAllowed: the signer may not publish on the topic.
	ErrNotAllowed = errors.New("signer may not publish on this topic")
	// ErrBadSignature: the signature does not verify.
	ErrBadSignature = errors.New("bad signature")
)

// MaxSigner is the longest signer name, in bytes (a topic level's bound).
const MaxSigner = 128

const (
	domain  = "hearth-mqtt-sig-v1\x00"
	magic   = "\xfahs\x01"
	jsonKey = `"hearth_sig":`
)

// Message is an opened payload.
type Message struct {
	// Signer is the name of the key that signed it.
	Signer string
	// Time is when it was signed (Unix nanoseconds), the signer's
	// sequence number.
	Time int64
	// Content is the payload as its sender wrote it (it may alias the
	// input).
	Content []byte
}

// At is m's time stamp.
func (m Message) At() time.Time { return time.Unix(0, m.Time) }

// Signer signs payloads with one private key under one name. Its time
// stamps strictly increase, whatever the clock does, so that receivers can
// refuse older messages; it is safe for concurrent use, and every client of
// one home shares one Signer.
type Signer struct {
	name string
	key  ed25519.PrivateKey
	now  func() time.Time

	mu   sync.Mutex
	last int64
}

// NewSigner returns a Signer for key under name.
func NewSigner(name string, key ed25519.PrivateKey) (*Signer, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if len(key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("sign: key of %q: %d bytes, want an Ed25519 private key", name, len(key))
	}
	return &Signer{name: name, key: key, now: time.Now}, nil
}

// Name is the signer's name.
func (s *Signer) Name() string { return s.name }

// Public is the signer's public key.
func (s *Signer) Public() ed25519.PublicKey { return s.key.Public().(ed25519.PublicKey) }

// stamp returns the next time stamp: now, or one more than the last.
func (s *Signer) stamp() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := max(s.now().UnixNano(), s.last+1)
	s.last = t
	return t
}

// Seal signs content for topic and returns the payload to publish, in the
// JSON form for a JSON object and the binary form otherwise.
func (s *Signer) Seal(topic string, content []byte) []byte {
	t := s.stamp()
	sig := ed25519.Sign(s.key, signedBytes(topic, s.name, t, content))
	if isJSONObject(content) {
		return appendJSON(content, s.name, t, sig)
	}
	out := make([]byte, 0, len(magic)+2+len(s.name)+8+ed25519.SignatureSize+len(content))
	out = append(out, magic...)
	out = binary.AppendUvarint(out, uint64(len(s.name)))
	out = append(out, s.name...)
	out = binary.BigEndian.AppendUint64(out, uint64(t))
	out = append(out, sig...)
	return append(out, content...)
}

func isJSONObject(b []byte) bool {
	return len(b) >= 2 && b[0] == '{' && b[len(b)-1] == '}'
}

// jsonSig is the appended member's value.
type jsonSig struct {
	By  string `json:"by"`
	T   int64  `json:"t"`
	Sig string `json:"sig"`
}

func appendJSON(content []byte, name string, t int64, sig []byte) []byte {
	member, _ := json.Marshal(jsonSig{By: name, T: t, Sig: base64.RawURLEncoding.EncodeToString(sig)})
	out := make([]byte, 0, len(content)+len(jsonKey)+len(member)+2)
	out = append(out, content[:len(content)-1]...)
	if len(bytes.TrimSpace(content[1:len(content)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, jsonKey...)
	out = append(out, member...)
	return append(out, '}')
}

// signedBytes are the bytes the signature covers.
func signedBytes(topic, signer string, t int64, content []byte) []byte {
	b := make([]byte, 0, len(domain)+len(topic)+len(signer)+20+len(content))
	b = append(b, domain...)
	b = binary.AppendUvarint(b, uint64(len(topic)))
	b = append(b, topic...)
	b = binary.AppendUvarint(b, uint64(len(signer)))
	b = append(b, signer...)
	b = binary.BigEndian.AppendUint64(b, uint64(t))
	return append(b, content...)
}

// Parse splits a sealed payload into its signer, time, signature and
// content without verifying anything: ErrUnsigned when it carries no
// signature, ErrMalformed when the framing is wrong. It never panics and
// allocates only the signer's name.
func Parse(b []byte) (Message, []byte, error) {
	if bytes.HasPrefix(b, []byte(magic)) {
		return parseBinary(b[len(magic):])
	}
	if isJSONObject(b) {
		return parseJSON(b)
	}
	return Message{}, nil, ErrUnsigned
}

func parseBinary(b []byte) (Message, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n == 0 || n > MaxSigner || uint64(len(b)-k) < n+8+ed25519.SignatureSize {
		return Message{}, nil, fmt.Errorf("%w: header", ErrMalformed)
	}
	b = b[k:]
	m := Message{Signer: string(b[:n])}
	b = b[n:]
	m.Time = int64(binary.BigEndian.Uint64(b))
	sig := b[8 : 8+ed25519.SignatureSize]
	m.Content = b[8+ed25519.SignatureSize:]
	if err := checkName(m.Signer); err != nil || m.Time <= 0 {
		return Message{}, nil, fmt.Errorf("%w: signer or time", ErrMalformed)
	}
	return m, sig, nil
}

// maxJSONSig bounds the appended member: the name, a time and a
// signature, escaped.
const maxJSONSig = len(jsonKey) + 6*MaxSigner + 160

func parseJSON(b []byte) (Message, []byte, error) {
	i := bytes.LastIndex(b, []byte(jsonKey))
	if i < 1 || len(b)-i > maxJSONSig {
		return Message{}, nil, ErrUnsigned
	}
	member := b[i+len(jsonKey) : len(b)-1]
	var js jsonSig
	d := json.NewDecoder(bytes.NewReader(member))
	d.DisallowUnknownFields()
	if err := d.Decode(&js); err != nil || d.More() {
		return Message{}, nil, fmt.Errorf("%w: %s member", ErrMalformed, jsonKey)
	}
	sig, err := base64.RawURLEncoding.DecodeString(js.Sig)
	if err != nil || len(sig) != ed25519.SignatureSize || checkName(js.By) != nil || js.T <= 0 {
		return Message{}, nil, fmt.Errorf("%w: %s member", ErrMalformed, jsonKey)
	}
	// One encoding only: the member must read exactly as appendJSON
	// writes it, and the content before it must be an object.
	want, _ := json.Marshal(js)
	if !bytes.Equal(member, want) {
		return Message{}, nil, fmt.Errorf("%w: %s member not in canonical form", ErrMalformed, jsonKey)
	}
	content, ok := jsonContent(b[:i])
	if !ok {
		return Message{}, nil, fmt.Errorf("%w: %s is not an object's last member", ErrMalformed, jsonKey)
	}
	return Message{Signer: js.By, Time: js.T, Content: content}, sig, nil
}

// jsonContent returns the object that head, a sealed object up to its
// signature member, was: the member's comma taken off and the brace put
// back.
func jsonContent(head []byte) ([]byte, bool) {
	switch {
	case bytes.HasSuffix(head, []byte(",")) && len(head) > 2:
		return append(bytes.Clone(head[:len(head)-1]), '}'), true
	case len(head) > 0 && len(bytes.TrimSpace(head[1:])) == 0:
		return append(bytes.Clone(head), '}'), true
	}
	return nil, false
}

// checkName accepts what can be a topic level: UTF-8 without '/', '+',
// '#', control characters or a leading '$', at most MaxSigner bytes.
func checkName(s string) error {
	if s == "" || len(s) > MaxSigner || s[0] == '$' {
		return fmt.Errorf("sign: name %q: empty, too long or starts with $", s)
	}
	for _, r := range s {
		if r == '/' || r == '+' || r == '#' || r < 0x20 || r == 0x7f || r == 0xfffd {
			return fmt.Errorf("sign: name %q holds %q", s, r)
		}
	}
	return nil
}

// Keyring holds the neighbourhood's public keys — each home's and each
// controller's — and the private keys this process signs with. It is
// read-only once built, and safe for concurrent use then.
type Keyring struct {
	public      map[string]ed25519.PublicKey
	controllers map[string]bool
	signers     map[string]*Signer
	seen        verified
}

// verified remembers the payloads a keyring has opened, by a SHA-256 of
// the topic and the payload, so that the clients of one process parse and
// check each message once: every agent of `hearth sim` receives every
// status, and every multicast of a complete graph. A hit proves what a
// check would: the same bytes, on the same topic, were found signed
// correctly. Payloads over maxRemembered bytes (fragments of large
// messages, which go to one receiver) are not remembered; two generations
// bound the rest to 2·maxVerified entries.
type verified struct {
	mu       sync.Mutex
	cur, old map[[sha256.Size]byte]opened
}

// opened is what a remembered payload holds besides its content: its
// signer and time, and where its content is (after the binary header,
// or before the JSON member).
type opened struct {
	signer string
	t      int64
	cut    int
	json   bool
}

const (
	maxVerified   = 1 << 15
	maxRemembered = 64 << 10
)

func payloadKey(topic string, b []byte) [sha256.Size]byte {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	h.Write(n[:binary.PutUvarint(n[:], uint64(len(topic)))])
	h.Write([]byte(topic))
	h.Write(b)
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}

func (v *verified) get(k [sha256.Size]byte) (opened, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	o, ok := v.cur[k]
	if !ok {
		o, ok = v.old[k]
	}
	return o, ok
}

func (v *verified) add(k [sha256.Size]byte, o opened) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.cur == nil || len(v.cur) >= maxVerified {
		v.old, v.cur = v.cur, make(map[[sha256.Size]byte]opened, 1024)
	}
	v.cur[k] = o
}

// NewKeyring returns an empty keyring.
func NewKeyring() *Keyring {
	return &Keyring{public: map[string]ed25519.PublicKey{}, controllers: map[string]bool{}, signers: map[string]*Signer{}}
}

// Add adds name's public key; a controller may besides sign round
// commands on <prefix>/cmd. A name added twice with another key is an
// error.
func (k *Keyring) Add(name string, pub ed25519.PublicKey, controller bool) error {
	if err := checkName(name); err != nil {
		return err
	}
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("sign: key of %q: %d bytes, want an Ed25519 public key", name, len(pub))
	}
	if old, ok := k.public[name]; ok && !old.Equal(pub) {
		return fmt.Errorf("sign: two keys for %q", name)
	}
	k.public[name] = pub
	if controller {
		k.controllers[name] = true
	}
	return nil
}

// AddSigner adds a private key this process signs with. Its public key
// must be the keyring's for that name, when the keyring has one (a key
// file that does not match the shared configuration is an error, not a
// run whose every message its peers drop).
func (k *Keyring) AddSigner(s *Signer) error {
	if pub, ok := k.public[s.name]; ok && !pub.Equal(s.Public()) {
		return fmt.Errorf("sign: the private key of %q does not match its public key in the configuration", s.name)
	}
	k.public[s.name] = s.Public()
	k.signers[s.name] = s
	return nil
}

// Signer returns the signer named name, or nil.
func (k *Keyring) Signer(name string) *Signer {
	if k == nil {
		return nil
	}
	return k.signers[name]
}

// Has reports whether name has a public key.
func (k *Keyring) Has(name string) bool { _, ok := k.public[name]; return ok }

// IsController reports whether name may sign round commands.
func (k *Keyring) IsController(name string) bool { return k.controllers[name] }

// Len is the number of public keys.
func (k *Keyring) Len() int { return len(k.public) }

// Open verifies payload b received on topic and returns its content. allow
// says whether the signer may publish on the topic (nil: anyone with a
// key); the MQTT runtime derives it from the topic layout.
func (k *Keyring) Open(topic string, b []byte, allow func(signer string) bool) (Message, error) {
	remember := len(b) <= maxRemembered
	var key [sha256.Size]byte
	if remember {
		key = payloadKey(topic, b)
		if o, ok := k.seen.get(key); ok {
			if allow != nil && !allow(o.signer) {
				return Message{}, fmt.Errorf("%w: %q on %s", ErrNotAllowed, o.signer, topic)
			}
			m := Message{Signer: o.signer, Time: o.t, Content: b[o.cut:]}
			if o.json {
				m.Content, _ = jsonContent(b[:o.cut])
			}
			return m, nil
		}
	}
	m, sig, err := Parse(b)
	if err != nil {
		return Message{}, err
	}
	pub, ok := k.public[m.Signer]
	if !ok {
		return Message{}, fmt.Errorf("%w %q", ErrUnknownSigner, m.Signer)
	}
	if allow != nil && !allow(m.Signer) {
		return Message{}, fmt.Errorf("%w: %q on %s", ErrNotAllowed, m.Signer, topic)
	}
	if !ed25519.Verify(pub, signedBytes(topic, m.Signer, m.Time, m.Content), sig) {
		return Message{}, fmt.Errorf("%w from %q on %s", ErrBadSignature, m.Signer, topic)
	}
	if remember {
		o := opened{signer: m.Signer, t: m.Time, cut: len(b) - len(m.Content)}
		if !bytes.HasPrefix(b, []byte(magic)) {
			o.json, o.cut = true, bytes.LastIndex(b, []byte(jsonKey))
		}
		k.seen.add(key, o)
	}
	return m, nil
}

// Replay remembers, per signer and topic, the newest time stamp received,
// and refuses older ones: a signed message recorded and published again
// later (a status that would veto a round, a command, a plan) is dropped.
// The same message again (QoS 1 redelivers; a broker resends a retained
// message on every subscription) is accepted. It is safe for concurrent
// use; its memory grows with the topics seen, which a run bounds.
type Replay struct {
	mu   sync.Mutex
	last map[string]int64
}

// Fresh reports whether m, received on topic, is not older than what the
// same signer has already published there, and records it.
func (r *Replay) Fresh(topic string, m Message) bool {
	key := strconv.Itoa(len(m.Signer)) + ":" + m.Signer + topic
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		r.last = map[string]int64{}
	}
	if m.Time < r.last[key] {
		return false
	}
	r.last[key] = m.Time
	return true
}
