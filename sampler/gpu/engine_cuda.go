//go:build cuda

package gpu

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"gorgonia.org/cu"

	lgpu "github.com/hearth-dcop/hearth/local/gpu"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/sampler"
)

// cpuSampler is what package sampler's Gibbs and MH offer.
type cpuSampler interface {
	mva.LocalSolver
	mva.TableSolver
	Options() sampler.Options
}

// engine is what Gibbs and MH share: the plan, the device, and the CPU
// sampler of the same options (which validates them, fills the defaults
// in, and runs the chains of problems beyond the kernels).
type engine struct {
	name   string
	lp     *mva.LocalProblem
	dev    *lgpu.Device
	o      sampler.Options
	cpu    cpuSampler
	pl     *plan // nil when the CPU samples
	checks atomic.Int64

	geoMu sync.Mutex
	geo   launch // set by geometry

	// forceGlobal (tests, benchmarks) keeps the cost tables out of
	// shared memory.
	forceGlobal bool
	// hist (tests) counts the states visited, as sampler's trace does
	// for the distribution test.
	hist *histogram
}

// histogram asks a solve to count the interior states after every trial
// t > burn with t % thin == 0, into counts (mixed radix over the
// interior, last fastest).
type histogram struct {
	burn, thin int
	counts     []uint64
}

func newEngine(name string, lp *mva.LocalProblem, dev *lgpu.Device, o sampler.Options, k int) (*engine, error) {
	name = "gpu " + name
	var cpu cpuSampler
	var err error
	if k == kindGibbs {
		cpu, err = sampler.NewGibbs(lp, o)
	} else {
		cpu, err = sampler.NewMH(lp, o)
	}
	if err != nil {
		return nil, fmt.Errorf("gpu %w", err)
	}
	if dev == nil {
		return nil, fmt.Errorf("%s: no device", name)
	}
	e := &engine{name: name, lp: lp, dev: dev, o: cpu.Options(), cpu: cpu}
	if pl, err := newPlan(lp, e.o, k, defaultLanes(lp, k)); err == nil && fits(pl, e.o) {
		e.pl = pl
	}
	return e, nil
}

// Launch geometry: blocks of up to blockThreads threads, and the shared
// memory a block may use without opting in (48 KiB, less the kernel's
// static counter).
const (
	blockThreads = 256
	sharedLimit  = 48<<10 - 64
)

// fits reports whether the kernels can run pl: one chain's state and the
// plan's index arrays fit a block's shared memory, and runs and trials
// fit their int32 counters.
func fits(pl *plan, o sampler.Options) bool {
	return pl.metaBytes()+pl.groupBytes() <= sharedLimit && o.Runs <= math.MaxInt32 && o.Trials <= math.MaxInt32
}

// launch is a block shape: threads, dynamic shared memory, whether the
// cost tables are in it, and the blocks resident per multiprocessor.
type launch struct {
	threads, shared int
	tables          bool
	perSM           int
}

// geometry picks, once per engine, the block shape that keeps the most
// chains resident per multiprocessor, as the occupancy calculator gives
// it for the kernel fn: blocks of 256 threads down to one chain, with the
// cost tables in shared memory or read through the caches. Ties go to
// the tables in shared memory, then to larger blocks. Shared memory, not
// threads, is what usually limits a block: measured on an H200, the
// chains resident matter more than where the tables are (the caches hold
// them well; docs/bench/gpu-samplers-h200.csv).
func (e *engine) geometry(fn cu.Function) (launch, error) {
	e.geoMu.Lock()
	defer e.geoMu.Unlock()
	if e.geo.threads > 0 {
		return e.geo, nil
	}
	pl := e.pl
	per := pl.groupBytes()
	best, resident := launch{}, 0
	for gpb := blockThreads / pl.g; gpb >= 1; gpb /= 2 {
		for _, tables := range []bool{true, false} {
			if tables && e.forceGlobal {
				continue
			}
			shared := pl.metaBytes() + gpb*per
			if tables {
				shared = len(pl.blob) + gpb*per
			}
			if shared > sharedLimit {
				continue
			}
			n, err := fn.MaxActiveBlocksPerMultiProcessor(gpb*pl.g, int64(shared))
			if err != nil {
				return launch{}, fmt.Errorf("occupancy: %w", err)
			}
			if n*gpb > resident {
				best, resident = launch{gpb * pl.g, shared, tables, n}, n*gpb
			}
		}
	}
	if resident == 0 {
		return launch{}, fmt.Errorf("no block of the kernel fits a multiprocessor (%d bytes of plan, %d per chain)", pl.metaBytes(), per)
	}
	e.geo = best
	return best, nil
}

func (e *engine) options() sampler.Options { return e.o }

func (e *engine) onDevice() bool { return e.pl != nil }

