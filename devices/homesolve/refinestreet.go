package homesolve

import (
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/baseline"
	"github.com/hearth-dcop/hearth/devices/refine"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/devices/street"
)

// This file refines plans other than the protocol's the way the
// coordinated plan is refined (devices/refine), so that what the report
// compares — hearth's plan and the SH-MGM-style baseline's on the load
// that flows — is compared at the same precision, and so that the
// improvement phase keeps the plan that is best once refined.

// refineCompiled refines schedule s of the compiled homes of n (ev its
// evaluation, whose committed levels the refinement keeps) as the report
// refines the coordinated plan: a home alone on its own objective within
// its caps (refine.Schedule); a street, which is also judged on the load
// that flows, by refine.ScheduleOnLoad, whose draws in no coordinated
// slot rise above the solved plan's, so that the street's peak term
// cannot rise while the bills fall (HomePlan refines a home of `hearth
// run` alike). It returns s and ev themselves where nothing changed.
func refineCompiled(n *devices.Neighbourhood, s *devices.Schedule, ev *devices.Evaluation) (*devices.Schedule, *devices.Evaluation, error) {
	if len(n.Homes) < 2 {
		return refine.Schedule(n, s, ev)
	}
	return refine.ScheduleOnLoad(n, s, ev)
}

// refinedSHMGM is the SH-MGM-style baseline's outcome with its plan
// refined as the coordinated plan is (refineCompiled, on the committed
// levels that fit it tightest, as the baseline is scored), then scored
// again on the tightest levels its refined draw fits: with automatic
// levels the coordinated plan is refined onto the wallboxes' exact
// currents before it is scored, and the baseline it is compared with
// must be too. A refinement that would raise its objective on the load
// that flows (it cannot: ScheduleOnLoad only lowers draws and bills) is
// dropped. r.shmgm itself is left as it is: its schedule is also a start
// of the improvement phase, which takes compiled actions only. Without
// devices to refine, or in a street with energy homes (whose answer is
// refined by refineMixed), it is r.shmgm.
func (r *Run) refinedSHMGM() *baseline.Outcome {
	o := r.shmgm
	if o == nil || o.Schedule == nil || o.Eval == nil || !o.Eval.Feasible || len(r.energy) > 0 || !refine.HasExact(r.Model()) {
		return o
	}
	n := r.Model()
	s, _, err := refineCompiled(n, o.Schedule, o.Eval)
	if err != nil || s == o.Schedule {
		return o
	}
	s = &devices.Schedule{Homes: slices.Clone(s.Homes)}
	for i := range s.Homes {
		s.Homes[i].Levels = nil
	}
	ev, err := n.Evaluate(s)
	if err != nil || !ev.Feasible {
		return o
	}
	if before := baseline.FlowObjective(n, o.Eval); baseline.FlowObjective(n, ev) > before+1e-9*math.Max(1, math.Abs(before)) {
		return o
	}
	out := *o
	out.Schedule, out.Eval = s, ev
	return &out
}

// refinedFlow is the objective on the load that flows of schedule s (of
// compiled actions) once encoded and refined as the report refines it
// (schedule).
func (r *Run) refinedFlow(s *devices.Schedule) (float64, error) {
	assign, err := r.compiled.Encode(s)
	if err != nil {
		return 0, err
	}
	_, ev, _, err := r.schedule(assign)
	if err != nil {
		return 0, err
	}
	if !ev.Feasible {
		return math.Inf(1), nil
	}
	return baseline.FlowObjective(r.Model(), ev), nil
}

