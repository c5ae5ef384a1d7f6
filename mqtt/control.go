package mqtt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/mqtt/sign"
	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// Control is the MQTT client of a long-running agent (`hearth run`)
// beside the clients RunAgent makes for a round: it keeps the home
// present, listens for commands on <prefix>/cmd (and, for homes, for the
// other homes' round requests on <prefix>/cmd/<home>), watches the other
// homes' presence, and after a round publishes the result (and a home's
// plan).
//
// Commands are never lost and never reordered, also while a round runs.
// Brokers with per-home rules allow one connection per home (the embedded
// broker requires the client id topic.ClientID(prefix, home); Mosquitto
// with use_username_as_clientid makes it the username), so the round's
// client, which has the home's client id, takes the connection over for
// the round. Both clients therefore share one persistent session
// (CleanSession false from Control's second connection on): the broker
// queues what arrives on the command topics while neither is connected,
// and the round's client subscribes to them too and hands what it
// receives to Control (Listener, Config.Listen). paho delivers in order
// (SetOrderMatters(true)), and the handlers only queue.
//
// The queue decides the order, not arrival (see Next): every home runs
// the rounds asked for in the order of their creation time, then id.
//
// Its fields are fixed at creation except those under mu: paho calls the
// handlers on its own goroutines.
type Control struct {
	name     string
	cfg      Config
	log      *slog.Logger
	prefix   string
	cmdTopic string
	// serving is false for the one-shot clients that publish the result
	// of `hearth run --once` and abandon a run: they subscribe to nothing
	// and leave presence to the round's clients.
	serving bool
	// id names this process in presence messages (Identity).
	id       Identity
	refused  chan error
	conflict chan error
	// queued is signalled (capacity 1) when the queue changes.
	queued chan struct{}
	// client is set by Connect, under mu, on the caller's goroutine
	// (which alone calls Connect, Pause, Publish and Close); paho's
	// goroutines read it under mu.
	client paho.Client
	// ready is closed once a connection's subscriptions are in place;
	// echo once the broker delivered the connection's own presence back
	// to it (see Connect).
	readyMu sync.Mutex
	ready   chan struct{}
	echo    chan struct{}

	mu         sync.Mutex
	neighbours []string
	// homes are every home of the neighbourhood (homes only), whose
	// presence says which round each is in; requestTopics their
	// <prefix>/cmd/<home>.
	homes         []string
	requestTopics []string
	online        map[string]bool
	allSeen       bool
	// conns counts the connections made.
	conns int
	// queue holds the rounds asked for and not yet taken, in order
	// (before); taken the last rounds taken out of it.
	queue  []queuedRound
	taken  []string
	maxAge time.Duration
	settle time.Duration
	// others are the other processes seen acting as this home.
	others map[string]bool

	// signer signs what c publishes under the prefix (nil: unsigned);
	// open checks what it receives, and ctr counts what it drops.
	signer *sign.Signer
	open   *opener
	ctr    counters
}

// Identity names a process in its presence messages, so that a second
// process started for the same home is told apart from the first and
// from a previous incarnation (see Control.onOwnPresence).
type Identity struct {
	// Client is unique per process: host, pid and a random number.
	Client string
	// Since is when the process started, in Unix nanoseconds; of two
	// processes for one home, the one started later stops.
	Since int64
}

// NewIdentity returns a fresh identity for this process.
func NewIdentity() Identity {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "host"
	}
	return Identity{Client: fmt.Sprintf("%s/%d/%04x", host, os.Getpid(), rand.Uint32()&0xffff), Since: time.Now().UnixNano()}
}

// older reports whether a was started before b (the client id breaks a
// tie), so that two processes decide alike which of them stops.
func (a Identity) older(b Identity) bool {
	if a.Since != b.Since {
		return a.Since < b.Since
	}
	return a.Client < b.Client
}

// ErrDuplicate is wrapped by the error of a process that finds another
// process running its home.
var ErrDuplicate = errors.New("another process runs this home")

// queuedRound is a round in the queue and when it may be taken.
type queuedRound struct {
	req      Request
	eligible time.Time
}

// DefaultSettle is how long a round asked for waits in the queue before
// it may run, so that the other rounds of a burst (which every home
// receives within milliseconds) are queued too and every home takes the
// same first one.
const DefaultSettle = 500 * time.Millisecond

// defaultMaxAge bounds the age of a command when the rounds have no
// time-out.
const defaultMaxAge = 10 * time.Minute

