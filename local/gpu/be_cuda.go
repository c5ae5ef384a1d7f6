//go:build cuda

package gpu

import (
	"context"
	"errors"
	"fmt"

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
// large enough to the device and remembers the tables left there for later
// buckets. res is touched only on the device goroutine.
type chain struct {
	dev     *Device
	min     int64
	workers int
	res     resident
	packs   map[*local.JoinProject]*packed

	evictions, onCPU int // how often Step fell back, for tests
}

func newChain(d *Device, minEntries int64, workers int) *chain {
	return &chain{dev: d, min: minEntries, workers: workers, res: make(resident), packs: make(map[*local.JoinProject]*packed)}
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
		bytes += class(int64(len(f.Costs)) * 8)
	}
	if bytes > c.dev.budget/2 {
		return false
	}
	pk, err := pack(p)
	if err != nil {
		return false
	}
	c.packs[p] = pk
	return true
}

// Step runs p on the device. When the device's budget is short, it copies
// the kept tables back to the host and tries again, and as a last resort
// runs p on the CPU: a bucket never fails for want of device memory.
func (c *chain) Step(ctx context.Context, p *local.JoinProject, dst []float64, argmin []int32, keep, host bool) error {
	pk, ok := c.packs[p]
	if !ok {
		var err error
		if pk, err = pack(p); err != nil {
			return err
		}
	}
	run := func(o *owner) error {
		return o.joinProject(ctx, c.res, p, pk, dst, argmin, keep, host)
	}
	err := c.dev.do(ctx, run)
	if !errors.Is(err, local.ErrTooLarge) {
		return err
	}
	c.evictions++
	err = c.dev.do(ctx, func(o *owner) error {
		if len(c.res) == 0 {
			return local.ErrTooLarge // nothing to evict: straight to the CPU
		}
		if err := o.evict(c.res); err != nil {
			return err
		}
		return run(o)
	})
	if !errors.Is(err, local.ErrTooLarge) {
		return err
	}
	// Every input is on the host now (evict copied the kept ones back).
	c.onCPU++
	return p.Run(ctx, dst, argmin, c.workers)
}

// end hands the tables still kept back to the pool (after an error, or
// tables nothing read).
func (c *chain) end() error {
	if len(c.res) == 0 {
		return nil
	}
	err := c.dev.do(context.Background(), func(o *owner) error {
		for key, k := range c.res {
			o.pool.put(k.buf)
			delete(c.res, key)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("gpu: releasing kept tables: %w", err)
	}
	return nil
}
