//go:build cuda

package gpu

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"gorgonia.org/cu"
)

// fatbin is the kernels' fat binary (SASS for the common GPUs, PTX for the
// others), made by go generate from kernels.cu.
//
//go:embed kernels.fatbin
var fatbin string

// minCC is the lowest compute capability the kernels (SASS for sm_53, PTX
// for compute_53) run on.
const minCC = 53

// Available reports whether Open would find a usable device: the driver
// answers and device 0 exists with compute capability 5.3 or more. It
// never panics and creates no context.
func Available() bool {
	n, err := cu.NumDevices()
	if err != nil || n < 1 {
		return false
	}
	dev, err := cu.GetDevice(0)
	if err != nil {
		return false
	}
	maj, mnr, err := dev.ComputeCapability()
	return err == nil && maj*10+mnr >= minCC
}

// Device is one GPU, driven by its own goroutine (see the package
// documentation). It is safe for concurrent use.
type Device struct {
	name     string
	ordinal  int
	sms      int
	totalMem int64
	budget   int64        // bytes the pool may allocate, set by setup
	kernels  kernelChoice // see openWith

	reqs      chan func(*owner)
	quit      chan struct{} // closed by Close
	done      chan struct{} // closed by the owner when it has released everything
	closeOnce sync.Once
	closeErr  error // set by the owner before done is closed
}

// Open opens device 0 with the default Options.
func Open() (*Device, error) { return OpenWith(Options{}) }

// OpenWith starts the goroutine that owns device o.Ordinal: it creates the
// CUDA context, loads the kernels and sets the memory budget. The error
// wraps ErrNoDevice when no usable device is there.
func OpenWith(o Options) (*Device, error) { return openWith(o, kernelsAll) }

