//go:build cuda

package gpu

import (
	"context"
	"errors"
	"fmt"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/hearth-dcop/hearth/local"
	"github.com/hearth-dcop/hearth/mva"
)

// BE is bucket elimination with its large buckets on a GPU: local.BE, whose
// SolveRow and SolveTable hand every bucket of at least MinEntries entries
// to the device. Results, assignments and Checks are those of local.BE.
// Like local.BE it is not safe for concurrent use; several BEs may share
// one Device.
type BE struct {
	*local.BE
	dev        *Device
	minEntries int64
	workers    int
}

var (
	_ mva.LocalSolver = (*BE)(nil)
	_ mva.TableSolver = (*BE)(nil)
)

// NewBE prepares bucket elimination for lp on dev (see local.NewBE).
func NewBE(lp *mva.LocalProblem, dev *Device, opts BEOptions) (*BE, error) {
	if dev == nil {
		return nil, errors.New("gpu: NewBE needs a device")
	}
	be, err := local.NewBE(lp, opts.BEOptions)
	if err != nil {
		return nil, err
	}
	m := opts.MinEntries
	if m == 0 {
		m = DefaultMinEntries
	}
	return &BE{BE: be, dev: dev, minEntries: m, workers: opts.Workers}, nil
}

// SolveRow eliminates the interior with the boundary fixed, as
// local.BE.SolveRow; a whole problem (mva.Whole) is solved this way.
func (b *BE) SolveRow(ctx context.Context, boundary, interior []int) (float64, error) {
	c := b.chain()
	cost, err := b.BE.SolveRowWith(ctx, boundary, interior, c)
	if cerr := c.end(); cerr != nil && err == nil {
		return 0, cerr
	}
	return cost, err
}

// SolveTable fills the whole MVA table, as local.BE.SolveTable.
func (b *BE) SolveTable(ctx context.Context, t *mva.Table) error {
	c := b.chain()
	err := b.BE.SolveTableWith(ctx, t, c)
	return errors.Join(err, c.end())
}

func (b *BE) chain() *chain {
	return newChain(b.dev, b.minEntries, b.workers)
}

// chain is the local.BucketRunner of one elimination: it sends the buckets
// large enough to the device, remembers the tables left there for later
// buckets and the argmin tables left there for decoding, and gives the
// host the memory it reads from a pinned arena. Its maps and arena are
// touched only on the device goroutine, except hostArgs, which Argmin
// reads on the caller's.
type chain struct {
	dev      *Device
	min      int64
	workers  int
	res      resident
	args     map[*local.JoinProject]devBuf  // argmin tables on the device
	hostArgs map[*local.JoinProject][]int32 // those that fell back to the host
	host     *arena                         // nil until host memory is needed
	packs    map[*local.JoinProject]*packed

	evictions, onCPU int // how often Step fell back, for tests
	kept, fetched    int // outputs left on the device, and brought back by fetch
}

func newChain(d *Device, minEntries int64, workers int) *chain {
	return &chain{
		dev: d, min: minEntries, workers: workers, res: make(resident),
		args: make(map[*local.JoinProject]devBuf), hostArgs: make(map[*local.JoinProject][]int32),
		packs: make(map[*local.JoinProject]*packed),
	}
}

// Offload takes the plans the kernel supports with at least min entries
// whose inputs fit half the device's budget.
func (c *chain) Offload(p *local.JoinProject) bool {
	if int64(p.Rows())*int64(p.ElimSize()) < c.min {
		return false
	}
	if _, ok := c.packs[p]; ok {
		return true
	}
	var bytes int64
	for _, f := range p.Inputs() {
		bytes += class(int64(entries(f)) * 8)
	}
	if bytes > c.dev.budget/2 {
		return false
	}
	pk, err := pack(p, c.dev.kernels)
	if err != nil {
		return false
	}
	c.packs[p] = pk
	return true
}

// arena returns the chain's pinned host memory, taking an arena from the
// device on first use. It runs on the device goroutine.
func (c *chain) arena(o *owner) *arena {
	if c.host == nil {
		c.host = o.takeArena()
	}
	return c.host
}

// Step runs p on the device. When the device's budget is short, it copies
// the kept tables back to the host and tries again, and as a last resort
// runs p on the CPU: a bucket never fails for want of device memory.
func (c *chain) Step(ctx context.Context, p *local.JoinProject, out *local.Factor, keep, host bool, mode local.ArgminMode) ([]int32, error) {
	return c.step(ctx, p, out, keep, host, mode, nil)
}

