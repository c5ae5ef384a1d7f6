package local

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/join"
)

// DefaultBEMaxEntries bounds bucket elimination's intermediate tables when
// BEOptions.MaxEntries is zero: 1<<27 float64 entries are 1 GiB.
const DefaultBEMaxEntries = 1 << 27

// BEOptions tunes bucket elimination.
type BEOptions struct {
	// MaxEntries bounds every intermediate table. Bucket elimination needs
	// memory exponential in the induced width; past this bound NewBE or
	// SolveTable return an error wrapping ErrTooLarge instead, and the
	// caller should fall back to dfbnb. 0 means DefaultBEMaxEntries.
	MaxEntries int
	// Workers is the parallelism of each table operation; 0 means
	// runtime.GOMAXPROCS(0).
	Workers int
	// MinFill eliminates in min-fill's order alone even where the
	// problem allows a search (mva.Problem.SearchOrder): the baseline of
	// the order's benchmarks.
	MinFill bool
	// SearchOrder searches the order by the entries its buckets join
	// (as where mva.Problem.SearchOrder allows it) whatever the problem
	// says, unless MinFill. Its tables are often a tenth of min-fill's
	// on SHDS homes, but among equal optima it may answer another one,
	// and its sums may round differently: for callers that want the
	// optimum's cost (the SH-MGM baseline's gains), not min-fill's row.
	SearchOrder bool
	// Pool, when set, lends the row plan's bucket tables wherever they
	// are not kept between rows (transient tables, and every table after
	// Release), and they go back to it after the row instead of to the
	// garbage collector; nil allocates them. Results do not depend on it.
	Pool *TablePool

	// plan is an elimination order already searched for this problem
	// (Choose's, passed on by Auto and NewBEWithin), used instead of
	// searching again; nil: NewBE searches.
	plan *beGivenOrder
}

// beGivenOrder is the elimination order problemOrder gave for one of bucket
// elimination's graphs: the row's (the boundary fixed) or, when table,
// the MVA table's (the boundary as neighbours never eliminated).
type beGivenOrder struct {
	order []int
	width int
	table bool
}

// BE is bucket elimination (Dechter's BE, the centralised form of DPOP's
// UTIL phase) over the interior variables of a local problem. It is both a
// mva.LocalSolver, eliminating the interior with the boundary fixed, and a
// mva.TableSolver, eliminating only the interior so that what remains is the
// whole MVA table over the boundary, computed at once.
//
// Every bucket is one JoinProject: join the factors that hold the
// variable and minimise it out, keeping the argmin table from which the
// interior assignment is decoded afterwards, bucket by bucket in reverse
// order.
//
// SolveRow keeps the row's bucket tables (unless they are transient, see
// transientEntries) and, on the next row, reruns only the buckets that
// read a function whose entries at the new boundary values differ or a
// bucket rerun before them (runChanged): same tables, same answer, less
// work when rows differ in few boundary variables. A caller may also edit
// the functions' costs in place between rows (the SH-MGM baseline moves
// its peak terms with the neighbours' load): SolveRow compares every
// function with a copy of its costs at the last row and reruns what an
// edit reaches. A caller that solves rows in bursts and edits nothing
// (MGM's best responses) brackets each burst with Hold and Release
// (mva.HoldingSolver): the tables, transient ones too, live for the
// burst alone, and no copy of the costs is kept.
//
// Checks counts the function and intermediate entries read, the kernel's
// Reads plus the entries gathered when conditioning on a row: the work
// of BE, which has no individual constraint checks.
type BE struct {
	lp   *mva.LocalProblem
	opts BEOptions

	// row solves one row: the functions conditioned on the boundary and
	// eliminated in the row order.
	row *bePlan
	// transient: the row plan's bucket tables exceed transientEntries,
	// and are allocated for each SolveRow and dropped after it.
	transient bool
	cond      []condFunc
	rowVal    []int
	rowOrder  []int
	rowWidth  int

	// Memo of the last SolveRow (kept tables only, CPU only): valid says
	// the row plan's tables hold the last row's buckets, condKey[i] is
	// the offset of cond[i]'s entries at that row's boundary values, and
	// changed is scratch marking the factors whose contents change.
	// snap[i] is cond[i]'s costs as they were at the last row, to see
	// a caller's edits in place.
	valid   bool
	condKey []int
	changed []bool
	snap    [][]float64
	// held: between Hold and Release the tables are kept whatever their
	// size and the costs are not watched for edits (no snap is taken).
	held bool

	// The symbolic plan of SolveTable, or why it cannot run; computed on
	// first use, since a lazy table never needs it.
	tablePlanned bool
	tableOrder   []int
	tableWidth   int
	tableSteps   []beStep
	tableRest    []int
	tableErr     error

	checks int64
}

