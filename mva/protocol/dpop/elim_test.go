package dpop

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/gen"
)

// elimCase is a planning problem: boundary variables 0..nb-1, separator
// variables from 100 on, the scopes of the factors besides the MVA table.
type elimCase struct {
	boundary, bdims []int
	scopes          [][]int
	sep, sepDims    []int
	max             int
}

// randomElimCase draws a planning problem with nb boundary variables.
func randomElimCase(r *rand.Rand, nb int) elimCase {
	c := elimCase{max: math.MaxInt32}
	dim := map[int]int{}
	for k := range nb {
		c.boundary = append(c.boundary, k)
		c.bdims = append(c.bdims, 1+r.IntN(4))
		dim[k] = c.bdims[k]
	}
	nsep := r.IntN(7)
	for j := range nsep {
		dim[100+j] = 1 + r.IntN(4)
	}
	vars := slices.Sorted(func(yield func(int) bool) {
		for v := range dim {
			if !yield(v) {
				return
			}
		}
	})
	for range r.IntN(7) {
		if len(vars) == 0 {
			break
		}
		n := 1 + r.IntN(min(4, len(vars)))
		perm := r.Perm(len(vars))[:n]
		var s []int
		for _, i := range perm {
			s = append(s, vars[i])
		}
		c.scopes = append(c.scopes, s)
	}
	seen := map[int]bool{}
	for _, s := range c.scopes {
		for _, v := range s {
			if v >= 100 && !seen[v] {
				seen[v] = true
				c.sep = append(c.sep, v)
			}
		}
	}
	slices.Sort(c.sep)
	for _, v := range c.sep {
		c.sepDims = append(c.sepDims, dim[v])
	}
	if r.IntN(3) == 0 {
		c.max = 1 + r.IntN(64)
	}
	return c
}

// simulate replays a plan on the factors' scopes, as the agent does, and
// returns its join entries and whether every intermediate table fits in
// c.max. It is the planner's independent truth: it merges scopes instead of
// reasoning about the MVA table.
func (c elimCase) simulate(t *testing.T, order []int, single int) (float64, bool) {
	t.Helper()
	dim := map[int]int{}
	for k, v := range c.boundary {
		dim[v] = c.bdims[k]
	}
	for k, v := range c.sep {
		dim[v] = c.sepDims[k]
	}
	if !slices.Equal(slices.Sorted(slices.Values(order)), c.boundary) {
		t.Fatalf("order %v is not a permutation of %v", order, c.boundary)
	}
	if single < 0 || len(order) > 0 && single >= len(order) || len(order) == 0 && single != 0 {
		t.Fatalf("single = %d for %d variables", single, len(order))
	}
	pending := append([][]int{slices.Clone(c.boundary)}, c.scopes...)
	cost, fits := 0.0, true
	for _, v := range order[:single] {
		var rest [][]int
		var out []int
		for _, s := range pending {
			if !slices.Contains(s, v) {
				rest = append(rest, s)
				continue
			}
			for _, w := range s {
				if w != v && !slices.Contains(out, w) {
					out = append(out, w)
				}
			}
		}
		rows := 1.0
		for _, w := range out {
			rows *= float64(dim[w])
		}
		fits = fits && rows <= float64(c.max)
		cost += rows * float64(dim[v])
		pending = append(rest, out)
	}
	var left []int
	for _, s := range pending {
		for _, w := range s {
			if !slices.Contains(order[single:], w) && !slices.Contains(left, w) {
				left = append(left, w)
			}
		}
	}
	slices.Sort(left)
	if !slices.Equal(left, c.sep) {
		t.Fatalf("the final step's output %v is not the separator %v", left, c.sep)
	}
	final := product(c.sepDims)
	for _, v := range order[single:] {
		final *= float64(dim[v])
	}
	return cost + final, fits
}

// permutations calls f with every permutation of 0..n-1.
func permutations(n int, f func([]int)) {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			f(p)
			return
		}
		for i := k; i < n; i++ {
			p[k], p[i] = p[i], p[k]
			rec(k + 1)
			p[k], p[i] = p[i], p[k]
		}
	}
	rec(0)
}