// openWith is OpenWith; kernels keeps plans off some kernels, so that
// tests reach the others.
func openWith(o Options, kernels kernelChoice) (*Device, error) {
	n, err := cu.NumDevices()
	if err != nil {
		return nil, fmt.Errorf("gpu: counting devices: %w: %w", err, ErrNoDevice)
	}
	if o.Ordinal < 0 || o.Ordinal >= n {
		return nil, fmt.Errorf("gpu: device %d requested, %d present: %w", o.Ordinal, n, ErrNoDevice)
	}
	if o.Budget < 0 {
		return nil, fmt.Errorf("gpu: negative memory budget %d", o.Budget)
	}
	d := &Device{
		ordinal: o.Ordinal,
		kernels: kernels,
		reqs:    make(chan func(*owner)),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	started := make(chan error, 1)
	go d.own(o, started)
	if err := <-started; err != nil {
		return nil, err
	}
	return d, nil
}

// Name returns the device's name, such as "NVIDIA H100 80GB HBM3".
func (d *Device) Name() string { return d.name }

// Close stops the device goroutine after the work in progress, frees every
// buffer and destroys the context. Calls after Close return ErrClosed.
func (d *Device) Close() error {
	d.closeOnce.Do(func() {
		close(d.quit)
		<-d.done
	})
	return d.closeErr
}

// do runs fn on the device goroutine and returns its error. ctx is checked
// until the goroutine takes the work; after that fn owns the caller's
// buffers, so do waits for it even when ctx ends (fn checks ctx itself
// between chunks).
func (d *Device) do(ctx context.Context, fn func(*owner) error) error {
	reply := make(chan error, 1)
	select {
	case d.reqs <- func(o *owner) { reply <- fn(o) }:
	case <-ctx.Done():
		return ctx.Err()
	case <-d.quit:
		return ErrClosed
	}
	return <-reply
}

// MemInfo returns the device's free and total memory, as cuMemGetInfo
// reports them (all processes included).
func (d *Device) MemInfo() (free, total int64, err error) {
	err = d.do(context.Background(), func(*owner) error {
		free, total, err = cu.MemInfo()
		return err
	})
	return free, total, err
}

// owner is the state of the device goroutine; only that goroutine touches
// it.
type owner struct {
	ctx     cu.CUContext
	mod     cu.Module
	fns     map[string]cu.Function
	mods    map[string]cu.Module // other packages' modules, by key (see Do)
	streams [2]cu.Stream
	pool    *pool
	stage   [2]pinned // chunk staging for copies to and from Go memory
	arenas  []*arena  // pinned host memory no chain holds now
	sms     int
	// i32Steps counts the steps that ran on integer costs (for tests).
	i32Steps int
	// prodSteps and prodWSteps count those that ran jp_prod and
	// jp_prodw (for tests).
	prodSteps, prodWSteps int
}

// own is the device goroutine: it sets the device up, reports to Open
// through started, serves requests until Close, and releases everything.
// The goroutine stays locked to its thread, which exits with it, taking
// any CUDA thread state along.
func (d *Device) own(opts Options, started chan<- error) {
	runtime.LockOSThread()
	o, err := d.setup(opts)
	if err != nil {
		if o != nil {
			err = errors.Join(err, o.release())
		}
		started <- err
		return
	}
	started <- nil
	for {
		select {
		case fn := <-d.reqs:
			fn(o)
		case <-d.quit:
			d.closeErr = o.release()
			close(d.done)
			return
		}
	}
}

// setup creates the context, loads the module and makes the streams. On
// error it returns what it made so far, for release.
func (d *Device) setup(opts Options) (*owner, error) {
	dev, err := cu.GetDevice(opts.Ordinal)
	if err != nil {
		return nil, fmt.Errorf("gpu: device %d: %w: %w", opts.Ordinal, err, ErrNoDevice)
	}
	maj, mnr, err := dev.ComputeCapability()
	if err != nil {
		return nil, fmt.Errorf("gpu: device %d: compute capability: %w: %w", opts.Ordinal, err, ErrNoDevice)
	}
	if maj*10+mnr < minCC {
		return nil, fmt.Errorf("gpu: device %d has compute capability %d.%d, the kernels need 5.3: %w", opts.Ordinal, maj, mnr, ErrNoDevice)
	}
	if d.name, err = dev.Name(); err != nil {
		return nil, fmt.Errorf("gpu: device %d: name: %w", opts.Ordinal, err)
	}
	if d.sms, err = dev.Attribute(cu.MultiprocessorCount); err != nil {
		return nil, fmt.Errorf("gpu: device %d: multiprocessors: %w", opts.Ordinal, err)
	}
	if d.totalMem, err = dev.TotalMem(); err != nil {
		return nil, fmt.Errorf("gpu: device %d: memory: %w", opts.Ordinal, err)
	}
	ctx, err := dev.MakeContext(cu.SchedAuto)
	if err != nil {
		return nil, fmt.Errorf("gpu: device %d: creating a context: %w: %w", opts.Ordinal, err, ErrNoDevice)
	}
	o := &owner{ctx: ctx, fns: make(map[string]cu.Function), mods: make(map[string]cu.Module), sms: d.sms}
	if o.mod, err = cu.LoadData(fatbin); err != nil {
		return o, fmt.Errorf("gpu: loading the kernels on %s (compute capability %d.%d): %w", d.name, maj, mnr, err)
	}
	for _, name := range append(append(slices.Clone(kernelNames), i32Kernels()...), kProd, kProdW[1], kProdW[2], kProdW[3], kProdW[4]) {
		fn, err := o.mod.Function(name)
		if err != nil {
			return o, fmt.Errorf("gpu: kernel %s: %w", name, err)
		}
		o.fns[name] = fn
	}
	// Blocking streams: they wait for the synchronous uploads, which run
	// on the legacy default stream, yet overlap each other.
	for i := range o.streams {
		if o.streams[i], err = cu.MakeStream(cu.DefaultStream); err != nil {
			return o, fmt.Errorf("gpu: creating a stream: %w", err)
		}
	}
	budget := opts.Budget
	if budget == 0 {
		free, _, err := cu.MemInfo()
		if err != nil {
			return o, fmt.Errorf("gpu: reading free memory: %w", err)
		}
		budget = free / 10 * 9
	}
	o.pool = newPool(budget)
	d.budget = budget
	if err := o.pool.reserve(slabBytes(budget)); err != nil {
		return o, fmt.Errorf("gpu: %w", err)
	}
	if err := o.warmUp(); err != nil {
		return o, err
	}
	return o, nil
}

// warmUp launches every kernel once over no rows, pins the upload staging
// and a first arena slab, so that what a driver defers to first use (lazy module loading
// of each function, the pinned buffers) is paid when the device opens and
// the first solve runs as fast as later ones.
func (o *owner) warmUp() error {
	if err := o.staging(uploadSlot); err != nil {
		return err
	}
	a := &arena{}
	if _, err := a.alloc(minSlab); err != nil {
		return err
	}
	if err := o.giveArena(a); err != nil {
		return err
	}
	words := make([]int64, 64)
	words[pWords] = pHdr
	b, err := o.pool.get(int64(len(words)) * 8)
	if err != nil {
		return fmt.Errorf("gpu: warm-up: %w", err)
	}
	defer o.pool.put(b)
	if err := cu.MemcpyHtoD(b.ptr, unsafe.Pointer(&words[0]), int64(len(words))*8); err != nil {
		return fmt.Errorf("gpu: warm-up: %w", err)
	}
	plan, dst, arg := b.ptr, cu.DevicePtr(0), cu.DevicePtr(0)
	var r0, n int64
	args := []unsafe.Pointer{unsafe.Pointer(&plan), unsafe.Pointer(&dst), unsafe.Pointer(&arg), unsafe.Pointer(&r0), unsafe.Pointer(&n)}
	for name, fn := range o.fns {
		if err := fn.Launch(1, 1, 1, blockThreads, 1, 1, len(words)*8, o.streams[0], args); err != nil {
			return fmt.Errorf("gpu: warm-up launch of %s: %w", name, err)
		}
	}
	if err := o.streams[0].Synchronize(); err != nil {
		return fmt.Errorf("gpu: warm-up: %w", err)
	}
	return nil
}

// release frees every buffer, the streams, the module and the context.
func (o *owner) release() error {
	var errs []error
	if o.pool != nil {
		errs = append(errs, o.pool.close())
		if o.pool.inUse != 0 {
			errs = append(errs, fmt.Errorf("gpu: %d bytes of device buffers still in use at close", o.pool.inUse))
		}
	}
	for i := range o.stage {
		errs = append(errs, o.stage[i].free())
	}
	for _, a := range o.arenas {
		errs = append(errs, a.free())
	}
	for i := range o.streams {
		if o.streams[i] != (cu.Stream{}) {
			errs = append(errs, o.streams[i].Destroy())
		}
	}
	if o.mod != (cu.Module{}) {
		errs = append(errs, o.mod.Unload())
	}
	for _, m := range o.mods {
		errs = append(errs, m.Unload())
	}
	errs = append(errs, o.ctx.Destroy())
	return errors.Join(errs...)
}

// syncStreams waits for both streams.
func (o *owner) syncStreams() error {
	var errs []error
	for _, s := range o.streams {
		errs = append(errs, s.Synchronize())
	}
	return errors.Join(errs...)
}

// staging returns the two pinned staging buffers, grown to n bytes each.
func (o *owner) staging(n int64) error {
	for i := range o.stage {
		if o.stage[i].size >= n {
			continue
		}
		if err := o.stage[i].free(); err != nil {
			return err
		}
		var err error
		if o.stage[i], err = allocPinned(n); err != nil {
			return fmt.Errorf("gpu: %w", err)
		}
	}
	return nil
}

// takeArena returns an arena for one elimination, reusing one an earlier
// elimination gave back (its memory is not zeroed again).
func (o *owner) takeArena() *arena {
	if n := len(o.arenas); n > 0 {
		a := o.arenas[n-1]
		o.arenas = o.arenas[:n-1]
		return a
	}
	return &arena{}
}

// giveArena takes an elimination's arena back for the next one.
func (o *owner) giveArena(a *arena) error {
	err := a.reset()
	o.arenas = append(o.arenas, a)
	return err
}
