package mqtt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/mqtt/envelope"
	"github.com/hearth-dcop/hearth/mqtt/topic"
	"github.com/hearth-dcop/hearth/mva"
)

// ErrPeerFailed is wrapped by the error of an agent that stopped because
// another agent of the run reported a failure.
var ErrPeerFailed = errors.New("another agent of the run failed")

// RunAgent runs one protocol agent over MQTT until the whole run is over.
// It connects (retrying until ctx ends), subscribes to its inbox, announces
// itself, waits until every agent of the run has announced itself, calls
// proto.Start, then feeds the delivered messages to proto.Step on one
// goroutine and publishes what they return. It returns proto's result when
// the run is quiescent (every agent done and every message delivered, see
// the package documentation) and its own last status is acknowledged by
// the broker. Stats are returned in every case.
func RunAgent(ctx context.Context, cfg AgentConfig, proto mva.Protocol) (mva.AgentResult, Stats, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return mva.AgentResult{}, Stats{}, err
	}
	a := newAgent(cfg, proto)
	start := time.Now()
	err = a.run(ctx)
	st := a.ctr.snapshot(a.name)
	st.NCCC = a.nccc
	st.WallMs = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		return mva.AgentResult{}, st, err
	}
	return proto.Result(), st, nil
}

// agent is RunAgent's state; every field is owned by its goroutine.
type agent struct {
	cfg    AgentConfig
	me, n  int
	name   string
	index  map[string]int
	layout topic.Layout
	proto  mva.Protocol
	log    *slog.Logger
	ctr    *counters
	mbox   *mailbox
	tr     *transport
	recv   *receiver
	send   *sender

	// peers[j] is what the agent knows of agent j, for the agents it
	// watches (nil for the others, see peer).
	peers []*peerState
	// peersDone counts the peers whose latest status says done, so that
	// finished is cheap until the run may be over.
	peersDone int
	// active lists, in increasing order, the peers this agent has sent to
	// or delivered from: the links its status reports.
	active []int
	// acks are the acknowledgements sent to each peer, see sendAcks.
	acks []ackState
	// ackDue is the earliest time a link may have an acknowledgement
	// due: sendAcks, called after every batch, scans the links only
	// from then on (see ackNews).
	ackDue   time.Time
	nonce    uint64
	gen, ver uint64
	echoed   uint64 // the highest version of our own status seen echoed
	// After each connection the agent's first status must come back to
	// it (it subscribes to its own status topic) before echoDeadline,
	// or the connection is not delivering and is replaced.
	echoWant     uint64
	echoDeadline time.Time
	// arrived is the transport's count of messages received when the
	// echo's deadline was last set.
	arrived   int64
	connected bool
	started   bool
	pending   []delivery // delivered before Start
	scratch   []delivery
	// statusPrefix is "<prefix>/<run>/status/" and ownStatus this
	// agent's status topic; latest and superseded are step's scratch
	// space for coalescing statuses.
	statusPrefix string
	ownStatus    string
	latest       map[string]struct{}
	superseded   []bool
	quiet        []status // finished's scratch space
	// finishedStatus is the status of an earlier process of this agent
	// that finished the run (ErrRunFinished).
	finishedStatus []byte

	lastPub      status
	lastPubAt    time.Time
	lastTok      paho.Token
	forcePub     bool
	resyncWanted bool
	lastResync   time.Time
	lastWaitLog  time.Time
	// lastResend is when onTick last looked for overdue messages.
	lastResend time.Time

	nccc int64
	// admitting is true while the agent holds a slot of cfg.Admit.
	admitting bool
	// With Config.Neighbours (sparse): the agent's neighbours, the
	// agents whose statuses it reads (watch), and its termination waves.
	sparse bool
	nbr    []int
	watch  []int
	wave   waveState
}

// peer is what the agent knows of agent j (nothing, for an agent it does
// not watch); only onStatus, for a watched agent, changes it.
func (a *agent) peer(j int) peerState {
	if p := a.peers[j]; p != nil {
		return *p
	}
	return peerState{}
}

type peerState struct {
	seen bool
	st   status
}

// ackState is what the agent last acknowledged to one peer.
type ackState struct {
	delivered uint64    // the count acknowledged
	at        time.Time // when
	again     bool      // acknowledge again, even if nothing new was delivered
}

