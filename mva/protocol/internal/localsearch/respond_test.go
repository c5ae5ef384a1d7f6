package localsearch_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch/lstest"
)

// responseInstance returns the problem of seed for the responder tests:
// lstest's instances, and for every third seed one with larger agents
// and many hard entries, so that some responses find every row violating
// a hard entry (the weighted problem) and some agents have more rows.
func responseInstance(seed int64) *mva.Problem {
	if seed%3 != 0 {
		return lstest.Instance(seed)
	}
	agents := 2 + int(seed%3)
	return randprob.New(seed, randprob.Options{
		Agents: agents, Vars: 3 * agents,
		MinDomain: 2, MaxDomain: 3, MaxArity: 3,
		Functions: 3 * agents, HardProb: 0.35,
		IntCosts: seed%2 == 0, MaxCost: 10, Locality: 0.5,
	})
}

// truthEll returns ℓ_i(row) computed from the problem alone: the brute
// force optimum of the agent's own functions with its boundary at the
// row, plus every function between the agent and others evaluated at the
// global assignment assign (with the agent's boundary at the row).
func truthEll(ctx context.Context, t *testing.T, n *mva.Node, bf mva.LocalSolver, assign []int, row int) localsearch.Cost {
	t.Helper()
	p := n.Problem()
	lp := n.Local.LP
	b := make([]int, lp.NB)
	lp.DecodeRow(row, b)
	in := make([]int, lp.NumInterior())
	c, err := bf.SolveRow(ctx, b, in)
	if err != nil {
		t.Fatal(err)
	}
	total := localsearch.Of(c)
	a := append([]int(nil), assign...)
	for k, v := range n.Sub().Boundary {
		a[v] = b[k]
	}
	for _, fi := range n.External {
		f := &p.Functions[fi]
		idx := 0
		for _, v := range f.Scope {
			idx = idx*p.DomainSize(v) + a[v]
		}
		total = total.Add(localsearch.Of(f.Costs[idx]))
	}
	return total
}