// maxSkew is how far in the future a command's creation time may lie
// (clocks of the homes and the controller differ a little).
const maxSkew = time.Minute

// maxTaken is how many rounds taken the queue remembers, to drop a
// command repeated (a retained command delivered again at every
// subscription).
const maxTaken = 256

// NewControl returns the control client of agent name (whose client id
// and credentials are cfg's; cfg.Agents is not read) that watches the
// presence of neighbours. A serving client subscribes to commands and
// keeps the agent present; one that is not only publishes (a result after
// `hearth run --once`).
func NewControl(cfg Config, name string, neighbours []string, serving bool) *Control {
	prefix := cfg.Prefix
	if prefix == "" {
		prefix = DefaultPrefix
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	id := cfg.Identity
	if id.Client == "" {
		id = NewIdentity()
	}
	return &Control{
		name: name, cfg: cfg, log: log, neighbours: slices.Clone(neighbours),
		prefix: prefix, cmdTopic: topic.CmdTopic(prefix), serving: serving, id: id,
		refused: make(chan error, 1), conflict: make(chan error, 1), queued: make(chan struct{}, 1),
		online: map[string]bool{}, maxAge: defaultMaxAge, settle: DefaultSettle, others: map[string]bool{},
		signer: cfg.Keys.Signer(name), open: newOpener(cfg.Keys, prefix, nil),
	}
}

// Dropped counts the messages c dropped, by reason (the Drop… constants):
// unsigned, wrongly signed or replayed commands and presence.
func (c *Control) Dropped() map[string]int64 { return c.ctr.snapshot(c.name).Dropped }

// content returns the verified content of a message on topic tp and when
// it was signed (zero when c has no keys), or false after counting and
// logging the drop.
func (c *Control) content(tp string, retained bool, payload []byte) ([]byte, time.Time, bool) {
	b, at, reason, err := c.open.open(tp, retained, payload)
	if reason != "" {
		c.ctr.drop(c.log, reason, "topic", tp, "err", err)
		return nil, time.Time{}, false
	}
	return b, at, true
}

// seal signs payload for topic tp when c has a key and tp is under the
// prefix. Home Assistant's discovery configurations are left as they
// are: Home Assistant cannot verify, and refuses keys it does not know.
func (c *Control) seal(tp string, payload []byte) []byte {
	if c.signer == nil || !strings.HasPrefix(tp, c.prefix+"/") {
		return payload
	}
	return c.signer.Seal(tp, payload)
}

// SetTiming sets how old a command may be (the round time-out: a round
// asked for longer ago is over for every home, done or timed out; 0 keeps
// ten minutes) and how long a round waits in the queue (0 keeps
// DefaultSettle).
func (c *Control) SetTiming(maxAge, settle time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if maxAge > 0 {
		c.maxAge = maxAge
	}
	if settle > 0 {
		c.settle = settle
	}
}

// Queued is signalled when a round is queued; Next then says when it may
// run.
func (c *Control) Queued() <-chan struct{} { return c.queued }

// Conflict delivers the error of a newer process found running this
// home (wrapping ErrDuplicate): this one must stop.
func (c *Control) Conflict() <-chan error { return c.conflict }

// Prefix is the topic prefix c uses.
func (c *Control) Prefix() string { return c.prefix }

// CommandTopic is <prefix>/cmd, where a controller asks for rounds.
func (c *Control) CommandTopic() string { return c.cmdTopic }

// SetHomes makes c listen to the round requests of homes, watch their
// presence and that of neighbours (after a reload). It reports whether
// the subscriptions changed, which takes a new connection.
func (c *Control) SetHomes(homes, neighbours []string) bool {
	topics := make([]string, len(homes))
	for i, h := range homes {
		topics[i] = topic.HomeCmdTopic(c.prefix, h)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := !slices.Equal(topics, c.requestTopics) || !slices.Equal(neighbours, c.neighbours)
	c.requestTopics, c.neighbours, c.homes = topics, slices.Clone(neighbours), slices.Clone(homes)
	if changed {
		c.online, c.allSeen = map[string]bool{}, false
	}
	return changed
}

func (c *Control) presence(state string) []byte {
	b := presence{V: presenceVersion, Agent: c.name, State: state, Client: c.id.Client, Since: c.id.Since}.encode()
	return c.seal(topic.PresenceTopic(c.prefix, c.name), b)
}

func (c *Control) options() *paho.ClientOptions {
	cfg, t := c.cfg, c.cfg.Timing
	o := paho.NewClientOptions().
		AddBroker(cfg.Broker.URL).
		SetClientID(topic.ClientID(c.prefix, c.name)).
		SetUsername(cfg.Broker.Username).
		SetPassword(cfg.Broker.Password).
		SetTLSConfig(cfg.Broker.TLS).
		SetProtocolVersion(4).
		// The session persists (cleanStart discarded what a killed
		// process left behind), so that commands published while the
		// round's client takes over are queued for whichever connects
		// next.
		SetCleanSession(!c.serving).
		SetAutoReconnect(true).
		SetConnectRetry(true).
		SetConnectRetryInterval(min(time.Second, t.ReconnectMax)).
		SetMaxReconnectInterval(t.ReconnectMax).
		SetConnectTimeout(10 * time.Second).
		SetKeepAlive(t.KeepAlive).
		SetOrderMatters(true).
		SetDefaultPublishHandler(c.onMessage).
		SetOnConnectHandler(c.onConnect).
		SetConnectionLostHandler(func(_ paho.Client, err error) {
			c.log.Warn("MQTT connection lost; reconnecting", "err", err)
		}).
		SetConnectionNotificationHandler(func(_ paho.Client, n paho.ConnectionNotification) {
			if f, ok := n.(paho.ConnectionNotificationFailed); ok && Refused(f.Reason) {
				select {
				case c.refused <- f.Reason:
				default:
				}
			}
		})
	if c.serving {
		o.SetBinaryWill(topic.PresenceTopic(c.prefix, c.name), c.presence("offline"), 1, true)
	}
	return o
}

// claimWait is how long the first connection of a serving client waits
// before the process starts work: a process already running this home
// loses its connection to ours (one client id per home) and takes it back
// within its reconnection interval, which onOwnPresence then sees.
func (c *Control) claimWait() time.Duration {
	return time.Second + 2*min(time.Second, c.cfg.Timing.ReconnectMax)
}

// Connect opens a new connection, unless one is open or being
// re-established, and waits for it. The process's first connection also
// waits claimWait for another process running this home, and returns an
// error wrapping ErrDuplicate if it finds one.
//
// The first connection of a serving client also checks that the broker
// delivers to it: its own presence must come back. A broker may still be
// disposing of cleanStart's session with the same client id when the
// persistent one arrives, and forget the new connection with the old
// (Mochi 2.7 removes the client id's entry after a taken-over check, so
// the new client's subscriptions stay but nothing reaches it). A home so
// deafened misses every round; one fresh connection cures it.
func (c *Control) Connect(ctx context.Context) error {
	if c.client != nil && c.client.IsConnected() {
		return nil
	}
	c.mu.Lock()
	first := c.conns == 0
	c.mu.Unlock()
	if first && c.serving {
		if err := c.cleanStart(ctx); err != nil {
			return err
		}
	}
	if err := c.dial(ctx); err != nil {
		return err
	}
	if !first || !c.serving {
		return nil
	}
	if err := c.claim(ctx); err != nil {
		return err
	}
	if c.echoed() {
		return nil
	}
	c.log.Warn("the broker does not deliver to this home's connection: connecting again", "broker", c.cfg.Broker.URL)
	c.client.Disconnect(0)
	if err := c.dial(ctx); err != nil {
		return err
	}
	select {
	case <-c.echoChan():
	case err := <-c.conflict:
		c.client.Disconnect(0)
		return err
	case <-time.After(c.claimWait()):
		// A broker whose rules refuse this home its own presence topic
		// never echoes; the subscription's warning said so.
		c.log.Warn("this home's own presence did not come back: check the broker's access rules", "broker", c.cfg.Broker.URL)
	case <-ctx.Done():
		c.client.Disconnect(0)
		return ctx.Err()
	}
	return nil
}

// dial makes one connection and waits until its subscriptions are in
// place.
func (c *Control) dial(ctx context.Context) error {
	c.readyMu.Lock()
	c.ready = make(chan struct{})
	c.echo = make(chan struct{})
	ready := c.ready
	c.readyMu.Unlock()
	o := c.options()
	// A persistent session resumes stored publishes on reconnect; the
	// copying store keeps paho from setting DUP on a packet its writer
	// is still sending, and the resume from claiming a message sent on
	// the new connection (see store.go).
	attached := newCopyStore().attach(o)
	cl := paho.NewClient(o)
	attached(cl)
	c.mu.Lock()
	c.client = cl
	c.mu.Unlock()
	tok := cl.Connect()
	select {
	case <-tok.Done():
		if err := tok.Error(); err != nil {
			return fmt.Errorf("connect to %s: %w", c.cfg.Broker.URL, err)
		}
		// A controller that reacts to a result must find the
		// command topic subscribed.
		select {
		case <-ready:
		case <-ctx.Done():
			cl.Disconnect(0)
			return ctx.Err()
		}
	case err := <-c.refused:
		cl.Disconnect(0)
		return fmt.Errorf("%s refused user %q: %w", c.cfg.Broker.URL, c.cfg.Broker.Username, err)
	case <-ctx.Done():
		cl.Disconnect(0)
		return ctx.Err()
	}
	return nil
}

// claim waits claimWait after the process's first connection for another
// process running this home.
func (c *Control) claim(ctx context.Context) error {
	select {
	case err := <-c.conflict:
		c.client.Disconnect(0)
		return err
	case <-time.After(c.claimWait()):
		return nil
	case <-ctx.Done():
		c.client.Disconnect(0)
		return ctx.Err()
	}
}

// echoChan is the current connection's echo channel.
func (c *Control) echoChan() <-chan struct{} {
	c.readyMu.Lock()
	defer c.readyMu.Unlock()
	return c.echo
}

// echoed reports whether the current connection's own presence came back.
func (c *Control) echoed() bool {
	select {
	case <-c.echoChan():
		return true
	default:
		return false
	}
}

// echoSeen records that the broker delivered this process's own presence
// live (not as a retained message, which a subscription gets anyway).
func (c *Control) echoSeen() {
	c.readyMu.Lock()
	defer c.readyMu.Unlock()
	if c.echo == nil {
		return
	}
	select {
	case <-c.echo:
	default:
		close(c.echo)
	}
}

// cleanStart discards the session a killed process of this home left on
// the broker (its subscriptions to a run's topics, queued messages): a
// connection with a clean session, closed at once, before the persistent
// one. An MQTT 3.1.1 clean session ends with its connection, so the
// persistent session cannot simply start clean.
func (c *Control) cleanStart(ctx context.Context) error {
	t := c.cfg.Timing
	o := paho.NewClientOptions().
		AddBroker(c.cfg.Broker.URL).
		SetClientID(topic.ClientID(c.prefix, c.name)).
		SetUsername(c.cfg.Broker.Username).
		SetPassword(c.cfg.Broker.Password).
		SetTLSConfig(c.cfg.Broker.TLS).
		SetProtocolVersion(4).
		SetCleanSession(true).
		SetAutoReconnect(false).
		SetConnectRetry(true).
		SetConnectRetryInterval(min(time.Second, t.ReconnectMax)).
		SetConnectTimeout(10 * time.Second).
		SetKeepAlive(t.KeepAlive).
		SetConnectionNotificationHandler(func(_ paho.Client, n paho.ConnectionNotification) {
			if f, ok := n.(paho.ConnectionNotificationFailed); ok && Refused(f.Reason) {
				select {
				case c.refused <- f.Reason:
				default:
				}
			}
		})
	cl := paho.NewClient(o)
	tok := cl.Connect()
	select {
	case <-tok.Done():
		if err := tok.Error(); err != nil {
			return fmt.Errorf("connect to %s: %w", c.cfg.Broker.URL, err)
		}
		cl.Disconnect(50)
		return nil
	case err := <-c.refused:
		cl.Disconnect(0)
		return fmt.Errorf("%s refused user %q: %w", c.cfg.Broker.URL, c.cfg.Broker.Username, err)
	case <-ctx.Done():
		cl.Disconnect(0)
		return ctx.Err()
	}
}

// subscriptions are the topics a serving client subscribes to: the
// command topics, then every home's presence (its own included).
func (c *Control) subscriptions() (commands []string, presence []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	commands = append([]string{c.cmdTopic}, c.requestTopics...)
	watch := c.homes
	if watch == nil {
		watch = c.neighbours
	}
	presence = []string{topic.PresenceTopic(c.prefix, c.name)}
	for _, h := range watch {
		if h != c.name {
			presence = append(presence, topic.PresenceTopic(c.prefix, h))
		}
	}
	return commands, presence
}

// Listener is what the round's client with the home's client id carries
// for Control while it holds the connection (Config.Listen).
func (c *Control) Listener() *Listener {
	if !c.serving {
		return nil
	}
	cmds, _ := c.subscriptions()
	return &Listener{ClientID: topic.ClientID(c.prefix, c.name), Topics: cmds, Handle: c.handle}
}

// onConnect subscribes to every topic by name, as the MQTT runtime does
// (no wildcards: the embedded broker's retained index races on them), and
// announces the home. Every message goes to the default handler
// (onMessage), also those a resumed session delivers before the
// subscriptions are renewed.
func (c *Control) onConnect(cl paho.Client) {
	defer func() {
		c.readyMu.Lock()
		defer c.readyMu.Unlock()
		select {
		case <-c.ready:
		default:
			close(c.ready)
		}
	}()
	if !c.serving {
		return
	}
	c.mu.Lock()
	c.conns++
	neighbours := len(c.neighbours)
	c.mu.Unlock()
	cmds, pres := c.subscriptions()
	subs := map[string]byte{}
	for _, s := range append(cmds, pres...) {
		subs[s] = 1
	}
	// One SUBSCRIBE for all, as the MQTT runtime does: one round trip,
	// and one wait at most when the broker is slow to answer.
	tok := cl.SubscribeMultiple(subs, nil)
	if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		c.log.Warn("MQTT subscription failed", "topics", len(subs), "err", tok.Error())
	} else {
		for s, st := range tok.(*paho.SubscribeToken).Result() {
			if st == 0x80 {
				c.log.Warn("the broker refuses the subscription: check its access rules", "topic", s)
			}
		}
	}
	cl.Publish(topic.PresenceTopic(c.prefix, c.name), 1, true, c.presence("online"))
	c.log.Info("MQTT connected", "broker", c.cfg.Broker.URL, "neighbours", neighbours, "client", c.id.Client)
}

func (c *Control) onMessage(_ paho.Client, m paho.Message) {
	c.handle(m.Topic(), m.Payload(), m.Retained())
}

// handle takes a message from Control's connection or from the round's
// client (Listener); it never blocks.
func (c *Control) handle(tp string, raw []byte, retained bool) {
	b, signed, ok := c.content(tp, retained, raw)
	if !ok {
		return
	}
	p := topic.Parse(c.prefix, tp)
	switch {
	case p.Kind == topic.CmdTopicKind:
		c.onCommand(tp, b, retained, signed)
	case p.Kind == topic.PresenceTopicKind && p.Agent == c.name:
		c.onOwnPresence(b, retained)
	case p.Kind == topic.PresenceTopicKind:
		c.onPresence(p.Agent, b)
	}
}

// Request is a round to run: from a command, a home's request, the
// schedule, SIGHUP, changed inputs, or another home found in a round.
type Request struct {
	ID string
	// At is the instant the round plans from (a command's "at", a
	// scheduled round's time); zero means the round's own start.
	At time.Time
	// Created is when the round was asked for (a command's "created", a
	// scheduled round's time): the queue runs rounds in the order of
	// Created, then ID. Zero for a round joined because another home is
	// in it, which goes first.
	Created time.Time
	// From says what asked, for the log.
	From string
	// Signed is when the command was signed (mqtt/sign), which its
	// signer's key vouches for; zero when unsigned.
	Signed time.Time
}

// before is the order every home runs queued rounds in.
func (r Request) before(o Request) bool {
	if !r.Created.Equal(o.Created) {
		return r.Created.Before(o.Created)
	}
	return r.ID < o.ID
}

// roundCommand is the payload of <prefix>/cmd and <prefix>/cmd/<home>.
// Round may be a JSON string or number; At (RFC 3339) is the instant the
// homes plan from, so that every home puts slot 0 at the same time;
// Created (RFC 3339, fractions of a second allowed) is when the round was
// asked for, which orders the rounds; From names the home that asks.
type roundCommand struct {
	Round   json.RawMessage `json:"round"`
	At      string          `json:"at,omitempty"`
	Created string          `json:"created,omitempty"`
	From    string          `json:"from,omitempty"`
}

// ParseCommand returns the round a command asks for.
func ParseCommand(b []byte) (Request, error) {
	if len(b) > 4096 {
		return Request{}, fmt.Errorf("command of %d bytes", len(b))
	}
	var cmd roundCommand
	// Unknown fields are allowed, for controllers newer than this agent.
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&cmd); err != nil {
		return Request{}, fmt.Errorf("command: %w", err)
	}
	if d.More() {
		return Request{}, errors.New("command: trailing data")
	}
	var id string
	if err := json.Unmarshal(cmd.Round, &id); err != nil {
		var n json.Number
		if err := json.Unmarshal(cmd.Round, &n); err != nil {
			return Request{}, errors.New(`command: want {"round": "ID"}`)
		}
		id = n.String()
	}
	if err := CheckRoundID(id); err != nil {
		return Request{}, fmt.Errorf("command: %w", err)
	}
	req := Request{ID: id, From: "command"}
	if cmd.At != "" {
		at, err := time.Parse(time.RFC3339, cmd.At)
		if err != nil {
			return Request{}, fmt.Errorf("command: at %q is not an RFC 3339 time", cmd.At)
		}
		req.At = at
	}
	if cmd.Created != "" {
		cr, err := time.Parse(time.RFC3339Nano, cmd.Created)
		if err != nil {
			return Request{}, fmt.Errorf("command: created %q is not an RFC 3339 time", cmd.Created)
		}
		req.Created = cr
	}
	if cmd.From != "" {
		req.From = "home " + strconv.Quote(cmd.From)
	}
	return req, nil
}

