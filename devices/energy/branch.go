package energy

import (
	"context"
	"fmt"
	"math"

	"github.com/hearth-dcop/hearth/devices/energy/internal/lp"
)

// bound narrows one column's range: one side of a branch.
type bound struct {
	col    int
	lo, hi float64
}

// node is a branch of the search: the bounds on its path from the root.
type node struct {
	bounds []bound
	// lb is the parent's relaxation optimum: a bound on the branch.
	lb float64
}

// choice is a disjunction the relaxation breaks, and its two sides: the
// first tried first.
type choice struct {
	score         float64
	first, second []bound
}

const (
	// snapTol is how close (kW, kWh) a value of the relaxation must be to
	// a bound to be taken as on it.
	snapTol = 1e-8
	// actTol is the power (kW) above which a storage counts as acting in
	// the branching; below it the plan rounds it to zero. Half the
	// checker's tolerance, so that whatever the checker sees acting was
	// branched on, and the rounding moves the meter by less than
	// hardMargin.
	actTol = 5e-7
	// missTol is the shortfall (kWh) or excess (kW) below which a soft
	// goal or limit is not reported as missed (it is still paid for).
	missTol = 1e-6
	// goalTol is missTol for goals (kWh): the checker's tolerance.
	goalTol = 1e-4
	// energyMargin (kWh) keeps the relaxation's energies inside each
	// storage's range.
	energyMargin = 2e-5
	// hardMargin (kW) keeps the relaxation inside hard caps and limits.
	hardMargin = 1e-5
	// stallLPs ends a search whose best plan has not improved by more
	// than the gap in that many LPs: on the homes where the bound does
	// not close (an EV following PV below its minimum power in 28 slots)
	// the search would otherwise run to Options.Nodes for nothing; on
	// the generated homes improvements came at most 275 LPs apart.
	stallLPs = 400
	// diveEvery is how often (in branches) the search dives.
	diveEvery = 16
	// bandMargin keeps a branch that confines the meter to the
	// permissions' deadband this far inside it (kW), against rounding.
	bandMargin = 1e-3
)

