// Package flowbr is the improvement phase on the load that flows as a
// distributed protocol: homes exchange their per-slot loads (never their
// schedules) and take joint best responses to their neighbours' load,
// with the rule of devices/baseline.Improve's descent, so that homes that
// run as separate processes (`hearth run`) or as MQTT clients (`hearth
// sim`) get the same improvement as the in-process search.
//
// An agent is one home. What it does with a neighbour load — its best
// schedule, the gain over its adopted one — is the Responder's business
// (devices/baseline builds one per home); the protocol carries loads,
// gains and decisions. Rounds are synchronous, each of two waves:
//
//	LOAD(load)                   once, at the start: the adopted load
//	OFFER(r, gain, cand, last)   to every neighbour: the gain of the
//	                             sender's best response to its neighbours'
//	                             load, its candidate load when the gain is
//	                             positive, and the last round in which the
//	                             sender knows that some home moved
//	DECIDE(r, move)              to every neighbour: whether it moves
//
// The joint-move rule: rank the homes that gain by gain (larger first,
// ties to the lower id); a home moves when its gain exceeds the sum of its
// interactions with the movers ranked before it among its neighbours,
// 2·peak·Σ_t ΔP_i(t)·ΔP_j(t) over the coordinated slots. A home decides
// once every neighbour ranked before it has, so the movers are exactly
// those of the centralised rule, which takes the homes in rank order (a
// home's decision depends only on its higher-ranked neighbours'). The
// objective falls every round by at least the movers' gains less their
// interactions.
//
// Termination needs no global protocol: once a round passes in which no
// home moves, none ever will (the loads no longer change), and moves
// happen in every round before it. Each OFFER carries the last round with
// a move the sender knows of, so that news travels one hop per round; a
// home stops after round r when r − last > D, D being at least the
// diameter of its component of the neighbour graph and the same for all
// its homes (Config.Diameter). Every home of a component then stops after
// the same round, D+1 rounds after the last move, or at Config.Rounds.
//
// A limit on the whole street (Config.Fits: a feeder limit) is kept only
// where every home is every other's neighbour: each home then sees every
// load and decision and applies the in-process rule itself — where the
// round's movers break the limit only the highest-ranked one moves, and
// where that one breaks it too the descent ends — so all homes take the
// same step.
package flowbr

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/wire"
)

// Message kinds.
const (
	KindLoad   = "flow-load"
	KindOffer  = "flow-offer"
	KindDecide = "flow-decide"
)

// Responder is one home's local problem with its neighbours' per-slot
// load as a cost.
type Responder interface {
	// Respond computes the home's best response to the neighbour load N
	// (one value per slot) and returns its gain over the adopted schedule
	// (0 where there is none) and, when the gain is positive, the
	// candidate's per-slot load.
	Respond(ctx context.Context, N []float64) (gain float64, cand []float64, err error)
	// Adopt makes the last response's candidate the adopted schedule.
	Adopt()
}

// Config is one agent's part of the street.
type Config struct {
	// ID is the home's index and Neighbours the homes it shares a peak
	// term with, in the order their loads are summed (the order decides
	// the rounding of the sum, so it must be the in-process search's).
	ID         int
	Neighbours []int
	// Load is the home's adopted per-slot load at the start.
	Load []float64
	// Slots are the coordinated slots, where loads interact, and PeakW
	// the weight of a squared load there (peak weight · Δ²).
	Slots []int
	PeakW float64
	// Ratio, when not nil, scales slot t's weight to PeakW·Ratio[t] (a
	// horizon of uneven slots: devices.Horizon.Ratio); nil weighs every
	// slot alike.
	Ratio []float64
	// Rounds bounds the rounds (> 0).
	Rounds int
	// Diameter is at least the diameter of the home's component of the
	// neighbour graph, the same for all its homes (Diameter).
	Diameter int
	// Fits, when not nil, is a limit on the whole street (a feeder
	// limit): it reports whether the street fits with every home's load
	// given by load. It needs every other home as a neighbour (a complete
	// graph), so that every home sees every load and decision and takes
	// the same step: where the round's movers break it, only the
	// highest-ranked mover moves, and where that breaks it too, the
	// descent ends (devices/baseline.Improve's rule).
	Fits func(load func(home int) []float64) bool
	// Homes is the number of homes of the street (with Fits).
	Homes int
}

