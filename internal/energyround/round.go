package energyround

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/street"
	"github.com/hearth-dcop/hearth/mqtt/sign"
)

// DefaultHeartbeat is how often a waiting home publishes its latest load
// again.
const DefaultHeartbeat = 500 * time.Millisecond

// Config is one home's part in one round.
type Config struct {
	Prefix string
	Round  string
	// Home is this home; Homes the round's energy homes in the street's
	// order, Home among them.
	Home  string
	Homes []string
	// Slot0 is the start of the round's horizon (every home's the same).
	Slot0 time.Time
	// Base is the rest of the street's load per slot (kW: compiled
	// homes' load that flows, held fixed in this round; nil for none).
	Base []float64
	// Peak is the street's peak term (street.PeakOf): with no weight or
	// no slot there is nothing to coordinate and no message is sent.
	Peak street.Peak
	// Street, when not nil, is the street the homes answer in
	// (street.StreetOf of the whole neighbourhood: its peak term, the
	// compiled homes' loads, the [coordination] neighbours' links, the
	// [feeder] limit with the compiled homes' committed caps), Base and
	// Peak then unused; Energy names its energy homes in its members'
	// order, every home of Homes among them (one not in Homes counts
	// with no load: it is offline). Each turn is then street.Street's
	// Answer on the whole street as this home sees it, the turn of
	// `hearth sim`'s street.CoordinateStreet. Nil: the energy homes and
	// Base, every pair linked, no feeder limit.
	Street *street.Street
	Energy []string
	// Options tune the answers; Rounds bounds the sweeps (0:
	// street.DefaultRounds), Gain the least relative gain (0:
	// street.DefaultGain) of the whole street's objective.
	Options street.Options
	// Deadline ends the round however far it got.
	Deadline time.Time
	// Heartbeat is how often a waiting home publishes its latest load
	// again (0: DefaultHeartbeat).
	Heartbeat time.Duration
	// Keys verify the neighbours' loads and sign this home's (nil:
	// unsigned, `hearth run --insecure`).
	Keys *sign.Keyring
	// Publish sends a payload on a topic (not retained).
	Publish func(ctx context.Context, topic string, payload []byte) error
	Log     *slog.Logger
}

// Result is what a home's round did.
type Result struct {
	// Sweeps of best responses run (0: none, the peak term is off),
	// Moves the answers adopted by every home together.
	Sweeps, Moves int
	// Missing are the homes whose load did not come by the deadline
	// (the round ended there, with this home's plan as it stood).
	Missing []string
	// Objective is the street's objective (street.Objective of every
	// home's last load and the base) where every load came.
	Objective float64
	// Others is the other homes' import per slot summed, Base included,
	// at the end (kW): what a later one-sided answer is made against.
	Others []float64
	// OthersCost is the other homes' Cost summed at the end.
	OthersCost float64
	// Dropped counts the messages Decode refused.
	Dropped int
	// Loads are the other homes' latest loads at the end (with
	// Config.Street: what AnswerStreet answers later).
	Loads map[string]Load
}

// Exchange receives the loads of one home's rounds: its handler
// (Receive) is the MQTT client's for Filter, and a round (Run) reads what
// it holds. Messages of a round other than the one running are ignored.
type Exchange struct {
	prefix string
	keys   *sign.Keyring
	log    *slog.Logger

	mu      sync.Mutex
	round   string
	want    Expect
	homes   []string
	latest  map[string]Load
	dropped int
	errs    map[string]bool
	notify  chan struct{}
}

// NewExchange returns an exchange for loads under prefix, verified with
// keys (nil: unsigned).
func NewExchange(prefix string, keys *sign.Keyring, log *slog.Logger) *Exchange {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Exchange{prefix: prefix, keys: keys, log: log, notify: make(chan struct{}, 1)}
}

// begin makes round the one received.
func (x *Exchange) begin(round string, homes []string, want Expect) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.round, x.homes, x.want = round, homes, want
	x.latest, x.dropped, x.errs = map[string]Load{}, 0, map[string]bool{}
}

// end stops receiving round's loads.
func (x *Exchange) end() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.round = ""
}

