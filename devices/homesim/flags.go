package homesim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseTime reads a simulated instant: RFC 3339 ("2026-11-26T17:00:00Z"),
// a local date and time ("2026-11-26T17:00"), or a clock time ("17:00")
// on ref's date, both in loc.
func ParseTime(s string, loc *time.Location, ref time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	if m, err := parseClock(s); err == nil {
		r := ref.In(loc)
		return time.Date(r.Year(), r.Month(), r.Day(), 0, m, 0, 0, loc), nil
	}
	return time.Time{}, fmt.Errorf("%q: want RFC 3339 (2026-11-26T17:00:00Z), a local date and time (2026-11-26T17:00) or a clock time (17:00)", s)
}

// parseClock reads "HH:MM" as minutes after midnight.
func parseClock(s string) (int, error) {
	h, m, ok := strings.Cut(s, ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || hh < 0 || hh > 23 || mm < 0 || mm > 59 || len(m) != 2 {
		return 0, fmt.Errorf("%q is not a clock time HH:MM", s)
	}
	return hh*60 + mm, nil
}

// TripSpec is a --car flag: DEVICE=LEAVE-RETURN[@CHARGE] (a daily
// absence, back with CHARGE in the device's unit) or DEVICE=home (never
// leaves).
type TripSpec struct {
	Trip
	// Home is true for DEVICE=home.
	Home bool
}

// ParseTripSpec reads a --car flag.
func ParseTripSpec(s string) (TripSpec, error) {
	dev, spec, ok := strings.Cut(s, "=")
	if !ok || dev == "" {
		return TripSpec{}, fmt.Errorf("%q: want DEVICE=LEAVE-RETURN (e.g. ev=07:30-17:45, optionally @KWH for the charge it comes back with) or DEVICE=home", s)
	}
	if spec == "home" {
		return TripSpec{Trip: Trip{Device: dev}, Home: true}, nil
	}
	spec, back, hasBack := strings.Cut(spec, "@")
	leave, ret, ok := strings.Cut(spec, "-")
	if !ok {
		return TripSpec{}, fmt.Errorf("%q: want LEAVE-RETURN clock times, e.g. 07:30-17:45", s)
	}
	l, err := parseClock(leave)
	if err != nil {
		return TripSpec{}, fmt.Errorf("%q: leave: %w", s, err)
	}
	r, err := parseClock(ret)
	if err != nil {
		return TripSpec{}, fmt.Errorf("%q: return: %w", s, err)
	}
	if l == r {
		return TripSpec{}, fmt.Errorf("%q: the car leaves and returns at the same time", s)
	}
	tr := Trip{Device: dev, Leave: l, Return: r}
	if hasBack {
		v, err := strconv.ParseFloat(back, 64)
		if err != nil || v < 0 || v > 1e6 {
			return TripSpec{}, fmt.Errorf("%q: @%s: want the charge the car comes back with, a non-negative number", s, back)
		}
		tr.ArriveWith = &v
	}
	return TripSpec{Trip: tr}, nil
}

// ApplyTrips returns a home's trips: defaults, with every spec for a
// device the home has replacing its default.
func ApplyTrips(defaults []Trip, specs []TripSpec, has func(device string) bool) []Trip {
	out := []Trip{}
	for _, d := range defaults {
		overridden := false
		for _, s := range specs {
			overridden = overridden || s.Device == d.Device
		}
		if !overridden {
			out = append(out, d)
		}
	}
	for _, s := range specs {
		if !s.Home && has(s.Device) {
			out = append(out, s.Trip)
		}
	}
	return out
}