// Agent is one home's protocol state machine (mva.Protocol).
type Agent struct {
	cfg  Config
	resp Responder
	// isNbr maps a neighbour to its position in cfg.Neighbours.
	isNbr map[int]int
	// loads[k] is neighbour k's adopted load; nil until its LOAD came.
	loads [][]float64
	nLoad int
	load  []float64

	round   int
	gain    float64
	cand    []float64
	offered bool
	decided bool
	move    bool
	// dirty is true when the home or a neighbour moved since the last
	// response: an unchanged neighbourhood gives the same response.
	dirty bool
	last  int
	done  bool
	// pending holds the OFFERs and DECIDEs of the current and later
	// rounds, by round and neighbour position.
	offers    map[int][]*offer
	decisions map[int][]*bool

	rounds, moves int
}

type offer struct {
	gain float64
	cand []float64
	last int
}

// New returns the agent of cfg.ID answering with r.
func New(cfg Config, r Responder) (*Agent, error) {
	if cfg.Rounds <= 0 {
		return nil, fmt.Errorf("flowbr: home %d: rounds %d, want > 0", cfg.ID, cfg.Rounds)
	}
	if cfg.Diameter < 0 {
		return nil, fmt.Errorf("flowbr: home %d: diameter %d", cfg.ID, cfg.Diameter)
	}
	a := &Agent{cfg: cfg, resp: r, isNbr: map[int]int{}, loads: make([][]float64, len(cfg.Neighbours)),
		load: cfg.Load, last: -1, dirty: true, offers: map[int][]*offer{}, decisions: map[int][]*bool{}}
	for k, j := range cfg.Neighbours {
		if j == cfg.ID {
			return nil, fmt.Errorf("flowbr: home %d is its own neighbour", cfg.ID)
		}
		if _, dup := a.isNbr[j]; dup {
			return nil, fmt.Errorf("flowbr: home %d: neighbour %d twice", cfg.ID, j)
		}
		a.isNbr[j] = k
	}
	if cfg.Fits != nil && len(cfg.Neighbours) != cfg.Homes-1 {
		return nil, fmt.Errorf("flowbr: home %d: a street-wide limit needs every home as a neighbour (%d of %d)", cfg.ID, len(cfg.Neighbours), cfg.Homes-1)
	}
	for _, t := range cfg.Slots {
		if t < 0 || t >= len(cfg.Load) {
			return nil, fmt.Errorf("flowbr: home %d: slot %d outside its %d-slot load", cfg.ID, t, len(cfg.Load))
		}
	}
	return a, nil
}

// Load is the home's adopted per-slot load now.
func (a *Agent) Load() []float64 { return a.load }

// Rounds is the number of rounds run and Moves the number of them in
// which this home moved.
func (a *Agent) Rounds() int { return a.rounds }

// Moves is the number of rounds in which this home moved.
func (a *Agent) Moves() int { return a.moves }

// Start sends the home's load to its neighbours (and runs its rounds
// alone when it has none).
func (a *Agent) Start(ctx context.Context) ([]mva.Message, error) {
	var w wire.Writer
	w.Floats(a.load)
	out := a.broadcast(KindLoad, w.Bytes())
	more, err := a.advance(ctx)
	return append(out, more...), err
}

