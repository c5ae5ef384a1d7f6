package mqtt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"

	"github.com/hearth-dcop/hearth/mqtt/envelope"
	"github.com/hearth-dcop/hearth/mqtt/sign"
	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// transport is one agent's paho client. It owns the connection, the
// subscriptions and the presence topic; everything it receives goes into
// the mailbox, and its handlers never block paho's goroutines.
type transport struct {
	cfg    AgentConfig
	name   string
	layout topic.Layout
	client paho.Client
	mbox   *mailbox
	ctr    *counters
	log    *slog.Logger
	// signer signs what the agent publishes (nil: unsigned); open
	// checks what it receives.
	signer *sign.Signer
	open   *opener

	// refused receives the broker's refusal of the first connection
	// (credentials, client id): retrying cannot help, so connect fails.
	refused  chan error
	failures atomic.Int64
	// arrived counts every message the client received, on any topic
	// (the agent's deadline for its own status's echo tells a slow
	// connection from one that delivers nothing by it).
	arrived atomic.Int64

	// stop is closed by close, to end a reconnection in progress.
	stop     chan struct{}
	stopOnce sync.Once

	mu     sync.Mutex // serialises reconnect and close
	closed bool

	// listenTopics are the topics of the Listener this client carries
	// (Config.Listen), nil for none: looked up for every message.
	listenTopics map[string]bool
}

func newTransport(cfg AgentConfig, mbox *mailbox, ctr *counters, log *slog.Logger) *transport {
	t := &transport{
		cfg: cfg, name: cfg.Agents[cfg.Agent],
		layout: topic.Layout{Prefix: cfg.Prefix, Run: cfg.Run},
		mbox:   mbox, ctr: ctr, log: log,
		refused: make(chan error, 1),
		stop:    make(chan struct{}),
	}
	if l := t.listener(); l != nil {
		t.listenTopics = map[string]bool{}
		for _, tp := range l.Topics {
			t.listenTopics[tp] = true
		}
	}
	var signers map[string]string // only a signed run needs them
	if cfg.Keys != nil {
		signers = make(map[string]string, len(cfg.Agents))
		for i, a := range cfg.Agents {
			signers[a] = cfg.signerOf(i)
		}
	}
	t.signer = cfg.Keys.Signer(cfg.signerOf(cfg.Agent))
	t.open = newOpener(cfg.Keys, cfg.Prefix, signers)
	tm := cfg.Timing
	keepAlive := tm.KeepAlive
	if cfg.inMemory {
		// See AgentConfig.inMemory: in effect none (0 would be none,
		// but mochi warns about every such client).
		keepAlive = memoryKeepAlive
	}
	will := t.presence("offline")
	o := paho.NewClientOptions().
		AddBroker(cfg.Broker.URL).
		SetClientID(cfg.ClientID).
		SetUsername(cfg.Broker.Username).
		SetPassword(cfg.Broker.Password).
		SetTLSConfig(cfg.Broker.TLS).
		SetProtocolVersion(4).
		// A persistent session: the broker queues QoS 1 messages for
		// this client's subscriptions while it is away.
		SetCleanSession(false).
		SetAutoReconnect(true).
		SetConnectRetry(true).
		SetConnectRetryInterval(min(time.Second, tm.ReconnectMax)).
		SetMaxReconnectInterval(tm.ReconnectMax).
		SetConnectTimeout(tm.ConnectTimeout).
		SetKeepAlive(keepAlive).
		SetPingTimeout(min(10*time.Second, tm.KeepAlive)).
		SetOrderMatters(true).
		SetBinaryWill(topic.PresenceTopic(cfg.Prefix, t.name), will, 1, true).
		SetDefaultPublishHandler(t.onMessage).
		SetOnConnectHandler(t.onConnect).
		SetConnectionLostHandler(func(_ paho.Client, err error) {
			t.log.Warn("MQTT connection lost; reconnecting", "err", err)
		}).
		SetConnectionNotificationHandler(t.onNotification)
	if dial := cfg.Broker.Dial; dial != nil {
		o.SetCustomOpenConnectionFn(func(*url.URL, paho.ClientOptions) (net.Conn, error) {
			ctx, cancel := context.WithTimeout(context.Background(), tm.ConnectTimeout)
			defer cancel()
			return dial(ctx)
		})
	}
	attached := newCopyStore().attach(o)
	t.client = paho.NewClient(o)
	attached(t.client)
	return t
}

