package mqtt

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/mqtt/envelope"
	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// ErrRunFinished is wrapped by the error of an agent that finds the run
// it was asked to join finished by an earlier process of its own: a
// round run again after a restart, or a round id reused.
var ErrRunFinished = errors.New("the run is already finished")

// ErrPeerAbandoned is wrapped (with ErrPeerFailed) by the error of an
// agent whose peer gave the run up — its round timed out, or its process
// stopped —: starting the run again would wait for that peer.
var ErrPeerAbandoned = errors.New("another agent of the run gave it up")

// abandoned starts the error of a failed status whose agent gave the run
// up (ErrPeerAbandoned).
const abandoned = "abandoned: "

// onStatus takes a status received on topic tp (parsed: p). The agent's
// own comes back to it and proves that the broker delivers (see echoWant)
// and which copy it retains; a peer's tells that it is present,
// acknowledges messages, asks for retransmissions (a new generation),
// reports a failure, and feeds the termination check.
func (a *agent) onStatus(tp string, p topic.Parsed, b []byte) error {
	j, known := a.index[p.Agent]
	switch {
	case p.Run != a.cfg.Run:
		// A persistent session can still hold an earlier run's
		// subscriptions: name the topic it came on, not ours.
		a.ctr.drop(a.log, DropWrongRun, "topic", tp, "run", p.Run)
		return nil
	case !known:
		a.ctr.drop(a.log, DropUnknownSender, "topic", tp, "status of", p.Agent)
		return nil
	}
	s, err := decodeStatus(b, p.Agent, a.cfg.Run, j, a.n)
	if err != nil {
		reason := DropMalformed
		if errors.Is(err, errStatusVersion) {
			reason = DropVersion
		}
		a.ctr.drop(a.log, reason, "status of", p.Agent, "err", err)
		return nil
	}
	if j == a.me {
		if s.Nonce != a.nonce && s.State == stateDone && !a.started {
			// An earlier process of this agent finished the run: the
			// run is over, and joining it would wait for peers that
			// have left. The status stays as it was (see run).
			a.finishedStatus = b
			return fmt.Errorf("mqtt: agent %s: %w: run id %q was used before (this agent's status from an earlier process says done); use a new run id", a.name, ErrRunFinished, a.cfg.Run)
		}
		if s.Nonce != a.nonce {
			return fmt.Errorf("mqtt: the broker holds a status of agent %s in run %q from another process: "+
				"the run id was used before, or the agent runs twice; use a new run id", a.name, a.cfg.Run)
		}
		// Our own statuses come back in the order the broker stored
		// them. One older than an earlier echo means a stale copy (paho
		// resends unacknowledged messages after a reconnection) is now
		// the retained status: publish the current one again.
		if s.Ver < a.echoed {
			a.forcePub = true
		}
		a.echoed = max(a.echoed, s.Ver)
		if s.Ver >= a.echoWant {
			a.echoWant = 0
		}
		return nil
	}
	if _, watched := slices.BinarySearch(a.watch, j); !watched {
		// With Config.Neighbours, an agent it does not watch (a
		// persistent session's leftover subscription): not its
		// business.
		return nil
	}
	ps := a.peers[j]
	newGen := !ps.seen || s.Gen > ps.st.Gen
	switch {
	case ps.seen && s.Nonce != ps.st.Nonce:
		if a.started {
			return fmt.Errorf("mqtt: agent %s of run %q restarted mid-run (or the run id was used before); a protocol cannot resume", p.Agent, a.cfg.Run)
		}
		newGen = true
	case ps.seen && s.Ver <= ps.st.Ver:
		return nil // an older copy
	}
	if ps.seen && ps.st.State == stateDone {
		a.peersDone--
	}
	if s.State == stateDone {
		a.peersDone++
	}
	ps.seen, ps.st = true, s
	if s.State == stateFailed {
		if strings.HasPrefix(s.Error, abandoned) {
			return fmt.Errorf("mqtt: agent %s: %w: %w: %s: %s", a.name, ErrPeerAbandoned, ErrPeerFailed, p.Agent, s.Error)
		}
		return fmt.Errorf("mqtt: agent %s: %w: %s: %s", a.name, ErrPeerFailed, p.Agent, s.Error)
	}
	if acked := s.link(a.me).Delivered; !a.send.ack(j, acked) {
		a.log.Warn("status acknowledges messages never sent; ignored", "peer", p.Agent,
			"acknowledged", acked, "sent", a.send.out[j].next)
	}
	if newGen {
		a.retransmit(j, true, time.Now())
		// It may also have lost our acknowledgements.
		a.acks[j].again = true
		a.ackNews(j)
	}
	return nil
}