// Receive takes a message from the broker. It returns Decode's error for
// a message of the running round that is dropped (logged once per
// topic and fault), nil otherwise.
func (x *Exchange) Receive(t string, retained bool, payload []byte) error {
	home, round, ok := ParseTopic(x.prefix, t)
	x.mu.Lock()
	cur, want, homes := x.round, x.want, x.homes
	x.mu.Unlock()
	if ok && (round != cur || cur == "" || !slices.Contains(homes, home)) {
		return nil // another round's, or a home not in this one
	}
	l, err := Decode(x.prefix, t, retained, payload, x.keys, want)
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.round != cur {
		return nil
	}
	if err != nil {
		x.dropped++
		if !x.errs[err.Error()] {
			x.errs[err.Error()] = true
			x.log.Warn("energy round load dropped", "err", err)
		}
		return err
	}
	if old, ok := x.latest[l.Home]; ok && old.Sweep >= l.Sweep {
		return nil // a heartbeat, a late copy or a replay
	}
	x.latest[l.Home] = l
	select {
	case x.notify <- struct{}{}:
	default:
	}
	return nil
}

// get returns home's latest load at sweep ≥ sweep.
func (x *Exchange) get(home string, sweep int) (Load, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	l, ok := x.latest[home]
	return l, ok && l.Sweep >= sweep
}

func (x *Exchange) droppedCount() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.dropped
}

// errTimedOut is the deadline's, inside Run.
var errTimedOut = errors.New("round deadline")

