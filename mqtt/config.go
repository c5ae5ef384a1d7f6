package mqtt

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"time"

	"github.com/hearth-dcop/hearth/mqtt/envelope"
	"github.com/hearth-dcop/hearth/mqtt/sign"
	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// DefaultPrefix is the topic prefix when Config.Prefix is empty.
const DefaultPrefix = "hearth"

// Broker says how to reach the MQTT broker.
type Broker struct {
	// URL is the broker's address as paho takes it: "tcp://host:1883",
	// "ssl://host:8883" (TLS), "ws://…". RunGroup starts an embedded
	// broker when it is empty; RunAgent requires it.
	URL string
	// Username and Password authenticate the client; with the
	// per-home ACL the username is the home's agent name.
	Username, Password string
	// TLS configures TLS for ssl:// URLs (LoadTLS builds one from files);
	// nil uses the system's roots.
	TLS *tls.Config
	// Dial, when set, opens every connection instead of URL (which then
	// only names the broker in logs and errors): RunGroup sets it to
	// the embedded broker's in-memory Dial.
	Dial func(ctx context.Context) (net.Conn, error)
}

// LoadTLS builds a TLS configuration from PEM files: caFile (the broker's
// CA; empty means the system's roots) and, for brokers that want client
// certificates, certFile and keyFile (both or neither).
func LoadTLS(caFile, certFile, keyFile string) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("TLS CA: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TLS CA %s: no PEM certificate", caFile)
		}
	}
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("TLS: a client certificate needs both a certificate and a key file")
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("TLS client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

// Limits bound sizes and memory. Zero fields take the defaults given.
type Limits struct {
	// MaxPayload is the largest envelope payload (one MQTT message);
	// larger protocol messages are split. Default 256 KiB. Receivers
	// refuse larger ones, so every agent of a run must agree.
	MaxPayload int
	// MaxMessage is the largest protocol message body. Default 130 MiB
	// (DPOP's largest UTIL table under its default max_util_entries).
	MaxMessage int
	// MaxReassemblies bounds the messages being reassembled at once, not
	// counting the next one on each link. Default 64.
	MaxReassemblies int
	// MaxHeldBytes bounds the bytes held out of order: fragments of
	// messages being reassembled plus complete messages waiting for an
	// earlier one on their link, again not counting the next message on
	// each link (which is always accepted, so the bound cannot stall a
	// run). Default 256 MiB.
	MaxHeldBytes int
	// MailboxBytes bounds the payloads received but not yet processed.
	// Default 512 MiB. See the package documentation for what happens
	// beyond it (nothing is lost).
	MailboxBytes int
}

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxPayload, envelope.DefaultMaxPayload)
	def(&l.MaxMessage, envelope.DefaultMaxMessage)
	def(&l.MaxReassemblies, 64)
	def(&l.MaxHeldBytes, 256<<20)
	def(&l.MailboxBytes, 512<<20)
	return l
}

func (l Limits) envelope() envelope.Limits {
	return envelope.Limits{MaxPayload: l.MaxPayload, MaxMessage: l.MaxMessage}
}

// Timing tunes timeouts and periods. Zero fields take the defaults given.
type Timing struct {
	// KeepAlive is the MQTT keep-alive. Default 30 s.
	KeepAlive time.Duration
	// ConnectTimeout bounds one connection attempt and the wait for a
	// subscription's acknowledgement. Default 10 s.
	ConnectTimeout time.Duration
	// ReconnectMax caps the back-off between reconnection attempts.
	// Default 10 s.
	ReconnectMax time.Duration
	// StatusInterval is how often, at most, an agent acknowledges the
	// messages it delivered on each link (to that link's sender alone),
	// and the least time between two statuses of an agent that is not
	// done. Default 1 s. A first done status, and a new generation, go at
	// once.
	StatusInterval time.Duration
	// RetransmitAfter is how long a sender waits for a message's
	// acknowledgement before publishing it again (then twice as long,
	// up to 8×). Default 30 s.
	RetransmitAfter time.Duration
}

func (t Timing) withDefaults() Timing {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&t.KeepAlive, 30*time.Second)
	def(&t.ConnectTimeout, 10*time.Second)
	def(&t.ReconnectMax, 10*time.Second)
	def(&t.StatusInterval, time.Second)
	def(&t.RetransmitAfter, 30*time.Second)
	return t
}