// onPresence only logs: presence is for people watching the broker, and
// the runtime relies on statuses.
func (a *agent) onPresence(p topic.Parsed, b []byte) {
	if _, known := a.index[p.Agent]; !known {
		return // another home on the same broker: not our business
	}
	pr, err := decodePresence(b, p.Agent)
	if err != nil {
		a.ctr.drop(a.log, DropMalformed, "presence of", p.Agent, "err", err)
		return
	}
	if pr.State == "offline" && p.Agent != a.name {
		a.log.Info("peer offline", "peer", p.Agent)
	}
}

// allPresent reports whether a status of every other agent was seen (of
// every watched agent, with Config.Neighbours).
func (a *agent) allPresent() bool {
	for _, j := range a.watch {
		if !a.peer(j).seen {
			return false
		}
	}
	return true
}

// current is the status the agent would publish now.
func (a *agent) current() status {
	state := a.state()
	if a.sparse {
		return status{
			V: statusVersion, Agent: a.name, Run: a.cfg.Run, Nonce: a.nonce, Gen: a.gen,
			State: state, N: a.n, Wave: a.wave.me, HasWave: true,
		}
	}
	links := make([]linkCount, len(a.active))
	for k, j := range a.active {
		links[k] = linkCount{Peer: j, Sent: a.send.out[j].next, Delivered: a.recv.in[j].next}
	}
	return status{
		V: statusVersion, Agent: a.name, Run: a.cfg.Run, Nonce: a.nonce, Gen: a.gen,
		State: state, N: a.n, Links: links,
	}
}

// state is the agent's state as its status would tell it.
func (a *agent) state() string {
	switch {
	case !a.started:
		return stateWaiting
	case a.proto.Done():
		return stateDone
	}
	return stateRunning
}

func sameStatus(x, y status) bool {
	return x.Gen == y.Gen && x.State == y.State && x.Error == y.Error && slices.Equal(x.Links, y.Links) &&
		x.HasWave == y.HasWave && x.Wave == y.Wave
}

// worthTelling reports whether cur tells the other agents something the
// last published status did not: a generation, a state, an error, or, for
// a done agent, new counters (the termination check reads them). New
// counters of a running agent are acknowledgements, which go to the peers
// concerned (sendAcks): every agent reads every status, so a status per
// acknowledgement would cost the run n² deliveries per status interval.
func worthTelling(cur, last status) bool {
	return cur.Gen != last.Gen || cur.State != last.State || cur.Error != last.Error ||
		(cur.State == stateDone && !slices.Equal(cur.Links, last.Links)) || cur.Wave != last.Wave
}

// doneCoalesce is how long a done agent whose counters changed since its
// last done status waits before publishing the next: a burst of late
// messages then costs every agent of the run one status to read, not one
// per message.
const doneCoalesce = 2 * tickEvery