// EncodeCommand is the payload of a command asking for req (its ID, At,
// Created) from home from ("" for a controller).
func EncodeCommand(req Request, from string) ([]byte, error) {
	id, err := json.Marshal(req.ID)
	if err != nil {
		return nil, err
	}
	cmd := roundCommand{Round: id, From: from}
	if !req.At.IsZero() {
		cmd.At = req.At.Format(time.RFC3339)
	}
	if !req.Created.IsZero() {
		cmd.Created = req.Created.Format(time.RFC3339Nano)
	}
	return json.Marshal(cmd)
}

// onCommand takes a command or a home's request; it never blocks.
//
// A command says when it was created. One older than the round time-out
// (SetTiming) is stale — its round is over for every home, done or timed
// out: a retained command found at start, or one queued for a process
// that was stopped — and one created over a minute in the future is
// refused. A command without a creation time (a controller's bare
// mosquitto_pub) takes its arrival time; retained, it cannot be dated, so
// at the process's first connection it is taken as old news. Rounds
// queued or run lately are not queued again (a retained command comes
// again at every subscription).
func (c *Control) onCommand(tp string, b []byte, retained bool, signed time.Time) {
	req, err := ParseCommand(b)
	if err != nil {
		c.log.Warn("command ignored", "topic", tp, "err", err)
		return
	}
	req.Signed = signed
	now := time.Now()
	c.mu.Lock()
	first, maxAge := c.conns <= 1, c.maxAge
	c.mu.Unlock()
	switch {
	case req.Created.IsZero() && retained && first:
		c.log.Debug("undated retained command ignored", "topic", tp, "round", req.ID)
		return
	case req.Created.IsZero():
		req.Created = now
	case now.Sub(req.Created) > maxAge:
		c.log.Info("stale command ignored", "topic", tp, "round", req.ID, "created", req.Created.Format(time.RFC3339), "max_age", maxAge)
		return
	case req.Created.Sub(now) > maxSkew:
		c.log.Warn("command from the future ignored", "topic", tp, "round", req.ID, "created", req.Created.Format(time.RFC3339))
		return
	}
	if c.enqueue(req, now) {
		c.log.Info("command received", "round", req.ID, "from", req.From)
	}
}

