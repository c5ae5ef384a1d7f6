// Package envelope is the binary format of hearth's protocol messages on
// MQTT: a versioned header naming the run, the sender, the receiver, the
// protocol and the message kind, the per-link sequence number that lets a
// receiver de-duplicate and reorder, and a fragment header for messages
// larger than one MQTT payload (DPOP's UTIL tables), which Split cuts and a
// Reassembler puts back together.
//
// # Format (version 1)
//
//	version   1 byte (1)
//	run       string
//	sender    string
//	receiver  string
//	protocol  string
//	kind      string
//	seq       uvarint   per-link sequence number, 0, 1, 2, … (the message id)
//	nccc      uvarint   the sender's NCCC counter (a metric, not checked)
//	index     uvarint   this fragment, 0 ≤ index < count
//	count     uvarint   fragments of the message, ≥ 1
//	total     uvarint   the message body's length in bytes
//	payload   the rest  this fragment's bytes of the body
//
// A string is a uvarint length then that many bytes of UTF-8. Every varint
// is minimal, so an envelope has exactly one encoding and Decode∘Encode is
// the identity (the fuzz target checks it). Binary rather than JSON: UTIL
// tables are float64 arrays already encoded by package mva/wire, and the
// header costs a few dozen bytes.
//
// Decode validates every field against Limits before anything is
// allocated, never panics, and allocates at most the five strings (each at
// most topic.MaxName bytes); the payload aliases the input.
//
// Acknowledgements (Ack) share the inbox topics; their first byte,
// AckVersion, tells them from envelopes (IsAck).
package envelope

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// Version is the envelope format this package writes and reads.
const Version = 1

// Defaults of Limits.
const (
	// DefaultMaxPayload keeps every MQTT message small enough for any
	// broker's default packet limit and for a Jetson's memory, while
	// UTIL tables of millions of entries still need few fragments.
	DefaultMaxPayload = 256 << 10
	// DefaultMaxMessage is the largest body reassembled: DPOP's default
	// max_util_entries (1<<24 float64s, 128 MiB) plus room for its header.
	DefaultMaxMessage = 130 << 20
)

// MaxKind is the longest protocol or message kind name, in bytes.
const MaxKind = 64

// Limits bound what Decode accepts.
type Limits struct {
	// MaxPayload is the largest fragment payload; 0 means
	// DefaultMaxPayload.
	MaxPayload int
	// MaxMessage is the largest body (total); 0 means DefaultMaxMessage.
	MaxMessage int
}

func (l Limits) maxPayload() int {
	if l.MaxPayload <= 0 {
		return DefaultMaxPayload
	}
	return l.MaxPayload
}

func (l Limits) maxMessage() int {
	if l.MaxMessage <= 0 {
		return DefaultMaxMessage
	}
	return l.MaxMessage
}

// Header is everything but the payload.
type Header struct {
	Run, Sender, Receiver string
	Protocol, Kind        string
	Seq                   uint64
	NCCC                  uint64
	// Index and Count place this fragment; Total is the whole body's
	// length. An unfragmented message has Index 0, Count 1.
	Index, Count int
	Total        int
}

// Envelope is one MQTT payload.
type Envelope struct {
	Header
	Payload []byte
}

// Errors wrapped by Decode and Encode; ErrVersion and ErrTooLarge are
// told apart so that receivers can count them separately.
var (
	ErrMalformed = errors.New("malformed envelope")
	ErrVersion   = errors.New("unsupported envelope version")
	ErrTooLarge  = errors.New("envelope too large")
)

// Check validates h and a payload of n bytes against lim.
func (h *Header) Check(n int, lim Limits) error {
	for _, f := range []struct{ what, s string }{
		{"run", h.Run}, {"sender", h.Sender}, {"receiver", h.Receiver},
	} {
		if err := topic.CheckName(f.s); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrMalformed, f.what, err)
		}
	}
	if err := checkKind(h.Protocol, false); err != nil {
		return fmt.Errorf("%w: protocol: %w", ErrMalformed, err)
	}
	if err := checkKind(h.Kind, true); err != nil {
		return fmt.Errorf("%w: kind: %w", ErrMalformed, err)
	}
	if n > lim.maxPayload() {
		return fmt.Errorf("%w: payload of %d bytes (limit %d)", ErrTooLarge, n, lim.maxPayload())
	}
	if h.Total < 0 || h.Total > lim.maxMessage() {
		return fmt.Errorf("%w: message of %d bytes (limit %d)", ErrTooLarge, h.Total, lim.maxMessage())
	}
	switch {
	case h.Count < 1:
		return fmt.Errorf("%w: %d fragments", ErrMalformed, h.Count)
	case h.Index < 0 || h.Index >= h.Count:
		return fmt.Errorf("%w: fragment %d of %d", ErrMalformed, h.Index, h.Count)
	case h.Count == 1 && n != h.Total:
		return fmt.Errorf("%w: unfragmented payload of %d bytes for a %d-byte message", ErrMalformed, n, h.Total)
	case h.Count > 1 && (n < 1 || n > h.Total || h.Count > h.Total):
		return fmt.Errorf("%w: fragment of %d bytes, %d fragments, %d-byte message", ErrMalformed, n, h.Count, h.Total)
	}
	return nil
}

