package dpop

import (
	"context"
	"fmt"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/join"
)

// This file is the UTIL phase: join the MVA table, the functions this
// agent is the lowest holder of and the children's UTILs, and project out
// the boundary variables, one at a time in the order elim.go plans.

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
	a.childUtil[m.From] = &join.Factor{Vars: u.vars, Dims: dims, Costs: u.costs}
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
				len(dims), dims, a.maxUtil, join.ErrTooLarge)
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
	own := make(map[int]bool, len(a.sub.Boundary))
	for _, v := range a.sub.Boundary {
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
	costs, err := a.eliminate(ctx, inputs, sep, dims)
	if err != nil {
		return nil, err
	}
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

// elimStep is what the VALUE phase needs of one join-project of the UTIL
// phase: its variables and argmin table. The plan itself is dropped, so
// that the joined tables are freed once the UTIL is sent.
type elimStep struct {
	out, outDims   []int
	elim, elimDims []int
	argmin         []int32
}

// eliminate projects the agent's boundary variables out of inputs (the MVA
// table first) in the planned order and returns the UTIL table over sep.
// Every step runs through the agent's kernel, adds its join entries to the
// checks and keeps its argmin table in a.steps; every table it builds is
// bounded by max_util_entries.
func (a *Agent) eliminate(ctx context.Context, inputs []*join.Factor, sep, sepDims []int) (_ []float64, err error) {
	if a.chains != nil {
		a.chain = a.chains()
		defer func() {
			if cerr := a.chain.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("UTIL: %w", cerr)
			}
			a.chain = nil
		}()
	}
	boundary := a.sub.Boundary
	scopes := make([][]int, 0, len(inputs)-1)
	for _, f := range inputs[1:] {
		scopes = append(scopes, f.Vars)
	}
	ep := planElimination(boundary, inputs[0].Dims, scopes, sep, sepDims, a.maxUtil)
	steps := ep.single + 1
	a.steps = make([]elimStep, 0, steps)
	pending := slices.Clone(inputs)
	pos := make(map[int]int, len(boundary))
	for i, k := range ep.order {
		pos[boundary[k]] = i
	}
	for i, k := range ep.order[:ep.single] {
		// One variable, with the factors that hold it; the output is
		// their other variables.
		v := boundary[k]
		var inputs, rest []*join.Factor
		var out []int
		for _, f := range pending {
			if !slices.Contains(f.Vars, v) {
				rest = append(rest, f)
				continue
			}
			inputs = append(inputs, f)
			for _, w := range f.Vars {
				if w != v && !slices.Contains(out, w) {
					out = append(out, w)
				}
			}
		}
		layout(out, pos, i+1 < ep.single)
		f, err := a.step(ctx, inputs, []int{v}, out, i, steps, true)
		if err != nil {
			return nil, err
		}
		pending = append(rest, f)
	}
	// The final step: the variables left, with every pending factor, onto
	// the separator.
	var elim []int
	for _, k := range ep.order[ep.single:] {
		elim = append(elim, boundary[k])
	}
	f, err := a.step(ctx, pending, elim, sep, ep.single, steps, false)
	if err != nil {
		return nil, err
	}
	return f.Costs, nil
}

// layout orders the variables of an intermediate table: the separator
// variables first, by id, then the boundary variables (those in pos) so
// that the next step's eliminated variables come last. The next step then
// reads the eliminated values of a row from adjacent entries, and the final
// step, whose output is the separator, reads each output row's block of
// the table in order. single tells whether the next step eliminates one
// variable (the next in the order) or the final set (in order).
func layout(vars []int, pos map[int]int, single bool) {
	slices.SortFunc(vars, func(x, y int) int {
		px, bx := pos[x]
		py, by := pos[y]
		switch {
		case bx != by:
			if bx {
				return 1
			}
			return -1
		case !bx:
			return x - y
		case single:
			return py - px
		default:
			return px - py
		}
	})
}

// premerge sums the small factors holding eliminated variables (the
// functions and children's UTILs beside the largest, the MVA table or the
// table of the previous steps) into one table before the step, when that
// table has at most a quarter of the step's join entries: the step then
// reads two inputs per entry instead of one per factor, which measured
// 1.4× faster on the thesis's random graphs. The pre-merge is a
// join-project without eliminated variables, run through the kernel and
// counted in the checks like the others.
func (a *Agent) premerge(ctx context.Context, inputs []*join.Factor, elim []int) ([]*join.Factor, error) {
	if len(inputs) < 3 {
		return inputs, nil // no two small factors beside the largest
	}
	holds := func(f *join.Factor) bool {
		for _, v := range elim {
			if slices.Contains(f.Vars, v) {
				return true
			}
		}
		return false
	}
	big := -1
	for j, f := range inputs {
		if holds(f) && (big < 0 || tableSize(f) > tableSize(inputs[big])) {
			big = j
		}
	}
	var small, keep []*join.Factor
	dim := map[int]int{}
	for j, f := range inputs {
		for k, v := range f.Vars {
			dim[v] = f.Dims[k]
		}
		if j != big && holds(f) {
			small = append(small, f)
		} else {
			keep = append(keep, f)
		}
	}
	if len(small) < 2 {
		return inputs, nil
	}
	entries := 1.0
	for _, d := range dim {
		entries *= float64(d)
	}
	var u []int
	for _, f := range small {
		for _, v := range f.Vars {
			if !slices.Contains(u, v) {
				u = append(u, v)
			}
		}
	}
	size := 1.0
	for _, v := range u {
		size *= float64(dim[v])
	}
	if entries < smallJoin || size*4 > entries || size > float64(a.maxUtil) {
		return inputs, nil
	}
	slices.SortFunc(u, func(x, y int) int {
		ix, iy := slices.Index(elim, x), slices.Index(elim, y)
		if ix != iy {
			return ix - iy
		}
		return x - y
	})
	plan, err := join.NewJoinProjectLazy(small, nil, u, a.maxUtil)
	if err != nil {
		return nil, fmt.Errorf("UTIL inputs: %w", err)
	}
	out := plan.Output(nil)
	if err := a.run(ctx, plan, out, true, nil); err != nil {
		return nil, fmt.Errorf("UTIL inputs: %w", err)
	}
	a.checks += int64(plan.Rows())
	return append(keep, out), nil
}