func newAgent(cfg AgentConfig, proto mva.Protocol) *agent {
	name := cfg.Agents[cfg.Agent]
	log := cfg.Logger.With("agent", name, "run", cfg.Run)
	a := &agent{
		cfg: cfg, me: cfg.Agent, n: len(cfg.Agents), name: name,
		index:  cfg.index,
		layout: topic.Layout{Prefix: cfg.Prefix, Run: cfg.Run},
		proto:  proto, log: log, ctr: &counters{},
		recv:   newReceiver(len(cfg.Agents), cfg.Limits),
		send:   newSender(len(cfg.Agents)),
		peers:  make([]*peerState, len(cfg.Agents)),
		acks:   make([]ackState, len(cfg.Agents)),
		nonce:  rand.Uint64(),
		latest: map[string]struct{}{},
	}
	a.statusPrefix = a.layout.Prefix + "/" + a.layout.Run + "/" + topic.Status + "/"
	a.ownStatus = a.layout.Status(name)
	defer func() {
		for _, j := range a.watch {
			a.peers[j] = &peerState{}
		}
	}()
	if cfg.Neighbours != nil {
		a.sparse = true
		a.nbr = cfg.Neighbours[cfg.Agent]
		a.watch = cfg.watched(cfg.Agent)
		a.wave = waveState{parent: cfg.tree.parent[cfg.Agent], children: cfg.tree.children[cfg.Agent]}
	} else {
		a.watch = make([]int, 0, len(cfg.Agents)-1)
		for j := range cfg.Agents {
			if j != cfg.Agent {
				a.watch = append(a.watch, j)
			}
		}
	}
	a.mbox = newMailbox(cfg.Limits.MailboxBytes, a.ctr, log)
	a.tr = newTransport(cfg, a.mbox, a.ctr, log)
	return a
}

// enter takes a slot of the process's admission semaphore (AgentConfig.
// Admit), waiting for one.
func (a *agent) enter(ctx context.Context) error {
	if a.cfg.Admit == nil {
		return nil
	}
	select {
	case a.cfg.Admit <- struct{}{}:
		a.admitting = true
		return nil
	case <-ctx.Done():
		return fmt.Errorf("mqtt: agent %s: waiting to connect: %w", a.name, ctx.Err())
	}
}

// admitted gives the admission slot back, once.
func (a *agent) admitted() {
	if a.admitting {
		a.admitting = false
		<-a.cfg.Admit
	}
}

// totals are the agent's counters for the termination waves: messages
// sent and messages delivered to the protocol, over all its links.
func (a *agent) totals() (sent, delivered uint64) {
	for _, j := range a.active {
		sent += a.send.out[j].next
		delivered += a.recv.in[j].next
	}
	return sent, delivered
}

// waveOf is the latest wave report of agent j, if its status carried one.
func (a *agent) waveOf(j int) (waveReport, bool) {
	p := a.peer(j)
	return p.st.Wave, p.seen && p.st.HasWave
}

// tickEvery paces timers (retransmission, rate-limited statuses) and the
// check for the final acknowledgement.
const tickEvery = 50 * time.Millisecond

func (a *agent) run(ctx context.Context) (err error) {
	if err := a.enter(ctx); err != nil {
		return err
	}
	defer a.admitted()
	if err := a.tr.connect(ctx); err != nil {
		return err
	}
	closeWait := min(a.cfg.Timing.ConnectTimeout, 2*time.Second)
	defer func() {
		switch {
		case errors.Is(err, ErrRunFinished):
			// Put back the finished run's record, which this
			// agent's waiting status may have replaced.
			a.tr.publish(a.layout.Status(a.name), true, a.finishedStatus).WaitTimeout(closeWait)
		case err != nil:
			a.fail(err, closeWait)
		}
		a.tr.close(closeWait)
	}()
	tick := time.NewTicker(tickEvery)
	defer tick.Stop()
	a.lastWaitLog = time.Now()
	for {
		done, err := a.step(ctx)
		if err != nil {
			return err
		}
		if done {
			a.log.Info("run complete", "delivered", a.ctr.delivered.Load(), "sent", a.ctr.sent.Load()+a.ctr.internal.Load())
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("mqtt: agent %s: %w", a.name, ctx.Err())
		case <-a.mbox.ready:
		case now := <-tick.C:
			a.onTick(ctx, now)
		}
	}
}