// checkKind accepts printable UTF-8 names of at most MaxKind bytes.
func checkKind(s string, emptyOK bool) error {
	switch {
	case s == "" && !emptyOK:
		return errors.New("empty")
	case len(s) > MaxKind:
		return fmt.Errorf("longer than %d bytes", MaxKind)
	case !utf8.ValidString(s):
		return errors.New("not UTF-8")
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("holds %q", r)
		}
	}
	return nil
}

// Append encodes e after b, checking it against lim first so that nothing
// is ever sent that a receiver with the same limits would refuse.
func (e *Envelope) Append(b []byte, lim Limits) ([]byte, error) {
	if err := e.Check(len(e.Payload), lim); err != nil {
		return b, err
	}
	b = append(b, Version)
	for _, s := range []string{e.Run, e.Sender, e.Receiver, e.Protocol, e.Kind} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for _, v := range []uint64{e.Seq, e.NCCC, uint64(e.Index), uint64(e.Count), uint64(e.Total)} {
		b = binary.AppendUvarint(b, v)
	}
	return append(b, e.Payload...), nil
}

// Encode returns e's encoding.
func (e *Envelope) Encode(lim Limits) ([]byte, error) {
	return e.Append(make([]byte, 0, 64+len(e.Payload)), lim)
}

// Decode parses and validates one envelope. The payload aliases b.
func Decode(b []byte, lim Limits) (Envelope, error) {
	var e Envelope
	if len(b) == 0 {
		return e, fmt.Errorf("%w: empty", ErrMalformed)
	}
	if b[0] != Version {
		return e, fmt.Errorf("%w: %d (this build reads %d)", ErrVersion, b[0], Version)
	}
	// A fragment can never be longer than this; refusing early keeps
	// a flood of huge payloads cheap.
	if len(b) > lim.maxPayload()+1024 {
		return e, fmt.Errorf("%w: %d bytes (limit %d)", ErrTooLarge, len(b), lim.maxPayload())
	}
	r := reader{buf: b[1:]}
	e.Run = r.str(topic.MaxName)
	e.Sender = r.str(topic.MaxName)
	e.Receiver = r.str(topic.MaxName)
	e.Protocol = r.str(MaxKind)
	e.Kind = r.str(MaxKind)
	e.Seq = r.uvarint()
	e.NCCC = r.uvarint()
	e.Index = r.int()
	e.Count = r.int()
	e.Total = r.int()
	if r.err != nil {
		return Envelope{}, r.err
	}
	e.Payload = r.buf
	if err := e.Check(len(e.Payload), lim); err != nil {
		return Envelope{}, err
	}
	return e, nil
}

// reader decodes the header; its first error is sticky.
type reader struct {
	buf []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: bad %s", ErrMalformed, what)
	}
	r.buf = nil
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.buf) > 0 && r.buf[0] < 0x80 {
		// One byte, minimal by construction: most of a multicast's
		// receiver list, which every receiver reads whole.
		v := uint64(r.buf[0])
		r.buf = r.buf[1:]
		return v
	}
	v, n := binary.Uvarint(r.buf)
	// n must also be the minimal length, so that encodings are unique.
	if n <= 0 || n != uvarintLen(v) {
		r.fail("varint")
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

// int reads a uvarint that must fit an int of 32 bits, plenty for
// fragment indices and message sizes.
func (r *reader) int() int {
	v := r.uvarint()
	if v > 1<<31-1 {
		r.fail("size")
		return 0
	}
	return int(v)
}

func (r *reader) str(max int) string {
	n := r.uvarint()
	if r.err != nil {
		return ""
	}
	if n > uint64(max) || n > uint64(len(r.buf)) {
		r.fail("string length")
		return ""
	}
	s := string(r.buf[:n])
	r.buf = r.buf[n:]
	return s
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