// tableSize returns the entries of f's table, which may be on the chain's
// device (Costs nil).
func tableSize(f *join.Factor) int {
	n := 1
	for _, d := range f.Dims {
		n *= d
	}
	return n
}

// run computes a join-project into out: through the UTIL phase's chain
// when it takes p (with keep, out may then stay on the device), else with
// the agent's kernel or, without one, on the CPU with one worker, after
// bringing the inputs the chain kept to the host.
func (a *Agent) run(ctx context.Context, p *join.JoinProject, out *join.Factor, keep bool, argmin []int32) error {
	if a.chain != nil && a.chain.Offload(p) {
		if !keep {
			out.Costs = make([]float64, p.Rows())
		}
		return a.chain.Step(ctx, p, out, keep, argmin)
	}
	for _, f := range p.Inputs() {
		if f.Costs == nil && a.chain != nil {
			if err := a.chain.Host(ctx, f); err != nil {
				return err
			}
		}
	}
	out.Costs = make([]float64, p.Rows())
	if a.kernel != nil {
		return a.kernel(ctx, p, out.Costs, argmin)
	}
	return p.Run(ctx, out.Costs, argmin, 1)
}

// step runs join-project i of n and records it in a.steps. keep says that
// its output only feeds later steps, so that a chain may keep it on the
// device; otherwise (the UTIL table) it comes to the host.
func (a *Agent) step(ctx context.Context, inputs []*join.Factor, elim, out []int, i, n int, keep bool) (*join.Factor, error) {
	inputs, err := a.premerge(ctx, inputs, elim)
	if err != nil {
		return nil, err
	}
	plan, err := join.NewJoinProjectLazy(inputs, elim, out, a.maxUtil)
	if err != nil {
		return nil, fmt.Errorf("UTIL inputs: step %d of %d: %w", i+1, n, err)
	}
	f := plan.Output(nil)
	argmin := make([]int32, plan.Rows())
	if err := a.run(ctx, plan, f, keep, argmin); err != nil {
		return nil, fmt.Errorf("UTIL inputs: step %d of %d: %w", i+1, n, err)
	}
	a.checks += int64(plan.Rows()) * int64(plan.ElimSize())
	a.steps = append(a.steps, elimStep{
		out: plan.Out(), outDims: plan.OutDims(), elim: plan.Elim(), elimDims: plan.ElimDims(), argmin: argmin,
	})
	return f, nil
}

// joinInputs returns the factors of the UTIL join: the MVA table over the
// boundary variables, the functions between agents whose other agents are
// all ancestors (this agent is the lowest of their scope), and the
// children's UTIL tables.
func (a *Agent) joinInputs(ctx context.Context) ([]*join.Factor, error) {
	lp := a.node.Local.LP
	rows, err := lp.Rows()
	if err != nil {
		return nil, err
	}
	table := &join.Factor{Vars: a.sub.Boundary, Dims: lp.Domains[:lp.NB], Costs: make([]float64, rows)}
	for r := range rows {
		c, _, err := a.node.Local.RowIndex(ctx, r)
		if err != nil {
			return nil, err
		}
		table.Costs[r] = c
	}
	inputs := []*join.Factor{table}
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
		inputs = append(inputs, &join.Factor{Vars: f.Scope, Dims: dims, Costs: f.Costs})
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

// decide recovers the agent's boundary values from the argmin tables,
// last step first: each step's output variables are separator variables or
// boundary variables of later steps, so their values are known when its
// row is read. It then sends every child the values of its separator.
func (a *Agent) decide(sepValues []int, cost float64) ([]mva.Message, error) {
	known := make(map[int]int, len(a.sep)+len(a.boundary))
	for k, v := range a.sep {
		known[v] = sepValues[k]
	}
	for i := len(a.steps) - 1; i >= 0; i-- {
		s := &a.steps[i]
		row := 0
		for k, v := range s.out {
			x, ok := known[v]
			if !ok {
				return nil, fmt.Errorf("no value for variable %s of UTIL step %d", a.prob.Variables[v].Name, i+1)
			}
			row = row*s.outDims[k] + x
		}
		e := int(s.argmin[row])
		for k := len(s.elim) - 1; k >= 0; k-- {
			known[s.elim[k]] = e % s.elimDims[k]
			e /= s.elimDims[k]
		}
	}
	for k, v := range a.sub.Boundary {
		a.boundary[k] = known[v]
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
	a.steps = nil
	a.done = true
	return out, nil
}
