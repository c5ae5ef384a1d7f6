// Package plancheck is an independent check of an energy home's plan
// (package devices/energy): it replays the plan's powers through the
// storage physics slot by slot from the home's description (an EV's
// energy set to what it comes home with at each arrival), checks every
// bound, power limit, permission, availability, meter balance and hard
// limit, measures every soft goal and limit it misses, and recomputes the
// bill. It shares no code with the planner beyond the description types,
// so that a planner bug cannot hide behind its own arithmetic; the
// compiler's and the planner's evaluators are not used.
//
// hearth passes every energy home's plan through Check before printing or
// publishing it, and refuses a plan with a violation.
package plancheck

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/hearth-dcop/hearth/devices/energy"
)

// Tolerance is the slack of every comparison, in kW or kWh (or currency
// for the bill): plans are computed in float64 over a few hundred slots.
const Tolerance = 1e-6

// Report is what Check found.
type Report struct {
	// Violations are hard faults: physics broken, a hard goal or limit
	// missed, a bill that does not add up. A plan with any is refused.
	Violations []string
	// Shortfalls are the soft goals and limits missed, with the amount.
	Shortfalls []Shortfall
	// The bill recomputed from the meter.
	ImportCost, ExportRevenue, StoredValue, DemandCost float64
	// Objective = ImportCost − ExportRevenue − StoredValue + DemandCost.
	Objective float64
	// Peak is the highest import (kW).
	Peak float64
}

// Shortfall is a soft goal or limit missed.
type Shortfall struct {
	What string
	// By is kWh missing (a goal) or kW beyond (a limit, per slot).
	By   float64
	Slot int
}

// ErrRejected is wrapped by Report.Err.
var ErrRejected = errors.New("plan rejected by the checker")

// OK reports whether the plan has no violation.
func (r *Report) OK() bool { return len(r.Violations) == 0 }

// Err returns nil for an accepted plan, else an error listing the
// violations (the first ten).
func (r *Report) Err() error {
	if r.OK() {
		return nil
	}
	v := r.Violations
	more := ""
	if len(v) > 10 {
		more = fmt.Sprintf("; and %d more", len(v)-10)
		v = v[:10]
	}
	return fmt.Errorf("%w: %s%s", ErrRejected, strings.Join(v, "; "), more)
}

func (r *Report) bad(format string, args ...any) {
	r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
}

