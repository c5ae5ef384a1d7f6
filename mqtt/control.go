package mqtt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
// between its rounds, beside the clients RunAgent makes for a round: between rounds it keeps the
// home present, listens for commands on <prefix>/cmd (and, for homes, for
// the other homes' round requests on <prefix>/cmd/<home>) and watches the
// neighbours' presence; after a round it publishes the result (and a
// home's plan).
//
// It uses the home's own client id and credentials, and is disconnected
// while a round runs: brokers with per-home rules allow one connection per
// home (the embedded broker requires the client id topic.ClientID(prefix,
// home); Mosquitto with use_username_as_clientid makes it the username), so
// a second client would take over the round's session. Commands published
// on <prefix>/cmd while a round runs are therefore not seen: a controller
// starts the next round once the results of the last one are in. Homes
// publish their requests retained, so that a home busy with another round
// finds them when it reconnects (onCommand).
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
	cmds    chan Request
	refused chan error
	client  paho.Client
	// ready is closed once a connection's subscriptions are in place.
	readyMu sync.Mutex
	ready   chan struct{}

	mu         sync.Mutex
	neighbours []string
	// requestTopics are <prefix>/cmd/<home> of every home (homes only).
	requestTopics []string
	online        map[string]bool
	allSeen       bool
	// conns counts the connections made; seen holds the last round id
	// seen on each request topic.
	conns int
	seen  map[string]string

	// signer signs what c publishes under the prefix (nil: unsigned);
	// open checks what it receives, and ctr counts what it drops.
	signer *sign.Signer
	open   *opener
	ctr    counters
}

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
	return &Control{
		name: name, cfg: cfg, log: log, neighbours: slices.Clone(neighbours),
		prefix: prefix, cmdTopic: topic.CmdTopic(prefix), serving: serving,
		cmds: make(chan Request, 16), refused: make(chan error, 1), online: map[string]bool{}, seen: map[string]string{},
		signer: cfg.Keys.Signer(name), open: newOpener(cfg.Keys, prefix, nil),
	}
}

// Dropped counts the messages c dropped, by reason (the Drop… constants):
// unsigned, wrongly signed or replayed commands and presence.
func (c *Control) Dropped() map[string]int64 { return c.ctr.snapshot(c.name).Dropped }

