package mqtt

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// onStatus takes a status. The agent's own comes back to it and proves
// that the broker delivers (see echoWant) and which copy it retains; a
// peer's tells that it is present, acknowledges messages, asks for
// retransmissions (a new generation), reports a failure, and feeds the
// termination check.
func (a *agent) onStatus(p topic.Parsed, b []byte) error {
	j, known := a.index[p.Agent]
	switch {
	case p.Run != a.cfg.Run:
		a.ctr.drop(a.log, DropWrongRun, "topic", a.layout.Status(p.Agent), "run", p.Run)
		return nil
	case !known:
		a.ctr.drop(a.log, DropUnknownSender, "status of", p.Agent)
		return nil
	}
	s, err := decodeStatus(b, p.Agent, a.cfg.Run, a.n)
	if err != nil {
		a.ctr.drop(a.log, DropMalformed, "status of", p.Agent, "err", err)
		return nil
	}
	if j == a.me {
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
	ps := &a.peers[j]
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
	ps.seen, ps.st = true, s
	if s.State == stateFailed {
		return fmt.Errorf("mqtt: agent %s: %w: %s: %s", a.name, ErrPeerFailed, p.Agent, s.Error)
	}
	if !a.send.ack(j, s.Delivered[a.me]) {
		a.log.Warn("status acknowledges messages never sent; ignored", "peer", p.Agent,
			"acknowledged", s.Delivered[a.me], "sent", a.send.out[j].next)
	}
	if newGen {
		a.retransmit(j, true, time.Now())
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

// allPresent reports whether a status of every other agent was seen.
func (a *agent) allPresent() bool {
	for j, p := range a.peers {
		if j != a.me && !p.seen {
			return false
		}
	}
	return true
}

// current is the status the agent would publish now.
func (a *agent) current() status {
	state := stateWaiting
	if a.started {
		state = stateRunning
		if a.proto.Done() {
			state = stateDone
		}
	}
	return status{
		V: statusVersion, Agent: a.name, Run: a.cfg.Run, Nonce: a.nonce, Gen: a.gen,
		State: state, Sent: a.send.sent(), Delivered: a.recv.delivered(),
	}
}

func sameStatus(x, y status) bool {
	return x.Gen == y.Gen && x.State == y.State && x.Error == y.Error &&
		slices.Equal(x.Sent, y.Sent) && slices.Equal(x.Delivered, y.Delivered)
}

// publishStatus publishes the status when it must: at once when forced
// (a new generation) or when the agent is done, otherwise when it changed
// and StatusInterval has passed. midBatch is set while messages accepted
// by the link layer still wait for the protocol: the status then says
// running, since done would claim they were processed.
func (a *agent) publishStatus(now time.Time, midBatch bool) {
	if !a.connected {
		return
	}
	cur := a.current()
	if midBatch && cur.State == stateDone {
		cur.State = stateRunning
	}
	force := a.forcePub
	if !force && sameStatus(cur, a.lastPub) {
		if tokenFailed(a.lastTok) {
			force = true // publish the same status again
		} else {
			return
		}
	}
	if !force && cur.State != stateDone && now.Sub(a.lastPubAt) < a.cfg.Timing.StatusInterval {
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
	if a.lastPub.State != stateDone || !sameStatus(a.current(), a.lastPub) {
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
	st := make([]status, a.n)
	for j := range a.n {
		if j == a.me {
			st[j] = a.lastPub
			continue
		}
		if !a.peers[j].seen {
			return false
		}
		st[j] = a.peers[j].st
	}
	return quiescent(st)
}

// fail publishes a failed status, so that the other agents stop instead
// of waiting for this one, and waits a little for it to leave.
func (a *agent) fail(err error, wait time.Duration) {
	if !a.connected || errors.Is(err, ErrPeerFailed) {
		return
	}
	s := a.current()
	s.State, s.Error = stateFailed, err.Error()
	if len(s.Error) > 1000 {
		s.Error = s.Error[:1000]
	}
	a.ver++
	s.Ver = a.ver
	a.tr.publish(a.layout.Status(a.name), true, s.encode()).WaitTimeout(wait)
}
