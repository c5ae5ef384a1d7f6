package mva

import "fmt"

// Conditioned returns lp's interior as a problem of its own, with lp's
// boundary variables fixed at b (one value per boundary variable, in
// lp.Vars' order): each function restricted to b over its interior
// variables, and the functions left with no interior variable summed into
// Offset. The interior variables keep their order, names and domains, and
// the problem has one agent, lp's owner's. It is what one exact solve of a
// row sees, so that the row can be written to a file another solver (or a
// measuring aid) reads; its cost of an interior assignment plus Offset is
// lp.Eval of b followed by that assignment.
func (lp *LocalProblem) Conditioned(b []int) (*Problem, error) {
	if len(b) != lp.NB {
		return nil, fmt.Errorf("conditioned: %d boundary values for %d boundary variables", len(b), lp.NB)
	}
	for k, v := range b {
		if v < 0 || v >= lp.Domains[k] {
			return nil, fmt.Errorf("conditioned: boundary value %d of variable %q outside its %d values", v, lp.Problem.Variables[lp.Vars[k]].Name, lp.Domains[k])
		}
	}
	src := lp.Problem
	q := &Problem{Name: src.Name}
	if lp.Sub != nil && lp.Sub.Agent >= 0 && lp.Sub.Agent < len(src.Agents) {
		q.Agents = []Agent{{Name: src.Agents[lp.Sub.Agent].Name}}
	} else {
		q.Agents = []Agent{{Name: "interior"}}
	}
	for k := lp.NB; k < len(lp.Vars); k++ {
		sv := src.Variables[lp.Vars[k]]
		q.Variables = append(q.Variables, Variable{Name: sv.Name, Domain: sv.Domain})
	}
	x := make([]int, len(lp.Vars))
	copy(x, b)
	for fi := range lp.Funcs {
		f := &lp.Funcs[fi]
		var free []int
		size := 1
		for _, k := range f.Scope {
			if k >= lp.NB {
				free = append(free, k)
				size *= lp.Domains[k]
			}
		}
		costs := make([]float64, size)
		for e := range costs {
			// e's digits, the last free variable fastest, as a
			// Function's table reads its scope.
			rest := e
			for i := len(free) - 1; i >= 0; i-- {
				x[free[i]] = rest % lp.Domains[free[i]]
				rest /= lp.Domains[free[i]]
			}
			idx := 0
			for _, k := range f.Scope {
				idx = idx*lp.Domains[k] + x[k]
			}
			costs[e] = f.Costs[idx]
		}
		if len(free) == 0 {
			q.Offset += costs[0]
			continue
		}
		scope := make([]int, len(free))
		for i, k := range free {
			scope[i] = k - lp.NB
		}
		q.Functions = append(q.Functions, Function{Scope: scope, Costs: costs})
	}
	return q, nil
}
