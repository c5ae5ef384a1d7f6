package solve

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
)

// TestResponseNote checks the note on exact best responses against
// counts tallied by hand: agents that computed neither kind are left out,
// and a run without an exact response has no note (the default, block
// descent, prints nothing new).
func TestResponseNote(t *testing.T) {
	for _, tc := range []struct {
		name   string
		counts [][2]int64
		want   []string // what the note must say; nil: no note
	}{
		{"no agents", nil, nil},
		{"bucket elimination only", [][2]int64{{0, 0}, {0, 0}}, nil},
		{"block descent only", [][2]int64{{0, 5}, {0, 3}}, nil},
		{"all exact", [][2]int64{{4, 0}, {3, 0}, {0, 0}}, []string{"2 of 2 agents computed every response exactly, 0 only some", ", 0 none (", "; 7 exact and 0 block-descent responses in all"}},
		{"mixed", [][2]int64{{10, 0}, {5, 5}, {0, 10}, {0, 0}, {1, 9}}, []string{"1 of 4 agents computed every response exactly, 2 only some", ", 1 none (", "; 16 exact and 24 block-descent responses in all"}},
	} {
		got := responseNote(tc.counts)
		if tc.want == nil && got != "" {
			t.Errorf("%s: note %q, want none", tc.name, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: note %q, want it to say %q", tc.name, got, w)
			}
		}
	}
}

// countingAgent is a protocol agent with fixed response counts.
type countingAgent struct {
	mva.Protocol
	exact, blocks int64
}

func (a countingAgent) ResponseCounts() (int64, int64) { return a.exact, a.blocks }

// TestCountingFactory checks that the agents a run builds, concurrently,
// are all counted, and only those that count their responses.
func TestCountingFactory(t *testing.T) {
	d := &Run{}
	build := d.counting(func(n *mva.Node) (mva.Protocol, error) {
		switch {
		case n.ID%3 == 0:
			return nil, fmt.Errorf("agent %d: no protocol", n.ID)
		case n.ID%3 == 1:
			return countingAgent{exact: int64(n.ID), blocks: 1}, nil
		}
		return nil, nil // a protocol that does not count its responses
	})
	const agents = 30
	var wg sync.WaitGroup
	for id := range agents {
		wg.Go(func() { _, _ = build(&mva.Node{ID: id}) })
	}
	wg.Wait()
	var exact, blocks int64
	for _, c := range d.counters {
		e, b := c.ResponseCounts()
		exact, blocks = exact+e, blocks+b
	}
	// Agents 1, 4, …, 28 count: 10 of them, IDs summing to 145.
	if len(d.counters) != 10 || exact != 145 || blocks != 10 {
		t.Fatalf("%d counting agents, %d exact and %d block responses; want 10, 145 and 10", len(d.counters), exact, blocks)
	}
}
