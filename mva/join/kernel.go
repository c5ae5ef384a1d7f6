// Package join is the join-project table kernel: the sum of several cost
// tables followed by a minimisation over some of their variables, with
// the argmin kept. Bucket elimination (package local) and DPOP's UTIL
// messages (mva/protocol/dpop) are both this one operation over tables laid
// out as mva.Function's are, so it lives in a leaf package that both
// import: the protocols under mva/ then need nothing of the local solvers,
// and local/gpu runs the same plans on a device.
package join

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// DefaultMaxEntries bounds the output of a JoinProject plan when the caller
// gives no limit: 1<<28 float64 entries are 2 GiB, more than an edge device
// should allocate for one table.
const DefaultMaxEntries = 1 << 28

// ErrTooLarge is wrapped by every error that refuses a table for its size,
// so that callers can suggest a solver that needs less memory (dfbnb).
var ErrTooLarge = errors.New("table too large")

// Factor is a dense cost table over variables: Costs holds one entry per
// joint assignment of Vars, in row-major mixed radix over Dims (the last
// variable varies fastest), the layout of mva.Function. Vars may be local
// indices or problem indices: the kernel only compares them. Costs are
// finite or Hard (+Inf), never NaN or -Inf, as mva.Problem.Validate
// guarantees for functions.
type Factor struct {
	Vars  []int
	Dims  []int
	Costs []float64
}

// NewFactor returns a factor over vars with the given domain sizes and
// every entry zero.
func NewFactor(vars, dims []int) (*Factor, error) {
	if len(vars) != len(dims) {
		return nil, fmt.Errorf("factor: %d dims for %d variables", len(dims), len(vars))
	}
	n, err := TableSize(dims, math.MaxInt)
	if err != nil {
		return nil, fmt.Errorf("factor: %w", err)
	}
	f := &Factor{Vars: slices.Clone(vars), Dims: slices.Clone(dims), Costs: make([]float64, n)}
	if err := f.check(); err != nil {
		return nil, fmt.Errorf("factor: %w", err)
	}
	return f, nil
}

// check verifies the factor's shape: one dim per variable, no repeated
// variable, positive dims and a table of the matching size.
func (f *Factor) check() error {
	n, err := f.shape()
	if err != nil {
		return err
	}
	if len(f.Costs) != n {
		return fmt.Errorf("table has %d entries, dims %v need %d", len(f.Costs), f.Dims, n)
	}
	return nil
}

// shape verifies the factor's variables and dims and returns the size of
// its table.
func (f *Factor) shape() (int, error) {
	if len(f.Dims) != len(f.Vars) {
		return 0, fmt.Errorf("%d dims for %d variables", len(f.Dims), len(f.Vars))
	}
	for i, v := range f.Vars {
		if slices.Contains(f.Vars[i+1:], v) {
			return 0, fmt.Errorf("variable %d appears twice", v)
		}
	}
	return TableSize(f.Dims, math.MaxInt)
}

// TableSize returns the product of dims, or an error (wrapping
// ErrTooLarge past limit) when a dim is not positive or the product
// exceeds limit.
func TableSize(dims []int, limit int) (int, error) {
	n := 1
	for _, d := range dims {
		if d < 1 {
			return 0, fmt.Errorf("domain size %d is not positive", d)
		}
		if n > limit/d {
			return 0, fmt.Errorf("%w: a table over domains %v exceeds %d entries", ErrTooLarge, dims, limit)
		}
		n *= d
	}
	return n, nil
}

// ParallelRows is the output size below which Run stays on the calling
// goroutine: smaller tables finish faster than goroutines start.
const ParallelRows = 1 << 14

// stackScratch is how many ints of per-worker state Run keeps on the stack
// before it falls back to allocating.
const stackScratch = 128

