package devices

import (
	"errors"
	"fmt"
)

// Part names what an Error points at, so that package config can turn it
// into the file, line and key the value came from.
type Part string

// The parts an Error can point at. Index is the element's index in its
// slice (Home.Rules, Home.Devices, Neighbourhood.Windows, …), or −1 for the
// whole field.
const (
	PartHorizon    Part = "horizon"
	PartPrices     Part = "prices"
	PartWindow     Part = "window"
	PartLevels     Part = "levels"
	PartWeights    Part = "weights"
	PartFeeder     Part = "feeder"
	PartLinks      Part = "links"
	PartHome       Part = "home"
	PartBackground Part = "background"
	PartOutside    Part = "outside"
	PartDevice     Part = "device"
	PartProperty   Part = "property"
	PartRule       Part = "rule"
)

// Error is a fault in a neighbourhood or home model. Home is "" for a
// neighbourhood-wide fault.
type Error struct {
	Home  string
	Part  Part
	Index int
	Msg   string
	// Infeasible marks a rule set that no schedule can satisfy (as
	// opposed to a malformed model).
	Infeasible bool
}

func (e *Error) Error() string {
	where := string(e.Part)
	if e.Index >= 0 {
		where = fmt.Sprintf("%s %d", e.Part, e.Index)
	}
	if e.Home != "" {
		return fmt.Sprintf("home %s: %s: %s", e.Home, where, e.Msg)
	}
	return fmt.Sprintf("%s: %s", where, e.Msg)
}

// Is makes errors.Is(err, ErrInfeasible) true for an Infeasible error.
func (e *Error) Is(target error) bool { return target == ErrInfeasible && e.Infeasible }

// ErrInfeasible matches errors about rules (or a feeder limit) that no
// schedule can satisfy.
var ErrInfeasible = errors.New("infeasible")

// ErrTooLarge is wrapped by errors about state spaces or tables beyond
// the configured limits.
var ErrTooLarge = errors.New("too large")

func errorf(home string, part Part, index int, format string, args ...any) *Error {
	return &Error{Home: home, Part: part, Index: index, Msg: fmt.Sprintf(format, args...)}
}
