package solvefile

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/local/gpu"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/sampler"
	sgpu "github.com/hearth-dcop/hearth/sampler/gpu"
)

// Central solves p as a single subproblem with no boundary: the one
// row of its MVA table is the optimum.
func Central(ctx context.Context, p *mva.Problem, lo *Local, seed uint64, dev *gpu.Device) (mva.Result, error) {
	lp := mva.NewLocalProblem(p, mva.Whole(p))
	factory, sampled, notes := lo.Factory(seed), lo.Sampling(), []string(nil)
	if lo.Name == LocalAuto { // one row: exact, and the notes say which
		factory, sampled = func(lp *mva.LocalProblem) (mva.LocalSolver, error) {
			s, c, err := local.Auto(lp, local.AutoOptions{Memory: lo.MemoryBytes()})
			notes = append(notes, c.Reason)
			return s, err
		}, false
	}
	s, err := GPUSolver(dev, lo.Name, factory)(lp)
	if err != nil {
		return mva.Result{}, err
	}
	t, err := mva.NewTable(lp)
	if err != nil {
		return mva.Result{}, err
	}
	start := time.Now()
	if err := t.Fill(ctx, s); err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			if len(notes) > 0 { // which solver ran out of time
				err = fmt.Errorf("%s: %w", notes[0], err)
			}
			return mva.Result{}, fmt.Errorf("stopped before the optimum was proved: %w", err)
		}
		return mva.Result{}, err
	}
	wall := time.Since(start)
	if d, ok := s.(interface{ Describe() string }); ok && lo.Name == LocalAuto {
		notes = append(notes, d.Describe())
	}
	cost := t.Costs[0] + p.Offset
	var assign []int
	if !mva.IsHard(cost) {
		assign = make([]int, len(p.Variables))
		for k, v := range t.Interior(0) {
			assign[lp.Vars[k]] = int(v)
		}
		// The solver's claim is checked against the model itself, so a
		// solver bug can never print a wrong objective.
		check, err := p.Eval(assign)
		if err != nil {
			return mva.Result{}, fmt.Errorf("internal error: the solver returned a bad assignment: %w", err)
		}
		if math.Abs(check-cost) > 1e-9*math.Max(1, math.Abs(cost)) {
			return mva.Result{}, fmt.Errorf("internal error: the solver reported cost %v but the assignment costs %v", cost, check)
		}
	}
	r := mva.NewResult(p, assign, cost)
	r.Optimal = r.Feasible && !sampled
	r.Conclude(!sampled)
	r.Algorithm = mva.Algorithm{Global: "none", Local: lo.Name, Table: "eager", Reform: "mva",
		GPU: dev != nil && (lo.Name == "be" || lo.Sampling())}
	if sampled {
		r.Algorithm.Sampling = lo.Report(seed)
	}
	r.Notes = notes
	ms := float64(wall.Microseconds()) / 1000
	r.Metrics = mva.Metrics{SimTimeMs: ms, WallMs: ms, NCCC: s.Checks()}
	return r, nil
}

// GPUSolver wraps a solver factory so that, with a device, bucket
// elimination runs its large buckets on d (the threshold is
// gpu.DefaultMinEntries output entries × eliminated values, measured on an
// H200: below it a kernel launch and its copies cost more than the CPU) and
// the samplers run their chains there — the same chains as on the CPU, so
// the options are taken from the CPU sampler next builds.
func GPUSolver(d *gpu.Device, name string, next mva.SolverFactory) mva.SolverFactory {
	if d == nil {
		return next
	}
	switch name {
	case "be":
		return func(lp *mva.LocalProblem) (mva.LocalSolver, error) {
			return gpu.NewBE(lp, d, gpu.BEOptions{})
		}
	case "gibbs", "mh", LocalAuto:
		return func(lp *mva.LocalProblem) (mva.LocalSolver, error) {
			cpu, err := next(lp)
			if err != nil {
				return nil, err
			}
			if _, exact := cpu.(*local.BE); exact {
				// auto, where bucket elimination fits.
				return gpu.NewBE(lp, d, gpu.BEOptions{})
			}
			o, ok := cpu.(interface{ Options() sampler.Options })
			if !ok {
				return cpu, nil
			}
			sname := name
			if name == LocalAuto {
				sname = "gibbs"
			}
			return sgpu.New(sname, lp, d, o.Options())
		}
	}
	return next
}
