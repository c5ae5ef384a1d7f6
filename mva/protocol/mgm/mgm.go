// Package mgm is MGM, the Maximum Gain Message local search (Maheswaran,
// Pearce and Tambe 2004), over multi-variable agents, following
// notes/protocols-afb-dgibbs.md §3.
//
// An agent's value is a joint assignment of its boundary variables (an MVA
// table row); its interior is always that row's best completion, so its
// cost of a row is ℓ_i(b) = row cost + the external functions with the
// neighbours' current values. Rounds are synchronous, each of two waves:
//
//	VALUE(r, values)  to every neighbour: the sender's boundary variables
//	                  that appear in a function shared with the receiver
//	GAIN(r, gain)     to every neighbour: the best unilateral improvement
//	                  of ℓ_i given the round's values, ≥ 0
//
// After both waves an agent moves to its best row iff its gain is positive
// and beats every neighbour's (a strictly larger gain, or an equal one and
// a lower id). No two neighbours move together, so the global cost drops
// by exactly the movers' gains each round: MGM is monotone, its last
// assignment is its best, and a fixed point is 1-optimal. Messages per
// round: 2·Σ_i |N_i|. With joint moves (below) several neighbours may
// move in one round and the cost still falls.
//
// Decisions:
//   - Costs and gains are (hard violations, soft sum) pairs compared
//     lexicographically (notes §0.1), so a move that repairs a hard
//     violation is a positive gain and +Inf − +Inf never arises.
//   - Among equally good rows the current one is kept, otherwise the
//     lowest-index one (the notes' rule; FRODO flips coins).
//   - The initial assignment is a seeded random row per agent (parameter
//     init = 1, the default), as in FRODO and pyDCOP, so that MGM is the
//     baseline the literature compares against; init = 0 takes row 0 and
//     init = 2 the agent's cheapest row (its unconstrained local optimum).
//   - MGM has no global view: Result's Cost is NaN and the runtime
//     recomputes the true cost. Since MGM is monotone, the final assignment
//     is the best one seen.
//   - The run ends after a fixed number of rounds (parameter "rounds",
//     default 50); quiescence detection would need a global protocol.
//   - The best response is computed by localsearch.Responder: by
//     enumerating the MVA table when it has at most
//     localsearch.EnumerateRows rows, otherwise by one exact local solve
//     over all of the agent's variables with the external functions
//     conditioned on the neighbours' values (a 4^12-row SHDS home cannot
//     be enumerated). Both follow the tie rule above, so the run does not
//     depend on the path. Parameter response = 1 forces enumeration,
//     response = 2 the solve; response_entries bounds the solve's bucket
//     elimination tables (past it, or at 0, AND/OR branch and bound
//     solves).
//   - response = 3 answers, where the solve would exceed
//     response_entries (homes with many rules), by the AND/OR solve
//     within response_checks checks (deterministic, unlike a time limit;
//     its minimiser, not necessarily the lowest-index one; tried only
//     where its pseudo-tree's width is at most response_width and while
//     the agent's exact solves together stay within response_total
//     checks) and past them by block coordinate descent: blocks of
//     the agent's interior, each with the whole boundary, re-optimised
//     exactly in turn from the current row and its completion, the
//     candidate's completion offered to the agent's MVA table. The gain
//     is still the exact difference of ℓ_i between two held completions,
//     so MGM stays monotone, but a fixed point is only stable under block
//     moves. It needs a feasible start (init = 3 or 2).
//   - joint = 1 lets neighbours move together where that provably still
//     lowers the cost (Agent.moves): GAIN then also carries the sender's
//     candidate values, from which each agent computes the interaction of
//     its move with every higher-priority neighbour's over the pairwise
//     functions they share. On a complete graph MGM moves one agent per
//     round; on SHDS's 251 homes that is hundreds of rounds of 2·n·(n−1)
//     messages, while joint moves move dozens of homes in the first
//     rounds and reach a fixed point in 23 (dm_251_1_2; 6 to 36 on
//     the 25 SHDS instances).
//   - quiet = 1 ends the run after the first round in which no agent had
//     a positive gain (a fixed point: nothing changes after it). Agents
//     see only their neighbours' gains, so it needs a complete graph,
//     where every agent sees every gain and all stop together; New
//     refuses it elsewhere.
//   - relay = 1 sends, on a complete graph, every VALUE and GAIN to one
//     hub, the agent of lowest id, which sends every agent one bundle of
//     the wave's (VALUES, GAINS: every agent's entry in id order, one
//     body for all): 4·(n−1) messages per round instead of 2·n·(n−1).
//     An agent reads from a bundle exactly what the n−1 messages would
//     have carried, so the moves are the same. One body fits all only
//     where every neighbour sees the same boundary variables of an
//     agent; New refuses relay elsewhere, and on incomplete graphs.
//
// Parameters: rounds (default 50, ≥ 0), init (default 1), response
// (default 0, auto), response_entries (default
// localsearch.DefaultResponseEntries), response_checks (default
// localsearch.DefaultResponseChecks), response_width and response_total
// (default 0, no bound), block_entries (default
// localsearch.BlockEntries), joint (default 0), quiet (default 0), relay
// (default 0).
package mgm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
	"github.com/hearth-dcop/hearth/mva/wire"
)