// condFunc is a function conditioned on the boundary values of a row: the
// factor over its interior variables, refilled for every row unless the
// function has no boundary variable (then it shares the function's table).
type condFunc struct {
	f        *Factor
	costs    []float64
	bvars    []int // boundary positions: local variable and stride
	bstrides []int
	istrides []int // interior positions: stride in costs
	static   bool
}

// beStep is one bucket of a symbolic plan: eliminate v from the factors in
// (indices in the plan's factor list, where the output of step s is factor
// number inputs+s) into a factor over out.
type beStep struct {
	v   int
	in  []int
	out []int
}

// bePlan is an executable elimination: the factors, one kernel plan per
// bucket with its output and argmin tables, and the factors left at the
// end.
type bePlan struct {
	// pool lends the bucket tables (nil: Go memory of their own).
	pool    *TablePool
	factors []*Factor
	steps   []beStep
	plans   []*JoinProject
	args    [][]int32
	rest    []int
}

// NewBE prepares bucket elimination for lp: the elimination order of a row
// (problemOrder on the interior, the boundary being fixed) and every table a
// row needs, after checking that no intermediate table exceeds
// opts.MaxEntries. The plan of SolveTable, whose tables also hold the
// boundary variables, is made and checked when SolveTable first runs, so
// that a problem whose full MVA table is too large can still be solved row
// by row.
func NewBE(lp *mva.LocalProblem, opts BEOptions) (*BE, error) {
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultBEMaxEntries
	}
	b := &BE{lp: lp, opts: opts, rowVal: make([]int, len(lp.Vars))}
	for k, d := range lp.Domains {
		if d < 1 {
			return nil, fmt.Errorf("bucket elimination: variable %s has an empty domain", b.name(k))
		}
	}
	interior := make([]int, lp.NumInterior())
	for k := range interior {
		interior[k] = lp.NB + k
	}

	// Row mode: condition every function on the boundary; what is left
	// of it is a factor over its interior variables.
	scopes := make([][]int, len(lp.Funcs))
	for i, f := range lp.Funcs {
		c := condFunc{f: &Factor{}}
		stride := 1
		strides := make([]int, len(f.Scope))
		for p := len(f.Scope) - 1; p >= 0; p-- {
			strides[p] = stride
			stride *= lp.Domains[f.Scope[p]]
		}
		for p, v := range f.Scope {
			if v < lp.NB {
				c.bvars = append(c.bvars, v)
				c.bstrides = append(c.bstrides, strides[p])
			} else {
				c.f.Vars = append(c.f.Vars, v)
				c.f.Dims = append(c.f.Dims, lp.Domains[v])
				c.istrides = append(c.istrides, strides[p])
			}
		}
		scopes[i] = c.f.Vars
		c.costs = f.Costs
		c.static = len(c.bvars) == 0
		b.cond = append(b.cond, c)
	}
	if pl := opts.plan; pl != nil && (!pl.table || lp.NB == 0) && !opts.MinFill {
		b.rowOrder, b.rowWidth = pl.order, pl.width
	} else {
		b.rowOrder, b.rowWidth = b.order(scopes, interior)
	}
	steps, rest, err := b.symbolic(scopes, b.rowOrder, b.rowWidth)
	if err != nil {
		return nil, err
	}
	// Only now allocate: the conditioned tables, then the buckets'.
	factors := make([]*Factor, len(b.cond))
	for i := range b.cond {
		c := &b.cond[i]
		if c.static {
			c.f.Costs = c.costs
		} else {
			n, _ := join.TableSize(c.f.Dims, math.MaxInt) // at most the function's size
			c.f.Costs = make([]float64, n)
		}
		factors[i] = c.f
	}
	if b.row, err = b.build(factors, steps, rest); err != nil {
		return nil, err
	}
	if b.row.entries() > transientEntries {
		b.transient = true
		b.row.release()
	}

	return b, nil
}

