package mgm2

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/protocol/internal/localsearch"
)

// DefaultRounds is the number of rounds when "rounds" is absent.
const DefaultRounds = 50

// DefaultOfferProb is the probability of being an offerer, FRODO's and
// pyDCOP's default.
const DefaultOfferProb = 0.5

const (
	maxRounds = 1 << 30
	// maxEntries bounds the joint moves an offer may enumerate, so that
	// an agent with a huge boundary fails clearly instead of running out
	// of memory.
	maxEntries = 1 << 22
)

type phase int

const (
	waitValues phase = iota
	waitOffers
	waitAnswer
	waitGains
	waitGo
	finished
)

// Agent is one agent's MGM-2 state machine.
type Agent struct {
	node *mva.Node
	nb   *localsearch.Neighbourhood
	resp *localsearch.Responder
	rng  *rand.Rand

	rounds         int
	offerProb      float64
	positiveOnly   bool
	maxOffers      int
	overUnilateral bool
	init           localsearch.Init

	round int
	phase phase
	row   int
	b     []int

	// This round's unilateral move.
	uRow  int
	uGain localsearch.Cost
	// offerer is set when this agent offers this round; partner is then
	// the position of the neighbour offered to, and sent what it got.
	offerer bool
	partner int
	sent    []offer
	// committed is set when a joint move was agreed with mate (a
	// position): move to planned with joint gain cGain.
	committed bool
	mate      int
	planned   int
	cGain     localsearch.Cost
	goSelf    bool

	values  *localsearch.Mailbox[[]int]
	offers  *localsearch.Mailbox[[]offerIn]
	answers *localsearch.Mailbox[answer]
	gains   *localsearch.Mailbox[localsearch.Cost]
	gos     *localsearch.Mailbox[bool]

	// onRound, when set (by tests), is called at the end of every round.
	onRound func(round int, s roundStats)
}

// roundStats is what a round did at one agent, for tests.
type roundStats struct {
	row       int
	moved     bool
	offered   bool // sent a non-empty offer
	committed bool
}

// New returns agent n's MGM-2 state machine.
func New(n *mva.Node) (mva.Protocol, error) {
	nb, err := localsearch.New(n)
	if err != nil {
		return nil, fmt.Errorf("mgm2: %w", err)
	}
	a := &Agent{node: n, nb: nb, rng: localsearch.NewRand(n.Seed), partner: -1, mate: -1}
	cfg, err := ParseConfig(n.Params)
	if err != nil {
		return nil, err
	}
	a.rounds, a.offerProb, a.positiveOnly, a.maxOffers = cfg.Rounds, cfg.OfferProb, cfg.PositiveOffers, cfg.MaxOffers
	a.overUnilateral, a.init = cfg.AcceptOverUnilateral, cfg.Init
	if a.resp, err = localsearch.NewResponder(n, nb, a.localCost, cfg.Response); err != nil {
		return nil, fmt.Errorf("mgm2: %w", err)
	}
	k := len(nb.Neighbours)
	a.b = make([]int, len(nb.Domains))
	a.values = localsearch.NewMailbox[[]int](k, 1)
	a.offers = localsearch.NewMailbox[[]offerIn](k, 1)
	a.answers = localsearch.NewMailbox[answer](k, 1)
	a.gains = localsearch.NewMailbox[localsearch.Cost](k, 1)
	a.gos = localsearch.NewMailbox[bool](k, 1)
	return a, nil
}

// Checks counts the external-function evaluations and the unilateral
// best-response solver's checks (pipeline.CheckCounter); the local view's
// solver counts its own.
func (a *Agent) Checks() int64 { return a.nb.Checks() + a.resp.Checks() }

// ResponseCounts returns the agent's unilateral best responses computed
// exactly and by block descent under response=3
// (localsearch.Responder.ResponseCounts).
func (a *Agent) ResponseCounts() (exact, blocks int64) { return a.resp.ResponseCounts() }

// Done reports that the last round is over.
func (a *Agent) Done() bool { return a.phase == finished }

// Result returns the current boundary assignment; MGM-2 knows no global
// cost.
func (a *Agent) Result() mva.AgentResult {
	b := make([]int, len(a.b))
	a.nb.Decode(a.row, b)
	return mva.AgentResult{Boundary: b, Cost: math.NaN()}
}

func (a *Agent) localCost(ctx context.Context, row int) (localsearch.Cost, error) {
	return localsearch.RowCost(ctx, a.node.Local, row)
}

func (a *Agent) setRow(row int) {
	a.row = row
	a.nb.Decode(row, a.b)
}

// Start picks the initial row and sends round 1's values.
func (a *Agent) Start(ctx context.Context) ([]mva.Message, error) {
	row, err := localsearch.InitialRow(ctx, a.init, a.node.Local, a.nb.Rows(), a.rng)
	if err != nil {
		return nil, fmt.Errorf("mgm2: %w", err)
	}
	a.setRow(row)
	a.round = 1
	if a.rounds == 0 {
		a.phase = finished
		return nil, nil
	}
	return a.progress(ctx, a.sendValues(nil))
}

