package envelope

import (
	"errors"
	"fmt"
)

// Split cuts body into envelopes of at most maxPayload payload bytes that
// share h's run, names, kind and sequence number (h's Index, Count and
// Total are overwritten). A body that fits, an empty one included, gives
// one envelope. The payloads alias body.
func Split(h Header, body []byte, maxPayload int) []Envelope {
	if maxPayload <= 0 {
		maxPayload = DefaultMaxPayload
	}
	count := max(1, (len(body)+maxPayload-1)/maxPayload)
	h.Count, h.Total = count, len(body)
	out := make([]Envelope, count)
	for i := range out {
		h.Index = i
		lo := i * maxPayload
		hi := min(lo+maxPayload, len(body))
		out[i] = Envelope{Header: h, Payload: body[lo:hi:hi]}
	}
	return out
}

// Key names one message being reassembled: a link (the sender, as the
// caller numbers senders) and the message's sequence number on it.
type Key struct {
	Link int
	Seq  uint64
}

// Errors of Reassembler.Add. None of them leaves partial state behind
// except ErrDuplicate, which changes nothing at all.
var (
	// ErrDuplicate: this fragment is already held.
	ErrDuplicate = errors.New("duplicate fragment")
	// ErrInconsistent: the fragment disagrees with the message's earlier
	// fragments (kind, count or total), or the fragments' lengths do not
	// add up to the total; the whole message is discarded.
	ErrInconsistent = errors.New("inconsistent fragment")
	// ErrLimit: holding the fragment would exceed MaxPending or MaxBytes.
	ErrLimit = errors.New("reassembly limit reached")
)

// Fixed cost charged per held fragment, so that a flood of one-byte
// fragments is bounded like a flood of large ones.
const fragmentOverhead = 64

// Reassembler collects fragments until messages are complete. It bounds
// the number of messages in progress and the bytes they hold; the caller
// can exempt the one message it cannot progress without (the next in
// order on its link), so that the bounds shed only traffic that can be
// retransmitted later and never stall a run. Not safe for concurrent use.
type Reassembler struct {
	// MaxPending bounds messages in progress; 0 means 64.
	MaxPending int
	// MaxBytes bounds the payload bytes they hold (plus a small cost per
	// fragment); 0 means 256 MiB.
	MaxBytes int

	parts map[Key]*partial
	bytes int
}

type partial struct {
	kind   string
	count  int
	total  int
	got    map[int][]byte // fragment index → payload
	bytes  int            // payload bytes in got
	exempt bool           // bytes not counted in Reassembler.bytes
}

func (r *Reassembler) maxPending() int {
	if r.MaxPending <= 0 {
		return 64
	}
	return r.MaxPending
}

func (r *Reassembler) maxBytes() int {
	if r.MaxBytes <= 0 {
		return 256 << 20
	}
	return r.MaxBytes
}

// Add takes one envelope of message k. When the message is complete it
// returns the body and true; the body is a fresh slice (an unfragmented
// envelope's payload is returned as is). exempt lets this fragment past
// the bounds. The envelope must have passed Decode or Check.
func (r *Reassembler) Add(k Key, e *Envelope, exempt bool) ([]byte, bool, error) {
	if e.Count == 1 {
		return e.Payload, true, nil
	}
	p := r.parts[k]
	if p == nil {
		if !exempt && len(r.parts) >= r.maxPending() {
			return nil, false, fmt.Errorf("%w: %d messages in progress", ErrLimit, len(r.parts))
		}
		p = &partial{kind: e.Kind, count: e.Count, total: e.Total, got: map[int][]byte{}}
		if r.parts == nil {
			r.parts = map[Key]*partial{}
		}
		r.parts[k] = p
	}
	if p.kind != e.Kind || p.count != e.Count || p.total != e.Total {
		r.Discard(k)
		return nil, false, fmt.Errorf("%w: fragment %d/%d of a %d-byte %q, earlier ones said %d fragments of a %d-byte %q",
			ErrInconsistent, e.Index, e.Count, e.Total, e.Kind, p.count, p.total, p.kind)
	}
	if _, dup := p.got[e.Index]; dup {
		return nil, false, ErrDuplicate
	}
	if p.bytes+len(e.Payload) > p.total {
		r.Discard(k)
		return nil, false, fmt.Errorf("%w: fragments exceed the %d-byte total", ErrInconsistent, p.total)
	}
	if exempt && !p.exempt {
		// The message became the one its link waits for: its bytes no
		// longer count against the bound.
		p.exempt = true
		r.bytes -= p.bytes + len(p.got)*fragmentOverhead
	}
	if !p.exempt {
		cost := len(e.Payload) + fragmentOverhead
		if r.bytes+cost > r.maxBytes() {
			if len(p.got) == 0 {
				delete(r.parts, k)
			}
			return nil, false, fmt.Errorf("%w: %d bytes held", ErrLimit, r.bytes)
		}
		r.bytes += cost
	}
	p.got[e.Index] = e.Payload
	p.bytes += len(e.Payload)
	if len(p.got) < p.count {
		return nil, false, nil
	}
	r.Discard(k)
	if p.bytes != p.total {
		return nil, false, fmt.Errorf("%w: fragments hold %d bytes of a %d-byte message", ErrInconsistent, p.bytes, p.total)
	}
	body := make([]byte, 0, p.total)
	for i := range p.count {
		body = append(body, p.got[i]...)
	}
	return body, true, nil
}

// Discard forgets message k.
func (r *Reassembler) Discard(k Key) {
	p := r.parts[k]
	if p == nil {
		return
	}
	if !p.exempt {
		r.bytes -= p.bytes + len(p.got)*fragmentOverhead
	}
	delete(r.parts, k)
}

// DiscardLink forgets every message of link whose sequence number is below
// seq (they were delivered from another copy) or, with all, every message
// of the link.
func (r *Reassembler) DiscardLink(link int, below uint64, all bool) {
	for k := range r.parts {
		if k.Link == link && (all || k.Seq < below) {
			r.Discard(k)
		}
	}
}

// Pending returns the number of messages in progress.
func (r *Reassembler) Pending() int { return len(r.parts) }

// Bytes returns the bytes counted against MaxBytes.
func (r *Reassembler) Bytes() int { return r.bytes }

// Has reports whether message k is in progress.
func (r *Reassembler) Has(k Key) bool { return r.parts[k] != nil }