// Step handles one message.
func (a *Agent) Step(ctx context.Context, m mva.Message) ([]mva.Message, error) {
	k, ok := a.isNbr[m.From]
	if !ok {
		return nil, fmt.Errorf("flowbr: home %d: message %s from %d, not a neighbour", a.cfg.ID, m.Kind, m.From)
	}
	r := wire.NewReader(m.Body)
	switch m.Kind {
	case KindLoad:
		l := r.Floats()
		if err := r.Err(); err != nil {
			return nil, fmt.Errorf("flowbr: %s from %d: %w", m.Kind, m.From, err)
		}
		if len(l) != len(a.load) {
			return nil, fmt.Errorf("flowbr: %s from %d: %d slots, want %d", m.Kind, m.From, len(l), len(a.load))
		}
		if a.loads[k] != nil {
			return nil, fmt.Errorf("flowbr: %s from %d twice", m.Kind, m.From)
		}
		a.loads[k] = l
		a.nLoad++
	case KindOffer:
		round := r.IntIn(0, a.cfg.Rounds)
		o := &offer{gain: r.Float()}
		if r.Bool() {
			o.cand = r.Floats()
		}
		o.last = r.IntIn(-1, a.cfg.Rounds)
		if err := r.Err(); err != nil {
			return nil, fmt.Errorf("flowbr: %s from %d: %w", m.Kind, m.From, err)
		}
		if o.gain < 0 || (o.gain > 0) != (o.cand != nil) || o.cand != nil && len(o.cand) != len(a.load) {
			return nil, fmt.Errorf("flowbr: %s from %d: gain %g with a %d-slot candidate", m.Kind, m.From, o.gain, len(o.cand))
		}
		if round < a.round {
			return nil, fmt.Errorf("flowbr: %s from %d for round %d, past (round %d)", m.Kind, m.From, round, a.round)
		}
		row := a.offers[round]
		if row == nil {
			row = make([]*offer, len(a.loads))
			a.offers[round] = row
		}
		if row[k] != nil {
			return nil, fmt.Errorf("flowbr: %s from %d for round %d twice", m.Kind, m.From, round)
		}
		row[k] = o
	case KindDecide:
		round := r.IntIn(0, a.cfg.Rounds)
		move := r.Bool()
		if err := r.Err(); err != nil {
			return nil, fmt.Errorf("flowbr: %s from %d: %w", m.Kind, m.From, err)
		}
		if round < a.round {
			return nil, fmt.Errorf("flowbr: %s from %d for round %d, past (round %d)", m.Kind, m.From, round, a.round)
		}
		row := a.decisions[round]
		if row == nil {
			row = make([]*bool, len(a.loads))
			a.decisions[round] = row
		}
		if row[k] != nil {
			return nil, fmt.Errorf("flowbr: %s from %d for round %d twice", m.Kind, m.From, round)
		}
		row[k] = &move
	default:
		return nil, fmt.Errorf("flowbr: home %d: unknown message kind %q from %d", a.cfg.ID, m.Kind, m.From)
	}
	if a.done {
		return nil, fmt.Errorf("flowbr: home %d: %s from %d after the last round", a.cfg.ID, m.Kind, m.From)
	}
	return a.advance(ctx)
}

// advance takes every step the messages so far allow.
func (a *Agent) advance(ctx context.Context) ([]mva.Message, error) {
	var out []mva.Message
	for !a.done {
		if a.nLoad < len(a.loads) {
			return out, nil
		}
		if !a.offered {
			if err := a.respond(ctx); err != nil {
				return out, err
			}
			var w wire.Writer
			w.Int(int64(a.round))
			w.Float(a.gain)
			w.Bool(a.cand != nil)
			if a.cand != nil {
				w.Floats(a.cand)
			}
			w.Int(int64(a.last))
			out = append(out, a.broadcast(KindOffer, w.Bytes())...)
			a.offered = true
		}
		offers := a.offers[a.round]
		if len(a.loads) > 0 && (offers == nil || count(offers) < len(a.loads)) {
			return out, nil
		}
		if !a.decided {
			ok, err := a.decide(offers)
			if err != nil || !ok {
				return out, err
			}
			var w wire.Writer
			w.Int(int64(a.round))
			w.Bool(a.move)
			out = append(out, a.broadcast(KindDecide, w.Bytes())...)
			a.decided = true
		}
		dec := a.decisions[a.round]
		if len(a.loads) > 0 && (dec == nil || count(dec) < len(a.loads)) {
			return out, nil
		}
		a.finishRound(offers, dec)
	}
	return out, nil
}

