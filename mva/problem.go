// Package mva holds hearth's problem model and the Multi-Variable-Agent (MVA)
// decomposition: variables with labelled finite domains, agents that own
// them, and cost functions stored as dense n-ary tables.
//
// Everything inside hearth minimises cost. A file that maximises utility is
// negated when it is read (see Sense) and reported in its own sense when a
// result is printed, so solvers never need to know which way the file went.
package mva

import (
	"errors"
	"fmt"
	"math"
)

// Hard is the cost of an infeasible combination. It is +Inf so that any sum
// containing it stays infeasible and any comparison with a finite bound
// prunes it.
var Hard = math.Inf(1)

// IsHard reports whether c marks an infeasible entry.
func IsHard(c float64) bool { return math.IsInf(c, 1) }

// Sense is the optimisation direction of an instance file.
type Sense int

const (
	// Minimize means the file's numbers are costs; they are kept as read.
	Minimize Sense = iota
	// Maximize means the file's numbers are utilities; they are negated on
	// read so that the model still minimises.
	Maximize
)

// String returns "min" or "max", the words of the result object.
func (s Sense) String() string {
	if s == Maximize {
		return "max"
	}
	return "min"
}

// Report turns an internal (minimised) cost into the number the user expects
// in the file's own sense.
func (s Sense) Report(cost float64) float64 {
	if s == Maximize {
		return -cost
	}
	return cost
}

// Variable is a decision variable with a finite domain. Domain holds the
// values' labels exactly as the input file writes them; solvers work on the
// indices 0..len(Domain)-1.
type Variable struct {
	Name   string
	Domain []string
	// Agent is the index in Problem.Agents of the agent that owns the
	// variable.
	Agent int
}

// Agent is a participant that owns variables.
type Agent struct {
	Name string
}

// Function is a cost function over a few variables stored as a dense table.
// Costs is laid out in row-major mixed radix over Scope: the last variable
// of the scope varies fastest. An entry equal to Hard is infeasible.
type Function struct {
	Name  string
	Scope []int
	Costs []float64
}

// Problem is a complete instance: variables, agents, cost functions and the
// sense of the source file. Offset is a constant added to every solution's
// cost (the zero-arity functions of WCSP files, for example).
type Problem struct {
	Name      string
	Sense     Sense
	Variables []Variable
	Agents    []Agent
	Functions []Function
	Offset    float64
	// SearchOrder lets bucket elimination search its elimination order
	// by the entries its buckets join (local's beOrder) instead of
	// taking min-fill's: set by the home compiler where a device has many
	// actions beside storages of many states (automatic power levels),
	// where min-fill's order costs ten times more. Without it every
	// order, and so which of equal optima is decoded, stays as it was.
	SearchOrder bool
}

// DomainSize returns the number of values of variable v.
func (p *Problem) DomainSize(v int) int { return len(p.Variables[v].Domain) }

// VarIndex returns the index of the variable called name.
func (p *Problem) VarIndex(name string) (int, bool) {
	for i := range p.Variables {
		if p.Variables[i].Name == name {
			return i, true
		}
	}
	return -1, false
}

// TableSize returns the number of entries a table over scope needs, or an
// error when it does not fit in memory-addressable int.
func (p *Problem) TableSize(scope []int) (int, error) {
	n := 1
	for _, v := range scope {
		d := p.DomainSize(v)
		if d == 0 {
			return 0, nil
		}
		if n > math.MaxInt32/d {
			return 0, fmt.Errorf("table over %d variables is too large", len(scope))
		}
		n *= d
	}
	return n, nil
}

// ErrInvalid is wrapped by every error Validate returns.
var ErrInvalid = errors.New("invalid problem")