// Message kinds. VALUES and GAINS are the relay's bundles (relay = 1).
const (
	KindValue  = "VALUE"
	KindGain   = "GAIN"
	KindValues = "VALUES"
	KindGains  = "GAINS"
)

// DefaultRounds is the number of rounds when the "rounds" parameter is
// absent.
const DefaultRounds = 50

// maxRounds bounds the rounds parameter so that round numbers fit every
// integer type on the way.
const maxRounds = 1 << 30

type phase int

const (
	waitValues phase = iota
	waitGains
	finished
)

// Agent is one agent's MGM state machine.
type Agent struct {
	node   *mva.Node
	nb     *localsearch.Neighbourhood
	resp   *localsearch.Responder
	rng    *rand.Rand
	init   localsearch.Init
	rounds int
	// joint, quiet and relay are the parameters of the same names.
	joint, quiet, relay bool
	// hub is the relay's hub, the agent of lowest id (relay only).
	hub int

	round int
	phase phase
	row   int
	b     []int
	best  int
	bestB []int
	gain  localsearch.Cost

	values *localsearch.Mailbox[[]int]
	gains  *localsearch.Mailbox[gainMsg]

	// onRound, when set (by tests), is called after every round with the
	// agent's row and whether it moved.
	onRound func(round, row int, moved bool)
}

// gainMsg is a GAIN's content: the gain and, with joint moves, the
// boundary values of the sender's candidate row that the receiver sees.
type gainMsg struct {
	gain localsearch.Cost
	cand []int
}

// New returns agent n's MGM state machine.
func New(n *mva.Node) (mva.Protocol, error) {
	nb, err := localsearch.New(n)
	if err != nil {
		return nil, fmt.Errorf("mgm: %w", err)
	}
	cfg, err := ParseConfig(n.Params)
	if err != nil {
		return nil, err
	}
	rounds, init, joint, quiet := cfg.Rounds, cfg.Init, cfg.Joint, cfg.Quiet
	agents := len(n.Decomp.Subs)
	if quiet && len(nb.Neighbours) != agents-1 {
		return nil, fmt.Errorf("mgm: parameter quiet = 1 needs every agent to neighbour every other (agent %d has %d neighbours of %d agents): elsewhere agents would disagree on the last round", n.ID, len(nb.Neighbours), agents)
	}
	hub := n.ID
	if cfg.Relay {
		if len(nb.Neighbours) != agents-1 {
			return nil, fmt.Errorf("mgm: parameter relay = 1 needs every agent to neighbour every other (agent %d has %d neighbours of %d agents)", n.ID, len(nb.Neighbours), agents)
		}
		if !nb.UniformOut() {
			return nil, fmt.Errorf("mgm: parameter relay = 1 needs every neighbour of agent %d to see the same boundary variables of it (one VALUE body for all)", n.ID)
		}
		if len(nb.Neighbours) > 0 {
			hub = min(hub, nb.Neighbours[0])
		}
	}
	// An agent alone has nobody to relay for.
	relay := cfg.Relay && len(nb.Neighbours) > 0
	resp, err := localsearch.NewResponder(n, nb, func(ctx context.Context, row int) (localsearch.Cost, error) {
		return localsearch.RowCost(ctx, n.Local, row)
	}, cfg.Response)
	if err != nil {
		return nil, fmt.Errorf("mgm: %w", err)
	}
	k := len(nb.Neighbours)
	return &Agent{
		node: n, nb: nb, resp: resp, rng: localsearch.NewRand(n.Seed), init: init, rounds: rounds,
		joint: joint, quiet: quiet, relay: relay, hub: hub,
		b:      make([]int, len(nb.Domains)),
		bestB:  make([]int, len(nb.Domains)),
		values: localsearch.NewMailbox[[]int](k, 1),
		gains:  localsearch.NewMailbox[gainMsg](k, 1),
	}, nil
}