// JoinProject is a plan that joins (sums) factors and minimises some of
// their variables out: for every assignment of the output variables,
//
//	dst[row] = min over the elim variables of Σ_j inputs[j]
//
// and argmin[row] is the index of the minimising joint elim assignment. It
// is the one hot loop that bucket elimination, DPOP's UTIL phase and the GPU
// code share, so it is planned once (all strides precomputed) and run many
// times, possibly on refilled input tables.
//
// The plan keeps the input factors, not copies: Run reads their Costs as
// they are at the time of the call, so a caller may overwrite the entries
// (not the shapes) and run the plan again. A plan may be run concurrently
// from several goroutines as long as the inputs are not being written.
//
// How it runs: every input's stride for every output and eliminated
// variable is computed by the plan. A worker takes a contiguous block of
// output rows, decodes its first row once and then walks an odometer,
// moving each input's offset by precomputed steps (no division). Rows are
// walked in runs along the innermost output variable; an input that holds
// the eliminated variable but not that output variable reads the same
// entries for every row of a run, so with one eliminated variable such
// inputs are summed once per run and the inner loop reads only the others.
// Entries are summed in float64; the sums may associate differently from
// input order, which changes nothing for whole costs.
type JoinProject struct {
	inputs []*Factor
	sizes  []int // len(inputs[j].Costs) when planned

	out, elim         []int
	outDims, elimDims []int
	rows, esize       int

	// inner[j] is input j's stride for the innermost output variable (0
	// for a scalar output).
	inner []int
	// ostep[k*nIn+j] is input j's stride for output position k (0 when
	// the input lacks the variable); orew[k*nIn+j] = ostep*(dim_k-1), the
	// step back when digit k wraps to 0.
	ostep, orew []int

	// rowIn are the inputs without any elim variable: their entry is
	// constant along a row. elimIn are the others.
	rowIn, elimIn []int

	// For elimIn[t]: lstride[t] is its stride for the last elim variable,
	// the one the inner loop runs over, and lastD that variable's size.
	lstride []int
	lastD   int
	// einner[t] is inner[elimIn[t]].
	einner []int
	// With one eliminated variable, the inputs that hold it but not the
	// innermost output variable (inv) are the same for every row of a
	// run: their sum per eliminated value is computed once per run, and
	// the inner loop reads only the other ones (vary). inv is empty when
	// the output is a scalar or several variables are eliminated.
	inv, vary   []int // input indices
	invS, varyS []int // their strides for the eliminated variable

	// The other elim variables (elim[:len-1]) form an odometer around the
	// inner loop: pstep/prew[k*len(elimIn)+t] as ostep/orew above.
	pdims       []int
	pstep, prew []int
	psize       int

	// Tiles for sumRows when the innermost output variable is small
	// (binary domains give runs of two rows, where moving the odometer
	// cost more than the reads): the last tileM output variables, tileB
	// rows, are walked as one tile, and rel[j*tileB+i] is the offset of
	// input j's entry for the tile's row i from its first row's. tileB
	// is 0 when runs are long enough. minTiles is the same walk for the
	// minimisation, where one two-valued variable is eliminated, held by
	// one or two inputs that all vary along a run (no inv), or by one of
	// each (a mini-bucket message and its moment-matching shift).
	tileM, tileB int
	rel          []int
	minTiles     bool
}

// maxTile bounds a tile's rows: every input's relative offset is held
// for each of them.
const maxTile = 64

// NewJoinProject plans the join of inputs with elim minimised out and the
// result laid out over out (row-major, last fastest). Every variable of the
// inputs must be in exactly one of out and elim, every variable of out and
// elim in at least one input, and a variable's dim must agree across inputs.
// Tables with more than DefaultMaxEntries output rows are refused.
func NewJoinProject(inputs []*Factor, elim, out []int) (*JoinProject, error) {
	return NewJoinProjectLimit(inputs, elim, out, 0)
}

// NewJoinProjectLimit is NewJoinProject with an explicit bound on the
// number of output entries; maxEntries <= 0 means DefaultMaxEntries. The
// error wraps ErrTooLarge when the output exceeds it.
func NewJoinProjectLimit(inputs []*Factor, elim, out []int, maxEntries int) (*JoinProject, error) {
	return newJoinProject(inputs, elim, out, maxEntries, false)
}