// TestResponderMatchesEnumeration checks, on hundreds of seeded small
// problems, that the solve path's best move is the enumeration's and that
// both are the truth computed by brute force from the problem: the
// current row when no row is strictly cheaper, else the lowest-index
// minimiser, and the gain ℓ(cur) − min ℓ. Integer-cost instances must
// agree exactly; real-cost ones up to rounding.
func TestResponderMatchesEnumeration(t *testing.T) {
	ctx := context.Background()
	seeds := int64(400)
	if testing.Short() {
		seeds = 120
	}
	var cases, moved, hardBest, weighted, bounded int
	for seed := int64(1); seed <= seeds; seed++ {
		p := responseInstance(seed)
		solverName := []string{"dfbnb", "be"}[seed%2]
		solver := func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New(solverName, lp) }
		nodes, _, err := mva.BuildNodes(ctx, mva.Decompose(p), solver, false, 1, nil)
		exactNodes(nodes)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(seed), 2))
		exact := seed%2 == 0
		for _, n := range nodes {
			nb, err := localsearch.New(n)
			if err != nil {
				t.Fatal(err)
			}
			rowCost := func(ctx context.Context, row int) (localsearch.Cost, error) {
				return localsearch.RowCost(ctx, n.Local, row)
			}
			n.Params = map[string]float64{"response": float64(localsearch.ResponseEnumerate)}
			enum, err := localsearch.NewResponder(n, nb, rowCost, responseConfig(t, n))
			if err != nil {
				t.Fatal(err)
			}
			entries := float64(localsearch.DefaultResponseEntries)
			if seed%4 == 1 {
				entries = 0 // AOBB, restricted solves bounded by the optimum
			}
			n.Params = map[string]float64{"response": float64(localsearch.ResponseSolve), "response_entries": entries}
			solve, err := localsearch.NewResponder(n, nb, rowCost, responseConfig(t, n))
			if err != nil {
				t.Fatal(err)
			}
			// lazy is solve asked as plain MGM asks: the gain first,
			// the row only where the agent moves (BestGain, BestRow).
			lazy, err := localsearch.NewResponder(n, nb, rowCost, responseConfig(t, n))
			if err != nil {
				t.Fatal(err)
			}
			if enum.Solving() || !solve.Solving() {
				t.Fatal("response parameter ignored")
			}
			bf := local.NewBruteForce(n.Local.LP)
			for draw := range 4 {
				assign := drawContext(rng, p, nb)
				cur := rng.IntN(nb.Rows())
				// The truth, by the rule.
				curCost := truthEll(ctx, t, n, bf, assign, cur)
				want, wantCost := cur, curCost
				for row := range nb.Rows() {
					if c := truthEll(ctx, t, n, bf, assign, row); c.Less(wantCost) && (exact || !lstest.Same(c.Soft, wantCost.Soft) || c.Hard != wantCost.Hard) {
						want, wantCost = row, c
					}
				}
				wantGain := curCost.Sub(wantCost)
				for _, tc := range []struct {
					name string
					r    *localsearch.Responder
				}{{"enumerate", enum}, {"solve", solve}, {"gain, then row", lazy}} {
					var row int
					var gain localsearch.Cost
					if tc.r == lazy {
						row, gain, err = gainThenRow(ctx, lazy, cur, nb.Ctx, draw)
					} else {
						row, gain, err = tc.r.BestMove(ctx, cur, nb.Ctx)
					}
					if err != nil {
						t.Fatalf("seed %d agent %d: %s: %v", seed, n.ID, tc.name, err)
					}
					where := fmt.Sprintf("seed %d agent %d draw %d (%d rows, cur %d): %s", seed, n.ID, draw, nb.Rows(), cur, tc.name)
					if exact {
						if row != want || gain != wantGain {
							t.Errorf("%s: row %d gain %v, want row %d gain %v", where, row, gain, want, wantGain)
						}
						continue
					}
					if gain.Hard != wantGain.Hard || !lstest.Same(gain.Soft, wantGain.Soft) {
						t.Errorf("%s: gain %v, want %v", where, gain, wantGain)
					}
					if got := truthEll(ctx, t, n, bf, assign, row); got.Hard != wantCost.Hard || !lstest.Same(got.Soft, wantCost.Soft) {
						t.Errorf("%s: row %d costs %v, the best %v", where, row, got, wantCost)
					}
				}
				cases++
				if want != cur {
					moved++
				}
				if wantCost.Hard > 0 {
					hardBest++
				}
			}
			if solve.UsedWeighted() {
				weighted++
			}
			if _, ok := solve.SolveSolver().(*local.AOBB); ok {
				bounded++
			}
		}
	}
	t.Logf("%d responses: %d moves, %d with every row violating a hard entry; %d agents used the weighted problem, %d solved by AOBB (bounded restricted solves)",
		cases, moved, hardBest, weighted, bounded)
	// The test must exercise every branch it claims to check.
	if moved < cases/4 || hardBest < 20 || weighted < 10 || bounded < 20 {
		t.Errorf("too few cases exercised: %d moves, %d hard optima, %d weighted, %d aobb of %d", moved, hardBest, weighted, bounded, cases)
	}
}

// gainThenRow asks r as plain MGM does, BestGain and then BestRow, in
// one of the orders a run can take (by draw): the row at once; the gain
// asked twice (the second answer replayed) before the row; or, first, a
// question whose row is never asked for, abandoned as a non-moving
// agent's is, before the real one.
func gainThenRow(ctx context.Context, r *localsearch.Responder, cur int, vals []int, draw int) (int, localsearch.Cost, error) {
	switch draw % 3 {
	case 1:
		if _, err := r.BestGain(ctx, cur, vals); err != nil {
			return 0, localsearch.Cost{}, err
		}
	case 2:
		other := slices.Clone(vals)
		for s := range other {
			other[s] = 0
		}
		if _, err := r.BestGain(ctx, cur, other); err != nil {
			return 0, localsearch.Cost{}, err
		}
	}
	gain, err := r.BestGain(ctx, cur, vals)
	if err != nil {
		return 0, localsearch.Cost{}, err
	}
	row, err := r.BestRow(ctx)
	return row, gain, err
}

