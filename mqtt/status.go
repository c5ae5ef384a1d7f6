package mqtt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
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
//   - acknowledgements: a link's Delivered is the number of messages from
//     that peer delivered in order, so the peer can forget them; a new Gen
//     asks every peer to retransmit what it has not acknowledged;
//   - termination: see quiescent.
//
// Every agent reads every status, so a status holds counters only for the
// links the agent has used (Links), not one per agent of the run: its size
// grows with the agent's degree, and the run's status traffic with n²·d
// rather than n³.
type status struct {
	V     int
	Agent string
	Run   string
	// Nonce is drawn at random per RunAgent call, to tell a restarted
	// agent (or an earlier run's leftover) from the one running.
	Nonce uint64
	// Gen goes up whenever the agent asks for a retransmission: after
	// every connection (paho does not say whether the broker kept the
	// session) and after dropping a message it will need.
	Gen uint64
	// Ver goes up with every status the agent publishes, so that an old
	// copy redelivered after a newer one is recognised.
	Ver   uint64
	State string
	Error string
	// N is the number of agents of the run, which peer indices refer to.
	N int
	// Links are the counters of every link with traffic in either
	// direction, by increasing peer index; a link not listed has sent and
	// delivered nothing.
	Links []linkCount
	// Wave is the agent's part in the termination waves, present
	// (HasWave) in the runs with Config.Neighbours, whose statuses carry
	// no Links: acknowledgements go on the inboxes, and termination
	// needs no link counters.
	Wave    waveReport
	HasWave bool
}

// linkCount is one link's counters in a status: messages sent to Peer,
// and messages from Peer delivered in order.
type linkCount struct {
	Peer            int
	Sent, Delivered uint64
}

// link returns the counters of the link with agent j (zero when the
// status does not list it).
func (s *status) link(j int) linkCount {
	k, ok := slices.BinarySearchFunc(s.Links, j, func(l linkCount, j int) int { return l.Peer - j })
	if !ok {
		return linkCount{Peer: j}
	}
	return s.Links[k]
}

// statusVersion is the status format written and read. Version 1 carried
// dense per-agent counter arrays; version 2 carries the sparse links.
const statusVersion = 2

// presenceVersion is the presence payload's format, unchanged since 1.
const presenceVersion = 1

// errStatusVersion is wrapped by decodeStatus's error for a status of
// another format version (an agent of another build), which receivers
// count apart from malformed ones.
var errStatusVersion = errors.New("unsupported status version")

// wireStatus is status as JSON: the links as three parallel arrays, which
// stay short and readable ("peers":[3,17],"sent":[5,0],"delivered":[4,2]).
type wireStatus struct {
	V         int      `json:"v"`
	Agent     string   `json:"agent"`
	Run       string   `json:"run"`
	Nonce     uint64   `json:"nonce"`
	Gen       uint64   `json:"gen"`
	Ver       uint64   `json:"ver"`
	State     string   `json:"state"`
	Error     string   `json:"error,omitempty"`
	N         int      `json:"n"`
	Peers     []int    `json:"peers"`
	Sent      []uint64 `json:"sent"`
	Delivered []uint64 `json:"delivered"`
	Wave      []uint64 `json:"wave,omitempty"`
}

// maxStatusBytes bounds a status payload: a header, and a few numbers per
// link, of which an agent has at most one per other agent.
func maxStatusBytes(agents int) int { return 2048 + 64*agents }

// maxStatusError bounds a failed status's error text.
const maxStatusError = 1024

func (s status) encode() []byte {
	w := wireStatus{
		V: s.V, Agent: s.Agent, Run: s.Run, Nonce: s.Nonce, Gen: s.Gen, Ver: s.Ver,
		State: s.State, Error: s.Error, N: s.N,
		Peers: make([]int, len(s.Links)), Sent: make([]uint64, len(s.Links)), Delivered: make([]uint64, len(s.Links)),
	}
	for i, l := range s.Links {
		w.Peers[i], w.Sent[i], w.Delivered[i] = l.Peer, l.Sent, l.Delivered
	}
	if s.HasWave {
		w.Wave = s.Wave.encode()
	}
	b, err := json.Marshal(w)
	if err != nil {
		panic(err) // unreachable: the struct has only plain fields
	}
	return b
}

