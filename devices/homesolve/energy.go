package homesolve

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/baseline"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/devices/street"
	"github.com/hearth-dcop/hearth/mva"
)

// answered is what Answer left: the compiled homes' assignment it ended
// with and the energy homes' part of the result for it.
type answered struct {
	assign []int
	part   *report.EnergyStreet
}

// maxAnswers bounds Answer's alternations between the compiled homes and
// the energy homes; each lowers the street's objective, and the tests'
// streets settle in two or three.
const maxAnswers = 6

// flowLoad is the compiled homes' load that flows per slot (kW): their
// positive draws, as the peak term counts them.
func flowLoad(n *devices.Neighbourhood, ev *devices.Evaluation) []float64 {
	base := make([]float64, n.Horizon.Slots)
	for _, he := range ev.Homes {
		for t, v := range he.Load {
			base[t] += math.Max(v, 0) * n.Units.PowerScale
		}
	}
	return base
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
		return a.part, nil
	}
	return street.Plan(context.Background(), r.Model(), r.energy, flowLoad(r.Model(), ev), street.Options{})
}

// Answer coordinates a street's compiled homes and energy homes after the
// protocol (res, assignment assign): the energy homes are planned alone
// and answer the compiled homes' load that flows (devices/street); then,
// in turn, the compiled homes answer the energy homes — best responses
// on the load that flows (baseline.Improve, plain descent) with the
// energy homes' import as every compiled home's outside load, which
// gives each compiled home the street's whole load in its peak term —
// and the energy homes answer again, until neither side moves (at most
// maxAnswers times). Every step lowers the street's objective (the
// bills plus the peak term on the street's squared load). The compiled
// homes answer only where every pair of them shares the peak (no
// neighbours key); otherwise the energy homes answer the protocol's plan
// alone. It returns the compiled homes' assignment and result (res
// itself where they did not move); without energy homes it does
// nothing.
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
	pk := street.PeakOf(n)
	aloneBase := flowLoad(n, ev)
	base := aloneBase
	cr, err := street.Coordinate(ctx, r.energy, base, pk, o)
	if err != nil {
		return nil, res, err
	}
	rounds, moves, compiledMoves, startFlow := cr.Rounds, cr.Moves, 0, math.NaN()
	var endFlow float64
	if n.Links == nil && n.Weights.Peak > 0 {
		for range maxAnswers {
			outside := streetImport(r.energy, n.Horizon.Slots, n.Units.PowerScale)
			m2 := *n
			m2.Homes = slices.Clone(n.Homes)
			for i := range m2.Homes {
				m2.Homes[i].OutsideLoad = outside
			}
			imp, err := baseline.Improve(ctx, &m2, sched, baseline.ImproveOptions{Kicks: -1, Seed: r.seed, Options: baseline.Options{ExactEntries: improveEntries}})
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
			base = flowLoad(n, ev)
			cr, err := street.Coordinate(ctx, r.energy, base, pk, o)
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
	r.answered = &answered{assign: slices.Clone(assign), part: street.Summary(r.energy, base, aloneBase, pk, rounds, moves)}
	return assign, out, nil
}

// streetImport is the energy homes' import per slot, in model power
// units.
func streetImport(ms []*street.Member, slots int, scale float64) []float64 {
	out := make([]float64, slots)
	for _, m := range ms {
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
