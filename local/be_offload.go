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
	"github.com/hearth-dcop/hearth/mva/join"
)

// ArgminMode says where a BucketRunner's Step leaves a bucket's argmin
// table.
type ArgminMode int

const (
	// ArgminNone: no argmin table is wanted (SolveTable's final join).
	ArgminNone ArgminMode = iota
	// ArgminHost: Step returns the table in host memory (SolveTable
	// decodes every row from it).
	ArgminHost
	// ArgminAny: Step keeps the table where it likes and returns it only
	// when it is in host memory; bucket elimination reads the entries it
	// needs (one per bucket for SolveRow) through Argmin.
	ArgminAny
)

// BucketRunner runs some of bucket elimination's join-projects elsewhere
// than on the CPU (package local/gpu runs them on a device). Memory a
// runner hands out (output tables, argmin tables) stays valid until the
// elimination ends: the runner's owner (local/gpu's BE) reclaims it after
// SolveRowWith or SolveTableWith returns.
type BucketRunner interface {
	// Offload reports whether p runs through Step; otherwise BE runs it
	// on the CPU. It depends only on p's shape.
	Offload(p *JoinProject) bool
	// Step computes p as p.Run does into out, p's output factor. keep
	// says that out is an input of a later offloaded step, which may read
	// it from wherever Step left it (the runner knows it by out). host
	// says that out.Costs must hold the output when Step returns: when
	// out.Costs is nil, Step points it at host memory of its own; without
	// host, out.Costs may be left nil or unwritten. arg says what Step
	// does with the argmin table; the table it returns (nil when it keeps
	// it elsewhere, or with ArgminNone) is not zeroed memory of its own.
	// Bucket elimination reads every intermediate table once, so an
	// input that an earlier Step kept is consumed by this one.
	Step(ctx context.Context, p *JoinProject, out *Factor, keep, host bool, arg ArgminMode) ([]int32, error)
	// Argmin returns entry i of the argmin table of p that a Step with
	// ArgminAny kept outside host memory.
	Argmin(p *JoinProject, i int) (int32, error)
}

// runWith executes the buckets in order, offloading those r takes.
// restOffloaded says whether the step reading the factors left at the end
// (the final join of SolveTable) is offloaded too. With a runner, the
// offloaded buckets' tables are the runner's (or nowhere, on its device):
// the returned restore puts p's tables back as they were, to be called
// once the result is decoded and before the runner reclaims its memory.
// The buckets left on the CPU get Go memory, which p keeps.
func (b *BE) runWith(ctx context.Context, p *bePlan, r BucketRunner, restOffloaded bool, arg ArgminMode) (restore func(), err error) {
	if r == nil {
		p.alloc()
		return func() {}, b.run(ctx, p)
	}
	first := len(p.factors) - len(p.plans)
	off := make([]bool, len(p.plans))
	for s, jp := range p.plans {
		if off[s] = r.Offload(jp); !off[s] {
			p.allocStep(s)
		}
	}
	saved := make([][]float64, len(p.plans))
	savedArgs := make([][]int32, len(p.plans))
	for s := range p.plans {
		saved[s], savedArgs[s] = p.factors[first+s].Costs, p.args[s]
	}
	restore = func() {
		for s := range p.plans {
			p.factors[first+s].Costs, p.args[s] = saved[s], savedArgs[s]
		}
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
		out := p.factors[first+s]
		var err error
		if off[s] {
			c := consumer[first+s]
			next := restOffloaded
			if c >= 0 {
				next = off[c]
			}
			if !next {
				// The CPU reads it: host memory of the runner's, not
				// a table this plan had before.
				out.Costs = nil
			}
			p.args[s], err = r.Step(ctx, jp, out, next, !next, arg)
			if err == nil && arg == ArgminHost && p.args[s] == nil {
				err = fmt.Errorf("bucket elimination: the runner returned no argmin table for bucket %d", s)
			}
		} else {
			err = jp.Run(ctx, out.Costs, p.args[s], b.opts.Workers)
		}
		if err != nil {
			restore()
			return nil, err
		}
		b.checks += jp.Reads()
	}
	return restore, nil
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
	// Held tables are kept whatever their size, and their costs are
	// promised unedited until Release.
	keep := r == nil && (!b.transient || b.held)
	watch := keep && !b.held
	memo := b.valid && keep
	b.valid = false
	if b.condKey == nil {
		b.condKey = make([]int, len(b.cond))
		b.changed = make([]bool, len(b.row.factors))
		b.snap = make([][]float64, len(b.cond))
	}
	for i := range b.cond {
		c := &b.cond[i]
		edited := watch && b.edited(i)
		b.changed[i] = edited
		if c.static {
			continue
		}
		if k := condKeyOf(c, boundary); !memo || edited || k != b.condKey[i] {
			b.condition(c, k)
			b.condKey[i], b.changed[i] = k, true
		}
	}
	if !keep && b.transient {
		defer b.row.release()
	}
	restore := func() {}
	var err error
	if memo {
		err = b.runChanged(ctx, b.row)
	} else {
		restore, err = b.runWith(ctx, b.row, r, false, ArgminAny)
	}
	if err != nil {
		return 0, err
	}
	defer restore()
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
	if err := b.row.decode(val, r); err != nil {
		return 0, err
	}
	copy(interior, val[lp.NB:])
	return cost, nil
}

// fewRows is the largest MVA table whose rows SolveTableWith decodes by
// asking the runner for argmin entries (one per offloaded bucket and row,
// each a round trip to the device) rather than bringing the argmin tables
// to the host.
const fewRows = 16

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
	jp, err := join.NewJoinProjectLazy(final, nil, out, max(b.opts.MaxEntries, rows))
	if err != nil {
		return fmt.Errorf("bucket elimination: joining the boundary: %w", err)
	}
	finalOff := r != nil && r.Offload(jp)
	// A table of a few rows (a whole problem solved as one, NB = 0, is
	// one row) needs a few argmin entries per bucket: the runner keeps
	// the tables and is asked for those. A larger table decodes every
	// row, from argmin tables brought to the host once.
	arg := ArgminHost
	if rows <= fewRows {
		arg = ArgminAny
	}
	restore, err := b.runWith(ctx, p, r, finalOff, arg)
	if err != nil {
		return err
	}
	defer restore()
	if finalOff {
		_, err = r.Step(ctx, jp, jp.Output(t.Costs), false, true, ArgminNone)
	} else {
		err = jp.Run(ctx, t.Costs, nil, b.opts.Workers)
	}
	if err != nil {
		return err
	}
	b.checks += jp.Reads()
	return b.decodeTable(ctx, p, t, r)
}