// decodeStatus parses and validates the status of agent (index self) for
// run, among n agents. A status of another format version is refused with
// an error wrapping errStatusVersion.
func decodeStatus(b []byte, agent, run string, self, n int) (status, error) {
	if len(b) > maxStatusBytes(n) {
		return status{}, fmt.Errorf("status of %d bytes", len(b))
	}
	w, ok := parseCanonicalStatus(b)
	var err error
	if !ok {
		err = parseStatusJSON(b, &w)
	}
	if err != nil || w.V != statusVersion {
		// Tell another version (whose fields may differ) from garbage.
		var probe struct {
			V int `json:"v"`
		}
		if json.Unmarshal(b, &probe) == nil && probe.V != statusVersion {
			return status{}, fmt.Errorf("%w %d", errStatusVersion, probe.V)
		}
		if err == nil {
			err = fmt.Errorf("version %d", w.V)
		}
		return status{}, fmt.Errorf("status: %w", err)
	}
	switch {
	case w.Agent != agent:
		return status{}, fmt.Errorf("status names agent %q on %q's topic", w.Agent, agent)
	case w.Run != run:
		return status{}, fmt.Errorf("status of run %q", w.Run)
	case !slices.Contains([]string{stateWaiting, stateRunning, stateDone, stateFailed}, w.State):
		return status{}, fmt.Errorf("status state %q", w.State)
	case w.N != n:
		return status{}, fmt.Errorf("status of a run of %d agents, not %d: the agents were given different lists", w.N, n)
	case len(w.Peers) != len(w.Sent) || len(w.Peers) != len(w.Delivered):
		return status{}, fmt.Errorf("status with %d peers, %d sent and %d delivered counters", len(w.Peers), len(w.Sent), len(w.Delivered))
	case len(w.Error) > maxStatusError:
		return status{}, errors.New("status error text too long")
	}
	s := status{V: w.V, Agent: w.Agent, Run: w.Run, Nonce: w.Nonce, Gen: w.Gen, Ver: w.Ver,
		State: w.State, Error: w.Error, N: w.N}
	if len(w.Wave) > 0 {
		wr, err := decodeWave(w.Wave)
		if err != nil {
			return status{}, err
		}
		s.Wave, s.HasWave = wr, true
	}
	if len(w.Peers) > 0 {
		s.Links = make([]linkCount, len(w.Peers))
	}
	for i, p := range w.Peers {
		switch {
		case p < 0 || p >= n:
			return status{}, fmt.Errorf("status names peer %d of %d agents", p, n)
		case p == self:
			return status{}, errors.New("status counts a link to the agent itself")
		case i > 0 && p <= w.Peers[i-1]:
			return status{}, errors.New("status peers not in increasing order")
		}
		s.Links[i] = linkCount{Peer: p, Sent: w.Sent[i], Delivered: w.Delivered[i]}
	}
	return s, nil
}

// parseStatusJSON parses any JSON status, refusing unknown fields and
// trailing data.
func parseStatusJSON(b []byte, w *wireStatus) error {
	*w = wireStatus{}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	err := d.Decode(w)
	if err == nil && d.More() {
		err = errors.New("trailing data")
	}
	return err
}

// parseCanonicalStatus parses a status exactly as encode writes it — the
// fields in order, no spaces, strings of printable ASCII without escapes,
// numbers without sign or leading zeros — and reports false for anything
// else, which parseStatusJSON then reads. Every agent reads every status
// of a run, a few hundred counters each on a complete graph, and
// encoding/json's reflection was 7% of a 251-home run's CPU; what this
// accepts, parseStatusJSON reads the same (FuzzDecodeStatus checks it).
func parseCanonicalStatus(b []byte) (w wireStatus, ok bool) {
	p := statusParser{b: b}
	var v, n uint64
	ok = p.lit(`{"v":`) && p.uint(&v, math.MaxInt) &&
		p.lit(`,"agent":`) && p.str(&w.Agent) &&
		p.lit(`,"run":`) && p.str(&w.Run) &&
		p.lit(`,"nonce":`) && p.uint(&w.Nonce, math.MaxUint64) &&
		p.lit(`,"gen":`) && p.uint(&w.Gen, math.MaxUint64) &&
		p.lit(`,"ver":`) && p.uint(&w.Ver, math.MaxUint64) &&
		p.lit(`,"state":`) && p.str(&w.State)
	if ok && p.has(`,"error":`) {
		ok = p.lit(`,"error":`) && p.str(&w.Error) && w.Error != ""
	}
	ok = ok && p.lit(`,"n":`) && p.uint(&n, math.MaxInt) &&
		p.lit(`,"peers":`) && p.ints(&w.Peers) &&
		p.lit(`,"sent":`) && p.uints(&w.Sent) &&
		p.lit(`,"delivered":`) && p.uints(&w.Delivered)
	if ok && p.has(`,"wave":`) {
		ok = p.lit(`,"wave":`) && p.uints(&w.Wave) && len(w.Wave) > 0
	}
	ok = ok && p.lit(`}`) && len(p.b) == 0
	w.V, w.N = int(v), int(n)
	return w, ok
}

