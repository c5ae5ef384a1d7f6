package mqtt

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/eclipse/paho.mqtt.golang/packets"

	"github.com/hearth-dcop/hearth/mqtt/broker"
	"github.com/hearth-dcop/hearth/mqtt/topic"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/pipeline"
)

// GroupConfig configures RunGroup: the agents of a run in this process,
// each with its own MQTT client — every agent, as `hearth sim` runs a
// neighbourhood on one machine, or those of one home (Owned), as `hearth
// run` runs it.
type GroupConfig struct {
	Config
	// Owned lists the agents (indices in Agents) this process runs; nil
	// means every agent. protos[k] is agent Owned[k].
	Owned []int
	// Embedded configures the broker RunGroup starts, on loopback, when
	// Broker.URL is empty. Its MaxPacket defaults to what Limits need.
	// The agents reach it through memory (broker.Broker.Dial), unless
	// EmbeddedTCP is set; outside clients reach it on its TCP address.
	Embedded broker.Config
	// EmbeddedTCP connects the agents to the embedded broker over its
	// loopback TCP listener, as separate processes would, instead of
	// through memory.
	EmbeddedTCP bool
	// Checks[k], when set, returns the constraint checks (NCCC) of the
	// k-th agent run here.
	Checks []func() int64
	// Parallel bounds the agents whose protocols compute at once
	// (AgentConfig.Compute); 0 means GOMAXPROCS.
	Parallel int
	// Credentials, when set, gives each agent its own username and
	// password (a broker with per-home access rules); otherwise every
	// agent uses Broker's.
	Credentials func(agent string) (username, password string)
}

// GroupResult is what RunGroup returns.
type GroupResult struct {
	Results []mva.AgentResult
	Stats   []Stats
	// Metrics are the run's figures in the simulated runtime's terms:
	// protocol messages and their bytes, NCCC, wall time. SimTimeMs is
	// left 0: real runs have no simulated clock.
	Metrics mva.Metrics
	// Broker is the URL of the broker used (the embedded one's address
	// when RunGroup started it).
	Broker string
	// InMemory says that the agents reached the embedded broker through
	// memory (Broker is then where outside clients reach it).
	InMemory bool
	// Run is the run id (generated when the configuration had none).
	Run string
}