// hold is how long after the previous status a changed status cur waits:
// the termination check waits for a first done status, so it goes at
// once; a later done one (new counters) waits doneCoalesce; anything else
// (waiting→running, done→running) waits StatusInterval. Every agent reads
// every status, so these bounds, with worthTelling, are what keeps status
// traffic proportionate in a large run.
func (a *agent) hold(cur status) time.Duration {
	switch {
	case cur.Wave != a.lastPub.Wave:
		// A wave waits for this status; an agent changes its wave
		// report at most twice per wave.
		return 0
	case cur.State != stateDone:
		return a.cfg.Timing.StatusInterval
	case a.lastPub.State == stateDone && a.lastPub.Gen == cur.Gen:
		return min(doneCoalesce, a.cfg.Timing.StatusInterval)
	}
	return 0
}

// publishStatus publishes the status when it must: at once when forced
// (a new generation), otherwise when it has something worth telling and
// hold allows. It is called between batches, when the protocol has
// processed everything delivered, so that done means done.
func (a *agent) publishStatus(now time.Time) {
	if !a.connected {
		return
	}
	if st := a.state(); !a.forcePub && st != stateDone && st == a.lastPub.State && a.gen == a.lastPub.Gen &&
		a.lastPub.Error == "" && a.wave.me == a.lastPub.Wave && !tokenFailed(a.lastTok) {
		// Nothing worth telling (worthTelling), without building the
		// links' counters: this runs after every batch.
		return
	}
	cur := a.current()
	force := a.forcePub
	if !force && !worthTelling(cur, a.lastPub) {
		if tokenFailed(a.lastTok) {
			force = true // publish the same status again
		} else {
			return
		}
	}
	if !force && now.Sub(a.lastPubAt) < a.hold(cur) {
		return
	}
	a.ver++
	cur.Ver = a.ver
	if a.echoWant == math.MaxUint64 {
		a.echoWant = a.ver // the first status since the connection
	}
	a.lastTok = a.tr.publish(a.layout.Status(a.name), true, cur.encode())
	a.lastPub, a.lastPubAt, a.forcePub = cur, now, false
	a.ctr.statuses.Add(1)
	// Every peer reads the status: it acknowledges every link it lists.
	for _, l := range cur.Links {
		if k := &a.acks[l.Peer]; l.Delivered >= k.delivered {
			k.delivered, k.again = l.Delivered, false
		}
	}
}

// sendAcks acknowledges, on each link with news (messages delivered since
// the last acknowledgement, or a reason to repeat it), the messages
// delivered so far, at most once per Timing.StatusInterval per link. The
// acknowledgement goes to that peer alone (see envelope.Ack).
func (a *agent) sendAcks(now time.Time) {
	if !a.connected || now.Before(a.ackDue) {
		return
	}
	interval := a.cfg.Timing.StatusInterval
	next := now.Add(farFuture)
	for _, j := range a.active {
		k := &a.acks[j]
		d := a.recv.in[j].next
		if d == 0 || (d == k.delivered && !k.again) {
			continue
		}
		if due := k.at.Add(interval); now.Before(due) {
			if due.Before(next) {
				next = due
			}
			continue
		}
		ack := envelope.Ack{Run: a.cfg.Run, Sender: a.name, Receiver: a.cfg.Agents[j], Nonce: a.nonce, Delivered: d}
		b, err := ack.Encode()
		if err != nil {
			continue // unreachable: resolve checked every name
		}
		a.tr.publish(a.layout.Inbox(a.cfg.Agents[j], a.name), false, b)
		*k = ackState{delivered: d, at: now}
		a.ctr.acks.Add(1)
	}
	a.ackDue = next
}

// farFuture stands for "no acknowledgement pending" in ackDue.
const farFuture = 24 * time.Hour

// ackNews records that link j has something to acknowledge (a delivery,
// or a reason to repeat the last acknowledgement): due one status
// interval after its last acknowledgement. It keeps sendAcks from
// scanning every link after every message, which on a complete graph of
// n agents costs n per message.
func (a *agent) ackNews(j int) {
	if due := a.acks[j].at.Add(a.cfg.Timing.StatusInterval); due.Before(a.ackDue) {
		a.ackDue = due
	}
}