// planTable computes, once, the symbolic plan of SolveTable: the order
// (problemOrder) of the interior with the boundary variables as neighbours that are
// never eliminated, and the buckets' scopes.
func (b *BE) planTable() {
	if b.tablePlanned {
		return
	}
	b.tablePlanned = true
	lp := b.lp
	interior := make([]int, lp.NumInterior())
	for k := range interior {
		interior[k] = lp.NB + k
	}
	scopes := make([][]int, len(lp.Funcs))
	for i, f := range lp.Funcs {
		scopes[i] = f.Scope
	}
	if lp.NB == 0 {
		// No boundary: the table is the row, same graph, same order.
		b.tableOrder, b.tableWidth = b.rowOrder, b.rowWidth
	} else if pl := b.opts.plan; pl != nil && pl.table && !b.opts.MinFill {
		b.tableOrder, b.tableWidth = pl.order, pl.width
	} else {
		b.tableOrder, b.tableWidth = b.order(scopes, interior)
	}
	b.tableSteps, b.tableRest, b.tableErr = b.symbolic(scopes, b.tableOrder, b.tableWidth)
}

// order returns the elimination order of interior over scopes
// (problemOrder) and its induced width.
func (b *BE) order(scopes [][]int, interior []int) ([]int, int) {
	if b.opts.SearchOrder && !b.opts.MinFill {
		order, width, _ := beOrder(len(b.lp.Vars), scopes, b.lp.Domains, interior)
		return order, width
	}
	order, width, _ := problemOrder(b.lp, scopes, interior, b.opts.MinFill)
	return order, width
}

// name returns the problem name of local variable k, for messages.
func (b *BE) name(k int) string {
	return b.lp.Problem.Variables[b.lp.Vars[k]].Name
}

// Checks returns the table entries read so far.
func (b *BE) Checks() int64 { return b.checks }

// Width returns the induced width of the elimination order SolveTable uses
// (boundary variables count as neighbours), the exponent of its memory.
func (b *BE) Width() int {
	b.planTable()
	return b.tableWidth
}

// RowWidth returns the induced width of the order SolveRow uses, where the
// boundary is fixed.
func (b *BE) RowWidth() int { return b.rowWidth }

// RowEntries returns the entries of the bucket tables SolveRow fills,
// the measure of its work and memory.
func (b *BE) RowEntries() int { return b.row.entries() }