// statusParser reads the canonical status: each method consumes what it
// reads and reports whether it was there.
type statusParser struct{ b []byte }

func (p *statusParser) has(s string) bool { return bytes.HasPrefix(p.b, []byte(s)) }

func (p *statusParser) lit(s string) bool {
	if !p.has(s) {
		return false
	}
	p.b = p.b[len(s):]
	return true
}

// str reads a string of printable ASCII other than '"' and '\'.
func (p *statusParser) str(dst *string) bool {
	if len(p.b) == 0 || p.b[0] != '"' {
		return false
	}
	for i := 1; i < len(p.b); i++ {
		switch c := p.b[i]; {
		case c == '"':
			*dst = string(p.b[1:i])
			p.b = p.b[i+1:]
			return true
		case c < 0x20 || c > 0x7e || c == '\\':
			return false
		}
	}
	return false
}

// uint reads a number without sign or leading zero, at most limit.
func (p *statusParser) uint(dst *uint64, limit uint64) bool {
	i, v := 0, uint64(0)
	for i < len(p.b) && p.b[i] >= '0' && p.b[i] <= '9' {
		d := uint64(p.b[i] - '0')
		if v > (limit-d)/10 {
			return false
		}
		v = v*10 + d
		i++
	}
	if i == 0 || i > 1 && p.b[0] == '0' {
		return false
	}
	*dst, p.b = v, p.b[i:]
	return true
}

// uints reads an array of numbers (uint's).
func (p *statusParser) uints(dst *[]uint64) bool {
	return p.uintsUpTo(dst, math.MaxUint64)
}

// ints reads an array of non-negative ints.
func (p *statusParser) ints(dst *[]int) bool {
	var u []uint64
	if !p.uintsUpTo(&u, math.MaxInt) {
		return false
	}
	out := make([]int, len(u))
	for k, v := range u {
		out[k] = int(v)
	}
	*dst = out
	return true
}

// uintsUpTo is uints with every number at most limit.
func (p *statusParser) uintsUpTo(dst *[]uint64, limit uint64) bool {
	if !p.lit("[") {
		return false
	}
	out := []uint64{}
	for k := 0; !p.lit("]"); k++ {
		if k > 0 && !p.lit(",") {
			return false
		}
		var v uint64
		if !p.uint(&v, limit) {
			return false
		}
		out = append(out, v)
	}
	*dst = out
	return true
}

// quiescent reports whether the run is over given one status per agent,
// st[i] being agent i's: every agent is done and, on every link i→j, the
// number of messages i sent to j equals the number j delivered from i.
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
//
// Only links listed by either end are compared: a link neither lists
// counts zero both ways. The cost is the total number of listed links,
// times a logarithm.
func quiescent(st []status) bool {
	for _, s := range st {
		if s.State != stateDone || s.N != len(st) {
			return false
		}
	}
	for i := range st {
		for _, l := range st[i].Links {
			if l.Peer < 0 || l.Peer >= len(st) {
				return false
			}
			back := st[l.Peer].link(i)
			if l.Sent != back.Delivered || l.Delivered != back.Sent {
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
	// Client and Since are the process's Identity (absent from builds
	// before them), which tell a second process for the same home.
	Client string `json:"client,omitempty"`
	Since  int64  `json:"since,omitempty"`
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
	if p.V != presenceVersion || p.Agent != agent || (p.State != "online" && p.State != "offline") {
		return p, fmt.Errorf("presence %+v on %q's topic", p, agent)
	}
	return p, nil
}
