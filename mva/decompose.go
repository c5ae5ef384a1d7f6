package mva

import "slices"

// Subproblem is agent i's part of the MVA decomposition, P_i = (L_i, B_i,
// F_i) in the thesis (Definitions 5–7): the variables it owns, the ones
// among them that share a function with another agent, and the functions
// whose scope lies entirely inside L_i.
type Subproblem struct {
	// Agent is the owner's index in Problem.Agents, or -1 for the whole
	// problem solved centrally (see Whole).
	Agent int
	// Local is L_i, sorted by variable index.
	Local []int
	// Boundary is B_i ⊆ L_i, sorted. An MVA table has one row per joint
	// assignment of these variables.
	Boundary []int
	// Interior is L_i \ B_i, sorted: what the local solver decides.
	Interior []int
	// Functions indexes Problem.Functions: the local functions F_i.
	Functions []int
}

// Decomposition is the MVA view of a problem: one subproblem per agent and
// the functions between agents, which the protocol (not the local solver)
// handles.
type Decomposition struct {
	Problem *Problem
	Subs    []Subproblem
	// External indexes Problem.Functions whose scope spans several agents.
	External []int
}

// Decompose splits p into per-agent subproblems. It does not copy p.
func Decompose(p *Problem) *Decomposition {
	d := &Decomposition{Problem: p, Subs: make([]Subproblem, len(p.Agents))}
	boundary := make([]bool, len(p.Variables))
	for i := range d.Subs {
		d.Subs[i].Agent = i
	}
	for v, x := range p.Variables {
		d.Subs[x.Agent].Local = append(d.Subs[x.Agent].Local, v)
	}
	for fi, f := range p.Functions {
		owner, shared := -1, false
		for _, v := range f.Scope {
			a := p.Variables[v].Agent
			if owner == -1 {
				owner = a
			} else if a != owner {
				shared = true
			}
		}
		if !shared {
			if owner >= 0 {
				d.Subs[owner].Functions = append(d.Subs[owner].Functions, fi)
			} else {
				// A zero-arity function belongs to no agent; count it
				// with the first so that no cost is lost.
				if len(d.Subs) > 0 {
					d.Subs[0].Functions = append(d.Subs[0].Functions, fi)
				}
			}
			continue
		}
		d.External = append(d.External, fi)
		for _, v := range f.Scope {
			boundary[v] = true
		}
	}
	for i := range d.Subs {
		s := &d.Subs[i]
		for _, v := range s.Local {
			if boundary[v] {
				s.Boundary = append(s.Boundary, v)
			} else {
				s.Interior = append(s.Interior, v)
			}
		}
	}
	return d
}

// Whole returns the subproblem that treats p as one agent with no boundary:
// every variable interior, every function local. Centralised solving
// (`hearth solve --global none`) fills the single row of its MVA table.
func Whole(p *Problem) *Subproblem {
	s := &Subproblem{Agent: -1}
	for v := range p.Variables {
		s.Local = append(s.Local, v)
		s.Interior = append(s.Interior, v)
	}
	for fi := range p.Functions {
		s.Functions = append(s.Functions, fi)
	}
	return s
}

// Neighbours returns, for each agent, the sorted list of other agents it
// shares a function with.
func (d *Decomposition) Neighbours() [][]int {
	p := d.Problem
	set := make([]map[int]bool, len(p.Agents))
	for i := range set {
		set[i] = map[int]bool{}
	}
	for _, fi := range d.External {
		f := &p.Functions[fi]
		for _, u := range f.Scope {
			for _, v := range f.Scope {
				a, b := p.Variables[u].Agent, p.Variables[v].Agent
				if a != b {
					set[a][b] = true
				}
			}
		}
	}
	out := make([][]int, len(set))
	for i, s := range set {
		for a := range s {
			out[i] = append(out[i], a)
		}
		slices.Sort(out[i])
	}
	return out
}