// symbolic runs bucket elimination on scopes alone: for every variable of
// order, the factors that hold it and the scope of their join without it.
// It returns the steps, the factors never eliminated, and an error wrapping
// ErrTooLarge, naming the order's induced width, when a table exceeds the
// limit, before anything is allocated.
//
// A bucket's output lists boundary variables first, then interior ones
// from the last eliminated to the next, so that the next bucket to read the
// table finds its variable at stride 1.
func (b *BE) symbolic(scopes [][]int, order []int, width int) (steps []beStep, rest []int, err error) {
	lp := b.lp
	// pos[v] is v's place in order, or len(order) for a variable never
	// eliminated (boundary).
	pos := make([]int, len(lp.Vars))
	for v := range pos {
		pos[v] = len(order)
	}
	for i, v := range order {
		pos[v] = i
	}
	// A factor goes to the bucket of its first eliminated variable: when
	// that variable comes, the factor holds no variable eliminated
	// earlier, and every unconsumed factor holding it is in its bucket.
	buckets := make([][]int, len(order)+1) // the last one is rest
	place := func(i int, sc []int) {
		first := len(order)
		for _, u := range sc {
			first = min(first, pos[u])
		}
		buckets[first] = append(buckets[first], i)
	}
	for i, sc := range scopes {
		place(i, sc)
	}
	seen := make([]int, len(lp.Vars)) // step+1 that last listed the variable
	n := len(scopes)
	for p, v := range order {
		if len(buckets[p]) == 0 {
			continue // in no function: any value costs nothing
		}
		st := beStep{v: v, in: buckets[p]}
		for _, i := range st.in {
			var sc []int
			if i < n {
				sc = scopes[i]
			} else {
				sc = steps[i-n].out
			}
			for _, u := range sc {
				if u != v && seen[u] != p+1 {
					seen[u] = p + 1
					st.out = append(st.out, u)
				}
			}
		}
		slices.SortFunc(st.out, func(x, y int) int {
			xb, yb := x < lp.NB, y < lp.NB
			switch {
			case xb && yb:
				return x - y
			case xb:
				return -1
			case yb:
				return 1
			}
			return pos[y] - pos[x]
		})
		dims := make([]int, len(st.out))
		for k, u := range st.out {
			dims[k] = lp.Domains[u]
		}
		if _, err := join.TableSize(dims, b.opts.MaxEntries); err != nil {
			size := "more than " + fmt.Sprint(b.opts.MaxEntries)
			if n, err := join.TableSize(dims, math.MaxInt); err == nil {
				size = fmt.Sprint(n)
			}
			return nil, nil, fmt.Errorf("bucket elimination: induced width %d: eliminating %s needs a table over %d variables with %s entries, above the limit of %d (use dfbnb): %w",
				width, b.name(v), len(st.out), size, b.opts.MaxEntries, ErrTooLarge)
		}
		steps = append(steps, st)
		place(n+len(steps)-1, st.out)
	}
	return steps, buckets[len(order)], nil
}

// build plans the buckets' kernels. It allocates no table: the CPU path
// gives the plan Go memory (alloc), a BucketRunner gives it its own (see
// runWith), so that tables left on a device never take host memory.
func (b *BE) build(factors []*Factor, steps []beStep, rest []int) (*bePlan, error) {
	p := &bePlan{pool: b.opts.Pool, factors: factors, steps: steps, rest: rest}
	for _, st := range steps {
		in := make([]*Factor, len(st.in))
		for k, i := range st.in {
			in[k] = p.factors[i]
		}
		jp, err := join.NewJoinProjectLazy(in, []int{st.v}, st.out, b.opts.MaxEntries)
		if err != nil {
			return nil, fmt.Errorf("bucket elimination: eliminating %s: %w", b.name(st.v), err)
		}
		p.plans = append(p.plans, jp)
		p.factors = append(p.factors, jp.Output(nil))
		p.args = append(p.args, nil)
	}
	return p, nil
}

// transientEntries is the most bucket-table entries a BE keeps between
// rows. A process may hold hundreds of solvers of which few run at once —
// every home of a `hearth sim` neighbourhood has one for its MVA rows and
// one for its best responses — and SHDS homes with many rules need
// hundreds of megabytes of buckets each: dm_251_1_5 reached 24 GB when
// every solver kept its tables. Past this bound the tables are allocated
// for each row and left to the garbage collector; zeroing them costs a
// small part of filling them.
const transientEntries = 1 << 20

// entries returns the entries of the plan's bucket tables.
func (p *bePlan) entries() int {
	n := 0
	for _, jp := range p.plans {
		n += jp.Rows()
	}
	return n
}

// release drops the bucket tables (output and argmin) of p, giving
// them back to its pool if it has one.
func (p *bePlan) release() {
	first := len(p.factors) - len(p.plans)
	for s := range p.plans {
		if p.pool != nil {
			p.pool.putFloats(p.factors[first+s].Costs)
			p.pool.putInts(p.args[s])
		}
		p.factors[first+s].Costs = nil
		p.args[s] = nil
	}
}

// alloc gives p's bucket tables that have none Go memory. The plans read
// their inputs through the factors, so the new slices are what they see.
func (p *bePlan) alloc() {
	for s := range p.plans {
		p.allocStep(s)
	}
}

