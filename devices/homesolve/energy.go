package homesolve

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/baseline"
	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/plancheck"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/devices/street"
	"github.com/hearth-dcop/hearth/mva"
)

// answered is what Answer left: the compiled homes' assignment it ended
// with and the energy homes' part of the result for it.
type answered struct {
	assign []int
	part   *report.EnergyStreet
	// st is the street the energy homes' plans answered (the compiled
	// homes' loads of assign), alone the one they were planned alone
	// against, rounds and moves Answer's counts: what refineMixed
	// rebuilds the energy part from for the compiled homes' refined
	// plan, whose result refined caches (nil until computed).
	st, alone     *street.Street
	rounds, moves int
	refined       *mixedRefined
}

// maxAnswers bounds Answer's alternations between the compiled homes and
// the energy homes; each lowers the street's objective, and the tests'
// streets settle in two or three.
const maxAnswers = 6

// flowLoads is each compiled home's load that flows per slot (kW): its
// positive draw, as the peak term counts it.
func flowLoads(n *devices.Neighbourhood, ev *devices.Evaluation) [][]float64 {
	out := make([][]float64, len(ev.Homes))
	for i, he := range ev.Homes {
		out[i] = make([]float64, n.Horizon.Slots)
		for t, v := range he.Load {
			out[i][t] = math.Max(v, 0) * n.Units.PowerScale
		}
	}
	return out
}

// committedKW is the compiled homes' committed caps per window (kW).
func committedKW(n *devices.Neighbourhood, ev *devices.Evaluation) []float64 {
	out := slices.Clone(ev.Committed)
	for w := range out {
		out[w] *= n.Units.PowerScale
	}
	return out
}

// streetOf is the street the energy homes answer with the compiled
// homes' evaluated plan ev.
func (r *Run) streetOf(ev *devices.Evaluation) *street.Street {
	return street.StreetOf(r.cfg.Neighbourhood, r.energy, flowLoads(r.Model(), ev), committedKW(r.Model(), ev))
}

// energyHomes returns the energy homes' part of the result for the
// compiled homes' evaluated plan ev (assignment assign): Answer's where
// it ran on that assignment, else planned now against ev's load; nil
// without energy homes.
func (r *Run) energyHomes(assign []int, ev *devices.Evaluation) (*report.EnergyStreet, error) {
	if len(r.energy) == 0 {
		return nil, nil
	}
	if a := r.answered; a != nil && slices.Equal(a.assign, assign) {
		if a.refined != nil && ev == a.refined.ev {
			return a.refined.part, nil
		}
		return a.part, nil
	}
	return street.PlanStreet(context.Background(), r.energy, r.streetOf(ev), street.Options{})
}

// Answer coordinates a street's compiled homes and energy homes after the
// protocol (res, assignment assign): the energy homes are planned alone
// and answer the compiled homes' load that flows (devices/street); then,
// in turn, the compiled homes answer the energy homes — best responses
// on the load that flows (baseline.Improve, plain descent) with the
// energy homes' import as every compiled home's outside load (its
// energy neighbours' import where the street has a neighbours key),
// which gives each compiled home the load it shares in its peak term,
// and in each window the feeder limit less the energy homes' committed
// caps there (feederRoom) — and the energy homes answer again, until neither side
// moves (at most maxAnswers times). Every step lowers the street's
// objective (the bills plus the peak term on the street's squared load
// and the feeder's excess). It returns the compiled homes' assignment
// and result (res itself where they did not move); without energy homes
// it does nothing.
func (r *Run) Answer(ctx context.Context, assign []int, res mva.Result) ([]int, mva.Result, error) {
	if len(r.energy) == 0 || !res.Feasible {
		return assign, res, nil
	}
	if assign == nil {
		var err error
		if assign, err = Assignment(r.Problem(), res.Assignment); err != nil {
			return nil, res, err
		}
	}
	n := r.Model()
	sched, ev, err := r.compiled.Report(assign)
	if err != nil {
		return nil, res, err
	}
	o := street.Options{}
	if err := street.PlanAlone(ctx, r.energy, o); err != nil {
		return nil, res, err
	}
	full := r.cfg.Neighbourhood
	st := r.streetOf(ev)
	alone := *st
	cr, err := street.CoordinateStreet(ctx, r.energy, st, o)
	if err != nil {
		return nil, res, err
	}
	rounds, moves, compiledMoves, startFlow := cr.Rounds, cr.Moves, 0, math.NaN()
	var endFlow float64
	blockedIn := -1
	if n.Weights.Peak > 0 {
		for range maxAnswers {
			m2 := *n
			m2.Homes = slices.Clone(n.Homes)
			for i := range m2.Homes {
				m2.Homes[i].OutsideLoad = outsideLoad(st, r.energy, i, n.Horizon.Slots, n.Units.PowerScale)
			}
			var limits []float64
			if full.FeederLimit > 0 {
				// Per window, the feeder less the energy homes'
				// committed caps there: a compiled move within each
				// keeps the street's limit in that window. The
				// protocol's own limit (Split's) still bounds them,
				// as the problem the result is evaluated on does.
				var w int
				if limits, w = feederRoom(n, full.FeederLimit, r.energy); w >= 0 {
					blockedIn = w
					break
				}
				if w = overRoom(ev.Committed, limits); w >= 0 {
					// A soft limit the street exceeds: no compiled
					// move can keep it there.
					blockedIn = w
					break
				}
			}
			imp, err := baseline.Improve(ctx, &m2, sched, baseline.ImproveOptions{Kicks: -1, Seed: r.seed, FeederLimits: limits, Options: baseline.Options{ExactEntries: improveEntries}})
			if err != nil {
				return nil, res, fmt.Errorf("compiled homes answering the energy homes: %w", err)
			}
			if math.IsNaN(startFlow) {
				startFlow = imp.Start
			}
			endFlow = imp.Flow
			if imp.Moves == 0 || imp.Flow >= imp.Start-1e-9*math.Max(1, math.Abs(imp.Start)) {
				break
			}
			compiledMoves += imp.Moves
			sched = imp.Schedule
			if ev, err = n.Evaluate(sched); err != nil {
				return nil, res, err
			}
			st.Compiled, st.Feeder.Committed = flowLoads(n, ev), committedKW(n, ev)
			cr, err := street.CoordinateStreet(ctx, r.energy, st, o)
			if err != nil {
				return nil, res, err
			}
			rounds, moves = rounds+cr.Rounds, moves+cr.Moves
			if cr.Moves == 0 {
				break
			}
		}
	}
	out := res
	if blockedIn >= 0 {
		out.Notes = append(slices.Clone(res.Notes), fmt.Sprintf("the compiled homes did not answer the energy homes: in window %d their committed caps and the energy homes' exceed the feeder limit", blockedIn))
	}
	if compiledMoves > 0 {
		if assign, err = r.compiled.Encode(sched); err != nil {
			return nil, res, err
		}
		cost, err := r.Problem().Eval(assign)
		if err != nil {
			return nil, res, err
		}
		out.Objective = &cost
		out.Assignment = r.Problem().Labels(assign)
		out.Optimal = false
		out.Status = mva.StatusFeasible
		out.Notes = append(slices.Clone(res.Notes), fmt.Sprintf(
			"the compiled homes answered the energy homes on the load that flows after %s, %d home moves: their objective with the energy homes' import as outside load %.2f → %.2f", res.Algorithm.Global, compiledMoves, startFlow, endFlow))
	}
	r.answered = &answered{assign: slices.Clone(assign), part: street.StreetSummary(r.energy, st, &alone, rounds, moves),
		st: st, alone: &alone, rounds: rounds, moves: moves}
	return assign, out, nil
}

