package envelope

import (
	"encoding/binary"
	"fmt"

	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// MulticastVersion is the first byte of a multicast envelope: one message
// for many receivers, published once on the sender's multicast topic
// (<prefix>/<run>/multicast/<sender>) instead of once per receiver.
//
// Sampling and local-search protocols send the same VALUE message to every
// neighbour every iteration; on the complete graphs of the SHDS instances
// that is n−1 publications per agent and iteration, each costing the
// sender, the broker and the receiver a packet and an acknowledgement. A
// multicast costs the sender one, and the broker's fan-out to the
// subscribers is the only per-receiver work left.
//
// A multicast does not change the links' guarantees: the message still
// takes the next sequence number of every link it goes on, and the
// envelope lists those numbers, so that each receiver de-duplicates and
// orders it with the link's other messages exactly as if it had come on
// its inbox. Receivers are named by their index in the run's agent list,
// which every agent of a run shares (the protocols' messages address
// agents by the same indices); Agents, the list's length, guards against
// an agent of another configuration.
//
//	version    1 byte (MulticastVersion)
//	run        string
//	sender     string
//	protocol   string
//	kind       string
//	agents     uvarint  agents in the run; every receiver index is below it
//	nccc       uvarint  the sender's NCCC counter
//	base       uvarint  the smallest of the receivers' sequence numbers
//	receivers  uvarint  how many, ≥ 1
//	then, per receiver, in increasing index order:
//	  gap      uvarint  index − previous index − 1 (the first: its index)
//	  seq      uvarint  its link's sequence number − base
//	payload    the rest the whole message body (multicasts are never
//	                    fragmented)
//
// As with envelopes, every varint is minimal and nothing may follow, so
// that a multicast has exactly one encoding.
const MulticastVersion = 0x82

// MaxReceivers bounds the receivers of one multicast.
const MaxReceivers = 1 << 16

// Receiver is one receiver of a multicast and its link's sequence number.
type Receiver struct {
	Index int
	Seq   uint64
}

// Multicast is one message for several receivers.
type Multicast struct {
	Run, Sender, Protocol, Kind string
	// Agents is the number of agents of the run.
	Agents int
	NCCC   uint64
	// To lists the receivers, by increasing index, when encoding;
	// DecodeMulticast leaves it nil (see Receivers and SeqOf).
	To      []Receiver
	Payload []byte

	// base and list are the decoded receivers, validated.
	base  uint64
	list  []byte
	count int
}

// IsMulticast reports whether payload b is a multicast envelope.
func IsMulticast(b []byte) bool { return len(b) > 0 && b[0] == MulticastVersion }

// Header returns the envelope header of m's message as receiver receiver
// with sequence number seq would have received it on its inbox.
func (m *Multicast) Header(receiver string, seq uint64) Header {
	return Header{
		Run: m.Run, Sender: m.Sender, Receiver: receiver, Protocol: m.Protocol, Kind: m.Kind,
		Seq: seq, NCCC: m.NCCC, Index: 0, Count: 1, Total: len(m.Payload),
	}
}

func (m *Multicast) check(lim Limits) error {
	for _, f := range []struct{ what, s string }{{"run", m.Run}, {"sender", m.Sender}} {
		if err := topic.CheckName(f.s); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrMalformed, f.what, err)
		}
	}
	if err := checkKind(m.Protocol, false); err != nil {
		return fmt.Errorf("%w: protocol: %w", ErrMalformed, err)
	}
	if err := checkKind(m.Kind, true); err != nil {
		return fmt.Errorf("%w: kind: %w", ErrMalformed, err)
	}
	if m.Agents < 2 || m.Agents > MaxReceivers+1 {
		return fmt.Errorf("%w: %d agents", ErrMalformed, m.Agents)
	}
	if len(m.Payload) > lim.maxPayload() {
		return fmt.Errorf("%w: payload of %d bytes (limit %d)", ErrTooLarge, len(m.Payload), lim.maxPayload())
	}
	return nil
}

