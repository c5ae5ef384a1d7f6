package energy

import (
	"fmt"
	"math"
)

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
			if v, back := st.arrivalAt(t + 1); back {
				e = v
			}
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
		if g.ImportSteps != nil && len(g.ImportSteps[t]) > 0 {
			p.Coordination += StepCost(g.ImportSteps[t], p.Import[t]) * h.Dt[t]
		}
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
	p.Coordination += WindowCost(g.Windows, p.Import)
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
