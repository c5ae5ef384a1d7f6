package gen

import (
	"fmt"
	"strconv"

	"github.com/hearth-dcop/hearth/mva"
)

// MeetingOptions shape the meeting scheduling instances of the thesis's
// DMCMC evaluation (§5.3.5, Figure 5.7; DMCMC, CP 2016, §6): meetings
// between members of a hierarchical organisation in the PEAV formulation
// (Private Events As Variables, Maheswaran et al., AAMAS 2004), where
// every agent owns its own copy of each event it attends, equality
// constraints tie the copies of a shared event across agents, and
// availability and priorities are private local costs. The thesis fixes
// 10 variables per agent, 12 values (time slots), a local constraint-graph
// density of 0.7 and exactly one boundary variable per agent. The rest is
// this package's reading:
//
//   - Agent i owns events "x<i>_0" ... "x<i>_<Vars−1>". Event 0 is its
//     copy of the one shared meeting it attends (its boundary variable);
//     the others are private.
//   - Conflicts: round(LocalDensity·Vars(Vars−1)/2) pairs of an agent's
//     events, drawn uniformly, cannot share a slot (Hard when equal, 0
//     otherwise). The other pairs may overlap: the person can delegate one
//     of them.
//   - Preferences: every event e of agent i costs priority(e)·dislike_i(t)
//     in slot t, with priority uniform in 1..10 and dislike uniform in
//     0..10 per agent and slot (0: free, 10: barely available), so a unary
//     cost lies in [0, 100].
//   - Sharing: the agents are split into Meetings groups of consecutive
//     agents. Within a group, the members form a hierarchy in which member
//     j reports to member (j−1)/Span, and each member's copy is tied to
//     its manager's copy by an equality constraint (Hard when different),
//     so the group agrees on one slot. With one meeting (the default)
//     the whole organisation holds it and the agent graph is a tree.
//     Exactly one boundary variable per agent means that an agent attends
//     exactly one shared meeting, so more than one meeting splits the
//     agents into independent groups.
//
// Instances are feasible whenever Slots ≥ Vars: give the shared meetings
// any slot and colour each agent's conflict graph greedily around it.
type MeetingOptions struct {
	// Agents is the number of people, at least 2.
	Agents int
	// Vars is the number of events per agent.
	Vars int
	// Slots is the domain size: the number of time slots.
	Slots int
	// LocalDensity is the density of each agent's conflict graph.
	LocalDensity float64
	// Meetings is the number of shared meetings, at most Agents/2.
	Meetings int
	// Span is the number of reports per manager in a meeting's hierarchy.
	Span int
}

// DefaultMeeting returns the thesis's settings with 10 agents (the DMCMC
// paper's default; the thesis ran 2 to 100) in one organisation-wide
// meeting of a hierarchy of span 3.
func DefaultMeeting() MeetingOptions {
	return MeetingOptions{Agents: 10, Vars: 10, Slots: 12, LocalDensity: 0.7, Meetings: 1, Span: 3}
}

func (o MeetingOptions) validate() error {
	switch {
	case o.Agents < 2:
		return fmt.Errorf("agents %d: a shared meeting needs at least 2 agents", o.Agents)
	case o.Vars < 1:
		return fmt.Errorf("vars %d: every agent needs at least its copy of the shared meeting", o.Vars)
	case o.Slots < 1:
		return fmt.Errorf("slots %d: at least one time slot is needed", o.Slots)
	case o.Agents > 1<<20 || o.Vars > 1<<12 || o.Agents*o.Vars > 1<<22:
		return fmt.Errorf("%d agents × %d events is too large", o.Agents, o.Vars)
	case o.Slots > 1<<12:
		return fmt.Errorf("slots %d: at most %d", o.Slots, 1<<12)
	case o.Meetings < 1 || o.Meetings > o.Agents/2:
		return fmt.Errorf("meetings %d is outside [1, %d]: each meeting needs two agents", o.Meetings, o.Agents/2)
	case o.Span < 1:
		return fmt.Errorf("span %d: a manager has at least one report", o.Span)
	}
	return checkUnit("local density p1l", o.LocalDensity)
}

// Meeting returns the meeting scheduling instance of seed under o (see
// MeetingOptions): agents "a0", "a1", ..., slots "0" ... "<Slots−1>".
func Meeting(seed uint64, o MeetingOptions) (*mva.Problem, error) {
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("gen meeting: %w", err)
	}
	r := newRand(seed, 0x6d65_6574) // "meet"
	p := &mva.Problem{Name: "meeting-" + strconv.FormatUint(seed, 10)}
	slots := intLabels(0, o.Slots)
	hard := func(equal bool) []float64 {
		t := make([]float64, o.Slots*o.Slots)
		for a := range o.Slots {
			for b := range o.Slots {
				if (a == b) == equal {
					t[a*o.Slots+b] = mva.Hard
				}
			}
		}
		return t
	}
	// Every function gets its own table, so that a consumer that
	// rewrites one in place (shifting costs, say) cannot change another.
	pairs := o.Vars * (o.Vars - 1) / 2
	k := round(o.LocalDensity * float64(pairs))
	for i := range o.Agents {
		p.Agents = append(p.Agents, mva.Agent{Name: "a" + strconv.Itoa(i)})
		base := len(p.Variables)
		for e := range o.Vars {
			p.Variables = append(p.Variables, mva.Variable{
				Name: "x" + strconv.Itoa(i) + "_" + strconv.Itoa(e), Domain: slots, Agent: i,
			})
		}
		dislike := make([]float64, o.Slots)
		for t := range dislike {
			dislike[t] = float64(r.IntN(11))
		}
		for e := range o.Vars {
			prio := float64(1 + r.IntN(10))
			costs := make([]float64, o.Slots)
			for t := range costs {
				costs[t] = prio * dislike[t]
			}
			p.Functions = append(p.Functions, mva.Function{
				Name: "pref" + strconv.Itoa(i) + "_" + strconv.Itoa(e), Scope: []int{base + e}, Costs: costs,
			})
		}
		for _, c := range choose(r, pairs, k) {
			u, v := pairOf(c)
			p.Functions = append(p.Functions, mva.Function{
				Name:  "conflict" + strconv.Itoa(i) + "_" + strconv.Itoa(u) + "_" + strconv.Itoa(v),
				Scope: []int{base + u, base + v}, Costs: hard(true),
			})
		}
	}
	for g := range o.Meetings {
		lo, hi := g*o.Agents/o.Meetings, (g+1)*o.Agents/o.Meetings
		for j := 1; j < hi-lo; j++ {
			boss := lo + (j-1)/o.Span
			p.Functions = append(p.Functions, mva.Function{
				Name:  "same" + strconv.Itoa(boss) + "_" + strconv.Itoa(lo+j),
				Scope: []int{boss * o.Vars, (lo + j) * o.Vars}, Costs: hard(false),
			})
		}
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("gen meeting: %w", err)
	}
	return p, nil
}