// chainHome is the large-boundary instance: agent 0 owns 12 boundary
// variables b0..b11 with 4 values (4^12 = 16.7 M rows) chained by local
// functions b_k–b_{k+1}, and an interior variable y hanging off b5;
// agent 1 owns c0..c11, and external functions b_k–c_k couple them. With
// c fixed the best response is a chain, which the test solves by dynamic
// programming, independently of the solvers.
type chainHome struct {
	p     *mva.Problem
	chain [][]float64 // chain[k][4*b+b'] = cost of b_k = b, b_{k+1} = b'
	leaf  []float64   // leaf[3*b+y] = cost of b5 = b, y
	ext   [][]float64 // ext[k][4*b+c] = cost of b_k = b, c_k = c
}

const chainLen, chainDom = 12, 4

func newChainHome(seed uint64) *chainHome {
	rng := rand.New(rand.NewPCG(seed, 3))
	h := &chainHome{p: &mva.Problem{Name: "chain", Agents: []mva.Agent{{Name: "home"}, {Name: "other"}}}}
	dom := []string{"0", "1", "2", "3"}
	for k := range chainLen {
		h.p.Variables = append(h.p.Variables, mva.Variable{Name: fmt.Sprint("b", k), Domain: dom, Agent: 0})
	}
	h.p.Variables = append(h.p.Variables, mva.Variable{Name: "y", Domain: dom[:3], Agent: 0})
	for k := range chainLen {
		h.p.Variables = append(h.p.Variables, mva.Variable{Name: fmt.Sprint("c", k), Domain: dom, Agent: 1})
	}
	table := func(n int) []float64 {
		t := make([]float64, n)
		for i := range t {
			t[i] = float64(rng.IntN(4)) // small integers: many ties
			if rng.IntN(20) == 0 {
				t[i] = mva.Hard
			}
		}
		return t
	}
	for k := range chainLen - 1 {
		c := table(chainDom * chainDom)
		h.chain = append(h.chain, c)
		h.p.Functions = append(h.p.Functions, mva.Function{Name: fmt.Sprint("chain", k), Scope: []int{k, k + 1}, Costs: c})
	}
	h.leaf = table(chainDom * 3)
	h.p.Functions = append(h.p.Functions, mva.Function{Name: "leaf", Scope: []int{5, chainLen}, Costs: h.leaf})
	for k := range chainLen {
		c := table(chainDom * chainDom)
		h.ext = append(h.ext, c)
		h.p.Functions = append(h.p.Functions, mva.Function{Name: fmt.Sprint("ext", k), Scope: []int{k, chainLen + 1 + k}, Costs: c})
	}
	return h
}

// best returns, for the neighbour at c, the optimum of ℓ_0 (as a float:
// Hard when infeasible) and its lexicographically smallest minimiser, by
// backward dynamic programming along the chain and a forward pass.
func (h *chainHome) best(c []int) (float64, []int) {
	unary := make([][]float64, chainLen)
	for k := range chainLen {
		unary[k] = make([]float64, chainDom)
		for b := range chainDom {
			unary[k][b] = h.ext[k][chainDom*b+c[k]]
			if k == 5 {
				m := mva.Hard
				for y := range 3 {
					m = min(m, h.leaf[3*b+y])
				}
				unary[k][b] += m
			}
		}
	}
	v := make([][]float64, chainLen) // v[k][b]: best of b_k..b_11 given b_k = b
	v[chainLen-1] = unary[chainLen-1]
	for k := chainLen - 2; k >= 0; k-- {
		v[k] = make([]float64, chainDom)
		for b := range chainDom {
			m := mva.Hard
			for b2 := range chainDom {
				m = min(m, h.chain[k][chainDom*b+b2]+v[k+1][b2])
			}
			v[k][b] = unary[k][b] + m
		}
	}
	opt := min(v[0][0], v[0][1], v[0][2], v[0][3])
	x := make([]int, chainLen)
	for k := range chainLen {
		// With b_0..b_{k-1} fixed optimally, the cheapest b_k.. cost is
		// the minimum over b of cost(b); take the smallest b reaching it.
		cost := func(b int) float64 {
			if k == 0 {
				return v[0][b]
			}
			return h.chain[k-1][chainDom*x[k-1]+b] + v[k][b]
		}
		target := min(cost(0), cost(1), cost(2), cost(3))
		for b := range chainDom {
			if cost(b) == target {
				x[k] = b
				break
			}
		}
	}
	return opt, x
}

