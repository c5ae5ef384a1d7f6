package mqtt

import (
	"errors"
	"time"

	"github.com/hearth-dcop/hearth/mqtt/envelope"
)

// delivery is a complete protocol message ready for the protocol.
type delivery struct {
	from int
	seq  uint64
	kind string
	body []byte
	nccc uint64
}

// heldOverhead is charged per message held out of order, so that many
// empty messages are bounded like large ones.
const heldOverhead = 64

// receiver is the receiving half of the link layer: per sender, it drops
// what was already delivered, reassembles fragments, holds messages that
// overtook an earlier one, and releases messages in sequence order. It is
// the MQTT counterpart of the simulated runtime's link layer and is owned
// by the agent's goroutine.
type receiver struct {
	in      []inLink
	reasm   envelope.Reassembler
	held    int // bytes of complete messages in inLink.ready
	maxHeld int
}

type inLink struct {
	next  uint64              // the next sequence number to deliver
	ready map[uint64]delivery // complete messages past next
}

func newReceiver(n int, lim Limits) *receiver {
	r := &receiver{in: make([]inLink, n), maxHeld: lim.MaxHeldBytes}
	r.reasm.MaxPending = lim.MaxReassemblies
	return r
}

// acceptResult says what became of an envelope.
type acceptResult int

const (
	accepted  acceptResult = iota // taken (delivered, held, or part of a message)
	duplicate                     // already delivered or held
	dropped                       // refused; drop says why, and a resync recovers it
)

// accept takes a validated envelope from sender from and appends to out the
// messages that can now be delivered, in order.
func (r *receiver) accept(from int, e *envelope.Envelope, out []delivery) ([]delivery, acceptResult, string) {
	l := &r.in[from]
	if e.Seq < l.next {
		return out, duplicate, ""
	}
	if _, ok := l.ready[e.Seq]; ok {
		return out, duplicate, ""
	}
	isNext := e.Seq == l.next
	// Fragments and complete messages held out of order share one bound.
	r.reasm.MaxBytes = max(1, r.maxHeld-r.held)
	body, done, err := r.reasm.Add(envelope.Key{Link: from, Seq: e.Seq}, e, isNext)
	switch {
	case errors.Is(err, envelope.ErrDuplicate):
		return out, duplicate, ""
	case errors.Is(err, envelope.ErrLimit):
		return out, dropped, DropReassemblyLimit
	case err != nil:
		return out, dropped, DropBadFragment
	case !done:
		return out, accepted, ""
	}
	d := delivery{from: from, seq: e.Seq, kind: e.Kind, body: body, nccc: e.NCCC}
	if !isNext {
		cost := len(body) + heldOverhead
		if r.held+r.reasm.Bytes()+cost > r.maxHeld {
			return out, dropped, DropReorderLimit
		}
		if l.ready == nil {
			l.ready = map[uint64]delivery{}
		}
		l.ready[e.Seq] = d
		r.held += cost
		return out, accepted, ""
	}
	out = append(out, d)
	l.next++
	for {
		d, ok := l.ready[l.next]
		if !ok {
			break
		}
		delete(l.ready, l.next)
		r.held -= len(d.body) + heldOverhead
		out = append(out, d)
		l.next++
	}
	return out, accepted, ""
}

// sender is the sending half: per receiver, the next sequence number and
// the encoded envelopes of every message not yet acknowledged, kept for
// retransmission.
type sender struct {
	out   []outLink
	bytes int // encoded bytes kept
}

type outLink struct {
	next    uint64
	acked   uint64    // the receiver's latest delivered count
	unacked []sentMsg // sequence numbers acked..next-1, in order
}

type sentMsg struct {
	seq    uint64
	frags  [][]byte
	size   int
	sentAt time.Time
	wait   time.Duration
}

func newSender(n int) *sender { return &sender{out: make([]outLink, n)} }

// add records message seq to peer, just published.
func (s *sender) add(to int, m sentMsg) {
	l := &s.out[to]
	l.unacked = append(l.unacked, m)
	s.bytes += m.size
}

// ack forgets what peer to has delivered. A count beyond what was sent is
// ignored and reported: it can only come from a stale or forged status.
func (s *sender) ack(to int, delivered uint64) bool {
	l := &s.out[to]
	if delivered > l.next {
		return false
	}
	if delivered <= l.acked {
		return true
	}
	l.acked = delivered
	k := 0
	for k < len(l.unacked) && l.unacked[k].seq < delivered {
		s.bytes -= l.unacked[k].size
		k++
	}
	l.unacked = append(l.unacked[:0], l.unacked[k:]...)
	return true
}

// due returns the messages to peer to that must be published again: all
// unacknowledged ones when all is set (the peer asked), otherwise those
// whose acknowledgement is overdue. It restarts their timers, doubling the
// wait up to maxWait unless all is set.
func (s *sender) due(to int, all bool, now time.Time, first, maxWait time.Duration) []*sentMsg {
	var out []*sentMsg
	l := &s.out[to]
	for i := range l.unacked {
		m := &l.unacked[i]
		if !all && now.Sub(m.sentAt) < m.wait {
			continue
		}
		if all {
			m.wait = first
		} else {
			m.wait = min(2*m.wait, maxWait)
		}
		m.sentAt = now
		out = append(out, m)
	}
	return out
}
