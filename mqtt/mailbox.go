package mqtt

import (
	"log/slog"
	"sync"
)

// itemKind says what a mailbox item is.
type itemKind int

const (
	itemMessage   itemKind = iota // a payload received on a topic
	itemConnected                 // the client (re)connected and (re)subscribed
	itemFatal                     // the transport cannot go on (err)
)

type item struct {
	kind    itemKind
	topic   string
	payload []byte
	err     error
	// control marks a small status, presence or acknowledgement
	// payload: like the control items, it is never refused, since
	// nothing would send it again.
	control bool
}

// mailbox is the hand-off between paho's goroutines, which must never
// block, and the agent's goroutine. push never blocks: the queue grows
// without bound in items, and is accounted in bytes against a limit. Past
// the limit a payload is dropped, counted, and the mailbox remembers it;
// the agent then asks its peers to retransmit everything it has not
// delivered (a resync), so the overflow policy never loses a protocol
// message. Control items, statuses, presence and acknowledgements are
// never refused: peers publish them once, and they are small (see
// transport.onMessage).
type mailbox struct {
	mu       sync.Mutex
	q        []item
	bytes    int64
	max      int64
	overflow bool
	// ready holds one token while items wait.
	ready chan struct{}

	ctr *counters
	log *slog.Logger
}

func newMailbox(maxBytes int, ctr *counters, log *slog.Logger) *mailbox {
	return &mailbox{max: int64(maxBytes), ready: make(chan struct{}, 1), ctr: ctr, log: log}
}

// push queues it; it returns false when the payload was dropped.
func (m *mailbox) push(it item) bool {
	m.mu.Lock()
	n := int64(len(it.payload))
	// An empty mailbox takes anything, so that a limit below one
	// payload's size slows a run down but cannot stop it.
	if it.kind == itemMessage && !it.control && m.bytes > 0 && m.bytes+n > m.max {
		m.overflow = true
		m.mu.Unlock()
		m.ctr.drop(m.log, DropMailboxFull, "topic", it.topic, "bytes", n)
		return false
	}
	m.q = append(m.q, it)
	m.bytes += n
	peak := m.bytes
	m.mu.Unlock()
	maxInt64(&m.ctr.mailboxPeak, peak)
	select {
	case m.ready <- struct{}{}:
	default:
	}
	return true
}

// drain returns every queued item, in arrival order, and whether a payload
// was dropped since the last drain.
func (m *mailbox) drain() ([]item, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q, over := m.q, m.overflow
	m.q, m.bytes, m.overflow = nil, 0, false
	return q, over
}
