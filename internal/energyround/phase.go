package energyround

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/mqtt/sign"
)

// A mixed street's round in `hearth run` alternates, as `hearth sim`'s
// homesolve.Run.Answer does in process, between its two kinds of homes:
//
//	phase 0  the compiled homes' protocol; the energy homes answer its
//	         plans (Run, round R)
//	phase k  the compiled homes answer the energy homes' loads of phase
//	         k−1 (a distributed descent, homesolve.Run.AnswerHome); the
//	         energy homes answer theirs (Run, round PhaseRound(R, k))
//
// until the compiled homes' loads of a phase are those of the one before
// (nobody moved), the energy homes' round of a phase moved nobody, or
// MaxAnswers phases. Each home ends each phase with a final load: a
// Load with Final set on its load topic of PhaseRound(R, k), signed like
// every load; an energy home's is its import after the phase's sweeps,
// Moved when the phase moved any energy home, a compiled home's its load
// that flows after its answer (phase 0: the protocol's). Every home
// reads the same finals, so every home stops at the same phase. A
// waiting home publishes its own final again every heartbeat, so that a
// process that subscribed late still receives it; a phase whose finals
// do not all come by the round's deadline ends the alternation there,
// each home keeping the plan it holds.

// MaxAnswers bounds the phases after the first, as homesolve's Answer
// bounds its alternations.
const MaxAnswers = 6

// PhaseRound is the round name of phase k of round: round itself for
// phase 0, round-aK after.
func PhaseRound(round string, k int) string {
	if k == 0 {
		return round
	}
	return fmt.Sprintf("%s-a%d", round, k)
}

// maxPhaseRounds bounds the rounds whose finals Phases holds.
const maxPhaseRounds = 64

// Phases holds the final loads of a mixed street's phases (any home's,
// compiled or energy), received on Filter.
type Phases struct {
	prefix string
	keys   *sign.Keyring
	log    *slog.Logger

	// OnFinal, when not nil, is told of every final load taken, before
	// Await sees it and outside Phases' lock; set it before the first
	// message.
	OnFinal func(Load)

	mu     sync.Mutex
	finals map[string]map[string]Load
	order  []string
	errs   map[string]bool
	notify chan struct{}
}

// NewPhases returns a holder of final loads under prefix, verified with
// keys (nil: unsigned).
func NewPhases(prefix string, keys *sign.Keyring, log *slog.Logger) *Phases {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Phases{prefix: prefix, keys: keys, log: log, finals: map[string]map[string]Load{}, errs: map[string]bool{}, notify: make(chan struct{}, 1)}
}

// Receive takes a message on Filter; it keeps final loads only. A
// message that does not verify or decode is dropped (logged once per
// fault) and returned as an error; Exchange counts the drops of a
// running round.
func (p *Phases) Receive(t string, retained bool, payload []byte) error {
	if _, _, ok := ParseTopic(p.prefix, t); !ok {
		return nil
	}
	l, err := decode(p.prefix, t, retained, payload, p.keys)
	if err == nil && l.Final && p.OnFinal != nil {
		p.OnFinal(l)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		if !p.errs[err.Error()] && len(p.errs) < 256 {
			p.errs[err.Error()] = true
			p.log.Debug("load dropped", "err", err)
		}
		return err
	}
	if !l.Final {
		return nil
	}
	got, ok := p.finals[l.Round]
	if !ok {
		got = map[string]Load{}
		p.finals[l.Round] = got
		p.order = append(p.order, l.Round)
		if len(p.order) > maxPhaseRounds {
			delete(p.finals, p.order[0])
			p.order = p.order[1:]
		}
	}
	got[l.Home] = l
	select {
	case p.notify <- struct{}{}:
	default:
	}
	return nil
}

