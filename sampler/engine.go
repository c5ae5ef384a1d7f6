package sampler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/sampler/philox"
)

// kind selects the transition a chain makes per trial.
type kind int

const (
	gibbsSweep kind = iota
	mhNormal
	mhDiscrete
)

// engine is what Gibbs and MH share: the model, the options, the
// algorithm's per-trial transition, and the scheduling of (row, run)
// chains over goroutines with a deterministic merge.
type engine struct {
	name string // for error messages
	m    *model
	o    Options
	kind kind
	beta float64 // 1/τ
	key  [2]uint32
	// steps[i] is the normal proposal of interior variable i (nil when
	// its domain has one value); used by mhNormal.
	steps []*normalStep
	// movable lists the interior variables with two values or more; used
	// by mhDiscrete.
	movable []int

	checks atomic.Int64
	// trace, when set (by tests), sees every chain's state after every
	// trial. It is called from several goroutines.
	trace func(row, run, t int, interior []int)
	// noHastings, set by tests, accepts normal proposals as the paper
	// writes it, as if the clamped proposal were symmetric.
	noHastings bool
}

func newEngine(name string, lp *mva.LocalProblem, o Options, k kind) (*engine, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	m, err := newModel(lp)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	e := &engine{name: name, m: m, o: o, kind: k, beta: 1 / o.Temperature, key: philox.Key(o.Seed)}
	switch k {
	case mhNormal:
		e.steps = make([]*normalStep, m.n)
		bySize := map[int]*normalStep{}
		for i := range m.n {
			d := m.dom[m.nb+i]
			if d < 2 {
				continue
			}
			if bySize[d] == nil {
				sigma := o.StdDev
				if sigma == 0 {
					sigma = math.Sqrt(math.Sqrt(float64(d)))
				}
				bySize[d] = newNormalStep(d, sigma)
			}
			e.steps[i] = bySize[d]
		}
	case mhDiscrete:
		for i := range m.n {
			if m.dom[m.nb+i] >= 2 {
				e.movable = append(e.movable, i)
			}
		}
	}
	return e, nil
}

// solveRow is mva.LocalSolver's SolveRow: the row of the given boundary
// values, with its chains spread over the workers.
func (e *engine) solveRow(ctx context.Context, boundary, interior []int) (float64, error) {
	m := e.m
	if len(boundary) != m.nb {
		return 0, fmt.Errorf("%s: %d boundary values for %d boundary variables", e.name, len(boundary), m.nb)
	}
	if len(interior) != m.n {
		return 0, fmt.Errorf("%s: room for %d interior values, %d needed", e.name, len(interior), m.n)
	}
	for k, b := range boundary {
		if b < 0 || b >= m.dom[k] {
			return 0, fmt.Errorf("%s: boundary variable %d: value %d outside its domain of %d", e.name, k, b, m.dom[k])
		}
	}
	costs := make([]float64, 1)
	assign := make([]int32, m.n)
	if err := e.solve(ctx, nil, boundary, costs, assign); err != nil {
		return 0, err
	}
	for i, v := range assign {
		interior[i] = int(v)
	}
	return costs[0], nil
}

// solveTable is mva.TableSolver's SolveTable: every unknown row of t.
func (e *engine) solveTable(ctx context.Context, t *mva.Table) error {
	m := e.m
	rows, err := m.lp.Rows()
	if err != nil {
		return fmt.Errorf("%s: %w", e.name, err)
	}
	if t == nil || len(t.Costs) != rows || len(t.Assign) != rows*m.n || len(t.Known) != rows {
		return fmt.Errorf("%s: the table does not belong to this local problem", e.name)
	}
	var todo []int
	for r, known := range t.Known {
		if !known {
			todo = append(todo, r)
		}
	}
	if len(todo) == rows {
		// Every row: the table's own arrays are the merge target.
		if err := e.solve(ctx, todo, nil, t.Costs, t.Assign); err != nil {
			return err
		}
		for r := range t.Known {
			t.Known[r] = true
		}
		return nil
	}
	costs := make([]float64, len(todo))
	assign := make([]int32, len(todo)*m.n)
	if err := e.solve(ctx, todo, nil, costs, assign); err != nil {
		return err
	}
	for p, r := range todo {
		t.Costs[r] = costs[p]
		copy(t.Interior(r), assign[p*m.n:(p+1)*m.n])
		t.Known[r] = true
	}
	return nil
}