// Validate checks the internal consistency of the model: indices in range,
// non-empty domains, table sizes matching scopes, no repeated variable in a
// scope, and no NaN or -Inf cost. Readers call it before returning.
func (p *Problem) Validate() error {
	if len(p.Agents) == 0 && len(p.Variables) > 0 {
		return fmt.Errorf("%w: no agents", ErrInvalid)
	}
	seen := make(map[string]bool, len(p.Variables))
	for i, v := range p.Variables {
		if v.Name == "" {
			return fmt.Errorf("%w: variable %d has no name", ErrInvalid, i)
		}
		if seen[v.Name] {
			return fmt.Errorf("%w: variable %q declared twice", ErrInvalid, v.Name)
		}
		seen[v.Name] = true
		if len(v.Domain) == 0 {
			return fmt.Errorf("%w: variable %q has an empty domain", ErrInvalid, v.Name)
		}
		if v.Agent < 0 || v.Agent >= len(p.Agents) {
			return fmt.Errorf("%w: variable %q has no valid owner", ErrInvalid, v.Name)
		}
	}
	// seenIn[v] is 1 + the index of the last function whose scope held v:
	// one slice for the duplicate check instead of a map a function (a
	// 40×40 grid's file has 4720 functions, and every file read is
	// validated).
	seenIn := make([]int, len(p.Variables))
	for i, f := range p.Functions {
		name := func() string { return funcName(f.Name, i) } // for errors only
		for _, v := range f.Scope {
			if v < 0 || v >= len(p.Variables) {
				return fmt.Errorf("%w: function %s: variable index %d out of range", ErrInvalid, name(), v)
			}
			if seenIn[v] == i+1 {
				return fmt.Errorf("%w: function %s: variable %q appears twice in the scope", ErrInvalid, name(), p.Variables[v].Name)
			}
			seenIn[v] = i + 1
		}
		n, err := p.TableSize(f.Scope)
		if err != nil {
			return fmt.Errorf("%w: function %s: %v", ErrInvalid, name(), err)
		}
		if len(f.Costs) != n {
			return fmt.Errorf("%w: function %s: table has %d entries, scope needs %d", ErrInvalid, name(), len(f.Costs), n)
		}
		for _, c := range f.Costs {
			if math.IsNaN(c) || math.IsInf(c, -1) {
				return fmt.Errorf("%w: function %s: cost %v is not allowed", ErrInvalid, name(), c)
			}
		}
	}
	if math.IsNaN(p.Offset) || math.IsInf(p.Offset, 0) {
		return fmt.Errorf("%w: constant cost %v is not allowed", ErrInvalid, p.Offset)
	}
	return nil
}

// funcName names function i in Validate's errors: its name, else #i.
func funcName(name string, i int) string {
	if name == "" {
		return fmt.Sprintf("#%d", i)
	}
	return name
}

// Strides returns, for each position of a scope, how far the table index
// moves when that variable's value grows by one (row-major, last fastest).
func (p *Problem) Strides(scope []int) []int {
	s := make([]int, len(scope))
	m := 1
	for i := len(scope) - 1; i >= 0; i-- {
		s[i] = m
		m *= p.DomainSize(scope[i])
	}
	return s
}

// Cost returns f's entry for a complete assignment (value index per
// problem variable).
func (p *Problem) cost(f *Function, assign []int) float64 {
	idx := 0
	for _, v := range f.Scope {
		idx = idx*p.DomainSize(v) + assign[v]
	}
	return f.Costs[idx]
}

// Eval returns the total internal cost of a complete assignment (one value
// index per variable), Offset included. It returns Hard when a hard entry is
// hit and an error when the assignment has the wrong length or a value out
// of its domain.
func (p *Problem) Eval(assign []int) (float64, error) {
	if len(assign) != len(p.Variables) {
		return 0, fmt.Errorf("assignment has %d values for %d variables", len(assign), len(p.Variables))
	}
	for v, a := range assign {
		if a < 0 || a >= p.DomainSize(v) {
			return 0, fmt.Errorf("variable %q: value index %d outside its domain", p.Variables[v].Name, a)
		}
	}
	total := p.Offset
	for i := range p.Functions {
		total += p.cost(&p.Functions[i], assign)
	}
	return total, nil
}

// Labels returns the assignment as variable name → value label, the form of
// the result object.
func (p *Problem) Labels(assign []int) map[string]string {
	m := make(map[string]string, len(assign))
	for v, a := range assign {
		if a >= 0 && a < p.DomainSize(v) {
			m[p.Variables[v].Name] = p.Variables[v].Domain[a]
		}
	}
	return m
}

// Stats summarises a problem for logs and `hearth inspect`.
type Stats struct {
	Variables, Agents, Functions, MaxArity, MaxDomain int
}

// Stats returns the problem's size figures.
func (p *Problem) Stats() Stats {
	s := Stats{Variables: len(p.Variables), Agents: len(p.Agents), Functions: len(p.Functions)}
	for _, v := range p.Variables {
		s.MaxDomain = max(s.MaxDomain, len(v.Domain))
	}
	for _, f := range p.Functions {
		s.MaxArity = max(s.MaxArity, len(f.Scope))
	}
	return s
}
