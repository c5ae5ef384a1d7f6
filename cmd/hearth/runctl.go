package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// control is `hearth run`'s own MQTT client: between rounds it keeps the
// home present, listens for commands on <prefix>/cmd and watches the
// neighbours' presence; after a round it publishes the result.
//
// It uses the home's own client id and credentials, and is disconnected
// while a round runs: brokers with per-home rules allow one connection per
// home (the embedded broker requires the client id topic.ClientID(prefix,
// home); Mosquitto with use_username_as_clientid makes it the username), so
// a second client would take over the round's session. Commands published
// while a round runs are therefore not seen: a controller starts the next
// round once the results of the last one are in.
type control struct {
	h        *homeAgent
	prefix   string
	cmdTopic string
	// serving is false for the one-shot client that publishes the
	// result of `hearth run --once`: it subscribes to nothing and leaves
	// presence to the round's clients.
	serving bool
	cmds    chan string
	refused chan error
	client  paho.Client
	// ready is closed once a connection's subscriptions are in place.
	readyMu sync.Mutex
	ready   chan struct{}

	mu      sync.Mutex
	online  map[string]bool
	allSeen bool
}

func newControl(h *homeAgent, serving bool) *control {
	prefix := h.cfg.Prefix
	c := &control{
		h: h, prefix: prefix, cmdTopic: prefix + "/cmd", serving: serving,
		cmds: make(chan string, 16), refused: make(chan error, 1), online: map[string]bool{},
	}
	return c
}

// presenceMsg is the payload of <prefix>/presence/<agent>, as the MQTT
// runtime writes it.
type presenceMsg struct {
	V     int    `json:"v"`
	Agent string `json:"agent"`
	State string `json:"state"`
}

func (c *control) presence(state string) []byte {
	b, _ := json.Marshal(presenceMsg{V: 1, Agent: c.h.name, State: state})
	return b
}

func (c *control) options() *paho.ClientOptions {
	cfg, t := c.h.cfg, c.h.cfg.Timing
	o := paho.NewClientOptions().
		AddBroker(cfg.Broker.URL).
		SetClientID(topic.ClientID(c.prefix, c.h.name)).
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
			c.h.log.Warn("MQTT connection lost; reconnecting", "err", err)
		}).
		SetConnectionNotificationHandler(func(_ paho.Client, n paho.ConnectionNotification) {
			if f, ok := n.(paho.ConnectionNotificationFailed); ok && refused(f.Reason) {
				select {
				case c.refused <- f.Reason:
				default:
				}
			}
		})
	if c.serving {
		o.SetBinaryWill(topic.PresenceTopic(c.prefix, c.h.name), c.presence("offline"), 1, true)
	}
	return o
}

// connect opens a new connection, unless one is open or being
// re-established, and waits for it.
func (c *control) connect(ctx context.Context) error {
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
			return fmt.Errorf("connect to %s: %w", c.h.cfg.Broker.URL, err)
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
		return fmt.Errorf("%s refused user %q: %w", c.h.cfg.Broker.URL, c.h.cfg.Broker.Username, err)
	case <-ctx.Done():
		c.client.Disconnect(0)
		return ctx.Err()
	}
}

// onConnect subscribes, one topic at a time as the MQTT runtime does, and
// announces the home.
func (c *control) onConnect(cl paho.Client) {
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
	subs := []string{c.cmdTopic}
	for _, n := range c.h.neighbours {
		subs = append(subs, topic.PresenceTopic(c.prefix, n))
	}
	for _, s := range subs {
		handler := c.onPresence
		if s == c.cmdTopic {
			handler = c.onCommand
		}
		tok := cl.Subscribe(s, 1, handler)
		if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			c.h.log.Warn("MQTT subscription failed", "topic", s, "err", tok.Error())
			continue
		}
		if st := tok.(*paho.SubscribeToken).Result()[s]; st == 0x80 {
			c.h.log.Warn("the broker refuses the subscription: check its access rules", "topic", s)
		}
	}
	cl.Publish(topic.PresenceTopic(c.prefix, c.h.name), 1, true, c.presence("online"))
	c.h.log.Info("MQTT connected", "broker", c.h.cfg.Broker.URL, "neighbours", len(c.h.neighbours))
}

// roundCommand is the payload of <prefix>/cmd. Round may be a JSON string
// or number.
type roundCommand struct {
	Round json.RawMessage `json:"round"`
}

// parseCommand returns the round a command asks for.
func parseCommand(b []byte) (string, error) {
	if len(b) > 4096 {
		return "", fmt.Errorf("command of %d bytes", len(b))
	}
	var cmd roundCommand
	// Unknown fields are allowed, for controllers newer than this agent.
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&cmd); err != nil {
		return "", fmt.Errorf("command: %w", err)
	}
	if d.More() {
		return "", errors.New("command: trailing data")
	}
	var id string
	if err := json.Unmarshal(cmd.Round, &id); err != nil {
		var n json.Number
		if err := json.Unmarshal(cmd.Round, &n); err != nil {
			return "", errors.New(`command: want {"round": "ID"}`)
		}
		id = n.String()
	}
	if err := checkRoundID(id); err != nil {
		return "", fmt.Errorf("command: %w", err)
	}
	return id, nil
}

