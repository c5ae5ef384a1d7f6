package afb

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/hearth-dcop/hearth/mva"
)

// Candidate orders (parameter afb_candidates, notes §1.11).
const (
	CandidatesBestFirst = 0 // by Inc(b)+h(b), rebuilt for every prefix
	CandidatesStatic    = 1 // by cost(b)+h(b), sorted once
	CandidatesLex       = 2 // row index order, lazy-friendly pre-test
)

// Estimate modes (parameter afb_estimate, notes §1.7).
const (
	EstimateExact     = 0 // the minimum over all the agent's rows
	EstimateHybrid    = 1 // rows not yet computed count as 0
	EstimateDecoupled = 2 // owned functions plus the local lower bound
)

// agent is one MVA-AFB agent. Positions are 0-based: the notes' a_1 is
// position 0.
type agent struct {
	n     *mva.Node
	id    int
	m, k  int   // number of agents, own position
	order []int // position → agent id
	pos   []int // agent id → position
	rows  []int // position → number of rows of that agent
	nrows int   // own rows

	candMode, estMode          int
	hplusOn, zeroStop, recheck bool

	owned []*extFunc // external functions this agent is last in
	h     []float64  // future bound per own row (§1.2.3)
	// localShift makes the rows non-negative; shift adds the owned
	// functions' shifts: what assigning this agent adds to cpa.shift.
	localShift, shift float64
	offset            float64 // Problem.Offset, added when reporting
	lb                float64 // min over own (shifted) rows, once lbKnown
	lbKnown           bool

	// afb_hplus: the later agents' lower bounds, and the messages that
	// arrived before all of them were known.
	hplus     float64
	lbGot     []bool
	lbOf      []float64
	lbMissing int
	pending   []mva.Message

	best        solution // B is best.cost
	cpa         cpa      // the working copy (§1.5)
	prefixCost  float64
	prefixShift float64
	known       []uint64 // freshest stamps seen
	lastFwd     []uint64 // stamps of the last forward CPA processed
	active      bool     // cands/next belong to the current prefix
	cands       []candidate
	static      []candidate // afb_candidates=1: sorted once
	next        int
	est         []float64 // per later position, NaN when missing
	ctr         uint64
	done        bool
	checks      int64
}

var _ mva.Protocol = (*agent)(nil)

// New returns agent n.ID's MVA-AFB state machine; the package comment
// lists its parameters.
func New(n *mva.Node) (mva.Protocol, error) {
	if n == nil || n.Decomp == nil || n.Local == nil || n.Local.Table == nil || n.Local.LP == nil {
		return nil, errors.New("afb: node without decomposition or MVA table")
	}
	d := n.Decomp
	m := len(d.Subs)
	if n.ID < 0 || n.ID >= m {
		return nil, fmt.Errorf("afb: agent %d of %d", n.ID, m)
	}
	a := &agent{n: n, id: n.ID, m: m, offset: d.Problem.Offset}
	cfg, err := ParseConfig(n.Params)
	if err != nil {
		return nil, err
	}
	a.candMode, a.estMode = cfg.Candidates, cfg.Estimate
	a.hplusOn, a.zeroStop, a.recheck = cfg.HPlus, cfg.ZeroStop, cfg.Recheck
	byAgent, err := agentRows(d)
	if err != nil {
		return nil, fmt.Errorf("afb: %w", err)
	}
	if a.order, err = agentOrder(d, cfg.Order, byAgent); err != nil {
		return nil, fmt.Errorf("afb: %w", err)
	}
	pos := make([]int, m)
	a.pos = pos
	a.rows = make([]int, m)
	for p, id := range a.order {
		pos[id] = p
		a.rows[p] = byAgent[id]
	}
	a.k = pos[a.id]
	a.nrows = n.Local.Table.Rows()
	if a.nrows != a.rows[a.k] {
		return nil, fmt.Errorf("afb: MVA table has %d rows, boundary needs %d", a.nrows, a.rows[a.k])
	}

	var funcs []*extFunc
	for _, fi := range n.External {
		f, err := newExtFunc(d, fi, pos)
		if err != nil {
			return nil, fmt.Errorf("afb: %w", err)
		}
		funcs = append(funcs, f)
		if f.owner == a.k {
			a.owned = append(a.owned, f)
			a.shift += f.shift
		}
	}
	a.h, a.checks = futureBound(funcs, a.k, a.nrows)
	for _, fi := range n.Sub().Functions {
		a.localShift += negShift(d.Problem.Functions[fi].Costs)
	}
	a.shift += a.localShift
	if n.Local.Table.Complete() {
		// Eager table: the local lower bound costs one scan.
		if _, err := a.lowerBound(context.Background()); err != nil {
			return nil, err
		}
	}

	a.best = solution{cost: math.Inf(1)}
	a.cpa = newCPA(m)
	a.known = make([]uint64, m)
	a.est = make([]float64, m)
	a.clearEst()
	if a.hplusOn {
		a.lbGot = make([]bool, m)
		a.lbOf = make([]float64, m)
		a.lbMissing = m - 1 - a.k
	}
	return a, nil
}