// Run is this home's part in round c.Round: me, planned alone already
// (street.PlanAlone: me.Plan is its alone plan, checked), answers the
// other homes' loads until a sweep without a move, c.Options.Rounds
// sweeps or the deadline. me.Plan is then the plan to publish (every
// adopted answer has passed the checker). The error is ctx's, or a
// planning or publishing failure; a deadline is no error (Missing names
// who did not answer).
func Run(ctx context.Context, x *Exchange, me *street.Member, c Config) (Result, error) {
	var res Result
	if !c.on() {
		return res, nil
	}
	idx := slices.Index(c.Homes, c.Home)
	if idx < 0 {
		return res, fmt.Errorf("energy round %s: home %s is not among %v", c.Round, c.Home, c.Homes)
	}
	if c.Street != nil {
		for _, h := range c.Homes {
			if !slices.Contains(c.Energy, h) {
				return res, fmt.Errorf("energy round %s: home %s is not among the street's energy homes %v", c.Round, h, c.Energy)
			}
		}
	}
	if len(c.Homes) == 1 && c.Street != nil {
		// The only energy home online answers the rest of the street
		// as street.CoordinateStreet does in process.
		s, ms, _ := View(c.Street, c.Energy, me, nil)
		cr, err := street.CoordinateStreet(ctx, ms, s, c.Options)
		if err != nil {
			return res, err
		}
		res.Sweeps, res.Moves, res.Objective = cr.Rounds, cr.Moves, cr.Final
		return res, nil
	}
	if len(c.Homes) == 1 {
		// The only energy home answers the rest of the street (Base)
		// as street.Coordinate does in process: no message to send.
		if c.Base == nil {
			return res, nil
		}
		cr, err := street.Coordinate(ctx, []*street.Member{me}, c.Base, c.Peak, c.Options)
		if err != nil {
			return res, err
		}
		res.Sweeps, res.Moves, res.Objective = cr.Rounds, cr.Moves, cr.Final
		res.Others = slices.Clone(c.Base)
		return res, nil
	}
	if c.Publish == nil {
		return res, fmt.Errorf("energy round %s: no way to publish", c.Round)
	}
	log := c.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	hb := c.Heartbeat
	if hb <= 0 {
		hb = DefaultHeartbeat
	}
	rounds := c.Options.Rounds
	if rounds <= 0 {
		rounds = street.DefaultRounds
	}
	gain := c.Options.Gain
	if gain <= 0 {
		gain = street.DefaultGain
	}
	T := len(me.Home.Dt)
	x.begin(c.Round, c.Homes, Expect{Slots: T, Slot0: c.Slot0})
	defer x.end()
	var signer *sign.Signer
	if c.Keys != nil {
		if signer = c.Keys.Signer(c.Home); signer == nil {
			return res, fmt.Errorf("energy round %s: no private key for home %s", c.Round, c.Home)
		}
	}
	tp := Topic(c.Prefix, c.Home, c.Round)
	mine := Load{Round: c.Round, Home: c.Home, Slot0: c.Slot0.Format(time.RFC3339)}
	publish := func() error {
		b, err := Encode(tp, mine, signer)
		if err != nil {
			return err
		}
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := c.Publish(pctx, tp, b); err != nil {
			return fmt.Errorf("energy round %s: publish load: %w", c.Round, err)
		}
		return nil
	}
	set := func(sweep int, moved bool) {
		mine.Sweep, mine.Moved = sweep, moved
		mine.ImportKW = slices.Clone(me.Plan.Import)
		mine.Cost = me.Plan.Cost() - me.Plan.Coordination
	}
	// await waits for home's load of sweep, publishing this home's
	// again every heartbeat.
	await := func(home string, sweep int) (Load, error) {
		tick := time.NewTicker(hb)
		defer tick.Stop()
		dl := time.NewTimer(time.Until(c.Deadline))
		defer dl.Stop()
		for {
			if l, ok := x.get(home, sweep); ok {
				return l, nil
			}
			select {
			case <-ctx.Done():
				return Load{}, ctx.Err()
			case <-dl.C:
				return Load{}, errTimedOut
			case <-x.notify:
			case <-tick.C:
				if err := publish(); err != nil {
					log.Warn("energy round load not published again", "round", c.Round, "err", err)
				}
			}
		}
	}
	timedOut := func(home string) (Result, error) {
		res.Missing = nil
		for _, h := range c.Homes {
			if h == c.Home {
				continue
			}
			if _, ok := x.get(h, 0); !ok || h == home {
				res.Missing = append(res.Missing, h)
			}
		}
		res.Dropped = x.droppedCount()
		log.Warn("energy round ended at its deadline; publishing this home's plan as it stands",
			"round", c.Round, "waiting_for", home, "sweeps", res.Sweeps, "deadline", c.Deadline.Format(time.RFC3339))
		return res, nil
	}
	others := func() ([]float64, float64) {
		base := make([]float64, T)
		copy(base, c.Base)
		cost := 0.0
		for _, h := range c.Homes {
			if h == c.Home {
				continue
			}
			l, _ := x.get(h, 0)
			for t, v := range l.ImportKW {
				base[t] += v
			}
			cost += l.Cost
		}
		return base, cost
	}

	latest := func() map[string]Load {
		out := map[string]Load{}
		for _, h := range c.Homes {
			if h == c.Home {
				continue
			}
			if l, ok := x.get(h, 0); ok {
				out[h] = l
			}
		}
		return out
	}

	set(0, false)
	if err := publish(); err != nil {
		return res, err
	}
	for _, h := range c.Homes {
		if h == c.Home {
			continue
		}
		if _, err := await(h, 0); err != nil {
			if errors.Is(err, errTimedOut) {
				return timedOut(h)
			}
			return res, err
		}
	}
	// cs is the street the turns answer in: c.Street, with the weights
	// of a hard limit's breakout phases (street.Street.Breakout) once the
	// sweeps end above it, as street.CoordinateStreet runs them.
	var cs *street.Street
	if c.Street != nil {
		v := *c.Street
		cs = &v
	}
	sweep := 0
phases:
	for {
		// held is every other home's load of the sweep, as awaited.
		held := map[string]Load{}
		for k := 1; k <= rounds; k++ {
			sweep++
			res.Sweeps = sweep
			moved := false
			for i, h := range c.Homes {
				if i != idx {
					l, err := await(h, sweep)
					if err != nil {
						if errors.Is(err, errTimedOut) {
							return timedOut(h)
						}
						return res, err
					}
					if l.Sweep != sweep {
						// A home ahead of the order by a sweep cannot be:
						// its answer needs this home's.
						return res, fmt.Errorf("energy round %s: home %s sent sweep %d while this home awaited %d: the homes disagree on the round's order", c.Round, h, l.Sweep, sweep)
					}
					held[h] = l
					if l.Moved {
						moved = true
						res.Moves++
					}
					continue
				}
				var adopted bool
				if cs != nil {
					s, ms, i := View(cs, c.Energy, me, latest())
					o := c.Options
					if o.Gain <= 0 {
						o.Gain = gain
					}
					var err error
					if _, adopted, err = s.Answer(ctx, ms, i, s.Objective(ms), o); err != nil {
						return res, err
					}
				} else {
					base, otherCost := others()
					partial := street.Objective([]*street.Member{me}, base, c.Peak)
					o := c.Options
					o.Rounds = 1
					// street.Coordinate's threshold is Gain × |the street's
					// objective|; here it sees this home's part only.
					o.Gain = gain * math.Max(1, math.Abs(otherCost+partial)) / math.Max(1, math.Abs(partial))
					cr, err := street.Coordinate(ctx, []*street.Member{me}, base, c.Peak, o)
					if err != nil {
						return res, err
					}
					adopted = cr.Moves > 0
				}
				if adopted {
					moved = true
					res.Moves++
				}
				set(sweep, adopted)
				if err := publish(); err != nil {
					return res, err
				}
			}
			if !moved {
				break
			}
		}
		if cs == nil {
			break
		}
		// Every home holds the same loads of the last sweep, so every
		// home starts the same breakout phase, or none.
		_, ms, _ := View(cs, c.Energy, me, held)
		if !cs.Breakout(ms) {
			break phases
		}
	}
	res.Others, res.OthersCost = others()
	res.Objective = res.OthersCost + street.Objective([]*street.Member{me}, res.Others, c.Peak)
	res.Dropped = x.droppedCount()
	if c.Street != nil {
		res.Loads = latest()
		s, ms, _ := View(c.Street, c.Energy, me, res.Loads)
		res.Objective = s.Objective(ms)
		// As street.CoordinateStreet: a hard feeder limit the street
		// still exceeds after the sweeps is an error.
		if err := s.CheckHard(ms, res.Sweeps); err != nil {
			return res, fmt.Errorf("energy round %s: %w", c.Round, err)
		}
	}
	return res, nil
}