// ell returns ℓ_0 of boundary x with the neighbour at c, as the protocols
// count it: the row's local cost (the chain and the best y; one violation
// when infeasible) plus each external function.
func (h *chainHome) ell(x, c []int) localsearch.Cost {
	loc := mva.Hard
	for y := range 3 {
		loc = min(loc, h.leaf[3*x[5]+y])
	}
	total := localsearch.Cost{}
	for k := range chainLen {
		total = total.Add(localsearch.Of(h.ext[k][chainDom*x[k]+c[k]]))
		if k+1 < chainLen {
			loc += h.chain[k][chainDom*x[k]+x[k+1]]
		}
	}
	return total.Add(localsearch.Of(loc))
}

// TestResponderLargeBoundary checks that a response over 4^12 rows is
// solved, quickly, to the optimum and lowest-index minimiser that dynamic
// programming finds, with bucket elimination and with AOBB (the solver
// past bucket elimination's tables).
func TestResponderLargeBoundary(t *testing.T) {
	ctx := context.Background()
	var moves int
	for seed := uint64(1); seed <= 6; seed++ {
		h := newChainHome(seed)
		solver := func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("be", lp) }
		blocks := float64(localsearch.ResponseBlocks)
		for _, params := range []map[string]float64{
			{"response_entries": localsearch.DefaultResponseEntries},
			{"response_entries": 0},
			// Exact within a budget no response reaches: the same gains,
			// at a minimiser that need not be the lowest-index one.
			{"response": blocks, "response_entries": 0, "response_checks": 1 << 40},
			// A budget every response passes: block descent answers.
			{"response": blocks, "response_entries": 0, "response_checks": 1},
			// So it does past the agent's total budget of exact solves.
			{"response": blocks, "response_entries": 0, "response_checks": 1 << 40, "response_total": 1},
		} {
			entries := params["response_entries"]
			fallback := params["response_checks"] == 1 || params["response_total"] == 1
			nodes, _, err := mva.BuildNodes(ctx, mva.Decompose(h.p), solver, false, 1, params)
			exactNodes(nodes)
			if err != nil {
				t.Fatal(err)
			}
			n := nodes[0]
			nb, err := localsearch.New(n)
			if err != nil {
				t.Fatal(err)
			}
			if nb.Rows() != 1<<24 {
				t.Fatalf("%d rows, want 4^12", nb.Rows())
			}
			r, err := localsearch.NewResponder(n, nb, func(ctx context.Context, row int) (localsearch.Cost, error) {
				return localsearch.RowCost(ctx, n.Local, row)
			}, responseConfig(t, n))
			if err != nil {
				t.Fatal(err)
			}
			if !r.Solving() {
				t.Fatal("a 4^12-row table is enumerated by default")
			}
			rng := rand.New(rand.NewPCG(seed, 4))
			start := time.Now()
			for draw := range 5 {
				c := make([]int, chainLen)
				for k := range c {
					c[k] = rng.IntN(chainDom)
				}
				// Slots are the neighbour's variables in increasing index:
				// c0..c11.
				copy(nb.Ctx, c)
				cur := make([]int, chainLen)
				for k := range cur {
					cur[k] = rng.IntN(chainDom)
				}
				if draw == 4 {
					_, cur = h.best(c) // a minimiser is kept
				}
				opt, lex := h.best(c)
				if mva.IsHard(opt) {
					continue // every row violates a hard entry: not this test's subject
				}
				curCost := h.ell(cur, c)
				want, wantGain := nb.Encode(cur), localsearch.Cost{}
				if optCost := localsearch.Of(opt); optCost.Less(curCost) {
					want, wantGain = nb.Encode(lex), curCost.Sub(optCost)
				}
				var row int
				var gain localsearch.Cost
				if draw%2 == 1 {
					// As plain MGM asks: the gain, then the row.
					row, gain, err = gainThenRow(ctx, r, nb.Encode(cur), nb.Ctx, draw)
				} else {
					row, gain, err = r.BestMove(ctx, nb.Encode(cur), nb.Ctx)
				}
				if err != nil {
					t.Fatal(err)
				}
				if fallback {
					// Block descent: never worse than staying, its gain
					// the exact difference, at most the best response's.
					x := make([]int, chainLen)
					nb.Decode(row, x)
					if got := curCost.Sub(h.ell(x, c)); gain != got || wantGain.Less(gain) || gain.Less(localsearch.Cost{}) {
						t.Errorf("seed %d %v draw %d: block response row %d gain %v, its ℓ difference %v, the best gain %v", seed, params, draw, row, gain, got, wantGain)
					}
					continue
				}
				if params["response"] == blocks && row != want && gain == wantGain {
					// Within the budget, a minimiser, not necessarily the
					// lowest-index one: ℓ at the row must be the optimum.
					x := make([]int, chainLen)
					nb.Decode(row, x)
					if got := h.ell(x, c); got != localsearch.Of(opt) {
						t.Errorf("seed %d %v draw %d: row %d costs %v, the optimum is %v", seed, params, draw, row, got, opt)
					}
				} else if row != want || gain != wantGain {
					t.Errorf("seed %d entries %v draw %d: row %d gain %v, want %d gain %v", seed, entries, draw, row, gain, want, wantGain)
				}
				if want != nb.Encode(cur) {
					moves++
				}
			}
			el := time.Since(start)
			exact, byBlocks := r.ResponseCounts()
			t.Logf("seed %d %v: 5 responses in %v, %d solves, %d checks, %d exact and %d block responses within the budget", seed, params, el, r.Solves(), r.Checks(), exact, byBlocks)
			if params["response"] == blocks && (fallback && (byBlocks == 0 || exact > 0) || !fallback && (exact == 0 || byBlocks > 0)) {
				t.Errorf("seed %d %v: %d exact and %d block responses", seed, params, exact, byBlocks)
			}
			if el > 30*time.Second {
				t.Errorf("seed %d: 5 responses over 4^12 rows took %v", seed, el)
			}
		}
	}
	if moves < 20 {
		t.Errorf("only %d of 60 responses moved", moves)
	}
}