func count[T any](row []*T) int {
	n := 0
	for _, x := range row {
		if x != nil {
			n++
		}
	}
	return n
}

// respond computes the round's gain and candidate, or keeps the last
// ones when nothing moved around the home since (the gain was then 0: a
// home that gains and has no moving neighbour ranked before it moves).
func (a *Agent) respond(ctx context.Context) error {
	if !a.dirty {
		return nil
	}
	N := make([]float64, len(a.load))
	for _, l := range a.loads {
		for t, v := range l {
			N[t] += math.Max(v, 0)
		}
	}
	g, cand, err := a.resp.Respond(ctx, N)
	if err != nil {
		return fmt.Errorf("flowbr: home %d, round %d: %w", a.cfg.ID, a.round, err)
	}
	if g < 0 || math.IsNaN(g) || g > 0 && len(cand) != len(a.load) {
		return fmt.Errorf("flowbr: home %d, round %d: the responder gave gain %g with a %d-slot candidate", a.cfg.ID, a.round, g, len(cand))
	}
	if g == 0 {
		cand = nil
	}
	a.gain, a.cand, a.dirty = g, cand, false
	return nil
}

// before reports whether neighbour j, with gain gj, is ranked before this
// home.
func (a *Agent) before(j int, gj float64) bool {
	return gj > a.gain || gj == a.gain && j < a.cfg.ID
}

// decide applies the joint-move rule once every neighbour ranked before
// the home has decided; ok is false while one has not.
func (a *Agent) decide(offers []*offer) (bool, error) {
	if a.gain <= 0 {
		a.move = false
		return true, nil
	}
	dec := a.decisions[a.round]
	// The movers ranked before the home, in rank order, as the
	// centralised rule sums them.
	type mover struct {
		j    int
		gain float64
		k    int
	}
	var movers []mover
	for k, j := range a.cfg.Neighbours {
		o := offers[k]
		if o.gain <= 0 || !a.before(j, o.gain) {
			continue
		}
		if dec == nil || dec[k] == nil {
			return false, nil
		}
		if *dec[k] {
			movers = append(movers, mover{j, o.gain, k})
		}
	}
	for x := 1; x < len(movers); x++ {
		for y := x; y > 0; y-- {
			p, q := movers[y-1], movers[y]
			if q.gain > p.gain || q.gain == p.gain && q.j < p.j {
				movers[y-1], movers[y] = q, p
			}
		}
	}
	inter := 0.0
	for _, m := range movers {
		inter += a.interaction(a.loads[m.k], offers[m.k].cand)
	}
	a.move = inter < a.gain
	return true, nil
}

// interaction is 2·peak·Σ_t ΔP_i(t)·ΔP_j(t) over the coordinated slots.
func (a *Agent) interaction(jLoad, jCand []float64) float64 {
	sum := 0.0
	for _, t := range a.cfg.Slots {
		di := math.Max(a.cand[t], 0) - math.Max(a.load[t], 0)
		dj := math.Max(jCand[t], 0) - math.Max(jLoad[t], 0)
		if a.cfg.Ratio != nil {
			di *= a.cfg.Ratio[t]
		}
		sum += di * dj
	}
	return 2 * a.cfg.PeakW * sum
}

// finishRound applies the round's moves and starts the next round, or
// ends the run.
func (a *Agent) finishRound(offers []*offer, dec []*bool) {
	moves := make([]bool, len(a.loads))
	for k := range a.loads {
		moves[k] = *dec[k]
	}
	if a.cfg.Fits != nil && !a.limit(offers, moves) {
		// Not even the highest-ranked mover fits: the descent ends here
		// on every home.
		a.rounds++
		a.done = true
		return
	}
	moved := false
	if a.move {
		a.resp.Adopt()
		a.load, moved = a.cand, true
		a.moves++
	}
	for k := range a.loads {
		if moves[k] {
			a.loads[k], moved = offers[k].cand, true
		}
		a.last = max(a.last, offers[k].last)
	}
	if moved {
		a.last = a.round
	}
	a.dirty = moved
	delete(a.offers, a.round)
	delete(a.decisions, a.round)
	a.rounds++
	if a.round-a.last > a.cfg.Diameter || a.round+1 >= a.cfg.Rounds {
		a.done = true
		return
	}
	a.round++
	a.offered, a.decided, a.move = false, false, false
}

