package devices

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Relation compares a property with a rule's goal.
type Relation int

// The relations of the SHDS grammar.
const (
	Eq Relation = iota
	Neq
	Lt
	Leq
	Gt
	Geq
)

var relNames = [...]string{"eq", "neq", "lt", "leq", "gt", "geq"}

func (r Relation) String() string {
	if r >= 0 && int(r) < len(relNames) {
		return relNames[r]
	}
	return fmt.Sprintf("Relation(%d)", int(r))
}

// Holds reports whether v r goal.
func (r Relation) Holds(v, goal int64) bool {
	switch r {
	case Eq:
		return v == goal
	case Neq:
		return v != goal
	case Lt:
		return v < goal
	case Leq:
		return v <= goal
	case Gt:
		return v > goal
	case Geq:
		return v >= goal
	}
	return false
}

// ParseRelation reads one of eq neq lt leq gt geq.
func ParseRelation(s string) (Relation, bool) {
	for i, n := range relNames {
		if n == s {
			return Relation(i), true
		}
	}
	return 0, false
}

// Prefix is a rule's time qualifier; Passive rules have none.
type Prefix int

// The prefixes of the SHDS grammar.
const (
	Passive Prefix = iota
	Before
	After
	At
	Within
)

var prefixNames = [...]string{"", "before", "after", "at", "within"}

func (p Prefix) String() string {
	if p >= 0 && int(p) < len(prefixNames) {
		return prefixNames[p]
	}
	return fmt.Sprintf("Prefix(%d)", int(p))
}

// Rule is a hard constraint on a property's trajectory. Active rules are
// goals with a time (`ev charge geq 40 before 07:00`); passive rules are
// bounds over the whole horizon (`ev charge leq 60`).
type Rule struct {
	// Text is the rule as written, for messages.
	Text               string
	Location, Property string
	Rel                Relation
	// Goal is in the property's natural units.
	Goal   float64
	Prefix Prefix
	// T1 and T2 are times in slots from the horizon's start (T2 only for
	// within).
	T1, T2 int
	// Soft makes the rule a goal the plan comes as close to as it can:
	// instead of excluding the schedules that break it, each missing unit
	// costs Weights.Miss (Shortfall says how much a value misses by).
	// The zero value is a hard rule, the SHDS semantics; TOML homes make
	// their rules soft unless they say hard = true (docs/toml.md).
	Soft bool
}

// Shortfall returns by how many steps v misses "v rel goal": 0 when it
// holds; for strict relations one step past the goal counts as meeting
// it, and neq misses by one step.
func (r Relation) Shortfall(v, goal int64) int64 {
	switch r {
	case Eq:
		if v > goal {
			return v - goal
		}
		return goal - v
	case Neq:
		if v == goal {
			return 1
		}
	case Lt:
		if v >= goal {
			return v - goal + 1
		}
	case Leq:
		if v > goal {
			return v - goal
		}
	case Gt:
		if v <= goal {
			return goal - v + 1
		}
	case Geq:
		if v < goal {
			return goal - v
		}
	}
	return 0
}

// Active reports whether r is a goal with a time.
func (r *Rule) Active() bool { return r.Prefix != Passive }

// String returns r in the SHDS grammar.
func (r *Rule) String() string {
	flag := "0"
	if r.Active() {
		flag = "1"
	}
	s := fmt.Sprintf("%s %s %s %s %s", flag, r.Location, r.Property, r.Rel, strconv.FormatFloat(r.Goal, 'g', -1, 64))
	switch r.Prefix {
	case Passive:
	case Within:
		s += fmt.Sprintf(" within %d %d", r.T1, r.T2)
	default:
		s += fmt.Sprintf(" %s %d", r.Prefix, r.T1)
	}
	return s
}

// RuleSyntax configures ParseRule.
type RuleSyntax struct {
	// Location is used when the rule omits its location (a rule written
	// inside a device's table); "" makes the location mandatory.
	Location string
	// Time converts a time token into slots from the horizon's start; nil
	// accepts non-negative integers only.
	Time func(tok string) (int, error)
	// Flag requires the SHDS leading 0 (passive) or 1 (active) token;
	// otherwise it is optional.
	Flag bool
}

