package dgibbs

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
)

// Agent is one agent's D-Gibbs state machine (notes §2.4).
type Agent struct {
	node *mva.Node
	nb   *localsearch.Neighbourhood
	rng  *rand.Rand
	tree *tree

	T    int
	tau  float64
	init localsearch.Init

	row     int   // d: the current boundary row
	b       []int // d's boundary values
	star    int   // d*: the committed best row
	t       int   // the last iteration sampled
	iter    []int // per neighbour position: the iteration of its value in ctx
	ctx0    []int // the neighbours' values of iteration 0
	fromP   map[int]int
	delta   localsearch.Cost
	a0      localsearch.Cost // the subtree's cost of x⁰ (iteration 1)
	waiting int              // children whose BACKTRACK of iteration t is due
	got     []bool           // per child index: BACKTRACK of iteration t in
	done    bool

	// Tree roles as neighbour positions, set when the tree is complete.
	parent       int
	children, pc []int // children and pseudo-children
	ancestors    []int // parent and pseudo-parents

	// Root only (notes §2.4): the cumulative change since x⁰ (with a
	// Kahan compensation of its soft part), its minimum and iteration.
	cum, cumBest localsearch.Cost
	cumComp      float64
	tstar        int
	closed       bool
	cost0        localsearch.Cost

	// Known after FINAL (or, at the root, after the last iteration).
	best  localsearch.Cost
	whole bool

	scratch []int
	costs   []localsearch.Cost

	// MVA-DG (interior = 1) only: the conditionals of the agent's local
	// problem, the current local state z (boundary values first, then
	// interior, as the LocalProblem orders them; z[:NB] is always b), and
	// the interior of the committed best sample.
	cond  mva.ConditionalSampler
	z     []int
	zStar []int

	// Test hooks: onSample after every sample with the new row, onClose
	// at the root after every iteration with Cum.
	onSample func(t, row int)
	onClose  func(t int, cum localsearch.Cost)
}

// New returns agent n's D-Gibbs state machine.
func New(n *mva.Node) (mva.Protocol, error) {
	nb, err := localsearch.New(n)
	if err != nil {
		return nil, fmt.Errorf("dgibbs: %w", err)
	}
	a := &Agent{node: n, nb: nb, rng: localsearch.NewRand(n.Seed), tree: newTree(n), parent: -1, closed: true}
	cfg, err := ParseConfig(n.Params)
	if err != nil {
		return nil, err
	}
	a.T, a.tau, a.init = cfg.Iterations, cfg.Temperature, cfg.Init
	mode := cfg.Interior
	if mode == InteriorGibbs {
		lp := n.Local.LP
		if n.Sampler == nil {
			return nil, fmt.Errorf("dgibbs: interior sampling needs a conditional sampler (mva.Node.Sampler), and the run gives none")
		}
		if a.cond, err = n.Sampler(lp, a.tau, n.Seed); err != nil {
			return nil, fmt.Errorf("dgibbs: %w", err)
		}
		a.z = make([]int, len(lp.Vars))
		a.zStar = make([]int, lp.NumInterior())
	}
	a.b = make([]int, len(nb.Domains))
	a.scratch = make([]int, len(nb.Domains))
	a.costs = make([]localsearch.Cost, slices.Max(append([]int{1}, nb.Domains...)))
	a.iter = make([]int, len(nb.Neighbours))
	a.ctx0 = make([]int, len(nb.Ctx))
	a.fromP = map[int]int{}
	return a, nil
}

// Checks counts the external-function evaluations and, under MVA-DG, the
// local cost-table entries the interior sampling read (pipeline.CheckCounter).
func (a *Agent) Checks() int64 {
	c := a.nb.Checks()
	if a.cond != nil {
		c += a.cond.Checks()
	}
	return c
}

// Done reports that the agent knows its final (best) values.
func (a *Agent) Done() bool { return a.done }

// Result returns the committed best boundary values (and, under MVA-DG,
// the interior values of the same sample) and, when the run covered every
// agent (a connected agent graph), the cost of the best sample: cost(x⁰) +
// CumBest from the root. With several components each root knows only its
// own, so the cost is NaN.
func (a *Agent) Result() mva.AgentResult {
	b := make([]int, len(a.b))
	a.nb.Decode(a.star, b)
	cost := math.NaN()
	if a.done && a.whole {
		cost = a.best.Float() + a.node.Problem().Offset
	}
	r := mva.AgentResult{Boundary: b, Cost: cost}
	if a.cond != nil {
		r.Interior = slices.Clone(a.zStar)
	}
	return r
}