// Step handles one message.
func (a *Agent) Step(ctx context.Context, m mva.Message) ([]mva.Message, error) {
	if err := a.receive(m); err != nil {
		return nil, fmt.Errorf("mgm2: agent %d: %s from %d: %w", a.node.ID, m.Kind, m.From, err)
	}
	return a.progress(ctx, nil)
}

func (a *Agent) sendValues(out []mva.Message) []mva.Message {
	for j, to := range a.nb.Neighbours {
		w := a.header()
		a.nb.WriteValues(w, j, a.b)
		out = append(out, a.msg(to, KindValue, w))
	}
	return out
}

// progress runs every wave whose messages are all in.
func (a *Agent) progress(ctx context.Context, out []mva.Message) ([]mva.Message, error) {
	for {
		var err error
		switch {
		case a.phase == waitValues && a.values.Full():
			out, err = a.offerWave(ctx, out)
			a.phase = waitOffers
		case a.phase == waitOffers && a.offers.Full():
			out, err = a.answerWave(ctx, out)
			a.phase = waitAnswer
		case a.phase == waitAnswer && (!a.offerer || len(a.sent) == 0 || a.answers.Has(a.partner)):
			err = a.takeAnswer()
			out = a.gainWave(out)
			a.phase = waitGains
		case a.phase == waitGains && a.gains.Full():
			out = a.goWave(out)
			a.phase = waitGo
		case a.phase == waitGo && (!a.committed || a.gos.Has(a.mate)):
			err = a.endRound()
			if a.phase != finished {
				out = a.sendValues(out)
			}
		default:
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("mgm2: agent %d: round %d: %w", a.node.ID, a.round, err)
		}
	}
}

// takeAnswer applies the partner's answer to this agent's offer.
func (a *Agent) takeAnswer() error {
	want := 0
	if a.offerer && len(a.sent) > 0 {
		want = 1
		if ans := a.answers.Get(a.partner); ans.accept {
			if ans.entry >= len(a.sent) {
				return fmt.Errorf("acceptance of entry %d of an offer of %d", ans.entry, len(a.sent))
			}
			a.committed, a.mate = true, a.partner
			a.planned, a.cGain = a.sent[ans.entry].row, ans.gain
		}
	}
	if n := a.answerCount(); n != want {
		return fmt.Errorf("%d answers for %d offers made", n, want)
	}
	return nil
}

func (a *Agent) answerCount() int {
	n := 0
	for j := range a.nb.Neighbours {
		if a.answers.Has(j) {
			n++
		}
	}
	return n
}

func (a *Agent) gainWave(out []mva.Message) []mva.Message {
	g := a.uGain
	if a.committed {
		g = a.cGain
	}
	for _, to := range a.nb.Neighbours {
		w := a.header()
		localsearch.WriteCost(w, g)
		out = append(out, a.msg(to, KindGain, w))
	}
	return out
}

// goWave decides a committed agent's GO: its joint gain must beat every
// other neighbour's gain strictly, so that no neighbour outside the pair
// moves at the same time.
func (a *Agent) goWave(out []mva.Message) []mva.Message {
	if !a.committed {
		return out
	}
	a.goSelf = true
	for j := range a.nb.Neighbours {
		if j != a.mate && !a.gains.Get(j).Less(a.cGain) {
			a.goSelf = false
		}
	}
	kind := KindNoGo
	if a.goSelf {
		kind = KindGo
	}
	return append(out, a.msg(a.nb.Neighbours[a.mate], kind, a.header()))
}

// endRound moves (or not) and resets the round's state.
func (a *Agent) endRound() error {
	gos := 0
	for j := range a.nb.Neighbours {
		if a.gos.Has(j) {
			gos++
		}
	}
	want := 0
	if a.committed {
		want = 1
	}
	if gos != want {
		return fmt.Errorf("%d GO/NOGO messages, want %d", gos, want)
	}
	from := a.row
	if a.committed {
		if a.goSelf && a.gos.Get(a.mate) {
			a.setRow(a.planned)
		}
	} else if a.uGain.Positive() {
		wins := true
		for j, id := range a.nb.Neighbours {
			wins = wins && localsearch.Beats(a.uGain, a.node.ID, a.gains.Get(j), id)
		}
		if wins {
			a.setRow(a.uRow)
		}
	}
	if a.onRound != nil {
		a.onRound(a.round, roundStats{row: a.row, moved: a.row != from, offered: a.offerer && len(a.sent) > 0, committed: a.committed})
	}
	a.values.Advance()
	a.offers.Advance()
	a.answers.Advance()
	a.gains.Advance()
	a.gos.Advance()
	a.offerer, a.partner, a.sent = false, -1, nil
	a.committed, a.mate, a.goSelf = false, -1, false
	if a.round == a.rounds {
		a.phase = finished
		return nil
	}
	a.round++
	a.phase = waitValues
	return nil
}