// outsideLoad is compiled home i's outside load in street st: the
// energy homes' import per slot where every pair is linked, else its
// energy neighbours', in model power units.
func outsideLoad(st *street.Street, ms []*street.Member, i, slots int, scale float64) []float64 {
	out := make([]float64, slots)
	for k, m := range ms {
		if st.Links != nil && !slices.Contains(st.Links, [2]int{i, len(st.Compiled) + k}) && !slices.Contains(st.Links, [2]int{len(st.Compiled) + k, i}) {
			continue
		}
		for t, v := range m.Plan.Import {
			out[t] += v
		}
	}
	if scale > 0 && scale != 1 {
		for t := range out {
			out[t] /= scale
		}
	}
	return out
}

// feederRoom returns the feeder limit the compiled homes of n keep in
// each window when they answer the energy homes ms: full (the street's
// limit, model units) less the energy homes' committed caps in that
// window, and at most n's own limit (the protocol's, which Split lowered
// by what the energy homes import whatever they plan). A window with no
// room left is returned as the second value, −1 where every window has
// some.
func feederRoom(n *devices.Neighbourhood, full float64, ms []*street.Member) ([]float64, int) {
	scale := n.Units.PowerScale
	if scale <= 0 {
		scale = 1
	}
	out := make([]float64, len(n.Windows))
	for w := range out {
		out[w] = full
	}
	for _, m := range ms {
		for w, c := range street.Commitments(m.Plan, n.Windows) {
			out[w] -= c / scale
		}
	}
	for w, v := range out {
		if n.FeederLimit > 0 {
			out[w] = math.Min(v, n.FeederLimit)
		}
		if out[w] <= 0 {
			return nil, w
		}
	}
	return out, -1
}

// overRoom returns the first window whose committed caps exceed its
// limit, −1 for none.
func overRoom(committed, limits []float64) int {
	for w, c := range committed {
		if !devices.Fits(c, limits[w]) {
			return w
		}
	}
	return -1
}

// checkFeeder checks the street's feeder limit over what the result
// prints, apart from devices/street: the compiled homes' committed caps
// as devices/homecheck read them from their levels (compiled, kW per
// window) and the energy homes' highest import per window from their
// printed meters (plancheck.CheckFeeder). A hard limit broken is an
// error wrapping plancheck.ErrRejected, as is committed caps that differ
// from the ones the result prints.
func (r *Run) checkFeeder(e *report.EnergyStreet, compiled []float64) error {
	if e == nil || r.cfg == nil || r.cfg.Neighbourhood.FeederLimit <= 0 {
		return nil
	}
	full := r.cfg.Neighbourhood
	plans := make([]*energy.Plan, len(e.Homes))
	for i, eh := range e.Homes {
		plans[i] = &energy.Plan{Import: eh.ImportKW}
	}
	scale := full.Units.PowerScale
	fr := plancheck.CheckFeeder(full.FeederLimit*scale, !full.FeederSoft, full.Windows, compiled, plans)
	if len(fr.Violations) > 0 {
		return fmt.Errorf("%w: %s", plancheck.ErrRejected, strings.Join(fr.Violations, "; "))
	}
	for w, c := range fr.CommittedKW {
		if w >= len(e.CommittedKW) || math.Abs(c-e.CommittedKW[w]) > 1e-6*math.Max(1, c) {
			return fmt.Errorf("%w: window %d: the committed caps add up to %g kW, the result says %v", plancheck.ErrRejected, w, c, e.CommittedKW)
		}
	}
	return nil
}
