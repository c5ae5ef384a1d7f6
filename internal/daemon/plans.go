package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/homesolve"
	"github.com/hearth-dcop/hearth/devices/refine"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/pipeline"
)

// This file makes a compiled home of `hearth run` report the objective
// of the plans the street publishes. With automatic power levels every
// home refines its plan after the solve (devices/refine: a wallbox's
// exact currents, a battery's finer powers), and `hearth sim` reports
// the objective of the refined plan; the protocol's objective is that of
// the compiled values, above it (13.864 against sim's 13.726 on the
// mixed test street's compiled homes). A home's refinement reads nothing
// of the others, but the street's objective reads every home's plan (the
// peak term reads their committed caps), so after the round the homes
// tell each other the schedules they publish (homesolve.Run.HomeRefined)
// — what each then publishes on its plan topics anyway — and every home
// evaluates the street's plan as sim does (homesolve.Run.PlansObjective).

// plansHook is the compiled home's Objective (AgentConfig) for r: nil
// where no home has a device to refine (the protocol's objective is then
// that of the plan published, unless a descent or an answer moved it,
// as before).
func plansHook(r *homesolve.Run) func(ctx context.Context, values []int, home int, rt pipeline.Runtime) (float64, error) {
	n := r.Model()
	if !refine.HasExact(n) {
		return nil
	}
	return func(ctx context.Context, values []int, home int, rt pipeline.Runtime) (float64, error) {
		// A home that cannot tell its plan still takes part, with the
		// reason: the others then keep the protocol's objective at once
		// rather than wait for it until the round's time-out.
		hs, herr := r.HomeRefined(values, home)
		msg := planMessage{Actions: hs.Actions, Levels: hs.Levels}
		if herr != nil {
			msg = planMessage{Error: herr.Error()}
		}
		mine, err := json.Marshal(msg)
		if err != nil {
			return math.NaN(), err
		}
		got, err := sharePlans(ctx, rt, len(n.Homes), home, mine)
		if err != nil {
			return math.NaN(), err
		}
		if herr != nil {
			return math.NaN(), herr
		}
		homes := make([]devices.HomeSchedule, len(n.Homes))
		for i, b := range got {
			if i == home {
				homes[i] = hs
				continue
			}
			var m planMessage
			if err := json.Unmarshal(b, &m); err != nil {
				return math.NaN(), fmt.Errorf("home %s's plan: %w", n.Homes[i].Name, err)
			}
			if m.Error != "" {
				return math.NaN(), fmt.Errorf("home %s has no plan to tell: %s", n.Homes[i].Name, m.Error)
			}
			homes[i] = devices.HomeSchedule{Actions: m.Actions, Levels: m.Levels}
		}
		return r.PlansObjective(homes)
	}
}

// planMessage is a home's published schedule as it tells the others, or
// why it has none.
type planMessage struct {
	Actions [][]int `json:"actions,omitempty"`
	Levels  []int   `json:"levels,omitempty"`
	Error   string  `json:"error,omitempty"`
}

// planKind is the kind of a home's planMessage.
const planKind = "plan"

// sharePlans runs the exchange of the homes' messages over rt: home
// (of homes, the problem's agents) sends mine to every other home and
// waits for theirs. It returns every home's message, mine at home.
func sharePlans(ctx context.Context, rt pipeline.Runtime, homes, home int, mine []byte) ([][]byte, error) {
	if home < 0 || home >= homes {
		return nil, fmt.Errorf("home %d of %d", home, homes)
	}
	a := &planShare{me: home, n: homes, mine: mine, got: make([][]byte, homes)}
	a.got[home] = mine
	if homes == 1 {
		return a.got, nil
	}
	p := &mva.Problem{Name: "plans", Agents: make([]mva.Agent, homes)}
	owner := make([]int, homes)
	for i := range owner {
		p.Agents[i].Name = fmt.Sprint(i)
		owner[i] = i
	}
	others := make([]int, 0, homes-1)
	for i := range homes {
		if i != home {
			others = append(others, i)
		}
	}
	run := pipeline.Run{Problem: p, Owner: owner, Agents: []pipeline.Agent{{Node: &mva.Node{ID: home, NumAgents: homes, Neighbours: others}, Protocol: a}}}
	if _, err := rt.Run(ctx, run); err != nil {
		return nil, fmt.Errorf("the homes' plans: %w", err)
	}
	if missing := a.missing(); len(missing) > 0 {
		return nil, fmt.Errorf("the homes' plans: none from homes %v", missing)
	}
	return a.got, nil
}

// planShare is one home's side of sharePlans, a protocol agent
// (mva.Protocol): it sends its message to every other home at the start
// and is done once it holds one from each.
type planShare struct {
	me, n int
	mine  []byte
	got   [][]byte
	count int
}

func (a *planShare) Start(context.Context) ([]mva.Message, error) {
	out := make([]mva.Message, 0, a.n-1)
	for j := range a.n {
		if j != a.me {
			out = append(out, mva.Message{From: a.me, To: j, Kind: planKind, Body: a.mine})
		}
	}
	return out, nil
}

func (a *planShare) Step(_ context.Context, m mva.Message) ([]mva.Message, error) {
	switch {
	case m.Kind != planKind:
		return nil, fmt.Errorf("plans: a %q message from %d", m.Kind, m.From)
	case m.From < 0 || m.From >= a.n || m.From == a.me:
		return nil, fmt.Errorf("plans: a message from agent %d of %d", m.From, a.n)
	case len(m.Body) == 0:
		return nil, fmt.Errorf("plans: an empty message from home %d", m.From)
	case a.got[m.From] != nil:
		return nil, fmt.Errorf("plans: a second message from home %d", m.From)
	}
	a.got[m.From] = slices.Clone(m.Body)
	a.count++
	return nil, nil
}

func (a *planShare) Done() bool { return a.count == a.n-1 }

func (a *planShare) Result() mva.AgentResult { return mva.AgentResult{Cost: math.NaN()} }

// missing lists the homes whose message has not come.
func (a *planShare) missing() []int {
	var out []int
	for i, b := range a.got {
		if b == nil {
			out = append(out, i)
		}
	}
	return out
}