// ForAgents fills the fields left unset for a run of n agents. A run's
// start sets up n(2n+1) subscriptions on the broker (every agent
// subscribes to every status, one by one), so the connection time-out
// grows with n: up to a minute for 200 agents on a 2-core machine. The
// status interval, which paces the per-link acknowledgements, grows too
// (10 s at 200 agents), and the retransmission delay with it, so that a
// loaded machine does not retransmit what is merely unacknowledged yet.
// A 200-agent D-Gibbs round runs in 6–10 s with these (README.md).
func (t Timing) ForAgents(n int) Timing {
	if t.StatusInterval <= 0 {
		t.StatusInterval = max(time.Second, time.Duration(n)*50*time.Millisecond)
	}
	if t.ConnectTimeout <= 0 {
		t.ConnectTimeout = max(10*time.Second, time.Duration(n)*300*time.Millisecond)
	}
	if t.RetransmitAfter <= 0 {
		t.RetransmitAfter = max(30*time.Second, 3*t.StatusInterval)
	}
	return t
}

// Config is what every agent of a run shares.
type Config struct {
	Broker Broker
	// Prefix is the topic prefix; empty means DefaultPrefix.
	Prefix string
	// Run names the run; it is a topic level (topic.CheckRun: not
	// presence, cmd or home) and goes in every envelope. A run id must
	// not be reused on a broker that still holds the retained statuses
	// of an earlier run with that id.
	Run string
	// Protocol names the protocol (e.g. "dpop"); envelopes of another
	// protocol are dropped.
	Protocol string
	// Agents are the names of the run's agents; index i is protocol
	// agent i. Every agent must be given the same list.
	Agents []string
	Limits Limits
	Timing Timing
	// Owner, when set, gives for every agent of Agents the real agent
	// it belongs to (a reformulation's pseudo-agents): messages between
	// agents of one owner are counted as internal (Stats.Internal).
	Owner []int
	// Logger receives the runtime's logs; nil discards them.
	Logger *slog.Logger
	// NoMulticast sends every message on its receiver's inbox. By
	// default a message that goes to most of an agent's peers at once is
	// published once on the agent's multicast topic, which every agent
	// of the run reads (see envelope.Multicast).
	NoMulticast bool
	// Identity names the process in its presence messages (Control's
	// check for a second process running the same home).
	Identity Identity
	// Listen, when set, rides on the connections of the agent whose
	// client id is Listen.ClientID: a long-running home's round client
	// takes its control client's connection over, and carries its
	// command subscriptions meanwhile (Control.Listener).
	Listen *Listener
	// Keys, when set, signs everything the agents publish and drops
	// whatever they receive that a key of Keys did not sign for its
	// topic (see Signing in the package documentation): each agent
	// signs with Keys.Signer of its home, and every agent of the run
	// must have its home's public key there.
	Keys *sign.Keyring
	// Homes, with Owner, names the key that signs each agent's messages:
	// Homes[Owner[i]] for agent i (a reformulation's pseudo-agents sign
	// as their home). Without them each agent signs as itself.
	Homes []string
	// Neighbours, when set, lists for each agent (by index, in
	// increasing order, symmetric) the agents it exchanges messages
	// with: an agent then subscribes to the statuses, presence and
	// multicasts of its neighbours and of its parent and children on a
	// spanning tree of this graph, and no other; it starts once those
	// are present, tells a failure to them (each passes it on), and
	// learns that the run is over from termination waves along the tree
	// (wave.go), so that what an agent reads and keeps grows with its
	// degree, not with the run. Sending to an agent that is not a
	// neighbour is an error. Nil: every agent reads every agent's status
	// (the quiescent rule), which protocols that talk beyond the
	// constraint graph (AFB) need. Group.Run sets it for the protocols
	// that talk along the graph (alongEdges).
	Neighbours [][]int
	// tree is the spanning tree of Neighbours, built (and Neighbours
	// checked) once per run by RunGroup, or by resolve.
	tree *spanTree
	// index gives each agent name its index in Agents, built (and the
	// names checked) once per run by RunGroup, or by resolve: one map per
	// agent was a tenth of a 1,000-agent run's memory.
	index map[string]int
}

// Listener is a set of topics an agent's client subscribes to for
// someone else, and the function that takes what arrives on them (on
// paho's goroutine: it must not block).
type Listener struct {
	ClientID string
	Topics   []string
	Handle   func(topic string, payload []byte, retained bool)
}

// signerOf returns the name of the key that signs agent i's messages.
// agentIndex checks the run's agent names and maps each to its index.
func agentIndex(agents []string) (map[string]int, error) {
	index := make(map[string]int, len(agents))
	for i, a := range agents {
		if err := topic.CheckAgent(a); err != nil {
			return nil, fmt.Errorf("mqtt: agent name: %w", err)
		}
		if _, dup := index[a]; dup {
			return nil, fmt.Errorf("mqtt: agent %q listed twice", a)
		}
		index[a] = i
	}
	return index, nil
}

// watched are the agents whose statuses agent me reads with Neighbours
// set: its neighbours and its tree parent and children, in increasing
// order (nil without Neighbours: every agent).
func (cfg *Config) watched(me int) []int {
	if cfg.Neighbours == nil || cfg.tree == nil {
		return nil
	}
	w := slices.Clone(cfg.Neighbours[me])
	if p := cfg.tree.parent[me]; p >= 0 {
		w = append(w, p)
	}
	w = append(w, cfg.tree.children[me]...)
	slices.Sort(w)
	return slices.Compact(w)
}