// memoryKeepAlive is the keep-alive of an agent on a memory pipe: under
// MQTT's 16-bit limit in seconds, and long enough never to fire.
const memoryKeepAlive = 18 * time.Hour

// connect starts the client and waits for the first connection (paho
// keeps retrying until then) or for ctx.
func (t *transport) connect(ctx context.Context) error {
	tok := t.client.Connect()
	select {
	case <-tok.Done():
		if err := tok.Error(); err != nil {
			return fmt.Errorf("mqtt: connect to %s: %w", t.cfg.Broker.URL, err)
		}
		return nil
	case err := <-t.refused:
		t.client.Disconnect(0)
		return fmt.Errorf("mqtt: %s refused user %q with client id %q: %w", t.cfg.Broker.URL, t.cfg.Broker.Username, t.cfg.ClientID, err)
	case <-ctx.Done():
		t.client.Disconnect(0)
		return fmt.Errorf("mqtt: connect to %s: %w", t.cfg.Broker.URL, ctx.Err())
	}
}

// onNotification logs failed connection attempts (the first few, then
// one in a hundred: paho retries forever) and reports a refusal.
func (t *transport) onNotification(_ paho.Client, n paho.ConnectionNotification) {
	f, ok := n.(paho.ConnectionNotificationFailed)
	if !ok {
		return
	}
	if k := t.failures.Add(1); k <= 3 || k%100 == 0 {
		t.log.Warn("MQTT connection attempt failed", "broker", t.cfg.Broker.URL, "attempt", k, "err", f.Reason)
	}
	for _, e := range []error{packets.ErrorRefusedBadUsernameOrPassword, packets.ErrorRefusedNotAuthorised, packets.ErrorRefusedIDRejected} {
		if errors.Is(f.Reason, e) {
			select {
			case t.refused <- f.Reason:
			default:
			}
		}
	}
}

// onMessage is paho's handler for every subscription (and for messages a
// persistent session delivers before the subscriptions are renewed). It
// only queues: with OrderMatters paho calls it on its own goroutine, and
// the PUBACK goes out when it returns, so the message is then the agent's.
func (t *transport) onMessage(_ paho.Client, m paho.Message) {
	t.arrived.Add(1)
	if t.listenTopics != nil && t.listenTopics[m.Topic()] {
		// The listener (Control) checks the signatures of what it takes.
		t.cfg.Listen.Handle(m.Topic(), m.Payload(), m.Retained())
		return
	}
	payload, _, reason, err := t.open.open(m.Topic(), m.Retained(), m.Payload())
	if reason != "" {
		t.ctr.drop(t.log, reason, "topic", m.Topic(), "err", err)
		return
	}
	it := item{kind: itemMessage, topic: m.Topic(), payload: payload}
	it.control = len(it.payload) <= maxControlBytes &&
		(envelope.IsAck(it.payload) || topic.Parse(t.cfg.Prefix, it.topic).Kind != topic.InboxTopic)
	t.mbox.push(it)
}

// maxControlBytes bounds the status, presence and acknowledgement payloads
// the mailbox always accepts: a status is a few numbers per link, an
// acknowledgement a few names and numbers, and anything larger is refused
// by its decoder anyway. Refusing an acknowledgement would make the agent
// ask every peer to retransmit (a resync) for nothing.
const maxControlBytes = 64 << 10

