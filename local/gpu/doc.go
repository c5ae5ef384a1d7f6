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
// Tables of 2^19 rows or more whose inputs share entries between
// neighbouring values of one output variable run jp_tile, where a thread
// computes 4 or 8 such rows and reads the shared entries once
// (plan_cuda.go, chooseTile); the results are the same.
//
// Steps of 2^16 rows or more (and at most 31 inputs, so that a sum of Hard
// entries fits 32 bits) try 32-bit integer costs, whatever their kernel: a kernel on the device converts each input (uploaded or
// kept from an earlier step) to int32, Hard as a sentinel, and checks that
// every finite cost is a whole number and that the largest magnitude
// times the inputs stays below 2^25, so that every sum is exact and a sum
// holding Hard stays recognisable. When the check passes, the integer
// instance of the kernel runs (half the bytes per load, integer adds and
// compares) and writes the same doubles and argmins as the double kernel;
// otherwise (fractions, -0, large costs: UAI files' log-probabilities,
// for one) the double kernel runs. The decision is per step, made on the
// device, so it also covers tables that never left it. Integer steps whose
// inputs split the output variables into a prefix P and a suffix S, every
// input over one side (a (min,+) product), run i32_jp_prod_k, or
// i32_jp_prodw*_k where P has at most 16 assignments (the wide bucket):
// one add and one unsigned min per row and value, the argmin packed into
// the sums' low bits.
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
// # DPOP
//
// UtilChain is the same chain for one DPOP agent's UTIL phase
// (mva/protocol/dpop's Chain): the tables that only feed the agent's next
// join stay on the device, the UTIL table and the argmin tables come back
// once, into the agent's memory. DPOP's messages are those of the CPU run,
// byte for byte.
//
// # Building
//
// The kernels live in kernels.cu; go generate compiles them into
// kernels.fatbin, a compressed fat binary holding machine code (SASS) for
// every Jetson since the Nano (sm_53, sm_62, sm_72, sm_87) and the
// data-centre and desktop GPUs of the last generations (sm_70, sm_75,
// sm_80, sm_86, sm_89, sm_90), plus PTX for compute_53 (older GPUs the
// SASS does not cover) and compute_90 (newer ones), which the driver
// compiles when the module loads. A GPU with SASS in the file starts
// without any JIT. The fat binary is committed and embedded, so that
// building needs the CUDA driver header and library but no nvcc.
// scripts/cuda-setup installs them on Debian, builds the test binary, and
// checks that the committed fat binary is current (--check-ptx).
package gpu

// nvcc 11.8's output changes with the path it compiles in and with address
// randomisation; scripts/nvcc-fixed compiles in one fixed folder without
// it, so that scripts/cuda-setup --check-ptx can compare the committed fat
// binary with a fresh one byte for byte. (CUDA 11.8 knows no architecture
// past sm_90; newer GPUs use the compute_90 PTX.)
//go:generate ../../scripts/nvcc-fixed kernels.fatbin kernels.cu -fatbin -Xfatbin=-compress-all -gencode=arch=compute_53,code=[sm_53,compute_53] -gencode=arch=compute_62,code=sm_62 -gencode=arch=compute_72,code=sm_72 -gencode=arch=compute_87,code=sm_87 -gencode=arch=compute_70,code=sm_70 -gencode=arch=compute_75,code=sm_75 -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_86,code=sm_86 -gencode=arch=compute_89,code=sm_89 -gencode=arch=compute_90,code=[sm_90,compute_90]