func (cfg *Config) signerOf(i int) string {
	if cfg.Homes != nil && cfg.Owner != nil && cfg.Owner[i] >= 0 && cfg.Owner[i] < len(cfg.Homes) {
		return cfg.Homes[cfg.Owner[i]]
	}
	return cfg.Agents[i]
}

// AgentConfig is one agent's configuration.
type AgentConfig struct {
	Config
	// Agent is this agent's index in Agents.
	Agent int
	// ClientID is the MQTT client id; empty means topic.ClientID(Prefix,
	// name), stable across runs so that the broker keeps one session per
	// home.
	ClientID string
	// Checks, when set, returns the agent's constraint checks so far
	// (local solver and protocol), for the NCCC metric
	// (pipeline.Agent.Checks).
	Checks func() int64
	// Compute, when set, is a semaphore the agents of one process share:
	// an agent holds one of its slots while its protocol computes (Start
	// and each Step), and none while it talks to the broker. RunGroup
	// makes one with GOMAXPROCS slots. Without it every agent of a
	// 251-home neighbourhood starts its best response when its last
	// VALUE arrives, the scheduler time-slices hundreds of half-done
	// local solves, and their tables are all live at once (dm_251_1_5:
	// 2.7 GB of bucket tables in flight, 17 GB resident).
	Compute chan struct{}
	// Admit, when set, is a semaphore the agents of one process share
	// while they join the run: an agent holds one of its slots from
	// before it connects until its subscriptions are acknowledged and
	// its first status has come back from the broker (or it stops).
	// RunGroup makes one (admitSlots). Without it hundreds of agents
	// connect and subscribe at once, each subscription makes the broker
	// send the retained statuses it matches, and on 2 cores the clients
	// then missed their keep-alives, reconnected into resumed sessions
	// and had their subscriptions refused (packet id in use) again and
	// again: a 474-home street spent minutes connecting (issue 22).
	Admit chan struct{}
	// inMemory says that the agent reaches the broker through a memory
	// pipe of this process (RunGroup with the embedded broker), which
	// cannot die silently: it runs without keep-alive pings (an 18-hour
	// keep-alive), which a loaded process missed although the
	// connection was fine.
	inMemory bool
}

// resolve validates cfg and fills in the defaults.
func (cfg AgentConfig) resolve() (AgentConfig, error) {
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if err := topic.CheckPrefix(cfg.Prefix); err != nil {
		return cfg, fmt.Errorf("mqtt: %w", err)
	}
	if err := topic.CheckRun(cfg.Run); err != nil {
		return cfg, fmt.Errorf("mqtt: run id: %w", err)
	}
	if cfg.Protocol == "" {
		return cfg, errors.New("mqtt: no protocol name")
	}
	if len(cfg.Agents) == 0 {
		return cfg, errors.New("mqtt: no agents")
	}
	if cfg.index == nil {
		index, err := agentIndex(cfg.Agents)
		if err != nil {
			return cfg, err
		}
		cfg.index = index
	}
	if cfg.Owner != nil && len(cfg.Owner) != len(cfg.Agents) {
		return cfg, fmt.Errorf("mqtt: %d owners for %d agents", len(cfg.Owner), len(cfg.Agents))
	}
	if cfg.Agent < 0 || cfg.Agent >= len(cfg.Agents) {
		return cfg, fmt.Errorf("mqtt: agent index %d outside 0..%d", cfg.Agent, len(cfg.Agents)-1)
	}
	if cfg.Keys != nil {
		for i := range cfg.Agents {
			if s := cfg.signerOf(i); !cfg.Keys.Has(s) {
				return cfg, fmt.Errorf("mqtt: no public key for %q (agent %q): with keys, every agent of the run signs", s, cfg.Agents[i])
			}
		}
		if s := cfg.signerOf(cfg.Agent); cfg.Keys.Signer(s) == nil {
			return cfg, fmt.Errorf("mqtt: no private key for %q, which agent %q signs as", s, cfg.Agents[cfg.Agent])
		}
	}
	if cfg.Neighbours != nil && cfg.tree == nil {
		if err := checkNeighbours(cfg.Neighbours, len(cfg.Agents)); err != nil {
			return cfg, err
		}
		cfg.tree = newSpanTree(cfg.Neighbours)
	}
	if cfg.Broker.URL == "" {
		return cfg, errors.New("mqtt: no broker URL")
	}
	if cfg.ClientID == "" {
		cfg.ClientID = topic.ClientID(cfg.Prefix, cfg.Agents[cfg.Agent])
	}
	cfg.Limits = cfg.Limits.withDefaults()
	cfg.Timing = cfg.Timing.withDefaults()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return cfg, nil
}