// Checks counts the external-function evaluations and the best-response
// solver's checks (pipeline.CheckCounter); the local view's solver counts its
// own.
func (a *Agent) Checks() int64 { return a.nb.Checks() + a.resp.Checks() }

// ResponseCounts returns the agent's best responses computed exactly and
// by block descent under response=3 (localsearch.Responder.ResponseCounts),
// for the run's note on how many homes the exact option kept exact.
func (a *Agent) ResponseCounts() (exact, blocks int64) { return a.resp.ResponseCounts() }

// Links returns the agents this one exchanges messages with: through
// the relay, the hub alone (the hub: every neighbour); otherwise every
// neighbour. The MQTT runtime subscribes an agent to their statuses only
// (mqtt.Linker).
func (a *Agent) Links() []int {
	if a.relay && a.node.ID != a.hub {
		return []int{a.hub}
	}
	return slices.Clone(a.nb.Neighbours)
}

// Done reports that the last round is over.
func (a *Agent) Done() bool { return a.phase == finished }

// Result returns the current boundary assignment; MGM knows no global
// cost.
func (a *Agent) Result() mva.AgentResult {
	return mva.AgentResult{Boundary: a.boundary(), Cost: math.NaN()}
}

func (a *Agent) boundary() []int {
	b := make([]int, len(a.b))
	a.nb.Decode(a.row, b)
	return b
}

// Start picks the initial row and sends round 1's values.
func (a *Agent) Start(ctx context.Context) ([]mva.Message, error) {
	row, err := localsearch.InitialRow(ctx, a.init, a.node.Local, a.nb.Rows(), a.rng)
	if err != nil {
		return nil, fmt.Errorf("mgm: %w", err)
	}
	a.setRow(row)
	a.round = 1
	if a.rounds == 0 {
		a.phase = finished
		return nil, nil
	}
	out := a.sendValues(nil)
	return a.progress(ctx, out)
}

// Step handles one message.
func (a *Agent) Step(ctx context.Context, m mva.Message) ([]mva.Message, error) {
	if err := a.receive(m); err != nil {
		return nil, fmt.Errorf("mgm: agent %d: %s from %d: %w", a.node.ID, m.Kind, m.From, err)
	}
	return a.progress(ctx, nil)
}

func (a *Agent) receive(m mva.Message) error {
	j, err := a.nb.Position(m.From)
	if err != nil {
		return err
	}
	if a.phase == finished {
		return fmt.Errorf("message after the last round")
	}
	r := wire.NewReader(m.Body)
	round := r.IntIn(1, a.rounds+1)
	if a.relay {
		if err := a.relayed(m.Kind, m.From); err != nil {
			return err
		}
	}
	switch m.Kind {
	case KindValues:
		return a.receiveBundle(r, round, func(r *wire.Reader, j int) error {
			vals := r.Ints()
			if err := r.Failed(); err != nil {
				return err
			}
			if j < 0 {
				return nil // the receiver's own entry
			}
			if err := a.nb.CheckValues(j, vals); err != nil {
				return err
			}
			return a.values.Put(round, j, vals)
		})
	case KindGains:
		return a.receiveBundle(r, round, func(r *wire.Reader, j int) error {
			g, err := localsearch.ReadCost(r)
			if err != nil {
				return err
			}
			msg := gainMsg{gain: g}
			if a.joint {
				msg.cand = r.Ints()
			}
			if err := r.Failed(); err != nil {
				return err
			}
			if j < 0 {
				return nil
			}
			if a.joint {
				if err := a.nb.CheckValues(j, msg.cand); err != nil {
					return err
				}
			}
			return a.gains.Put(round, j, msg)
		})
	case KindValue:
		vals := a.nb.ReadValuesTo(r, j)
		if err := r.Err(); err != nil {
			return err
		}
		return a.values.Put(round, j, vals)
	case KindGain:
		g, err := localsearch.ReadCost(r)
		if err != nil {
			return err
		}
		msg := gainMsg{gain: g}
		if a.joint {
			msg.cand = a.nb.ReadValuesTo(r, j)
		}
		if err := r.Err(); err != nil {
			return err
		}
		return a.gains.Put(round, j, msg)
	}
	return fmt.Errorf("unknown message kind")
}

