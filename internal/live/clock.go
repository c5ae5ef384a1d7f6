// Package live is what a home of `hearth run` needs to run a real (or a
// virtual) home: the clock it plans by, the live state of its devices and
// the series it plans against (decoded from MQTT payloads and files), the
// rolling horizon built from them, and the commands it publishes for the
// current slot. The daemon (internal/daemon) wires it to its rounds; this
// package holds no connection of its own except Client.
//
// Topics (prefix P, home H, device D):
//
//	P/home/H/state/D            in:  {"time": RFC 3339, "<property>": number, …, "plugged": bool}
//	P/home/H/forecast/pv        in:  {"start": RFC 3339, "step": "15m", "values": [kW, …]}
//	P/home/H/forecast/background
//	P/prices/import, P/prices/export   in: the same, in currency/kWh
//	P/home/H/prices/import, …/export    in: the same, home H's own tariff
//	P/home/H/availability       in:  every home's, so that rounds wait for all
//	P/home/H/command/D          out: Command, retained
//	P/home/H/set/D/<target>     in:  a user's target (Home Assistant)
//	P/home/H/availability       out: online / offline (last will)
package live

import (
	"errors"
	"fmt"
	"time"
)

// Clock is the time a home plans by: the wall clock, or (for tests and
// demonstrations) a clock that starts at a given time and runs Speed
// times faster than the wall clock.
type Clock struct {
	// origin is the clock's reading at epoch (wall time); a zero origin
	// is the wall clock itself.
	origin, epoch time.Time
	speed         float64
	// wall reads the wall clock (time.Now, or a test's).
	wall func() time.Time
}

// WallClock is the wall clock.
func WallClock() *Clock { return &Clock{speed: 1, wall: time.Now} }

// NewClock returns a clock that reads now at wall time epoch and runs
// speed times as fast as the wall clock. Every home of a street given
// the same now, epoch and speed reads the same time (to their wall
// clocks' agreement, NTP's job). A zero epoch means the wall clock's now.
func NewClock(now, epoch time.Time, speed float64, wall func() time.Time) (*Clock, error) {
	if speed <= 0 || speed > 1e6 {
		return nil, fmt.Errorf("speed %g: want a positive factor up to 1e6 (1 is real time)", speed)
	}
	if wall == nil {
		wall = time.Now
	}
	if epoch.IsZero() {
		epoch = wall()
	}
	if now.IsZero() {
		now = epoch
	}
	return &Clock{origin: now, epoch: epoch, speed: speed, wall: wall}, nil
}

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	w := c.wall()
	if c.origin.IsZero() {
		return w
	}
	// Local time: the files' clock times ("07:30") are local.
	return c.origin.Add(time.Duration(float64(w.Sub(c.epoch)) * c.speed)).Local()
}

// Wall is how long the wall clock takes while this clock advances d.
func (c *Clock) Wall(d time.Duration) time.Duration {
	if c.speed == 1 {
		return d
	}
	return time.Duration(float64(d) / c.speed)
}

// Speed is the clock's rate against the wall clock.
func (c *Clock) Speed() float64 { return c.speed }

// SlotStart is the start of the slot of length slot that holds t: slots
// are aligned on t's local midnight, so that 15-minute slots start at
// :00, :15, :30 and :45 whatever the day.
func SlotStart(t time.Time, slot time.Duration) time.Time {
	y, m, d := t.Date()
	midnight := time.Date(y, m, d, 0, 0, 0, 0, t.Location())
	if slot <= 0 {
		return t
	}
	k := t.Sub(midnight) / slot
	return midnight.Add(k * slot)
}

// ParseNow reads --now: RFC 3339, or "" for the wall clock.
func ParseNow(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, errors.New("want an RFC 3339 time such as 2026-11-26T06:00:00Z")
	}
	return t, nil
}
