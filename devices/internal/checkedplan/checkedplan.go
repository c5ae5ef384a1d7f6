// Package checkedplan turns a compiled home's solved values into the plan
// hearth would report, and passes that plan through the independent
// checker. It exists for the tests of devices/compile and devices/street,
// which both check compiled plans end to end: one copy of the path from
// solver values to a checked report keeps those tests comparing the same
// thing.
package checkedplan

import (
	"fmt"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/compile"
	"github.com/hearth-dcop/hearth/devices/homecheck"
	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/devices/refine"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/mva"
)

// Report reports the plan of lp's interior values in (a whole problem's,
// as local.SolveRow leaves them), refined as hearth refines every plan it
// reports (devices/refine). It returns the report, the refined plan's
// cost, and the checker's verdict (devices/homecheck) as check; err is
// for a plan that could not be reported at all.
func Report(c *compile.Compiled, n *devices.Neighbourhood, lp *mva.LocalProblem, in []int) (res *report.Homes, cost float64, check, err error) {
	if lp.NB != 0 || len(in) != len(lp.Vars) {
		return nil, 0, nil, fmt.Errorf("checkedplan: %d values for a problem of %d variables, %d of them on its boundary: want one value for each of a whole problem's", len(in), len(lp.Vars), lp.NB)
	}
	assign := make([]int, len(c.Problem.Variables))
	for k, v := range lp.Vars {
		assign[v] = in[k]
	}
	sched, ev, err := c.Report(assign)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("checkedplan: report: %w", err)
	}
	if sched, ev, err = refine.Schedule(n, sched, ev); err != nil {
		return nil, 0, nil, fmt.Errorf("checkedplan: refine: %w", err)
	}
	res, err = report.Build(report.Input{Model: n, Result: mva.Result{Feasible: true}, Schedule: sched, Eval: ev})
	if err != nil {
		return nil, 0, nil, fmt.Errorf("checkedplan: build: %w", err)
	}
	return res, ev.Cost, homecheck.Check(n, homesolve.Street(res)).Err(), nil
}
