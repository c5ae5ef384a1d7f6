package devices

import "fmt"

// RuleWindow returns the trajectory indices [from, to) that rule r checks
// and whether it must hold at some index of them (any) or at every one.
// The windows are those of the package documentation; an empty ANY window
// can never be satisfied, an empty ALL window imposes nothing.
func (h Horizon) RuleWindow(r *Rule) (from, to int, anyOf bool) {
	n := h.Indices()
	if h.Dynamics == SHDS {
		switch r.Prefix {
		case Passive:
			from, to = 0, h.Slots-1
		case Before:
			from, to, anyOf = 0, r.T1, true
		case After:
			from, to, anyOf = r.T1, h.Slots-1, true
		case At:
			from, to = r.T1, r.T1+1
			if h.AtVacuous {
				to = from
			}
		case Within:
			from, to = r.T1, r.T2
		}
	} else {
		switch r.Prefix {
		case Passive:
			from, to = 0, n
		case Before:
			from, to, anyOf = 0, r.T1+1, true
		case After:
			from, to, anyOf = r.T1, n, true
		case At:
			from, to = r.T1, r.T1+1
		case Within:
			from, to = r.T1, r.T2+1
		}
	}
	from = min(max(from, 0), n)
	to = min(max(to, from), n)
	return from, to, anyOf
}

// CheckTime returns an error when r's time lies outside the horizon (the
// ranges of shds-model.md §1.5 under SHDS dynamics; 0..Slots under Full).
func (h Horizon) CheckTime(r *Rule) error {
	H := h.Slots
	lo, hi := 0, H
	if h.Dynamics == SHDS {
		switch r.Prefix {
		case Before:
			lo, hi = 1, H
		case After:
			lo, hi = 0, H-2
		case At:
			lo, hi = 0, H-1
		}
	}
	switch r.Prefix {
	case Passive:
		return nil
	case Within:
		if r.T1 < 0 || r.T2 > H || r.T1 > r.T2 || (h.Dynamics == SHDS && r.T1 == r.T2) {
			op := "≤"
			if h.Dynamics == SHDS {
				op = "<"
			}
			return fmt.Errorf("within %d %d is outside the horizon: it needs 0 ≤ T1 %s T2 ≤ %d", r.T1, r.T2, op, H)
		}
		return nil
	}
	if r.T1 < lo || r.T1 > hi {
		return fmt.Errorf("%s %d is outside the horizon: %s needs %d ≤ T ≤ %d (%d slots)", r.Prefix, r.T1, r.Prefix, lo, hi, H)
	}
	return nil
}