// step is Step, with argDst (when not nil, and mode ArgminHost) the host
// memory the argmin table goes to instead of the arena.
func (c *chain) step(ctx context.Context, p *local.JoinProject, out *local.Factor, keep, host bool, mode local.ArgminMode, argDst []int32) ([]int32, error) {
	pk, ok := c.packs[p]
	if !ok {
		var err error
		if pk, err = pack(p, c.dev.kernels); err != nil {
			return nil, err
		}
	}
	var argmin []int32
	run := func(o *owner) error {
		rq := jpRequest{p: p, pk: pk, out: out, keep: keep, host: host, arena: c.arena(o), i32Rows: c.dev.kernels.i32Rows()}
		switch mode {
		case local.ArgminHost:
			rq.argHost, rq.argmin = true, argDst
		case local.ArgminAny:
			rq.argDevice = true
		}
		r, err := o.joinProject(ctx, c.res, rq)
		if err != nil {
			return err
		}
		if r.argDev.size > 0 {
			c.args[p] = r.argDev
		} else if r.argmin != nil && mode == local.ArgminAny {
			c.hostArgs[p] = r.argmin
		}
		argmin = r.argmin
		if _, ok := c.res[out]; ok {
			c.kept++
		}
		return nil
	}
	err := c.dev.do(ctx, run)
	if !errors.Is(err, local.ErrTooLarge) {
		return argmin, err
	}
	c.evictions++
	err = c.dev.do(ctx, func(o *owner) error {
		if len(c.res) == 0 && len(c.args) == 0 {
			return local.ErrTooLarge // nothing to evict: straight to the CPU
		}
		if err := c.evict(o); err != nil {
			return err
		}
		return run(o)
	})
	if !errors.Is(err, local.ErrTooLarge) {
		return argmin, err
	}
	// Every input is on the host now (evict copied the kept ones back).
	c.onCPU++
	err = c.dev.do(ctx, func(o *owner) error {
		a := c.arena(o)
		var err error
		if out.Costs == nil {
			if out.Costs, err = a.float64s(p.Rows()); err != nil {
				return err
			}
		}
		switch {
		case mode == local.ArgminHost && argDst != nil:
			argmin = argDst
		case mode != local.ArgminNone:
			argmin, err = a.int32s(p.Rows())
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := p.Run(ctx, out.Costs, argmin, c.workers); err != nil {
		return nil, err
	}
	if mode == local.ArgminAny {
		c.hostArgs[p] = argmin
	}
	return argmin, nil
}

// evict copies every kept table and argmin table to the host and frees
// their buffers, so that later steps upload the tables again: the way out
// when they crowd the device's budget.
func (c *chain) evict(o *owner) error {
	a := c.arena(o)
	var errs []error
	for f, k := range c.res {
		if f.Costs == nil {
			var err error
			if f.Costs, err = a.float64s(entries(f)); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if err := cu.MemcpyDtoH(unsafe.Pointer(&f.Costs[0]), k.ptr, int64(len(f.Costs))*8); err != nil {
			errs = append(errs, fmt.Errorf("gpu: copying a kept table back: %w", err))
		}
		o.pool.put(k)
		delete(c.res, f)
	}
	for p, k := range c.args {
		h, err := a.int32s(p.Rows())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := cu.MemcpyDtoH(unsafe.Pointer(&h[0]), k.ptr, int64(len(h))*4); err != nil {
			errs = append(errs, fmt.Errorf("gpu: copying an argmin table back: %w", err))
		}
		c.hostArgs[p] = h
		o.pool.put(k)
		delete(c.args, p)
	}
	return errors.Join(errs...)
}

// fetch brings the kept table of f to the host, into f.Costs (memory of
// the arena), and frees its device buffer; a table already on the host is
// left as it is. It runs on the device goroutine.
func (c *chain) fetch(o *owner, f *local.Factor) error {
	k, ok := c.res[f]
	if !ok {
		if len(f.Costs) != entries(f) {
			return fmt.Errorf("gpu: a table with %d entries, its dims need %d, is neither on the host nor kept on the device", len(f.Costs), entries(f))
		}
		return nil
	}
	costs, err := c.arena(o).float64s(entries(f))
	if err != nil {
		return err
	}
	if err := cu.MemcpyDtoH(unsafe.Pointer(&costs[0]), k.ptr, int64(len(costs))*8); err != nil {
		return fmt.Errorf("gpu: copying a kept table back: %w", err)
	}
	f.Costs = costs
	o.pool.put(k)
	delete(c.res, f)
	c.fetched++
	return nil
}

// Argmin returns entry i of p's argmin table, from the host when it fell
// back there, else with a 4-byte copy from the device.
func (c *chain) Argmin(p *local.JoinProject, i int) (int32, error) {
	if h, ok := c.hostArgs[p]; ok {
		return h[i], nil
	}
	var v int32
	err := c.dev.do(context.Background(), func(o *owner) error {
		b, ok := c.args[p]
		if !ok {
			return fmt.Errorf("gpu: no argmin table kept for the plan")
		}
		if i < 0 || i >= p.Rows() {
			return fmt.Errorf("gpu: argmin entry %d of %d", i, p.Rows())
		}
		return cu.MemcpyDtoH(unsafe.Pointer(&v), b.ptr+cu.DevicePtr(i*4), 4)
	})
	return v, err
}

// end hands the tables still kept and the argmin tables back to the pool,
// and the arena back to the device.
func (c *chain) end() error {
	if len(c.res) == 0 && len(c.args) == 0 && c.host == nil {
		return nil
	}
	err := c.dev.do(context.Background(), func(o *owner) error {
		for f, k := range c.res {
			o.pool.put(k)
			delete(c.res, f)
		}
		for p, k := range c.args {
			o.pool.put(k)
			delete(c.args, p)
		}
		clear(c.hostArgs)
		var err error
		if c.host != nil {
			err = o.giveArena(c.host)
			c.host = nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("gpu: releasing an elimination's tables: %w", err)
	}
	return nil
}
