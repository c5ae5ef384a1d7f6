package mqtt

import (
	"log/slog"
	"maps"
	"math/bits"
	"sync"
	"sync/atomic"
)

// Reasons an inbound payload is dropped, the keys of Stats.Dropped.
const (
	DropMalformed       = "malformed"        // the payload does not decode
	DropVersion         = "bad_version"      // an envelope version this build does not read
	DropTooLarge        = "too_large"        // over Limits.MaxPayload or MaxMessage
	DropUnknownSender   = "unknown_sender"   // not an agent of the run, or the agent itself
	DropWrongRun        = "wrong_run"        // another run's topic or envelope
	DropSenderMismatch  = "sender_mismatch"  // the envelope's sender is not the topic's
	DropWrongReceiver   = "wrong_receiver"   // the envelope is for another agent
	DropWrongProtocol   = "wrong_protocol"   // another protocol's envelope
	DropForeignTopic    = "foreign_topic"    // a topic outside the layout
	DropMailboxFull     = "mailbox_full"     // over Limits.MailboxBytes (recovered by a resync)
	DropReassemblyLimit = "reassembly_limit" // over MaxReassemblies or MaxHeldBytes (recovered)
	DropReorderLimit    = "reorder_limit"    // over MaxHeldBytes (recovered)
	DropBadFragment     = "bad_fragment"     // fragments that contradict each other (recovered)
	DropStaleAck        = "stale_ack"        // an acknowledgement from another incarnation of its sender
	// Signing (Config.Keys): a payload that does not prove its sender.
	DropUnsigned     = "unsigned"      // carries no signature
	DropWrongSigner  = "wrong_signer"  // signed by a key unknown, or not the topic's sender's
	DropBadSignature = "bad_signature" // the signature does not verify, or its framing is malformed
	DropReplayed     = "replayed"      // older than what its signer already published on the topic
	DropRetained     = "retained"      // a retained message on an inbox or multicast topic, which hearth never retains
)

// SecurityDrops are the drop reasons that say someone may be forging or
// replaying messages: a run with any of them says so.
var SecurityDrops = []string{DropUnsigned, DropWrongSigner, DropBadSignature, DropReplayed, DropRetained}

// SecurityDropped sums the security drops of stats by reason; nil when
// there were none.
func SecurityDropped(stats []Stats) map[string]int64 {
	var out map[string]int64
	for _, st := range stats {
		for _, r := range SecurityDrops {
			if n := st.Dropped[r]; n > 0 {
				if out == nil {
					out = map[string]int64{}
				}
				out[r] += n
			}
		}
	}
	return out
}

// Stats are one agent's transport counters.
type Stats struct {
	Agent string `json:"agent"`
	// Received counts inbox payloads that reached the agent, whatever
	// became of them; ReceivedBytes their size.
	Received      int64 `json:"received"`
	ReceivedBytes int64 `json:"received_bytes"`
	// Delivered counts protocol messages handed to the protocol, each
	// exactly once and in order on its link.
	Delivered int64 `json:"delivered"`
	// Duplicates counts envelopes already delivered or held (QoS 1
	// redeliveries, retransmissions).
	Duplicates int64 `json:"duplicates"`
	// Dropped counts refused payloads by reason (the Drop… constants).
	Dropped map[string]int64 `json:"dropped,omitempty"`
	// Sent counts protocol messages sent; MessageBytes their kind and
	// body bytes (the simulated runtime's measure), MaxMessageBytes the
	// largest. Where Config.Owner is set, they count only the messages
	// to agents of another owner, and Internal the others (the pseudo-
	// agents of one real agent talking among themselves), as the
	// simulated runtime counts them.
	Sent            int64 `json:"sent"`
	MessageBytes    int64 `json:"message_bytes"`
	MaxMessageBytes int64 `json:"max_message_bytes"`
	Internal        int64 `json:"internal,omitempty"`
	// Envelopes counts MQTT messages published for protocol messages,
	// first copies and retransmissions; EnvelopeBytes their size;
	// Fragmented the messages split into more than one.
	Envelopes     int64 `json:"envelopes"`
	EnvelopeBytes int64 `json:"envelope_bytes"`
	Fragmented    int64 `json:"fragmented"`
	// Multicasts counts the envelopes among them published once for
	// many peers (envelope.Multicast); MulticastsSkipped the multicasts
	// received that were for other agents.
	Multicasts        int64 `json:"multicasts"`
	MulticastsSkipped int64 `json:"multicasts_skipped"`
	// Retransmitted counts envelopes published again.
	Retransmitted int64 `json:"retransmitted"`
	// Resyncs counts the times this agent asked its peers to retransmit
	// (after each connection, or after dropping something it needed).
	Resyncs int64 `json:"resyncs"`
	// Connects counts connections to the broker, the first included.
	Connects int64 `json:"connects"`
	// Statuses counts status messages published.
	Statuses int64 `json:"statuses"`
	// StatusesIn counts the statuses received (every agent's, its own
	// included); StatusesCoalesced those of them skipped because a newer
	// one of the same peer arrived in the same batch (its own are all
	// read, see agent.coalesce).
	StatusesIn        int64 `json:"statuses_in"`
	StatusesCoalesced int64 `json:"statuses_coalesced"`
	// Acks counts the acknowledgements published to single peers;
	// AcksIn those received and taken.
	Acks   int64 `json:"acks"`
	AcksIn int64 `json:"acks_in"`
	// MailboxPeak is the largest backlog of unprocessed payloads, bytes.
	MailboxPeak int64 `json:"mailbox_peak"`
	// NCCC is the agent's non-concurrent constraint checks at the end.
	NCCC int64 `json:"nccc"`
	// WallMs is the time from connecting to returning.
	WallMs float64 `json:"wall_ms"`
}