// on reports whether the round has anything to coordinate: a peak term,
// or a street with a feeder limit.
func (c *Config) on() bool {
	if s := c.Street; s != nil {
		return s.Peak.Weight > 0 && len(s.Peak.Slots) > 0 || s.Feeder.Limit > 0 && len(s.Feeder.Windows) > 0
	}
	return c.Peak.Weight > 0 && len(c.Peak.Slots) > 0
}

// View is street s (a template: it is copied) as home me sees it, with
// energy its energy homes in its members' order and loads the others'
// latest loads (one missing counts with no import and no cost): the
// members, the others standing in with their published import and
// cost, and me's index among them (−1 where me is not among energy).
func View(s *street.Street, energyHomes []string, me *street.Member, loads map[string]Load) (*street.Street, []*street.Member, int) {
	v := *s
	ms := make([]*street.Member, len(energyHomes))
	i := -1
	T := len(me.Home.Dt)
	for k, h := range energyHomes {
		if h == me.Home.Name {
			ms[k], i = me, k
			continue
		}
		p := &energy.Plan{Import: make([]float64, T)}
		if l, ok := loads[h]; ok && len(l.ImportKW) == T {
			p.Import, p.Objective = l.ImportKW, l.Cost
		}
		ms[k] = &street.Member{Home: &energy.Home{Name: h, Dt: me.Home.Dt}, Plan: p, Index: k}
	}
	return &v, ms, i
}

// Answer is a one-sided answer of me to the other homes' loads others
// (kW, the rest of the street's import per slot), their costs othersCost
// summed: the round a home runs alone when its inputs moved between the
// street's rounds. It reports whether me adopted a new plan.
func Answer(ctx context.Context, me *street.Member, others []float64, othersCost float64, pk street.Peak, o street.Options) (bool, error) {
	if pk.Weight <= 0 || len(pk.Slots) == 0 || others == nil {
		return false, nil
	}
	gain := o.Gain
	if gain <= 0 {
		gain = street.DefaultGain
	}
	partial := street.Objective([]*street.Member{me}, others, pk)
	o.Rounds = 1
	o.Gain = gain * math.Max(1, math.Abs(othersCost+partial)) / math.Max(1, math.Abs(partial))
	cr, err := street.Coordinate(ctx, []*street.Member{me}, others, pk, o)
	if err != nil {
		return false, err
	}
	return cr.Moves > 0, nil
}

// AnswerStreet is Answer on street s (Config.Street, with energyHomes
// its Config.Energy) and the other homes' loads of the last street
// round (Result.Loads): me's turn on the whole street as it stood.
func AnswerStreet(ctx context.Context, me *street.Member, s *street.Street, energyHomes []string, loads map[string]Load, o street.Options) (bool, error) {
	v, ms, i := View(s, energyHomes, me, loads)
	if i < 0 {
		return false, fmt.Errorf("home %s is not among the street's energy homes %v", me.Home.Name, energyHomes)
	}
	_, moved, err := v.Answer(ctx, ms, i, v.Objective(ms), o)
	return moved, err
}