// Start begins the search at the first agent; with afb_hplus every agent
// first sends its lower bound to the agents before it.
func (a *agent) Start(ctx context.Context) ([]mva.Message, error) {
	var out []mva.Message
	if a.hplusOn {
		if a.k > 0 {
			lb, err := a.lowerBound(ctx)
			if err != nil {
				return nil, err
			}
			body := encodeFloat(lb)
			for p := range a.k {
				out = append(out, a.msg(a.order[p], kindLB, body))
			}
		}
		if a.lbMissing > 0 {
			return out, nil
		}
	}
	if a.k > 0 {
		return out, nil
	}
	more, err := a.startSearch(ctx)
	return append(out, more...), err
}

// startSearch is Start() of notes §1.6 at the first agent.
func (a *agent) startSearch(ctx context.Context) ([]mva.Message, error) {
	a.prefixCost, a.prefixShift = 0, 0
	if err := a.beginPrefix(ctx); err != nil {
		return nil, err
	}
	return a.assignNext(ctx)
}

// Done reports that TERMINATE was sent or received.
func (a *agent) Done() bool { return a.done }

// Checks counts evaluations of external functions, for the NCCC metric
// (pipeline.CheckCounter); the local solver counts its own.
func (a *agent) Checks() int64 { return a.checks }

// Result returns the best solution's values of this agent's boundary and
// its cost in the original scale: NaN while none is known, +Inf when the
// search ended without one (the problem is infeasible).
func (a *agent) Result() mva.AgentResult {
	b := make([]int, a.n.Local.LP.NB)
	cost := math.NaN()
	switch {
	case a.best.rows != nil:
		a.n.Local.LP.DecodeRow(a.best.rows[a.k], b)
		cost = a.best.cost + a.best.shift + a.offset
	case a.done:
		cost = math.Inf(1)
	}
	return mva.AgentResult{Boundary: b, Cost: cost, Optimal: a.done}
}

// rowCost returns own row b's cost, shifted to be ≥ 0 (clamped: the local
// solver may add the entries in another order than the shift was taken).
func (a *agent) rowCost(ctx context.Context, b int) (float64, error) {
	c, _, err := a.n.Local.RowIndex(ctx, b)
	if err != nil {
		return 0, fmt.Errorf("afb: %w", err)
	}
	if mva.IsHard(c) {
		return c, nil
	}
	return max(0, c-a.localShift), nil
}

// lowerBound returns LB, the minimum over the agent's rows, computing
// (and, for a lazy table, filling) it on first use.
func (a *agent) lowerBound(ctx context.Context) (float64, error) {
	if a.lbKnown {
		return a.lb, nil
	}
	lb := math.Inf(1)
	for b := range a.nrows {
		c, err := a.rowCost(ctx, b)
		if err != nil {
			return 0, err
		}
		lb = min(lb, c)
	}
	a.lb, a.lbKnown = lb, true
	return lb, nil
}

// ownedCost returns Σ f(b, cpa) over the owned functions: with a forward
// CPA in hand every other agent of their scopes is assigned.
func (a *agent) ownedCost(b int) float64 {
	s := 0.0
	for _, f := range a.owned {
		s += f.eval(a.cpa.vals, a.k, b)
	}
	a.checks += int64(len(a.owned))
	return s
}

func (a *agent) clearEst() {
	for i := range a.est {
		a.est[i] = math.NaN()
	}
}

// estSum returns the sum of the estimates received for the current
// assignment; missing ones count as 0.
func (a *agent) estSum() float64 {
	s := 0.0
	for _, e := range a.est {
		if !math.IsNaN(e) {
			s += e
		}
	}
	return s
}
