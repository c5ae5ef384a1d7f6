package gpu

import (
	"errors"

	"github.com/hearth-dcop/hearth/local"
)

// ErrNoCUDA is wrapped by Open's error in a build without the cuda tag.
var ErrNoCUDA = errors.New("built without CUDA support (rebuild with -tags cuda)")

// ErrNoDevice is wrapped by Open's error when the CUDA driver is present but
// no usable device is: none installed, the ordinal out of range, a compute
// capability below 5.3, or a context that cannot be created.
var ErrNoDevice = errors.New("no usable CUDA device")

// ErrUnsupported is wrapped by the error of a plan the kernels do not
// handle (more than MaxInputs inputs or MaxElim eliminated variables, or a
// plan too large for shared memory); callers run such plans on the CPU.
var ErrUnsupported = errors.New("plan not supported by the GPU kernel")

// ErrClosed is returned by the methods of a closed Device.
var ErrClosed = errors.New("gpu: device closed")

// Limits of the kernels (see kernels.cu): a plan with more inputs or
// eliminated variables runs on the CPU.
const (
	MaxInputs = 32
	MaxElim   = 32
)

// DefaultMinEntries is the size, in output entries times eliminated values
// (Rows × ElimSize of a local.JoinProject), from which BE runs a bucket on
// the GPU rather than on the CPU. It is the crossover measured on an H200
// machine with 16 cores (docs/bench/gpu-kernels-h200.csv): a GPU call costs
// some 55 µs however small (the hand-over to the device goroutine, one
// upload, the launch, one download, two synchronisations), so below it the
// CPU kernel on all cores wins; at 4^7 = 16384 entries the two tie, and
// from 4^8 on the GPU wins at every size measured when the inputs are
// smaller than the table, as in most buckets. Whole BE solves vary little
// with the threshold between 2^8 and 2^20 (grid 9×9: 190 to 206 ms, against
// 423 ms with every bucket on the CPU).
const DefaultMinEntries = 1 << 14

// Options configures a Device.
type Options struct {
	// Ordinal selects the device, 0 for the first.
	Ordinal int
	// Budget bounds the device memory the Device allocates, in bytes:
	// input tables, output chunks and buffers kept between calls. Tables
	// whose output does not fit are computed in chunks of rows; a plan
	// whose inputs alone do not fit fails with an error wrapping
	// local.ErrTooLarge. 0 means 90% of the memory free when the device
	// is opened.
	Budget int64
}

// BEOptions tunes GPU bucket elimination.
type BEOptions struct {
	local.BEOptions
	// MinEntries is the bucket size (output entries × eliminated values)
	// from which a bucket runs on the GPU; smaller buckets, and plans the
	// kernel does not support, run on the CPU. 0 means DefaultMinEntries;
	// a negative value sends every supported bucket to the GPU.
	MinEntries int64
}