// Encode returns m's encoding, checked first so that nothing is sent that
// a receiver with the same limits would refuse.
func (m *Multicast) Encode(lim Limits) ([]byte, error) {
	if err := m.check(lim); err != nil {
		return nil, err
	}
	if len(m.To) == 0 || len(m.To) >= m.Agents {
		return nil, fmt.Errorf("%w: %d receivers", ErrMalformed, len(m.To))
	}
	base := m.To[0].Seq
	for _, r := range m.To {
		base = min(base, r.Seq)
	}
	b := make([]byte, 0, 64+len(m.Run)+len(m.Sender)+3*len(m.To)+len(m.Payload))
	b = append(b, MulticastVersion)
	for _, s := range []string{m.Run, m.Sender, m.Protocol, m.Kind} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for _, v := range []uint64{uint64(m.Agents), m.NCCC, base, uint64(len(m.To))} {
		b = binary.AppendUvarint(b, v)
	}
	prev := -1
	for _, r := range m.To {
		if r.Index <= prev || r.Index >= m.Agents {
			return nil, fmt.Errorf("%w: receiver %d after %d of %d agents", ErrMalformed, r.Index, prev, m.Agents)
		}
		b = binary.AppendUvarint(b, uint64(r.Index-prev-1))
		b = binary.AppendUvarint(b, r.Seq-base)
		prev = r.Index
	}
	return append(b, m.Payload...), nil
}

// DecodeMulticast parses and validates one multicast envelope, receivers
// included, without allocating beyond its four strings. The payload
// aliases b.
func DecodeMulticast(b []byte, lim Limits) (Multicast, error) {
	var m Multicast
	if len(b) == 0 || b[0] != MulticastVersion {
		return m, fmt.Errorf("%w: not a multicast", ErrMalformed)
	}
	if len(b) > lim.maxPayload()+1024+10*MaxReceivers {
		return m, fmt.Errorf("%w: %d bytes (limit %d)", ErrTooLarge, len(b), lim.maxPayload())
	}
	r := reader{buf: b[1:]}
	m.Run = r.str(topic.MaxName)
	m.Sender = r.str(topic.MaxName)
	m.Protocol = r.str(MaxKind)
	m.Kind = r.str(MaxKind)
	m.Agents = r.int()
	m.NCCC = r.uvarint()
	m.base = r.uvarint()
	m.count = r.int()
	if r.err != nil {
		return Multicast{}, r.err
	}
	if m.count < 1 || m.count > MaxReceivers || m.count >= max(m.Agents, 1) {
		return Multicast{}, fmt.Errorf("%w: %d receivers of %d agents", ErrMalformed, m.count, m.Agents)
	}
	start := r.buf
	idx, minSeq := -1, uint64(1<<64-1)
	for range m.count {
		gap, seq := r.uvarint(), r.uvarint()
		if r.err != nil {
			return Multicast{}, r.err
		}
		if gap >= uint64(m.Agents) || uint64(idx)+gap+1 >= uint64(m.Agents) || seq > 1<<64-1-m.base {
			return Multicast{}, fmt.Errorf("%w: receiver beyond %d agents", ErrMalformed, m.Agents)
		}
		idx += int(gap) + 1
		minSeq = min(minSeq, seq)
	}
	if minSeq != 0 {
		return Multicast{}, fmt.Errorf("%w: base is not the smallest sequence number", ErrMalformed)
	}
	m.list = start[:len(start)-len(r.buf)]
	m.Payload = r.buf
	if err := m.check(lim); err != nil {
		return Multicast{}, err
	}
	return m, nil
}

// SeqOf returns receiver index's sequence number, or false when the
// multicast is not for it.
func (m *Multicast) SeqOf(index int) (uint64, bool) {
	if m.list == nil {
		for _, r := range m.To {
			if r.Index == index {
				return r.Seq, true
			}
		}
		return 0, false
	}
	rd := reader{buf: m.list}
	idx := -1
	for range m.count {
		idx += int(rd.uvarint()) + 1
		seq := rd.uvarint()
		switch {
		case idx == index:
			return m.base + seq, true
		case idx > index:
			return 0, false
		}
	}
	return 0, false
}

// Receivers returns the receivers, by increasing index.
func (m *Multicast) Receivers() []Receiver {
	if m.list == nil {
		return m.To
	}
	out := make([]Receiver, 0, m.count)
	rd := reader{buf: m.list}
	idx := -1
	for range m.count {
		idx += int(rd.uvarint()) + 1
		out = append(out, Receiver{Index: idx, Seq: m.base + rd.uvarint()})
	}
	return out
}
