package energy

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/hearth-dcop/hearth/devices/energy/internal/lp"
)

// Options tune Solve.
type Options struct {
	// Gap is the relative optimality gap at which the branch and bound
	// stops: a plan is returned once no unexplored branch can beat it by
	// more than Gap × max(|cost|, 1 currency). 0 means DefaultGap.
	Gap float64
	// Nodes bounds the linear programmes the branch and bound solves; 0
	// means DefaultNodes. When it runs out the best plan found so far is
	// returned.
	Nodes int
}

// Defaults of Options.
const (
	// DefaultGap is a tenth of issue 17's 1% accuracy goal.
	DefaultGap = 1e-3
	// DefaultNodes bounds the search at a few hundred milliseconds on
	// the largest homes the tests generate; typical homes need 1–20.
	DefaultNodes = 1500
)

// HoldValue is the tie-break of energy held over time: each kWh held in
// a storage for an hour is worth 10⁻⁷ currency, so that among plans of
// equal bill the one that charges earlier and discharges later wins (an
// EV charges as soon as the price allows, not spread thinly over equal
// slots). It is far too small to move a plan that any price difference
// favours (a 80 kWh car held for a day is worth 0.0002), is not part of
// the plan's reported cost, and together with Wear removes free ties.
const HoldValue = 1e-7

// ErrInfeasible is wrapped when a hard goal, limit or cap cannot be kept.
var ErrInfeasible = errors.New("no plan keeps the hard goals and limits")

// Solve plans the home. See docs/DESIGN.md "Energy homes" for the method:
// the home's linear relaxation (storage physics, the convex meter, soft
// goals and limits, the demand charge) solved by an interior-point method
// on its banded time structure, and a branch and bound over what is not
// convex — a minimum charging power, charging and discharging at once,
// the grid permissions — with the relaxation's optimum as the bound.
func Solve(ctx context.Context, h *Home, opts Options) (*Plan, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	if opts.Gap <= 0 {
		opts.Gap = DefaultGap
	}
	if opts.Nodes <= 0 {
		opts.Nodes = DefaultNodes
	}
	m := build(h)
	return m.branch(ctx, opts)
}

// model is the home's linear relaxation and the columns of each quantity.
type model struct {
	h    *Home
	prob *lp.Problem
	wear float64
	// pvFix and pvCur are the non-curtailable and curtailable PV per slot.
	pvFix, pvCur []float64
	// imp[t] and exp[t] are the meter's columns in slot t; pv[t] the
	// curtailable PV used (−1 for none).
	imp, exp [][]int
	pv       []int
	// hard lists the slack columns of hard goals, caps and limits: a
	// relaxation that uses one keeps no hard term.
	hard []int
	// c, d and e are storage columns: c[s][t], d[s][t] powers, e[s][i]
	// the energy at boundary i+1.
	c, d, e [][]int
	// stats of the last branch: programmes solved, the root's optimum.
	solved  int
	rootObj float64
}