// RunGroup runs protos over MQTT (protos[k] is agent cfg.Owned[k], or
// agent k of cfg.Agents when Owned is nil), starting an embedded broker
// when cfg names none, and returns when every agent has returned. The
// first agent to fail stops the others, and the error returned is the
// root cause (rootCause).
func RunGroup(ctx context.Context, cfg GroupConfig, protos []mva.Protocol) (GroupResult, error) {
	owned := cfg.Owned
	if owned == nil {
		owned = make([]int, len(cfg.Agents))
		for i := range owned {
			owned[i] = i
		}
	}
	if len(protos) != len(owned) {
		return GroupResult{}, fmt.Errorf("mqtt: %d protocol agents for %d agents run here", len(protos), len(owned))
	}
	for _, i := range owned {
		if i < 0 || i >= len(cfg.Agents) {
			return GroupResult{}, fmt.Errorf("mqtt: agent index %d outside 0..%d", i, len(cfg.Agents)-1)
		}
	}
	if cfg.Run == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		cfg.Run = "run-" + hex.EncodeToString(b[:])
	}
	memory := false
	if cfg.Broker.URL == "" {
		ec := cfg.Embedded
		if ec.Prefix == "" {
			ec.Prefix = cfg.Prefix
		}
		if need := cfg.Limits.withDefaults().MaxPayload + 4096; ec.MaxPacket == 0 && need > broker.DefaultMaxPacket {
			ec.MaxPacket = need
		}
		if ec.Logger == nil {
			ec.Logger = cfg.Logger
		}
		b, err := broker.Start(ec)
		if err != nil {
			return GroupResult{}, err
		}
		defer b.Close()
		cfg.Broker.URL = b.URL()
		if !cfg.EmbeddedTCP {
			cfg.Broker.Dial = b.Dial
			memory = true
		}
	}
	if cfg.Neighbours != nil {
		if err := checkNeighbours(cfg.Neighbours, len(cfg.Agents)); err != nil {
			return GroupResult{}, err
		}
		cfg.tree = newSpanTree(cfg.Neighbours)
	}
	index, err := agentIndex(cfg.Agents)
	if err != nil {
		return GroupResult{}, err
	}
	cfg.index = index
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	out := GroupResult{
		Results: make([]mva.AgentResult, len(protos)),
		Stats:   make([]Stats, len(protos)),
		Broker:  cfg.Broker.URL, Run: cfg.Run,
		InMemory: cfg.Broker.Dial != nil,
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	slots := cfg.Parallel
	if slots <= 0 {
		slots = runtime.GOMAXPROCS(0)
	}
	compute := make(chan struct{}, slots)
	admit := make(chan struct{}, admitSlots)
	for k, p := range protos {
		ac := AgentConfig{Config: cfg.Config, Agent: owned[k], Compute: compute, Admit: admit, inMemory: memory}
		if cfg.Credentials != nil {
			ac.Broker.Username, ac.Broker.Password = cfg.Credentials(cfg.Agents[owned[k]])
		}
		if k < len(cfg.Checks) {
			ac.Checks = cfg.Checks[k]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, st, err := RunAgent(ctx, ac, p)
			mu.Lock()
			defer mu.Unlock()
			out.Results[k], out.Stats[k] = r, st
			if err != nil {
				errs = append(errs, err)
				cancel()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return out, rootCause(errs)
	}
	m := &out.Metrics
	for _, s := range out.Stats {
		m.Messages += s.Sent
		m.InternalMessages += s.Internal
		m.TotalMessageBytes += s.MessageBytes
		m.MaxMessageBytes = max(m.MaxMessageBytes, s.MaxMessageBytes)
		m.NCCC = max(m.NCCC, s.NCCC)
	}
	m.WallMs = float64(time.Since(start).Microseconds()) / 1000
	return out, nil
}

// admitSlots is how many agents of a RunGroup join the run at once
// (AgentConfig.Admit): enough to keep the broker busy while one agent
// waits for its acknowledgements, few enough that the retained statuses
// their subscriptions bring never pile up.
const admitSlots = 8

// AgentNames returns p's agent names when they can all be agent names on
// MQTT (topic.CheckAgent), otherwise "a0", "a1", …, so that any instance
// file can run over MQTT.
func AgentNames(p *mva.Problem) []string {
	names := make([]string, len(p.Agents))
	seen := map[string]bool{}
	ok := true
	for i, a := range p.Agents {
		names[i] = a.Name
		ok = ok && topic.CheckAgent(a.Name) == nil && !seen[a.Name]
		seen[a.Name] = true
	}
	if !ok {
		for i := range names {
			names[i] = "a" + strconv.Itoa(i)
		}
	}
	return names
}

// Group is RunGroup as a pipeline.Runtime: the agents a pipeline run
// hands it run over MQTT with Config (Agents, when empty, are
// AgentNames of the run's problem; Owner, Owned and Checks are the
// run's). A Group serves one run at a time; Last is that run's result
// (transport counters, broker, run id).
type Group struct {
	Config GroupConfig
	Last   GroupResult
}

// alongEdges are the protocols whose agents send only to the agents they
// share a function with (the local searches' VALUEs, gains and offers):
// Group.Run runs them with Config.Neighbours, so that an agent reads the
// statuses of its neighbours only. AFB sends its partial assignments
// along an ordering of every agent, and DPOP's DFS token crosses between
// the components of the graph: they keep the statuses of all (the
// quiescent rule).
var alongEdges = map[string]bool{"mgm": true, "mgm2": true, "dgibbs": true}

// Run runs r's agents with RunGroup.
func (g *Group) Run(ctx context.Context, r pipeline.Run) (pipeline.Outcome, error) {
	cfg := g.Config
	if len(cfg.Agents) == 0 {
		cfg.Agents = AgentNames(r.Problem)
	}
	if len(cfg.Agents) != len(r.Problem.Agents) {
		return pipeline.Outcome{}, fmt.Errorf("mqtt: %d agent names for %d agents", len(cfg.Agents), len(r.Problem.Agents))
	}
	if cfg.Neighbours == nil && alongEdges[cfg.Protocol] && len(r.Agents) > 0 && r.Agents[0].Node.Decomp != nil {
		cfg.Neighbours = r.Agents[0].Node.Decomp.Neighbours()
		if l := links(r); l != nil {
			cfg.Neighbours = l
		}
	}
	cfg.Owner = r.Owner
	cfg.Owned = nil
	if !r.All() {
		cfg.Owned = make([]int, len(r.Agents))
	}
	cfg.Checks = make([]func() int64, len(r.Agents))
	protos := make([]mva.Protocol, len(r.Agents))
	for k, a := range r.Agents {
		if cfg.Owned != nil {
			cfg.Owned[k] = a.Node.ID
		}
		cfg.Checks[k] = a.Checks
		protos[k] = a.Protocol
	}
	gr, err := RunGroup(ctx, cfg, protos)
	g.Last = gr
	return pipeline.Outcome{Results: gr.Results, Metrics: gr.Metrics}, err
}

// Refused reports whether err says that the broker refused the client's
// credentials or id, which no new attempt can change.
func Refused(err error) bool {
	for _, e := range []error{packets.ErrorRefusedBadUsernameOrPassword, packets.ErrorRefusedNotAuthorised, packets.ErrorRefusedIDRejected} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// rootCause picks, among the agents' errors in the order they came, the
// first that is not an echo of another (a peer's failure, or the
// cancellation that followed it).
func rootCause(errs []error) error {
	for _, err := range errs {
		if !errors.Is(err, ErrPeerFailed) && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	return errs[0]
}

// Linker is a protocol agent that exchanges messages with fewer agents
// than it shares functions with: MGM through its relay talks to the hub
// alone, not to the n−1 homes of a complete graph. Links returns them,
// in increasing order.
type Linker interface {
	Links() []int
}

// unwrapper is a protocol wrapped by the runtime (a progress counter).
type unwrapper interface {
	Unwrap() mva.Protocol
}

// links returns the graph of the agents' Links where the run holds every
// agent and each of them is a Linker, so that an agent subscribes to the
// statuses, presence and multicasts of the agents it talks to; nil
// otherwise (a run of one home per process keeps the constraint graph).
func links(r pipeline.Run) [][]int {
	if !r.All() {
		return nil
	}
	out := make([][]int, len(r.Agents))
	for k, a := range r.Agents {
		p := a.Protocol
		for {
			u, ok := p.(unwrapper)
			if !ok {
				break
			}
			p = u.Unwrap()
		}
		l, ok := p.(Linker)
		if !ok {
			return nil
		}
		out[k] = l.Links()
	}
	if checkNeighbours(out, len(out)) != nil {
		return nil
	}
	return out
}
