// Package energyround coordinates a street's energy homes (planner =
// "energy") over MQTT in `hearth run`: the best responses that
// devices/street runs in process (street.Coordinate), home by home in a
// fixed order, with each home's planned import per slot published on a
// topic of the round and read by the others.
//
// # Protocol
//
// The energy homes of a round, in the order of the neighbourhood file,
// take turns as street.Coordinate's members do. Every home first plans
// alone and publishes its load as sweep 0; once it holds every other
// home's sweep 0, sweep s = 1, 2, … runs: at its turn a home answers the
// others' latest loads (the homes before it in the order have published
// sweep s, those after it sweep s−1) with the street's peak term as a
// convex price on its import, adopts the answer when it lowers the
// street's objective by more than street.DefaultGain of it, and publishes
// its load (new or kept) as sweep s, saying whether it moved. A sweep in
// which no home moved ends the round, as do street.DefaultRounds sweeps;
// every home sees the same messages, so all end at the same sweep. The
// objective is a potential (each adopted answer lowers it), so the
// sweeps settle; the same order and the same arithmetic give the plans
// that `hearth sim` finds for the same street. Where the street has a
// [feeder] limit or a neighbours key, each turn is street.Street.Answer
// on the whole street rebuilt from the loads held (Config.Street, View):
// its links, and its share of the limit, the limit less the other homes'
// commitments (the energy homes' highest import per window, the compiled
// homes' committed caps of their final loads). Where the sweeps end above
// a hard feeder limit, the breakout phases of street.Street.Breakout
// follow, as street.CoordinateStreet runs them: every home holds the
// same loads of the last sweep, so every home raises the same windows'
// prices and the sweeps go on, numbered on.
//
// A round always ends: every wait is bounded by the round's deadline
// (the live round time-out). A home that has not answered by then is
// named in the log, and each home publishes the plan it holds — its last
// adopted answer, which the checker has passed — never a plan made from
// a message it could not verify.
//
// # Messages
//
// A home's load of a round is a JSON object on
//
//	<prefix>/home/<home>/round/<round>/load
//
// (under the home's own topics, which per-home broker rules already let
// it publish and everyone read), never retained, signed with the home's
// Ed25519 key like every other round message (mqtt/sign: the signature
// covers the topic, so a load cannot be moved to another round or home).
// Decode drops what is retained, unsigned, signed by another key, badly
// signed or malformed (a round, home or slot count other than the
// topic's and the round's, a sweep out of range, a number that is not
// finite, a negative import), with an error naming the topic and the
// fault; an older sweep than one already held is ignored, so a replayed
// message changes nothing. While it waits, a home publishes its latest
// load again every Heartbeat, so that a home that subscribed late (the
// processes of a street start apart) still receives it.
//
// # Mixed streets
//
// Where the street also has compiled homes, a round continues in phases
// in which the compiled homes and the energy homes answer each other in
// turn, each phase ending with every home's final load (Phases,
// phase.go).
package energyround

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hearth-dcop/hearth/mqtt/sign"
	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// Load is one home's planned load in one sweep of a round.
type Load struct {
	Round string `json:"round"`
	Home  string `json:"home"`
	// Sweep is 0 for the plan made alone, then the sweep of best
	// responses it belongs to.
	Sweep int `json:"sweep"`
	// Slot0 is the start of the round's horizon (RFC 3339): homes
	// that plan from different slots are not in the same round.
	Slot0 string `json:"slot0"`
	// ImportKW is the home's planned import per slot (kW, ≥ 0).
	ImportKW []float64 `json:"import_kw"`
	// Cost is what the home's plan costs in the street's objective
	// (its bill, penalties and wear; street.Objective's part of it).
	Cost float64 `json:"cost"`
	// Moved says that the home adopted a new answer in this sweep; in a
	// final load, that the phase moved some home (Phases).
	Moved bool `json:"moved"`
	// Final marks a home's load at the end of a phase of a mixed
	// street's round (Phases): an energy home's after the phase's
	// sweeps, a compiled home's after its answer.
	Final bool `json:"final,omitempty"`
	// CommittedKW is, in a compiled home's final load, its committed
	// cap per coordination window (kW, ≥ 0): the energy homes' share of
	// the feeder limit is the limit less the street's caps.
	CommittedKW []float64 `json:"committed_kw,omitempty"`
	// Infeasible, in an energy home's final load, is why the phase
	// failed: the street's best responses end above a hard feeder limit
	// (the reason street.Street.CheckHard names). Every home that reads
	// it fails its round with that reason (Phases.Await), as `hearth
	// sim` fails the street, instead of waiting for the phase's loads
	// until the round's time-out.
	Infeasible string `json:"infeasible,omitempty"`
}

// maxReason bounds an Infeasible reason's length (bytes).
const maxReason = 1024

// MaxSweeps bounds a message's sweep: a round never runs more.
const MaxSweeps = 1000

// maxKW bounds a home's import in one slot: beyond it a number is a
// fault, not a load.
const maxKW = 1e6

// Topic is home's load topic of round under prefix.
func Topic(prefix, home, round string) string {
	return topic.HomeTopic(prefix, home, "round", round, "load")
}

// Filter subscribes to every home's loads of every round under prefix.
func Filter(prefix string) string { return prefix + "/home/+/round/#" }