// build writes home h's linear relaxation. Rows come in time order (the
// meter of slot t, the demand rows, then each storage's balance and
// goals), which keeps the interior-point method's normal equations
// banded.
func build(h *Home) *model {
	T := h.Slots()
	S := len(h.Storage)
	m := &model{h: h, wear: h.Wear, pvFix: make([]float64, T), pvCur: make([]float64, T)}
	if m.wear < 0 {
		m.wear = DefaultWear
	}
	for _, p := range h.PV {
		for t, f := range p.Forecast {
			if p.Curtailable {
				m.pvCur[t] += f
			} else {
				m.pvFix[t] += f
			}
		}
	}
	g := &h.Grid
	pen := g.LimitPenalty
	if pen == 0 {
		pen = DefaultLimitPenalty
	}
	// big bounds every meter power; hardPen prices a hard term's slack
	// far above anything a plan can earn.
	big, maxPrice := 1.0, 1.0
	for t := range T {
		v := math.Abs(h.Load[t]) + m.pvFix[t] + m.pvCur[t]
		for _, s := range h.Storage {
			v += s.MaxCharge + s.MaxDischarge
		}
		big = math.Max(big, v+1)
		maxPrice = math.Max(maxPrice, math.Abs(h.Tariff.Import[t])+math.Abs(h.Tariff.Export[t]))
	}
	for _, s := range h.Storage {
		maxPrice = math.Max(maxPrice, math.Abs(s.EndValue))
		for _, gl := range s.Goals {
			maxPrice = math.Max(maxPrice, goalPenalty(gl))
		}
	}
	maxPrice = math.Max(maxPrice, pen+g.DemandCharge)
	hardPen := 1000 * maxPrice

	// Row numbers.
	demand := g.DemandCharge > 0
	rows := 0
	bal := make([]int, T)
	dm, chain := make([]int, T), make([]int, T)
	dyn := make([][]int, S)
	type goalRow struct{ s, k, row int }
	goalsAt := make([][]goalRow, T+1)
	// permC[s][t] and permD[s][t] are the rows of the grid permissions'
	// cuts (−1 for none): the convex hull of "no charging, or import at
	// most Deadband", imp + (I − Deadband)/C · c ≤ I with I the most the
	// home can import in the slot and C the charging power, and likewise
	// for discharging and export. They bring the relaxation close to the
	// plans the permissions allow, which keeps the search short.
	//
	// permC2 and permD2 are stronger cuts of the same permissions, from
	// the flows: a storage that charges while the home imports at most
	// Deadband charges from PV and the other storages' discharge,
	// c·(1 + max(0, −a)/C) ≤ max(a, 0) + Σ d' with a = Deadband + PV
	// − load; and likewise discharging, with a = Deadband + load − fixed
	// PV and the others' charging.
	permC, permD := make([][]int, S), make([][]int, S)
	permC2, permD2 := make([][]int, S), make([][]int, S)
	// excl[s][t] is the row of the hull of "charge or discharge, not
	// both", c/C + d/D ≤ 1 (−1 where the storage cannot do both).
	excl := make([][]int, S)
	maxImp, maxExp := make([]float64, T), make([]float64, T)
	for t := range T {
		i, e := h.Load[t]-m.pvFix[t], m.pvFix[t]+m.pvCur[t]-h.Load[t]
		for _, st := range h.Storage {
			if st.Available == nil || st.Available[t] {
				i += st.MaxCharge
				e += st.MaxDischarge
			}
		}
		// Not capped by hard limits: the relaxation may cross them
		// through their slack, and the cut must hold there too.
		maxImp[t], maxExp[t] = math.Max(i, 0), math.Max(e, 0)
	}
	for s := range S {
		dyn[s] = make([]int, T)
		permC[s], permD[s] = make([]int, T), make([]int, T)
		permC2[s], permD2[s] = make([]int, T), make([]int, T)
		excl[s] = make([]int, T)
	}
	for t := range T {
		bal[t] = rows
		rows++
		if demand {
			dm[t] = rows
			rows++
			if t > 0 {
				chain[t] = rows
				rows++
			}
		}
		for s := range S {
			dyn[s][t] = rows
			rows++
			st := &h.Storage[s]
			on := st.Available == nil || st.Available[t]
			permC[s][t], permD[s][t], permC2[s][t], permD2[s][t] = -1, -1, -1, -1
			excl[s][t] = -1
			if on && st.MaxCharge > 0 && st.MaxDischarge > 0 {
				excl[s][t] = rows
				rows++
			}
			if st.NoGridCharge && on && st.MaxCharge > 0 && maxImp[t] > Deadband {
				permC[s][t], permC2[s][t] = rows, rows+1
				rows += 2
			}
			if st.NoGridDischarge && on && st.MaxDischarge > 0 && maxExp[t] > Deadband {
				permD[s][t], permD2[s][t] = rows, rows+1
				rows += 2
			}
			for k, gl := range h.Storage[s].Goals {
				if gl.Index == t+1 {
					goalsAt[t+1] = append(goalsAt[t+1], goalRow{s, k, rows})
					rows++
				}
			}
		}
	}
	fin := rows
	if demand {
		rows++
	}
	p := lp.NewProblem(rows)
	m.prob = p
	col := func(cost, lo, hi float64, entries ...float64) int {
		// entries: row, value pairs
		var r []int
		var v []float64
		for i := 0; i < len(entries); i += 2 {
			r = append(r, int(entries[i]))
			v = append(v, entries[i+1])
		}
		return p.AddCol(cost, lo, hi, r, v)
	}

	m.imp, m.exp, m.pv = make([][]int, T), make([][]int, T), make([]int, T)
	peak := make([]int, T)
	for t := range T {
		dt := h.Dt[t]
		pi, pe := h.Tariff.Import[t], h.Tariff.Export[t]
		p.B[bal[t]] = h.Load[t] - m.pvFix[t]
		// Import: within the soft limit, beyond it, beyond a hard cap.
		// Hard caps and limits keep hardMargin inside, so that the
		// replay's rounding cannot cross them.
		capT := big
		if g.Cap != nil && !math.IsNaN(g.Cap[t]) {
			capT = math.Min(capT, math.Max(g.Cap[t]-hardMargin, 0))
		}
		if g.HardLimits && g.ImportLimit > 0 {
			capT = math.Min(capT, math.Max(g.ImportLimit-hardMargin, 0))
		}
		impRows := func(cost, hi float64) {
			e := []float64{float64(bal[t]), 1}
			if demand {
				e = append(e, float64(dm[t]), 1)
			}
			for s := range S {
				if r := permC[s][t]; r >= 0 {
					e = append(e, float64(r), 1)
				}
			}
			m.imp[t] = append(m.imp[t], col(cost*dt, 0, hi, e...))
		}
		if l := g.ImportLimit; l > 0 && !g.HardLimits {
			impRows(pi, math.Min(l, capT))
			impRows(pi+pen, math.Max(0, capT-l))
		} else {
			impRows(pi, capT)
		}
		if capT < big {
			impRows(pi+hardPen, big)
			m.hard = append(m.hard, m.imp[t][len(m.imp[t])-1])
		}
		expRows := func(cost, hi float64) {
			e := []float64{float64(bal[t]), -1}
			for s := range S {
				if r := permD[s][t]; r >= 0 {
					e = append(e, float64(r), 1)
				}
			}
			m.exp[t] = append(m.exp[t], col(cost*dt, 0, hi, e...))
		}
		expCap := big
		if g.HardLimits && g.ExportLimit > 0 {
			expCap = math.Max(g.ExportLimit-hardMargin, 0)
		}
		if l := g.ExportLimit; l > 0 && !g.HardLimits {
			expRows(-pe, l)
			expRows(-pe+pen, big)
		} else {
			expRows(-pe, expCap)
		}
		if expCap < big {
			expRows(-pe+hardPen, big)
			m.hard = append(m.hard, m.exp[t][len(m.exp[t])-1])
		}
		m.pv[t] = -1
		if m.pvCur[t] > 0 {
			m.pv[t] = col(0, 0, m.pvCur[t], float64(bal[t]), 1)
		}
		if demand {
			// peak[t] ≥ import[t] and ≥ peak[t−1].
			e := []float64{float64(dm[t]), -1}
			if t+1 < T {
				e = append(e, float64(chain[t+1]), 1)
			} else {
				e = append(e, float64(fin), 1)
			}
			if t > 0 {
				e = append(e, float64(chain[t]), -1)
			}
			peak[t] = col(0, 0, big, e...)
			col(0, 0, big, float64(dm[t]), 1)
			if t > 0 {
				col(0, 0, big, float64(chain[t]), 1)
			}
		}
	}
	if demand {
		// over ≥ peak − threshold: peak − over + slack = threshold.
		p.B[fin] = g.DemandThreshold
		col(g.DemandCharge, 0, big, float64(fin), -1)
		col(0, 0, g.DemandThreshold+big, float64(fin), 1)
	}

	m.c, m.d, m.e = make([][]int, S), make([][]int, S), make([][]int, S)
	for s := range S {
		st := &h.Storage[s]
		// The range, energyMargin inside where the range is wider than
		// that (and never excluding the start), so that the replay's
		// rounding cannot carry a plan across it.
		lo, hi := math.Min(st.Min, st.Initial), math.Max(st.Max, st.Initial)
		if st.Max-st.Min > 4*energyMargin {
			lo = math.Min(st.Min+energyMargin, st.Initial)
			hi = math.Max(st.Max-energyMargin, st.Initial)
		}
		m.c[s], m.d[s], m.e[s] = make([]int, T), make([]int, T), make([]int, T)
		p.B[dyn[s][0]] = st.Initial
		for t := range T {
			dt := h.Dt[t]
			avail := 1.0
			if st.Available != nil && !st.Available[t] {
				avail = 0
			}
			// The others' most charging and discharging, bounding the
			// cuts' slacks.
			sumC, sumD := 0.0, 0.0
			for o, so := range h.Storage {
				if o != s && (so.Available == nil || so.Available[t]) {
					sumC += so.MaxCharge
					sumD += so.MaxDischarge
				}
			}
			// e(t+1) − e(t) − ηc·dt·c + dt/ηd·d = 0.
			ce := []float64{float64(bal[t]), -1, float64(dyn[s][t]), -st.EtaC * dt}
			if r := permC[s][t]; r >= 0 {
				ce = append(ce, float64(r), (maxImp[t]-Deadband)/st.MaxCharge)
				p.B[r] = maxImp[t]
				col(0, 0, maxImp[t]+1, float64(r), 1)
				a := Deadband + m.pvFix[t] + m.pvCur[t] - h.Load[t]
				r2 := permC2[s][t]
				ce = append(ce, float64(r2), 1+math.Max(0, -a)/st.MaxCharge)
				p.B[r2] = math.Max(a, 0)
				col(0, 0, math.Max(a, 0)+sumD+1, float64(r2), 1)
			}
			de := []float64{float64(bal[t]), 1, float64(dyn[s][t]), dt / st.EtaD}
			if r := permD[s][t]; r >= 0 {
				de = append(de, float64(r), (maxExp[t]-Deadband)/st.MaxDischarge)
				p.B[r] = maxExp[t]
				col(0, 0, maxExp[t]+1, float64(r), 1)
				a := Deadband + h.Load[t] - m.pvFix[t]
				r2 := permD2[s][t]
				de = append(de, float64(r2), 1+math.Max(0, -a)/st.MaxDischarge)
				p.B[r2] = math.Max(a, 0)
				col(0, 0, math.Max(a, 0)+sumC+1, float64(r2), 1)
			}
			if r := excl[s][t]; r >= 0 {
				ce = append(ce, float64(r), 1/st.MaxCharge)
				de = append(de, float64(r), 1/st.MaxDischarge)
				p.B[r] = 1
				col(0, 0, 1, float64(r), 1)
			}
			// The other storages' terms in this storage's cuts.
			for o := range S {
				if o == s {
					continue
				}
				if r := permC2[o][t]; r >= 0 {
					de = append(de, float64(r), -1)
				}
				if r := permD2[o][t]; r >= 0 {
					ce = append(ce, float64(r), -1)
				}
			}
			m.c[s][t] = col(m.wear*dt, 0, st.MaxCharge*avail, ce...)
			m.d[s][t] = col(m.wear*dt, 0, st.MaxDischarge*avail, de...)
			cost := -HoldValue * dt
			if t == T-1 {
				cost -= st.EndValue
			}
			e := []float64{float64(dyn[s][t]), 1}
			if t+1 < T {
				e = append(e, float64(dyn[s][t+1]), -1)
			}
			for _, gr := range goalsAt[t+1] {
				if gr.s == s {
					e = append(e, float64(gr.row), 1)
				}
			}
			m.e[s][t] = col(cost, lo, hi, e...)
		}
	}
	// Goals: e + shortfall − surplus = goal.
	for i := range goalsAt {
		for _, gr := range goalsAt[i] {
			gl := h.Storage[gr.s].Goals[gr.k]
			// A goal at the range's edge asks for the edge the
			// relaxation keeps (energyMargin inside).
			p.B[gr.row] = math.Min(gl.Energy, p.Hi[m.e[gr.s][i-1]])
			cost := goalPenalty(gl)
			if gl.Hard {
				cost = hardPen
			}
			// Shortfall and surplus are bounded by the storage's range.
			st := &h.Storage[gr.s]
			lo, hi := math.Min(st.Min, st.Initial), math.Max(st.Max, st.Initial)
			sh := col(cost, 0, math.Max(gl.Energy-lo, 0)+1, float64(gr.row), 1)
			if gl.Hard {
				m.hard = append(m.hard, sh)
			}
			col(0, 0, math.Max(hi-gl.Energy, 0)+1, float64(gr.row), -1)
		}
	}
	return m
}