// Enqueue queues req (a round the process decided on: the schedule, its
// own request), unless it is queued or was taken lately.
func (c *Control) Enqueue(req Request) {
	if req.Created.IsZero() {
		req.Created = time.Now()
	}
	c.enqueue(req, time.Now())
}

// enqueue queues req, eligible after the settling time, and reports
// whether it is news. A round queued because another home is in it takes
// the instant to plan from of a command for it, and stays first.
func (c *Control) enqueue(req Request, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if slices.Contains(c.taken, req.ID) {
		return false
	}
	if k := slices.IndexFunc(c.queue, func(q queuedRound) bool { return q.req.ID == req.ID }); k >= 0 {
		if q := &c.queue[k].req; q.Created.IsZero() && q.At.IsZero() {
			// Another home is in it: it stays first, with the
			// instant to plan from that the command gives.
			q.At = req.At
		}
		return false
	}
	q := queuedRound{req: req, eligible: now.Add(c.settle)}
	k, _ := slices.BinarySearchFunc(c.queue, q, func(a, b queuedRound) int {
		if a.req.before(b.req) {
			return -1
		}
		if b.req.before(a.req) {
			return 1
		}
		return 0
	})
	c.queue = slices.Insert(c.queue, k, q)
	select {
	case c.queued <- struct{}{}:
	default:
	}
	return true
}

