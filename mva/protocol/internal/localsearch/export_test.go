package localsearch

import "github.com/hearth-dcop/hearth/mva"

// SlotVars exposes the problem variable of every context slot to the
// external tests, which fill the context from a global assignment.
func (nb *Neighbourhood) SlotVars() []int { return nb.slotVars }

// UsedWeighted reports whether a response needed the weighted problem
// (every row violated a hard entry).
func (r *Responder) UsedWeighted() bool { return r.weighted != nil }

// SolveSolver returns the solver of the unweighted response problem, nil
// before the first solve.
func (r *Responder) SolveSolver() mva.LocalSolver {
	if r.soft == nil {
		return nil
	}
	return r.soft.solver
}

// NewBlockResponder returns a responder that answers by block descent
// whatever the agent's size, its blocks merged while they fit merge
// entries (1: one block per component).
func NewBlockResponder(n *mva.Node, nb *Neighbourhood, local LocalCost, merge int) (*Responder, error) {
	bs, err := newBlockSearch(nb, n.Local, n.Exact, merge, DefaultResponseEntries)
	if err != nil {
		return nil, err
	}
	r := &Responder{nb: nb, view: n.Local, exact: n.Exact, local: local, solve: true, mode: ResponseBlocks, blocks: bs, ext: map[int]Cost{}}
	bs.ext = r.ext
	return r, nil
}

// SolveEveryPass makes a block responder solve every block of every
// pass, as block descent did before it stopped at settled blocks.
func (r *Responder) SolveEveryPass() { r.blocks.everyPass = true }

// NumBlocks returns the number of blocks of a block responder.
func (r *Responder) NumBlocks() int {
	if r.blocks == nil {
		return 0
	}
	return len(r.blocks.blocks)
}

// ResponseProblem returns the agent's (unweighted) response problem with
// the context at vals and every mask free, as a problem of its own:
// the agent's boundary and interior variables, each function conditioned
// on the context, constants in Offset. It is what one exact response
// solves, for writing to a file that other solvers read.
func (r *Responder) ResponseProblem(vals []int) (*mva.Problem, error) {
	rlp, rc, _, err := r.buildLP(false)
	if err != nil {
		return nil, err
	}
	in := make([]int, rlp.NB)
	rc.gather(r.nb, vals, in)
	src := rlp.Problem
	q := &mva.Problem{Name: "best response of " + src.Agents[0].Name, Agents: []mva.Agent{{Name: src.Agents[0].Name}}}
	for v := rlp.NB; v < len(rlp.Vars); v++ {
		q.Variables = append(q.Variables, mva.Variable{Name: src.Variables[v].Name, Domain: src.Variables[v].Domain})
	}
	for _, f := range rlp.Funcs {
		var free []int
		for _, v := range f.Scope {
			if v >= rlp.NB {
				free = append(free, v)
			}
		}
		size := 1
		for _, v := range free {
			size *= rlp.Domains[v]
		}
		costs := make([]float64, size)
		x := make([]int, len(rlp.Vars))
		copy(x, in)
		for e := range costs {
			rest := e
			for i := len(free) - 1; i >= 0; i-- {
				d := rlp.Domains[free[i]]
				x[free[i]] = rest % d
				rest /= d
			}
			idx := 0
			for _, v := range f.Scope {
				idx = idx*rlp.Domains[v] + x[v]
			}
			costs[e] = f.Costs[idx]
		}
		if len(free) == 0 {
			q.Offset += costs[0]
			continue
		}
		sc := make([]int, len(free))
		for i, v := range free {
			sc[i] = v - rlp.NB
		}
		q.Functions = append(q.Functions, mva.Function{Scope: sc, Costs: costs})
	}
	return q, nil
}

// ResponseSize returns the variables and functions of the agent's
// (unweighted) response problem.
func (r *Responder) ResponseSize() (vars, funcs int, err error) {
	rlp, _, _, err := r.buildLP(false)
	if err != nil {
		return 0, 0, err
	}
	return len(rlp.Vars), len(rlp.Funcs), nil
}

// BlockInputs returns, per block of a block responder, the variables its
// problem reads as inputs: kept context slots and fixed interior.
func (r *Responder) BlockInputs() []int {
	if r.blocks == nil {
		return nil
	}
	var out []int
	for _, bp := range r.blocks.blocks {
		out = append(out, len(bp.in))
	}
	return out
}