// onConnect runs on a goroutine of its own after every (re)connection:
// it renews the subscriptions, whatever the broker kept, then republishes
// presence, then tells the agent, which republishes its status with a new
// generation. Subscribing first guarantees that a peer that sees the
// status can send to the inbox.
//
// Every subscription is QoS 1 but the multicast one, which is QoS 0 (see
// multicastQoS).
func (t *transport) onConnect(c paho.Client) {
	t.ctr.connects.Add(1)
	subs := map[string]byte{}
	for _, f := range t.filters() {
		subs[f] = 1
	}
	for _, f := range t.multicastFilters() {
		subs[f] = multicastQoS
	}
	if l := t.listener(); l != nil {
		for _, f := range l.Topics {
			subs[f] = 1
		}
	}
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			time.Sleep(min(t.cfg.Timing.ReconnectMax, 100*time.Millisecond) * time.Duration(min(attempt, 10)))
		}
		// No callback: paho would add a route per filter, scan every
		// route for every message it receives (hundreds per agent in a
		// large run) and hand the message to each match; the default
		// publish handler (onMessage) takes everything once instead.
		tok := c.SubscribeMultiple(subs, nil)
		for !tok.WaitTimeout(t.cfg.Timing.ConnectTimeout) {
			if !c.IsConnectionOpen() {
				return // the next connection subscribes again
			}
			t.log.Warn("MQTT subscription not acknowledged yet", "waited", t.cfg.Timing.ConnectTimeout)
		}
		if err := tok.Error(); err != nil {
			if !c.IsConnectionOpen() {
				return
			}
			t.log.Warn("MQTT subscription failed; retrying", "err", err)
			continue
		}
		failed := false
		for f, code := range tok.(*paho.SubscribeToken).Result() {
			switch {
			case code == 0x80:
				// MQTT 3.1.1's only failure code: refused, which
				// retrying will not change.
				t.mbox.push(item{kind: itemFatal, err: fmt.Errorf("mqtt: the broker refused the subscription to %s: check the user's access rules", f)})
				return
			case code > 2:
				// Not a 3.1.1 code: mochi answers 0x91 when the packet
				// id collides with one of a resumed session's queued
				// messages. A new attempt gets a new id.
				t.log.Warn("MQTT subscription failed; retrying", "filter", f, "code", fmt.Sprintf("%#x", code))
				failed = true
			}
		}
		if !failed {
			break
		}
	}
	c.Publish(topic.PresenceTopic(t.cfg.Prefix, t.name), 1, true, t.presence("online"))
	t.log.Info("MQTT connected", "broker", t.cfg.Broker.URL, "client", t.cfg.ClientID)
	t.mbox.push(item{kind: itemConnected})
}

// presence is the agent's presence payload in state.
func (t *transport) presence(state string) []byte {
	id := t.cfg.Identity
	p := presence{V: presenceVersion, Agent: t.name, State: state, Run: t.cfg.Run, Client: id.Client, Since: id.Since}.encode()
	return t.seal(topic.PresenceTopic(t.cfg.Prefix, t.name), p)
}

// listener is the Listener this agent's client carries (Config.Listen),
// or nil.
func (t *transport) listener() *Listener {
	if l := t.cfg.Listen; l != nil && l.ClientID == t.cfg.ClientID {
		return l
	}
	return nil
}

// multicastQoS is the QoS of the multicast subscription. A multicast is
// fanned out to every agent of the run, and at QoS 1 each copy costs the
// receiver a PUBACK and the broker its in-flight bookkeeping: in a
// 251-home SHDS run that was a sixth of the run's time. The copies need
// no broker-level guarantee: a multicast's message is also kept, per
// link, for retransmission on the receiver's inbox (QoS 1) until the
// receiver acknowledges it end to end, so a copy the broker drops, or
// does not queue for a receiver that is offline, is sent again when that
// receiver reconnects (its new generation) or when the acknowledgement is
// overdue.
const multicastQoS = 0

// filters are the agent's subscriptions: its inbox, every multicast of
// the run (never retained, so the wildcard is safe, see below), and the status and
// presence topics of every agent of the run, itself included (its own
// status comes back to it, see agent.onStatus). Statuses and presence are
// subscribed one topic at a time rather than with a '+': mochi v2.7.9
// reads a retained topic's path without its lock while scanning a
// wildcard subscription for retained messages, racing with a retained
// publication to that topic; a topic without wildcards takes a locked
// path.
//
// With Config.Neighbours the statuses and presence are those of the agents
// it watches (itself, its neighbours, its tree parent and children) and
// the multicasts those of its neighbours, each topic on its own.
func (t *transport) filters() []string {
	fs := []string{t.layout.InboxFilter(t.name)}
	if t.cfg.Neighbours == nil {
		fs = append(fs, t.layout.MulticastFilter())
		for _, a := range t.cfg.Agents {
			fs = append(fs, t.layout.Status(a), topic.PresenceTopic(t.cfg.Prefix, a))
		}
		return fs
	}
	fs = append(fs, t.layout.Status(t.name), topic.PresenceTopic(t.cfg.Prefix, t.name))
	for _, j := range t.cfg.watched(t.cfg.Agent) {
		a := t.cfg.Agents[j]
		fs = append(fs, t.layout.Status(a), topic.PresenceTopic(t.cfg.Prefix, a))
	}
	return append(fs, t.multicastFilters()...)
}