// Next takes the first round of the queue when it may run; otherwise it
// returns how long until it may (0 when the queue is empty). Every home
// takes rounds in the same order — Created, then ID — whatever the order
// they arrived in; a round waits the settling time after it arrived, so
// that the rest of its burst is queued before the first is taken.
func (c *Control) Next(now time.Time) (Request, bool, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) == 0 {
		return Request{}, false, 0
	}
	// The first round decides, not an eligible later one: a later one
	// taken first would be taken out of order.
	if wait := c.queue[0].eligible.Sub(now); wait > 0 {
		return Request{}, false, wait
	}
	req := c.queue[0].req
	c.queue = slices.Delete(c.queue, 0, 1)
	c.takenAdd(req.ID)
	return req, true, 0
}

// Taken records that round id was run outside the queue (--run-id), so
// that a command for it is not queued.
func (c *Control) Taken(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.takenAdd(id)
}

func (c *Control) takenAdd(id string) {
	if slices.Contains(c.taken, id) {
		return
	}
	if len(c.taken) == maxTaken {
		c.taken = c.taken[1:]
	}
	c.taken = append(c.taken, id)
}

// onOwnPresence takes a message on this home's own presence topic. One
// from another process is evidence that it runs this home too: after
// this process first announced itself, only a process connected since
// can have put its presence (or, Mosquitto sending a client's last will
// when another takes its client id over, its will) there. At the first
// connection the retained message may be a previous incarnation's, dead
// or not yet noticed dead, and proves nothing; a live one does. Of the
// two processes the newer stops (Conflict) and the older goes on,
// announcing itself again.
func (c *Control) onOwnPresence(b []byte, retained bool) {
	pr, err := decodePresence(b, c.name)
	if err != nil || pr.Client == "" {
		return
	}
	if pr.Client == c.id.Client {
		if !retained {
			c.echoSeen()
		}
		return
	}
	c.mu.Lock()
	first := c.conns <= 1
	seen := c.others[pr.Client]
	c.others[pr.Client] = true
	c.mu.Unlock()
	if retained && first {
		c.log.Debug("a previous process's presence", "client", pr.Client)
		return
	}
	other := Identity{Client: pr.Client, Since: pr.Since}
	if other.older(c.id) {
		err := fmt.Errorf("%w: home %s already runs in process %s (started %s); refusing to run it twice: stop that process, or give this one another --home",
			ErrDuplicate, c.name, pr.Client, time.Unix(0, pr.Since).UTC().Format(time.RFC3339))
		select {
		case c.conflict <- err:
		default:
		}
		return
	}
	if !seen {
		c.log.Warn("another process connected as this home; it started later and will stop", "client", pr.Client)
	}
	c.mu.Lock()
	cl := c.client
	c.mu.Unlock()
	if cl != nil {
		cl.Publish(topic.PresenceTopic(c.prefix, c.name), 1, true, c.presence("online"))
	}
}