// onAck takes an acknowledgement from peer j, received on j's topic to
// this agent.
func (a *agent) onAck(j int, b []byte) {
	k, err := envelope.DecodeAck(b)
	if err != nil {
		reason := DropMalformed
		switch {
		case errors.Is(err, envelope.ErrVersion):
			reason = DropVersion
		case errors.Is(err, envelope.ErrTooLarge):
			reason = DropTooLarge
		}
		a.ctr.drop(a.log, reason, "acknowledgement from", a.cfg.Agents[j], "err", err)
		return
	}
	reason := ""
	switch {
	case k.Run != a.cfg.Run:
		reason = DropWrongRun
	case k.Sender != a.cfg.Agents[j]:
		reason = DropSenderMismatch
	case k.Receiver != a.name:
		reason = DropWrongReceiver
	case !a.peer(j).seen || k.Nonce != a.peer(j).st.Nonce:
		// Another incarnation's: its counts are not this one's.
		reason = DropStaleAck
	}
	if reason != "" {
		a.ctr.drop(a.log, reason, "acknowledgement from", a.cfg.Agents[j], "sender", k.Sender, "run", k.Run)
		return
	}
	a.ctr.acksIn.Add(1)
	if !a.send.ack(j, k.Delivered) {
		a.log.Warn("acknowledgement of messages never sent; ignored", "peer", a.cfg.Agents[j],
			"acknowledged", k.Delivered, "sent", a.send.out[j].next)
	}
}

// tokenFailed reports whether t completed with an error.
func tokenFailed(t paho.Token) bool {
	if t == nil {
		return false
	}
	select {
	case <-t.Done():
		return t.Error() != nil
	default:
		return false
	}
}

// finished reports whether the run is over for this agent: it is done,
// its latest status says so and reached the broker, and every agent's
// latest status shows the run quiescent.
func (a *agent) finished() bool {
	if !a.started || !a.proto.Done() || a.lastTok == nil {
		return false
	}
	if a.sparse {
		if !a.wave.me.Term || !a.lastPub.Wave.Term {
			return false
		}
		select {
		case <-a.lastTok.Done():
			return a.lastTok.Error() == nil
		default:
			return false
		}
	}
	if a.peersDone < a.n-1 || a.lastPub.State != stateDone || !sameStatus(a.current(), a.lastPub) {
		return false
	}
	select {
	case <-a.lastTok.Done():
		if a.lastTok.Error() != nil {
			return false
		}
	default:
		return false
	}
	a.quiet = slices.Grow(a.quiet[:0], a.n)[:a.n]
	for j := range a.n {
		if j == a.me {
			a.quiet[j] = a.lastPub
			continue
		}
		a.quiet[j] = a.peer(j).st
	}
	return quiescent(a.quiet)
}

// fail publishes a failed status, so that the other agents stop instead
// of waiting for this one, and waits a little for it to leave. It does so
// even when the agent fails before it announced its connection — a
// restarted agent that finds its earlier incarnation's status, a refused
// subscription —, since peers that saw an earlier status of this agent
// (its previous incarnation's) would otherwise wait for it forever; the
// status carries this incarnation's nonce, so no peer mistakes it for the
// earlier one's. A peer's failure is not echoed: the failed agent said
// so itself.
func (a *agent) fail(err error, wait time.Duration) {
	if errors.Is(err, ErrPeerFailed) && !a.sparse {
		return
	}
	s := a.current()
	s.State, s.Error = stateFailed, err.Error()
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrPeerAbandoned) {
		// The agent gives the run up (its round timed out, its process
		// stops): the peers must not start it again without it.
		s.Error = abandoned + s.Error
	}
	if len(s.Error) > maxStatusError {
		s.Error = strings.ToValidUTF8(s.Error[:maxStatusError], "")
	}
	a.ver++
	s.Ver = a.ver
	a.tr.publish(a.layout.Status(a.name), true, s.encode()).WaitTimeout(wait)
}
