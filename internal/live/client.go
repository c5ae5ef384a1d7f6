package live

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/mqtt"
	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// Client is a live home's own MQTT connection, beside the control client
// that the rounds take down and up again: it stays connected while the
// home runs, so that state arriving during a round is not lost and the
// availability topic says online throughout (its last will says
// offline). Its client id is the home's with "-live" appended
// (broker.LiveSuffix, which the embedded broker's per-home users accept);
// Mosquitto with use_username_as_clientid gives both connections one id,
// so that they take over each other's session (README.md, "Live homes").
type Client struct {
	cfg    mqtt.Config
	prefix string
	home   string
	in     *Inputs
	log    *slog.Logger
	// extra are further subscriptions (user targets), topic → handler;
	// messages those that need the topic and the retained flag (an
	// energy home's round loads), filter → handler.
	extra    map[string]func([]byte)
	messages map[string]func(topic string, retained bool, payload []byte)

	mu     sync.Mutex
	client paho.Client
}

// NewClient returns the live client of home, feeding in.
func NewClient(cfg mqtt.Config, prefix, home string, in *Inputs, log *slog.Logger) *Client {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{cfg: cfg, prefix: prefix, home: home, in: in, log: log, extra: map[string]func([]byte){},
		messages: map[string]func(string, bool, []byte){}}
}

// Handle adds a subscription (before Connect).
func (c *Client) Handle(t string, f func([]byte)) { c.extra[t] = f }

// HandleMessages adds a subscription to filter (before Connect) whose
// handler is given each message's topic and retained flag besides its
// payload.
func (c *Client) HandleMessages(filter string, f func(topic string, retained bool, payload []byte)) {
	c.messages[filter] = f
}

// Connect connects and subscribes, and publishes online.
func (c *Client) Connect(ctx context.Context) error {
	avail := AvailabilityTopic(c.prefix, c.home)
	t := c.cfg.Timing
	o := paho.NewClientOptions().
		AddBroker(c.cfg.Broker.URL).
		SetClientID(topic.ClientID(c.prefix, c.home)+"-live").
		SetUsername(c.cfg.Broker.Username).
		SetPassword(c.cfg.Broker.Password).
		SetTLSConfig(c.cfg.Broker.TLS).
		SetProtocolVersion(4).
		SetCleanSession(true).
		SetAutoReconnect(true).
		SetConnectRetry(true).
		SetConnectRetryInterval(time.Second).
		SetConnectTimeout(10*time.Second).
		SetOrderMatters(false).
		SetWill(avail, "offline", 1, true).
		SetOnConnectHandler(func(cl paho.Client) {
			for _, s := range c.in.Topics() {
				c.subscribe(cl, s, func(_ paho.Client, m paho.Message) { c.in.Handle(m.Topic(), m.Payload()) })
			}
			for s, f := range c.extra {
				c.subscribe(cl, s, func(_ paho.Client, m paho.Message) { f(m.Payload()) })
			}
			for s, f := range c.messages {
				c.subscribe(cl, s, func(_ paho.Client, m paho.Message) { f(m.Topic(), m.Retained(), m.Payload()) })
			}
			cl.Publish(avail, 1, true, "online")
			c.log.Info("live inputs subscribed", "topics", len(c.in.Topics())+len(c.extra)+len(c.messages))
		})
	if t.KeepAlive > 0 {
		o.SetKeepAlive(t.KeepAlive)
	}
	if t.ReconnectMax > 0 {
		o.SetMaxReconnectInterval(t.ReconnectMax)
	}
	cl := paho.NewClient(o)
	tok := cl.Connect()
	select {
	case <-tok.Done():
		if err := tok.Error(); err != nil {
			return fmt.Errorf("live client: connect to %s: %w", c.cfg.Broker.URL, err)
		}
	case <-ctx.Done():
		cl.Disconnect(0)
		return ctx.Err()
	}
	c.mu.Lock()
	c.client = cl
	c.mu.Unlock()
	return nil
}

func (c *Client) subscribe(cl paho.Client, s string, h paho.MessageHandler) {
	tok := cl.Subscribe(s, 1, h)
	if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		c.log.Warn("live subscription failed", "topic", s, "err", tok.Error())
	}
}

// Publish publishes pubs in order and waits for the broker to take them.
func (c *Client) Publish(ctx context.Context, pubs []report.Publication) error {
	c.mu.Lock()
	cl := c.client
	c.mu.Unlock()
	if cl == nil {
		return fmt.Errorf("live client not connected")
	}
	for _, p := range pubs {
		tok := cl.Publish(p.Topic, 1, p.Retained, p.Payload)
		select {
		case <-tok.Done():
			if err := tok.Error(); err != nil {
				return fmt.Errorf("publish %s: %w", p.Topic, err)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Close publishes offline and disconnects.
func (c *Client) Close() {
	c.mu.Lock()
	cl := c.client
	c.client = nil
	c.mu.Unlock()
	if cl == nil {
		return
	}
	tok := cl.Publish(AvailabilityTopic(c.prefix, c.home), 1, true, "offline")
	tok.WaitTimeout(2 * time.Second)
	cl.Disconnect(250)
}