// Infeasible publishes l (a home's load of a phase's round) as its final
// load saying that the street cannot keep a hard feeder limit, for
// reason (what street.Street.CheckHard names; energy.ErrInfeasible's
// words, which Await's error wraps, are left off, and the text is cut to
// maxReason bytes of printable UTF-8). It is published like every final,
// with publish, signed by signer (nil: unsigned).
func Infeasible(ctx context.Context, prefix string, l Load, reason string, signer *sign.Signer, publish func(ctx context.Context, topic string, payload []byte) error) error {
	r := strings.TrimSuffix(reason, ": "+energy.ErrInfeasible.Error())
	r = strings.Map(func(c rune) rune {
		if unicode.IsControl(c) {
			return ' '
		}
		return c
	}, r)
	if len(r) > maxReason {
		r = strings.ToValidUTF8(r[:maxReason], "")
	}
	l.Infeasible = r
	_, err := Final(ctx, prefix, l, signer, publish, nil)
	return err
}

// ErrPhaseTimedOut is Await's when the deadline passed first.
var ErrPhaseTimedOut = errors.New("the phase's final loads did not all come by the round's deadline")

// Await waits until every home of homes has published its final load of
// round on the horizon want, or until deadline (ErrPhaseTimedOut, with
// the homes missing) or ctx's end. Every heartbeat (0:
// DefaultHeartbeat) it calls again, when not nil, so that the
// caller publishes its own final again for a process that subscribed
// late. A final of another horizon is a fault, named in the error. A
// final of any home of homes that says the street is infeasible
// (Load.Infeasible) ends the wait at once with an error wrapping
// energy.ErrInfeasible that names the home and its reason.
func (p *Phases) Await(ctx context.Context, round string, homes []string, want Expect, deadline time.Time, heartbeat time.Duration, again func()) (map[string]Load, []string, error) {
	if heartbeat <= 0 {
		heartbeat = DefaultHeartbeat
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	dl := time.NewTimer(time.Until(deadline))
	defer dl.Stop()
	for {
		out := map[string]Load{}
		var missing []string
		var failed *Load
		p.mu.Lock()
		for _, h := range homes {
			if l, ok := p.finals[round][h]; ok {
				out[h] = l
				if l.Infeasible != "" && failed == nil {
					failed = &l
				}
			} else {
				missing = append(missing, h)
			}
		}
		p.mu.Unlock()
		if failed != nil {
			if err := failed.check(Topic(p.prefix, failed.Home, round), want); err != nil {
				return nil, nil, err
			}
			return nil, missing, fmt.Errorf("energy home %s: %s: %w", failed.Home, failed.Infeasible, energy.ErrInfeasible)
		}
		if len(missing) == 0 {
			for _, h := range homes {
				if err := out[h].check(Topic(p.prefix, h, round), want); err != nil {
					return nil, nil, err
				}
			}
			return out, nil, nil
		}
		select {
		case <-ctx.Done():
			return nil, missing, ctx.Err()
		case <-dl.C:
			return nil, missing, ErrPhaseTimedOut
		case <-p.notify:
		case <-tick.C:
			if again != nil {
				again()
			}
		}
	}
}

// SameLoads reports whether homes' imports in a and b are the same to
// the last bit: a phase in which none of them moved.
func SameLoads(a, b map[string]Load, homes []string) bool {
	for _, h := range homes {
		if !slices.Equal(a[h].ImportKW, b[h].ImportKW) {
			return false
		}
	}
	return true
}

// AnyMoved reports whether any of homes' finals says its phase moved.
func AnyMoved(finals map[string]Load, homes []string) bool {
	for _, h := range homes {
		if finals[h].Moved {
			return true
		}
	}
	return false
}

// Final is home's final load of round: import (kW per slot, ≥ 0), moved
// as the phase did, published with publish on its load topic, signed by
// signer (nil: unsigned). It returns the function that publishes it
// (again).
func Final(ctx context.Context, prefix string, l Load, signer *sign.Signer, publish func(ctx context.Context, topic string, payload []byte) error, log *slog.Logger) (func(), error) {
	l.Final = true
	t := Topic(prefix, l.Home, l.Round)
	b, err := Encode(t, l, signer)
	if err != nil {
		return nil, err
	}
	send := func() error {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := publish(pctx, t, b); err != nil {
			return fmt.Errorf("energy round %s: publish final load: %w", l.Round, err)
		}
		return nil
	}
	if err := send(); err != nil {
		return nil, err
	}
	return func() {
		if err := send(); err != nil && log != nil {
			log.Warn("final load not published again", "round", l.Round, "err", err)
		}
	}, nil
}
