//go:build cuda

package gpu

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/hearth-dcop/hearth/local"
)

// Launch geometry: 256 threads a block, at most blocksPerSM blocks per
// multiprocessor in a grid (the grid-stride loop covers the rest).
const (
	blockThreads = 256
	blocksPerSM  = 32
)

// maxChunkRows bounds a chunk, so that the pinned staging stays small
// (48 MiB a slot) and a long table still gets several chunks whose copies
// overlap the kernels.
const maxChunkRows = 1 << 22

// JoinProject computes p on the device into dst (p.Rows() entries) and,
// unless argmin is nil, the argmin (p.Rows() entries), exactly as p.Run
// does on the CPU. The error wraps ErrUnsupported for a plan the kernel
// does not handle, local.ErrTooLarge when the inputs do not fit the
// device's memory budget, and ctx's error when ctx ends between chunks
// (dst is then partly written).
func (d *Device) JoinProject(ctx context.Context, p *local.JoinProject, dst []float64, argmin []int32) error {
	pk, err := pack(p, d.kernels)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(dst) != p.Rows() {
		return fmt.Errorf("gpu: dst has %d entries, the output needs %d", len(dst), p.Rows())
	}
	if argmin != nil && len(argmin) != p.Rows() {
		return fmt.Errorf("gpu: argmin has %d entries, the output needs %d", len(argmin), p.Rows())
	}
	return d.do(ctx, func(o *owner) error {
		_, err := o.joinProject(ctx, nil, jpRequest{p: p, pk: pk, out: p.Output(dst), host: true, argmin: argmin, argHost: argmin != nil, i32Rows: d.kernels.i32Rows()})
		return err
	})
}

// resident holds the tables a chain of bucket-elimination steps keeps in
// device memory, by the factor they stand for.
type resident map[*local.Factor]devBuf

// entries returns the size of f's table.
func entries(f *local.Factor) int {
	n := 1
	for _, d := range f.Dims {
		n *= d
	}
	return n
}

// jpRequest is one join-project for the device goroutine.
type jpRequest struct {
	p   *local.JoinProject
	pk  *packed
	out *local.Factor // out.Costs: where the output goes on the host
	// keep: leave the output in device memory, in the chain's resident
	// tables, for a later step (when it fits). host: out.Costs must hold
	// the output (always, without keep); when out.Costs is nil it is
	// taken from arena.
	keep, host bool
	// argHost: the argmin table goes to the host, into argmin or, when
	// that is nil, the arena. argDevice: it stays in device memory when
	// it fits, and goes to the arena otherwise.
	argHost, argDevice bool
	argmin             []int32
	arena              *arena // pinned host memory; nil: none (out.Costs and argmin given)
	// i32Rows: the smallest output for which the step tries integer
	// costs (kernelChoice.i32Rows; -1: never).
	i32Rows int64
}

// jpResult is where a join-project left its argmin table.
type jpResult struct {
	argmin []int32 // on the host
	argDev devBuf  // on the device (size 0: not there)
}