// Check replays plan p of home h.
func Check(h *energy.Home, p *energy.Plan) *Report {
	r := &Report{}
	T := len(h.Dt)
	S := len(h.Storage)
	if len(p.Charge) != S || len(p.Discharge) != S || len(p.Energy) != S || len(p.PVUsed) != len(h.PV) || len(p.Import) != T || len(p.Export) != T {
		r.bad("plan shape: %d/%d/%d storage rows for %d storages, %d PV rows for %d, %d/%d meter slots for %d", len(p.Charge), len(p.Discharge), len(p.Energy), S, len(p.PVUsed), len(h.PV), len(p.Import), len(p.Export), T)
		return r
	}
	tol := Tolerance
	// Storage physics.
	for s := range h.Storage {
		st := &h.Storage[s]
		if len(p.Charge[s]) != T || len(p.Discharge[s]) != T || len(p.Energy[s]) != T+1 {
			r.bad("storage %s: rows of the wrong length", st.Name)
			continue
		}
		e := st.Initial
		if math.Abs(p.Energy[s][0]-e) > tol {
			r.bad("storage %s starts at %.6g kWh, the home says %.6g", st.Name, p.Energy[s][0], e)
		}
		for t := range T {
			c, d := p.Charge[s][t], p.Discharge[s][t]
			switch {
			case c < -tol || d < -tol:
				r.bad("storage %s slot %d: negative power (charge %.6g, discharge %.6g kW)", st.Name, t, c, d)
			case c > tol && d > tol:
				r.bad("storage %s slot %d: charges %.6g kW and discharges %.6g kW at once", st.Name, t, c, d)
			}
			if st.Available != nil && !st.Available[t] && (c > tol || d > tol) {
				r.bad("storage %s slot %d: acts while unavailable (not plugged in)", st.Name, t)
			}
			if c > st.MaxCharge+tol {
				r.bad("storage %s slot %d: charges %.6g kW, above its %.6g kW", st.Name, t, c, st.MaxCharge)
			}
			if c > tol && c < st.MinCharge-tol {
				r.bad("storage %s slot %d: charges %.6g kW, below its minimum %.6g kW", st.Name, t, c, st.MinCharge)
			}
			if d > st.MaxDischarge+tol {
				r.bad("storage %s slot %d: discharges %.6g kW, above its %.6g kW", st.Name, t, d, st.MaxDischarge)
			}
			next := e + st.EtaC*c*h.Dt[t] - d*h.Dt[t]/st.EtaD
			if next < st.Min-tol && d > tol {
				r.bad("storage %s slot %d: discharges to %.6g kWh, below its minimum %.6g", st.Name, t, next, st.Min)
			}
			if next > st.Max+tol && c > tol {
				r.bad("storage %s slot %d: charges to %.6g kWh, above its maximum %.6g", st.Name, t, next, st.Max)
			}
			if next < -tol {
				r.bad("storage %s slot %d: holds %.6g kWh, less than nothing", st.Name, t, next)
			}
			if back, ok := arrival(st, t+1); ok {
				// The car comes home holding back: what it drew
				// while away is not the home's, and an action in the
				// slot before would be lost.
				if c > tol || d > tol {
					r.bad("storage %s slot %d: acts in the slot before it arrives (boundary %d), where the arrival's charge replaces what it stored", st.Name, t, t+1)
				}
				if math.Abs(back-p.Energy[s][t+1]) > 1e-4*math.Max(1, back) {
					r.bad("storage %s boundary %d: the plan says %.6g kWh, but it arrives with %.6g", st.Name, t+1, p.Energy[s][t+1], back)
				}
				e = back
				continue
			}
			if math.Abs(next-p.Energy[s][t+1]) > 1e-4*math.Max(1, math.Abs(next)) {
				r.bad("storage %s boundary %d: the plan says %.6g kWh, its powers give %.6g", st.Name, t+1, p.Energy[s][t+1], next)
			}
			e = next
		}
		for _, g := range st.Goals {
			if g.Index < 0 || g.Index > T {
				r.bad("storage %s: goal %q outside the horizon", st.Name, g.Text)
				continue
			}
			// Replayed energy at the goal's boundary, from the powers.
			got := replay(h, p, s, g.Index)
			if got < g.Energy-1e-4 {
				if g.Hard {
					r.bad("storage %s: hard goal %q missed by %.4g kWh", st.Name, g.Text, g.Energy-got)
				} else {
					r.Shortfalls = append(r.Shortfalls, Shortfall{What: st.Name + ": " + g.Text, By: g.Energy - got, Slot: g.Index})
				}
			}
		}
		r.StoredValue += st.EndValue * replay(h, p, s, T)
	}
	// PV.
	for i := range h.PV {
		a := &h.PV[i]
		if len(p.PVUsed[i]) != T {
			r.bad("pv %s: row of the wrong length", a.Name)
			continue
		}
		for t, u := range p.PVUsed[i] {
			f := a.Forecast[t]
			if u < -tol || u > f+tol {
				r.bad("pv %s slot %d: uses %.6g kW of %.6g available", a.Name, t, u, f)
			}
			if !a.Curtailable && math.Abs(u-f) > tol {
				r.bad("pv %s slot %d: curtailed to %.6g kW of %.6g but it is not curtailable", a.Name, t, u, f)
			}
		}
	}
	// The meter.
	g := &h.Grid
	for t := range T {
		net := h.Load[t]
		for s := range h.Storage {
			net += p.Charge[s][t] - p.Discharge[s][t]
		}
		for i := range h.PV {
			net -= p.PVUsed[i][t]
		}
		im, ex := p.Import[t], p.Export[t]
		if im < -tol || ex < -tol || im > tol && ex > tol {
			r.bad("slot %d: import %.6g kW and export %.6g kW", t, im, ex)
		}
		if math.Abs(im-ex-net) > 1e-5*math.Max(1, math.Abs(net)) {
			r.bad("slot %d: the meter reads %.6g kW net, the home's flows add up to %.6g", t, im-ex, net)
		}
		for s := range h.Storage {
			st := &h.Storage[s]
			if st.NoGridCharge && p.Charge[s][t] > tol && im > energy.Deadband+tol {
				r.bad("storage %s slot %d: charges from the grid (%.6g kW imported), which it may not", st.Name, t, im)
			}
			if st.NoGridDischarge && p.Discharge[s][t] > tol && ex > energy.Deadband+tol {
				r.bad("storage %s slot %d: discharges into the grid (%.6g kW exported), which it may not", st.Name, t, ex)
			}
		}
		if g.Cap != nil && !math.IsNaN(g.Cap[t]) && im > g.Cap[t]+tol {
			r.bad("slot %d: imports %.6g kW, above the committed cap %.6g", t, im, g.Cap[t])
		}
		limit := func(what string, v, l float64) {
			if l <= 0 || v <= l+tol {
				return
			}
			if g.HardLimits {
				r.bad("slot %d: %s %.6g kW, above the hard limit %.6g", t, what, v, l)
			} else {
				r.Shortfalls = append(r.Shortfalls, Shortfall{What: what + " limit", By: v - l, Slot: t})
			}
		}
		limit("import", im, g.ImportLimit)
		limit("export", ex, g.ExportLimit)
		r.ImportCost += h.Tariff.Import[t] * im * h.Dt[t]
		r.ExportRevenue += h.Tariff.Export[t] * ex * h.Dt[t]
		r.Peak = math.Max(r.Peak, im)
	}
	if g.DemandCharge > 0 {
		r.DemandCost = g.DemandCharge * math.Max(0, r.Peak-g.DemandThreshold)
	}
	r.Objective = r.ImportCost - r.ExportRevenue - r.StoredValue + r.DemandCost
	if math.Abs(r.Objective-p.Objective) > 1e-6*math.Max(1, math.Abs(r.Objective)) {
		r.bad("the plan's objective %.6f does not match the meter's %.6f (import %.6f, export %.6f, stored %.6f, demand %.6f)", p.Objective, r.Objective, r.ImportCost, r.ExportRevenue, r.StoredValue, r.DemandCost)
	}
	return r
}

// replay integrates storage s's powers up to boundary i, from its last
// arrival before i (or its start).
func replay(h *energy.Home, p *energy.Plan, s, i int) float64 {
	st := &h.Storage[s]
	e := st.Initial
	for t := range i {
		e += st.EtaC*p.Charge[s][t]*h.Dt[t] - p.Discharge[s][t]*h.Dt[t]/st.EtaD
		if back, ok := arrival(st, t+1); ok {
			e = back
		}
	}
	return e
}

// arrival returns what storage st comes home with at boundary i, if it
// arrives there.
func arrival(st *energy.Storage, i int) (float64, bool) {
	for _, a := range st.Arrivals {
		if a.Index == i {
			return a.Energy, true
		}
	}
	return 0, false
}
