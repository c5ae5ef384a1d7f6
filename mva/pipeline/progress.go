package pipeline

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/hearth-dcop/hearth/mva"
)

// Progress follows the agents of a run while it runs, for a progress line
// (`hearth sim --progress`): how many have started and are done, and how
// many messages they have sent and been delivered. It is read while the
// agents run, from another goroutine; the run's metrics are the runtime's
// (Outcome.Metrics), not these.
type Progress struct {
	mu     sync.Mutex
	agents []agentProgress
}

type agentProgress struct {
	started, done   atomic.Bool
	delivered, sent atomic.Int64
}

// Snapshot returns the figures so far.
func (p *Progress) Snapshot() (agents, started, done int, delivered, sent int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.agents {
		a := &p.agents[i]
		if a.started.Load() {
			started++
		}
		if a.done.Load() {
			done++
		}
		delivered += a.delivered.Load()
		sent += a.sent.Load()
	}
	return len(p.agents), started, done, delivered, sent
}

// begin prepares the counters of a run of n agents.
func (p *Progress) begin(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.agents = make([]agentProgress, n)
}

// wrap returns proto reporting to the counters of agent k of the run
// (begin made them; they stay in place while the run lasts).
func (p *Progress) wrap(proto mva.Protocol, k int) mva.Protocol {
	p.mu.Lock()
	defer p.mu.Unlock()
	return &followed{Protocol: proto, c: &p.agents[k]}
}

// followed is one agent's protocol reporting to a Progress. It keeps the
// protocol's own constraint checks visible (CheckCounter).
type followed struct {
	mva.Protocol
	c *agentProgress
}

// Unwrap returns the protocol f reports for, for runtimes that ask
// what it is (mqtt.Linker).
func (f *followed) Unwrap() mva.Protocol { return f.Protocol }

func (f *followed) Start(ctx context.Context) ([]mva.Message, error) {
	out, err := f.Protocol.Start(ctx)
	c := f.c
	c.started.Store(true)
	c.sent.Add(int64(len(out)))
	c.done.Store(f.Protocol.Done())
	return out, err
}

func (f *followed) Step(ctx context.Context, m mva.Message) ([]mva.Message, error) {
	out, err := f.Protocol.Step(ctx, m)
	c := f.c
	c.delivered.Add(1)
	c.sent.Add(int64(len(out)))
	c.done.Store(f.Protocol.Done())
	return out, err
}

// Checks forwards the protocol's own constraint checks.
func (f *followed) Checks() int64 {
	if cc, ok := f.Protocol.(CheckCounter); ok {
		return cc.Checks()
	}
	return 0
}