// ParseRule reads a rule in the SHDS grammar
//
//	[0|1] [LOCATION] PROPERTY REL GOAL [before|after|at T | within T1 T2]
//
// (shds-model.md §3.1). Tokens past the last one the prefix uses are an
// error, not ignored as the simulator does.
func ParseRule(text string, syn RuleSyntax) (Rule, error) {
	tok := strings.Fields(text)
	r := Rule{Text: strings.TrimSpace(text)}
	if len(tok) == 0 {
		return r, fmt.Errorf("empty rule")
	}
	flag := ""
	if tok[0] == "0" || tok[0] == "1" {
		flag, tok = tok[0], tok[1:]
	} else if syn.Flag {
		return r, fmt.Errorf("rule %q must start with 0 (passive) or 1 (active)", r.Text)
	}
	// A relation in second place means the location was left out.
	if len(tok) >= 2 {
		if _, ok := ParseRelation(tok[1]); ok {
			if syn.Location == "" {
				return r, fmt.Errorf("rule %q has no location: write LOCATION PROPERTY REL GOAL", r.Text)
			}
			tok = append([]string{syn.Location}, tok...)
		}
	}
	if len(tok) < 4 {
		return r, fmt.Errorf("rule %q is too short: want LOCATION PROPERTY REL GOAL [before|after|at T | within T1 T2]", r.Text)
	}
	r.Location, r.Property = tok[0], tok[1]
	rel, ok := ParseRelation(tok[2])
	if !ok {
		return r, fmt.Errorf("rule %q: unknown relation %q (valid: eq, neq, lt, leq, gt, geq)", r.Text, tok[2])
	}
	r.Rel = rel
	g, err := strconv.ParseFloat(tok[3], 64)
	if err != nil || math.IsNaN(g) || math.IsInf(g, 0) {
		return r, fmt.Errorf("rule %q: goal %q is not a number", r.Text, tok[3])
	}
	r.Goal = g
	rest := tok[4:]
	if len(rest) > 0 {
		if err := r.parseTime(rest, syn); err != nil {
			return r, err
		}
	}
	switch {
	case flag == "1" && !r.Active():
		return r, fmt.Errorf("rule %q starts with 1 (active) but has no time: add before|after|at T or within T1 T2", r.Text)
	case flag == "0" && r.Active():
		return r, fmt.Errorf("rule %q starts with 0 (passive) but has a time %s", r.Text, r.Prefix)
	}
	return r, nil
}

func (r *Rule) parseTime(rest []string, syn RuleSyntax) error {
	conv := syn.Time
	if conv == nil {
		conv = slotIndex
	}
	switch rest[0] {
	case "before":
		r.Prefix = Before
	case "after":
		r.Prefix = After
	case "at":
		r.Prefix = At
	case "within":
		r.Prefix = Within
	default:
		return fmt.Errorf("rule %q: unknown time %q (valid: before, after, at, within)", r.Text, rest[0])
	}
	want := 2
	if r.Prefix == Within {
		want = 3
	}
	if len(rest) != want {
		if r.Prefix == Within {
			return fmt.Errorf("rule %q: within needs two times, T1 T2", r.Text)
		}
		return fmt.Errorf("rule %q: %s needs exactly one time", r.Text, r.Prefix)
	}
	var err error
	if r.T1, err = conv(rest[1]); err != nil {
		return fmt.Errorf("rule %q: %w", r.Text, err)
	}
	if r.Prefix == Within {
		if r.T2, err = conv(rest[2]); err != nil {
			return fmt.Errorf("rule %q: %w", r.Text, err)
		}
	}
	return nil
}

// slotIndex reads a non-negative slot number.
func slotIndex(tok string) (int, error) {
	n, err := strconv.Atoi(tok)
	if err != nil || n < 0 || n > 1<<20 {
		return 0, fmt.Errorf("time %q is not a slot number", tok)
	}
	return n, nil
}
