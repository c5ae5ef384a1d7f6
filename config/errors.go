package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/hearth-dcop/hearth/devices"
)

// Error is one fault in a configuration file: where it is and how to fix
// it. It prints as "file:line: key: message", the form editors jump to.
type Error struct {
	File string
	// Line is 1-based; 0 when the fault concerns the file as a whole.
	Line int
	// Key is the TOML key path, with array indices ("device[1].kind").
	Key string
	Msg string
	// Infeasible marks a fault of the problem rather than the file: rules
	// (or a feeder limit) that no schedule can satisfy. The file is well
	// formed; the commands exit 1 for it, as for an infeasible solve.
	Infeasible bool
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Is makes errors.Is(err, devices.ErrInfeasible) true for an Infeasible
// error.
func (e *Error) Is(target error) bool { return target == devices.ErrInfeasible && e.Infeasible }

// Errors is every fault found in one load, sorted by file and line. The
// loader keeps going after a fault, so that one run shows them all.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As find each *Error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// Infeasible reports whether every fault is Infeasible: the file is well
// formed and only its rules cannot be kept. A list that also holds a fault
// of the file is a bad file first.
func (es Errors) Infeasible() bool {
	for _, e := range es {
		if !e.Infeasible {
			return false
		}
	}
	return len(es) > 0
}

func (es Errors) sorted() Errors {
	out := slices.Clone(es)
	slices.SortStableFunc(out, func(a, b *Error) int {
		if c := cmp.Compare(a.File, b.File); c != 0 {
			return c
		}
		return cmp.Compare(a.Line, b.Line)
	})
	return slices.CompactFunc(out, func(a, b *Error) bool { return *a == *b })
}

// closest returns the candidate nearest to s by edit distance, when it is
// near enough to be a likely typo.
func closest(s string, candidates []string) string {
	best, bestD := "", len(s)/2+2
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
