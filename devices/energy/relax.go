package energy

import (
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/devices/energy/internal/lp"
)

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
	// relaxation that uses one keeps no hard term. hardWhat[k] names
	// hard[k]'s term, and the unit of its slack, for the error that
	// refuses it.
	hard     []int
	hardWhat []hardTerm
	// c, d and e are storage columns: c[s][t], d[s][t] powers, e[s][i]
	// the energy at boundary i+1.
	c, d, e [][]int
	// stats of the last branch: programmes solved, the root's optimum.
	solved  int
	rootObj float64
	// improved is the LP count at the last improvement of the best plan
	// by more than the gap.
	improved int
}

// hardTerm names a hard term and the unit of its slack.
type hardTerm struct{ what, unit string }

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
	for _, w := range g.Windows {
		maxPrice = math.Max(maxPrice, w.Price)
	}
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
	// The cap windows' rows, as the demand charge's but per window
	// (−1 outside every window): wr[t] import ≤ top[t], wchain[t]
	// top[t−1] ≤ top[t] after the window's first slot, and wfin[t] at
	// its last slot top − over ≤ Budget; winAt[t] is slot t's window.
	wr, wchain, wfin, winAt := make([]int, T), make([]int, T), make([]int, T), make([]int, T)
	for t := range T {
		wr[t], wchain[t], wfin[t], winAt[t] = -1, -1, -1, -1
	}
	for k, w := range g.Windows {
		for t := w.From; t < w.To; t++ {
			winAt[t] = k
		}
	}
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
		if k := winAt[t]; k >= 0 {
			wr[t] = rows
			rows++
			if t > g.Windows[k].From {
				wchain[t] = rows
				rows++
			}
			if t == g.Windows[k].To-1 {
				wfin[t] = rows
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
			if wr[t] >= 0 {
				e = append(e, float64(wr[t]), 1)
			}
			for s := range S {
				if r := permC[s][t]; r >= 0 {
					e = append(e, float64(r), 1)
				}
			}
			m.imp[t] = append(m.imp[t], col(cost*dt, 0, hi, e...))
		}
		var steps []Step
		if g.ImportSteps != nil {
			steps = g.ImportSteps[t]
		}
		extra := 0.0 // the last step's price, beyond the cap too
		if len(steps) > 0 {
			extra = steps[len(steps)-1].Price
		}
		if l := g.ImportLimit; l > 0 && !g.HardLimits && len(steps) == 0 {
			impRows(pi, math.Min(l, capT))
			impRows(pi+pen, math.Max(0, capT-l))
		} else if len(steps) == 0 {
			impRows(pi, capT)
		} else {
			// One column per band between the breakpoints of the
			// steps and the soft limit, at the sum of their prices:
			// convex, so the columns fill in order.
			cuts := []float64{capT}
			soft := g.ImportLimit > 0 && !g.HardLimits
			if soft && g.ImportLimit < capT {
				cuts = append(cuts, g.ImportLimit)
			}
			for _, s := range steps[:len(steps)-1] {
				if s.Upto > 0 && s.Upto < capT {
					cuts = append(cuts, s.Upto)
				}
			}
			slices.Sort(cuts)
			cuts = slices.Compact(cuts)
			from := 0.0
			for _, to := range cuts {
				cost := pi + stepPrice(steps, from)
				if soft && from >= g.ImportLimit {
					cost += pen
				}
				impRows(cost, to-from)
				from = to
			}
		}
		if capT < big {
			impRows(pi+hardPen+extra, big)
			m.hard = append(m.hard, m.imp[t][len(m.imp[t])-1])
			what := fmt.Sprintf("the hard import limit %g kW in slot %d", g.ImportLimit, t)
			if g.Cap != nil && !math.IsNaN(g.Cap[t]) && (!g.HardLimits || g.ImportLimit <= 0 || g.Cap[t] < g.ImportLimit) {
				what = fmt.Sprintf("the hard import cap %.4g kW in slot %d", g.Cap[t], t)
			}
			m.hardWhat = append(m.hardWhat, hardTerm{what, "kW"})
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
			m.hardWhat = append(m.hardWhat, hardTerm{fmt.Sprintf("the hard export limit %g kW in slot %d", g.ExportLimit, t), "kW"})
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
		if k := winAt[t]; k >= 0 {
			// top[t] ≥ import[t] and ≥ top[t−1]; at the window's end
			// over ≥ top − Budget, at Price per kW.
			w := g.Windows[k]
			e := []float64{float64(wr[t]), -1}
			if t+1 < w.To {
				e = append(e, float64(wchain[t+1]), 1)
			} else {
				e = append(e, float64(wfin[t]), 1)
			}
			if t > w.From {
				e = append(e, float64(wchain[t]), -1)
			}
			col(0, 0, big, e...)
			col(0, 0, big, float64(wr[t]), 1)
			if t > w.From {
				col(0, 0, big, float64(wchain[t]), 1)
			}
			if t == w.To-1 {
				p.B[wfin[t]] = w.Budget
				col(w.Price, 0, big+math.Abs(w.Budget), float64(wfin[t]), -1)
				col(0, 0, math.Max(w.Budget, 0)+big, float64(wfin[t]), 1)
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
		// An arrival's energy, like the start, is never excluded.
		from, to := st.span()
		lo, hi := math.Min(st.Min, from), math.Max(st.Max, to)
		if st.Max-st.Min > 4*energyMargin {
			lo = math.Min(st.Min+energyMargin, from)
			hi = math.Max(st.Max-energyMargin, to)
		}
		m.c[s], m.d[s], m.e[s] = make([]int, T), make([]int, T), make([]int, T)
		p.B[dyn[s][0]] = st.Initial
		// An arrival at boundary a makes slot a−1's balance
		// e(a) = Energy: the slot is one the storage is away in (no
		// power), and e(a−1) no longer enters it.
		for _, a := range st.Arrivals {
			p.B[dyn[s][a.Index-1]] = a.Energy
		}
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
			// e(t+1) enters slot t+1's balance, unless the storage
			// arrives at its end (boundary t+2) with an energy of its own.
			e := []float64{float64(dyn[s][t]), 1}
			if _, back := st.arrivalAt(t + 2); t+1 < T && !back {
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
			from, to := st.span()
			lo, hi := math.Min(st.Min, from), math.Max(st.Max, to)
			sh := col(cost, 0, math.Max(gl.Energy-lo, 0)+1, float64(gr.row), 1)
			if gl.Hard {
				m.hard = append(m.hard, sh)
				m.hardWhat = append(m.hardWhat, hardTerm{fmt.Sprintf("storage %s's hard goal %q (%.3g kWh at boundary %d)", st.Name, gl.Text, gl.Energy, i), "kWh"})
			}
			col(0, 0, math.Max(hi-gl.Energy, 0)+1, float64(gr.row), -1)
		}
	}
	return m
}

// stepPrice is the price of the band of steps that import x kW enters.
func stepPrice(steps []Step, x float64) float64 {
	for _, s := range steps {
		if x < s.Upto {
			return s.Price
		}
	}
	return steps[len(steps)-1].Price
}

func goalPenalty(g Goal) float64 {
	if g.Penalty > 0 {
		return g.Penalty
	}
	return DefaultGoalPenalty
}