// joinProject runs rq. With a chain (res not nil) and keep, the output
// stays in device memory, recorded in res, for a later step to read.
// Inputs found in res are read there, and consumed when the step
// succeeds; after an error res is as it was. Host memory from the arena
// is pinned: the copy engines write it directly; other host memory (a
// caller's slices) is reached through the two pinned staging slots.
func (o *owner) joinProject(ctx context.Context, res resident, rq jpRequest) (r jpResult, err error) {
	p, pk := rq.p, rq.pk
	rows := int64(p.Rows())
	inputs := p.Inputs()
	for j, f := range inputs {
		if _, ok := res[f]; ok {
			continue
		}
		if n := entries(f); len(f.Costs) != n {
			return r, fmt.Errorf("gpu: input %d has %d entries, its dims need %d", j, len(f.Costs), n)
		}
	}
	keep := rq.keep && res != nil
	host := rq.host || !keep
	if host && rq.out.Costs != nil && int64(len(rq.out.Costs)) != rows {
		return r, fmt.Errorf("gpu: dst has %d entries, the output needs %d", len(rq.out.Costs), rows)
	}
	if host && rq.out.Costs == nil && rq.arena == nil {
		return r, errors.New("gpu: no host memory for the output")
	}
	argmin := rq.argmin
	if argmin != nil && int64(len(argmin)) != rows {
		return r, fmt.Errorf("gpu: argmin has %d entries, the output needs %d", len(argmin), rows)
	}

	var temps []devBuf
	var consumed []*local.Factor
	var newCosts bool // out.Costs taken from the arena here
	defer func() {
		// Nothing may still read or write these buffers.
		if serr := o.syncStreams(); serr != nil {
			err = errors.Join(err, fmt.Errorf("gpu: %w", serr))
		}
		for _, b := range temps {
			o.pool.put(b)
		}
		if err == nil {
			for _, f := range consumed {
				o.pool.put(res[f])
				delete(res, f)
			}
		} else {
			if newCosts {
				rq.out.Costs = nil
			}
			if r.argDev.size > 0 {
				o.pool.put(r.argDev)
			}
			r = jpResult{}
		}
	}()
	get := func(n int64) (devBuf, error) {
		b, err := o.pool.get(n)
		if err == nil {
			temps = append(temps, b)
		}
		return b, err
	}

	// Inputs: kept by an earlier step, or uploaded (once per table) with
	// the plan, in one buffer and one copy.
	words := append([]int64(nil), pk.words...)
	var segs []segment
	var total int64
	at := make(map[*float64]int64, len(inputs)) // device address, or -1-offset in the upload
	for s, j := range pk.slots {
		f := inputs[j]
		if k, ok := res[f]; ok {
			if !slices.Contains(consumed, f) {
				consumed = append(consumed, f)
			}
			words[pHdr+s] = int64(k.ptr)
			continue
		}
		c := f.Costs
		key := &c[0]
		a, ok := at[key]
		if !ok {
			a = -1 - total
			segs = append(segs, segment{src: unsafe.Pointer(key), n: int64(len(c)) * 8, off: total})
			total = align(total + int64(len(c))*8)
			at[key] = a
		}
		words[pHdr+s] = a
	}
	planOff := total
	total += int64(len(words)) * 8
	in, err := get(total)
	if err != nil {
		return r, fmt.Errorf("gpu: %d bytes of inputs: %w", total, err)
	}
	for s := range pk.slots {
		if a := words[pHdr+s]; a < 0 {
			words[pHdr+s] = int64(in.ptr) + (-1 - a)
		}
	}
	segs = append(segs, segment{src: unsafe.Pointer(&words[0]), n: int64(len(words)) * 8, off: planOff})
	if err := o.upload(in.ptr, total, segs); err != nil {
		return r, err
	}
	planPtr := in.ptr + cu.DevicePtr(planOff)
	// Integer costs where the step's kernel has an integer instance and
	// its inputs turn out exact on the device; doubles otherwise.
	var i32Plan cu.DevicePtr
	if rq.i32Rows >= 0 && rows >= rq.i32Rows && i32Name(pk.kernel) != "" && len(pk.slots) <= maxI32Inputs {
		var bufs []devBuf
		i32Plan, bufs, err = o.toI32(p, pk, words)
		temps = append(temps, bufs...)
		if err != nil {
			return r, err
		}
	}

	// Output: the whole table in device memory when it is kept (and
	// fits), else two chunk slots that alternate.
	var out devBuf
	if keep {
		if out, err = o.pool.get(rows * 8); err != nil {
			if !errors.Is(err, local.ErrTooLarge) {
				return r, fmt.Errorf("gpu: output: %w", err)
			}
			keep, host = false, true
		} else {
			defer func() {
				if err != nil {
					o.pool.put(out)
				} else {
					res[rq.out] = out
				}
			}()
		}
	}
	// The argmin table: kept whole on the device when asked and it fits.
	if rq.argDevice {
		if r.argDev, err = o.pool.get(rows * 4); err != nil {
			if !errors.Is(err, local.ErrTooLarge) {
				return r, fmt.Errorf("gpu: argmin: %w", err)
			}
			r.argDev = devBuf{}
		}
	}
	argToHost := rq.argHost || (rq.argDevice && r.argDev.size == 0)
	// Host memory from the arena, which the copies fill directly.
	outPinned, argPinned := false, false
	if host && rq.out.Costs == nil {
		if rq.out.Costs, err = rq.arena.float64s(int(rows)); err != nil {
			return r, err
		}
		newCosts, outPinned = true, true
	}
	if argToHost && argmin == nil {
		if rq.arena == nil {
			return r, errors.New("gpu: no host memory for the argmin table")
		}
		if argmin, err = rq.arena.int32s(int(rows)); err != nil {
			return r, err
		}
		argPinned = true
	}
	if !argToHost {
		argmin = nil
	}
	r.argmin = argmin

	var rowBytes int64
	if !keep {
		rowBytes += 8
	}
	if argmin != nil && r.argDev.size == 0 {
		rowBytes += 4
	}
	// Chunks bound the staging of what goes to the host; a table that
	// stays whole on the device is one launch.
	chunk := rows
	if rowBytes > 0 {
		chunk = min(chunk, maxChunkRows)
		// Size classes round up to a power of two: keep room for that.
		chunk = min(chunk, o.pool.room()/(4*rowBytes))
	}
	if chunk < 1 {
		return r, fmt.Errorf("gpu: no device memory left for the output after %d bytes of inputs: %w", o.pool.inUse, errBudget)
	}
	// jp_tile's launches cover whole blocks of rows; a chunk too small
	// for one takes the untiled kernel.
	chunkKernel := pk.kernel
	prod := i32Plan != 0 && pk.prodRows > 0
	if unit := pk.chunkUnit(prod); unit > 0 {
		if c := chunk / unit * unit; c > 0 {
			chunk = c
		} else if prod && pk.block > 0 && chunk >= pk.block {
			chunk, prod = chunk/pk.block*pk.block, false
		} else {
			chunkKernel, prod = pk.plainKernel(), false
		}
	}
	var slotDst, slotArg [2]devBuf
	for i := range 2 {
		if !keep {
			if slotDst[i], err = get(chunk * 8); err != nil {
				return r, fmt.Errorf("gpu: output chunk: %w", err)
			}
		}
		if argmin != nil && r.argDev.size == 0 {
			if slotArg[i], err = get(chunk * 4); err != nil {
				return r, fmt.Errorf("gpu: argmin chunk: %w", err)
			}
		}
	}
	stageOut := host && !outPinned
	stageArg := argmin != nil && !argPinned
	var stageDst int64 // bytes of dst in a staging slot
	if stageOut {
		stageDst = chunk * 8
	}
	staged := stageOut || stageArg
	if staged {
		if err := o.staging(stageDst + chunk*4*boolInt(stageArg)); err != nil {
			return r, err
		}
	}

	// The pipeline: chunk i runs on stream i%2 and is copied, on the same
	// stream, into pinned host memory: the arena directly, or staging
	// slot i%2, which the host empties (and so lets be reused) two chunks
	// later, while the device computes.
	dst := rq.out.Costs
	nch := (rows + chunk - 1) / chunk
	finish := func(i int64) error {
		if !staged {
			return nil
		}
		s := i % 2
		if err := o.streams[s].Synchronize(); err != nil {
			return fmt.Errorf("gpu: chunk %d: %w", i, err)
		}
		r0 := i * chunk
		n := min(chunk, rows-r0)
		if stageOut {
			parallelCopy(unsafe.Pointer(&dst[r0]), o.stage[s].p, n*8)
		}
		if stageArg {
			parallelCopy(unsafe.Pointer(&argmin[r0]), unsafe.Add(o.stage[s].p, stageDst), n*4)
		}
		return nil
	}
	kernel, shared, _ := pk.kernelFor(chunkKernel, i32Plan != 0, prod, chunk)
	fn := o.fns[kernel]
	if i32Plan != 0 {
		planPtr = i32Plan
		o.i32Steps++
		switch {
		case kernel == kProd:
			o.prodSteps++
		case prod:
			o.prodWSteps++
		}
	}
	for i := range nch {
		if i >= 2 {
			if err := finish(i - 2); err != nil {
				return r, err
			}
		}
		if err := ctx.Err(); err != nil {
			return r, err
		}
		s := i % 2
		r0 := i * chunk
		n := min(chunk, rows-r0)
		dptr := slotDst[s].ptr
		if keep {
			dptr = out.ptr + cu.DevicePtr(r0*8)
		}
		aptr := slotArg[s].ptr // 0 without argmin: the kernel skips it
		if r.argDev.size > 0 {
			aptr = r.argDev.ptr + cu.DevicePtr(r0*4)
		}
		plan := planPtr
		_, _, units := pk.kernelFor(chunkKernel, i32Plan != 0, prod, n)
		blocks := int(min((units+blockThreads-1)/blockThreads, int64(o.sms*blocksPerSM)))
		args := []unsafe.Pointer{unsafe.Pointer(&plan), unsafe.Pointer(&dptr), unsafe.Pointer(&aptr), unsafe.Pointer(&r0), unsafe.Pointer(&n)}
		if err := fn.Launch(blocks, 1, 1, blockThreads, 1, 1, shared, o.streams[s], args); err != nil {
			return r, fmt.Errorf("gpu: launching %s: %w", kernel, err)
		}
		if host {
			to := unsafe.Pointer(&dst[r0])
			if stageOut {
				to = o.stage[s].p
			}
			if err := cu.MemcpyDtoHAsync(to, dptr, n*8, o.streams[s]); err != nil {
				return r, fmt.Errorf("gpu: copying chunk %d: %w", i, err)
			}
		}
		if argmin != nil {
			to := unsafe.Pointer(&argmin[r0])
			if stageArg {
				to = unsafe.Add(o.stage[s].p, stageDst)
			}
			if err := cu.MemcpyDtoHAsync(to, aptr, n*4, o.streams[s]); err != nil {
				return r, fmt.Errorf("gpu: copying chunk %d's argmin: %w", i, err)
			}
		}
	}
	for i := max(0, nch-2); i < nch; i++ {
		if err := finish(i); err != nil {
			return r, err
		}
	}
	return r, nil
}