func (e *engine) checksSoFar() int64 {
	if e.pl == nil {
		return e.cpu.Checks()
	}
	return e.checks.Load()
}

// solveRow is mva.LocalSolver's SolveRow: one row, R chains.
func (e *engine) solveRow(ctx context.Context, boundary, interior []int) (float64, error) {
	if e.pl == nil {
		return e.cpu.SolveRow(ctx, boundary, interior)
	}
	nb, n := e.lp.NB, e.lp.NumInterior()
	if len(boundary) != nb {
		return 0, fmt.Errorf("%s: %d boundary values for %d boundary variables", e.name, len(boundary), nb)
	}
	if len(interior) != n {
		return 0, fmt.Errorf("%s: room for %d interior values, %d needed", e.name, len(interior), n)
	}
	bv := make([]int32, max(nb, 1))
	for k, b := range boundary {
		if b < 0 || b >= e.lp.Domains[k] {
			return 0, fmt.Errorf("%s: boundary variable %d: value %d outside its domain of %d", e.name, k, b, e.lp.Domains[k])
		}
		bv[k] = int32(b)
	}
	costs := make([]float64, 1)
	assign := make([]int32, n)
	if err := e.run(ctx, nil, 1, bv, e.rowWord(boundary), costs, assign); err != nil {
		return 0, err
	}
	for i, v := range assign {
		interior[i] = int(v)
	}
	return costs[0], nil
}

// rowWord is sampler's: the row index of the boundary values modulo 2⁶⁴,
// folded to 32 bits.
func (e *engine) rowWord(boundary []int) uint32 {
	r := uint64(0)
	for k, b := range boundary {
		r = r*uint64(e.lp.Domains[k]) + uint64(b)
	}
	return uint32(r) ^ uint32(r>>32)
}

// solveTable is mva.TableSolver's SolveTable: every unknown row of t.
func (e *engine) solveTable(ctx context.Context, t *mva.Table) error {
	if e.pl == nil {
		return e.cpu.SolveTable(ctx, t)
	}
	n := e.lp.NumInterior()
	rows, err := e.lp.Rows()
	if err != nil {
		return fmt.Errorf("%s: %w", e.name, err)
	}
	if t == nil || len(t.Costs) != rows || len(t.Assign) != rows*n || len(t.Known) != rows {
		return fmt.Errorf("%s: the table does not belong to this local problem", e.name)
	}
	var todo []uint32
	for r, known := range t.Known {
		if !known {
			todo = append(todo, uint32(r))
		}
	}
	if len(todo) == 0 {
		return nil
	}
	if len(todo) == rows {
		// Every row: the table's own arrays receive the copy.
		if err := e.run(ctx, nil, rows, nil, 0, t.Costs, t.Assign); err != nil {
			return err
		}
		for r := range t.Known {
			t.Known[r] = true
		}
		return nil
	}
	costs := make([]float64, len(todo))
	assign := make([]int32, len(todo)*n)
	if err := e.run(ctx, todo, len(todo), nil, 0, costs, assign); err != nil {
		return err
	}
	for p, r := range todo {
		t.Costs[r] = costs[p]
		copy(t.Interior(int(r)), assign[p*n:(p+1)*n])
		t.Known[r] = true
	}
	return nil
}

// Chunks: at most chainBudget bytes of per-chain results, and about
// chunkWork trials (chains × T) per launch, a second or so of work, so
// that ctx is honoured and long tables still make several launches.
const (
	chainBudget = 256 << 20
	chunkWork   = 1 << 27
)

