package sim

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
)

// counter is a test protocol: at Start every agent sends k numbered
// messages to every other agent; a receiver checks that each link
// delivers 0, 1, 2, … exactly once and in order.
type counter struct {
	id, n, k int
	next     []int
	err      error
	got      int
}

func (c *counter) Start(context.Context) ([]mva.Message, error) {
	var out []mva.Message
	for to := range c.n {
		if to == c.id {
			continue
		}
		for s := range c.k {
			out = append(out, mva.Message{From: c.id, To: to, Kind: "N", Body: []byte{byte(s)}})
		}
	}
	return out, nil
}

func (c *counter) Step(_ context.Context, m mva.Message) ([]mva.Message, error) {
	if int(m.Body[0]) != c.next[m.From] && c.err == nil {
		c.err = fmt.Errorf("agent %d: from %d got %d, want %d", c.id, m.From, m.Body[0], c.next[m.From])
	}
	c.next[m.From]++
	c.got++
	return nil, nil
}

func (c *counter) Done() bool { return c.got == (c.n-1)*c.k }

func (c *counter) Result() mva.AgentResult { return mva.AgentResult{} }

func newCounters(n, k int) ([]*mva.Node, []mva.Protocol, []*counter) {
	nodes := make([]*mva.Node, n)
	protos := make([]mva.Protocol, n)
	cs := make([]*counter, n)
	for i := range n {
		nodes[i] = &mva.Node{ID: i, NumAgents: n}
		cs[i] = &counter{id: i, n: n, k: k, next: make([]int, n)}
		protos[i] = cs[i]
	}
	return nodes, protos, cs
}

func TestLinkLayerUnderFaults(t *testing.T) {
	tests := []struct {
		name   string
		faults Faults
	}{
		{"clean", Faults{}},
		{"duplicates", Faults{Duplicate: 0.5}},
		{"reordering", Faults{Reorder: 0.7}},
		{"both", Faults{Duplicate: 0.3, Reorder: 0.5}},
		{"jitter", Faults{Reorder: 0.3, Jitter: 5_000_000}},
	}
	for _, tc := range tests {
		for seed := uint64(1); seed <= 5; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", tc.name, seed), func(t *testing.T) {
				const n, k = 4, 20
				nodes, protos, cs := newCounters(n, k)
				out, err := Run(context.Background(), nodes, protos, Config{Faults: tc.faults, Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range cs {
					if c.err != nil {
						t.Fatal(c.err)
					}
				}
				if out.Metrics.Messages != n*(n-1)*k {
					t.Errorf("messages = %d, want %d", out.Metrics.Messages, n*(n-1)*k)
				}
				if tc.faults.Duplicate > 0 && out.Duplicates == 0 {
					t.Error("no duplicate was injected")
				}
				if tc.faults.Reorder > 0 && out.Reordered == 0 {
					t.Error("no message was reordered")
				}
			})
		}
	}
}

func TestInternalMessagesAndClock(t *testing.T) {
	nodes, protos, _ := newCounters(4, 3)
	// Agents 0 and 1 are pseudo-agents of one real agent, 2 and 3 of
	// another: 2 of the 12 links are internal.
	out, err := Run(context.Background(), nodes, protos, Config{
		Owner: []int{0, 0, 1, 1}, Delay: 2_000_000, SetupMs: []float64{5, 0, 0, 0},
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Metrics.InternalMessages != 4*3 || out.Metrics.Messages != 8*3 {
		t.Errorf("internal %d external %d, want 12 and 24", out.Metrics.InternalMessages, out.Metrics.Messages)
	}
	// Agent 0's messages leave at ≥ 5 ms and take 2 ms.
	if out.Metrics.SimTimeMs < 7 {
		t.Errorf("simulated time %.3f ms, want ≥ 7", out.Metrics.SimTimeMs)
	}
	if out.Metrics.MaxMessageBytes != 2 || out.Metrics.TotalMessageBytes != 2*24 {
		t.Errorf("bytes: max %d total %d", out.Metrics.MaxMessageBytes, out.Metrics.TotalMessageBytes)
	}
}

// silent never finishes and never sends: the runtime must report a stall
// rather than return a result.
type silent struct{}

func (silent) Start(context.Context) ([]mva.Message, error)             { return nil, nil }
func (silent) Step(context.Context, mva.Message) ([]mva.Message, error) { return nil, nil }
func (silent) Done() bool                                               { return false }
func (silent) Result() mva.AgentResult                                  { return mva.AgentResult{} }

func TestStall(t *testing.T) {
	_, err := Run(context.Background(), []*mva.Node{{}}, []mva.Protocol{silent{}}, Config{})
	if !errors.Is(err, ErrStalled) {
		t.Errorf("err = %v, want ErrStalled", err)
	}
}

// TestJitterDelaysTheClock: jitter only ever adds simulated latency.
func TestJitterDelaysTheClock(t *testing.T) {
	nodes, protos, _ := newCounters(3, 5)
	base, err := Run(context.Background(), nodes, protos, Config{Delay: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	nodes, protos, _ = newCounters(3, 5)
	jit, err := Run(context.Background(), nodes, protos, Config{Delay: 1_000_000, Faults: Faults{Jitter: 50_000_000}, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if jit.Metrics.SimTimeMs <= base.Metrics.SimTimeMs+1 {
		t.Errorf("jitter: %.3f ms, without: %.3f ms", jit.Metrics.SimTimeMs, base.Metrics.SimTimeMs)
	}
}