// relayed checks that a message of kind from agent from travels as the
// relay has it: VALUE and GAIN to the hub, their bundles from it.
func (a *Agent) relayed(kind string, from int) error {
	bundle := kind == KindValues || kind == KindGains
	switch {
	case (kind == KindValue || kind == KindGain) && a.node.ID != a.hub:
		return fmt.Errorf("relay: %s goes to the hub %d, not to agent %d", kind, a.hub, a.node.ID)
	case bundle && from != a.hub:
		return fmt.Errorf("relay: %s comes from the hub %d, not from agent %d", kind, a.hub, from)
	}
	return nil
}

// receiveBundle reads a relay bundle's entries, one per agent of the run
// in id order, handing each to read with its sender's neighbour position
// (−1 for the receiver's own entry, which read must consume and drop).
func (a *Agent) receiveBundle(r *wire.Reader, round int, read func(r *wire.Reader, j int) error) error {
	agents := len(a.nb.Neighbours) + 1
	for k := range agents {
		j := -1
		if k != a.node.ID {
			var err error
			if j, err = a.nb.Position(k); err != nil {
				return err
			}
		}
		if err := read(r, j); err != nil {
			return fmt.Errorf("entry of agent %d: %w", k, err)
		}
	}
	return r.Err()
}

// progress runs every wave whose messages are all in.
func (a *Agent) progress(ctx context.Context, out []mva.Message) ([]mva.Message, error) {
	for {
		switch {
		case a.phase == waitValues && a.values.Full():
			if a.relay && a.node.ID == a.hub {
				out = a.bundleValues(out)
			}
			for j := range a.nb.Neighbours {
				a.nb.SetValues(j, a.values.Get(j), a.nb.Ctx)
			}
			if err := a.respond(ctx); err != nil {
				return nil, err
			}
			for j, to := range a.nb.Neighbours {
				if a.relay && to != a.hub {
					continue // the hub sends its gain in the bundle
				}
				var w wire.Writer
				w.Int(int64(a.round))
				localsearch.WriteCost(&w, a.gain)
				if a.joint {
					a.nb.WriteValues(&w, j, a.bestB)
				}
				out = append(out, mva.Message{From: a.node.ID, To: to, Kind: KindGain, Body: w.Bytes()})
			}
			a.phase = waitGains
		case a.phase == waitGains && a.gains.Full():
			if a.relay && a.node.ID == a.hub {
				out = a.bundleGains(out)
			}
			moved := a.moves()
			if moved {
				if a.best < 0 {
					best, err := a.resp.BestRow(ctx)
					if err != nil {
						return nil, fmt.Errorf("mgm: agent %d: %w", a.node.ID, err)
					}
					a.best = best
				}
				a.setRow(a.best)
			}
			if a.onRound != nil {
				a.onRound(a.round, a.row, moved)
			}
			still := a.quiet && !a.gain.Positive()
			for j := range a.nb.Neighbours {
				still = still && !a.gains.Get(j).gain.Positive()
			}
			a.values.Advance()
			a.gains.Advance()
			if a.round == a.rounds || still {
				a.phase = finished
				return out, nil
			}
			a.round++
			a.phase = waitValues
			out = a.sendValues(out)
		default:
			return out, nil
		}
	}
}

// respond computes the agent's best response to the neighbours' values of
// the round: its gain, and with joint moves its candidate row. Plain MGM
// needs the row only when the agent moves, so it asks for the gain alone
// (localsearch.Responder.BestGain) and leaves a.best at −1 until then:
// the restricted solves that find the lowest-index minimiser of an
// exact response run for the round's movers alone.
func (a *Agent) respond(ctx context.Context) error {
	if !a.joint {
		gain, err := a.resp.BestGain(ctx, a.row, a.nb.Ctx)
		if err != nil {
			return fmt.Errorf("mgm: agent %d: %w", a.node.ID, err)
		}
		a.best, a.gain = -1, gain
		return nil
	}
	best, gain, err := a.resp.BestMove(ctx, a.row, a.nb.Ctx)
	if err != nil {
		return fmt.Errorf("mgm: agent %d: %w", a.node.ID, err)
	}
	a.best, a.gain = best, gain
	a.nb.Decode(best, a.bestB)
	return nil
}