// NewJoinProjectLazy is NewJoinProjectLimit, except that an input whose
// Costs is nil is planned from its dims alone (bucket elimination plans its
// chain before it knows where the intermediate tables will live); Run
// requires its table to be there by then.
func NewJoinProjectLazy(inputs []*Factor, elim, out []int, maxEntries int) (*JoinProject, error) {
	return newJoinProject(inputs, elim, out, maxEntries, true)
}

// newJoinProject plans a join-project; lazy as for NewJoinProjectLazy.
func newJoinProject(inputs []*Factor, elim, out []int, maxEntries int, lazy bool) (*JoinProject, error) {
	if maxEntries <= 0 {
		maxEntries = DefaultMaxEntries
	}
	// The distinct variables of the inputs and their dims, by linear
	// scans: a plan has a few dozen variables at most, and the maps this
	// used were most of the planning's allocation (AOBB plans a join per
	// mini-bucket of every solve, docs/DESIGN.md).
	var vars, dims []int
	for j, f := range inputs {
		if f == nil {
			return nil, fmt.Errorf("join: input %d is nil", j)
		}
		var err error
		if lazy && f.Costs == nil {
			_, err = f.shape()
		} else {
			err = f.check()
		}
		if err != nil {
			return nil, fmt.Errorf("join: input %d: %w", j, err)
		}
		for i, v := range f.Vars {
			if k := slices.Index(vars, v); k >= 0 {
				if dims[k] != f.Dims[i] {
					return nil, fmt.Errorf("join: variable %d has %d values in one input and %d in input %d", v, dims[k], f.Dims[i], j)
				}
				continue
			}
			vars = append(vars, v)
			dims = append(dims, f.Dims[i])
		}
	}
	dimOf := func(v int) int { return dims[slices.Index(vars, v)] }
	for _, s := range []struct {
		name string
		vars []int
	}{{"output", out}, {"eliminated", elim}} {
		for k, v := range s.vars {
			switch {
			case slices.Contains(s.vars[:k], v):
				return nil, fmt.Errorf("join: variable %d is both %s and %s", v, s.name, s.name)
			case s.name == "eliminated" && slices.Contains(out, v):
				return nil, fmt.Errorf("join: variable %d is both output and eliminated", v)
			case !slices.Contains(vars, v):
				return nil, fmt.Errorf("join: %s variable %d is in no input", s.name, v)
			}
		}
	}
	if len(out)+len(elim) != len(vars) {
		for _, v := range vars {
			if !slices.Contains(out, v) && !slices.Contains(elim, v) {
				return nil, fmt.Errorf("join: variable %d is neither output nor eliminated", v)
			}
		}
	}

	// The plan's int slices are runs of one slab (take), each capped at
	// its length or room, so that an append by a caller (Out, Output's
	// factor) copies rather than runs into the next: the mini-bucket
	// heuristic of an SHDS response plans some two hundred joins, and
	// their fifteen small allocations each were a third of its planning.
	nIn := len(inputs)
	slab := make([]int, 2*(len(out)+len(elim))+nIn*(10+2*len(out)+2*len(elim)))
	take := func(n int) []int {
		r := slab[:n:n]
		slab = slab[n:]
		return r
	}
	p := &JoinProject{
		inputs:   slices.Clone(inputs),
		out:      append(take(len(out))[:0], out...),
		elim:     append(take(len(elim))[:0], elim...),
		outDims:  take(len(out)),
		elimDims: take(len(elim)),
	}
	for k, v := range out {
		p.outDims[k] = dimOf(v)
	}
	for k, v := range elim {
		p.elimDims[k] = dimOf(v)
	}
	var err error
	if p.rows, err = TableSize(p.outDims, maxEntries); err != nil {
		return nil, fmt.Errorf("join: output over %d variables: %w", len(out), err)
	}
	if p.esize, err = TableSize(p.elimDims, math.MaxInt32); err != nil {
		return nil, fmt.Errorf("join: %d eliminated variables: %w", len(elim), err)
	}

	p.sizes = take(nIn)
	for j, f := range inputs {
		p.sizes[j], _ = TableSize(f.Dims, math.MaxInt) // checked above
	}
	// stride is v's stride in input j's table, 0 where j lacks v.
	stride := func(j, v int) int {
		f, s := inputs[j], 1
		for i := len(f.Vars) - 1; i >= 0; i-- {
			if f.Vars[i] == v {
				return s
			}
			s *= f.Dims[i]
		}
		return 0
	}
	p.ostep = take(len(out) * nIn)
	p.orew = take(len(out) * nIn)
	for k, v := range out {
		for j := range inputs {
			s := stride(j, v)
			p.ostep[k*nIn+j] = s
			p.orew[k*nIn+j] = s * (p.outDims[k] - 1)
		}
	}
	p.inner = take(nIn)
	p.elimIn, p.rowIn = take(nIn)[:0], take(nIn)[:0]
	if len(out) > 0 {
		copy(p.inner, p.ostep[(len(out)-1)*nIn:])
	}
	for j := range inputs {
		if slices.ContainsFunc(elim, func(v int) bool { return stride(j, v) != 0 }) {
			p.elimIn = append(p.elimIn, j)
		} else {
			p.rowIn = append(p.rowIn, j)
		}
	}
	p.lastD, p.psize = 1, 1
	p.lstride = take(len(p.elimIn))
	p.einner = take(len(p.elimIn))
	for t, j := range p.elimIn {
		p.einner[t] = p.inner[j]
	}
	if len(elim) > 0 {
		last := elim[len(elim)-1]
		p.lastD = p.elimDims[len(elim)-1]
		for t, j := range p.elimIn {
			p.lstride[t] = stride(j, last)
		}
		if len(elim) == 1 && len(out) > 0 {
			ne := len(p.elimIn)
			p.inv, p.invS, p.vary, p.varyS = take(ne)[:0], take(ne)[:0], take(ne)[:0], take(ne)[:0]
			for t, j := range p.elimIn {
				if p.inner[j] == 0 {
					p.inv = append(p.inv, j)
					p.invS = append(p.invS, p.lstride[t])
				} else {
					p.vary = append(p.vary, j)
					p.varyS = append(p.varyS, p.lstride[t])
				}
			}
		}
		pre := elim[:len(elim)-1]
		ne := len(p.elimIn)
		p.pdims = p.elimDims[:len(pre)]
		p.psize = p.esize / p.lastD
		p.pstep = take(len(pre) * ne)
		p.prew = take(len(pre) * ne)
		for k, v := range pre {
			for t, j := range p.elimIn {
				s := stride(j, v)
				p.pstep[k*ne+t] = s
				p.prew[k*ne+t] = s * (p.pdims[k] - 1)
			}
		}
	}
	p.planTiles()
	return p, nil
}