// branch runs the branch and bound: a dive first, which fixes every
// broken disjunction of the relaxation to its likelier side at once
// until the relaxation breaks none (a plan in a few programmes), then
// depth first until a plan is found and the branch of least bound first,
// one disjunction per branch, until no branch can beat the best plan by
// more than the gap.
func (m *model) branch(ctx context.Context, opts Options) (*Plan, error) {
	var best *Plan
	bestCost := math.Inf(1)
	tol := func() float64 { return opts.Gap * math.Max(math.Abs(bestCost), 1) }
	solved := 0
	// relax solves the relaxation under bounds; nil when it is infeasible
	// or needs a hard term's slack.
	relax := func(bounds []bound) (*lp.Result, []float64, []float64, error) {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, err
		}
		lo, hi := append([]float64(nil), m.prob.Lo...), append([]float64(nil), m.prob.Hi...)
		for _, b := range bounds {
			lo[b.col] = math.Max(lo[b.col], b.lo)
			hi[b.col] = math.Min(hi[b.col], b.hi)
			if lo[b.col] > hi[b.col]+1e-12 {
				return nil, nil, nil, nil
			}
		}
		prob := *m.prob
		prob.Lo, prob.Hi = lo, hi
		res, err := lp.Solve(&prob)
		solved++
		m.solved = solved
		if err != nil {
			if len(bounds) == 0 {
				return nil, nil, nil, fmt.Errorf("home %s: planning: %w", m.h.Name, err)
			}
			return nil, nil, nil, nil
		}
		slack := 0.0
		for _, j := range m.hard {
			slack += res.X[j]
		}
		if slack > 1e-5 {
			if len(bounds) == 0 {
				return nil, nil, nil, m.crossed(res.X)
			}
			return nil, nil, nil, nil
		}
		snap(res.X, lo, hi)
		return res, lo, hi, nil
	}
	offer := func(x []float64) {
		p := m.assemble(x)
		if c := p.Cost(); c < bestCost {
			if best == nil || c < bestCost-tol() {
				m.improved = solved
			}
			best, bestCost = p, c
		}
	}
	root, lo, hi, err := relax(nil)
	if err != nil {
		return nil, err
	}
	m.rootObj = root.Obj
	rootChoices := m.violations(root.X, lo, hi)
	if len(rootChoices) == 0 {
		offer(root.X)
		return best, m.hardKept(best)
	}
	// dive fixes every broken disjunction to its first side at once,
	// from a node's bounds and choices, until the relaxation breaks none
	// or fails.
	dive := func(bounds []bound, choices []choice) {
		bounds = append([]bound(nil), bounds...)
		for range 30 {
			for _, c := range choices {
				bounds = append(bounds, c.first...)
			}
			res, lo, hi, err := relax(bounds)
			if err != nil || res == nil || res.Obj >= bestCost-tol() {
				return
			}
			if choices = m.violations(res.X, lo, hi); len(choices) == 0 {
				offer(res.X)
				return
			}
		}
	}
	dive(nil, rootChoices)
	// The search, from the root's children.
	var stack []node
	add := func(parent []bound, lb float64, ch choice) {
		for _, bs := range [][]bound{ch.second, ch.first} {
			nb := make([]bound, len(parent), len(parent)+len(bs))
			copy(nb, parent)
			stack = append(stack, node{bounds: append(nb, bs...), lb: lb})
		}
	}
	add(nil, root.Obj, top(rootChoices))
	nodes := 0
	for len(stack) > 0 && solved < opts.Nodes && (best == nil || solved-m.improved < stallLPs) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Depth first until a plan is found, then the branch of least
		// bound first.
		pick := len(stack) - 1
		if best != nil {
			for i := range stack {
				if stack[i].lb < stack[pick].lb {
					pick = i
				}
			}
		}
		nd := stack[pick]
		stack = append(stack[:pick], stack[pick+1:]...)
		if nd.lb >= bestCost-tol() {
			continue
		}
		res, lo, hi, err := relax(nd.bounds)
		if err != nil {
			return nil, err
		}
		if res == nil || res.Obj >= bestCost-tol() {
			continue
		}
		chs := m.violations(res.X, lo, hi)
		if len(chs) == 0 {
			offer(res.X)
			continue
		}
		// Now and then a dive from the branch of least bound, for a
		// better plan to prune with.
		if nodes++; nodes%diveEvery == 0 {
			dive(nd.bounds, chs)
		}
		add(nd.bounds, res.Obj, top(chs))
	}
	if best == nil && len(stack) > 0 {
		return nil, fmt.Errorf("home %s: no plan found within %d linear programmes (Options.Nodes); the search was not finished", m.h.Name, opts.Nodes)
	}
	if best == nil {
		return nil, m.infeasible()
	}
	if err := m.hardKept(best); err != nil {
		return nil, err
	}
	return best, nil
}

// top returns the choice of highest score.
func top(chs []choice) choice {
	b := chs[0]
	for _, c := range chs[1:] {
		if c.score > b.score {
			b = c
		}
	}
	return b
}

// snap moves every value within snapTol of a bound onto it.
func snap(x, lo, hi []float64) {
	for j, v := range x {
		if v-lo[j] < snapTol {
			x[j] = lo[j]
		} else if hi[j]-v < snapTol {
			x[j] = hi[j]
		}
	}
}

func (m *model) sum(cols []int, x []float64) float64 {
	v := 0.0
	for _, j := range cols {
		v += x[j]
	}
	return v
}

