//go:build cuda

package gpu

import (
	"context"
	"fmt"

	"gorgonia.org/cu"
)

// Do runs fn on the device goroutine and returns its error. It is the hook
// through which other packages' kernels (sampler/gpu's samplers) run on this
// device: they share its one context, its streams and its buffer pool, and
// so its memory budget, instead of opening a second context on the same
// GPU. fn makes its CUDA calls directly (the goroutine's thread holds the
// context) and must not keep the Owner, or anything from it, after it
// returns. ctx is checked until the goroutine takes the work, as for
// JoinProject; fn checks it itself after that. A closed Device returns
// ErrClosed.
func (d *Device) Do(ctx context.Context, fn func(*Owner) error) error {
	return d.do(ctx, func(o *owner) error { return fn(&Owner{o: o}) })
}

// Owner is the device goroutine's state, lent to a Do callback.
type Owner struct{ o *owner }

// Function returns kernel name of the PTX module registered under key,
// loading the module (JIT-compiling it for the device) on first use. The
// module stays loaded until the Device is closed; key names it, so that a
// package loads its own PTX once per device.
func (w *Owner) Function(key, ptx, name string) (cu.Function, error) {
	fk := key + "\x00" + name
	if fn, ok := w.o.fns[fk]; ok {
		return fn, nil
	}
	mod, ok := w.o.mods[key]
	if !ok {
		var err error
		if mod, err = cu.LoadData(ptx); err != nil {
			return cu.Function{}, fmt.Errorf("gpu: loading module %s: %w", key, err)
		}
		w.o.mods[key] = mod
	}
	fn, err := mod.Function(name)
	if err != nil {
		return cu.Function{}, fmt.Errorf("gpu: module %s: kernel %s: %w", key, name, err)
	}
	w.o.fns[fk] = fn
	return fn, nil
}

// Buffer is device memory from the Device's pool.
type Buffer struct{ b devBuf }

// Ptr returns the buffer's device address.
func (b Buffer) Ptr() cu.DevicePtr { return b.b.ptr }

// Size returns the buffer's size in bytes: at least what was asked for.
func (b Buffer) Size() int64 { return b.b.size }

// Alloc returns a device buffer of at least n bytes from the pool, which
// recycles buffers across calls. The error wraps local.ErrTooLarge when
// the Device's memory budget or the device itself is exhausted.
func (w *Owner) Alloc(n int64) (Buffer, error) {
	b, err := w.o.pool.get(n)
	if err != nil {
		return Buffer{}, fmt.Errorf("gpu: %w", err)
	}
	return Buffer{b}, nil
}

// Free hands b back to the pool; the zero Buffer is ignored. Work queued
// on a stream that still uses b must be finished (Stream().Synchronize)
// before: the next Alloc may hand it out again.
func (w *Owner) Free(b Buffer) { w.o.pool.put(b.b) }

// Stream returns the stream Do callbacks launch on. It is a blocking
// stream: synchronous copies on the legacy default stream wait for it.
func (w *Owner) Stream() cu.Stream { return w.o.streams[0] }

// Multiprocessors returns the device's multiprocessor count.
func (w *Owner) Multiprocessors() int { return w.o.sms }

// PoolBytes returns the bytes of pool buffers handed out and idle, for
// leak tests.
func (w *Owner) PoolBytes() (inUse, idle int64) { return w.o.pool.inUse, w.o.pool.idle }