// toI32 converts the step's inputs, at the device addresses in words (pk's
// plan), to integer costs in new device buffers and returns the address
// of a plan that reads them, with the buffers to free after the step. The
// plan is 0 when an input holds a cost that is not a whole number within
// range, when the sums could leave the range (the largest magnitude times
// the inputs reaches i32Limit), or when the buffers do not fit: the step
// then takes the double kernel. It waits for the conversion.
func (o *owner) toI32(p *local.JoinProject, pk *packed, words []int64) (plan cu.DevicePtr, bufs []devBuf, err error) {
	get := func(n int64) (devBuf, error) {
		b, err := o.pool.get(n)
		if err == nil {
			bufs = append(bufs, b)
		}
		return b, err
	}
	fail := func(err error) (cu.DevicePtr, []devBuf, error) {
		if errors.Is(err, local.ErrTooLarge) {
			err = nil
		}
		// A conversion may still be writing its buffer.
		if serr := o.syncStreams(); serr != nil {
			err = errors.Join(err, fmt.Errorf("gpu: %w", serr))
		}
		for _, b := range bufs {
			o.pool.put(b)
		}
		return 0, nil, err
	}
	stat, err := get(16)
	if err != nil {
		return fail(err)
	}
	if err := cu.MemsetD8(stat.ptr, 0, 16); err != nil {
		return fail(fmt.Errorf("gpu: clearing the conversion's check: %w", err))
	}
	iw := slices.Clone(words)
	conv := make(map[int64]cu.DevicePtr, len(pk.slots))
	inputs := p.Inputs()
	for s, j := range pk.slots {
		src := words[pHdr+s]
		if a, ok := conv[src]; ok {
			iw[pHdr+s] = int64(a)
			continue
		}
		n := int64(entries(inputs[j]))
		b, err := get(n * 4)
		if err != nil {
			return fail(err)
		}
		blocks := int(max(1, min((n+blockThreads-1)/blockThreads, int64(o.sms*blocksPerSM))))
		sp, dp := cu.DevicePtr(src), b.ptr
		args := []unsafe.Pointer{unsafe.Pointer(&sp), unsafe.Pointer(&dp), unsafe.Pointer(&n), unsafe.Pointer(&stat.ptr)}
		if err := o.fns[kD2I].Launch(blocks, 1, 1, blockThreads, 1, 1, 0, o.streams[0], args); err != nil {
			return fail(fmt.Errorf("gpu: launching %s: %w", kD2I, err))
		}
		conv[src] = b.ptr
		iw[pHdr+s] = int64(b.ptr)
	}
	pb, err := get(int64(len(iw)) * 8)
	if err != nil {
		return fail(err)
	}
	// Synchronous copies on the legacy stream, which waits for the
	// conversions on the (blocking) streams.
	if err := cu.MemcpyHtoD(pb.ptr, unsafe.Pointer(&iw[0]), int64(len(iw))*8); err != nil {
		return fail(fmt.Errorf("gpu: uploading the integer plan: %w", err))
	}
	var st [2]uint64
	if err := cu.MemcpyDtoH(unsafe.Pointer(&st[0]), stat.ptr, 16); err != nil {
		return fail(fmt.Errorf("gpu: reading the conversion's check: %w", err))
	}
	if st[0] != 0 || st[1]*uint64(len(pk.slots)) >= i32Limit {
		return fail(nil)
	}
	return pb.ptr, bufs, nil
}

