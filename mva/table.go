package mva

import (
	"context"
	"fmt"
	"math"
	"slices"
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

// NewLocalProblem builds the re-indexed view of sub. The local indices
// are found through a slice over the problem's variables when sub holds
// an eighth of them or more (a central solve holds all: the map was half
// of building a 20×20 grid's view), else through a map, and the scopes
// are carved from one slab.
func NewLocalProblem(p *Problem, sub *Subproblem) *LocalProblem {
	lp := &LocalProblem{Problem: p, Sub: sub, NB: len(sub.Boundary)}
	lp.Vars = make([]int, 0, len(sub.Boundary)+len(sub.Interior))
	lp.Vars = append(append(lp.Vars, sub.Boundary...), sub.Interior...)
	var (
		dense []int32
		local map[int]int
	)
	if 8*len(lp.Vars) >= len(p.Variables) {
		dense = make([]int32, len(p.Variables))
		for k, v := range lp.Vars {
			dense[v] = int32(k)
		}
	} else {
		local = make(map[int]int, len(lp.Vars))
		for k, v := range lp.Vars {
			local[v] = k
		}
	}
	lp.Domains = make([]int, len(lp.Vars))
	for k, v := range lp.Vars {
		lp.Domains[k] = p.DomainSize(v)
	}
	arity := 0
	for _, fi := range sub.Functions {
		arity += len(p.Functions[fi].Scope)
	}
	slab := make([]int, arity)
	lp.Funcs = make([]LocalFunction, 0, len(sub.Functions))
	for _, fi := range sub.Functions {
		f := &p.Functions[fi]
		sc := slab[:len(f.Scope):len(f.Scope)]
		slab = slab[len(f.Scope):]
		for j, v := range f.Scope {
			if dense != nil {
				sc[j] = int(dense[v])
			} else {
				sc[j] = local[v]
			}
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

// Starter is implemented by local solvers that know where their agent
// should start: a boundary assignment with a feasible completion, such as
// a home's own schedule planned alone. Protocols started with init = 3
// (localsearch.InitStart) begin there, so that a sampling protocol whose
// sampled rows are mostly infeasible (SHDS homes with many rules) still
// holds a feasible sample from its first iteration.
type Starter interface {
	Start() (boundary []int, ok bool)
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
// on demand (Has); eager ones are filled up front.
//
// A table is dense (Costs, Assign and Known hold every row) or, for a lazy
// table of more than DenseRows rows, sparse: only the rows computed so far
// are stored. A home of the SHDS data set has 4^12 rows and dozens of
// interior variables, gigabytes dense, of which a protocol run reads a few
// thousand; the dense slices, though never touched, also counted toward
// the garbage collector's heap goal, so that garbage was never collected.
type Table struct {
	Local *LocalProblem
	// Costs holds one entry per row of a dense table; Hard marks a row
	// with no feasible completion.
	Costs []float64
	// Assign holds NumInterior values per row of a dense table.
	Assign []int32
	// Known marks the computed rows of a dense table.
	Known []bool

	rows int
	// slot maps a computed row of a sparse table to its place in
	// sCosts (and, times NumInterior, in sAssign); nil when dense.
	slot    map[int]int
	sCosts  []float64
	sAssign []int32
}

// DenseRows is the largest lazy table stored densely.
const DenseRows = 1 << 16

// NewTable allocates an empty dense table for lp, as the solvers that fill
// a whole table at once (TableSolver) need.
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
		rows:   rows,
	}, nil
}

// NewLazyTable allocates an empty table for rows computed on demand:
// dense up to DenseRows rows, sparse beyond.
func NewLazyTable(lp *LocalProblem) (*Table, error) {
	rows, err := lp.Rows()
	if err != nil {
		return nil, err
	}
	if rows <= DenseRows {
		return NewTable(lp)
	}
	return &Table{Local: lp, rows: rows, slot: map[int]int{}}, nil
}

// Rows returns the number of rows.
func (t *Table) Rows() int { return t.rows }

// Sparse reports whether only the computed rows are stored.
func (t *Table) Sparse() bool { return t.slot != nil }

// Has reports whether row has been computed.
func (t *Table) Has(row int) bool {
	if t.slot != nil {
		_, ok := t.slot[row]
		return ok
	}
	return t.Known[row]
}

// Complete reports whether every row has been computed.
func (t *Table) Complete() bool {
	if t.slot != nil {
		return len(t.slot) == t.rows
	}
	return !slices.Contains(t.Known, false)
}

// Cost returns a computed row's cost.
func (t *Table) Cost(row int) float64 {
	if t.slot != nil {
		return t.sCosts[t.slot[row]]
	}
	return t.Costs[row]
}

// Interior returns the interior assignment of a computed row (of any row
// of a dense table).
func (t *Table) Interior(row int) []int32 {
	ni := t.Local.NumInterior()
	if t.slot != nil {
		k, ok := t.slot[row]
		if !ok {
			return nil
		}
		return t.sAssign[k*ni : (k+1)*ni]
	}
	return t.Assign[row*ni : (row+1)*ni]
}

// Set stores a solved row.
func (t *Table) Set(row int, cost float64, interior []int) {
	if t.slot != nil {
		k, ok := t.slot[row]
		if !ok {
			k = len(t.sCosts)
			t.slot[row] = k
			t.sCosts = append(t.sCosts, 0)
			t.sAssign = append(t.sAssign, make([]int32, t.Local.NumInterior())...)
		}
		t.sCosts[k] = cost
	} else {
		t.Costs[row] = cost
		t.Known[row] = true
	}
	dst := t.Interior(row)
	for i, v := range interior {
		dst[i] = int32(v)
	}
}

// densify turns a sparse table dense, keeping its computed rows, for the
// solvers that fill whole tables.
func (t *Table) densify() error {
	if t.slot == nil {
		return nil
	}
	d, err := NewTable(t.Local)
	if err != nil {
		return err
	}
	ni := t.Local.NumInterior()
	for row, k := range t.slot {
		d.Costs[row] = t.sCosts[k]
		copy(d.Assign[row*ni:(row+1)*ni], t.sAssign[k*ni:(k+1)*ni])
		d.Known[row] = true
	}
	*t = *d
	return nil
}

// Fill computes every unknown row with s, or lets s fill the table at once
// when it is a TableSolver. A sparse table becomes dense.
func (t *Table) Fill(ctx context.Context, s LocalSolver) error {
	if err := t.densify(); err != nil {
		return err
	}
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
	if row < 0 || row >= t.rows {
		return 0, nil, fmt.Errorf("MVA table row %d outside 0..%d", row, t.rows-1)
	}
	if !t.Has(row) {
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
	return t.Cost(row), t.Interior(row), nil
}
