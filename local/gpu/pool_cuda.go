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

	// slab is device memory reserved when the device opens, which
	// buffers are carved from (slabUsed bytes so far) before the pool
	// asks the driver: a cuMemAlloc costs tens of microseconds, which a
	// process's first solve would pay for every buffer it needs. Carved
	// buffers are recycled like the others but never freed one by one;
	// the slab goes back at close.
	slab     devBuf
	slabUsed int64
}

// slabBytes returns the size of the slab reserved for a budget: a
// sixteenth of it, at most 256 MiB.
func slabBytes(budget int64) int64 { return min(budget/16, 256<<20) &^ 4095 }

// reserve allocates the slab.
func (p *pool) reserve(n int64) error {
	if n <= 0 {
		return nil
	}
	ptr, err := cu.MemAlloc(n)
	if err != nil {
		return fmt.Errorf("cuMemAlloc(%d bytes) for the buffer slab: %w", n, err)
	}
	p.slab = devBuf{ptr, n}
	return nil
}

// inSlab reports whether ptr was carved from the slab.
func (p *pool) inSlab(ptr cu.DevicePtr) bool {
	return p.slab.size > 0 && ptr >= p.slab.ptr && ptr < p.slab.ptr+cu.DevicePtr(p.slab.size)
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
	if p.slabUsed+c <= p.slab.size {
		ptr := p.slab.ptr + cu.DevicePtr(p.slabUsed)
		p.slabUsed += c
		p.inUse += c
		return devBuf{ptr, c}, nil
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

// trim frees every idle buffer not carved from the slab (those stay on
// the free lists).
func (p *pool) trim() error {
	var errs []error
	for c, l := range p.free {
		kept := l[:0]
		for _, ptr := range l {
			if p.inSlab(ptr) {
				kept = append(kept, ptr)
				continue
			}
			if err := cu.MemFree(ptr); err != nil {
				errs = append(errs, fmt.Errorf("cuMemFree: %w", err))
			}
			p.idle -= c
		}
		if len(kept) == 0 {
			delete(p.free, c)
		} else {
			p.free[c] = kept
		}
	}
	return errors.Join(errs...)
}

// close frees every idle buffer and the slab; buffers still handed out
// are the caller's leak to report.
func (p *pool) close() error {
	err := p.trim()
	clear(p.free)
	p.idle = 0
	if p.slab.size > 0 {
		err = errors.Join(err, cu.MemFree(p.slab.ptr))
		p.slab, p.slabUsed = devBuf{}, 0
	}
	return err
}
