package energyround

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/mqtt/sign"
	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// Compiled holds the loads that the compiled homes of a mixed street
// publish with their plans (<prefix>/home/<home>/load, retained, signed
// by the home, report.LoadPayload): in a round, the energy homes take
// the compiled homes' load of the same round as fixed background (Base),
// as `hearth sim` answers the protocol's plan.
type Compiled struct {
	prefix string
	keys   *sign.Keyring
	log    *slog.Logger

	mu     sync.Mutex
	latest map[string]compiledLoad
	// ahead is the latest horizon start each home is known to plan
	// from (Ahead), its published load not yet there.
	ahead  map[string]time.Time
	errs   map[string]bool
	notify chan struct{}
}

type compiledLoad struct {
	round string
	start time.Time
	kw    []float64
	// caps are the home's committed caps per window (kW), nil where
	// its payload says none.
	caps []float64
}

// NewCompiled returns a holder of the compiled homes' loads under
// prefix, verified with keys (nil: unsigned).
func NewCompiled(prefix string, keys *sign.Keyring, log *slog.Logger) *Compiled {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Compiled{prefix: prefix, keys: keys, log: log, latest: map[string]compiledLoad{}, ahead: map[string]time.Time{}, errs: map[string]bool{}, notify: make(chan struct{}, 1)}
}

// Ahead records that home plans from the horizon starting at start (its
// final load of a phase says so before its plan is published): Base
// does not wait for its load of an earlier horizon.
func (c *Compiled) Ahead(home string, start time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if start.After(c.ahead[home]) {
		c.ahead[home] = start
	}
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// LoadFilter subscribes to every home's published load.
func LoadFilter(prefix string) string { return topic.HomeTopic(prefix, "+", "load") }

// Receive takes a message on LoadFilter. A payload that does not verify
// or decode is dropped, logged once per fault, and returned as an error.
func (c *Compiled) Receive(t string, payload []byte) error {
	rest, ok := strings.CutPrefix(t, c.prefix+"/home/")
	home, last, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || last != "load" || topic.CheckName(home) != nil {
		return nil
	}
	l, err := c.decode(t, home, payload)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		if !c.errs[err.Error()] {
			c.errs[err.Error()] = true
			c.log.Warn("compiled home's load dropped", "err", err)
		}
		return err
	}
	c.latest[home] = l
	select {
	case c.notify <- struct{}{}:
	default:
	}
	return nil
}

func (c *Compiled) decode(t, home string, payload []byte) (compiledLoad, error) {
	content := payload
	if c.keys != nil {
		m, err := c.keys.Open(t, payload, func(s string) bool { return s == home })
		if err != nil {
			return compiledLoad{}, fmt.Errorf("%w: %s: %w", ErrDropped, t, err)
		}
		content = m.Content
	} else if m, _, err := sign.Parse(payload); err == nil {
		content = m.Content
	}
	var lp report.LoadPayload
	if err := json.Unmarshal(content, &lp); err != nil {
		return compiledLoad{}, fmt.Errorf("%w: %s: %w", ErrDropped, t, err)
	}
	if lp.Home != home || len(lp.Slots) == 0 {
		return compiledLoad{}, fmt.Errorf("%w: %s: home %q with %d slots", ErrDropped, t, lp.Home, len(lp.Slots))
	}
	start, err := time.Parse(time.RFC3339, lp.Slots[0].Start)
	if err != nil {
		return compiledLoad{}, fmt.Errorf("%w: %s: slot 0's start %q: %w", ErrDropped, t, lp.Slots[0].Start, err)
	}
	l := compiledLoad{round: lp.Round, start: start, kw: make([]float64, len(lp.Slots))}
	for k, s := range lp.Slots {
		if math.IsNaN(s.KW) || math.Abs(s.KW) > maxKW {
			return compiledLoad{}, fmt.Errorf("%w: %s: slot %d: %v kW", ErrDropped, t, k, s.KW)
		}
		l.kw[k] = s.KW
	}
	for w, v := range lp.CommittedKW {
		if math.IsNaN(v) || v < 0 || v > maxKW {
			return compiledLoad{}, fmt.Errorf("%w: %s: committed_kw[%d] = %v outside [0, %g] kW", ErrDropped, t, w, v, float64(maxKW))
		}
	}
	l.caps = lp.CommittedKW
	return l, nil
}

// Base waits until every home of homes has published its load of round
// (of any round, for ""; the latest) on the horizon from slot0 with
// slots slots, or until deadline, and returns their load that flows per
// slot (kW: each home's positive draw, as the peak term counts it),
// summed in homes' order, and the homes whose load did not come (left
// out of the sum). A home whose latest load, or what Ahead says of it,
// already plans a later horizon is not waited for: no load of this one
// will come (a compiled home's first round may plan the next slot ahead
// of its boundary).
func (c *Compiled) Base(ctx context.Context, homes []string, round string, slot0 time.Time, slots int, deadline time.Time) ([]float64, []string, error) {
	got, missing, err := c.Loads(ctx, homes, round, slot0, slots, deadline)
	if err != nil {
		return nil, missing, err
	}
	base := make([]float64, slots)
	for _, h := range homes {
		for t, v := range got[h].ImportKW {
			base[t] += v
		}
	}
	return base, missing, nil
}

// Loads is Base home by home: each home's load that flows per slot (kW,
// ImportKW) and its committed caps per window (CommittedKW, as its
// payload gives them: nil for none), as the final loads of a phase
// carry them, for the street the energy homes answer in
// (street.StreetOf: the [coordination] neighbours' links, the [feeder]
// limit less the compiled homes' caps). A home missing has no entry.
func (c *Compiled) Loads(ctx context.Context, homes []string, round string, slot0 time.Time, slots int, deadline time.Time) (map[string]Load, []string, error) {
	dl := time.NewTimer(time.Until(deadline))
	defer dl.Stop()
	for {
		got := map[string]Load{}
		var missing []string
		waiting := false
		c.mu.Lock()
		for _, h := range homes {
			l, ok := c.latest[h]
			if !ok || round != "" && l.round != round || !l.start.Equal(slot0) || len(l.kw) != slots {
				missing = append(missing, h)
				waiting = waiting || (!ok || !l.start.After(slot0)) && !c.ahead[h].After(slot0)
				continue
			}
			flow := make([]float64, slots)
			for t, v := range l.kw {
				flow[t] = math.Max(v, 0)
			}
			got[h] = Load{Round: l.round, Home: h, Slot0: slot0.Format(time.RFC3339), ImportKW: flow, CommittedKW: slices.Clone(l.caps), Final: true}
		}
		c.mu.Unlock()
		if len(missing) == 0 || !waiting {
			return got, missing, nil
		}
		select {
		case <-ctx.Done():
			return nil, missing, ctx.Err()
		case <-dl.C:
			return got, missing, nil
		case <-c.notify:
		}
	}
}