// step processes the mailbox, starts the protocol once every agent is
// present, asks for retransmissions when needed, publishes the status, and
// reports whether the run is over.
func (a *agent) step(ctx context.Context) (bool, error) {
	items, overflow := a.mbox.drain()
	if overflow {
		a.resyncWanted = true
	}
	skip := a.coalesce(items)
	for i, it := range items {
		if skip[i] {
			continue
		}
		if err := a.handle(ctx, it); err != nil {
			return false, err
		}
	}
	if a.connected && a.echoWant == 0 {
		a.admitted()
	}
	// Its own status must have come back first (echoWant 0: a time-out
	// waiting for it is no echo, see onTick): the broker delivers the
	// retained one before it, and coalesce lets every own status
	// through, so an earlier process's status of this run (a finished
	// run, see onStatus) is known before the peers' statuses, which may
	// be that finished run's, are taken for presence.
	if !a.started && a.connected && a.echoWant == 0 && a.allPresent() {
		if err := a.start(ctx); err != nil {
			return false, err
		}
	}
	now := time.Now()
	if a.resyncWanted && a.connected && now.Sub(a.lastResync) >= a.cfg.Timing.StatusInterval {
		a.resyncWanted, a.lastResync = false, now
		a.gen++
		a.ctr.resyncs.Add(1)
		a.forcePub = true
		a.log.Warn("asking peers to retransmit after dropping messages")
	}
	a.sendAcks(now)
	if a.sparse && a.started {
		sent, delivered := a.totals()
		a.wave.advance(a.proto.Done(), sent, delivered, a.waveOf)
	}
	a.publishStatus(now)
	return a.finished(), nil
}

// coalesce marks the statuses of items that a later status on the same
// topic supersedes: a status is a snapshot, so only the newest of a batch
// needs decoding (a stale copy that arrives last is still handled, see
// onStatus). Under load, when statuses queue up faster than the agent
// drains them, this keeps the cost of reading them proportional to the
// agents that changed, not to the changes.
//
// The agent's own statuses are never coalesced: the broker's retained one
// from an earlier process (a finished run, see onStatus) can reach the
// mailbox after the connection item, in the batch that also brings back
// this process's first status; superseded, it would go unread, and the
// echo would start a run that is already over.
func (a *agent) coalesce(items []item) []bool {
	a.superseded = slices.Grow(a.superseded[:0], len(items))[:len(items)]
	clear(a.superseded)
	clear(a.latest)
	for i := len(items) - 1; i >= 0; i-- {
		it := &items[i]
		if it.kind != itemMessage || !strings.HasPrefix(it.topic, a.statusPrefix) {
			continue
		}
		a.ctr.statusesIn.Add(1)
		if it.topic == a.ownStatus {
			continue
		}
		if _, later := a.latest[it.topic]; later {
			a.superseded[i] = true
			a.ctr.statusesCoalesced.Add(1)
			continue
		}
		a.latest[it.topic] = struct{}{}
	}
	return a.superseded
}

func (a *agent) handle(ctx context.Context, it item) error {
	switch it.kind {
	case itemFatal:
		return it.err
	case itemConnected:
		if a.connected {
			a.ctr.resyncs.Add(1)
		}
		// Every connection may have lost the broker's session (paho
		// does not report it on reconnections): a new generation asks
		// the peers to retransmit whatever is not acknowledged.
		a.connected = true
		a.gen++
		a.forcePub = true
		a.echoWant, a.echoDeadline = math.MaxUint64, time.Now().Add(a.cfg.Timing.ConnectTimeout)
		a.arrived = a.tr.arrived.Load()
		return nil
	}
	p := topic.Parse(a.cfg.Prefix, it.topic)
	switch p.Kind {
	case topic.InboxTopic:
		return a.onEnvelope(ctx, it.topic, p, it.payload)
	case topic.MulticastTopic:
		return a.onMulticast(ctx, it.topic, p, it.payload)
	case topic.StatusTopic:
		return a.onStatus(it.topic, p, it.payload)
	case topic.PresenceTopicKind:
		a.onPresence(p, it.payload)
		return nil
	}
	a.ctr.drop(a.log, DropForeignTopic, "topic", it.topic)
	return nil
}