// multicastFilters are the multicast topics the agent subscribes to (at
// multicastQoS): every agent's, or its neighbours' with Config.Neighbours
// — unless they are most of the run (a complete graph), where one
// wildcard costs the broker less than hundreds of topics, and the few
// multicasts of other agents are skipped.
func (t *transport) multicastFilters() []string {
	if nb := t.cfg.Neighbours; nb == nil || float64(len(nb[t.cfg.Agent])) >= multicastMin*float64(len(t.cfg.Agents)-1) {
		return []string{t.layout.MulticastFilter()}
	}
	var fs []string
	for _, j := range t.cfg.Neighbours[t.cfg.Agent] {
		fs = append(fs, t.layout.Multicast(t.cfg.Agents[j]))
	}
	return fs
}

// publish sends a QoS 1 message. While disconnected paho stores it and
// sends it after reconnecting; the token completes on PUBACK (or when a
// reconnection takes the message over).
func (t *transport) publish(tp string, retained bool, payload []byte) paho.Token {
	return t.client.Publish(tp, 1, retained, t.seal(tp, payload))
}

// seal signs payload for topic tp when the agent has a key.
func (t *transport) seal(tp string, payload []byte) []byte {
	if t.signer == nil {
		return payload
	}
	return t.signer.Seal(tp, payload)
}

// close leaves the run cleanly: it drops the subscriptions (the persistent
// session outlives the run, and would collect messages for nobody), marks
// the agent offline, and disconnects. It waits at most timeout for each
// step.
func (t *transport) close(timeout time.Duration) {
	t.stopOnce.Do(func() { close(t.stop) })
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.client.IsConnectionOpen() {
		tok := t.client.Unsubscribe(t.filters()...)
		tok.WaitTimeout(timeout)
		t.client.Publish(topic.PresenceTopic(t.cfg.Prefix, t.name), 1, true, t.presence("offline")).WaitTimeout(timeout)
	}
	t.client.Disconnect(uint(min(timeout, 250*time.Millisecond) / time.Millisecond))
}

// reconnect drops the connection and opens a new one (onConnect then runs
// again). The agent calls it, on a goroutine of its own, when the broker
// accepted its subscriptions but does not deliver on them.
//
// paho's Connect can fail at once (Disconnect returns after its quiesce
// time while paho may still be disconnecting, and Connect then refuses to
// start), and after a Disconnect paho does not reconnect by itself: so
// reconnect tries again, with a back-off doubling up to
// Timing.ReconnectMax, until it is connected, ctx ends or close is called.
// It returns an error when ctx ends first or the broker refuses the
// client (credentials, client id), which no further attempt would change;
// nil when connected or closed.
func (t *transport) reconnect(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil
	}
	// Only this reconnection's refusals count.
	select {
	case <-t.refused:
	default:
	}
	t.client.Disconnect(100)
	// Disconnect works on a goroutine of its own: until it has begun,
	// paho still reports the old connection, and a Connect now would be
	// a no-op that the disconnection then undoes.
	for i := 0; i < 200 && t.client.IsConnected(); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	wait := min(50*time.Millisecond, t.cfg.Timing.ReconnectMax)
	for attempt := 1; ; attempt++ {
		tok := t.client.Connect()
		select {
		case <-tok.Done():
			err := tok.Error()
			if err == nil {
				return nil
			}
			if attempt <= 3 || attempt%100 == 0 {
				t.log.Warn("MQTT reconnection failed; retrying", "attempt", attempt, "err", err, "in", wait)
			}
		case err := <-t.refused:
			t.client.Disconnect(0)
			return fmt.Errorf("mqtt: reconnecting: %s refused user %q with client id %q: %w", t.cfg.Broker.URL, t.cfg.Broker.Username, t.cfg.ClientID, err)
		case <-ctx.Done():
			return fmt.Errorf("mqtt: reconnecting to %s: %w", t.cfg.Broker.URL, ctx.Err())
		case <-t.stop:
			return nil
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return fmt.Errorf("mqtt: reconnecting to %s: %w", t.cfg.Broker.URL, ctx.Err())
		case <-t.stop:
			return nil
		}
		wait = min(2*wait, t.cfg.Timing.ReconnectMax)
	}
}