// onPresence takes another home's presence: it logs when every neighbour
// is present, and queues the round a home says it is in, unless it was
// run lately. That brings a home back into a round it missed — it was
// restarted, or stopped, while the others began it — whether or not a
// retained command still asks for it; the round's own checks then tell a
// run broken by the restart (run again as the next attempt) from a
// finished one.
func (c *Control) onPresence(home string, b []byte) {
	pr, err := decodePresence(b, home)
	if err != nil {
		return
	}
	if pr.State == "online" && pr.Run != "" {
		if id := RoundOfRun(pr.Run); CheckRoundID(id) == nil && c.enqueue(Request{ID: id, From: "home " + strconv.Quote(home) + " is in it"}, time.Now()) {
			c.log.Info("joining the round another home is in", "round", id, "home", home)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Contains(c.neighbours, home) {
		return
	}
	was := c.online[home]
	now := pr.State == "online"
	if was == now {
		return
	}
	c.online[home] = now
	n := 0
	for _, on := range c.online {
		if on {
			n++
		}
	}
	// Presence flips at every round (the round's clients leave), so
	// changes are debug; having every neighbour present is news.
	c.log.Debug("neighbour "+pr.State, "neighbour", home, "present", strconv.Itoa(n)+"/"+strconv.Itoa(len(c.neighbours)))
	if n == len(c.neighbours) && !c.allSeen {
		c.allSeen = true
		c.log.Info("every neighbour present", "neighbours", c.neighbours)
	}
}

// AttemptRun is the MQTT run id of attempt k (from 0) of a round. Every
// agent derives it the same way, so that after a broken run they meet
// again in the next one without talking.
func AttemptRun(round string, k int) string {
	if k == 0 {
		return round
	}
	return fmt.Sprintf("%s.retry%d", round, k)
}

// RoundOfRun is the round of run id run (AttemptRun's inverse).
func RoundOfRun(run string) string {
	i := strings.LastIndex(run, ".retry")
	if i < 0 {
		return run
	}
	k, err := strconv.Atoi(run[i+len(".retry"):])
	if err != nil || k < 1 || strconv.Itoa(k) != run[i+len(".retry"):] {
		return run
	}
	return run[:i]
}

// Pause disconnects for a round, whose clients take the home's client
// id over; commands go on arriving through the shared session, to the
// round's client (Listener) or, once the round is over, to c's next
// connection.
func (c *Control) Pause() {
	if c.client != nil {
		c.client.Disconnect(250)
	}
}

// Close leaves: the home is marked offline, then disconnected.
func (c *Control) Close() {
	if c.client == nil || !c.client.IsConnectionOpen() {
		return
	}
	c.client.Publish(topic.PresenceTopic(c.prefix, c.name), 1, true, c.presence("offline")).WaitTimeout(2 * time.Second)
	c.client.Disconnect(250)
}

// PublishResult publishes result, a round's outcome as JSON, on
// <prefix>/<round>/result/<agent>, retained.
func (c *Control) PublishResult(ctx context.Context, round string, result []byte) error {
	return c.Publish(ctx, []Publication{{Topic: topic.ResultTopic(c.prefix, round, c.name), Payload: result, Retained: true}})
}

// Publication is a message to publish at QoS 1.
type Publication struct {
	Topic    string
	Payload  []byte
	Retained bool
}

// Publish publishes pubs at QoS 1, in order, and waits for the broker to
// acknowledge them all. With a key, every payload under the prefix is
// signed: a JSON object (a result, a plan) stays JSON, with the signature
// as its last member, for consumers that cannot verify.
func (c *Control) Publish(ctx context.Context, pubs []Publication) error {
	toks := make([]paho.Token, len(pubs))
	for i, p := range pubs {
		toks[i] = c.client.Publish(p.Topic, 1, p.Retained, c.seal(p.Topic, p.Payload))
	}
	for i, tok := range toks {
		select {
		case <-tok.Done():
			if err := tok.Error(); err != nil {
				return fmt.Errorf("publish %s: %w", pubs[i].Topic, err)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// PublishRequest asks every home for round req on the home's request
// topic, retained, so that a home restarted meanwhile finds it (its
// creation time tells when it is stale).
func (c *Control) PublishRequest(ctx context.Context, req Request) error {
	if req.Created.IsZero() {
		req.Created = time.Now()
	}
	b, err := EncodeCommand(req, c.name)
	if err != nil {
		return err
	}
	return c.Publish(ctx, []Publication{{Topic: topic.HomeCmdTopic(c.prefix, c.name), Payload: b, Retained: true}})
}

// PublishCommand publishes a controller's command for round req on
// <prefix>/cmd (created now when req gives no creation time), signed when
// c has a key (`hearth round`), retained or not, and waits for the broker
// to take it.
func (c *Control) PublishCommand(ctx context.Context, req Request, retained bool) error {
	if err := CheckRoundID(req.ID); err != nil {
		return err
	}
	if req.Created.IsZero() {
		req.Created = time.Now()
	}
	b, err := EncodeCommand(req, "")
	if err != nil {
		return err
	}
	return c.Publish(ctx, []Publication{{Topic: c.cmdTopic, Payload: b, Retained: retained}})
}

// Disconnect ends c's connection without leaving (no offline presence),
// as a one-shot client does.
func (c *Control) Disconnect() {
	if c.client != nil {
		c.client.Disconnect(250)
	}
}

// MaxRoundID is the longest round id: it leaves room in a topic level
// for the suffix of a round's retries (".retry9").
const MaxRoundID = topic.MaxName - 16

// CheckRoundID reports whether id can name a round: a run id
// (topic.CheckRun: not a level reserved for commands, plans or presence)
// short enough for the retry suffix.
func CheckRoundID(id string) error {
	if len(id) > MaxRoundID {
		return fmt.Errorf("round id %.20q… is longer than %d bytes", id, MaxRoundID)
	}
	return topic.CheckRun(id)
}