// maxInnerTiled is the largest innermost output domain that tiles: runs
// of up to sixteen rows, where the odometer's moves are a sizeable
// part of the reads' cost.
const maxInnerTiled = 16

// planTiles chooses sumRows' tile: the trailing output variables whose
// joint size stays within maxTile, when there are at least two of them
// and the innermost has at most maxInnerTiled values.
func (p *JoinProject) planTiles() {
	nOut, nIn := len(p.out), len(p.inputs)
	// Binary eliminated variables only: with more values minTilesBase1
	// reads its run-invariant input once per row where minBase1 sums it
	// once per run (zebra's five values: +2.8% instructions in all).
	minTiles := len(p.elim) == 1 && p.lastD <= 2 && ((len(p.inv) == 0 && len(p.elimIn) <= 2) || (len(p.inv) == 1 && len(p.vary) == 1))
	if nOut < 2 || (len(p.rowIn) == 0 && !minTiles) || p.outDims[nOut-1] > maxInnerTiled {
		return
	}
	m, b := 0, 1
	for m < nOut && b*p.outDims[nOut-1-m] <= maxTile {
		b *= p.outDims[nOut-1-m]
		m++
	}
	if m < 2 {
		return
	}
	p.tileM, p.tileB, p.minTiles = m, b, minTiles
	p.rel = make([]int, nIn*b)
	for j := range p.inputs {
		// Built from the innermost variable out: each more significant
		// variable repeats the offsets so far once per value, moved by
		// its stride (no division per entry; AOBB plans hundreds of
		// these per heuristic).
		rel := p.rel[j*b : (j+1)*b]
		n := 1
		for k := nOut - 1; k >= nOut-m; k-- {
			st := p.ostep[k*nIn+j]
			for d := 1; d < p.outDims[k]; d++ {
				for i := range n {
					rel[d*n+i] = rel[i] + d*st
				}
			}
			n *= p.outDims[k]
		}
	}
}

