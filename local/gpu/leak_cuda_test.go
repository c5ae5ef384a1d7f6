//go:build cuda

package gpu

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/local"
)

// TestNoLeak runs 5000 small join-projects (and BE-style chains that keep
// tables on the device) and requires the device's free memory, the pool's
// bytes and the goroutine count to come back to where they were after a
// warm-up; then it opens and closes devices and requires the same of
// them. A leak of one buffer per call would show as 20 MB at least.
func TestNoLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("5000 calls")
	}
	ctx := context.Background()
	d := openDevice(t, Options{})
	const shapes = 40
	plans := make([]*local.JoinProject, shapes)
	for i := range plans {
		r := rand.New(rand.NewPCG(uint64(i), 99))
		s := randomSet(r, 2+r.IntN(6), 1, 1+r.IntN(4), r.IntN(3), 1+r.IntN(5), 0.1)
		p, err := local.NewJoinProject(s.inputs, s.elim, s.out)
		if err != nil {
			t.Fatal(err)
		}
		plans[i] = p
	}
	// kept runs a two-step chain: step 0 kept on the device and read
	// by step 1.
	c := newChain(d, -1, 0)
	f0, _ := local.NewFactor([]int{0, 1, 2}, []int{3, 4, 5})
	for i := range f0.Costs {
		f0.Costs[i] = float64(i % 7)
	}
	p0, err := local.NewJoinProject([]*local.Factor{f0}, []int{2}, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	o0 := p0.Output(make([]float64, p0.Rows()))
	p1, err := local.NewJoinProject([]*local.Factor{o0}, []int{1}, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	kept := func() error {
		if !c.Offload(p0) || !c.Offload(p1) {
			return fmt.Errorf("chain refused the plans")
		}
		if _, err := c.Step(ctx, p0, o0, true, false, local.ArgminAny); err != nil {
			return err
		}
		if len(c.res) != 1 {
			return fmt.Errorf("%d tables kept, want 1", len(c.res))
		}
		if _, err := c.Step(ctx, p1, p1.Output(nil), false, true, local.ArgminHost); err != nil {
			return err
		}
		if len(c.res) != 0 {
			return fmt.Errorf("%d tables still kept after their reader", len(c.res))
		}
		return c.end()
	}
	call := func(i int) error {
		if i%10 == 9 {
			return kept()
		}
		p := plans[i%shapes]
		return d.JoinProject(ctx, p, make([]float64, p.Rows()), make([]int32, p.Rows()))
	}
	poolBytes := func() (inUse, idle int64) {
		_ = d.do(ctx, func(o *owner) error {
			inUse, idle = o.pool.inUse, o.pool.idle
			return nil
		})
		return inUse, idle
	}
	for i := range 2 * shapes {
		if err := call(i); err != nil {
			t.Fatalf("warm-up call %d: %v", i, err)
		}
	}
	free0, _, err := d.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	_, idle0 := poolBytes()
	g0 := runtime.NumGoroutine()
	for i := range 5000 {
		if err := call(i); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	free1, _, err := d.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	inUse1, idle1 := poolBytes()
	t.Logf("free device memory %d -> %d bytes; pool idle %d -> %d, in use %d", free0, free1, idle0, idle1, inUse1)
	const slack = 2 << 20 // driver-internal allocations, not ours
	if free1 < free0-slack {
		t.Errorf("5000 calls lost %d bytes of device memory", free0-free1)
	}
	if inUse1 != 0 || idle1 != idle0 {
		t.Errorf("pool: %d bytes in use (want 0), %d idle (was %d)", inUse1, idle1, idle0)
	}

	// Open and close other devices: each returns its context's memory.
	for range 10 {
		d2, err := Open()
		if err != nil {
			t.Fatal(err)
		}
		p := plans[1]
		if err := d2.JoinProject(ctx, p, make([]float64, p.Rows()), nil); err != nil {
			t.Fatal(err)
		}
		if err := d2.Close(); err != nil {
			t.Fatal(err)
		}
	}
	free2, _, err := d.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("free device memory after 10 open/close: %d bytes", free2)
	if free2 < free0-slack {
		t.Errorf("10 open/close cycles lost %d bytes of device memory", free0-free2)
	}
	// The closed devices' goroutines are gone (give them a moment).
	for i := 0; runtime.NumGoroutine() > g0 && i < 100; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > g0 {
		t.Errorf("%d goroutines, %d before", g, g0)
	}
}
