// Package broker is hearth's embedded MQTT broker: mochi-mqtt v2 started
// in-process, on loopback by default, for single-machine runs (`hearth
// sim`, tests, a one-box neighbourhood) when the configuration names no
// broker.
//
// With no users it accepts anyone: it listens on 127.0.0.1 only, so only
// local processes reach it. With users, every client must authenticate,
// and each user is a home that may only act as itself: the access rules
// are those of the Mosquitto ACL documented in mqtt/README.md, enforced by
// an access hook (see acl.go).
//
// The broker keeps sessions, queued messages and retained messages in
// memory: a restart loses them. hearth's runtime is built to survive that
// (it resubscribes, republishes its presence and status, and retransmits
// what its peers have not acknowledged), so no persistent store is used.
package broker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/auth"

	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// Defaults of Config.
const (
	DefaultAddr   = "127.0.0.1:0"
	DefaultPrefix = "hearth"
	// DefaultMaxPacket admits the runtime's default 256 KiB envelopes
	// with room to spare, and refuses anything much larger.
	DefaultMaxPacket = 1 << 20
)

// Config configures the embedded broker.
type Config struct {
	// Addr is the TCP address to listen on; empty means DefaultAddr
	// (loopback, a free port: Broker.Addr reports the one chosen).
	Addr string
	// CertFile and KeyFile, when set, make the listener speak TLS.
	CertFile, KeyFile string
	// TLS, when set, is used instead of CertFile and KeyFile.
	TLS *tls.Config
	// Prefix is the topic prefix the access rules protect; empty means
	// DefaultPrefix.
	Prefix string
	// Discovery is the Home Assistant discovery prefix under which each
	// home may publish its sensors' configs
	// (<discovery>/sensor/<home>/<object>/config); empty means
	// topic.DefaultDiscovery. It must not overlap Prefix.
	Discovery string
	// Users, when not empty, turns authentication and per-home access
	// rules on.
	Users []User
	// MaxPacket bounds every MQTT packet in bytes; 0 means
	// DefaultMaxPacket. It must exceed the runtime's largest envelope
	// (its MaxPayload plus about 1 KiB of headers).
	MaxPacket int
	// Logger receives the broker's logs; nil discards them.
	Logger *slog.Logger
}

// User is one set of credentials.
type User struct {
	Name, Password string
	// Home is the agent these credentials act as; empty means Name.
	Home string
	// Controller lets the user also publish round commands on
	// <prefix>/cmd (every user reads them and the results); Mosquitto's
	// equivalent is `user <name>` then `topic write <prefix>/cmd`.
	Controller bool
}

// Broker is a running embedded broker.
type Broker struct {
	srv  *mochi.Server
	addr string
	tls  bool
	mem  *memListener

	closeOnce sync.Once
	closeErr  error
}

// Start starts a broker and returns once it accepts connections.
func Start(cfg Config) (*Broker, error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if err := topic.CheckPrefix(cfg.Prefix); err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	if cfg.Discovery == "" {
		cfg.Discovery = topic.DefaultDiscovery
	}
	if err := topic.CheckPrefix(cfg.Discovery); err != nil {
		return nil, fmt.Errorf("broker: discovery prefix: %w", err)
	}
	if overlaps(cfg.Prefix, cfg.Discovery+"/"+topic.Sensor) {
		return nil, fmt.Errorf("broker: discovery prefix %q overlaps the topic prefix %q", cfg.Discovery, cfg.Prefix)
	}
	if cfg.MaxPacket <= 0 {
		cfg.MaxPacket = DefaultMaxPacket
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	tlsCfg := cfg.TLS
	if tlsCfg == nil && (cfg.CertFile != "" || cfg.KeyFile != "") {
		cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("broker: TLS certificate: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}

	caps := mochi.NewDefaultServerCapabilities()
	caps.MaximumPacketSize = uint32(cfg.MaxPacket)
	srv := mochi.New(&mochi.Options{Capabilities: caps, Logger: log.With("component", "broker")})
	var err error
	if len(cfg.Users) == 0 {
		err = srv.AddHook(new(auth.AllowHook), nil)
	} else {
		var h *aclHook
		if h, err = newACLHook(cfg.Prefix, cfg.Discovery, cfg.Users); err == nil {
			err = srv.AddHook(h, nil)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	l := newTCPListener("hearth", cfg.Addr, tlsCfg)
	if err := srv.AddListener(l); err != nil {
		return nil, fmt.Errorf("broker: listen on %s: %w", cfg.Addr, err)
	}
	mem := newMemListener("memory:" + l.Address())
	if err := srv.AddListener(newMemoryListener("hearth-memory", mem)); err != nil {
		_ = srv.Close()
		return nil, fmt.Errorf("broker: %w", err)
	}
	if err := srv.Serve(); err != nil {
		_ = srv.Close()
		return nil, fmt.Errorf("broker: %w", err)
	}
	b := &Broker{srv: srv, addr: l.Address(), tls: tlsCfg != nil, mem: mem}
	log.Info("embedded MQTT broker listening", "addr", b.addr, "tls", b.tls, "users", len(cfg.Users))
	return b, nil
}

// overlaps reports whether one of the topic prefixes a and b is the other
// or lies under it, so that a rule on one could grant topics of the other.
func overlaps(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

// Addr returns the address the broker listens on, with the port chosen.
func (b *Broker) Addr() string { return b.addr }

// URL returns the broker's address as a paho server URL.
func (b *Broker) URL() string {
	if b.tls {
		return "ssl://" + b.addr
	}
	return "tcp://" + b.addr
}

// Dial connects to the broker through memory, without a socket: the
// connection carries the same MQTT bytes as one to URL, for clients in
// this process (memconn.go says why). It speaks plain MQTT even when the
// TCP listener speaks TLS, and the broker authenticates its clients as
// it does those of URL.
func (b *Broker) Dial(ctx context.Context) (net.Conn, error) {
	c, err := b.mem.Dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	return c, nil
}

// Close disconnects every client and stops listening; it returns when the
// port is free again. Closing again does nothing (mochi's own Close
// panics on a second call).
func (b *Broker) Close() error {
	b.closeOnce.Do(func() {
		err := b.srv.Close()
		if err != nil && !errors.Is(err, net.ErrClosed) {
			b.closeErr = fmt.Errorf("broker: %w", err)
		}
	})
	return b.closeErr
}