// TestResponderHugeCosts checks the responses whose hard-violation
// penalty would overflow (soft costs near the float range) while every
// row violates a hard entry: they must still be the enumeration's.
func TestResponderHugeCosts(t *testing.T) {
	ctx := context.Background()
	dom := []string{"0", "1", "2"}
	h := mva.Hard
	p := &mva.Problem{
		Name:   "huge",
		Agents: []mva.Agent{{Name: "a"}, {Name: "b"}},
		Variables: []mva.Variable{
			{Name: "x", Domain: dom, Agent: 0}, {Name: "y", Domain: dom, Agent: 0}, {Name: "z", Domain: dom, Agent: 1},
		},
		Functions: []mva.Function{
			{Name: "local", Scope: []int{0, 1}, Costs: []float64{4e307, 1, 2, 3, h, 5, 1, 1, 0}},
			// With z = 0 every x violates; with z = 1 only x = 2 does.
			{Name: "ext", Scope: []int{0, 2}, Costs: []float64{h, 0, 1, h, 2, 0, h, h, 7}},
		},
	}
	solver := func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("be", lp) }
	nodes, _, err := mva.BuildNodes(ctx, mva.Decompose(p), solver, false, 1, map[string]float64{"response": 2})
	exactNodes(nodes)
	if err != nil {
		t.Fatal(err)
	}
	n := nodes[0]
	nb, err := localsearch.New(n)
	if err != nil {
		t.Fatal(err)
	}
	rowCost := func(ctx context.Context, row int) (localsearch.Cost, error) {
		return localsearch.RowCost(ctx, n.Local, row)
	}
	solve, err := localsearch.NewResponder(n, nb, rowCost, responseConfig(t, n))
	if err != nil {
		t.Fatal(err)
	}
	for z := range 3 {
		nb.Ctx[0] = z
		for cur := range nb.Rows() {
			want, wantGain, err := nb.BestMove(ctx, rowCost, cur, nb.Ctx)
			if err != nil {
				t.Fatal(err)
			}
			got, gain, err := solve.BestMove(ctx, cur, nb.Ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got != want || gain != wantGain {
				t.Errorf("z = %d, cur %d: row %d gain %v, want row %d gain %v", z, cur, got, gain, want, wantGain)
			}
		}
	}
	if solve.UsedWeighted() {
		t.Error("a weighted problem was built with a penalty past the float range")
	}
}

