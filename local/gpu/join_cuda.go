//go:build cuda

package gpu

import (
	"context"
	"errors"
	"fmt"
	"runtime"
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
	pk, err := pack(p)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return d.do(ctx, func(o *owner) error {
		return o.joinProject(ctx, nil, p, pk, dst, argmin, false, true)
	})
}

// resident holds the tables a chain of bucket-elimination steps keeps in
// device memory, by the host slice they stand for (its first element).
type resident map[*float64]kept

// kept is a table left in device memory, and the host slice it belongs in.
type kept struct {
	buf  devBuf
	host []float64
}

// evict copies every kept table to its host slice and frees its buffer, so
// that later steps upload them again: the way out when kept tables crowd
// the device's budget.
func (o *owner) evict(res resident) error {
	var errs []error
	for key, k := range res {
		if err := cu.MemcpyDtoH(unsafe.Pointer(key), k.buf.ptr, int64(len(k.host))*8); err != nil {
			errs = append(errs, fmt.Errorf("gpu: copying a kept table back: %w", err))
		}
		o.pool.put(k.buf)
		delete(res, key)
	}
	return errors.Join(errs...)
}

// joinProject runs p. With a chain (res not nil) and keep, the output stays
// in device memory, recorded in res, for a later step to read; host says
// whether dst must be written (always, without keep). Inputs found in res
// are read there, and consumed when the step succeeds; after an error res
// is as it was.
func (o *owner) joinProject(ctx context.Context, res resident, p *local.JoinProject, pk *packed, dst []float64, argmin []int32, keep, host bool) (err error) {
	rows := int64(p.Rows())
	if int64(len(dst)) != rows {
		return fmt.Errorf("gpu: dst has %d entries, the output needs %d", len(dst), rows)
	}
	if argmin != nil && int64(len(argmin)) != rows {
		return fmt.Errorf("gpu: argmin has %d entries, the output needs %d", len(argmin), rows)
	}
	inputs := p.Inputs()
	for j, f := range inputs {
		n := 1
		for _, d := range f.Dims {
			n *= d
		}
		if len(f.Costs) != n {
			return fmt.Errorf("gpu: input %d has %d entries, its dims need %d", j, len(f.Costs), n)
		}
	}
	keep = keep && res != nil
	host = host || !keep

	var temps []devBuf
	var consumed []*float64
	defer func() {
		// Nothing may still read or write these buffers.
		if serr := o.syncStreams(); serr != nil {
			err = errors.Join(err, fmt.Errorf("gpu: %w", serr))
		}
		for _, b := range temps {
			o.pool.put(b)
		}
		if err == nil {
			for _, key := range consumed {
				o.pool.put(res[key].buf)
				delete(res, key)
			}
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
		c := inputs[j].Costs
		key := &c[0]
		a, ok := at[key]
		if !ok {
			if k, ok := res[key]; ok {
				consumed = append(consumed, key)
				a = int64(k.buf.ptr)
			} else {
				a = -1 - total
				segs = append(segs, segment{src: unsafe.Pointer(key), n: int64(len(c)) * 8, off: total})
				total = align(total + int64(len(c))*8)
			}
			at[key] = a
		}
		words[pHdr+s] = a
	}
	planOff := total
	total += int64(len(words)) * 8
	in, err := get(total)
	if err != nil {
		return fmt.Errorf("gpu: %d bytes of inputs: %w", total, err)
	}
	for s := range pk.slots {
		if a := words[pHdr+s]; a < 0 {
			words[pHdr+s] = int64(in.ptr) + (-1 - a)
		}
	}
	segs = append(segs, segment{src: unsafe.Pointer(&words[0]), n: int64(len(words)) * 8, off: planOff})
	if err := o.upload(in.ptr, total, segs); err != nil {
		return err
	}
	planPtr := in.ptr + cu.DevicePtr(planOff)

	// Output: the whole table in device memory when it is kept (and
	// fits), else two chunk slots that alternate.
	var out devBuf
	if keep {
		if out, err = o.pool.get(rows * 8); err != nil {
			if !errors.Is(err, errBudget) && !errors.Is(err, local.ErrTooLarge) {
				return fmt.Errorf("gpu: output: %w", err)
			}
			keep, host = false, true
		} else {
			defer func() {
				if err != nil {
					o.pool.put(out)
				} else {
					res[&dst[0]] = kept{out, dst}
				}
			}()
		}
	}
	var rowBytes int64
	if !keep {
		rowBytes += 8
	}
	if argmin != nil {
		rowBytes += 4
	}
	chunk := min(rows, maxChunkRows)
	if rowBytes > 0 {
		// Size classes round up to a power of two: keep room for that.
		chunk = min(chunk, o.pool.room()/(4*rowBytes))
	}
	if chunk < 1 {
		return fmt.Errorf("gpu: no device memory left for the output after %d bytes of inputs: %w", o.pool.inUse, errBudget)
	}
	var slotDst, slotArg [2]devBuf
	for i := range 2 {
		if !keep {
			if slotDst[i], err = get(chunk * 8); err != nil {
				return fmt.Errorf("gpu: output chunk: %w", err)
			}
		}
		if argmin != nil {
			if slotArg[i], err = get(chunk * 4); err != nil {
				return fmt.Errorf("gpu: argmin chunk: %w", err)
			}
		}
	}
	var stageDst int64 // bytes of dst in a staging slot
	if host {
		stageDst = chunk * 8
	}
	if stageBytes := stageDst + chunk*4*boolInt(argmin != nil); stageBytes > 0 {
		if err := o.staging(stageBytes); err != nil {
			return err
		}
	}

	// The pipeline: chunk i runs on stream i%2 and is copied to staging
	// slot i%2 on the same stream; the host empties a slot (and so lets
	// it be reused) two chunks later, while the device computes.
	nch := (rows + chunk - 1) / chunk
	finish := func(i int64) error {
		s := i % 2
		if err := o.streams[s].Synchronize(); err != nil {
			return fmt.Errorf("gpu: chunk %d: %w", i, err)
		}
		r0 := i * chunk
		n := min(chunk, rows-r0)
		if host {
			parallelCopy(unsafe.Pointer(&dst[r0]), o.stage[s].p, n*8)
		}
		if argmin != nil {
			parallelCopy(unsafe.Pointer(&argmin[r0]), unsafe.Add(o.stage[s].p, stageDst), n*4)
		}
		return nil
	}
	fn := o.fns[pk.kernel]
	shared := len(words) * 8
	for i := range nch {
		if i >= 2 {
			if err := finish(i - 2); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		s := i % 2
		r0 := i * chunk
		n := min(chunk, rows-r0)
		dptr := slotDst[s].ptr
		if keep {
			dptr = out.ptr + cu.DevicePtr(r0*8)
		}
		aptr := slotArg[s].ptr // 0 without argmin: the kernel skips it
		plan := planPtr
		blocks := int(min((n+blockThreads-1)/blockThreads, int64(o.sms*blocksPerSM)))
		args := []unsafe.Pointer{unsafe.Pointer(&plan), unsafe.Pointer(&dptr), unsafe.Pointer(&aptr), unsafe.Pointer(&r0), unsafe.Pointer(&n)}
		if err := fn.Launch(blocks, 1, 1, blockThreads, 1, 1, shared, o.streams[s], args); err != nil {
			return fmt.Errorf("gpu: launching %s: %w", pk.kernel, err)
		}
		if host {
			if err := cu.MemcpyDtoHAsync(o.stage[s].p, dptr, n*8, o.streams[s]); err != nil {
				return fmt.Errorf("gpu: copying chunk %d: %w", i, err)
			}
		}
		if argmin != nil {
			if err := cu.MemcpyDtoHAsync(unsafe.Add(o.stage[s].p, stageDst), aptr, n*4, o.streams[s]); err != nil {
				return fmt.Errorf("gpu: copying chunk %d's argmin: %w", i, err)
			}
		}
	}
	for i := max(0, nch-2); i < nch; i++ {
		if err := finish(i); err != nil {
			return err
		}
	}
	return nil
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
