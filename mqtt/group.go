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

	"github.com/hearth-dcop/hearth/mqtt/broker"
	"github.com/hearth-dcop/hearth/mqtt/topic"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// GroupConfig configures RunGroup: every agent of a run in this process,
// each with its own MQTT client, as `hearth sim` runs a neighbourhood on
// one machine.
type GroupConfig struct {
	Config
	// Embedded configures the broker RunGroup starts, on loopback, when
	// Broker.URL is empty. Its MaxPacket defaults to what Limits need.
	// The agents reach it through memory (broker.Broker.Dial), unless
	// EmbeddedTCP is set; outside clients reach it on its TCP address.
	Embedded broker.Config
	// EmbeddedTCP connects the agents to the embedded broker over its
	// loopback TCP listener, as separate processes would, instead of
	// through memory.
	EmbeddedTCP bool
	// Checks[i], when set, returns agent i's constraint checks (NCCC).
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

// RunGroup runs protos (agent i is protos[i] and cfg.Agents[i]) over MQTT,
// starting an embedded broker when cfg names none, and returns when every
// agent has returned. The first agent to fail stops the others.
func RunGroup(ctx context.Context, cfg GroupConfig, protos []mva.Protocol) (GroupResult, error) {
	if len(protos) != len(cfg.Agents) {
		return GroupResult{}, fmt.Errorf("mqtt: %d protocol agents for %d agent names", len(protos), len(cfg.Agents))
	}
	if cfg.Run == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		cfg.Run = "run-" + hex.EncodeToString(b[:])
	}
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
		}
	}
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
	for i, p := range protos {
		ac := AgentConfig{Config: cfg.Config, Agent: i, Compute: compute}
		if cfg.Credentials != nil {
			ac.Broker.Username, ac.Broker.Password = cfg.Credentials(cfg.Agents[i])
		}
		if i < len(cfg.Checks) {
			ac.Checks = cfg.Checks[i]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, st, err := RunAgent(ctx, ac, p)
			mu.Lock()
			defer mu.Unlock()
			out.Results[i], out.Stats[i] = r, st
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
		m.TotalMessageBytes += s.MessageBytes
		m.MaxMessageBytes = max(m.MaxMessageBytes, s.MaxMessageBytes)
		m.NCCC = max(m.NCCC, s.NCCC)
	}
	m.WallMs = float64(time.Since(start).Microseconds()) / 1000
	return out, nil
}

// NodeChecks returns the constraint checks of node n's local solver and,
// when it counts its own (sim.CheckCounter), protocol p's.
func NodeChecks(n *mva.Node, p mva.Protocol) func() int64 {
	return func() int64 {
		var c int64
		if n.Local != nil && n.Local.Solver != nil {
			c += n.Local.Solver.Checks()
		}
		if cc, ok := p.(sim.CheckCounter); ok {
			c += cc.Checks()
		}
		return c
	}
}

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

// Solve is sim.Solve over MQTT: it decomposes p, builds one protocol agent
// per agent, runs them with RunGroup (cfg.Agents is filled from p) and
// assembles the answer. o.Config (the simulated runtime's faults and
// delays) is ignored.
func Solve(ctx context.Context, p *mva.Problem, o sim.Options, cfg GroupConfig) (sim.Solution, GroupResult, error) {
	if o.Protocol == nil || o.Solver == nil {
		return sim.Solution{}, GroupResult{}, errors.New("mqtt: a protocol and a local solver are required")
	}
	d := mva.Decompose(p)
	nodes, _, err := mva.BuildNodes(ctx, d, o.Solver, o.Eager, o.Seed, o.Params)
	if err != nil {
		return sim.Solution{}, GroupResult{}, err
	}
	protos := make([]mva.Protocol, len(nodes))
	cfg.Checks = make([]func() int64, len(nodes))
	for i, n := range nodes {
		if protos[i], err = o.Protocol(n); err != nil {
			return sim.Solution{}, GroupResult{}, fmt.Errorf("agent %s: %w", p.Agents[i].Name, err)
		}
		cfg.Checks[i] = NodeChecks(n, protos[i])
	}
	cfg.Agents = AgentNames(p)
	gr, err := RunGroup(ctx, cfg, protos)
	if err != nil {
		return sim.Solution{}, gr, err
	}
	views := make([]*mva.LocalView, len(nodes))
	for i, n := range nodes {
		views[i] = n.Local
	}
	assign, cost, err := mva.Assemble(ctx, d, views, gr.Results)
	if err != nil {
		return sim.Solution{}, gr, err
	}
	optimal := len(gr.Results) > 0
	for _, r := range gr.Results {
		optimal = optimal && r.Optimal
	}
	sol := sim.Solution{Assign: assign, Cost: cost, Optimal: optimal,
		Outcome: sim.Outcome{Results: gr.Results, Metrics: gr.Metrics}}
	return sol, gr, nil
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