// TestPlanEliminationOptimal checks the exact planner against every order
// and every split into single steps and a final joint step, and the greedy
// planner for consistency: both plans fit, cost what they claim, and the
// exact one is the cheapest that fits.
func TestPlanEliminationOptimal(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	var multi, constrained int
	for i := range 600 {
		c := randomElimCase(r, i%7)
		tag := fmt.Sprintf("case %d %+v", i, c)
		nb := len(c.boundary)
		optimum := math.Inf(1)
		if nb == 0 {
			optimum, _ = c.simulate(t, nil, 0)
		}
		permutations(nb, func(order []int) {
			for single := range nb {
				if cost, fits := c.simulate(t, order, single); fits && cost < optimum {
					optimum = cost
				}
			}
		})
		m := newElimModel(c.boundary, c.bdims, c.scopes, c.sep, c.sepDims, c.max)
		ep := m.joint()
		if nb > 0 {
			ep = m.exact()
		}
		cost, fits := c.simulate(t, ep.order, ep.single)
		if !fits || cost != ep.cost || cost != optimum {
			t.Fatalf("%s: plan %+v costs %v (claims %v, fits %v), optimum %v", tag, ep, cost, ep.cost, fits, optimum)
		}
		if nb > 0 {
			g := m.greedy()
			gcost, gfits := c.simulate(t, g.order, g.single)
			if !gfits || gcost != g.cost || gcost < optimum {
				t.Fatalf("%s: greedy plan %+v costs %v (claims %v, fits %v), optimum %v", tag, g, gcost, g.cost, gfits, optimum)
			}
		}
		// What the agent uses: the exact plan, or the joint one for a
		// join too small to split.
		pp := planElimination(c.boundary, c.bdims, c.scopes, c.sep, c.sepDims, c.max)
		want := ep
		switch joint, _ := c.simulate(t, c.boundary, 0); {
		case nb <= 1 || joint < smallJoin:
			want = m.joint()
		case float64(nb)*float64(int(1)<<nb)*exactWork > joint:
			want = m.greedy()
		}
		if !slices.Equal(pp.order, want.order) || pp.single != want.single || pp.cost != want.cost {
			t.Fatalf("%s: planElimination %+v, want %+v", tag, pp, want)
		}
		if ep.single > 0 {
			multi++
			if c.max < math.MaxInt32 {
				constrained++
			}
		}
	}
	if multi < 100 || constrained < 10 {
		t.Fatalf("coverage: %d plans with single steps, %d of them under a small max_util_entries", multi, constrained)
	}
}

// TestPlanEliminationGreedy checks plans beyond exactMaxBoundary: they fit,
// cost what they claim and never cost more than the joint elimination.
func TestPlanEliminationGreedy(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for i := range 40 {
		c := randomElimCase(r, exactMaxBoundary+1+i%6)
		ep := planElimination(c.boundary, c.bdims, c.scopes, c.sep, c.sepDims, c.max)
		cost, fits := c.simulate(t, ep.order, ep.single)
		joint, _ := c.simulate(t, c.boundary, 0)
		if !fits || cost != ep.cost || cost > joint {
			t.Fatalf("case %d: plan %+v costs %v (claims %v, fits %v), joint %v", i, ep, cost, ep.cost, fits, joint)
		}
	}
}

