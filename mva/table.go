package mva

import (
	"context"
	"fmt"
	"math"
)

// LocalProblem is a subproblem re-indexed for local solvers, so that they
// work on small dense indices and never look at the rest of the problem.
// Local variable k is Problem variable Vars[k]; the first NB of them are the
// boundary variables (in Subproblem.Boundary order), the rest the interior
// ones (in Subproblem.Interior order).
type LocalProblem struct {
	Problem *Problem
	Sub     *Subproblem
	Vars    []int
	Domains []int
	NB      int
	Funcs   []LocalFunction
}

// LocalFunction is a local function with its scope in local indices. Costs
// shares the Problem's table: same layout, same order of scope positions.
type LocalFunction struct {
	Scope []int
	Costs []float64
}

// NewLocalProblem builds the re-indexed view of sub.
func NewLocalProblem(p *Problem, sub *Subproblem) *LocalProblem {
	lp := &LocalProblem{Problem: p, Sub: sub, NB: len(sub.Boundary)}
	local := make(map[int]int, len(sub.Local))
	for _, v := range sub.Boundary {
		local[v] = len(lp.Vars)
		lp.Vars = append(lp.Vars, v)
	}
	for _, v := range sub.Interior {
		local[v] = len(lp.Vars)
		lp.Vars = append(lp.Vars, v)
	}
	lp.Domains = make([]int, len(lp.Vars))
	for k, v := range lp.Vars {
		lp.Domains[k] = p.DomainSize(v)
	}
	for _, fi := range sub.Functions {
		f := &p.Functions[fi]
		sc := make([]int, len(f.Scope))
		for j, v := range f.Scope {
			sc[j] = local[v]
		}
		lp.Funcs = append(lp.Funcs, LocalFunction{Scope: sc, Costs: f.Costs})
	}
	return lp
}

// NumInterior returns the number of variables the local solver decides.
func (lp *LocalProblem) NumInterior() int { return len(lp.Vars) - lp.NB }

// Rows returns the number of MVA table rows: the product of the boundary
// domains, or an error when it overflows.
func (lp *LocalProblem) Rows() (int, error) {
	n := 1
	for _, d := range lp.Domains[:lp.NB] {
		if n > math.MaxInt32/max(d, 1) {
			return 0, fmt.Errorf("MVA table over %d boundary variables is too large", lp.NB)
		}
		n *= d
	}
	return n, nil
}

// DecodeRow writes the boundary assignment of a table row (mixed radix, last
// boundary variable fastest) into boundary.
func (lp *LocalProblem) DecodeRow(row int, boundary []int) {
	for k := lp.NB - 1; k >= 0; k-- {
		d := lp.Domains[k]
		boundary[k] = row % d
		row /= d
	}
}

// EncodeRow is the inverse of DecodeRow.
func (lp *LocalProblem) EncodeRow(boundary []int) int {
	row := 0
	for k := 0; k < lp.NB; k++ {
		row = row*lp.Domains[k] + boundary[k]
	}
	return row
}

// Eval returns the local cost of a full local assignment (indexed by local
// variable): one table look-up per function.
func (lp *LocalProblem) Eval(assign []int) float64 {
	total := 0.0
	for i := range lp.Funcs {
		f := &lp.Funcs[i]
		idx := 0
		for _, k := range f.Scope {
			idx = idx*lp.Domains[k] + assign[k]
		}
		total += f.Costs[idx]
	}
	return total
}

// LocalSolver solves one MVA table row: given the boundary values it finds
// the cheapest assignment of the interior variables. Implementations need
// not be safe for concurrent use; create one per goroutine.
type LocalSolver interface {
	// SolveRow writes the best interior values (local indices NB.., in
	// order) into interior and returns their cost, Hard when no completion
	// is feasible.
	SolveRow(ctx context.Context, boundary, interior []int) (float64, error)
	// Checks returns the constraint checks performed so far, the unit of
	// the NCCC metric.
	Checks() int64
}

// TableSolver fills a whole MVA table at once (eager), as bucket
// elimination does more cheaply than row by row.
type TableSolver interface {
	SolveTable(ctx context.Context, t *Table) error
}

// Table is an MVA table: for each boundary assignment (row), the best local
// cost and the interior assignment achieving it. Lazy tables compute rows
// on demand (Known); eager ones are filled up front.
type Table struct {
	Local *LocalProblem
	// Costs holds one entry per row; Hard marks a row with no feasible
	// completion.
	Costs []float64
	// Assign holds NumInterior values per row.
	Assign []int32
	// Known marks computed rows.
	Known []bool
}

// NewTable allocates an empty table for lp.
func NewTable(lp *LocalProblem) (*Table, error) {
	rows, err := lp.Rows()
	if err != nil {
		return nil, err
	}
	ni := lp.NumInterior()
	if ni > 0 && rows > math.MaxInt32/ni {
		return nil, fmt.Errorf("MVA table of %d rows × %d interior variables is too large", rows, ni)
	}
	return &Table{
		Local:  lp,
		Costs:  make([]float64, rows),
		Assign: make([]int32, rows*ni),
		Known:  make([]bool, rows),
	}, nil
}

// Rows returns the number of rows.
func (t *Table) Rows() int { return len(t.Costs) }

// Interior returns the interior assignment of a row.
func (t *Table) Interior(row int) []int32 {
	ni := t.Local.NumInterior()
	return t.Assign[row*ni : (row+1)*ni]
}

// Set stores a solved row.
func (t *Table) Set(row int, cost float64, interior []int) {
	t.Costs[row] = cost
	dst := t.Interior(row)
	for i, v := range interior {
		dst[i] = int32(v)
	}
	t.Known[row] = true
}

// Fill computes every unknown row with s, or lets s fill the table at once
// when it is a TableSolver.
func (t *Table) Fill(ctx context.Context, s LocalSolver) error {
	if ts, ok := s.(TableSolver); ok {
		return ts.SolveTable(ctx, t)
	}
	lp := t.Local
	b := make([]int, lp.NB)
	in := make([]int, lp.NumInterior())
	for row := range t.Costs {
		if t.Known[row] {
			continue
		}
		lp.DecodeRow(row, b)
		c, err := s.SolveRow(ctx, b, in)
		if err != nil {
			return fmt.Errorf("MVA table row %d: %w", row, err)
		}
		t.Set(row, c, in)
	}
	return nil
}

// Lookup returns a row, computing it with s first when the table is lazy
// and the row unknown.
func (t *Table) Lookup(ctx context.Context, s LocalSolver, row int) (float64, []int32, error) {
	if !t.Known[row] {
		lp := t.Local
		b := make([]int, lp.NB)
		in := make([]int, lp.NumInterior())
		lp.DecodeRow(row, b)
		c, err := s.SolveRow(ctx, b, in)
		if err != nil {
			return 0, nil, fmt.Errorf("MVA table row %d: %w", row, err)
		}
		t.Set(row, c, in)
	}
	return t.Costs[row], t.Interior(row), nil
}
