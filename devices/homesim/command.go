package homesim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// Command is what a controller asks a device to do during one slot,
// published retained on <prefix>/home/<home>/command/<device>.
type Command struct {
	// Round is the coordination round that made the plan, for logs.
	Round string `json:"round"`
	// Created is when the plan was made; a later command for the same
	// slot replaces an earlier one.
	Created time.Time `json:"created"`
	// SlotStart and SlotEnd bound the slot the command is for.
	SlotStart time.Time `json:"slot_start"`
	SlotEnd   time.Time `json:"slot_end"`
	// Expires is when the command stops holding even inside its slot;
	// past it the device falls back to its idle action.
	Expires time.Time `json:"expires"`
	// Action names one of the device's actions.
	Action string `json:"action"`
	// PowerKW is the draw asked for: > 0 draws from the meter, < 0 feeds
	// it. Storage devices take it as their set point.
	PowerKW float64 `json:"power_kw"`
	// EnergyKWh, where given, is what the slot's plan moves through the
	// meter (> 0 drawn, < 0 fed back), counted from SlotStart or Created,
	// whichever is later. A storage device delivers it by SlotEnd in
	// place of the set point: what is left over the time left, within
	// its power, so that a late command or one made inside the slot
	// still stores what the plan needs (internal/live.Command). The
	// simulator counts it from when it first runs the command, which
	// is no earlier than either.
	EnergyKWh *float64 `json:"energy_kwh,omitempty"`
}

// maxCommandBytes bounds a command message: a command is a few hundred
// bytes, and a retained message of megabytes is a fault, not a command.
const maxCommandBytes = 16 << 10

// ParseCommand decodes and checks a command message. The error names the
// field that is wrong.
func ParseCommand(b []byte) (Command, error) {
	if len(b) > maxCommandBytes {
		return Command{}, fmt.Errorf("command of %d bytes: at most %d", len(b), maxCommandBytes)
	}
	var raw struct {
		Round     json.RawMessage `json:"round"`
		Created   *string         `json:"created"`
		SlotStart *string         `json:"slot_start"`
		SlotEnd   *string         `json:"slot_end"`
		Expires   *string         `json:"expires"`
		Action    *string         `json:"action"`
		PowerKW   *float64        `json:"power_kw"`
		EnergyKWh *float64        `json:"energy_kwh"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&raw); err != nil {
		return Command{}, fmt.Errorf("command: not a JSON object: %w", err)
	}
	if dec.More() {
		return Command{}, errors.New("command: data after the JSON object")
	}
	var c Command
	if len(raw.Round) > 0 {
		var s string
		var n json.Number
		switch {
		case json.Unmarshal(raw.Round, &s) == nil:
			c.Round = s
		case json.Unmarshal(raw.Round, &n) == nil:
			c.Round = n.String()
		default:
			return Command{}, errors.New("command: round: want a string or a number")
		}
	}
	times := []struct {
		name     string
		v        *string
		dst      *time.Time
		required bool
	}{
		{"created", raw.Created, &c.Created, false},
		{"slot_start", raw.SlotStart, &c.SlotStart, true},
		{"slot_end", raw.SlotEnd, &c.SlotEnd, true},
		{"expires", raw.Expires, &c.Expires, false},
	}
	for _, f := range times {
		if f.v == nil {
			if f.required {
				return Command{}, fmt.Errorf("command: %s is missing (an RFC 3339 time)", f.name)
			}
			continue
		}
		t, err := time.Parse(time.RFC3339, *f.v)
		if err != nil {
			return Command{}, fmt.Errorf("command: %s = %q: want an RFC 3339 time such as 2026-11-26T17:00:00Z", f.name, *f.v)
		}
		*f.dst = t
	}
	if !c.SlotEnd.After(c.SlotStart) {
		return Command{}, fmt.Errorf("command: slot_end %s is not after slot_start %s", c.SlotEnd.Format(time.RFC3339), c.SlotStart.Format(time.RFC3339))
	}
	if c.Expires.IsZero() {
		c.Expires = c.SlotEnd
	}
	if raw.Action == nil || *raw.Action == "" {
		return Command{}, errors.New("command: action is missing (the name of one of the device's actions)")
	}
	c.Action = *raw.Action
	if raw.PowerKW != nil {
		if math.IsNaN(*raw.PowerKW) || math.IsInf(*raw.PowerKW, 0) || math.Abs(*raw.PowerKW) > 1e4 {
			return Command{}, fmt.Errorf("command: power_kw = %g: want a finite power up to 10000 kW", *raw.PowerKW)
		}
		c.PowerKW = *raw.PowerKW
	}
	if e := raw.EnergyKWh; e != nil {
		if math.IsNaN(*e) || math.IsInf(*e, 0) || math.Abs(*e) > 1e5 {
			return Command{}, fmt.Errorf("command: energy_kwh = %g: want a finite energy up to 100000 kWh", *e)
		}
		c.EnergyKWh = e
	}
	return c, nil
}

// valid reports whether c holds at t.
func (c *Command) valid(t time.Time) bool {
	return !t.Before(c.SlotStart) && t.Before(c.SlotEnd) && t.Before(c.Expires)
}

// maxHeld bounds the commands kept per device: a controller publishes one
// per slot, and those in the past are dropped as time passes.
const maxHeld = 64

// book holds the commands received per device. The MQTT client's
// goroutine adds; the simulation reads.
type book struct {
	mu   sync.Mutex
	cmds map[string][]Command
}

func newBook() *book { return &book{cmds: map[string][]Command{}} }

// put keeps c: it replaces a command for the same slot created no later,
// and drops the oldest past maxHeld.
func (b *book) put(device string, c Command) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.cmds[device]
	for i := range l {
		if l[i].SlotStart.Equal(c.SlotStart) && l[i].SlotEnd.Equal(c.SlotEnd) {
			if !c.Created.Before(l[i].Created) {
				l[i] = c
			}
			return
		}
	}
	l = append(l, c)
	if len(l) > maxHeld {
		slices.SortFunc(l, func(x, y Command) int { return x.SlotEnd.Compare(y.SlotEnd) })
		l = l[len(l)-maxHeld:]
	}
	b.cmds[device] = l
}

// active returns the command valid at t, the latest created where several
// are, and forgets those that can no longer hold.
func (b *book) active(device string, t time.Time) (Command, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.cmds[device]
	var best Command
	found := false
	keep := l[:0]
	for _, c := range l {
		if !t.Before(c.SlotEnd) || !t.Before(c.Expires) {
			continue
		}
		keep = append(keep, c)
		if c.valid(t) && (!found || c.Created.After(best.Created)) {
			best, found = c, true
		}
	}
	b.cmds[device] = keep
	return best, found
}