// Rows returns the number of output entries.
func (p *JoinProject) Rows() int { return p.rows }

// ElimSize returns the number of joint assignments of the eliminated
// variables, the range of argmin.
func (p *JoinProject) ElimSize() int { return p.esize }

// Out returns the output variables in table order.
func (p *JoinProject) Out() []int { return p.out }

// OutDims returns the output variables' domain sizes.
func (p *JoinProject) OutDims() []int { return p.outDims }

// Elim returns the eliminated variables in argmin order.
func (p *JoinProject) Elim() []int { return p.elim }

// ElimDims returns the eliminated variables' domain sizes.
func (p *JoinProject) ElimDims() []int { return p.elimDims }

// Reads returns how many input entries one Run reads: an input without
// eliminated variables is read once per row, the others once per row and
// eliminated assignment. Solvers report it as their constraint checks.
func (p *JoinProject) Reads() int64 {
	return int64(p.rows) * (int64(len(p.rowIn)) + int64(p.esize)*int64(len(p.elimIn)))
}

// Output returns a factor over the plan's output variables backed by
// costs, which must have Rows entries (typically the dst of Run). It is the
// input of the next plan in a chain of eliminations.
func (p *JoinProject) Output(costs []float64) *Factor {
	return &Factor{Vars: p.out, Dims: p.outDims, Costs: costs}
}

// Run computes the plan into dst (Rows entries) and, unless argmin is nil,
// the index of the minimising eliminated assignment into argmin (Rows
// entries; mixed radix over Elim, last fastest). Ties go to the smallest
// index; a row where every option is Hard gets Hard and index 0. workers
// <= 0 means runtime.GOMAXPROCS(0). The result does not depend on workers.
// Run checks ctx between blocks of rows and returns its error when it is
// cancelled, leaving dst partly written.
func (p *JoinProject) Run(ctx context.Context, dst []float64, argmin []int32, workers int) error {
	if len(dst) != p.rows {
		return fmt.Errorf("join: dst has %d entries, the output needs %d", len(dst), p.rows)
	}
	if argmin != nil && len(argmin) != p.rows {
		return fmt.Errorf("join: argmin has %d entries, the output needs %d", len(argmin), p.rows)
	}
	for j, f := range p.inputs {
		if len(f.Costs) != p.sizes[j] {
			return fmt.Errorf("join: input %d has %d entries, its dims need %d", j, len(f.Costs), p.sizes[j])
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// Blocks of about 1<<16 entry reads keep ctx checks frequent and give
	// every worker several blocks to balance uneven progress.
	work := max(1, p.esize*max(1, len(p.elimIn)))
	block := max(64, (1<<16)/work)
	nblocks := (p.rows + block - 1) / block
	if p.rows < ParallelRows || workers == 1 || nblocks == 1 {
		var buf [stackScratch]int
		var fbuf [stackScratch]float64
		scratch, base := p.scratch(buf[:], fbuf[:])
		for b := 0; b < nblocks; b++ {
			if b > 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			r0 := b * block
			p.runBlock(dst, argmin, r0, min(r0+block, p.rows), scratch, base)
		}
		return nil
	}
	workers = min(workers, nblocks)
	var next atomic.Int64
	var stopped atomic.Bool
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var buf [stackScratch]int
			var fbuf [stackScratch]float64
			scratch, base := p.scratch(buf[:], fbuf[:])
			for {
				b := int(next.Add(1) - 1)
				if b >= nblocks {
					return
				}
				if ctx.Err() != nil {
					stopped.Store(true)
					return
				}
				r0 := b * block
				p.runBlock(dst, argmin, r0, min(r0+block, p.rows), scratch, base)
			}
		})
	}
	wg.Wait()
	if stopped.Load() {
		return ctx.Err()
	}
	return nil
}