// allocStep gives bucket s's tables memory when it has none: the pool's
// (its contents unspecified; the kernel writes every entry) or Go's.
func (p *bePlan) allocStep(s int) {
	first := len(p.factors) - len(p.plans)
	f := p.factors[first+s]
	if f.Costs == nil || p.args[s] == nil {
		f.Costs = p.pool.floatsOf(p.plans[s].Rows())
		p.args[s] = p.pool.intsOf(p.plans[s].Rows())
	}
}

// run executes the buckets in order.
func (b *BE) run(ctx context.Context, p *bePlan) error {
	first := len(p.factors) - len(p.plans)
	for s, jp := range p.plans {
		if err := jp.Run(ctx, p.factors[first+s].Costs, p.args[s], b.opts.Workers); err != nil {
			return err
		}
		b.checks += jp.Reads()
	}
	return nil
}

// runChanged executes the buckets of the row plan p that read a factor
// marked in b.changed, marking their outputs in turn; the others keep
// the last row's tables. Successive rows of a lazy MVA table differ in
// their last boundary variables, and MGM's lexicographic re-solves in one
// mask, so often only the buckets from one variable to the root run.
func (b *BE) runChanged(ctx context.Context, p *bePlan) error {
	first := len(p.factors) - len(p.plans)
	for s, jp := range p.plans {
		run := false
		for _, i := range p.steps[s].in {
			if b.changed[i] {
				run = true
				break
			}
		}
		b.changed[first+s] = run
		if !run {
			continue
		}
		if err := jp.Run(ctx, p.factors[first+s].Costs, p.args[s], b.opts.Workers); err != nil {
			return err
		}
		b.checks += jp.Reads()
	}
	return nil
}

// Hold keeps the row plan's bucket tables between rows, transient ones
// too, until Release (mva.HoldingSolver): a burst of similar rows (a best
// response and its restricted solves) reruns only the buckets each row
// reaches. Until Release the caller must not edit the functions' costs
// in place; BE keeps no copy of them to compare. The first row after Hold
// is solved from scratch, since an edit may have come before it.
func (b *BE) Hold() {
	if !b.held {
		b.held, b.valid = true, false
	}
}

// Release drops the bucket tables, kept or held, and the copies of the
// costs: the next row is solved from scratch.
func (b *BE) Release() {
	b.held, b.valid = false, false
	b.row.release()
	clear(b.snap)
}

// edited reports whether cond[i]'s costs differ, bit for bit, from their
// copy at the last row (or there is no copy yet), and updates the copy.
func (b *BE) edited(i int) bool {
	costs, snap := b.cond[i].costs, b.snap[i]
	if snap == nil {
		b.snap[i] = slices.Clone(costs)
		return true
	}
	same := true
	for e, c := range costs {
		if math.Float64bits(c) != math.Float64bits(snap[e]) {
			same = false
			break
		}
	}
	if !same {
		copy(snap, costs)
	}
	return !same
}

// decode sets the interior values in val (indexed by local variable, the
// boundary already set) by walking the buckets backwards: each bucket's
// argmin, at the values of its output variables, is its variable's value.
// A bucket whose argmin table is not in host memory (p.args[s] nil) left
// it with r, which looks the entry up.
func (p *bePlan) decode(val []int, r BucketRunner) error {
	first := len(p.factors) - len(p.plans)
	for s := len(p.steps) - 1; s >= 0; s-- {
		st := &p.steps[s]
		dims := p.factors[first+s].Dims
		idx := 0
		for k, u := range st.out {
			idx = idx*dims[k] + val[u]
		}
		if a := p.args[s]; a != nil {
			val[st.v] = int(a[idx])
			continue
		}
		if r == nil {
			return fmt.Errorf("bucket elimination: no argmin table for bucket %d", s)
		}
		a, err := r.Argmin(p.plans[s], idx)
		if err != nil {
			return fmt.Errorf("bucket elimination: decoding: %w", err)
		}
		val[st.v] = int(a)
	}
	return nil
}

// SolveRow fixes the boundary, eliminates the interior and decodes the
// best interior assignment. It returns Hard, with interior set to zeros,
// when no completion is feasible.
func (b *BE) SolveRow(ctx context.Context, boundary, interior []int) (float64, error) {
	return b.SolveRowWith(ctx, boundary, interior, nil)
}

