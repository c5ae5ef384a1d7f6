// Package wire is the small binary codec protocol messages are written
// with: unsigned and signed varints, float64s, and length-prefixed slices.
// Every protocol encodes its bodies with it, so that message sizes are
// real bytes and every decoder shares one set of bounds checks. A Reader
// never panics: a short or malformed body sets a sticky error that Err
// returns, and lengths are checked against the bytes left before anything
// is allocated.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Writer appends encoded values to a byte slice.
type Writer struct {
	buf []byte
}

// Bytes returns the encoded body.
func (w *Writer) Bytes() []byte { return w.buf }

// Uint appends an unsigned varint.
func (w *Writer) Uint(v uint64) { w.buf = binary.AppendUvarint(w.buf, v) }

// Int appends a signed varint.
func (w *Writer) Int(v int64) { w.buf = binary.AppendVarint(w.buf, v) }

// Float appends a float64 (8 bytes, little endian); +Inf (hard) is kept.
func (w *Writer) Float(v float64) {
	w.buf = binary.LittleEndian.AppendUint64(w.buf, math.Float64bits(v))
}

// Bool appends a byte 0 or 1.
func (w *Writer) Bool(v bool) {
	if v {
		w.buf = append(w.buf, 1)
	} else {
		w.buf = append(w.buf, 0)
	}
}

// Ints appends a length-prefixed slice of signed varints.
func (w *Writer) Ints(vs []int) {
	w.Uint(uint64(len(vs)))
	for _, v := range vs {
		w.Int(int64(v))
	}
}

// Floats appends a length-prefixed slice of float64s.
func (w *Writer) Floats(vs []float64) {
	w.Uint(uint64(len(vs)))
	for _, v := range vs {
		w.Float(v)
	}
}

// ErrMalformed is wrapped by every decoding error.
var ErrMalformed = errors.New("malformed message body")

// Reader decodes a body written by Writer.
type Reader struct {
	buf []byte
	err error
}

// NewReader reads b.
func NewReader(b []byte) *Reader { return &Reader{buf: b} }

// Err returns the first decoding error, or an error when bytes are left
// over after a complete decode (call it last).
func (r *Reader) Err() error {
	if r.err == nil && len(r.buf) > 0 {
		r.err = fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(r.buf))
	}
	return r.err
}

// Failed returns the first decoding error so far without the trailing-bytes
// check, for decoders that branch in the middle of a body.
func (r *Reader) Failed() error { return r.err }

func (r *Reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: bad %s", ErrMalformed, what)
	}
	r.buf = nil
}

// Uint reads an unsigned varint.
func (r *Reader) Uint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.buf)
	if n <= 0 {
		r.fail("unsigned integer")
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

// Int reads a signed varint.
func (r *Reader) Int() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.buf)
	if n <= 0 {
		r.fail("integer")
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

// IntIn reads a signed varint and checks lo ≤ v < hi, so that indices
// from the network can be used without further checks.
func (r *Reader) IntIn(lo, hi int) int {
	v := r.Int()
	if r.err == nil && (v < int64(lo) || v >= int64(hi)) {
		r.fail(fmt.Sprintf("value %d (want %d..%d)", v, lo, hi-1))
		return lo
	}
	return int(v)
}

// Float reads a float64; NaN and -Inf are rejected since no cost is ever
// either.
func (r *Reader) Float() float64 {
	if r.err != nil {
		return 0
	}
	if len(r.buf) < 8 {
		r.fail("float")
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.buf))
	r.buf = r.buf[8:]
	if math.IsNaN(v) || math.IsInf(v, -1) {
		r.fail("float value")
		return 0
	}
	return v
}

// Bool reads a byte 0 or 1.
func (r *Reader) Bool() bool {
	if r.err != nil {
		return false
	}
	if len(r.buf) < 1 || r.buf[0] > 1 {
		r.fail("bool")
		return false
	}
	v := r.buf[0] == 1
	r.buf = r.buf[1:]
	return v
}

// Len reads a slice length and checks that at least minBytes per element
// are left, so a forged length cannot make the caller allocate more than
// the body's size.
func (r *Reader) Len(minBytes int) int {
	n := r.Uint()
	if r.err != nil {
		return 0
	}
	if minBytes < 1 {
		minBytes = 1
	}
	if n > uint64(len(r.buf)/minBytes) {
		r.fail(fmt.Sprintf("length %d", n))
		return 0
	}
	return int(n)
}

// Ints reads a length-prefixed slice of signed varints.
func (r *Reader) Ints() []int {
	n := r.Len(1)
	out := make([]int, 0, n)
	for range n {
		out = append(out, int(r.Int()))
	}
	if r.err != nil {
		return nil
	}
	return out
}

// Floats reads a length-prefixed slice of float64s.
func (r *Reader) Floats() []float64 {
	n := r.Len(8)
	out := make([]float64, 0, n)
	for range n {
		out = append(out, r.Float())
	}
	if r.err != nil {
		return nil
	}
	return out
}