// content returns the verified content of m and when it was signed (zero
// when c has no keys), or false after counting and logging the drop.
func (c *Control) content(m paho.Message) ([]byte, time.Time, bool) {
	b, at, reason, err := c.open.open(m.Topic(), m.Retained(), m.Payload())
	if reason != "" {
		c.ctr.drop(c.log, reason, "topic", m.Topic(), "err", err)
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

// Commands delivers the rounds asked for, from commands and the other
// homes' requests.
func (c *Control) Commands() <-chan Request { return c.cmds }

// Prefix is the topic prefix c uses.
func (c *Control) Prefix() string { return c.prefix }

// CommandTopic is <prefix>/cmd, where a controller asks for rounds.
func (c *Control) CommandTopic() string { return c.cmdTopic }

// SetHomes makes c listen to the round requests of homes and watch the
// presence of neighbours (after a reload). It reports whether the
// subscriptions changed, which takes a new connection.
func (c *Control) SetHomes(homes, neighbours []string) bool {
	topics := make([]string, len(homes))
	for i, h := range homes {
		topics[i] = topic.HomeCmdTopic(c.prefix, h)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := !slices.Equal(topics, c.requestTopics) || !slices.Equal(neighbours, c.neighbours)
	c.requestTopics, c.neighbours = topics, slices.Clone(neighbours)
	if changed {
		c.online, c.allSeen = map[string]bool{}, false
	}
	return changed
}

// presenceMsg is the payload of <prefix>/presence/<agent>, as the MQTT
// runtime writes it.
type presenceMsg struct {
	V     int    `json:"v"`
	Agent string `json:"agent"`
	State string `json:"state"`
}

func (c *Control) presence(state string) []byte {
	b, _ := json.Marshal(presenceMsg{V: 1, Agent: c.name, State: state})
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
		// Nothing of the control client's session is worth keeping,
		// and a clean start discards what a killed round left behind.
		SetCleanSession(true).
		SetAutoReconnect(true).
		SetConnectRetry(true).
		SetConnectRetryInterval(min(time.Second, t.ReconnectMax)).
		SetMaxReconnectInterval(t.ReconnectMax).
		SetConnectTimeout(10 * time.Second).
		SetKeepAlive(t.KeepAlive).
		SetOrderMatters(false).
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

// Connect opens a new connection, unless one is open or being
// re-established, and waits for it.
func (c *Control) Connect(ctx context.Context) error {
	if c.client != nil && c.client.IsConnected() {
		return nil
	}
	c.readyMu.Lock()
	c.ready = make(chan struct{})
	ready := c.ready
	c.readyMu.Unlock()
	c.client = paho.NewClient(c.options())
	tok := c.client.Connect()
	select {
	case <-tok.Done():
		if err := tok.Error(); err != nil {
			return fmt.Errorf("connect to %s: %w", c.cfg.Broker.URL, err)
		}
		// A controller that reacts to a result must find the
		// command topic subscribed.
		select {
		case <-ready:
			return nil
		case <-ctx.Done():
			c.client.Disconnect(0)
			return ctx.Err()
		}
	case err := <-c.refused:
		c.client.Disconnect(0)
		return fmt.Errorf("%s refused user %q: %w", c.cfg.Broker.URL, c.cfg.Broker.Username, err)
	case <-ctx.Done():
		c.client.Disconnect(0)
		return ctx.Err()
	}
}

// onConnect subscribes, one topic at a time as the MQTT runtime does (no
// wildcards: the embedded broker's retained index races on them), and
// announces the home.
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
	subs := append([]string{c.cmdTopic}, c.requestTopics...)
	commands := len(subs)
	for _, n := range c.neighbours {
		subs = append(subs, topic.PresenceTopic(c.prefix, n))
	}
	neighbours := len(c.neighbours)
	c.mu.Unlock()
	for i, s := range subs {
		handler := c.onPresence
		if i < commands {
			handler = c.onCommand
		}
		tok := cl.Subscribe(s, 1, handler)
		if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			c.log.Warn("MQTT subscription failed", "topic", s, "err", tok.Error())
			continue
		}
		if st := tok.(*paho.SubscribeToken).Result()[s]; st == 0x80 {
			c.log.Warn("the broker refuses the subscription: check its access rules", "topic", s)
		}
	}
	cl.Publish(topic.PresenceTopic(c.prefix, c.name), 1, true, c.presence("online"))
	c.log.Info("MQTT connected", "broker", c.cfg.Broker.URL, "neighbours", neighbours)
}

// Request is a round to run: from a command, a home's request, the
// schedule, SIGHUP or changed inputs.
type Request struct {
	ID string
	// At is the instant the round plans from (a command's "at", a
	// scheduled round's time); zero means the round's own start.
	At time.Time
	// From says what asked, for the log.
	From string
	// Signed is when the command was signed (mqtt/sign), its creation
	// time, which its signer's key vouches for; zero when unsigned.
	Signed time.Time
}

// roundCommand is the payload of <prefix>/cmd and <prefix>/cmd/<home>.
// Round may be a JSON string or number; At (RFC 3339) is the instant the
// homes plan from, so that every home puts slot 0 at the same time; From
// names the home that asks.
type roundCommand struct {
	Round json.RawMessage `json:"round"`
	At    string          `json:"at,omitempty"`
	From  string          `json:"from,omitempty"`
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
	if cmd.From != "" {
		req.From = "home " + strconv.Quote(cmd.From)
	}
	return req, nil
}

// onCommand runs on paho's goroutine: it never blocks.
//
// A home's request (<prefix>/cmd/<home>) is retained, so that homes busy
// with a round when it was sent find it when they reconnect. A retained
// request is therefore run only when it is news: not one seen before on
// its topic, and not one found at the process's first connection, which
// predates the process — the round is over, or the home that asked waits
// for a home that has since restarted and times out. Commands on
// <prefix>/cmd are the controller's: run whenever they arrive (round ids
// not run twice).
func (c *Control) onCommand(_ paho.Client, m paho.Message) {
	b, signed, ok := c.content(m)
	if !ok {
		return
	}
	req, err := ParseCommand(b)
	if err != nil {
		c.log.Warn("command ignored", "topic", m.Topic(), "err", err)
		return
	}
	req.Signed = signed
	if m.Topic() != c.cmdTopic {
		c.mu.Lock()
		first, last := c.conns <= 1, c.seen[m.Topic()]
		c.seen[m.Topic()] = req.ID
		c.mu.Unlock()
		if m.Retained() && (first || last == req.ID) {
			c.log.Debug("earlier round request ignored", "topic", m.Topic(), "round", req.ID)
			return
		}
	}
	select {
	case c.cmds <- req:
		c.log.Info("command received", "round", req.ID, "from", req.From)
	default:
		c.log.Warn("command ignored: too many queued", "round", req.ID)
	}
}

func (c *Control) onPresence(_ paho.Client, m paho.Message) {
	b, _, ok := c.content(m)
	if !ok {
		return
	}
	var pr presenceMsg
	if len(b) > 1024 || json.Unmarshal(b, &pr) != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Contains(c.neighbours, pr.Agent) {
		return
	}
	was := c.online[pr.Agent]
	now := pr.State == "online"
	if was == now {
		return
	}
	c.online[pr.Agent] = now
	n := 0
	for _, on := range c.online {
		if on {
			n++
		}
	}
	// Presence flips at every round (the round's clients leave), so
	// changes are debug; having every neighbour present is news.
	c.log.Debug("neighbour "+pr.State, "neighbour", pr.Agent, "present", strconv.Itoa(n)+"/"+strconv.Itoa(len(c.neighbours)))
	if n == len(c.neighbours) && !c.allSeen {
		c.allSeen = true
		c.log.Info("every neighbour present", "neighbours", c.neighbours)
	}
}

// Pause disconnects for a round, whose clients take the home's identity.
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
// topic, retained (onCommand says why).
func (c *Control) PublishRequest(ctx context.Context, req Request) error {
	id, err := json.Marshal(req.ID)
	if err != nil {
		return err
	}
	b, err := json.Marshal(roundCommand{Round: id, At: req.At.Format(time.RFC3339), From: c.name})
	if err != nil {
		return err
	}
	tp := topic.HomeCmdTopic(c.prefix, c.name)
	c.mu.Lock()
	c.seen[tp] = req.ID
	c.mu.Unlock()
	return c.Publish(ctx, []Publication{{Topic: tp, Payload: b, Retained: true}})
}

// PublishCommand publishes a controller's command for round req on
// <prefix>/cmd, signed when c has a key (`hearth round`), retained or
// not, and waits for the broker to take it.
func (c *Control) PublishCommand(ctx context.Context, req Request, retained bool) error {
	if err := CheckRoundID(req.ID); err != nil {
		return err
	}
	id, err := json.Marshal(req.ID)
	if err != nil {
		return err
	}
	cmd := roundCommand{Round: id}
	if !req.At.IsZero() {
		cmd.At = req.At.Format(time.RFC3339)
	}
	b, err := json.Marshal(cmd)
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