// refinedChoice returns the plan the improvement phase keeps where the
// report refines plans (a street with devices of exact actions and no
// energy homes): of the runs' plans (rs, from starts) and the
// SH-MGM-style baseline's own plan where it was a start, the one whose
// objective on the load that flows is lowest once refined — the run
// ImproveFrom chose unless another is strictly lower. Each run's plan is
// at most its start's unrefined, but a start's refinement may gain more
// than the run's descent did; with the baseline's own plan among the
// candidates, the refined plan reported is never above the refined
// baseline's (refinedSHMGM). It returns nil where the choice is
// ImproveFrom's, else the plan and a note saying why.
func (r *Run) refinedChoice(rs *baseline.Restarts, starts []baseline.Start) (*devices.Schedule, string, error) {
	if len(r.energy) > 0 || !refine.HasExact(r.Model()) {
		return nil, "", nil
	}
	type cand struct {
		name string
		s    *devices.Schedule
	}
	cands := []cand{{starts[rs.Best].Name, rs.Improvement().Schedule}}
	for k, run := range rs.Runs {
		if run != nil && k != rs.Best {
			cands = append(cands, cand{starts[k].Name, run.Schedule})
		}
	}
	if b := r.shmgm; b != nil {
		for _, st := range starts {
			if st.Schedule == b.Schedule {
				cands = append(cands, cand{st.Name + " itself, not improved", st.Schedule})
			}
		}
	}
	best, bestFlow := 0, math.Inf(1)
	for i, c := range cands {
		f, err := r.refinedFlow(c.s)
		if err != nil {
			return nil, "", fmt.Errorf("refining the plan from %s: %w", c.name, err)
		}
		if i == 0 {
			bestFlow = f
			continue
		}
		if f < bestFlow-1e-9*math.Max(1, math.Abs(bestFlow)) {
			best, bestFlow = i, f
		}
	}
	if best == 0 {
		return nil, "", nil
	}
	return cands[best].s, fmt.Sprintf("once refined onto the exact currents (devices/refine), the plan from %s is the lowest on the load that flows (objective %.4g): it is the plan kept", cands[best].name, bestFlow), nil
}

// mixedRefined is refineMixed's result for Answer's assignment: the
// compiled homes' refined schedule, its evaluation and the energy homes'
// part of the result for it.
type mixedRefined struct {
	s    *devices.Schedule
	ev   *devices.Evaluation
	part *report.EnergyStreet
}

// refineMixed refines the compiled homes of a street with energy homes
// (schedule s, evaluation ev, of assign) with the energy homes' plans
// fixed as Answer left them for assign: each compiled home in turn by
// refine.HomeOnLoad (its committed levels kept, its draw in no
// coordinated slot above the solved plan's), kept only where the
// street's objective — the compiled homes' costs, the energy homes'
// costs, the peak term on the street's load that flows and the feeder's
// excess (street.Street.Objective) — is strictly lower with it. The
// energy homes' plans stay the ones they answered: a compiled home that
// draws less in a slot only lowers the street's load there, so their
// plans stay feasible and their feeder room the same (the committed caps
// do not move). It returns s and ev themselves where Answer has not run
// on assign (the energy homes then plan against the unrefined load, as
// energyHomes does), there is nothing to refine, or no refinement lowers
// the street's objective.
func (r *Run) refineMixed(assign []int, s *devices.Schedule, ev *devices.Evaluation) (*devices.Schedule, *devices.Evaluation, error) {
	a := r.answered
	n := r.Model()
	if a == nil || a.st == nil || !slices.Equal(a.assign, assign) || !ev.Feasible || !refine.HasExact(n) {
		return s, ev, nil
	}
	if m := a.refined; m != nil {
		if m.part == a.part {
			return s, ev, nil // nothing refined
		}
		return m.s, m.ev, nil
	}
	streetOf := func(ev *devices.Evaluation) *street.Street {
		st := *a.st
		st.Compiled, st.Feeder.Committed = flowLoads(n, ev), committedKW(n, ev)
		return &st
	}
	// The compiled homes' part of the street's objective is their
	// costs but the peak term on their committed levels, which the
	// street's own peak term on the load that flows replaces.
	objective := func(ev *devices.Evaluation) float64 {
		return ev.Cost - ev.PeakCost + streetOf(ev).Objective(r.energy)
	}
	cur := &devices.Schedule{Homes: slices.Clone(s.Homes)}
	for hi := range cur.Homes {
		cur.Homes[hi].Levels = slices.Clone(ev.Homes[hi].Levels)
	}
	curEv, best := ev, objective(ev)
	changed := false
	for hi := range n.Homes {
		hs, ok, err := refine.HomeOnLoad(n, hi, cur.Homes[hi])
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		cand := &devices.Schedule{Homes: slices.Clone(cur.Homes)}
		cand.Homes[hi] = hs
		cev, err := n.Evaluate(cand)
		if err != nil {
			return nil, nil, fmt.Errorf("refine: %w", err)
		}
		if !cev.Feasible {
			continue
		}
		if o := objective(cev); o < best-1e-9*math.Max(1, math.Abs(best)) {
			cur, curEv, best, changed = cand, cev, o, true
		}
	}
	if !changed {
		a.refined = &mixedRefined{s: s, ev: ev, part: a.part}
		return s, ev, nil
	}
	a.refined = &mixedRefined{s: cur, ev: curEv, part: street.StreetSummary(r.energy, streetOf(curEv), a.alone, a.rounds, a.moves)}
	return cur, curEv, nil
}
