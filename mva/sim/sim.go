// Package sim is the deterministic in-process runtime for protocol agents:
// it delivers their messages, keeps the research metrics (simulated
// runtime, NCCC, message counts and sizes) and injects wire faults.
// Runtime is it as a pipeline.Runtime; Solve runs the pipeline on it.
//
// Delivery order is decided by a seeded rule, never by timing, so a run is
// reproducible; compute time is measured only to advance the simulated
// clocks. Faults (duplicates, reordering) are applied on the "wire"; a link
// layer with per-link sequence numbers — the same scheme as the MQTT
// envelope — restores exactly-once FIFO delivery per link, which is the
// delivery model every protocol assumes.
package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/pipeline"
)

// Faults are wire-level faults injected between agents.
type Faults struct {
	// Duplicate is the probability that a message is delivered twice.
	Duplicate float64
	// Reorder is the probability that, at each delivery, a random message
	// in flight overtakes the oldest one (across and within links).
	Reorder float64
	// Jitter delays each message by an extra uniform random time in
	// [0, Jitter) on the simulated clock, as a congested network would.
	Jitter time.Duration
}

// Config tunes a run.
type Config struct {
	// Delay is the simulated latency of every message.
	Delay time.Duration
	// Faults are wire faults; the link layer hides them from protocols.
	Faults Faults
	// Seed drives fault injection and the interleaving of links.
	Seed uint64
	// Owner maps each agent to the real agent it belongs to, for the
	// decomposition baseline whose pseudo-agents live inside one real
	// agent: messages between agents of the same owner are internal.
	// Nil means every agent is its own owner.
	Owner []int
	// SetupMs is the compute time each agent spent before Start (filling
	// an eager MVA table), charged to its clock.
	SetupMs []float64
	// MaxDeliveries stops a run that does not converge; 0 means 50 million.
	MaxDeliveries int64
}

// AgentMetrics are one agent's figures.
type AgentMetrics struct {
	SimTimeMs float64 `json:"sim_time_ms"`
	ComputeMs float64 `json:"compute_ms"`
	Sent      int64   `json:"sent"`
	Received  int64   `json:"received"`
	NCCC      int64   `json:"nccc"`
}

// Outcome is what a run returns.
type Outcome struct {
	Results  []mva.AgentResult
	Metrics  mva.Metrics
	PerAgent []AgentMetrics
	// Duplicates and Reordered count the injected faults, so tests can
	// check that faults really happened.
	Duplicates, Reordered int64
}

// CheckCounter is pipeline.CheckCounter, for the protocols' assertions.
type CheckCounter = pipeline.CheckCounter

// envelope is a message on the wire.
type envelope struct {
	msg    mva.Message
	seq    uint64
	sentAt float64 // sender's simulated clock, ms
	jitter float64 // extra simulated latency injected as a fault, ms
	nccc   int64
}

type link struct{ from, to int }

// ErrStalled is returned when no message is in flight but some agent is
// not done: the protocol deadlocked.
var ErrStalled = errors.New("protocol stalled")

// Run drives protos (one per node, same order) until every agent is done
// and no message is in flight.
func Run(ctx context.Context, nodes []*mva.Node, protos []mva.Protocol, cfg Config) (Outcome, error) {
	n := len(protos)
	if len(nodes) != n {
		return Outcome{}, fmt.Errorf("sim: %d nodes for %d protocol agents", len(nodes), n)
	}
	owner := cfg.Owner
	if owner == nil {
		owner = make([]int, n)
		for i := range owner {
			owner[i] = i
		}
	}
	maxDeliveries := cfg.MaxDeliveries
	if maxDeliveries <= 0 {
		maxDeliveries = 50_000_000
	}
	r := &runner{
		ctx: ctx, nodes: nodes, protos: protos, cfg: cfg, owner: owner,
		rng:      rand.New(rand.NewPCG(cfg.Seed, 0x5eed)),
		clock:    make([]float64, n),
		nccc:     make([]int64, n),
		per:      make([]AgentMetrics, n),
		sendSeq:  map[link]uint64{},
		nextSeq:  map[link]uint64{},
		buffered: map[link]map[uint64]envelope{},
		delay:    float64(cfg.Delay.Nanoseconds()) / 1e6,
	}
	wall := time.Now()
	for i := range protos {
		if i < len(cfg.SetupMs) {
			r.clock[i] = cfg.SetupMs[i]
			r.per[i].ComputeMs = cfg.SetupMs[i]
		}
		// Checks made before Start (an eager MVA table) count too.
		r.nccc[i] = r.checks(i)
		if err := r.call(i, nil); err != nil {
			return Outcome{}, err
		}
	}
	var deliveries int64
	for len(r.queue) > r.head {
		if err := ctx.Err(); err != nil {
			return Outcome{}, err
		}
		if deliveries++; deliveries > maxDeliveries {
			return Outcome{}, fmt.Errorf("sim: no convergence after %d deliveries", maxDeliveries)
		}
		idx := 0
		if live := len(r.queue) - r.head; cfg.Faults.Reorder > 0 && live > 1 && r.rng.Float64() < cfg.Faults.Reorder {
			idx = 1 + r.rng.IntN(live-1)
			r.out.Reordered++
		}
		e := r.pop(idx)
		for _, d := range r.receive(e) {
			if err := r.call(d.msg.To, &d); err != nil {
				return Outcome{}, err
			}
		}
	}
	var stuck []int
	for i, p := range protos {
		if !p.Done() {
			stuck = append(stuck, i)
		}
	}
	if len(stuck) > 0 {
		return Outcome{}, fmt.Errorf("%w: no message in flight but agents %v are not done", ErrStalled, stuck)
	}
	out := r.out
	out.PerAgent = r.per
	out.Results = make([]mva.AgentResult, n)
	for i, p := range protos {
		out.Results[i] = p.Result()
		r.per[i].SimTimeMs = r.clock[i]
		r.per[i].NCCC = r.nccc[i]
		out.Metrics.SimTimeMs = math.Max(out.Metrics.SimTimeMs, r.clock[i])
		out.Metrics.NCCC = max(out.Metrics.NCCC, r.nccc[i])
	}
	out.Metrics.WallMs = float64(time.Since(wall).Microseconds()) / 1000
	return out, nil
}