// moves is the round's decision, once every gain is in. Plain MGM moves
// the agent iff its gain is positive and beats every neighbour's. With
// joint moves a pairwise agent (localsearch.Neighbourhood.Pairwise) also
// moves when its gain exceeds B, the sum of the positive parts of its
// Interaction with every neighbour whose positive gain beats its own;
// the MGM winner has B = 0. The movers' joint change of the global cost
// is −Σ gains + Σ over moving neighbour pairs of their interaction, and
// each pair's is charged to its lower-priority member's B, so the cost
// still falls by at least Σ (gain − B) > 0: joint MGM is monotone, and
// where a function reads three or more agents, those agents move only
// as MGM winners, of which it holds at most one.
func (a *Agent) moves() bool {
	if !a.gain.Positive() {
		return false
	}
	pairwise := a.joint && a.nb.Pairwise()
	var bound localsearch.Cost
	for j, id := range a.nb.Neighbours {
		g := a.gains.Get(j)
		if localsearch.Beats(a.gain, a.node.ID, g.gain, id) {
			continue
		}
		if !pairwise {
			return false
		}
		if !g.gain.Positive() {
			continue
		}
		if in := a.nb.Interaction(j, a.b, a.bestB, g.cand); in.Positive() {
			bound = bound.Add(in)
		}
	}
	return bound.Less(a.gain)
}

func (a *Agent) setRow(row int) {
	a.row = row
	a.nb.Decode(row, a.b)
}

func (a *Agent) sendValues(out []mva.Message) []mva.Message {
	for j, to := range a.nb.Neighbours {
		if a.relay && to != a.hub {
			continue // the hub sends its values in the bundle
		}
		var w wire.Writer
		w.Int(int64(a.round))
		a.nb.WriteValues(&w, j, a.b)
		out = append(out, mva.Message{From: a.node.ID, To: to, Kind: KindValue, Body: w.Bytes()})
	}
	return out
}

// bundleValues appends the hub's VALUES bundle of the round: every
// agent's values, in id order, one body sent to every neighbour. The
// hub's own are those every neighbour sees (New checked they are the
// same for all), the others' those they sent it, which, by the same
// check on their side, every agent sees.
func (a *Agent) bundleValues(out []mva.Message) []mva.Message {
	var w wire.Writer
	w.Int(int64(a.round))
	a.eachEntry(func(j int) {
		if j < 0 {
			w.Ints(a.nb.VisibleValues(0, a.b))
			return
		}
		w.Ints(a.values.Get(j))
	})
	return a.toAll(out, KindValues, w.Bytes())
}

// bundleGains appends the hub's GAINS bundle of the round: every agent's
// gain and, with joint moves, candidate values, in id order.
func (a *Agent) bundleGains(out []mva.Message) []mva.Message {
	var w wire.Writer
	w.Int(int64(a.round))
	a.eachEntry(func(j int) {
		g, cand := a.gain, []int(nil)
		if j < 0 {
			if a.joint {
				cand = a.nb.VisibleValues(0, a.bestB)
			}
		} else {
			m := a.gains.Get(j)
			g, cand = m.gain, m.cand
		}
		localsearch.WriteCost(&w, g)
		if a.joint {
			w.Ints(cand)
		}
	})
	return a.toAll(out, KindGains, w.Bytes())
}

// eachEntry calls f for every agent of the run in id order with its
// neighbour position, −1 for the agent itself.
func (a *Agent) eachEntry(f func(j int)) {
	j := 0
	for k := range len(a.nb.Neighbours) + 1 {
		if k == a.node.ID {
			f(-1)
			continue
		}
		f(j)
		j++
	}
}

func (a *Agent) toAll(out []mva.Message, kind string, body []byte) []mva.Message {
	for _, to := range a.nb.Neighbours {
		out = append(out, mva.Message{From: a.node.ID, To: to, Kind: kind, Body: body})
	}
	return out
}
