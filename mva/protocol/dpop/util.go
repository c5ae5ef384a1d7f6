package dpop

import (
	"context"
	"fmt"
	"slices"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// This file is the UTIL phase: join the MVA table, the functions this
// agent is the lowest holder of and the children's UTILs, and project out
// the boundary variables.

func (a *Agent) onUtil(ctx context.Context, m mva.Message) ([]mva.Message, error) {
	if !slices.Contains(a.tree.Children, m.From) {
		return nil, fmt.Errorf("%w: UTIL from an agent that is not a child", ErrProtocol)
	}
	if _, ok := a.childSep[m.From]; ok {
		return nil, fmt.Errorf("%w: second UTIL", ErrProtocol)
	}
	u, err := decodeUtil(m.Body, len(a.prob.Variables))
	if err != nil {
		return nil, err
	}
	dims := make([]int, len(u.vars))
	for k, v := range u.vars {
		if owner := a.prob.Variables[v].Agent; owner != a.id && !a.ancestor[owner] {
			return nil, fmt.Errorf("%w: UTIL over variable %s of agent %d, neither this agent nor an ancestor", ErrProtocol, a.prob.Variables[v].Name, owner)
		}
		dims[k] = a.prob.DomainSize(v)
	}
	size, err := a.utilSize(dims)
	if err != nil {
		return nil, err
	}
	if len(u.costs) != size {
		return nil, fmt.Errorf("%w: UTIL has %d entries, its %d variables need %d", ErrProtocol, len(u.costs), len(u.vars), size)
	}
	a.childUtil[m.From] = &local.Factor{Vars: u.vars, Dims: dims, Costs: u.costs}
	a.childSep[m.From] = u.vars
	return a.maybeUtil(ctx)
}

// utilSize returns the number of entries of a UTIL table over dims, or an
// error naming the agent when it exceeds max_util_entries.
func (a *Agent) utilSize(dims []int) (int, error) {
	n := 1
	for _, d := range dims {
		if d < 1 {
			return 0, fmt.Errorf("a separator variable has an empty domain")
		}
		if n > a.maxUtil/d {
			return 0, fmt.Errorf("a UTIL table over a separator of %d variables (domains %v) exceeds max_util_entries = %d: %w",
				len(dims), dims, a.maxUtil, local.ErrTooLarge)
		}
		n *= d
	}
	return n, nil
}

// maybeUtil computes and sends the UTIL table once the subtree is complete
// and every child's UTIL is in; at the root it starts the VALUE phase.
func (a *Agent) maybeUtil(ctx context.Context) ([]mva.Message, error) {
	if !a.dfsDone || a.utilDone || len(a.childSep) < len(a.tree.Children) {
		return nil, nil
	}
	a.utilDone = true
	inputs, err := a.joinInputs(ctx)
	if err != nil {
		return nil, err
	}
	elim := a.sub.Boundary
	own := make(map[int]bool, len(elim))
	for _, v := range elim {
		own[v] = true
	}
	seen := map[int]bool{}
	var sep []int
	for _, f := range inputs {
		for _, v := range f.Vars {
			if !own[v] && !seen[v] {
				seen[v] = true
				sep = append(sep, v)
			}
		}
	}
	slices.Sort(sep)
	dims := make([]int, len(sep))
	for k, v := range sep {
		dims[k] = a.prob.DomainSize(v)
	}
	if _, err := a.utilSize(dims); err != nil {
		return nil, err
	}
	plan, err := local.NewJoinProjectLimit(inputs, elim, sep, a.maxUtil)
	if err != nil {
		return nil, fmt.Errorf("UTIL join: %w", err)
	}
	costs := make([]float64, plan.Rows())
	a.argmin = make([]int32, plan.Rows())
	run := func(ctx context.Context, p *local.JoinProject, dst []float64, argmin []int32) error {
		return p.Run(ctx, dst, argmin, 1)
	}
	if a.kernel != nil {
		run = a.kernel
	}
	if err := run(ctx, plan, costs, a.argmin); err != nil {
		return nil, fmt.Errorf("UTIL join: %w", err)
	}
	a.checks += int64(plan.Rows()) * int64(plan.ElimSize())
	a.sep, a.sepDims = sep, dims
	a.childUtil = nil // the tables are consumed; childSep stays for VALUE
	if a.tree.Parent < 0 {
		// The root has no ancestors, so its separator is empty and
		// costs[0] is the optimum.
		if len(sep) > 0 {
			return nil, fmt.Errorf("the root's UTIL has %d separator variables", len(sep))
		}
		return a.decide(nil, costs[0]+a.prob.Offset)
	}
	return []mva.Message{a.msg(a.tree.Parent, KindUtil, encodeUtil(util{vars: sep, costs: costs}))}, nil
}

// joinInputs returns the factors of the UTIL join: the MVA table over the
// boundary variables, the functions between agents whose other agents are
// all ancestors (this agent is the lowest of their scope), and the
// children's UTIL tables.
func (a *Agent) joinInputs(ctx context.Context) ([]*local.Factor, error) {
	lp := a.node.Local.LP
	rows, err := lp.Rows()
	if err != nil {
		return nil, err
	}
	table := &local.Factor{Vars: a.sub.Boundary, Dims: lp.Domains[:lp.NB], Costs: make([]float64, rows)}
	for r := range rows {
		c, _, err := a.node.Local.RowIndex(ctx, r)
		if err != nil {
			return nil, err
		}
		table.Costs[r] = c
	}
	inputs := []*local.Factor{table}
	for _, fi := range a.node.External {
		f := &a.prob.Functions[fi]
		lowest := true
		for _, v := range f.Scope {
			if owner := a.prob.Variables[v].Agent; owner != a.id && !a.ancestor[owner] {
				lowest = false
			}
		}
		if !lowest {
			continue
		}
		dims := make([]int, len(f.Scope))
		for k, v := range f.Scope {
			dims[k] = a.prob.DomainSize(v)
		}
		inputs = append(inputs, &local.Factor{Vars: f.Scope, Dims: dims, Costs: f.Costs})
	}
	for _, c := range a.tree.Children {
		inputs = append(inputs, a.childUtil[c])
	}
	return inputs, nil
}

// This is the VALUE phase.

func (a *Agent) onValue(m mva.Message) ([]mva.Message, error) {
	if m.From != a.tree.Parent || a.tree.Parent < 0 {
		return nil, fmt.Errorf("%w: VALUE from an agent that is not the parent", ErrProtocol)
	}
	if a.done {
		return nil, fmt.Errorf("%w: second VALUE", ErrProtocol)
	}
	if !a.utilDone {
		return nil, fmt.Errorf("%w: VALUE before this agent's UTIL", ErrProtocol)
	}
	v, err := decodeValue(m.Body, a.sepDims)
	if err != nil {
		return nil, err
	}
	return a.decide(v.values, v.cost)
}

// decide reads the agent's boundary values from the argmin table at the
// separator's values and sends every child the values of its separator.
func (a *Agent) decide(sepValues []int, cost float64) ([]mva.Message, error) {
	row := 0
	for k, x := range sepValues {
		row = row*a.sepDims[k] + x
	}
	a.node.Local.LP.DecodeRow(int(a.argmin[row]), a.boundary)
	known := make(map[int]int, len(a.sep)+len(a.boundary))
	for k, v := range a.sep {
		known[v] = sepValues[k]
	}
	for k, v := range a.sub.Boundary {
		known[v] = a.boundary[k]
	}
	var out []mva.Message
	for _, c := range a.tree.Children {
		vals := make([]int, len(a.childSep[c]))
		for k, v := range a.childSep[c] {
			x, ok := known[v]
			if !ok {
				return nil, fmt.Errorf("no value for variable %s of child %d's separator", a.prob.Variables[v].Name, c)
			}
			vals[k] = x
		}
		out = append(out, a.msg(c, KindValue, encodeValue(value{cost: cost, values: vals})))
	}
	a.cost = cost
	a.argmin = nil
	a.done = true
	return out, nil
}
