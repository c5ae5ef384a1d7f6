// Package gpu runs package sampler's Gibbs and Metropolis-Hastings chains
// on an NVIDIA GPU: the DMCMC scheme of Fioretto, Yeoh and Pontelli (CP
// 2016), one chain per (MVA row, run), with the CPU samplers' semantics,
// options and random numbers, so that a seed gives the same chains, and the
// same tables, on either.
//
// The package needs the cuda build tag. Without it (the default, pure-Go
// build) NewGibbs, NewMH and New return an error wrapping
// local/gpu.ErrNoCUDA, and callers keep package sampler's CPU samplers.
//
// # Kernels
//
// A chain is run by a group of G lanes of a warp (G a power of two up to
// 32): for Gibbs the lanes share the conditional of the variable being
// drawn, a few values each (G = a quarter of the largest interior domain,
// rounded up); for the normal MH proposal they share the interior
// variables' steps and then the evaluation of the proposal over the
// functions (G = a quarter of the interior variables, rounded up); the
// discrete proposal changes one variable and reads only its functions, so
// it runs one lane per chain. These sizes were the fastest measured (see
// defaultLanes). The plan — domains, scopes, strides, the functions of
// every interior variable, the normal proposal's tables — is staged in
// shared memory once per block, and the cost tables too (as float32 when
// every entry is one exactly, which whole costs below 2²⁴ are) unless
// reading them through the caches lets more chains be resident; every
// chain's current, best and previous states and its scratch live in
// shared memory. Each chain writes its best cost and interior to device
// memory; a second kernel keeps, per row, the least cost, ties to the
// lowest run index, as the CPU merge does; one copy brings the rows back.
// Large tables run in chunks of rows (so that a launch lasts about a
// second and the chain buffers stay small), with ctx checked between
// chunks.
//
// The kernels run on the device goroutine of a local/gpu.Device (through
// Device.Do), sharing its context, streams and buffer pool with GPU bucket
// elimination.
//
// # Same chains as the CPU
//
// Everything a chain computes follows sampler/doc.go: the Philox-4x32-10
// counters (row, run, step, draw/4) and the same conversions, and the same
// double-precision arithmetic in the same order — a conditional's costs
// per value in the order of the variable's functions, Gibbs weights
// exp((cmin − c)·β) summed in value order (each lane adds the weights up to
// its own value one by one, so the running sums are the CPU's), MH
// Hastings terms in variable order, a sample's cost in function order
// (in parallel only when every partial sum is exact, which whole costs
// below 2⁵³ in total guarantee), no fused multiply-adds (nvcc
// -fmad=false). The last difference would be exp: CUDA's and Go's can
// differ in the last bit, which can flip a draw and send a chain its own
// way. So the kernels compute exp as math.Exp does on the host: Go's amd64
// assembly, transcribed with and without FMA, the variant chosen at run
// time by comparing both with math.Exp. On such hosts (every x86-64 one)
// the GPU runs the CPU's chains exactly: the tables are equal, bit for
// bit, and so are Checks and the states visited (the distribution test
// gives the CPU's χ² values to the last digit). On other hosts (arm64, as
// on a Jetson, has its own math.Exp) the kernels use CUDA's exp, and a
// chain leaves the CPU's only where a last-bit difference moves a running
// sum across the uniform drawn against it (about 2⁻⁵² per draw): forcing
// that mode on an H200 changed none of 13,824 rows of all three samplers
// (TestDeviceExpDivergence, which allows 1%), and a chain that does
// diverge is still a correct chain of the same sampler, its row's cost
// that of its assignment.
//
// # Differences from the CPU samplers
//
//   - Options.Workers is ignored: the GPU runs every chain at once.
//   - Hard constraints and repair are the CPU's, step for step.
//   - A problem the kernels cannot hold — its plan and one chain's state
//     beyond the 48 KiB of shared memory a block gets without opting in
//     (very large domains or many functions), more than 2³¹ cost entries,
//     Runs or Trials above 2³¹ − 1 — is sampled by the CPU sampler with the
//     same options, which runs the same chains; OnDevice reports it.
//   - Checks counts the same entries as the CPU, summed on the device.
//
// # Speed
//
// On an H200 against package sampler on the same machine's 16 cores
// (docs/bench/gpu-samplers-h200.csv; meeting-like agents, 4096 to 1M
// rows, R = 10, whole SolveTable calls, transfers included): Gibbs
// 1.7–2.0·10⁸ sweeps/s, 580–1100× one core and 52–74× all cores; MH with
// the normal proposal 1.2–2.2·10⁹ proposals/s, 1100–1900× and 103–122×;
// with the discrete proposal 2.0–3.3·10⁹, 490–900× and 34–60×.
//
// # Building
//
// The kernels live in samplers.cu; go generate compiles them, with
// -fmad=false, into samplers.fatbin, a compressed fat binary with machine
// code (SASS) for the same GPUs as local/gpu's kernels (every Jetson since
// the Nano, sm_53, 62, 72 and 87, and sm_70, 75, 80, 86, 89 and 90) plus
// PTX for compute_53 and compute_90, which the driver compiles for any
// other GPU; it is committed and embedded, so those GPUs start without
// JIT. Until CUDA 11.8's ptxas compiled the kernels right (see rng_reset
// in samplers.cu: the Rng's cache was left undefined, and ptxas -O1 and
// above made sm_90 chains leave the CPU's), the package shipped PTX only.
// scripts/cuda-setup builds the test binary (.gpu/sampler_gpu.test) and
// checks that the committed fat binary is current.
package gpu

// As for local/gpu: scripts/nvcc-fixed compiles in one fixed folder without
// address randomisation, so that nvcc's output is reproducible and
// scripts/cuda-setup --check-ptx can compare it byte for byte.
//go:generate ../../scripts/nvcc-fixed samplers.fatbin samplers.cu -fatbin -Xfatbin=-compress-all -fmad=false -gencode=arch=compute_53,code=[sm_53,compute_53] -gencode=arch=compute_62,code=sm_62 -gencode=arch=compute_72,code=sm_72 -gencode=arch=compute_87,code=sm_87 -gencode=arch=compute_70,code=sm_70 -gencode=arch=compute_75,code=sm_75 -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_86,code=sm_86 -gencode=arch=compute_89,code=sm_89 -gencode=arch=compute_90,code=[sm_90,compute_90]
