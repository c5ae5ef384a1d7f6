// Package mqtt is hearth's MQTT runtime: it runs a protocol agent
// (mva.Protocol) in its own process, on its own machine if need be, and
// delivers its messages to the other agents of the run through an MQTT
// broker — the real-world counterpart of the simulated runtime in mva/sim.
// Both give exact protocols the same answers, since both deliver every
// message exactly once and in order on each sender→receiver link.
//
//   - RunAgent runs one agent;
//   - RunGroup runs the agents of a run in one process, each with its own
//     client: every agent, starting an embedded broker (package
//     mqtt/broker) when the configuration names none (`hearth sim`), or
//     the agents of one home (GroupConfig.Owned, `hearth run`);
//   - Group is RunGroup as a pipeline.Runtime: mva/pipeline solves a
//     problem over it exactly as over the simulated runtime.
//
// mqtt/README.md is the operator's guide: topics, Mosquitto configuration
// and ACL, TLS, troubleshooting. This comment is the design.
//
// # Transport
//
// One paho v1.5 client per agent: MQTT 3.1.1, QoS 1 everywhere but the
// multicast subscription (QoS 0: each multicast is also kept per link for
// retransmission on the inboxes, see multicastQoS), a stable client id
// (topic.ClientID: the same for every run, so the broker keeps one
// session per home), CleanSession=false, automatic reconnection, and the
// subscriptions renewed in the OnConnect handler after every connection,
// whatever the broker kept. Topics (package mqtt/topic):
//
//	<prefix>/<run>/inbox/<to>/<from>   envelopes and acknowledgements; <to> subscribes to <prefix>/<run>/inbox/<to>/+
//	<prefix>/<run>/multicast/<from>    multicast envelopes; every agent subscribes to <prefix>/<run>/multicast/+
//	<prefix>/<run>/status/<agent>      retained status (JSON); every agent subscribes to each
//	<prefix>/presence/<agent>          retained {"state":"online"}, last will "offline"; likewise
//
// The subscriptions go through paho's default handler, never a per-filter
// callback: with one, paho adds a route per filter (2n+1 for an agent of
// n), matches every message received against all of them and hands it to
// each match, which made a 200-agent run several times slower.
//
// RunGroup's agents reach the embedded broker it starts through memory
// (broker.Broker.Dial, set as Broker.Dial): the same MQTT bytes through
// paho and mochi, without a socket. Over loopback TCP a packet costs a
// write and one to three reads (paho reads a packet's header a byte at a
// time), and those system calls were a fifth of a 251-home run's CPU.
// GroupConfig.EmbeddedTCP keeps TCP; outside clients (mosquitto_sub, a
// `hearth run` process) reach the same broker on its TCP address.
//
// When an agent replaces its connection (its own status was not echoed
// within Timing.ConnectTimeout and nothing else came on it either: a
// connection that delivers, slowly, is kept and given another
// ConnectTimeout, since a new one would be sent the retained messages
// ahead of the echo again), it retries with a back-off until it is
// connected again;
// a broker that then refuses its credentials ends the run with that error
// rather than leaving the agent waiting on no connection.
//
// paho's handlers only append the payload to the agent's mailbox and
// return; one goroutine per agent does everything else, the protocol's
// Start and Step included, so the protocol is never called concurrently.
// The mailbox is unbounded in items and bounded in bytes
// (Limits.MailboxBytes); past the bound a payload is dropped, counted
// (mailbox_full) and recovered by a resync (below), never silently lost.
//
// # Envelopes and the link layer
//
// Every protocol message travels in one or more envelopes (package
// mqtt/envelope: version, run, sender, receiver, protocol, kind, per-link
// sequence number, fragment header, payload). Messages larger than
// Limits.MaxPayload are split; the receiver reassembles them. On each link
// the receiver delivers sequence numbers 0, 1, 2, … in order: it drops
// what it has already delivered or holds (QoS 1 redelivers after a
// reconnection, and retransmissions repeat), and holds what overtook an
// earlier message. Held fragments and messages are bounded
// (Limits.MaxReassemblies, MaxHeldBytes), but the next message of a link
// is always accepted, so the bounds can shed only traffic that will be
// retransmitted and can never stall a run.
//
// A message the protocol sends in one step, with the same kind and body,
// to at least three quarters of the agent's peers (D-Gibbs's and MGM's
// VALUEs on a complete graph) is published once, as an envelope.Multicast
// listing each receiver and the sequence number the message takes on that
// receiver's link; each receiver picks its own entry and handles it as an
// envelope of its link, and skips multicasts that do not name it. The
// sender keeps one envelope per link for retransmission, on the inboxes.
// On the complete graphs of SHDS neighbourhoods this halves the MQTT
// packets, the runtime's main cost there (Config.NoMulticast turns it
// off). The threshold bounds the waste: every agent receives every
// multicast.
//
// An envelope is dropped and counted (Stats.Dropped, by reason), with a
// log line, when its topic is not the layout's, when its run or receiver
// is not this agent's, when its sender is not an agent of the run or is not
// the sender its topic names (a broker ACL authorises topics, and only the
// receiver can compare the topic with the payload), when its protocol
// differs, or when it does not decode. Bodies are the protocol's business:
// a protocol that refuses one ends the run with an error.
//
// # Starting
//
// An agent publishes its status right after its subscriptions are
// acknowledged, and starts the protocol once it has seen a status from
// every agent of the run (not only its neighbours: DPOP sends to the roots
// of other components). Messages that arrive earlier are kept and
// delivered after Start. The guarantee relied on: once an agent's
// subscription is acknowledged, a QoS 1 message published to its inbox is
// delivered to it, even if it is offline at the time, because its session
// is persistent (MQTT 3.1.1 §3.1.2.4). It holds for as long as the broker
// keeps the session; the next section covers the cases where it does not.
//
// # Acknowledgements and retransmission
//
// A broker may lose messages it acknowledged: an in-memory broker (the
// embedded one included) that restarts forgets every session, queue and
// retained message; a broker over its queue limits drops. So the runtime
// acknowledges end to end, with the number of messages delivered in order
// on a link. A running agent sends it to that link's sender alone, as an
// acknowledgement (envelope.Ack) on the sender's inbox topic, at most once
// per Timing.StatusInterval per link and only when it has news; every
// status also carries it for every link the agent has used. A sender
// keeps every message until an acknowledgement or a status covers it. It
// publishes it again
//
//   - when the receiver asks: a status with a higher generation (Gen). An
//     agent raises its generation after every connection, since paho does
//     not report on a reconnection whether the broker still had the
//     session, and after dropping a message it will need (mailbox or
//     held-bytes bounds, contradictory fragments);
//   - when the acknowledgement is overdue (Timing.RetransmitAfter, then
//     twice as long each time, up to 8×), which also covers a message lost
//     without any reconnection.
//
// Receivers de-duplicate, so retransmitting too much costs only bandwidth;
// a duplicate, or a peer's new generation, makes the receiver acknowledge
// that link again (its acknowledgement may be what was lost).
//
// # Status traffic
//
// Every agent reads every status, so what statuses hold and how often they
// change decide how a run scales. A status (format version 2) carries the
// counters of the links the agent has used, a sparse list, not one pair
// per agent of the run: its size grows with the agent's degree. And an
// agent publishes a status only when it tells the others something: a new
// generation (at once), a state — waiting, running (at most every
// Timing.StatusInterval), done (at once: the termination check waits for
// it), failed —, or, once done, new counters (coalesced over 100 ms). A
// running agent's acknowledgements go to the peers concerned only (see
// above). Receivers decode only the newest status of each agent in a batch
// of received messages. A status of another format version is dropped and
// counted as bad_version. With 200 D-Gibbs agents this took the status
// deliveries of a 100-iteration run from about a million to 120 000, and
// its wall time from 407 s to 21 s (mqtt/README.md, Load). Statuses are
// JSON, for people reading them with mosquitto_sub; a strict parser reads
// them as encode writes them, 4.9 times faster than encoding/json, which
// reads anything else (parseCanonicalStatus).
//
// # Termination
//
// Protocol.Done is not final (a done agent still answers messages), and an
// agent that left could not retransmit after a broker restart, so an agent
// does not return when it is done and its messages are acknowledged by the
// broker. It returns when the run is quiescent: every agent's latest
// status says done, and for every link i→j, i's count of messages sent
// equals j's count delivered (quiescent proves this sound with statuses
// taken at different times), and its own last status was acknowledged by
// the broker (PUBACK), so that the others see it too. Then it
// unsubscribes, publishes its presence offline and disconnects. Since the
// proof holds for any one status per agent, a done agent that receives
// another message need not say it is running again: a message delivered
// after its done status means, by the same argument, that no set of
// statuses including that one is quiescent, so the run waits for its next
// done status.
//
// That rule needs every agent's status, so every agent reads every
// status: n² deliveries. With Config.Neighbours (the protocols that talk
// along the constraint graph) an agent reads only its neighbours' and its
// spanning-tree links' statuses and learns termination from waves along
// the tree that total the messages sent and delivered (Mattern's
// four-counter method; wave.go proves it); it then returns once its own
// status saying so was acknowledged by the broker, and passes a failed
// status on, since its watchers may not watch the agent that failed.
//
// An agent that fails (its protocol's error, ctx ending, a refused
// subscription, its own earlier incarnation's status found on the broker)
// publishes a failed status, with its own nonce, even if it had not yet
// announced its connection; the others then stop with an error (wrapping
// ErrPeerFailed, or saying that the agent restarted) instead of waiting
// forever for it or for its earlier incarnation.
//
// # Signing
//
// A broker authorises topics, never payloads, and many authorise nothing,
// so with Config.Keys every payload is signed by its sender's key
// (package mqtt/sign: Ed25519 over the topic, the signer, a time stamp
// and the payload) and every client checks what it receives before
// anything else reads it (opener, in paho's handler, so a flood of
// forgeries never fills a mailbox). The topic says who must have signed:
// the sender of an inbox or multicast topic, the agent of a status or
// presence topic — a reformulation's pseudo-agents sign as their home
// (Config.Homes, Owner) — the home of a request or a result, a
// controller's key for <prefix>/cmd. What fails is dropped and counted
// (unsigned, wrong_signer, bad_signature); on latest-wins topics (status,
// command, result, plan) a message older than one already received from
// its signer there is dropped as replayed, while inbox envelopes rely on
// the link layer's sequence numbers, under which a replay is a duplicate.
// Retained messages on inbox and multicast topics are dropped with or
// without keys (retained): hearth never retains them. Control signs and
// checks the same way; JSON payloads stay JSON, the signature their last
// member, for readers that cannot verify (mqtt/README.md, Signing).
//
// # Run ids
//
// A run id names one run. Statuses are retained, so a run id used again on
// a broker that still holds an earlier run's statuses is in most cases
// detected (an agent sees a status of its own from another process, or a
// peer's changes incarnation mid-run) and ends the run with an error;
// RunGroup draws a fresh id when none is given. Run ids share the second
// topic level with presence, cmd and home (`hearth run`'s topics), which
// are therefore not valid run ids (topic.CheckRun).
package mqtt