// counters are updated from paho's goroutines and the agent's, and read by
// Stats at any time.
type counters struct {
	received, receivedBytes, delivered, duplicates atomic.Int64
	sent, messageBytes, maxMessageBytes, internal  atomic.Int64
	envelopes, envelopeBytes, fragmented           atomic.Int64
	retransmitted, resyncs, connects, statuses     atomic.Int64
	mailboxPeak, nccc                              atomic.Int64
	statusesIn, statusesCoalesced, acks, acksIn    atomic.Int64
	multicasts, multicastsSkipped                  atomic.Int64

	mu      sync.Mutex
	dropped map[string]int64
}

// drop counts a refused payload and logs it: every one of the first ten
// of a reason, then at powers of two, so that a flood cannot flood the
// log too.
func (c *counters) drop(log *slog.Logger, reason string, attrs ...any) {
	c.mu.Lock()
	if c.dropped == nil {
		c.dropped = map[string]int64{}
	}
	c.dropped[reason]++
	n := c.dropped[reason]
	c.mu.Unlock()
	if n <= 10 || bits.OnesCount64(uint64(n)) == 1 {
		log.Warn("MQTT payload dropped", append([]any{"reason", reason, "count", n}, attrs...)...)
	}
}

func (c *counters) snapshot(agent string) Stats {
	c.mu.Lock()
	dropped := maps.Clone(c.dropped)
	c.mu.Unlock()
	return Stats{
		Agent: agent, Received: c.received.Load(), ReceivedBytes: c.receivedBytes.Load(),
		Delivered: c.delivered.Load(), Duplicates: c.duplicates.Load(), Dropped: dropped,
		Sent: c.sent.Load(), MessageBytes: c.messageBytes.Load(), MaxMessageBytes: c.maxMessageBytes.Load(),
		Internal:  c.internal.Load(),
		Envelopes: c.envelopes.Load(), EnvelopeBytes: c.envelopeBytes.Load(), Fragmented: c.fragmented.Load(),
		Retransmitted: c.retransmitted.Load(), Resyncs: c.resyncs.Load(), Connects: c.connects.Load(),
		Statuses: c.statuses.Load(), StatusesIn: c.statusesIn.Load(), StatusesCoalesced: c.statusesCoalesced.Load(),
		Acks: c.acks.Load(), AcksIn: c.acksIn.Load(),
		Multicasts: c.multicasts.Load(), MulticastsSkipped: c.multicastsSkipped.Load(),
		MailboxPeak: c.mailboxPeak.Load(), NCCC: c.nccc.Load(),
	}
}

// maxInt64 raises a to at least v.
func maxInt64(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}