// scratch returns a worker's state: input offsets, output digits, elim
// input offsets and prefix digits, and room for one sum per eliminated
// value. It uses buf and fbuf when they are large enough.
func (p *JoinProject) scratch(buf []int, fbuf []float64) ([]int, []float64) {
	n := len(p.inputs) + len(p.out) + len(p.elimIn) + len(p.pdims)
	var s []int
	if n <= len(buf) {
		s = buf[:n]
	} else {
		s = make([]int, n)
	}
	if len(p.inv) == 0 {
		return s, nil
	}
	if p.lastD <= len(fbuf) {
		return s, fbuf[:p.lastD]
	}
	return s, make([]float64, p.lastD)
}

// runBlock computes output rows [r0, r1): first the inputs without
// eliminated variables, summed into dst, then the minimisation over the
// eliminated ones, which adds the others.
func (p *JoinProject) runBlock(dst []float64, argmin []int32, r0, r1 int, scratch []int, base []float64) {
	nIn, nOut := len(p.inputs), len(p.out)
	off := scratch[:nIn]
	dig := scratch[nIn : nIn+nOut]
	eoff := scratch[nIn+nOut : nIn+nOut+len(p.elimIn)]
	pdig := scratch[nIn+nOut+len(p.elimIn):]
	dst = dst[r0:r1]
	var am []int32
	if argmin != nil {
		am = argmin[r0:r1]
	}
	if p.tileB > 0 && len(p.rowIn) > 0 {
		p.sumTiles(dst, r0, off, dig)
	} else if len(p.rowIn) > 0 {
		p.seek(r0, off, dig)
		p.sumRows(dst, off, dig)
	} else {
		clear(dst)
	}
	if len(p.elim) == 0 {
		clear(am)
		return
	}
	if p.minTiles {
		if len(p.inv) == 1 {
			p.minTilesBase1(dst, am, r0, off, dig)
		} else if len(p.elimIn) == 1 {
			p.minTiles1(dst, am, r0, off, dig)
		} else {
			p.minTiles2(dst, am, r0, off, dig)
		}
		return
	}
	p.seek(r0, off, dig)
	p.minimise(dst, am, off, dig, eoff, pdig, base)
}

// seek sets the output odometer to row r: the digits and every input's
// offset.
func (p *JoinProject) seek(r int, off, dig []int) {
	nIn := len(off)
	for k := len(dig) - 1; k >= 0; k-- {
		dig[k] = r % p.outDims[k]
		r /= p.outDims[k]
	}
	clear(off)
	for k, d := range dig {
		st := p.ostep[k*nIn : (k+1)*nIn]
		for j := range off {
			off[j] += d * st[j]
		}
	}
}

// The loops walk the output rows in runs along the innermost output
// variable: within a run every input's offset moves by a constant step
// (inner), so the odometer below only carries once per run.

// runLen returns the number of rows, at most left, from the odometer's row
// to the end of its run.
func (p *JoinProject) runLen(dig []int, left int) int {
	if len(dig) == 0 {
		return left // a scalar output: one row
	}
	return min(left, p.outDims[len(dig)-1]-dig[len(dig)-1])
}