// responseConfig is the responder configuration n's parameters set.
func responseConfig(t *testing.T, n *mva.Node) localsearch.ResponseConfig {
	t.Helper()
	c, err := localsearch.ParseResponse(n.Params)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// blindSolver knows no completion of any row, as a sampler that found
// none does.
type blindSolver struct{}

func (blindSolver) SolveRow(_ context.Context, _, interior []int) (float64, error) {
	clear(interior)
	return mva.Hard, nil
}

func (blindSolver) Checks() int64 { return 0 }

// TestResponderOffersCompletions: where the agent's local view knows no
// completion (its rows read as infeasible), a solved best response still
// moves to the true best row (brute force), because the solve's
// completion is offered to the view, and ℓ_i then reads that row at its
// true cost. Without the offer the solved row read as infeasible and the
// agent stayed (SHDS homes whose rows Gibbs samples).
func TestResponderOffersCompletions(t *testing.T) {
	ctx := context.Background()
	var cases int
	for seed := int64(1); seed <= 60; seed++ {
		p := responseInstance(seed)
		blind := func(*mva.LocalProblem) (mva.LocalSolver, error) { return blindSolver{}, nil }
		nodes, _, err := mva.BuildNodes(ctx, mva.Decompose(p), blind, false, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		exactNodes(nodes)
		rng := rand.New(rand.NewPCG(uint64(seed), 3))
		for _, n := range nodes {
			nb, err := localsearch.New(n)
			if err != nil {
				t.Fatal(err)
			}
			rowCost := func(ctx context.Context, row int) (localsearch.Cost, error) {
				return localsearch.RowCost(ctx, n.Local, row)
			}
			n.Params = map[string]float64{"response": float64(localsearch.ResponseSolve)}
			r, err := localsearch.NewResponder(n, nb, rowCost, responseConfig(t, n))
			if err != nil {
				t.Fatal(err)
			}
			bf := local.NewBruteForce(n.Local.LP)
			assign := drawContext(rng, p, nb)
			cur := rng.IntN(nb.Rows())
			best := localsearch.Of(mva.Hard)
			isMin := make([]bool, nb.Rows())
			costs := make([]localsearch.Cost, nb.Rows())
			for row := range nb.Rows() {
				costs[row] = truthEll(ctx, t, n, bf, assign, row)
				if costs[row].Less(best) {
					best = costs[row]
				}
			}
			for row := range nb.Rows() {
				isMin[row] = !best.Less(costs[row])
			}
			if best.Hard > 0 || isMin[cur] {
				continue
			}
			row, _, err := r.BestMove(ctx, cur, nb.Ctx)
			if err != nil {
				t.Fatalf("seed %d agent %d: %v", seed, n.ID, err)
			}
			if !isMin[row] {
				t.Errorf("seed %d agent %d: moved from %d to %d (ℓ %+v), a best row costs %+v", seed, n.ID, cur, row, costs[row], best)
				continue
			}
			got, err := rowCost(ctx, row)
			if err != nil {
				t.Fatal(err)
			}
			if got.Hard > 0 {
				t.Errorf("seed %d agent %d: row %d still reads as infeasible", seed, n.ID, row)
			}
			cases++
		}
	}
	if cases < 30 {
		t.Fatalf("only %d responses checked", cases)
	}
}

// TestResponderRepeats: a responder asked the same question again (MGM's
// agents at rest, round after round) answers as a fresh responder asked
// the same questions in the same order on a twin of the problem, where
// every answer is solved. Where the first answer offered a completion the
// view took (blind views: every row reads infeasible until offered), the
// repeat's answer differs from the first and must be solved again, not
// replayed; where the view is exact, the repeat is replayed without a
// solve.
func TestResponderRepeats(t *testing.T) {
	ctx := context.Background()
	var replayed, changed, cases int
	for seed := int64(1); seed <= 40; seed++ {
		p := responseInstance(seed)
		for _, blindView := range []bool{false, true} {
			solver := func(lp *mva.LocalProblem) (mva.LocalSolver, error) { return local.New("be", lp) }
			if blindView {
				solver = func(*mva.LocalProblem) (mva.LocalSolver, error) { return blindSolver{}, nil }
			}
			var twins [2][]*mva.Node
			for i := range twins {
				nodes, _, err := mva.BuildNodes(ctx, mva.Decompose(p), solver, false, 1, nil)
				if err != nil {
					t.Fatal(err)
				}
				exactNodes(nodes)
				twins[i] = nodes
			}
			rng := rand.New(rand.NewPCG(uint64(seed), 4))
			for a, n := range twins[0] {
				tn := twins[1][a]
				nb, err := localsearch.New(n)
				if err != nil {
					t.Fatal(err)
				}
				tnb, err := localsearch.New(tn)
				if err != nil {
					t.Fatal(err)
				}
				rowCost := func(view *mva.LocalView) localsearch.LocalCost {
					return func(ctx context.Context, row int) (localsearch.Cost, error) {
						return localsearch.RowCost(ctx, view, row)
					}
				}
				n.Params = map[string]float64{"response": float64(localsearch.ResponseSolve)}
				tn.Params = n.Params
				r, err := localsearch.NewResponder(n, nb, rowCost(n.Local), responseConfig(t, n))
				if err != nil {
					t.Fatal(err)
				}
				// Two questions, asked in a seeded order with repeats.
				type question struct {
					cur  int
					vals []int
				}
				var qs [2]question
				for i := range qs {
					qs[i].cur = rng.IntN(nb.Rows())
					qs[i].vals = make([]int, len(nb.Ctx))
					for s, v := range nb.SlotVars() {
						qs[i].vals[s] = rng.IntN(p.DomainSize(v))
					}
				}
				prevQ, prevRow, prevGain := -1, 0, localsearch.Cost{}
				for range 6 {
					q := rng.IntN(2)
					copy(nb.Ctx, qs[q].vals)
					solves := r.Solves()
					row, gain, err := r.BestMove(ctx, qs[q].cur, nb.Ctx)
					if err != nil {
						t.Fatalf("seed %d agent %d: %v", seed, n.ID, err)
					}
					fresh, err := localsearch.NewResponder(tn, tnb, rowCost(tn.Local), responseConfig(t, tn))
					if err != nil {
						t.Fatal(err)
					}
					copy(tnb.Ctx, qs[q].vals)
					wantRow, wantGain, err := fresh.BestMove(ctx, qs[q].cur, tnb.Ctx)
					if err != nil {
						t.Fatal(err)
					}
					if row != wantRow || gain != wantGain {
						t.Errorf("seed %d blind %v agent %d question %d: row %d gain %v, a fresh responder says row %d gain %v",
							seed, blindView, n.ID, q, row, gain, wantRow, wantGain)
					}
					if q == prevQ {
						if r.Solves() == solves {
							replayed++
						}
						if row != prevRow || gain != prevGain {
							changed++
						}
					}
					prevQ, prevRow, prevGain = q, row, gain
					cases++
				}
			}
		}
	}
	t.Logf("%d answers, %d replayed, %d repeats answered differently after an offer", cases, replayed, changed)
	if replayed < cases/10 || changed < 5 {
		t.Errorf("too few cases exercised: %d replayed, %d changed by an offer, of %d", replayed, changed, cases)
	}
}

// drawContext draws a random value for every variable of p and sets nb's
// context from the draw: the neighbours' values a best response sees. It
// returns the draw, from which the tests compute the truth.
func drawContext(rng *rand.Rand, p *mva.Problem, nb *localsearch.Neighbourhood) []int {
	assign := make([]int, len(p.Variables))
	for v := range assign {
		assign[v] = rng.IntN(p.DomainSize(v))
	}
	for s, v := range nb.SlotVars() {
		nb.Ctx[s] = assign[v]
	}
	return assign
}
