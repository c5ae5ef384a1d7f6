package dpop

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/gen"
	"github.com/hearth-dcop/hearth/mva/join"
)

// fakeChain is a Chain whose "device" is a map: a kept table is moved
// there and its Costs set to nil, so that any read of it by the agent
// outside the chain (or a second read by the chain) fails loudly. It runs
// the joins with the CPU kernel and counts what happened.
type fakeChain struct {
	offload func(*join.JoinProject) bool
	keeps   bool // false: a chain whose device is always full
	kept    map[*join.Factor][]float64
	stats   *chainStats
	closed  bool
}

type chainStats struct {
	chains, steps, kept, hosted, leftAtClose int
}

func (c *fakeChain) Offload(p *join.JoinProject) bool { return c.offload(p) }

func (c *fakeChain) Step(ctx context.Context, p *join.JoinProject, out *join.Factor, keep bool, argmin []int32) error {
	if c.closed {
		return fmt.Errorf("step after Close")
	}
	if !c.offload(p) {
		return fmt.Errorf("Step of a plan Offload refused")
	}
	c.stats.steps++
	var used []*join.Factor
	for _, f := range p.Inputs() {
		if k, ok := c.kept[f]; ok {
			f.Costs = k
			used = append(used, f)
		} else if f.Costs == nil {
			return fmt.Errorf("an input with no table, neither kept nor on the host")
		}
	}
	dst := out.Costs
	if keep {
		if dst != nil {
			return fmt.Errorf("keep with an output table already on the host")
		}
		dst = make([]float64, p.Rows())
	} else if len(dst) != p.Rows() {
		return fmt.Errorf("output of %d entries for %d rows", len(dst), p.Rows())
	}
	err := p.Run(ctx, dst, argmin, 1)
	for _, f := range used {
		f.Costs = nil // consumed: a second read fails
		delete(c.kept, f)
	}
	if keep && c.keeps {
		c.kept[out] = dst
		c.stats.kept++
	} else {
		out.Costs = dst
	}
	return err
}

func (c *fakeChain) Host(_ context.Context, f *join.Factor) error {
	k, ok := c.kept[f]
	if !ok {
		return fmt.Errorf("Host of a table the chain does not hold")
	}
	f.Costs = k
	delete(c.kept, f)
	c.stats.hosted++
	return nil
}

func (c *fakeChain) Close() error {
	if c.closed {
		return fmt.Errorf("second Close")
	}
	c.closed = true
	c.stats.leftAtClose += len(c.kept)
	return nil
}

// TestChainMatchesCPU runs DPOP with its UTIL joins through chains that
// keep intermediate tables out of the agent's reach (all joins, the large
// ones only, or keeping nothing) and checks that every message is byte for
// byte the one the CPU run sends, that each chain is closed with nothing
// left in it, and that intermediate tables come to the host only for a
// join the CPU runs.
func TestChainMatchesCPU(t *testing.T) {
	ctx := context.Background()
	modes := []struct {
		name    string
		offload func(*join.JoinProject) bool
		keeps   bool
	}{
		{"all", func(*join.JoinProject) bool { return true }, true},
		{"some", func(p *join.JoinProject) bool { return len(p.Out())%2 == 0 }, true},
		{"full device", func(*join.JoinProject) bool { return true }, false},
	}
	total := make([]chainStats, len(modes))
	for seed := range uint64(12) {
		p, err := gen.Random(seed, gen.RandomOptions{
			Agents: 3 + int(seed%2), Vars: 5, Domain: 3, LocalDensity: 0.6, BoundaryRatio: 0.6, GlobalDensity: 0.4,
			Tightness: 1, MaxArity: 2, MinCost: 1, MaxCost: 1000,
		})
		if err != nil {
			t.Fatal(err)
		}
		_, agents := buildAgents(t, p, nil)
		want, err := fifo(ctx, agents, -1)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for mi, m := range modes {
			st := &total[mi]
			_, agents := buildAgents(t, p, nil)
			for _, a := range agents {
				a.chains = func() Chain {
					st.chains++
					return &fakeChain{offload: m.offload, keeps: m.keeps, kept: map[*join.Factor][]float64{}, stats: st}
				}
			}
			got, err := fifo(ctx, agents, -1)
			if err != nil {
				t.Fatalf("seed %d %s: %v", seed, m.name, err)
			}
			sameTrace(t, fmt.Sprintf("seed %d %s", seed, m.name), want, got)
		}
	}
	for mi, m := range modes {
		st := total[mi]
		t.Logf("%s: %+v", m.name, st)
		if st.chains == 0 || st.steps == 0 {
			t.Fatalf("%s: no join ran through a chain: %+v", m.name, st)
		}
		if st.leftAtClose != 0 {
			t.Errorf("%s: %d kept tables left unread at Close", m.name, st.leftAtClose)
		}
		switch m.name {
		case "all":
			if st.kept == 0 || st.hosted != 0 {
				t.Errorf("%s: %d tables kept, %d brought back; want some, none", m.name, st.kept, st.hosted)
			}
		case "some":
			if st.hosted == 0 {
				t.Errorf("%s: no kept table was brought back for the CPU: the path is not exercised", m.name)
			}
		case "full device":
			if st.kept != 0 || st.hosted != 0 {
				t.Errorf("%s: %d kept, %d brought back", m.name, st.kept, st.hosted)
			}
		}
	}
}

// sameTrace fails unless both traces hold the same messages, bodies byte
// for byte, in the same order.
func sameTrace(t *testing.T, name string, want, got []mva.Message) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: %d messages, the CPU run sent %d", name, len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.From != g.From || w.To != g.To || w.Kind != g.Kind || !bytes.Equal(w.Body, g.Body) {
			t.Fatalf("%s: message %d is %d→%d %s, the CPU run's %d→%d %s (or bodies differ)", name, i, g.From, g.To, g.Kind, w.From, w.To, w.Kind)
		}
	}
}