// onEnvelope takes a payload received on inbox topic tp (parsed: p).
func (a *agent) onEnvelope(ctx context.Context, tp string, p topic.Parsed, b []byte) error {
	from, ok := a.admit(tp, p, b)
	switch {
	case !ok:
		return nil
	case p.Agent != a.name:
		a.ctr.drop(a.log, DropWrongReceiver, "to", p.Agent)
		return nil
	case from == a.me:
		a.ctr.drop(a.log, DropUnknownSender, "from", p.From)
		return nil
	}
	if envelope.IsAck(b) {
		a.onAck(from, b)
		return nil
	}
	e, err := envelope.Decode(b, a.cfg.Limits.envelope())
	if err != nil {
		a.dropUndecodable(p.From, err)
		return nil
	}
	return a.accept(ctx, from, &e)
}

// onMulticast takes a payload received on multicast topic tp (parsed: p):
// the part of it for this agent, if any, is one envelope of its link
// with the sender, handled as if it had come on the inbox.
func (a *agent) onMulticast(ctx context.Context, tp string, p topic.Parsed, b []byte) error {
	from, ok := a.admit(tp, p, b)
	if !ok || from == a.me {
		return nil // from == a.me: its own multicast, which the broker delivers to every subscriber
	}
	m, err := envelope.DecodeMulticast(b, a.cfg.Limits.envelope())
	if err != nil {
		a.dropUndecodable(p.From, err)
		return nil
	}
	if m.Agents != a.n {
		a.ctr.drop(a.log, DropMalformed, "from", p.From, "err", fmt.Sprintf("multicast for a run of %d agents, this one has %d", m.Agents, a.n))
		return nil
	}
	seq, mine := m.SeqOf(a.me)
	if !mine {
		a.ctr.multicastsSkipped.Add(1)
		return nil
	}
	e := envelope.Envelope{Header: m.Header(a.name, seq), Payload: m.Payload}
	return a.accept(ctx, from, &e)
}

// admit counts a payload received on topic tp (parsed: p) and returns
// its sender's index; it drops, counts and logs one of another run or of
// an agent not in this run, and returns false.
func (a *agent) admit(tp string, p topic.Parsed, b []byte) (int, bool) {
	a.ctr.received.Add(1)
	a.ctr.receivedBytes.Add(int64(len(b)))
	if p.Run != a.cfg.Run {
		a.ctr.drop(a.log, DropWrongRun, "topic", tp, "run", p.Run)
		return -1, false
	}
	from, known := a.index[p.From]
	if !known {
		a.ctr.drop(a.log, DropUnknownSender, "from", p.From)
		return -1, false
	}
	return from, true
}

// dropUndecodable counts and logs a payload from sender that does not
// decode, by the reason its error gives.
func (a *agent) dropUndecodable(sender string, err error) {
	reason := DropMalformed
	switch {
	case errors.Is(err, envelope.ErrVersion):
		reason = DropVersion
	case errors.Is(err, envelope.ErrTooLarge):
		reason = DropTooLarge
	}
	a.ctr.drop(a.log, reason, "from", sender, "err", err)
}

// accept checks a decoded envelope from peer from against the run, files
// it on its link and delivers what is now in order.
func (a *agent) accept(ctx context.Context, from int, e *envelope.Envelope) error {
	sender := a.cfg.Agents[from]
	reason := ""
	switch {
	case e.Run != a.cfg.Run:
		reason = DropWrongRun
	case e.Sender != sender:
		reason = DropSenderMismatch
	case e.Receiver != a.name:
		reason = DropWrongReceiver
	case e.Protocol != a.cfg.Protocol:
		reason = DropWrongProtocol
	}
	if reason != "" {
		a.ctr.drop(a.log, reason, "from", sender, "sender", e.Sender, "run", e.Run, "protocol", e.Protocol)
		return nil
	}
	out, res, reason := a.recv.accept(from, e, a.scratch[:0])
	switch res {
	case duplicate:
		a.ctr.duplicates.Add(1)
		// The sender retransmitted: it may have missed our
		// acknowledgement.
		a.acks[from].again = true
		a.ackNews(from)
	case dropped:
		a.ctr.drop(a.log, reason, "from", sender, "seq", e.Seq)
		a.resyncWanted = true
	}
	a.scratch = out[:0]
	if len(out) > 0 {
		a.touch(from)
		a.ackNews(from)
	}
	if len(out) > 0 && a.started {
		// Acknowledge before stepping: a long Step (a large UTIL join)
		// must not hold back the acknowledgement until the sender's
		// retransmission timer fires.
		a.sendAcks(time.Now())
	}
	for _, d := range out {
		if err := a.deliver(ctx, d); err != nil {
			return err
		}
	}
	return nil
}