// violations returns the disjunctions the relaxation x breaks: per
// storage and slot the one it breaks most.
func (m *model) violations(x, lo, hi []float64) []choice {
	h := m.h
	var out []choice
	var best choice
	found := false
	consider := func(score float64, first, second []bound) {
		if !found || score > best.score {
			best, found = choice{score, first, second}, true
		}
	}
	zero := func(j int) []bound { return []bound{{j, math.Inf(-1), 0}} }
	band := func(cols []int) []bound {
		// Confine the sum of cols to [0, Deadband − margin], in order.
		var bs []bound
		room := Deadband - bandMargin
		for _, j := range cols {
			u := math.Min(hi[j], math.Max(room, 0))
			bs = append(bs, bound{j, math.Inf(-1), u})
			room -= u
		}
		return bs
	}
	for t := range h.Slots() {
		imp := m.sum(m.imp[t], x)
		exp := m.sum(m.exp[t], x)
		net := imp - exp
		for s := range h.Storage {
			st := &h.Storage[s]
			cj, dj := m.c[s][t], m.d[s][t]
			c, d := x[cj], x[dj]
			if st.MinCharge > 0 && c > actTol && c < st.MinCharge-actTol {
				on := []bound{{cj, st.MinCharge, math.Inf(1)}}
				if c < st.MinCharge/2 {
					consider(math.Min(c, st.MinCharge-c), zero(cj), on)
				} else {
					consider(math.Min(c, st.MinCharge-c), on, zero(cj))
				}
			}
			if c > actTol && d > actTol {
				if c < d {
					consider(math.Min(c, d), zero(cj), zero(dj))
				} else {
					consider(math.Min(c, d), zero(dj), zero(cj))
				}
			}
			if st.NoGridCharge && c > actTol && net > Deadband-bandMargin/2 {
				score := math.Min(c, net-Deadband)
				if c < net-Deadband {
					consider(score, m.zeroAll(t, true), band(m.imp[t]))
				} else {
					consider(score, band(m.imp[t]), m.zeroAll(t, true))
				}
			}
			if st.NoGridDischarge && d > actTol && -net > Deadband-bandMargin/2 {
				score := math.Min(d, -net-Deadband)
				if d < -net-Deadband {
					consider(score, m.zeroAll(t, false), band(m.exp[t]))
				} else {
					consider(score, band(m.exp[t]), m.zeroAll(t, false))
				}
			}
			// A storage outside its range may only move towards it.
			ej := m.e[s][t]
			if d > actTol && x[ej] < st.Min-actTol {
				consider(math.Min(d, st.Min-x[ej]), zero(dj), []bound{{ej, st.Min, math.Inf(1)}})
			}
			if c > actTol && x[ej] > st.Max+actTol {
				consider(math.Min(c, x[ej]-st.Max), zero(cj), []bound{{ej, math.Inf(-1), st.Max}})
			}
			if found {
				out = append(out, best)
				found = false
			}
		}
	}
	return out
}

// zeroAll stops, in slot t, every storage that may not charge from the
// grid (charge true) or discharge into it: the side of a permission's
// disjunction where the home imports (exports) beyond the deadband, which
// holds for all such storages at once.
func (m *model) zeroAll(t int, charge bool) []bound {
	var bs []bound
	for s, st := range m.h.Storage {
		switch {
		case charge && st.NoGridCharge:
			bs = append(bs, bound{m.c[s][t], math.Inf(-1), 0})
		case !charge && st.NoGridDischarge:
			bs = append(bs, bound{m.d[s][t], math.Inf(-1), 0})
		}
	}
	return bs
}

// crossed explains why no plan keeps the hard terms, from the root
// relaxation x, which keeps them only through their slacks: it names the
// term crossed most (and how many are), in the home's words — the slot
// and the cap of a street's share of a hard feeder limit, the goal of a
// storage.
func (m *model) crossed(x []float64) error {
	worst, n := -1, 0
	for k, j := range m.hard {
		if x[j] <= 1e-6 {
			continue
		}
		n++
		if worst < 0 || x[j] > x[m.hard[worst]] {
			worst = k
		}
	}
	if worst < 0 {
		return m.infeasible()
	}
	ht := m.hardWhat[worst]
	others := ""
	if n > 1 {
		others = fmt.Sprintf(" (and %d other hard terms)", n-1)
	}
	return fmt.Errorf("home %s: %s cannot be kept%s: the least-cost linear relaxation crosses it by %.3g %s with the load, PV and storage given: %w", m.h.Name, ht.what, others, x[m.hard[worst]], ht.unit, ErrInfeasible)
}
