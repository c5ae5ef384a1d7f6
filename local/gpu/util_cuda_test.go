//go:build cuda

package gpu

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/gen"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
)

// dpopNodes builds the nodes of p's MVA decomposition with eager tables
// filled by local BE on the CPU.
func dpopNodes(t testing.TB, p *mva.Problem) []*mva.Node {
	t.Helper()
	nodes, _, err := mva.BuildNodes(context.Background(), mva.Decompose(p), func(lp *mva.LocalProblem) (mva.LocalSolver, error) {
		return local.New("be", lp)
	}, true, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

// dpopTrace runs DPOP over p's nodes with the agents newAgent makes,
// delivering messages in the order they were sent, and returns every
// message.
func dpopTrace(t testing.TB, p *mva.Problem, newAgent func(*mva.Node) (mva.Protocol, error)) []mva.Message {
	t.Helper()
	return runDPOP(t, dpopNodes(t, p), newAgent)
}

func runDPOP(t testing.TB, nodes []*mva.Node, newAgent func(*mva.Node) (mva.Protocol, error)) []mva.Message {
	t.Helper()
	ctx := context.Background()
	var err error
	agents := make([]mva.Protocol, len(nodes))
	for i, n := range nodes {
		if agents[i], err = newAgent(n); err != nil {
			t.Fatal(err)
		}
	}
	var queue, trace []mva.Message
	for _, a := range agents {
		out, err := a.Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		queue = append(queue, out...)
	}
	for len(queue) > 0 {
		m := queue[0]
		queue = queue[1:]
		trace = append(trace, m)
		out, err := agents[m.To].Step(ctx, m)
		if err != nil {
			t.Fatalf("agent %d: %v", m.To, err)
		}
		queue = append(queue, out...)
	}
	for i, a := range agents {
		if !a.Done() {
			t.Fatalf("agent %d is not done", i)
		}
	}
	return trace
}

// TestUtilChainDPOP runs DPOP with its UTIL joins on the device (every
// join, a mix with the small ones on the CPU, the default threshold), also
// with a budget so small that tables are chunked and evicted, and requires
// every message (the UTIL tables, the VALUE decisions) to be byte for byte
// the CPU run's, every chain to end with nothing left on the device, and
// intermediate tables to have stayed there.
func TestUtilChainDPOP(t *testing.T) {
	big := openDevice(t, Options{})
	small := openDevice(t, Options{Budget: 1 << 20})
	type total struct{ chains, kept, fetched, evictions, onCPU int }
	sums := map[string]*total{}
	for seed := range uint64(30) {
		p, err := gen.Random(seed, gen.RandomOptions{
			Agents: 3 + int(seed%3), Vars: 6, Domain: 4 + int(seed%3), LocalDensity: 0.5, BoundaryRatio: 0.5,
			GlobalDensity: 0.15, Tightness: 0.9, MaxArity: 2, MinCost: 1, MaxCost: 1000,
		})
		if err != nil {
			t.Fatal(err)
		}
		want := dpopTrace(t, p, dpop.New)
		for _, dev := range []struct {
			name string
			d    *Device
		}{{"", big}, {"1 MiB ", small}} {
			for _, m := range thresholds {
				tag := fmt.Sprintf("%smin %d", dev.name, m)
				s := sums[tag]
				if s == nil {
					s = &total{}
					sums[tag] = s
				}
				var chains []*UtilChain
				got := dpopTrace(t, p, dpop.WithChains(func() dpop.Chain {
					c := NewUtilChain(dev.d, m)
					chains = append(chains, c)
					return c
				}))
				if len(got) != len(want) {
					t.Fatalf("seed %d %s: %d messages, the CPU sent %d", seed, tag, len(got), len(want))
				}
				for i := range want {
					w, g := want[i], got[i]
					if w.From != g.From || w.To != g.To || w.Kind != g.Kind || !bytes.Equal(w.Body, g.Body) {
						t.Fatalf("seed %d %s: message %d (%d→%d %s) differs from the CPU's (%d→%d %s)", seed, tag, i, g.From, g.To, g.Kind, w.From, w.To, w.Kind)
					}
				}
				for _, c := range chains {
					if len(c.c.res) != 0 || c.c.host != nil {
						t.Fatalf("seed %d %s: a closed chain holds %d tables", seed, tag, len(c.c.res))
					}
					s.chains++
					s.kept += c.c.kept
					s.fetched += c.c.fetched
					s.evictions += c.c.evictions
					s.onCPU += c.c.onCPU
				}
			}
		}
	}
	for tag, s := range sums {
		t.Logf("%s: %+v", tag, *s)
	}
	if s := sums["min -1"]; s.kept == 0 || s.fetched != 0 {
		t.Errorf("every join on the device: %d tables kept, %d brought back; want some, none", s.kept, s.fetched)
	}
	if s := sums[fmt.Sprintf("min %d", DefaultMinEntries)]; s.kept == 0 || s.fetched == 0 {
		t.Errorf("default threshold: %d tables kept, %d brought back to a CPU join; want some of each", s.kept, s.fetched)
	}
}

// TestDPOPBench times DPOP's UTIL and VALUE phases (the MVA tables filled
// before) on generated problems whose agents eliminate several boundary
// variables, so that intermediate tables exist: on the CPU (one core per
// agent), with every large join on the device and its tables copied back
// (GPU-DBE's scheme, hearth's before UtilChain), and through UtilChain.
// Medians of 5 runs of the whole set, in one process; the three must send
// the same messages. Set HEARTH_GPU_DPOP_BENCH=1 to run it.
func TestDPOPBench(t *testing.T) {
	if os.Getenv("HEARTH_GPU_DPOP_BENCH") == "" {
		t.Skip("set HEARTH_GPU_DPOP_BENCH=1")
	}
	d := openDevice(t, Options{})
	copyBack := func(ctx context.Context, p *local.JoinProject, dst []float64, argmin []int32) error {
		if Supported(p) && int64(p.Rows())*int64(p.ElimSize()) >= DefaultMinEntries {
			return d.JoinProject(ctx, p, dst, argmin)
		}
		return p.Run(ctx, dst, argmin, 1)
	}
	modes := []struct {
		name string
		new  func(*mva.Node) (mva.Protocol, error)
	}{
		{"cpu", dpop.New},
		{"gpu copy-back", dpop.WithKernel(copyBack)},
		{"gpu resident", dpop.WithChains(func() dpop.Chain { return NewUtilChain(d, 0) })},
	}
	for _, shape := range []struct {
		name string
		o    gen.RandomOptions
	}{
		{"4 agents x 8 vars, domain 6", gen.RandomOptions{Agents: 4, Vars: 8, Domain: 6, LocalDensity: 0.4, BoundaryRatio: 0.5,
			GlobalDensity: 0.12, Tightness: 0.9, MaxArity: 2, MinCost: 1, MaxCost: 1000}},
		{"3 agents x 10 vars, domain 5", gen.RandomOptions{Agents: 3, Vars: 10, Domain: 5, LocalDensity: 0.3, BoundaryRatio: 0.6,
			GlobalDensity: 0.15, Tightness: 0.9, MaxArity: 2, MinCost: 1, MaxCost: 1000}},
	} {
		var sets [][]*mva.Node
		for seed := range uint64(6) {
			p, err := gen.Random(seed, shape.o)
			if err != nil {
				t.Fatal(err)
			}
			sets = append(sets, dpopNodes(t, p))
		}
		var want [][]mva.Message
		for _, m := range modes {
			ts := make([]float64, 5)
			for r := range ts {
				t0 := time.Now()
				for i, nodes := range sets {
					got := runDPOP(t, nodes, m.new)
					if r > 0 {
						continue
					}
					if m.name == "cpu" {
						want = append(want, got)
					} else if !slices.EqualFunc(got, want[i], func(a, b mva.Message) bool {
						return a.From == b.From && a.To == b.To && a.Kind == b.Kind && bytes.Equal(a.Body, b.Body)
					}) {
						t.Fatalf("%s %s problem %d: messages differ from the CPU's", shape.name, m.name, i)
					}
				}
				ts[r] = float64(time.Since(t0).Microseconds()) / 1e3
			}
			slices.Sort(ts)
			t.Logf("%s, %s: %s: median %.1f ms (min %.1f, max %.1f)", d.Name(), shape.name, m.name, ts[2], ts[0], ts[4])
		}
	}
}