func (a *Agent) setRow(row int) {
	a.row = row
	a.nb.Decode(row, a.b)
	if a.cond != nil {
		copy(a.z, a.b)
	}
}

// commit makes the current sample the agent's best: its row and, under
// MVA-DG, its interior.
func (a *Agent) commit() {
	a.star = a.row
	if a.cond != nil {
		copy(a.zStar, a.z[len(a.b):])
	}
}

func (a *Agent) isRoot() bool { return a.tree.parent < 0 }

// Start picks x⁰ (ValInit), announces it when the neighbours cannot know
// it (init ≠ first), and starts the pseudo-tree.
func (a *Agent) Start(ctx context.Context) ([]mva.Message, error) {
	row, err := localsearch.InitialRow(ctx, a.init, a.node.Local, a.nb.Rows(), a.rng)
	if err != nil {
		return nil, fmt.Errorf("dgibbs: %w", err)
	}
	a.setRow(row)
	if a.cond != nil {
		// x⁰'s interior is the row's completion: feasible whenever the
		// local solver found a feasible one, so the chain starts there.
		_, in, err := a.node.Local.RowIndex(ctx, row)
		if err != nil {
			return nil, fmt.Errorf("dgibbs: %w", err)
		}
		for i, v := range in {
			a.z[len(a.b)+i] = int(v)
		}
	}
	a.commit()
	var out []mva.Message
	if a.init != localsearch.InitFirst {
		// Neighbours do not know x⁰: announce it as iteration 0, and
		// wait for theirs before using them (iteration −1 = none yet).
		for j := range a.iter {
			a.iter[j] = -1
		}
		out = a.sendValues(out, 0, 0)
	}
	out = append(out, a.tree.start()...)
	return a.afterTree(ctx, out)
}

// Step handles one message.
func (a *Agent) Step(ctx context.Context, m mva.Message) ([]mva.Message, error) {
	out, err := a.step(ctx, m)
	if err != nil {
		return nil, fmt.Errorf("dgibbs: agent %d: %s from %d: %w", a.node.ID, m.Kind, m.From, err)
	}
	return out, nil
}

func (a *Agent) step(ctx context.Context, m mva.Message) ([]mva.Message, error) {
	j, err := a.nb.Position(m.From)
	if err != nil {
		return nil, err
	}
	switch m.Kind {
	case KindToken, KindTokenBack:
		if a.t > 0 {
			// Sampling has started, so the tree is final: only a token of
			// a wave that lost the election can still be in flight.
			if !a.stale(m.Body) {
				return nil, fmt.Errorf("pseudo-tree message after sampling started")
			}
			return nil, nil
		}
		var out []mva.Message
		if m.Kind == KindToken {
			out, err = a.tree.onToken(m.From, m.Body)
		} else {
			out, err = a.tree.onTokenBack(m.From, m.Body)
		}
		if err != nil {
			return nil, err
		}
		return a.afterTree(ctx, out)
	case KindValue:
		return a.onValue(ctx, j, m.Body)
	case KindBacktrack:
		return a.onBacktrack(ctx, j, m.Body)
	case KindFinal:
		return a.onFinal(j, m.Body)
	}
	return nil, fmt.Errorf("unknown message kind")
}

// stale reports whether a token body belongs to a wave other than the
// completed tree's (a wave that lost the election, still in flight).
func (a *Agent) stale(body []byte) bool {
	label, _, err := a.tree.readToken(body)
	return err == nil && label > a.tree.label
}

// afterTree takes the tree roles whenever the agent's part of the DFS is
// complete and tries to sample. A non-root cannot tell whether its wave
// will win the election, so it retakes the roles every time; it samples
// only after its parent's first VALUE, which is sent after the winning
// root completed, hence after every agent's last completion.
func (a *Agent) afterTree(ctx context.Context, out []mva.Message) ([]mva.Message, error) {
	if !a.tree.complete {
		return out, nil
	}
	pos := func(ids []int) []int {
		var ps []int
		for _, id := range ids {
			p, _ := a.nb.Position(id)
			ps = append(ps, p)
		}
		return ps
	}
	_, pc := a.tree.roles()
	a.parent = -1
	if !a.isRoot() {
		a.parent, _ = a.nb.Position(a.tree.parent)
	}
	a.children, a.pc = pos(a.tree.children), pos(pc)
	a.ancestors = pos(a.tree.ancestors)
	a.got = make([]bool, len(a.children))
	a.whole = a.isRoot() && a.tree.size == a.node.NumAgents
	return a.trySample(ctx, out)
}