type runner struct {
	ctx    context.Context
	nodes  []*mva.Node
	protos []mva.Protocol
	cfg    Config
	owner  []int
	rng    *rand.Rand
	// queue[head:] are the messages in flight, oldest first: popping
	// the front moves head instead of shifting the slice, which took a
	// third of the CPU on runs of many agents.
	queue    []envelope
	head     int
	clock    []float64
	nccc     []int64
	per      []AgentMetrics
	sendSeq  map[link]uint64
	nextSeq  map[link]uint64
	buffered map[link]map[uint64]envelope
	delay    float64
	out      Outcome
}

// checks returns agent i's constraint checks so far.
func (r *runner) checks(i int) int64 {
	return pipeline.Agent{Node: r.nodes[i], Protocol: r.protos[i]}.Checks()
}

// call runs Start (e == nil) or Step on agent i, advances its clocks and
// puts what it sends on the wire.
func (r *runner) call(i int, e *envelope) error {
	if e != nil {
		r.clock[i] = math.Max(r.clock[i], e.sentAt+r.delay+e.jitter)
		r.nccc[i] = max(r.nccc[i], e.nccc)
		r.per[i].Received++
	}
	before := r.checks(i)
	start := time.Now()
	var (
		msgs []mva.Message
		err  error
	)
	if e == nil {
		msgs, err = r.protos[i].Start(r.ctx)
	} else {
		msgs, err = r.protos[i].Step(r.ctx, e.msg)
	}
	ms := float64(time.Since(start).Nanoseconds()) / 1e6
	if err != nil {
		return fmt.Errorf("agent %d: %w", i, err)
	}
	r.clock[i] += ms
	r.per[i].ComputeMs += ms
	r.nccc[i] += r.checks(i) - before
	for _, m := range msgs {
		if m.From != i || m.To < 0 || m.To >= len(r.protos) || m.To == i {
			return fmt.Errorf("agent %d sent a message from %d to %d", i, m.From, m.To)
		}
		r.send(envelope{msg: m, sentAt: r.clock[i], nccc: r.nccc[i]})
	}
	return nil
}

func (r *runner) send(e envelope) {
	l := link{e.msg.From, e.msg.To}
	e.seq = r.sendSeq[l]
	r.sendSeq[l]++
	size := int64(len(e.msg.Body) + len(e.msg.Kind))
	if r.owner[e.msg.From] == r.owner[e.msg.To] {
		r.out.Metrics.InternalMessages++
	} else {
		r.out.Metrics.Messages++
		r.out.Metrics.TotalMessageBytes += size
		r.out.Metrics.MaxMessageBytes = max(r.out.Metrics.MaxMessageBytes, size)
	}
	r.per[e.msg.From].Sent++
	if j := r.cfg.Faults.Jitter; j > 0 {
		e.jitter = r.rng.Float64() * float64(j.Nanoseconds()) / 1e6
	}
	r.queue = append(r.queue, e)
	if r.cfg.Faults.Duplicate > 0 && r.rng.Float64() < r.cfg.Faults.Duplicate {
		r.queue = append(r.queue, e)
		r.out.Duplicates++
	}
}

// receive is the link layer: it drops duplicates, holds messages that
// overtook earlier ones on their link, and returns what may now be
// delivered, in order.
func (r *runner) receive(e envelope) []envelope {
	l := link{e.msg.From, e.msg.To}
	next := r.nextSeq[l]
	if e.seq < next {
		return nil // duplicate of something delivered
	}
	if e.seq > next {
		if r.buffered[l] == nil {
			r.buffered[l] = map[uint64]envelope{}
		}
		r.buffered[l][e.seq] = e
		return nil
	}
	out := []envelope{e}
	next++
	for {
		b, ok := r.buffered[l][next]
		if !ok {
			break
		}
		delete(r.buffered[l], next)
		out = append(out, b)
		next++
	}
	r.nextSeq[l] = next
	return out
}

// pop removes and returns the message idx places behind the oldest in
// flight.
func (r *runner) pop(idx int) envelope {
	i := r.head + idx
	e := r.queue[i]
	if idx > 0 {
		r.queue = slices.Delete(r.queue, i, i+1)
		return e
	}
	r.queue[i] = envelope{} // let the body be collected
	r.head++
	if r.head >= 1024 && 2*r.head >= len(r.queue) {
		n := copy(r.queue, r.queue[r.head:])
		clear(r.queue[n:])
		r.queue, r.head = r.queue[:n], 0
	}
	return e
}