// compute takes a slot of the process's compute semaphore (AgentConfig.
// Compute), waiting for one, and returns the function that gives it back.
func (a *agent) compute(ctx context.Context) (func(), error) {
	sem := a.cfg.Compute
	if sem == nil {
		return func() {}, nil
	}
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// deliver hands one message to the protocol, or keeps it until Start.
func (a *agent) deliver(ctx context.Context, d delivery) error {
	if !a.started {
		a.pending = append(a.pending, d)
		return nil
	}
	a.nccc = max(a.nccc, int64(min(d.nccc, math.MaxInt64)))
	before := a.checks()
	release, err := a.compute(ctx)
	if err != nil {
		return err
	}
	out, err := a.proto.Step(ctx, mva.Message{From: d.from, To: a.me, Kind: d.kind, Body: d.body})
	release()
	a.ctr.delivered.Add(1)
	if err != nil {
		return fmt.Errorf("mqtt: agent %s: %s message %d from %s: %w", a.name, d.kind, d.seq, a.cfg.Agents[d.from], err)
	}
	a.nccc += a.checks() - before
	return a.sendAll(out)
}

func (a *agent) start(ctx context.Context) error {
	a.started = true
	a.log.Info("every agent present; starting the protocol", "agents", a.n)
	before := a.checks()
	release, err := a.compute(ctx)
	if err != nil {
		return err
	}
	out, err := a.proto.Start(ctx)
	release()
	if err != nil {
		return fmt.Errorf("mqtt: agent %s: start: %w", a.name, err)
	}
	a.nccc += a.checks() - before
	if err := a.sendAll(out); err != nil {
		return err
	}
	pending := a.pending
	a.pending = nil
	for _, d := range pending {
		if err := a.deliver(ctx, d); err != nil {
			return err
		}
	}
	return nil
}

func (a *agent) checks() int64 {
	if a.cfg.Checks == nil {
		return 0
	}
	return a.cfg.Checks()
}

func (a *agent) sendAll(msgs []mva.Message) error {
	for _, m := range msgs {
		if m.From != a.me || m.To < 0 || m.To >= a.n || m.To == a.me {
			return fmt.Errorf("mqtt: agent %s (%d) sent a message from %d to %d", a.name, a.me, m.From, m.To)
		}
		if _, ok := slices.BinarySearch(a.nbr, m.To); a.sparse && !ok {
			return fmt.Errorf("mqtt: agent %s sent a %s message to %s, which is not its neighbour (Config.Neighbours): this protocol needs every agent's status", a.name, m.Kind, a.cfg.Agents[m.To])
		}
	}
	groups := a.multicastGroups(msgs)
	for i, m := range msgs {
		var g *multicastGroup
		if groups != nil {
			g = groups[i]
		}
		if g == nil {
			if err := a.sendMsg(m, true); err != nil {
				return err
			}
			continue
		}
		// A member of a multicast: it takes its link's next sequence
		// number here, in the order the protocol sent it, and is kept
		// for retransmission on the inbox; the multicast goes out
		// after its last member.
		seq := a.send.out[m.To].next
		if err := a.sendMsg(m, false); err != nil {
			return err
		}
		g.To = append(g.To, envelope.Receiver{Index: m.To, Seq: seq})
		if len(g.To) == g.members {
			if err := a.publishMulticast(g); err != nil {
				return err
			}
		}
	}
	return nil
}

// multicastMin is the least share of an agent's peers a message must go
// to for it to be multicast: every agent of the run receives a multicast
// (they subscribe to every multicast topic), so below this share the
// deliveries to agents it is not for would cost more than the
// publications it saves.
const multicastMin = 0.75

// multicastGroup is one body sent to many peers in one batch.
type multicastGroup struct {
	envelope.Multicast
	members int
	to      []bool // the receivers so far, by index
}

// multicastGroups finds, in one batch, the messages with the same kind
// and body that go to at least multicastMin of the agent's peers and fit
// one envelope: groups[i] is message i's group, or nil when it goes on
// its own. Sampling and local-search protocols send every neighbour the
// same VALUE; on a complete graph, a multicast turns n−1 publications into
// one.
func (a *agent) multicastGroups(msgs []mva.Message) []*multicastGroup {
	peers := a.n - 1
	if a.sparse {
		peers = len(a.nbr) // only they subscribe to the multicasts
	}
	least := max(2, int(math.Ceil(multicastMin*float64(peers))))
	if a.cfg.NoMulticast || len(msgs) < least {
		return nil
	}
	groups := make([]*multicastGroup, len(msgs))
	byBody := map[string]*multicastGroup{}
	// A body too large for one envelope goes fragmented on the inboxes;
	// the receivers' list (at most 16 bytes each, in practice 2) must
	// fit beside it in the broker's packet limit, which leaves a few KiB
	// above MaxPayload for headers.
	room := a.cfg.Limits.MaxPayload - 16*a.n
	for i, m := range msgs {
		if len(m.Body) > room {
			continue
		}
		key := m.Kind + "\x00" + string(m.Body)
		g := byBody[key]
		if g == nil {
			g = &multicastGroup{Multicast: envelope.Multicast{
				Run: a.cfg.Run, Sender: a.name, Protocol: a.cfg.Protocol, Kind: m.Kind,
				Agents: a.n, Payload: m.Body,
			}, to: make([]bool, a.n)}
			byBody[key] = g
		}
		if g.to[m.To] {
			continue // the same message twice to one peer: the second on its own
		}
		g.to[m.To] = true
		g.members++
		groups[i] = g
	}
	for i, g := range groups {
		if g != nil && g.members < least {
			groups[i] = nil
		}
	}
	for _, g := range byBody {
		if g.members >= least {
			g.To = make([]envelope.Receiver, 0, g.members)
		}
	}
	return groups
}

// publishMulticast publishes a complete group once, on the agent's
// multicast topic. Its members are already kept for retransmission, so a
// multicast that is lost is recovered link by link, on the inboxes.
func (a *agent) publishMulticast(g *multicastGroup) error {
	slices.SortFunc(g.To, func(x, y envelope.Receiver) int { return x.Index - y.Index })
	g.NCCC = uint64(max(a.nccc, 0))
	b, err := g.Encode(a.cfg.Limits.envelope())
	if err != nil {
		return fmt.Errorf("mqtt: agent %s: %s multicast: %w", a.name, g.Kind, err)
	}
	a.tr.publish(a.layout.Multicast(a.name), false, b)
	a.ctr.multicasts.Add(1)
	a.ctr.envelopes.Add(1)
	a.ctr.envelopeBytes.Add(int64(len(b)))
	return nil
}

// sendMsg gives m the next sequence number on its link, splits it into
// envelopes, publishes them unless publish is false (a multicast carries
// it) and keeps them until acknowledged.
func (a *agent) sendMsg(m mva.Message, publish bool) error {
	lim := a.cfg.Limits
	if len(m.Body) > lim.MaxMessage {
		return fmt.Errorf("mqtt: agent %s: %s message of %d bytes to %s exceeds the %d-byte limit (Limits.MaxMessage)",
			a.name, m.Kind, len(m.Body), a.cfg.Agents[m.To], lim.MaxMessage)
	}
	l := &a.send.out[m.To]
	h := envelope.Header{
		Run: a.cfg.Run, Sender: a.name, Receiver: a.cfg.Agents[m.To],
		Protocol: a.cfg.Protocol, Kind: m.Kind, Seq: l.next, NCCC: uint64(max(a.nccc, 0)),
	}
	envs := envelope.Split(h, m.Body, lim.MaxPayload)
	sm := sentMsg{seq: l.next, frags: make([][]byte, len(envs)), sentAt: time.Now(), wait: a.cfg.Timing.RetransmitAfter}
	for i := range envs {
		b, err := envs[i].Encode(lim.envelope())
		if err != nil {
			return fmt.Errorf("mqtt: agent %s: %s message to %s: %w", a.name, m.Kind, a.cfg.Agents[m.To], err)
		}
		sm.frags[i] = b
		sm.size += len(b)
	}
	l.next++
	a.touch(m.To)
	if publish {
		a.publishFrags(m.To, sm.frags)
	}
	a.send.add(m.To, sm)
	if o := a.cfg.Owner; o != nil && o[m.To] == o[a.me] {
		a.ctr.internal.Add(1)
	} else {
		size := int64(len(m.Kind) + len(m.Body))
		a.ctr.sent.Add(1)
		a.ctr.messageBytes.Add(size)
		maxInt64(&a.ctr.maxMessageBytes, size)
	}
	if len(envs) > 1 {
		a.ctr.fragmented.Add(1)
	}
	return nil
}

// touch records that the link with peer j carries traffic, so that the
// status reports its counters.
func (a *agent) touch(j int) {
	if k, found := slices.BinarySearch(a.active, j); !found {
		a.active = slices.Insert(a.active, k, j)
	}
}

func (a *agent) publishFrags(to int, frags [][]byte) {
	tp := a.layout.Inbox(a.cfg.Agents[to], a.name)
	for _, f := range frags {
		a.tr.publish(tp, false, f)
		a.ctr.envelopes.Add(1)
		a.ctr.envelopeBytes.Add(int64(len(f)))
	}
}

// retransmit publishes again the messages to peer to that are due.
func (a *agent) retransmit(to int, all bool, now time.Time) {
	t := a.cfg.Timing.RetransmitAfter
	due := a.send.due(to, all, now, t, 8*t)
	for _, m := range due {
		a.publishFrags(to, m.frags)
		a.ctr.retransmitted.Add(int64(len(m.frags)))
	}
	if len(due) > 0 {
		why := "not acknowledged in time"
		if all {
			why = "the peer asked"
		}
		a.log.Info("retransmitting", "peer", a.cfg.Agents[to], "messages", len(due), "from seq", due[0].seq, "why", why)
	}
}

// replaceConnection reconnects on a goroutine of its own; a reconnection
// that fails for good (the broker refuses the client) ends the run with
// its error rather than leaving the agent waiting on no connection.
func (a *agent) replaceConnection(ctx context.Context) {
	go func() {
		if err := a.tr.reconnect(ctx); err != nil && ctx.Err() == nil {
			a.mbox.push(item{kind: itemFatal, err: fmt.Errorf("mqtt: agent %s: %w", a.name, err)})
		}
	}()
}

func (a *agent) onTick(ctx context.Context, now time.Time) {
	if a.echoWant != 0 && now.After(a.echoDeadline) {
		// Not an echo: the agent must not start before its own status
		// has come back (see step), so echoWant stays set. The
		// admission slot goes back as after an echo, so that a slow or
		// silent broker does not hold up the process's other agents.
		a.admitted()
		if arrived := a.tr.arrived.Load(); arrived > a.arrived {
			// The connection delivers, slowly (large payloads ahead
			// of the echo, a loaded machine): a new one would be sent
			// the retained messages again, ahead of the echo again.
			a.log.Warn("own status not echoed yet, but the connection delivers; waiting on",
				"waited", a.cfg.Timing.ConnectTimeout, "received", arrived-a.arrived)
			a.echoDeadline, a.arrived = now.Add(a.cfg.Timing.ConnectTimeout), arrived
		} else {
			// Subscribed, yet nothing came: the broker lost track of
			// this client (mochi v2.7.9 can, when a client id
			// reconnects while its previous clean session is torn
			// down) or its ACL lets us subscribe to topics it will
			// not deliver. The next connection's item sets the
			// deadline again.
			a.log.Warn("the broker delivers nothing on this connection (own status not echoed); reconnecting",
				"waited", a.cfg.Timing.ConnectTimeout)
			a.echoDeadline = now.Add(farFuture)
			a.replaceConnection(ctx)
		}
	}
	if a.started && now.Sub(a.lastResend) >= a.cfg.Timing.RetransmitAfter/16 {
		// Only links this agent has sent on hold messages to resend. A
		// message is overdue RetransmitAfter after it went out at the
		// earliest, so looking 16 times per RetransmitAfter is enough:
		// looking every tick cost a 251-agent run a tenth of its CPU.
		a.lastResend = now
		for _, j := range a.active {
			a.retransmit(j, false, now)
		}
	}
	if !a.started && now.Sub(a.lastWaitLog) >= 5*time.Second {
		a.lastWaitLog = now
		var missing []string
		for _, j := range a.watch {
			if !a.peer(j).seen {
				missing = append(missing, a.cfg.Agents[j])
			}
		}
		a.log.Info("waiting for agents", "missing", missing, "connected", a.connected)
	}
}
