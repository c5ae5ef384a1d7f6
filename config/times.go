package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/devices"
)

// clock converts the times a configuration writes into slot boundaries.
type clock struct {
	start int // minutes after midnight of boundary 0
	slot  int // minutes per slot
	slots int
	// bounds, for a horizon of uneven slots ([horizon] segments), holds
	// each boundary's minutes after start (slots+1 of them); nil when
	// every slot lasts slot minutes.
	bounds []int
	// rolling: a goal time past the horizon is errBeyond (LoadOptions).
	rolling bool
}

// parseClock reads "HH:MM" (00:00 to 24:00).
func parseClock(s string) (int, error) {
	h, m, ok := strings.Cut(s, ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || len(m) != 2 || hh < 0 || hh > 24 || mm < 0 || mm > 59 || hh == 24 && mm != 0 {
		return 0, fmt.Errorf("%q is not a clock time HH:MM", s)
	}
	return hh*60 + mm, nil
}

func fmtClock(min int) string {
	min = ((min % 1440) + 1440) % 1440
	return fmt.Sprintf("%02d:%02d", min/60, min%60)
}

// goalBoundary is boundary for rule times: a clock time inside a slot
// applies at that slot's end (a goal "before 06:30" with hourly slots is
// checked at 07:00, the first boundary at or after it), where windows and
// price periods must lie on boundaries.
func (c clock) goalBoundary(tok string) (int, error) {
	if _, err := strconv.Atoi(tok); err == nil {
		return c.boundary(tok)
	}
	m, err := parseClock(tok)
	if err != nil {
		return 0, fmt.Errorf("time %q: write HH:MM or a slot number", tok)
	}
	d := ((m-c.start)%1440 + 1440) % 1440
	if d == 0 && c.rolling {
		// On a rolling horizon slot 0 holds now: a goal at its start is
		// the next day's.
		d = 1440
	}
	b := (d + c.slot - 1) / c.slot
	if c.bounds != nil {
		b, _ = slices.BinarySearch(c.bounds, d)
	}
	if b > c.slots && c.rolling {
		return 0, errBeyond
	}
	if b > c.slots {
		return 0, fmt.Errorf("time %s is outside the horizon %s–%s", tok, fmtClock(c.start), fmtClock(c.start+c.span()))
	}
	return b, nil
}

// boundary turns a time token into a slot boundary 0..slots: a slot
// number, or a clock time counted forward from the horizon's start (so a
// horizon starting at 17:00 puts 07:00 fourteen hours later).
func (c clock) boundary(tok string) (int, error) {
	if n, err := strconv.Atoi(tok); err == nil {
		if n < 0 || n > c.slots {
			return 0, fmt.Errorf("time %d is outside the horizon: slot numbers run from 0 to %d", n, c.slots)
		}
		return n, nil
	}
	m, err := parseClock(tok)
	if err != nil {
		return 0, fmt.Errorf("time %q: write HH:MM or a slot number", tok)
	}
	d := ((m-c.start)%1440 + 1440) % 1440
	if c.bounds != nil {
		b, ok := slices.BinarySearch(c.bounds, d)
		switch {
		case b > c.slots:
			return 0, fmt.Errorf("time %s is outside the horizon %s–%s", tok, fmtClock(c.start), fmtClock(c.start+c.span()))
		case !ok:
			return 0, fmt.Errorf("time %s is not a slot boundary: the segments' slots around it run %s–%s", tok, fmtClock(c.start+c.bounds[b-1]), fmtClock(c.start+c.bounds[b]))
		}
		return b, nil
	}
	if d%c.slot != 0 {
		return 0, fmt.Errorf("time %s is not a slot boundary: slots of %d min start at %s", tok, c.slot, fmtClock(c.start))
	}
	if d/c.slot > c.slots {
		return 0, fmt.Errorf("time %s is outside the horizon %s–%s", tok, fmtClock(c.start), fmtClock(c.start+c.slots*c.slot))
	}
	return d / c.slot, nil
}

// slotStart returns slot s's start in minutes after boundary 0.
func (c clock) slotStart(s int) int {
	if c.bounds != nil {
		return c.bounds[s]
	}
	return s * c.slot
}

// span returns the horizon's length in minutes.
func (c clock) span() int {
	if c.bounds != nil {
		return c.bounds[c.slots]
	}
	return c.slots * c.slot
}

// minutes reads a duration ("1h", "30m", "1h30m") in whole minutes.
func minutes(s string) (int, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 || d%time.Minute != 0 || d > 24*time.Hour {
		return 0, fmt.Errorf("%q is not a whole number of minutes between 1m and 24h (write e.g. \"1h\" or \"30m\")", s)
	}
	return int(d / time.Minute), nil
}

// rollingTimes sets the times of a rule read on a rolling horizon from
// its time tokens (ParseRule's, in order). A goal whose time has passed
// is the next day's (goalBoundary); a window that has begun and not yet
// ended keeps the part still ahead, from boundary 1 (boundary 0 holds the
// state read now, which no plan changes) to its end or the horizon's. A
// goal past the horizon, or a window that has not begun and ends past it,
// is errBeyond: a later round includes it whole (a window that began
// only at the horizon's end would otherwise pull tomorrow's comfort into
// tonight's plan).
func (c clock) rollingTimes(r *devices.Rule, toks []string) error {
	var err error
	switch {
	case r.Prefix == devices.Passive:
	case r.Prefix == devices.Within && len(toks) == 2:
		r.T1, r.T2, err = c.window(toks[0], toks[1])
	case len(toks) >= 1:
		r.T1, err = c.goalBoundary(toks[0])
	}
	if err != nil {
		return fmt.Errorf("rule %q: %w", r.Text, err)
	}
	return nil
}

// window returns the boundaries of "within a b" on a rolling horizon
// (rollingTimes). Slot numbers are read as on a fixed horizon.
func (c clock) window(a, b string) (int, int, error) {
	_, errA := strconv.Atoi(a)
	_, errB := strconv.Atoi(b)
	if errA == nil || errB == nil {
		t1, err := c.goalBoundary(a)
		if err != nil {
			return 0, 0, err
		}
		t2, err := c.goalBoundary(b)
		return t1, t2, err
	}
	m1, err := parseClock(a)
	if err != nil {
		return 0, 0, fmt.Errorf("time %q: write HH:MM or a slot number", a)
	}
	m2, err := parseClock(b)
	if err != nil {
		return 0, 0, fmt.Errorf("time %q: write HH:MM or a slot number", b)
	}
	d1 := ((m1-c.start)%1440 + 1440) % 1440
	d2 := ((m2-c.start)%1440 + 1440) % 1440
	if d2 == 0 {
		// A window that ends at slot 0's start has ended.
		d2 = 1440
	}
	up := func(d int) int { return (d + c.slot - 1) / c.slot }
	if c.bounds != nil {
		// The first boundary at or after d; past the horizon, slots+1.
		up = func(d int) int {
			b, _ := slices.BinarySearch(c.bounds, d)
			return b
		}
	}
	if d1 == 0 && d2 < 1440 || d1 > d2 {
		// Running: it began at or before slot 0's start.
		return 1, min(up(d2), c.slots), nil
	}
	if d1 == 0 {
		d1 = 1440
	}
	t1, t2 := up(d1), up(d2)
	if t2 > c.slots {
		return 0, 0, errBeyond
	}
	return t1, t2, nil
}
