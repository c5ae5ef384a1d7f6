package reform

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hearth-dcop/hearth/mva"
)

// Reformulation is a problem ready for a protocol together with the way
// back to the problem it was made from.
type Reformulation struct {
	// Name is "mva", "decomposition" or "compilation", the word of the
	// result object's algorithm.reform field.
	Name string
	// Problem is what the protocol runs on.
	Problem *mva.Problem
	// Owner gives, for each agent of Problem, the agent of the original
	// problem it belongs to (sim.Config.Owner): messages between agents
	// of the same owner are internal.
	Owner []int
	// Back maps a complete assignment of Problem (one value index per
	// variable) to one of the original problem with the same cost. It
	// returns an error for an assignment of the wrong length or with a
	// value outside its domain.
	Back func(assign []int) ([]int, error)
}

// ErrTooLarge is wrapped by the errors of a reformulation that would need
// a domain or a table larger than allowed.
var ErrTooLarge = errors.New("reformulation too large")

// DefaultMaxEntries is the table size New allows Compilation when given
// no limit: 2^22 entries, 32 MiB per table.
const DefaultMaxEntries = 1 << 22

// Names returns the reformulations New knows, MVA first.
func Names() []string { return []string{"mva", "decomposition", "compilation"} }

// New returns the reformulation called name of p. maxEntries bounds the
// domains and tables of "compilation"; 0 or less means DefaultMaxEntries.
func New(name string, p *mva.Problem, maxEntries int) (*Reformulation, error) {
	switch name {
	case "mva":
		return MVA(p), nil
	case "decomposition":
		return Decomposition(p), nil
	case "compilation":
		if maxEntries <= 0 {
			maxEntries = DefaultMaxEntries
		}
		return Compilation(p, maxEntries)
	}
	return nil, fmt.Errorf("unknown reformulation %q (valid: %s)", name, strings.Join(Names(), ", "))
}

// MVA returns the identity reformulation: the protocol runs on p itself and
// each agent is its own owner.
func MVA(p *mva.Problem) *Reformulation {
	owner := make([]int, len(p.Agents))
	for i := range owner {
		owner[i] = i
	}
	return &Reformulation{Name: "mva", Problem: p, Owner: owner, Back: identity(p)}
}

// identity returns a Back for reformulations that keep p's variables in
// p's order.
func identity(p *mva.Problem) func([]int) ([]int, error) {
	return func(assign []int) ([]int, error) {
		if err := checkAssign(p, assign); err != nil {
			return nil, err
		}
		return append([]int(nil), assign...), nil
	}
}

// checkAssign verifies that assign is a complete assignment of p.
func checkAssign(p *mva.Problem, assign []int) error {
	if len(assign) != len(p.Variables) {
		return fmt.Errorf("reform: assignment has %d values for %d variables", len(assign), len(p.Variables))
	}
	for v, a := range assign {
		if a < 0 || a >= p.DomainSize(v) {
			return fmt.Errorf("reform: variable %q: value index %d outside its domain of %d values",
				p.Variables[v].Name, a, p.DomainSize(v))
		}
	}
	return nil
}

// uniqueNames hands out names no earlier call returned, appending "_1",
// "_2", ... to a taken name, so that reformulated problems keep distinct
// names even when the original repeats an agent name.
type uniqueNames map[string]bool

func (u uniqueNames) fresh(base string) string {
	name := base
	for i := 1; u[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	u[name] = true
	return name
}
