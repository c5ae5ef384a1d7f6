package envelope

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func sample() Envelope {
	return Envelope{
		Header: Header{
			Run: "run-1", Sender: "a1", Receiver: "a0", Protocol: "dpop", Kind: "UTIL",
			Seq: 300, NCCC: 1 << 40, Index: 0, Count: 1, Total: 5,
		},
		Payload: []byte("hello"),
	}
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Envelope)
	}{
		{"plain", func(*Envelope) {}},
		{"empty body and kind", func(e *Envelope) { e.Kind, e.Payload, e.Total = "", nil, 0 }},
		{"fragment", func(e *Envelope) { e.Index, e.Count, e.Total = 2, 3, 13 }},
		{"unicode names", func(e *Envelope) { e.Sender, e.Receiver = "maison-é", "家" }},
		{"max seq", func(e *Envelope) { e.Seq = ^uint64(0) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := sample()
			tc.edit(&e)
			b, err := e.Encode(Limits{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := Decode(b, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Header != e.Header || !bytes.Equal(got.Payload, e.Payload) {
				t.Fatalf("got %+v, want %+v", got, e)
			}
		})
	}
}

// encodeRaw writes an envelope without Append's checks, so that tests can
// build invalid ones.
func encodeRaw(version byte, strs []string, nums []uint64, payload []byte) []byte {
	b := []byte{version}
	for _, s := range strs {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for _, v := range nums {
		b = binary.AppendUvarint(b, v)
	}
	return append(b, payload...)
}

func TestDecodeRejects(t *testing.T) {
	good := []string{"r", "a1", "a0", "dpop", "UTIL"}
	with := func(i int, s string) []string {
		c := append([]string(nil), good...)
		c[i] = s
		return c
	}
	nums := func(index, count, total uint64) []uint64 { return []uint64{1, 0, index, count, total} }
	valid, _ := (&Envelope{Header: sample().Header, Payload: []byte("hello")}).Encode(Limits{})
	tests := []struct {
		name string
		b    []byte
		lim  Limits
		want error
	}{
		{"empty", nil, Limits{}, ErrMalformed},
		{"version 0", append([]byte{0}, valid[1:]...), Limits{}, ErrVersion},
		{"version 2", append([]byte{2}, valid[1:]...), Limits{}, ErrVersion},
		{"truncated header", valid[:8], Limits{}, ErrMalformed},
		{"only version", []byte{Version}, Limits{}, ErrMalformed},
		{"string longer than input", encodeRaw(1, []string{"r"}, nil, nil)[:2], Limits{}, ErrMalformed},
		{"huge string length", append([]byte{1}, binary.AppendUvarint(nil, 1<<40)...), Limits{}, ErrMalformed},
		{"empty run", encodeRaw(1, with(0, ""), nums(0, 1, 0), nil), Limits{}, ErrMalformed},
		{"wildcard sender", encodeRaw(1, with(1, "a+"), nums(0, 1, 0), nil), Limits{}, ErrMalformed},
		{"slash receiver", encodeRaw(1, with(2, "a/b"), nums(0, 1, 0), nil), Limits{}, ErrMalformed},
		{"control char kind", encodeRaw(1, with(4, "U\x00"), nums(0, 1, 0), nil), Limits{}, ErrMalformed},
		{"bad utf8 protocol", encodeRaw(1, with(3, "\xff"), nums(0, 1, 0), nil), Limits{}, ErrMalformed},
		{"long kind", encodeRaw(1, with(4, strings.Repeat("K", MaxKind+1)), nums(0, 1, 0), nil), Limits{}, ErrMalformed},
		{"non-minimal varint", append(encodeRaw(1, good, []uint64{1, 0, 0}, nil), 0x81, 0x00, 0), Limits{}, ErrMalformed},
		{"zero fragments", encodeRaw(1, good, nums(0, 0, 0), nil), Limits{}, ErrMalformed},
		{"index past count", encodeRaw(1, good, nums(3, 3, 9), []byte("abc")), Limits{}, ErrMalformed},
		{"short unfragmented", encodeRaw(1, good, nums(0, 1, 5), []byte("abc")), Limits{}, ErrMalformed},
		{"empty fragment", encodeRaw(1, good, nums(0, 2, 4), nil), Limits{}, ErrMalformed},
		{"more fragments than bytes", encodeRaw(1, good, nums(0, 5, 4), []byte("a")), Limits{}, ErrMalformed},
		{"fragment over total", encodeRaw(1, good, nums(0, 2, 2), []byte("abc")), Limits{}, ErrMalformed},
		{"payload over limit", encodeRaw(1, good, nums(0, 1, 11), make([]byte, 11)), Limits{MaxPayload: 10}, ErrTooLarge},
		{"input over limit", encodeRaw(1, good, nums(0, 1, 2000), make([]byte, 2000)), Limits{MaxPayload: 10}, ErrTooLarge},
		{"total over limit", encodeRaw(1, good, nums(0, 2, 1000), make([]byte, 10)), Limits{MaxMessage: 999}, ErrTooLarge},
		{"size over 31 bits", encodeRaw(1, good, nums(0, 1, 1<<32), nil), Limits{}, ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.b, tc.lim)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestEncodeChecks(t *testing.T) {
	e := sample()
	e.Sender = "a#"
	if _, err := e.Encode(Limits{}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("got %v", err)
	}
	e = sample()
	if _, err := e.Encode(Limits{MaxPayload: 4}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v", err)
	}
}