// condKeyOf returns the offset in c's function of its entries consistent
// with the boundary values: they, and so c's factor, depend on it alone.
func condKeyOf(c *condFunc, boundary []int) int {
	idx := 0
	for q, v := range c.bvars {
		idx += boundary[v] * c.bstrides[q]
	}
	return idx
}

// condition refills c's factor with the entries of its function at offset
// idx (condKeyOf).
func (b *BE) condition(c *condFunc, idx int) {
	c.fill(idx)
	b.checks += int64(len(c.f.Costs))
}

// fill refills c's factor with the entries of its function at offset idx:
// the interior positions walk the function's table by their strides.
// Bucket elimination and AOBB condition their functions on a row this way.
func (c *condFunc) fill(idx int) {
	dst := c.f.Costs
	k := len(c.istrides)
	if k == 0 {
		dst[0] = c.costs[idx]
		return
	}
	var buf [16]int
	var dig []int
	if k > len(buf) {
		dig = make([]int, k)
	} else {
		dig = buf[:k]
	}
	for e := range dst {
		dst[e] = c.costs[idx]
		for q := k - 1; q >= 0; q-- {
			dig[q]++
			if dig[q] < c.f.Dims[q] {
				idx += c.istrides[q]
				break
			}
			idx -= (c.f.Dims[q] - 1) * c.istrides[q]
			dig[q] = 0
		}
	}
}

// SolveTable fills the whole MVA table: it eliminates the interior
// variables in min-fill order, joins what is left (factors over boundary
// variables only) directly into t.Costs, whose row order is the boundary
// mixed radix, and decodes every row's interior assignment. Hard rows get
// zeros. The intermediate tables live only for the call.
func (b *BE) SolveTable(ctx context.Context, t *mva.Table) error {
	return b.SolveTableWith(ctx, t, nil)
}

// decodeTable decodes every row's interior assignment from the argmin
// tables, in parallel blocks of rows when the table is large. Argmin
// tables that r kept (nil in p.args) are read through r, row by row on
// one goroutine.
func (b *BE) decodeTable(ctx context.Context, p *bePlan, t *mva.Table, r BucketRunner) error {
	lp := b.lp
	rows, ni := len(t.Costs), lp.NumInterior()
	if slices.ContainsFunc(p.args, func(a []int32) bool { return a == nil }) {
		val := make([]int, len(lp.Vars))
		for row := range rows {
			if err := ctx.Err(); err != nil {
				return err
			}
			dst := t.Assign[row*ni : (row+1)*ni]
			t.Known[row] = true
			if mva.IsHard(t.Costs[row]) {
				clear(dst)
				continue
			}
			lp.DecodeRow(row, val[:lp.NB])
			if err := p.decode(val, r); err != nil {
				return err
			}
			for k, v := range val[lp.NB:] {
				dst[k] = int32(v)
			}
		}
		return nil
	}
	decode := func(r0, r1 int) {
		val := make([]int, len(lp.Vars))
		for r := r0; r < r1; r++ {
			dst := t.Assign[r*ni : (r+1)*ni]
			t.Known[r] = true
			if mva.IsHard(t.Costs[r]) {
				clear(dst)
				continue
			}
			lp.DecodeRow(r, val[:lp.NB])
			_ = p.decode(val, nil) // cannot fail: every table is in host memory
			for k, v := range val[lp.NB:] {
				dst[k] = int32(v)
			}
		}
	}
	workers := b.opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	const block = 1 << 12
	if rows < join.ParallelRows || workers == 1 {
		for r0 := 0; r0 < rows; r0 += block {
			if err := ctx.Err(); err != nil {
				return err
			}
			decode(r0, min(r0+block, rows))
		}
		return nil
	}
	blocks := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for r0 := range blocks {
				decode(r0, min(r0+block, rows))
			}
		})
	}
	for r0 := 0; r0 < rows && ctx.Err() == nil; r0 += block {
		blocks <- r0
	}
	close(blocks)
	wg.Wait()
	return ctx.Err()
}
