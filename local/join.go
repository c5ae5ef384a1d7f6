package local

import "github.com/hearth-dcop/hearth/mva/join"

// The join-project kernel lives in mva/join, a leaf package that DPOP
// shares without importing the local solvers; these names keep it where
// bucket elimination's callers (local/gpu, benchmarks) have always found it.

// DefaultMaxEntries bounds a join-project's output when the caller gives no
// limit (join.DefaultMaxEntries).
const DefaultMaxEntries = join.DefaultMaxEntries

// ErrTooLarge is join.ErrTooLarge: a table over its entry limit.
var ErrTooLarge = join.ErrTooLarge

// Factor is join.Factor: a cost table over variables.
type Factor = join.Factor

// JoinProject is join.JoinProject: a planned join-project.
type JoinProject = join.JoinProject

// NewFactor is join.NewFactor.
func NewFactor(vars, dims []int) (*Factor, error) { return join.NewFactor(vars, dims) }

// NewJoinProject is join.NewJoinProject.
func NewJoinProject(inputs []*Factor, elim, out []int) (*JoinProject, error) {
	return join.NewJoinProject(inputs, elim, out)
}

// NewJoinProjectLimit is join.NewJoinProjectLimit.
func NewJoinProjectLimit(inputs []*Factor, elim, out []int, maxEntries int) (*JoinProject, error) {
	return join.NewJoinProjectLimit(inputs, elim, out, maxEntries)
}