// nextRun moves the odometer from the first row of a run that reached the
// innermost variable's last value to the first row of the next run.
func (p *JoinProject) nextRun(off, dig []int) {
	k := len(dig) - 1
	d0 := dig[k]
	dig[k] = 0
	if k > 0 && dig[k-1]+1 < p.outDims[k-1] {
		// The common case, the next digit up moves on: one pass over
		// the offsets instead of two (runs of two or three rows, as
		// the SHDS responses' messages have, paid for both).
		dig[k-1]++
		nIn := len(off)
		st := p.ostep[(k-1)*nIn : k*nIn]
		for j := range off {
			off[j] += st[j] - d0*p.inner[j]
		}
		return
	}
	for j := range off {
		off[j] -= d0 * p.inner[j]
	}
	p.advance(off, dig, k-1)
}

// advance increments output digit k, carrying into lower positions, and
// keeps the input offsets in step.
func (p *JoinProject) advance(off, dig []int, k int) {
	nIn := len(off)
	for ; k >= 0; k-- {
		dig[k]++
		if dig[k] < p.outDims[k] {
			st := p.ostep[k*nIn : (k+1)*nIn]
			for j := range off {
				off[j] += st[j]
			}
			return
		}
		dig[k] = 0
		rew := p.orew[k*nIn : (k+1)*nIn]
		for j := range off {
			off[j] -= rew[j]
		}
	}
}

// sumRows sets dst to the sum of the inputs without eliminated variables,
// input by input (so in input order for every row).
func (p *JoinProject) sumRows(dst []float64, off, dig []int) {
	for r := 0; r < len(dst); {
		n := p.runLen(dig, len(dst)-r)
		row := dst[r : r+n]
		clear(row)
		for _, j := range p.rowIn {
			c, o, st := p.inputs[j].Costs, off[j], p.inner[j]
			for i := range row {
				row[i] += c[o]
				o += st
			}
		}
		r += n
		if r < len(dst) {
			p.nextRun(off, dig)
		}
	}
}

// sumTiles is sumRows by tiles (JoinProject.tileB) for dst, the rows from
// r0 on: every input's entries for a tile's rows are read through its
// relative offsets, and the odometer moves once per tile. The first input
// is copied, the others added in input order, the sums of sumRows.
func (p *JoinProject) sumTiles(dst []float64, r0 int, off, dig []int) {
	b := p.tileB
	k := len(p.out) - p.tileM - 1 // the digit a tile advances; -1: one tile
	i0 := r0 % b
	p.seek(r0-i0, off, dig)
	for r := 0; r < len(dst); {
		n := min(b-i0, len(dst)-r)
		row := dst[r : r+n]
		for q, j := range p.rowIn {
			c, o := p.inputs[j].Costs, off[j]
			rel := p.rel[j*b+i0 : j*b+i0+n]
			if q == 0 {
				for i, x := range rel {
					row[i] = c[o+x]
				}
				continue
			}
			for i, x := range rel {
				row[i] += c[o+x]
			}
		}
		r += n
		i0 = 0
		if r < len(dst) {
			p.advance(off, dig, k)
		}
	}
}

// minTiles1 is min1 by tiles (JoinProject.minTiles): the rows from r0
// on, one input holding the eliminated variable.
func (p *JoinProject) minTiles1(dst []float64, am []int32, r0 int, off, dig []int) {
	b := p.tileB
	k := len(p.out) - p.tileM - 1
	ja := p.elimIn[0]
	a, sa, relA := p.inputs[ja].Costs, p.lstride[0], p.rel[ja*b:(ja+1)*b]
	D, inf := p.lastD, math.Inf(1)
	i0 := r0 % b
	p.seek(r0-i0, off, dig)
	for r := 0; r < len(dst); {
		n := min(b-i0, len(dst)-r)
		oa := off[ja]
		for i, ra := range relA[i0 : i0+n] {
			c0 := dst[r+i]
			best, arg := inf, 0
			xa := oa + ra
			if D == 2 {
				s0, s1 := c0+a[xa], c0+a[xa+sa]
				if s1 < s0 {
					arg = 1
				}
				best = min(s0, s1)
			}
			for d := 0; d < D && D != 2; d++ {
				s := c0 + a[xa]
				if s < best {
					arg = d
				}
				best = min(best, s)
				xa += sa
			}
			dst[r+i] = best
			if am != nil {
				am[r+i] = int32(arg)
			}
		}
		r += n
		i0 = 0
		if r < len(dst) {
			p.advance(off, dig, k)
		}
	}
}