// run samples np rows on the device: row positions p < np are the rows
// rows[p] (p itself when rows is nil), or, with bvals set, the one row of
// those boundary values with counter word word. Row p's best cost and
// interior go to costs[p] and assign[p·n:].
func (e *engine) run(ctx context.Context, rows []uint32, np int, bvals []int32, word uint32, costs []float64, assign []int32) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", e.name, err)
	}
	pl := e.pl
	n := int64(pl.n)
	R := int64(e.o.Runs)
	hist := e.hist
	var histN int64
	if hist != nil {
		histN = 1
		for _, d := range e.lp.Domains[e.lp.NB:] {
			histN *= int64(d)
		}
	}
	chunkRows := int64(np)
	chunkRows = min(chunkRows, max(1, chainBudget/(8+4*n)/R))
	chunkRows = min(chunkRows, max(1, chunkWork/int64(e.o.Trials)/R))

	var checks uint64
	err := e.dev.Do(ctx, func(w *lgpu.Owner) (err error) {
		fn, err := w.Function(moduleKey, ptx, kernelName(pl))
		if err != nil {
			return err
		}
		red, err := w.Function(moduleKey, ptx, "reduce_rows")
		if err != nil {
			return err
		}
		geo, err := e.geometry(fn)
		if err != nil {
			return err
		}
		threads, shared := geo.threads, geo.shared
		var bufs []lgpu.Buffer
		stream := w.Stream()
		defer func() {
			if serr := stream.Synchronize(); serr != nil {
				err = errors.Join(err, serr)
			}
			for _, b := range bufs {
				w.Free(b)
			}
		}()
		alloc := func(bytes int64) (cuPtr, error) {
			b, err := w.Alloc(max(bytes, 8))
			if err != nil {
				return 0, err
			}
			bufs = append(bufs, b)
			return cuPtr(b.Ptr()), nil
		}
		planPtr, err := alloc(int64(len(pl.blob)))
		if err != nil {
			return err
		}
		if err := upload(planPtr, pl.blob); err != nil {
			return err
		}
		var rowsPtr, bvalsPtr, histPtr cuPtr
		if rows != nil {
			if rowsPtr, err = alloc(4 * int64(len(rows))); err != nil {
				return err
			}
			if err := upload(rowsPtr, rows); err != nil {
				return err
			}
		}
		if bvals != nil {
			if bvalsPtr, err = alloc(4 * int64(len(bvals))); err != nil {
				return err
			}
			if err := upload(bvalsPtr, bvals); err != nil {
				return err
			}
		}
		rowCost, err := alloc(8 * int64(np))
		if err != nil {
			return err
		}
		rowAssign, err := alloc(4 * int64(np) * n)
		if err != nil {
			return err
		}
		chainCost, err := alloc(8 * chunkRows * R)
		if err != nil {
			return err
		}
		chainAssign, err := alloc(4 * chunkRows * R * n)
		if err != nil {
			return err
		}
		checksPtr, err := alloc(8)
		if err != nil {
			return err
		}
		if err := zero(checksPtr, 8); err != nil {
			return err
		}
		if hist != nil {
			if histPtr, err = alloc(8 * histN); err != nil {
				return err
			}
			if err := zero(histPtr, 8*histN); err != nil {
				return err
			}
		}

		sms := int64(w.Multiprocessors())
		gpb := int64(threads / pl.g)
		tablesShared := boolInt(geo.tables)
		wordArg := int64(word)
		var burn, thin int64 = 0, 1
		if hist != nil {
			burn, thin = int64(hist.burn), int64(max(hist.thin, 1))
		}
		for p0 := int64(0); p0 < int64(np); p0 += chunkRows {
			if err := ctx.Err(); err != nil {
				return err
			}
			cnt := min(chunkRows, int64(np)-p0)
			chains := cnt * R
			blocks := min((chains+gpb-1)/gpb, sms*int64(geo.perSM))
			args := ptrs(&planPtr, &tablesShared, &rowsPtr, &bvalsPtr, &wordArg, &p0, &cnt,
				&chainCost, &chainAssign, &checksPtr, &histPtr, &burn, &thin)
			if err := fn.Launch(int(blocks), 1, 1, threads, 1, 1, shared, stream, args); err != nil {
				return fmt.Errorf("launching %s: %w", kernelName(pl), err)
			}
			rb := min((cnt+255)/256, sms*8)
			rargs := ptrs(&chainCost, &chainAssign, &cnt, &R, &n, &rowCost, &rowAssign, &p0)
			if err := red.Launch(int(rb), 1, 1, 256, 1, 1, 0, stream, rargs); err != nil {
				return fmt.Errorf("launching reduce_rows: %w", err)
			}
		}
		if err := stream.Synchronize(); err != nil {
			return fmt.Errorf("sampling: %w", err)
		}
		// The one copy back.
		if err := download(costs, rowCost); err != nil {
			return err
		}
		if n > 0 {
			if err := download(assign, rowAssign); err != nil {
				return err
			}
		}
		c := make([]uint64, 1)
		if err := download(c, checksPtr); err != nil {
			return err
		}
		checks = c[0]
		if hist != nil {
			hist.counts = make([]uint64, histN)
			if err := download(hist.counts, histPtr); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return fmt.Errorf("%s: %w", e.name, err)
		}
		return fmt.Errorf("%s: %w", e.name, err)
	}
	e.checks.Add(int64(checks))
	return nil
}

// kernelName returns the sampling kernel of pl.
func kernelName(pl *plan) string {
	k := [...]string{kindGibbs: "sample_gibbs", kindNormal: "sample_normal", kindDiscrete: "sample_discrete"}[pl.kind]
	if pl.float {
		return k + "_f"
	}
	return k + "_d"
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// setWord sets header word i.
func (p *plan) setWord(i int, v int32) { binary.LittleEndian.PutUint32(p.blob[4*i:], uint32(v)) }

// setFlag sets or clears a flag of the packed header.
func (p *plan) setFlag(f int32, on bool) {
	v := p.word(hFlags) &^ f
	if on {
		v |= f
	}
	p.setWord(hFlags, v)
}
