package local

// This file holds the hooks through which package local/gpu runs bucket
// elimination's buckets on a GPU. SolveTableWith and SolveRowWith are
// SolveTable and SolveRow with every join-project handed to a
// BucketRunner when it takes it; with a nil runner (what SolveTable and
// SolveRow pass) everything runs on the CPU.

import (
	"context"
	"errors"
	"fmt"

	"github.com/hearth-dcop/hearth/mva"
)

// Inputs returns the plan's input factors, in order. The GPU kernel uploads
// them; callers must not modify the slice.
func (p *JoinProject) Inputs() []*Factor { return p.inputs }

// BucketRunner runs some of bucket elimination's join-projects elsewhere
// than on the CPU (package local/gpu runs them on a device).
type BucketRunner interface {
	// Offload reports whether p runs through Step; otherwise BE runs it
	// on the CPU. It depends only on p's shape.
	Offload(p *JoinProject) bool
	// Step computes p as p.Run does (dst and, unless nil, argmin). keep
	// says that the output is an input of a later offloaded step, which
	// may read it from wherever Step left it (the runner knows the table
	// by its Costs slice, p.Output(dst)); host says that dst must hold
	// the output when Step returns, and when it is false dst may be left
	// unwritten. Bucket elimination reads every intermediate table once,
	// so an input that an earlier Step kept is consumed by this one.
	Step(ctx context.Context, p *JoinProject, dst []float64, argmin []int32, keep, host bool) error
}

// runWith executes the buckets in order, offloading those r takes.
// restOffloaded says whether the step reading the factors left at the end
// (the final join of SolveTable) is offloaded too.
func (b *BE) runWith(ctx context.Context, p *bePlan, r BucketRunner, restOffloaded bool) error {
	if r == nil {
		return b.run(ctx, p)
	}
	first := len(p.factors) - len(p.plans)
	off := make([]bool, len(p.plans))
	for s, jp := range p.plans {
		off[s] = r.Offload(jp)
	}
	// consumer[i] is the step reading factor i, -1 for the rest.
	consumer := make([]int, len(p.factors))
	for i := range consumer {
		consumer[i] = -1
	}
	for s, st := range p.steps {
		for _, i := range st.in {
			consumer[i] = s
		}
	}
	for s, jp := range p.plans {
		dst, arg := p.factors[first+s].Costs, p.args[s]
		var err error
		if off[s] {
			c := consumer[first+s]
			next := restOffloaded
			if c >= 0 {
				next = off[c]
			}
			err = r.Step(ctx, jp, dst, arg, next, !next)
		} else {
			err = jp.Run(ctx, dst, arg, b.opts.Workers)
		}
		if err != nil {
			return err
		}
		b.checks += jp.Reads()
	}
	return nil
}

// SolveRowWith is SolveRow with the buckets that r takes run through r.
func (b *BE) SolveRowWith(ctx context.Context, boundary, interior []int, r BucketRunner) (float64, error) {
	lp := b.lp
	if err := checkRowArgs(lp, boundary, interior); err != nil {
		return 0, fmt.Errorf("be: %w", err)
	}
	// A bucket whose inputs are those of the last row needs no work:
	// its table and argmin are still there (memo, below).
	// Only the CPU's kept tables serve the next row: the GPU runner may
	// leave tables on the device, and transient tables are dropped.
	keep := r == nil && !b.transient
	memo := b.valid && keep
	b.valid = false
	if b.condKey == nil {
		b.condKey = make([]int, len(b.cond))
		b.changed = make([]bool, len(b.row.factors))
		b.snap = make([][]float64, len(b.cond))
	}
	for i := range b.cond {
		c := &b.cond[i]
		edited := keep && b.edited(i)
		b.changed[i] = edited
		if c.static {
			continue
		}
		if k := condKeyOf(c, boundary); !memo || edited || k != b.condKey[i] {
			b.condition(c, k)
			b.condKey[i], b.changed[i] = k, true
		}
	}
	if b.transient {
		b.row.alloc()
		defer b.row.release()
	}
	var err error
	if memo {
		err = b.runChanged(ctx, b.row)
	} else {
		err = b.runWith(ctx, b.row, r, false)
	}
	if err != nil {
		return 0, err
	}
	b.valid = keep
	cost := 0.0
	for _, i := range b.row.rest {
		cost += b.row.factors[i].Costs[0] // scalars: every variable is gone
	}
	b.checks += int64(len(b.row.rest))
	clear(interior)
	if mva.IsHard(cost) {
		return mva.Hard, nil
	}
	val := b.rowVal
	clear(val)
	b.row.decode(val)
	copy(interior, val[lp.NB:])
	return cost, nil
}

// SolveTableWith is SolveTable with the buckets, and the final join over
// the boundary, run through r when it takes them.
func (b *BE) SolveTableWith(ctx context.Context, t *mva.Table, r BucketRunner) error {
	lp := b.lp
	if b.planTable(); b.tableErr != nil {
		return b.tableErr
	}
	rows, err := lp.Rows()
	if err != nil {
		return fmt.Errorf("bucket elimination: %w", err)
	}
	ni := lp.NumInterior()
	if len(t.Costs) != rows || len(t.Assign) != rows*ni || len(t.Known) != rows {
		return errors.New("bucket elimination: the table does not belong to this local problem")
	}
	factors := make([]*Factor, len(lp.Funcs))
	for i, f := range lp.Funcs {
		dims := make([]int, len(f.Scope))
		for k, v := range f.Scope {
			dims[k] = lp.Domains[v]
		}
		factors[i] = &Factor{Vars: f.Scope, Dims: dims, Costs: f.Costs}
	}
	p, err := b.build(factors, b.tableSteps, b.tableRest)
	if err != nil {
		return err
	}

	// The final join over the boundary, in table order, planned first so
	// that the buckets know where their outputs go. A boundary variable
	// left in no factor gets a zero factor, so that the join still spans
	// it.
	var final []*Factor
	in := make([]bool, lp.NB)
	for _, i := range p.rest {
		final = append(final, p.factors[i])
		for _, v := range p.factors[i].Vars {
			in[v] = true
		}
	}
	out := make([]int, lp.NB)
	for k := range out {
		out[k] = k
		if !in[k] {
			final = append(final, &Factor{Vars: []int{k}, Dims: []int{lp.Domains[k]}, Costs: make([]float64, lp.Domains[k])})
		}
	}
	jp, err := NewJoinProjectLimit(final, nil, out, max(b.opts.MaxEntries, rows))
	if err != nil {
		return fmt.Errorf("bucket elimination: joining the boundary: %w", err)
	}
	finalOff := r != nil && r.Offload(jp)
	if err := b.runWith(ctx, p, r, finalOff); err != nil {
		return err
	}
	if finalOff {
		err = r.Step(ctx, jp, t.Costs, nil, false, true)
	} else {
		err = jp.Run(ctx, t.Costs, nil, b.opts.Workers)
	}
	if err != nil {
		return err
	}
	b.checks += jp.Reads()
	return b.decodeTable(ctx, p, t)
}