func goalPenalty(g Goal) float64 {
	if g.Penalty > 0 {
		return g.Penalty
	}
	return DefaultGoalPenalty
}

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
				return nil, nil, nil, m.infeasible()
			}
			return nil, nil, nil, nil
		}
		snap(res.X, lo, hi)
		return res, lo, hi, nil
	}
	offer := func(x []float64) {
		p := m.assemble(x)
		if c := p.Cost(); c < bestCost {
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
	for len(stack) > 0 && solved < opts.Nodes {
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

// assemble turns a relaxation without violations into a Plan: it replays
// the storage powers through the physics (trimming the rounding of the
// interior-point method at the bounds), derives the meter from the flows
// and breaks the cost down.
func (m *model) assemble(x []float64) *Plan {
	h := m.h
	T := h.Slots()
	p := &Plan{Import: make([]float64, T), Export: make([]float64, T)}
	net := make([]float64, T)
	for t := range T {
		net[t] = h.Load[t] - m.pvFix[t]
	}
	for s := range h.Storage {
		st := &h.Storage[s]
		ch, dis, en := make([]float64, T), make([]float64, T), make([]float64, T+1)
		e := st.Initial
		en[0] = e
		for t := range T {
			dt := h.Dt[t]
			c, d := x[m.c[s][t]], x[m.d[s][t]]
			if c < actTol {
				c = 0
			}
			if d < actTol {
				d = 0
			}
			if c > 0 && d > 0 {
				// Below actTol of each other only; keep the larger.
				if c >= d {
					d = 0
				} else {
					c = 0
				}
			}
			if c > 0 && st.MinCharge > 0 && c < st.MinCharge {
				c = st.MinCharge
			}
			// Trim to the range the action may not leave.
			if top := math.Max(st.Max, e); c > 0 && e+st.EtaC*c*dt > top {
				c = (top - e) / (st.EtaC * dt)
				if c < st.MinCharge || c < actTol {
					c = 0
				}
			}
			if floor := math.Max(math.Min(st.Min, e), 0); d > 0 && e-d*dt/st.EtaD < floor {
				d = math.Max(0, (e-floor)*st.EtaD/dt)
			}
			ch[t], dis[t] = c, d
			e += st.EtaC*c*dt - d*dt/st.EtaD
			en[t+1] = e
			net[t] += c - d
			p.Wear += m.wear * (c + d) * dt
		}
		p.Charge, p.Discharge, p.Energy = append(p.Charge, ch), append(p.Discharge, dis), append(p.Energy, en)
		p.StoredValue += st.EndValue * en[T]
		for _, g := range st.Goals {
			v := en[g.Index]
			if v < g.Energy && !g.Hard {
				p.Penalties += goalPenalty(g) * (g.Energy - v)
			}
			// A shortfall within the interior-point method's rounding
			// is no miss.
			if v < g.Energy-goalTol {
				p.Missed = append(p.Missed, Miss{What: g.Text, Storage: st.Name, Slot: g.Index, By: g.Energy - v})
			}
		}
	}
	g := &h.Grid
	pen := g.LimitPenalty
	if pen == 0 {
		pen = DefaultLimitPenalty
	}
	used := make([]float64, T)
	peak := 0.0
	for t := range T {
		// Curtailable PV: as the relaxation chose, within the forecast.
		if j := m.pv[t]; j >= 0 {
			used[t] = math.Min(math.Max(x[j], 0), m.pvCur[t])
			net[t] -= used[t]
		}
		p.Import[t], p.Export[t] = math.Max(net[t], 0), math.Max(-net[t], 0)
		p.ImportCost += h.Tariff.Import[t] * p.Import[t] * h.Dt[t]
		p.ExportRevenue += h.Tariff.Export[t] * p.Export[t] * h.Dt[t]
		peak = math.Max(peak, p.Import[t])
		if l := g.ImportLimit; l > 0 && p.Import[t] > l && !g.HardLimits {
			p.Penalties += pen * (p.Import[t] - l) * h.Dt[t]
		}
		if l := g.ImportLimit; l > 0 && p.Import[t] > l+missTol {
			p.Missed = append(p.Missed, Miss{What: "import limit", Slot: t, By: p.Import[t] - l})
		}
		if l := g.ExportLimit; l > 0 && p.Export[t] > l && !g.HardLimits {
			p.Penalties += pen * (p.Export[t] - l) * h.Dt[t]
		}
		if l := g.ExportLimit; l > 0 && p.Export[t] > l+missTol {
			p.Missed = append(p.Missed, Miss{What: "export limit", Slot: t, By: p.Export[t] - l})
		}
	}
	// Split the curtailable PV used among arrays in proportion to their
	// forecast; the others run in full.
	for _, a := range h.PV {
		row := make([]float64, T)
		for t := range T {
			switch {
			case !a.Curtailable:
				row[t] = a.Forecast[t]
			case m.pvCur[t] > 0:
				row[t] = a.Forecast[t] * used[t] / m.pvCur[t]
			}
		}
		p.PVUsed = append(p.PVUsed, row)
	}
	if g.DemandCharge > 0 {
		p.DemandCost = g.DemandCharge * math.Max(0, peak-g.DemandThreshold)
	}
	p.Objective = p.ImportCost - p.ExportRevenue - p.StoredValue + p.DemandCost
	p.Penalties += p.Wear
	return p
}

// hardKept checks the hard goals, limits and caps of a plan; the
// relaxation keeps them to within rounding.
func (m *model) hardKept(p *Plan) error {
	h := m.h
	for s, st := range h.Storage {
		for _, g := range st.Goals {
			if g.Hard && p.Energy[s][g.Index] < g.Energy-1e-4 {
				return m.infeasible()
			}
		}
	}
	g := &h.Grid
	for t := range h.Slots() {
		if g.Cap != nil && !math.IsNaN(g.Cap[t]) && p.Import[t] > g.Cap[t]+1e-6 {
			return m.infeasible()
		}
		if g.HardLimits && (g.ImportLimit > 0 && p.Import[t] > g.ImportLimit+1e-6 || g.ExportLimit > 0 && p.Export[t] > g.ExportLimit+1e-6) {
			return m.infeasible()
		}
	}
	return nil
}

// infeasible explains a hard goal or limit no plan keeps.
func (m *model) infeasible() error {
	h := m.h
	for s := range h.Storage {
		for _, g := range h.Storage[s].Goals {
			if g.Hard {
				return fmt.Errorf("home %s: storage %s: hard goal %q (%.3g kWh at boundary %d) cannot be met, or a hard limit cannot be kept: %w", h.Name, h.Storage[s].Name, g.Text, g.Energy, g.Index, ErrInfeasible)
			}
		}
	}
	return fmt.Errorf("home %s: the hard import/export limits or committed caps cannot be kept with the load and PV given: %w", h.Name, ErrInfeasible)
}