// TestUtilMatchesJointElimination checks, on problems whose agents have
// several boundary variables, that every UTIL message is the one the joint
// elimination of the agent's boundary variables computes, that every join
// runs through the kernel within max_util_entries, that the boundary
// values decoded from the step tables form an assignment of the optimum's
// cost, and that the stepwise joins cost no more than the joint one.
func TestUtilMatchesJointElimination(t *testing.T) {
	ctx := context.Background()
	var cheaper, merges int
	for seed := range uint64(24) {
		p, err := gen.Random(seed, gen.RandomOptions{
			Agents: 3 + int(seed%2), Vars: 5, Domain: 3, LocalDensity: 0.6, BoundaryRatio: 0.6, GlobalDensity: 0.4,
			Tightness: 1, MaxArity: 2, MinCost: 1, MaxCost: 1000,
		})
		if err != nil {
			t.Fatal(err)
		}
		// First without a limit, to learn the largest separator, then
		// with max_util_entries at exactly that size.
		var limit int
		for pass := range 2 {
			params := map[string]float64{}
			if pass == 1 {
				params["max_util_entries"] = float64(limit)
			}
			var joins int64
			kernel := func(ctx context.Context, jp *local.JoinProject, dst []float64, argmin []int32) error {
				if pass == 1 && jp.Rows() > limit {
					return fmt.Errorf("a join of %d rows, over max_util_entries = %d", jp.Rows(), limit)
				}
				joins += int64(jp.Rows()) * int64(jp.ElimSize())
				if len(jp.Elim()) == 0 && len(jp.Inputs()) > 1 {
					merges++
				}
				return jp.Run(ctx, dst, argmin, 1)
			}
			nodes, agents := buildAgents(t, p, params)
			for _, a := range agents {
				a.kernel = kernel
			}
			trace, err := fifo(ctx, agents, -1)
			if err != nil {
				t.Fatalf("seed %d pass %d: %v", seed, pass, err)
			}
			var checks int64
			for _, a := range agents {
				checks += a.Checks()
			}
			if checks != joins {
				t.Fatalf("seed %d pass %d: %d checks, the kernel saw %d join entries", seed, pass, checks, joins)
			}
			utils := map[int]util{}
			for _, m := range trace {
				if m.Kind == KindUtil {
					u, err := decodeUtil(m.Body, len(p.Variables))
					if err != nil {
						t.Fatal(err)
					}
					utils[m.From] = u
					limit = max(limit, len(u.costs))
				}
			}
			for i, a := range agents {
				ref, refChecks := jointUtil(t, a, utils)
				if u, ok := utils[i]; ok {
					if !slices.Equal(u.vars, a.Separator()) || !slices.Equal(u.costs, ref) {
						t.Fatalf("seed %d pass %d agent %d: UTIL %v over %v, joint elimination %v", seed, pass, i, u.costs, u.vars, ref)
					}
				} else if a.Result().Cost != ref[0]+p.Offset {
					t.Fatalf("seed %d pass %d: root optimum %v, joint elimination %v", seed, pass, a.Result().Cost, ref[0]+p.Offset)
				}
				// The elimination steps cost at most the joint join; the
				// pre-merges of small factors add at most a quarter.
				if a.Checks() > refChecks+refChecks/4 {
					t.Fatalf("seed %d pass %d agent %d: %d join entries, joint elimination %d", seed, pass, i, a.Checks(), refChecks)
				}
				if pass == 0 && a.Checks() < refChecks {
					cheaper++
				}
			}
			views := make([]*mva.LocalView, len(nodes))
			results := make([]mva.AgentResult, len(agents))
			for i, a := range agents {
				views[i], results[i] = nodes[i].Local, a.Result()
			}
			_, cost, err := mva.Assemble(ctx, nodes[0].Decomp, views, results)
			if err != nil {
				t.Fatal(err)
			}
			if !sameCost(cost, results[0].Cost) {
				t.Fatalf("seed %d pass %d: the decoded assignment costs %v, the optimum is %v", seed, pass, cost, results[0].Cost)
			}
		}
	}
	t.Logf("%d agents eliminated one variable at a time for less, %d pre-merges", cheaper, merges)
	if cheaper < 20 || merges < 20 {
		t.Fatalf("coverage: %d agents eliminated one variable at a time for less, %d pre-merges", cheaper, merges)
	}
}

// jointUtil recomputes agent a's UTIL with one join-project over all of its
// boundary variables, the children's UTILs taken from utils, and returns
// it with its join entries.
func jointUtil(t *testing.T, a *Agent, utils map[int]util) ([]float64, int64) {
	t.Helper()
	a.childUtil = map[int]*local.Factor{}
	for _, c := range a.tree.Children {
		u := utils[c]
		dims := make([]int, len(u.vars))
		for k, v := range u.vars {
			dims[k] = a.prob.DomainSize(v)
		}
		a.childUtil[c] = &local.Factor{Vars: u.vars, Dims: dims, Costs: u.costs}
	}
	inputs, err := a.joinInputs(context.Background())
	a.childUtil = nil
	if err != nil {
		t.Fatal(err)
	}
	jp, err := local.NewJoinProject(inputs, a.sub.Boundary, a.Separator())
	if err != nil {
		t.Fatal(err)
	}
	costs := make([]float64, jp.Rows())
	if err := jp.Run(context.Background(), costs, nil, 1); err != nil {
		t.Fatal(err)
	}
	return costs, int64(jp.Rows()) * int64(jp.ElimSize())
}
