package randprob

import (
	"math/rand/v2"
	"strconv"

	"github.com/hearth-dcop/hearth/mva"
)

// Range is an inclusive range of counts. A draw from it takes one value
// from r only when Max > Min, so that a fixed count costs no randomness and
// leaves the rest of a seed's stream where it was.
type Range struct{ Min, Max int }

// draw returns a uniform value in [Min, Max], or Min when Max ≤ Min.
func (g Range) draw(r *rand.Rand) int {
	if g.Max <= g.Min {
		return g.Min
	}
	return g.Min + r.IntN(g.Max-g.Min+1)
}

// Shape describes the small random problems that file-format round trips
// are tested on. Unlike New, which shapes problems for solvers, it leaves
// the names, labels and costs to hooks, because what makes a problem
// awkward is different for each format: quoting in YAML, labels in XCSP,
// whole costs in wcsp, probabilities in UAI. A nil hook gives the plain
// value its documentation states.
type Shape struct {
	// Name draws the problem's name; nil leaves it empty.
	Name func(r *rand.Rand) string
	// AnySense draws Minimize or Maximize with equal odds; otherwise the
	// problem minimises.
	AnySense bool
	// Agents, Vars and Functions count agents, variables and cost
	// functions. Agents is at least 1.
	Agents, Vars, Functions Range
	// Domain is the range of each variable's domain size, at least 1.
	Domain Range
	// Arity is the range of each function's arity, cut to the number of
	// variables. A function's scope is distinct variables in random order.
	Arity Range
	// AgentName names agent i; nil gives "a<i>".
	AgentName func(i int) string
	// VarName names variable i; nil gives "x<i>".
	VarName func(r *rand.Rand, i int) string
	// Labels returns the d distinct labels of variable v; nil gives
	// "0".."d-1".
	Labels func(r *rand.Rand, v, d int) []string
	// FuncName names function i; nil gives "f<i>".
	FuncName func(i int) string
	// Costs fills the table of a function of the given arity; nil draws
	// whole costs in 0..9.
	Costs func(r *rand.Rand, arity int, costs []float64)
	// Offset draws the problem's offset; nil leaves it 0.
	Offset func(r *rand.Rand) float64
}

// Make returns a random problem of shape s drawn from r. The draws come in
// a fixed order (name, sense, agents, then per variable its domain size,
// labels, name and agent, then per function its arity, scope and costs,
// then the offset), so that a seed names one problem for as long as the
// shape and its hooks stay the same. The problem passes mva.Problem.Validate
// provided Labels gives distinct labels and the names are distinct.
func Make(r *rand.Rand, s Shape) *mva.Problem {
	p := &mva.Problem{}
	if s.Name != nil {
		p.Name = s.Name(r)
	}
	if s.AnySense && r.IntN(2) == 0 {
		p.Sense = mva.Maximize
	}
	na := max(s.Agents.draw(r), 1)
	for i := range na {
		name := "a" + strconv.Itoa(i)
		if s.AgentName != nil {
			name = s.AgentName(i)
		}
		p.Agents = append(p.Agents, mva.Agent{Name: name})
	}
	n := max(s.Vars.draw(r), 0)
	for i := range n {
		d := max(s.Domain.draw(r), 1)
		var labels []string
		if s.Labels != nil {
			labels = s.Labels(r, i, d)
		} else {
			labels = make([]string, d)
			for k := range labels {
				labels[k] = strconv.Itoa(k)
			}
		}
		name := "x" + strconv.Itoa(i)
		if s.VarName != nil {
			name = s.VarName(r, i)
		}
		p.Variables = append(p.Variables, mva.Variable{Name: name, Domain: labels, Agent: r.IntN(na)})
	}
	arity := Range{Min: min(max(s.Arity.Min, 0), n), Max: min(s.Arity.Max, n)}
	for i := range max(s.Functions.draw(r), 0) {
		k := arity.draw(r)
		scope := r.Perm(n)[:k]
		size, err := p.TableSize(scope)
		if err != nil {
			// A table too large to hold; a shape for round trips never
			// asks for one, and a smaller problem is still a valid one.
			break
		}
		costs := make([]float64, size)
		if s.Costs != nil {
			s.Costs(r, len(scope), costs)
		} else {
			for k := range costs {
				costs[k] = float64(r.IntN(10))
			}
		}
		name := "f" + strconv.Itoa(i)
		if s.FuncName != nil {
			name = s.FuncName(i)
		}
		p.Functions = append(p.Functions, mva.Function{Name: name, Scope: scope, Costs: costs})
	}
	if s.Offset != nil {
		p.Offset = s.Offset(r)
	}
	return p
}
