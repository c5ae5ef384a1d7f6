//go:build cuda

package gpu

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// cuPtr is a device address, as kernels take it.
type cuPtr = cu.DevicePtr

// upload copies src to device memory at dst (synchronously, on the legacy
// default stream, which the owner's blocking stream waits for).
func upload[T any](dst cuPtr, src []T) error {
	if len(src) == 0 {
		return nil
	}
	n := int64(len(src)) * int64(unsafe.Sizeof(src[0]))
	if err := cu.MemcpyHtoD(dst, unsafe.Pointer(&src[0]), n); err != nil {
		return fmt.Errorf("copying %d bytes to the device: %w", n, err)
	}
	return nil
}

// download fills dst from device memory at src.
func download[T any](dst []T, src cuPtr) error {
	if len(dst) == 0 {
		return nil
	}
	n := int64(len(dst)) * int64(unsafe.Sizeof(dst[0]))
	if err := cu.MemcpyDtoH(unsafe.Pointer(&dst[0]), src, n); err != nil {
		return fmt.Errorf("copying %d bytes from the device: %w", n, err)
	}
	return nil
}

// zero clears bytes (a multiple of 4) of device memory at p.
func zero(p cuPtr, bytes int64) error {
	if err := cu.MemsetD32(p, 0, bytes/4); err != nil {
		return fmt.Errorf("clearing %d bytes: %w", bytes, err)
	}
	return nil
}

// ptrs returns kernel arguments: the addresses of 8-byte values (device
// addresses and int64s), as cuLaunchKernel takes them.
func ptrs(args ...any) []unsafe.Pointer {
	out := make([]unsafe.Pointer, len(args))
	for i, a := range args {
		switch a := a.(type) {
		case *cuPtr:
			out[i] = unsafe.Pointer(a)
		case *int64:
			out[i] = unsafe.Pointer(a)
		default:
			panic(fmt.Sprintf("kernel argument %d: %T is not an 8-byte value", i, a))
		}
	}
	return out
}
