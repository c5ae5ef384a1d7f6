package mqtt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Agent states in a status.
const (
	stateWaiting = "waiting" // connected, waiting for the run's other agents
	stateRunning = "running" // started, not done
	stateDone    = "done"    // the protocol is done and has processed everything delivered
	stateFailed  = "failed"  // the agent gave up; Error says why
)

// status is an agent's retained record of its run, published on
// <prefix>/<run>/status/<agent> as JSON (small, and readable with
// mosquitto_sub when something hangs). It serves three ends:
//
//   - presence in the run: an agent publishes one right after subscribing
//     to its inbox, so a peer that has seen it may send to it;
//   - acknowledgements: Delivered[j] is the number of messages from agent j
//     delivered in order, so j can forget them; a new Gen asks every peer to
//     retransmit what it has not acknowledged;
//   - termination: see quiescent.
type status struct {
	V     int    `json:"v"`
	Agent string `json:"agent"`
	Run   string `json:"run"`
	// Nonce is drawn at random per RunAgent call, to tell a restarted
	// agent (or an earlier run's leftover) from the one running.
	Nonce uint64 `json:"nonce"`
	// Gen goes up whenever the agent asks for a retransmission: after
	// every connection (paho does not say whether the broker kept the
	// session) and after dropping a message it will need.
	Gen uint64 `json:"gen"`
	// Ver goes up with every status the agent publishes, so that an old
	// copy redelivered after a newer one is recognised.
	Ver       uint64   `json:"ver"`
	State     string   `json:"state"`
	Error     string   `json:"error,omitempty"`
	Sent      []uint64 `json:"sent"`
	Delivered []uint64 `json:"delivered"`
}

const statusVersion = 1

// maxStatusBytes bounds a status payload: a few numbers per agent.
func maxStatusBytes(agents int) int { return 1024 + 48*agents }

func (s status) encode() []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // unreachable: the struct has only plain fields
	}
	return b
}

// decodeStatus parses and validates the status of agent for run, among n
// agents.
func decodeStatus(b []byte, agent, run string, n int) (status, error) {
	var s status
	if len(b) > maxStatusBytes(n) {
		return s, fmt.Errorf("status of %d bytes", len(b))
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&s); err != nil {
		return s, fmt.Errorf("status: %w", err)
	}
	if d.More() {
		return s, errors.New("status: trailing data")
	}
	switch {
	case s.V != statusVersion:
		return s, fmt.Errorf("status version %d", s.V)
	case s.Agent != agent:
		return s, fmt.Errorf("status names agent %q on %q's topic", s.Agent, agent)
	case s.Run != run:
		return s, fmt.Errorf("status of run %q", s.Run)
	case !slices.Contains([]string{stateWaiting, stateRunning, stateDone, stateFailed}, s.State):
		return s, fmt.Errorf("status state %q", s.State)
	case len(s.Sent) != n || len(s.Delivered) != n:
		return s, fmt.Errorf("status with %d and %d counters for %d agents", len(s.Sent), len(s.Delivered), n)
	case len(s.Error) > 1024:
		return s, errors.New("status error text too long")
	}
	return s, nil
}

// quiescent reports whether the run is over given one status per agent:
// every agent is done and, on every link i→j, i's Sent[j] equals j's
// Delivered[i].
//
// The statuses may have been taken at different times; one set suffices
// because links are FIFO. Say agent i's status was taken at time t_i.
// Equal counts on link i→j mean the messages j delivered before t_j are
// exactly those i sent before t_i. Suppose some agent sent a message after
// its status; take the earliest such send, by k after t_k. k was done at
// t_k, and a done agent sends only when a message arrives, so k delivered
// one after t_k; by the equal counts on its link, that one was sent after
// its sender's status — an earlier such send, a contradiction. So no
// message is sent after the statuses, all sent before were delivered, and
// every agent stays done.
func quiescent(st []status) bool {
	for _, s := range st {
		if s.State != stateDone || len(s.Sent) != len(st) || len(s.Delivered) != len(st) {
			return false
		}
	}
	for i := range st {
		for j := range st {
			if st[i].Sent[j] != st[j].Delivered[i] {
				return false
			}
		}
	}
	return true
}

// presence is the retained payload of <prefix>/presence/<agent>.
type presence struct {
	V     int    `json:"v"`
	Agent string `json:"agent"`
	State string `json:"state"` // "online" or "offline"
	Run   string `json:"run,omitempty"`
}

func (p presence) encode() []byte {
	b, _ := json.Marshal(p)
	return b
}

func decodePresence(b []byte, agent string) (presence, error) {
	var p presence
	if len(b) > 1024 {
		return p, fmt.Errorf("presence of %d bytes", len(b))
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("presence: %w", err)
	}
	if p.V != statusVersion || p.Agent != agent || (p.State != "online" && p.State != "offline") {
		return p, fmt.Errorf("presence %+v on %q's topic", p, agent)
	}
	return p, nil
}
