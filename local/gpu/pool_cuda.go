//go:build cuda

package gpu

import (
	"errors"
	"fmt"
	"math/bits"

	"gorgonia.org/cu"

	"github.com/hearth-dcop/hearth/local"
)

// errBudget is wrapped when an allocation would exceed the device budget.
var errBudget = fmt.Errorf("device memory budget exhausted: %w", local.ErrTooLarge)

// devBuf is a device allocation of size bytes (its size class).
type devBuf struct {
	ptr  cu.DevicePtr
	size int64
}

// pool recycles device buffers across calls: a buffer handed back goes to
// the free list of its size class and serves the next request of that
// class, so thousands of calls allocate nothing after the first few. It is
// owned by the device goroutine.
type pool struct {
	budget int64
	inUse  int64 // bytes handed out
	idle   int64 // bytes on the free lists
	free   map[int64][]cu.DevicePtr
}

func newPool(budget int64) *pool {
	return &pool{budget: budget, free: make(map[int64][]cu.DevicePtr)}
}

// class rounds n up to its size class: 4 KiB at least, then eight classes
// per power of two, so that a buffer wastes at most an eighth of its size
// while buffers of similar sizes still serve each other's requests.
func class(n int64) int64 {
	const small = 4 << 10
	if n <= small {
		return small
	}
	step := int64(1) << (bits.Len64(uint64(n-1)) - 4)
	return (n + step - 1) / step * step
}

// room returns how many more bytes may be handed out.
func (p *pool) room() int64 { return p.budget - p.inUse }

// get returns a buffer of at least n bytes.
func (p *pool) get(n int64) (devBuf, error) {
	c := class(max(n, 1))
	if l := p.free[c]; len(l) > 0 {
		ptr := l[len(l)-1]
		p.free[c] = l[:len(l)-1]
		p.idle -= c
		p.inUse += c
		return devBuf{ptr, c}, nil
	}
	if p.inUse+c > p.budget {
		return devBuf{}, fmt.Errorf("%d bytes wanted, %d of %d in use: %w", c, p.inUse, p.budget, errBudget)
	}
	if p.inUse+p.idle+c > p.budget {
		if err := p.trim(); err != nil {
			return devBuf{}, err
		}
	}
	ptr, err := cu.MemAlloc(c)
	if err != nil && errors.Is(err, cu.OutOfMemory) && p.idle > 0 {
		if err := p.trim(); err != nil {
			return devBuf{}, err
		}
		ptr, err = cu.MemAlloc(c)
	}
	if err != nil {
		if errors.Is(err, cu.OutOfMemory) {
			return devBuf{}, fmt.Errorf("cuMemAlloc(%d bytes): %w: %w", c, err, local.ErrTooLarge)
		}
		return devBuf{}, fmt.Errorf("cuMemAlloc(%d bytes): %w", c, err)
	}
	p.inUse += c
	return devBuf{ptr, c}, nil
}

// put hands b back for reuse; the zero devBuf is ignored.
func (p *pool) put(b devBuf) {
	if b.size == 0 {
		return
	}
	p.inUse -= b.size
	p.idle += b.size
	p.free[b.size] = append(p.free[b.size], b.ptr)
}

// trim frees every idle buffer.
func (p *pool) trim() error {
	var errs []error
	for c, l := range p.free {
		for _, ptr := range l {
			if err := cu.MemFree(ptr); err != nil {
				errs = append(errs, fmt.Errorf("cuMemFree: %w", err))
			}
			p.idle -= c
		}
		delete(p.free, c)
	}
	return errors.Join(errs...)
}
