package reform

import (
	"slices"

	"github.com/hearth-dcop/hearth/mva"
)

// Decomposition gives every variable of p its own pseudo-agent, named
// "<agent>.<variable>" after the variable and its owner. Variables (in the
// same order, so Back is the identity), functions and offset are p's; only
// ownership changes. Every function between two variables is therefore a
// function between agents, and a protocol sees |X| agents; Owner maps each
// pseudo-agent to the original owner of its variable, so that the runtime
// counts the messages between pseudo-agents of one real agent as internal.
func Decomposition(p *mva.Problem) *Reformulation {
	q := &mva.Problem{
		Name:      p.Name,
		Sense:     p.Sense,
		Variables: make([]mva.Variable, len(p.Variables)),
		Agents:    make([]mva.Agent, len(p.Variables)),
		Functions: slices.Clone(p.Functions),
		Offset:    p.Offset,
	}
	owner := make([]int, len(p.Variables))
	names := uniqueNames{}
	for v, x := range p.Variables {
		q.Variables[v] = mva.Variable{Name: x.Name, Domain: x.Domain, Agent: v}
		agent := "?"
		if x.Agent >= 0 && x.Agent < len(p.Agents) {
			agent = p.Agents[x.Agent].Name
		}
		q.Agents[v] = mva.Agent{Name: names.fresh(agent + "." + x.Name)}
		owner[v] = x.Agent
	}
	return &Reformulation{Name: "decomposition", Problem: q, Owner: owner, Back: identity(q)}
}
