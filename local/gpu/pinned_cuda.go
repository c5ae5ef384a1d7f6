//go:build cuda

package gpu

// gorgonia.org/cu binds cuMemFreeHost but not cuMemAllocHost, so pinned
// host memory is allocated here, through the driver API directly.

// #cgo LDFLAGS: -lcuda
// #include <cuda.h>
import "C"

import (
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