// ErrDropped is wrapped by every error of Decode.
var ErrDropped = errors.New("energy round load dropped")

// ParseTopic returns the home and the round of a load topic under
// prefix, false for any other topic.
func ParseTopic(prefix, t string) (home, round string, ok bool) {
	rest, ok := strings.CutPrefix(t, prefix+"/home/")
	if !ok {
		return "", "", false
	}
	lv := strings.Split(rest, "/")
	if len(lv) != 4 || lv[1] != "round" || lv[3] != "load" || topic.CheckName(lv[0]) != nil || topic.CheckName(lv[2]) != nil {
		return "", "", false
	}
	return lv[0], lv[2], true
}

// Encode returns l's payload for topic, signed by signer (nil: unsigned,
// for a street run without keys).
func Encode(t string, l Load, signer *sign.Signer) ([]byte, error) {
	b, err := json.Marshal(l)
	if err != nil {
		return nil, fmt.Errorf("energy round load: %w", err)
	}
	if signer == nil {
		return b, nil
	}
	return signer.Seal(t, b), nil
}

// Expect is what Decode holds a message to: the round's slots and the
// start of its horizon.
type Expect struct {
	Slots int
	Slot0 time.Time
}

// Decode opens and checks a message received on topic t under prefix.
// With keys, only a payload that t's home signed passes; without, the
// content is read as it is (a signature, if any, is stripped unchecked).
// Every error wraps ErrDropped and names the topic and the fault.
func Decode(prefix, t string, retained bool, payload []byte, keys *sign.Keyring, want Expect) (Load, error) {
	l, err := decode(prefix, t, retained, payload, keys)
	if err != nil {
		return Load{}, err
	}
	if err := l.check(t, want); err != nil {
		return Load{}, err
	}
	return l, nil
}

// decode opens a message and checks it against its topic, whatever the
// round's slots and horizon.
func decode(prefix, t string, retained bool, payload []byte, keys *sign.Keyring) (Load, error) {
	home, round, ok := ParseTopic(prefix, t)
	if !ok {
		return Load{}, fmt.Errorf("%w: %s: not a load topic (%s)", ErrDropped, t, Topic(prefix, "HOME", "ROUND"))
	}
	if retained {
		return Load{}, fmt.Errorf("%w: %s: retained (loads are never retained: a retained one is left over or forged)", ErrDropped, t)
	}
	content := payload
	if keys != nil {
		m, err := keys.Open(t, payload, func(s string) bool { return s == home })
		if err != nil {
			return Load{}, fmt.Errorf("%w: %s: %w", ErrDropped, t, err)
		}
		content = m.Content
	} else if m, _, err := sign.Parse(payload); err == nil {
		content = m.Content
	}
	var l Load
	dec := json.NewDecoder(bytes.NewReader(content))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return Load{}, fmt.Errorf("%w: %s: %w", ErrDropped, t, err)
	}
	if dec.More() {
		return Load{}, fmt.Errorf("%w: %s: data after the JSON object", ErrDropped, t)
	}
	bad := func(format string, args ...any) (Load, error) {
		return Load{}, fmt.Errorf("%w: %s: %s", ErrDropped, t, fmt.Sprintf(format, args...))
	}
	switch {
	case l.Round != round:
		return bad("round %q, but the topic's is %q", l.Round, round)
	case l.Home != home:
		return bad("home %q, but the topic's is %q", l.Home, home)
	case l.Sweep < 0 || l.Sweep > MaxSweeps:
		return bad("sweep %d outside [0, %d]", l.Sweep, MaxSweeps)
	case math.IsNaN(l.Cost) || math.IsInf(l.Cost, 0):
		return bad("cost %v is not a finite number", l.Cost)
	case l.Infeasible != "" && !l.Final:
		return bad("infeasible in a load that is not final")
	case len(l.Infeasible) > maxReason || !utf8.ValidString(l.Infeasible) || strings.ContainsFunc(l.Infeasible, unicode.IsControl):
		return bad("infeasible: not a reason of at most %d bytes of printable text", maxReason)
	}
	for k, v := range l.ImportKW {
		if math.IsNaN(v) || v < 0 || v > maxKW {
			return bad("import_kw[%d] = %v outside [0, %g] kW", k, v, float64(maxKW))
		}
	}
	for k, v := range l.CommittedKW {
		if math.IsNaN(v) || v < 0 || v > maxKW {
			return bad("committed_kw[%d] = %v outside [0, %g] kW", k, v, float64(maxKW))
		}
	}
	return l, nil
}

// check holds a decoded load to the round's slots and horizon (want).
func (l Load) check(t string, want Expect) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrDropped, t, fmt.Sprintf(format, args...))
	}
	if len(l.ImportKW) != want.Slots {
		return bad("import_kw has %d slots, the round %d", len(l.ImportKW), want.Slots)
	}
	if !want.Slot0.IsZero() {
		s0, err := time.Parse(time.RFC3339, l.Slot0)
		if err != nil {
			return bad("slot0 %q: %v", l.Slot0, err)
		}
		if !s0.Equal(want.Slot0) {
			return bad("slot0 %s, but this home's round starts at %s", l.Slot0, want.Slot0.Format(time.RFC3339))
		}
	}
	return nil
}
