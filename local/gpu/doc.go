// Package gpu runs the table kernel of package local (join the factors of a
// bucket, minimise some variables out, keep the argmin) on an NVIDIA GPU,
// and bucket elimination on top of it: the GPU-DBE scheme of Fioretto et
// al. (CP 2015), one thread per output row, with the scopes staged in shared
// memory and the eliminated domain looped inside the thread.
//
// The package needs the cuda build tag. Without it (the default, pure-Go
// build) Open returns an error wrapping ErrNoCUDA, Available reports false,
// and callers keep the CPU solvers of package local. With it, the binary
// links against the CUDA driver (libcuda), through gorgonia.org/cu, whose
// package initialisation exits the process when the driver cannot be
// initialised: a cuda build is for machines with an NVIDIA driver.
//
// # Device
//
// Open starts one goroutine, locked to its OS thread, that owns the CUDA
// context, the kernels' module, two streams and a pool of device buffers
// reused across calls. Every CUDA call happens on that goroutine; the
// methods of Device hand it work through a channel and wait for the
// result, so a Device is safe for concurrent use. Close frees everything.
//
// # Kernel
//
// Device.JoinProject computes a local.JoinProject plan exactly as its Run
// does on the CPU: the same sums in the same order, the same minimum and
// the same argmin (ties to the smallest index, Hard rows to index 0), in
// float64. On whole costs the results are bit-identical. Output rows are
// processed in chunks that fit the device memory budget (Options.Budget),
// each chunk's copy to the host overlapping the next chunk's kernel on a
// second stream, through pinned host memory.
//
// # Bucket elimination
//
// BE is local.BE with its large buckets run on the device: a bucket goes to
// the GPU when its output entries times its eliminated values reach
// BEOptions.MinEntries (DefaultMinEntries, measured on an H200), smaller
// ones stay on the CPU, where launching and copying would cost more than
// the work. A bucket's output that only a later GPU bucket reads stays in
// device memory; only the argmin tables (for decoding) and the tables the
// CPU needs come back. The results are those of local.BE.
//
// # Building
//
// The kernels live in kernels.cu; go generate turns them into kernels.ptx
// for the compute_53 virtual architecture (every Jetson since the Nano; the
// driver compiles the PTX for newer GPUs when the module loads), and the
// PTX is committed and embedded, so that building needs the CUDA driver
// header and library but no nvcc. scripts/cuda-setup installs them on
// Debian, builds the test binary, and checks that the committed PTX is
// current (--check-ptx).
package gpu

// nvcc 11.8 emits different (equivalent) PTX from run to run unless address
// space randomisation is off, which setarch -R does for the one command:
// then scripts/cuda-setup --check-ptx can compare the committed PTX with a
// fresh one byte for byte.
//go:generate setarch -R nvcc -ptx -arch=compute_53 -o kernels.ptx kernels.cu