// limit applies Config.Fits to the round's moves (a.move and moves, by
// neighbour position): where the street breaks the limit with them all,
// only the highest-ranked mover keeps its move; ok is false when even
// that one breaks it.
func (a *Agent) limit(offers []*offer, moves []bool) (ok bool) {
	pos := map[int]int{}
	for k, j := range a.cfg.Neighbours {
		pos[j] = k
	}
	load := func(j int) []float64 {
		if j == a.cfg.ID {
			if a.move {
				return a.cand
			}
			return a.load
		}
		k := pos[j]
		if moves[k] {
			return offers[k].cand
		}
		return a.loads[k]
	}
	if a.cfg.Fits(load) {
		return true
	}
	// The highest-ranked mover, by gain and then id.
	top, topGain := -1, 0.0
	consider := func(j int, g float64) {
		if top < 0 || g > topGain || g == topGain && j < top {
			top, topGain = j, g
		}
	}
	if a.move {
		consider(a.cfg.ID, a.gain)
	}
	for k, j := range a.cfg.Neighbours {
		if moves[k] {
			consider(j, offers[k].gain)
		}
	}
	if top < 0 {
		return true // nobody moves: the street is as it was, which fits
	}
	a.move = a.move && top == a.cfg.ID
	for k, j := range a.cfg.Neighbours {
		moves[k] = moves[k] && j == top
	}
	return a.cfg.Fits(load)
}

func (a *Agent) broadcast(kind string, body []byte) []mva.Message {
	out := make([]mva.Message, len(a.cfg.Neighbours))
	for k, j := range a.cfg.Neighbours {
		out[k] = mva.Message{From: a.cfg.ID, To: j, Kind: kind, Body: body}
	}
	return out
}

// Done reports whether the home has run its last round.
func (a *Agent) Done() bool { return a.done }

// Result carries no variables: the caller reads the home's schedule from
// its Responder. Cost is NaN (the protocol has no global view).
func (a *Agent) Result() mva.AgentResult { return mva.AgentResult{Cost: math.NaN()} }

// ErrNoRounds is returned by Diameter for an empty graph.
var errLinks = errors.New("flowbr: a link outside the homes")

// Diameter returns, for every home of a graph of n homes with the given
// links, a bound on the diameter of its component, the same for all the
// component's homes: the component's size less one, or twice the
// eccentricity of its lowest home, whichever is smaller.
func Diameter(n int, links [][2]int) ([]int, error) {
	adj := make([][]int, n)
	for _, l := range links {
		if l[0] < 0 || l[0] >= n || l[1] < 0 || l[1] >= n {
			return nil, fmt.Errorf("%w: %v", errLinks, l)
		}
		adj[l[0]] = append(adj[l[0]], l[1])
		adj[l[1]] = append(adj[l[1]], l[0])
	}
	out := make([]int, n)
	dist := make([]int, n)
	for i := range dist {
		dist[i] = -1
	}
	for root := range n {
		if dist[root] >= 0 {
			continue
		}
		dist[root] = 0
		comp := []int{root}
		ecc := 0
		for q := 0; q < len(comp); q++ {
			u := comp[q]
			for _, v := range adj[u] {
				if dist[v] < 0 {
					dist[v] = dist[u] + 1
					ecc = max(ecc, dist[v])
					comp = append(comp, v)
				}
			}
		}
		d := min(2*ecc, len(comp)-1)
		for _, u := range comp {
			out[u] = d
		}
	}
	return out, nil
}