// noRun marks a row no chain has reported yet; run indices stay below it.
const noRun = math.MaxUint32

// solve runs Runs chains for each of rows and writes, at position p, the
// best cost and interior assignment of row rows[p] into costs[p] and
// assign[p·n:]. A row no chain made feasible gets Hard and zeros. With
// rows nil, it solves the single row of the given boundary values
// instead, which need not fit a table (see rowWord).
//
// The (row, run) pairs are numbered p·Runs + run and handed out in chunks
// to the workers. Each chain's numbers depend only on (seed, row, run, …),
// never on the worker, and the merge keeps the minimum of (cost, run),
// a total order: so the result is the same for any number of workers and
// any interleaving.
func (e *engine) solve(ctx context.Context, rows, boundary []int, costs []float64, assign []int32) error {
	runs := e.o.Runs
	nrows := len(rows)
	if rows == nil {
		nrows = 1
	}
	if nrows > math.MaxInt/runs {
		return fmt.Errorf("%s: %d rows × %d runs are too many chains", e.name, nrows, runs)
	}
	pairs := nrows * runs
	n := e.m.n
	best := make([]uint32, nrows)
	for p := range best {
		best[p] = noRun
	}
	var locks [64]sync.Mutex
	merge := func(p int, run uint32, cost float64, interior []int) {
		mu := &locks[p%len(locks)]
		mu.Lock()
		defer mu.Unlock()
		if b := best[p]; b != noRun && (cost > costs[p] || cost == costs[p] && run > b) {
			return
		}
		best[p], costs[p] = run, cost
		dst := assign[p*n : (p+1)*n]
		for i, v := range interior {
			dst[i] = int32(v)
		}
	}

	workers := e.o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	chunk := max(1, pairs/(workers*8))
	chunks := (pairs + chunk - 1) / chunk
	workers = max(1, min(workers, chunks))
	var next atomic.Int64
	var aborted atomic.Bool
	work := func() {
		ch := e.newChain()
		defer func() { e.checks.Add(ch.checks) }()
		bnd := ch.z[:e.m.nb]
		word := uint32(0)
		if rows == nil {
			copy(bnd, boundary)
			word = e.rowWord(boundary)
		}
		for {
			c := int(next.Add(1) - 1)
			if c >= chunks {
				return
			}
			for q := c * chunk; q < min(pairs, (c+1)*chunk); q++ {
				p, run := q/runs, uint32(q%runs)
				if rows != nil {
					e.m.lp.DecodeRow(rows[p], bnd)
					word = uint32(rows[p])
				}
				cost, err := ch.run(ctx, word, run)
				if err != nil {
					aborted.Store(true)
					return
				}
				merge(p, run, cost, ch.best)
			}
		}
	}
	if workers == 1 {
		work()
	} else {
		var wg sync.WaitGroup
		for range workers {
			wg.Go(work)
		}
		wg.Wait()
	}
	if aborted.Load() {
		err := ctx.Err()
		if err == nil {
			err = errors.New("stopped")
		}
		return fmt.Errorf("%s: %w", e.name, err)
	}
	for p, c := range costs {
		if mva.IsHard(c) {
			clear(assign[p*n : (p+1)*n])
		}
	}
	return nil
}

// rowWord is the row's Philox counter word: the row index of the boundary
// values (mixed radix, last fastest, as mva.LocalProblem.EncodeRow), which
// is below 2³¹ for any row of a table. A row that SolveRow is asked for
// in a boundary space too large for a table has its index computed
// modulo 2⁶⁴ and folded to 32 bits (low word xor high word); rows that
// then share a word share their random numbers, which leaves each row's
// chains valid, only not independent of that other row's.
func (e *engine) rowWord(boundary []int) uint32 { return e.m.rowWord(boundary) }

// rowWord is engine.rowWord.
func (m *model) rowWord(boundary []int) uint32 {
	r := uint64(0)
	for k, b := range boundary {
		r = r*uint64(m.dom[k]) + uint64(b)
	}
	return uint32(r) ^ uint32(r>>32)
}