// segment is host memory to upload at a byte offset of a device buffer.
type segment struct {
	src    unsafe.Pointer
	n, off int64
}

// align rounds a byte offset up to 256, the alignment of cuMemAlloc.
func align(n int64) int64 { return (n + 255) &^ 255 }

// uploadSlot is the staging size uploads use at least.
const uploadSlot = 16 << 20

// upload copies segs into the device buffer dst (total bytes laid out by
// the segments' offsets) through the two pinned staging slots: the host
// fills one slot, with several cores for large pieces, while the copy
// engine drains the other. Pageable copies run at a fraction of the
// speed: the driver stages them through its own small buffers, one core
// copying.
func (o *owner) upload(dst cu.DevicePtr, total int64, segs []segment) error {
	if err := o.staging(min(total, uploadSlot)); err != nil {
		return err
	}
	slot := o.stage[0].size
	for i, base := int64(0), int64(0); base < total; i, base = i+1, base+slot {
		s := i % 2
		if i >= 2 {
			if err := o.streams[s].Synchronize(); err != nil {
				return fmt.Errorf("gpu: uploading: %w", err)
			}
		}
		n := min(slot, total-base)
		for _, g := range segs {
			lo, hi := max(g.off, base), min(g.off+g.n, base+n)
			if lo < hi {
				parallelCopy(unsafe.Add(o.stage[s].p, lo-base), unsafe.Add(g.src, lo-g.off), hi-lo)
			}
		}
		if err := cu.MemcpyHtoDAsync(dst+cu.DevicePtr(base), o.stage[s].p, n, o.streams[s]); err != nil {
			return fmt.Errorf("gpu: uploading: %w", err)
		}
	}
	if err := o.syncStreams(); err != nil {
		return fmt.Errorf("gpu: uploading: %w", err)
	}
	return nil
}

// parallelCopy copies n bytes from src to dst, on several goroutines when
// n is large: one core copies some 6 GB/s, a fraction of the memory bus.
func parallelCopy(dst, src unsafe.Pointer, n int64) {
	const piece = 4 << 20
	parts := min(int64(runtime.GOMAXPROCS(0)), n/piece)
	if parts <= 1 {
		copy(unsafe.Slice((*byte)(dst), n), unsafe.Slice((*byte)(src), n))
		return
	}
	var wg sync.WaitGroup
	step := (n + parts - 1) / parts
	for lo := int64(0); lo < n; lo += step {
		m := min(step, n-lo)
		wg.Go(func() {
			copy(unsafe.Slice((*byte)(unsafe.Add(dst, lo)), m), unsafe.Slice((*byte)(unsafe.Add(src, lo)), m))
		})
	}
	wg.Wait()
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
