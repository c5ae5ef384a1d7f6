package localsearch_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch/lstest"
	"github.com/hearth-dcop/hearth/mva/wire"
)

func TestCost(t *testing.T) {
	hard, soft := localsearch.Of(mva.Hard), localsearch.Of(3)
	if hard != (localsearch.Cost{Hard: 1}) || soft != (localsearch.Cost{Soft: 3}) {
		t.Fatalf("Of: %v %v", hard, soft)
	}
	// (∞ + 3) − (∞ + 1) is 2 in pairs, NaN in floats.
	d := hard.Add(soft).Sub(hard.Add(localsearch.Of(1)))
	if d != (localsearch.Cost{Soft: 2}) || !d.Positive() {
		t.Errorf("difference %v", d)
	}
	if !soft.Less(hard) || hard.Less(soft) || !localsearch.Of(100).Less(hard) {
		t.Error("a hard violation must outweigh any soft cost")
	}
	if hard.Float() != mva.Hard || soft.Float() != 3 {
		t.Error("Float")
	}
	var w wire.Writer
	localsearch.WriteCost(&w, localsearch.Cost{Hard: -2, Soft: 1.5})
	r := wire.NewReader(w.Bytes())
	if c, err := localsearch.ReadCost(r); err != nil || r.Err() != nil || c != (localsearch.Cost{Hard: -2, Soft: 1.5}) {
		t.Errorf("round trip: %v %v", c, err)
	}
	w = wire.Writer{}
	w.Int(0)
	w.Float(math.Inf(1))
	if _, err := localsearch.ReadCost(wire.NewReader(w.Bytes())); err == nil {
		t.Error("infinite soft part accepted")
	}
}

func TestMailbox(t *testing.T) {
	m := localsearch.NewMailbox[int](2, 1)
	if err := m.Put(2, 0, 20); err != nil { // one round ahead: kept
		t.Fatal(err)
	}
	if err := m.Put(3, 0, 30); err == nil {
		t.Error("two rounds ahead accepted")
	}
	if err := m.Put(1, 1, 11); err != nil || m.Full() {
		t.Fatalf("%v, full %v", err, m.Full())
	}
	if err := m.Put(1, 1, 12); err == nil {
		t.Error("second message of a round accepted")
	}
	if err := m.Put(1, 0, 10); err != nil || !m.Full() || m.Get(0) != 10 || m.Get(1) != 11 {
		t.Fatalf("round 1: %v", err)
	}
	m.Advance()
	if m.Round() != 2 || !m.Has(0) || m.Has(1) || m.Get(0) != 20 || m.Full() {
		t.Errorf("round 2: has %v %v", m.Has(0), m.Has(1))
	}
	if err := m.Put(1, 1, 1); err == nil {
		t.Error("past round accepted")
	}
}

// TestValueRouting checks that what agent i writes for neighbour j is what
// j reads into the right slots: with every agent's context filled from its
// neighbours' VALUE bodies, the sum over agents of their external
// functions counts each external function once per agent in its scope.
func TestValueRouting(t *testing.T) {
	ctx := context.Background()
	solver := func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("dfbnb", lp) }
	for seed := int64(1); seed <= 100; seed++ {
		p := lstest.Instance(seed)
		d := mva.Decompose(p)
		nodes, _, err := mva.BuildNodes(ctx, d, solver, false, 1, nil)
		exactNodes(nodes)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(seed), 1))
		assign := make([]int, len(p.Variables))
		for v := range assign {
			assign[v] = rng.IntN(p.DomainSize(v))
		}
		nbs := make([]*localsearch.Neighbourhood, len(nodes))
		bs := make([][]int, len(nodes))
		for i, n := range nodes {
			if nbs[i], err = localsearch.New(n); err != nil {
				t.Fatal(err)
			}
			for _, v := range n.Sub().Boundary {
				bs[i] = append(bs[i], assign[v])
			}
		}
		for i, nb := range nbs {
			for ji, j := range nb.Neighbours {
				var w wire.Writer
				nb.WriteValues(&w, ji, bs[i])
				ij, err := nbs[j].Position(i)
				if err != nil {
					t.Fatal(err)
				}
				r := wire.NewReader(w.Bytes())
				vals := nbs[j].ReadValuesTo(r, ij)
				if err := r.Err(); err != nil {
					t.Fatalf("seed %d: %d→%d: %v", seed, i, j, err)
				}
				nbs[j].SetValues(ij, vals, nbs[j].Ctx)
				if got, want := nbs[j].Visible(ij, nbs[j].Ctx), nb.OwnVisible(ji, bs[i]); got != want {
					t.Errorf("seed %d: %d sees %d's value %d, %d encodes %d", seed, j, i, got, i, want)
				}
			}
		}
		var got, want localsearch.Cost
		for i, nb := range nbs {
			got = got.Add(nb.Ext(bs[i], nb.Ctx))
		}
		for _, fi := range d.External {
			f := &p.Functions[fi]
			idx, agents := 0, map[int]bool{}
			for _, v := range f.Scope {
				idx = idx*p.DomainSize(v) + assign[v]
				agents[p.Variables[v].Agent] = true
			}
			for range agents {
				want = want.Add(localsearch.Of(f.Costs[idx]))
			}
		}
		if got.Hard != want.Hard || !lstest.Same(got.Soft, want.Soft) {
			t.Errorf("seed %d: agents' external sum %v, want %v", seed, got, want)
		}
	}
}

func TestParams(t *testing.T) {
	n := &mva.Node{Params: map[string]float64{"k": 3, "x": 2.5, "p": 1.2, "b": 1}}
	if v, err := localsearch.Int(n.Params, "k", 0, 0, 5); err != nil || v != 3 {
		t.Errorf("Int: %v %v", v, err)
	}
	if _, err := localsearch.Int(n.Params, "x", 0, 0, 5); err == nil {
		t.Error("non-integer accepted")
	}
	if v, err := localsearch.Int(n.Params, "absent", 4, 0, 5); err != nil || v != 4 {
		t.Errorf("default: %v %v", v, err)
	}
	if _, err := localsearch.Prob(n.Params, "p", 0.5); err == nil {
		t.Error("probability 1.2 accepted")
	}
	if v, err := localsearch.Bool(n.Params, "b", false); err != nil || !v {
		t.Errorf("Bool: %v %v", v, err)
	}
	if _, err := localsearch.Bool(n.Params, "k", false); err == nil {
		t.Error("Bool 3 accepted")
	}
}

// exactNodes gives nodes the exact solver factory a run gives them
// (pipeline.Options.Exact).
func exactNodes(nodes []*mva.Node) {
	for _, n := range nodes {
		n.Exact = local.Exact
	}
}
