//go:build cuda

package gpu

// gorgonia.org/cu binds cuMemFreeHost but not cuMemAllocHost, so pinned
// host memory is allocated here, through the driver API directly.

// #cgo LDFLAGS: -lcuda
// #include <cuda.h>
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// pinned is page-locked host memory, which the copy engines read and write
// asynchronously (pageable memory would make every copy synchronous).
type pinned struct {
	p    unsafe.Pointer
	size int64
}

// allocPinned allocates size bytes of pinned host memory in the current
// context.
func allocPinned(size int64) (pinned, error) {
	var p unsafe.Pointer
	if r := C.cuMemAllocHost(&p, C.size_t(size)); r != C.CUDA_SUCCESS {
		return pinned{}, fmt.Errorf("cuMemAllocHost(%d bytes): %s", size, cuErrorName(r))
	}
	return pinned{p: p, size: size}, nil
}

// free releases the memory; the zero pinned is a no-op.
func (m *pinned) free() error {
	if m.p == nil {
		return nil
	}
	r := C.cuMemFreeHost(m.p)
	m.p, m.size = nil, 0
	if r != C.CUDA_SUCCESS {
		return fmt.Errorf("cuMemFreeHost: %s", cuErrorName(r))
	}
	return nil
}

// float64s and int32s view the memory, from byte offset off.
func (m *pinned) float64s(off int64, n int) []float64 {
	return unsafe.Slice((*float64)(unsafe.Add(m.p, off)), n)
}

func (m *pinned) int32s(off int64, n int) []int32 {
	return unsafe.Slice((*int32)(unsafe.Add(m.p, off)), n)
}

// cuErrorName names a driver result code.
func cuErrorName(r C.CUresult) string {
	var s *C.char
	if C.cuGetErrorName(r, &s) != C.CUDA_SUCCESS || s == nil {
		return fmt.Sprintf("CUresult %d", int(r))
	}
	return C.GoString(s)
}

// arena is pinned host memory for the tables one elimination hands to the
// host (outputs the CPU reads, argmin tables, evicted tables): slabs
// bump-allocated and never zeroed, which the copy engines fill directly,
// with no staging copy. A chain takes an arena from its Device when it
// first needs host memory and gives it back at its end, so a process
// pins its memory once and reuses it for every later elimination. It is
// touched only on the device goroutine.
type arena struct {
	slabs []pinned
	cur   int   // slab being filled
	off   int64 // bytes used in slabs[cur]
}

// minSlab is the smallest slab: pinning costs per call, and eliminations
// that need little host memory (a few scalars and small tables) share one.
const minSlab = 1 << 20

// maxArenaKept bounds the pinned bytes an arena keeps for reuse: past it
// the slabs go back to the system when the elimination ends (a huge MVA
// table's argmins should not stay pinned for the process's life).
const maxArenaKept = 4 << 30

// alloc returns n bytes, 256-aligned, from the arena, pinning a new slab
// when none left has room. The memory is not zeroed.
func (a *arena) alloc(n int64) (unsafe.Pointer, error) {
	n = align(max(n, 1))
	for ; a.cur < len(a.slabs); a.cur, a.off = a.cur+1, 0 {
		if a.slabs[a.cur].size-a.off >= n {
			p := unsafe.Add(a.slabs[a.cur].p, a.off)
			a.off += n
			return p, nil
		}
	}
	var total int64
	for _, s := range a.slabs {
		total += s.size
	}
	// Doubling: an elimination needing much host memory pins it in a few
	// calls.
	m, err := allocPinned(max(n, minSlab, total))
	if err != nil {
		return nil, fmt.Errorf("gpu: host memory for tables: %w", err)
	}
	a.slabs = append(a.slabs, m)
	a.cur, a.off = len(a.slabs)-1, n
	return m.p, nil
}

// float64s and int32s return n unzeroed entries from the arena.
func (a *arena) float64s(n int) ([]float64, error) {
	p, err := a.alloc(int64(n) * 8)
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*float64)(p), n), nil
}

func (a *arena) int32s(n int) ([]int32, error) {
	p, err := a.alloc(int64(n) * 4)
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*int32)(p), n), nil
}

// size returns the arena's pinned bytes.
func (a *arena) size() int64 {
	var n int64
	for _, s := range a.slabs {
		n += s.size
	}
	return n
}

// reset makes all the arena's memory free again, releasing it when the
// arena holds more than maxArenaKept bytes.
func (a *arena) reset() error {
	a.cur, a.off = 0, 0
	if a.size() <= maxArenaKept {
		return nil
	}
	return a.free()
}

// free releases every slab.
func (a *arena) free() error {
	var errs []error
	for i := range a.slabs {
		errs = append(errs, a.slabs[i].free())
	}
	a.slabs, a.cur, a.off = nil, 0, 0
	return errors.Join(errs...)
}