// onCommand runs on paho's goroutine: it never blocks.
func (c *control) onCommand(_ paho.Client, m paho.Message) {
	id, err := parseCommand(m.Payload())
	if err != nil {
		c.h.log.Warn("command ignored", "topic", m.Topic(), "err", err)
		return
	}
	select {
	case c.cmds <- id:
		c.h.log.Info("command received", "round", id)
	default:
		c.h.log.Warn("command ignored: too many queued", "round", id)
	}
}

func (c *control) onPresence(_ paho.Client, m paho.Message) {
	var pr presenceMsg
	if len(m.Payload()) > 1024 || json.Unmarshal(m.Payload(), &pr) != nil || !slices.Contains(c.h.neighbours, pr.Agent) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
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
	c.h.log.Debug("neighbour "+pr.State, "neighbour", pr.Agent, "present", strconv.Itoa(n)+"/"+strconv.Itoa(len(c.h.neighbours)))
	if n == len(c.h.neighbours) && !c.allSeen {
		c.allSeen = true
		c.h.log.Info("every neighbour present", "neighbours", c.h.neighbours)
	}
}

// pause disconnects for a round, whose clients take the home's identity.
func (c *control) pause() {
	if c.client != nil {
		c.client.Disconnect(250)
	}
}

// close leaves: the home is marked offline, then disconnected.
func (c *control) close() {
	if c.client == nil || !c.client.IsConnectionOpen() {
		return
	}
	c.client.Publish(topic.PresenceTopic(c.prefix, c.h.name), 1, true, c.presence("offline")).WaitTimeout(2 * time.Second)
	c.client.Disconnect(250)
}

// resultTopic is where a home's result of a round is published.
func resultTopic(prefix, round, agent string) string {
	return prefix + "/" + round + "/result/" + agent
}

// publishResult publishes a round's outcome on c's connection, retained:
// rep, or the error that ended the round.
func (c *control) publishResult(ctx context.Context, round string, rep roundResult, err error) error {
	if err != nil {
		rep.Error = err.Error()
		rep.V, rep.Round, rep.Agent = 1, round, c.h.name
	}
	b, jerr := json.Marshal(rep)
	if jerr != nil {
		return jerr
	}
	tok := c.client.Publish(resultTopic(c.prefix, round, c.h.name), 1, true, b)
	select {
	case <-tok.Done():
		return tok.Error()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// publishResultOnce publishes a round's outcome on a connection of its
// own (`hearth run --once`).
func publishResultOnce(ctx context.Context, h *homeAgent, round string, rep roundResult, err error) error {
	c := newControl(h, false)
	if cerr := c.connect(ctx); cerr != nil {
		return cerr
	}
	defer c.client.Disconnect(250)
	return c.publishResult(ctx, round, rep, err)
}

// recent remembers the last rounds run, so that a command repeated (a
// retained command, or one sent twice) does not run a round again.
type recent struct {
	ids  []string
	most int
}

func newRecent(most int) *recent { return &recent{most: most} }

func (r *recent) has(id string) bool { return slices.Contains(r.ids, id) }

func (r *recent) add(id string) {
	if len(r.ids) == r.most {
		r.ids = r.ids[1:]
	}
	r.ids = append(r.ids, id)
}

// controlACL returns the Mosquitto acl_file lines `hearth run` needs
// beyond broker.MosquittoACL's, for users named after their homes: each
// home publishes its own results and reads the commands; every user may
// read the results. A controller (any user given `topic write
// <prefix>/cmd`) starts rounds.
func controlACL(prefix string) string {
	return "# hearth run: results and commands\n" +
		"pattern write " + prefix + "/+/result/%u\n" +
		"pattern read " + prefix + "/+/result/+\n" +
		"topic read " + prefix + "/cmd\n"
}

// failedStatus is the MQTT runtime's status message (mqtt/status.go,
// version 1) in its "failed" state.
type failedStatus struct {
	V         int      `json:"v"`
	Agent     string   `json:"agent"`
	Run       string   `json:"run"`
	Nonce     uint64   `json:"nonce"`
	Gen       uint64   `json:"gen"`
	Ver       uint64   `json:"ver"`
	State     string   `json:"state"`
	Error     string   `json:"error"`
	Sent      []uint64 `json:"sent"`
	Delivered []uint64 `json:"delivered"`
}

// abandon publishes a failed status for each of the home's agents in a
// broken run, so that the other agents stop it and meet again in the next
// attempt. mqtt.RunAgent publishes one itself when an agent fails while
// connected, but not when it fails before its connection is announced,
// which is exactly what a restarted agent does on finding its earlier
// incarnation's status: its peers would then wait for it forever. The
// status carries a nonce of its own, so that no peer mistakes it for a
// live agent's.
func (h *homeAgent) abandon(ctx context.Context, run string, cause error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	c := newControl(h, false)
	if err := c.connect(ctx); err != nil {
		return err
	}
	defer c.client.Disconnect(250)
	why := "abandoned after: " + cause.Error()
	if len(why) > 1000 {
		why = why[:1000]
	}
	var toks []paho.Token
	for _, k := range h.owned {
		st := failedStatus{V: 1, Agent: h.names[k], Run: run, Nonce: rand.Uint64(), Gen: 1, Ver: 1, State: "failed",
			Error: why, Sent: make([]uint64, len(h.names)), Delivered: make([]uint64, len(h.names))}
		b, err := json.Marshal(st)
		if err != nil {
			return err
		}
		toks = append(toks, c.client.Publish(h.cfg.Prefix+"/"+run+"/status/"+h.names[k], 1, true, b))
	}
	for _, tok := range toks {
		select {
		case <-tok.Done():
			if err := tok.Error(); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