// minTiles2 is min2 by tiles: two inputs hold the eliminated variable.
func (p *JoinProject) minTiles2(dst []float64, am []int32, r0 int, off, dig []int) {
	b := p.tileB
	k := len(p.out) - p.tileM - 1
	ja, jb := p.elimIn[0], p.elimIn[1]
	a, sa, relA := p.inputs[ja].Costs, p.lstride[0], p.rel[ja*b:(ja+1)*b]
	bc, sb, relB := p.inputs[jb].Costs, p.lstride[1], p.rel[jb*b:(jb+1)*b]
	D, inf := p.lastD, math.Inf(1)
	i0 := r0 % b
	p.seek(r0-i0, off, dig)
	for r := 0; r < len(dst); {
		n := min(b-i0, len(dst)-r)
		oa, ob := off[ja], off[jb]
		rb := relB[i0 : i0+n]
		for i, ra := range relA[i0 : i0+n] {
			c0 := dst[r+i]
			best, arg := inf, 0
			xa, xb := oa+ra, ob+rb[i]
			if D == 2 {
				s0, s1 := c0+a[xa]+bc[xb], c0+a[xa+sa]+bc[xb+sb]
				if s1 < s0 {
					arg = 1
				}
				best = min(s0, s1)
			}
			for d := 0; d < D && D != 2; d++ {
				s := c0 + a[xa] + bc[xb]
				if s < best {
					arg = d
				}
				best = min(best, s)
				xa += sa
				xb += sb
			}
			dst[r+i] = best
			if am != nil {
				am[r+i] = int32(arg)
			}
		}
		r += n
		i0 = 0
		if r < len(dst) {
			p.advance(off, dig, k)
		}
	}
}

// minTilesBase1 is minBase1 by tiles: one input holds the eliminated
// variable and not the innermost output variable (inv, whose entry is
// added to the row's sum first, as minBase1 adds base), one holds both.
func (p *JoinProject) minTilesBase1(dst []float64, am []int32, r0 int, off, dig []int) {
	b := p.tileB
	k := len(p.out) - p.tileM - 1
	ji, ja := p.inv[0], p.vary[0]
	bc, si, relI := p.inputs[ji].Costs, p.invS[0], p.rel[ji*b:(ji+1)*b]
	a, sa, relA := p.inputs[ja].Costs, p.varyS[0], p.rel[ja*b:(ja+1)*b]
	D, inf := p.lastD, math.Inf(1)
	i0 := r0 % b
	p.seek(r0-i0, off, dig)
	for r := 0; r < len(dst); {
		n := min(b-i0, len(dst)-r)
		oi, oa := off[ji], off[ja]
		ri := relI[i0 : i0+n]
		for i, ra := range relA[i0 : i0+n] {
			c0 := dst[r+i]
			best, arg := inf, 0
			xi, xa := oi+ri[i], oa+ra
			if D == 2 { // binary: the loop's control was a third of it
				s0, s1 := c0+bc[xi]+a[xa], c0+bc[xi+si]+a[xa+sa]
				if s1 < s0 {
					arg = 1
				}
				best = min(s0, s1)
			}
			for d := 0; d < D && D != 2; d++ {
				s := c0 + bc[xi] + a[xa]
				if s < best {
					arg = d
				}
				best = min(best, s)
				xi += si
				xa += sa
			}
			dst[r+i] = best
			if am != nil {
				am[r+i] = int32(arg)
			}
		}
		r += n
		i0 = 0
		if r < len(dst) {
			p.advance(off, dig, k)
		}
	}
}

// Inputs returns the plan's input factors, in order. The GPU kernel uploads
// them; callers must not modify the slice.
func (p *JoinProject) Inputs() []*Factor { return p.inputs }
