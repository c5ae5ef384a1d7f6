//go:build cuda

package gpu

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/internal/samplertest"
	lgpu "github.com/hearth-dcop/hearth/local/gpu"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/sampler"
)

// TestNoLeak makes 3000 calls — whole tables, partial tables and single
// rows, of every kind, on agents of several shapes — and requires the
// device's free memory, the pool's bytes and the goroutine count to come
// back to where they were after a warm-up. A leak of one buffer per call
// would show as 12 MB at least (the pool's smallest buffer is 4 KiB).
func TestNoLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("3000 calls")
	}
	d := device(t)
	ctx := context.Background()
	lps := append(randomLocals(3), samplertest.MeetingAgent(1, 2, 4, false), samplertest.HardRows(t))
	type solver interface {
		mva.LocalSolver
		mva.TableSolver
	}
	var ss []solver
	var ls []*mva.LocalProblem
	for i, lp := range lps {
		for k := range kinds {
			o := kinds[k].opts(sampler.Options{Seed: uint64(i), Runs: 3, Trials: 5})
			var s solver
			var err error
			if k == 0 {
				s, err = NewGibbs(lp, d, o)
			} else {
				s, err = NewMH(lp, d, o)
			}
			if err != nil {
				t.Fatal(err)
			}
			ss = append(ss, s)
			ls = append(ls, lp)
		}
	}
	call := func(i int) error {
		s, lp := ss[i%len(ss)], ls[i%len(ss)]
		switch (i / len(ss)) % 3 { // every solver sees every call
		case 0:
			tab, _ := mva.NewTable(lp)
			return s.SolveTable(ctx, tab)
		case 1:
			tab, _ := mva.NewTable(lp)
			tab.Known[0] = true
			return s.SolveTable(ctx, tab)
		}
		b := make([]int, lp.NB)
		_, err := s.SolveRow(ctx, b, make([]int, lp.NumInterior()))
		return err
	}
	poolBytes := func() (inUse, idle int64) {
		_ = d.Do(ctx, func(w *lgpu.Owner) error {
			inUse, idle = w.PoolBytes()
			return nil
		})
		return inUse, idle
	}
	for i := range 3 * len(ss) {
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
	const calls = 3000
	for i := range calls {
		if err := call(i); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	free1, _, err := d.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	inUse1, idle1 := poolBytes()
	t.Logf("%d calls: free device memory %d -> %d bytes; pool idle %d -> %d, in use %d", calls, free0, free1, idle0, idle1, inUse1)
	const slack = 2 << 20
	if free1 < free0-slack {
		t.Errorf("%d calls lost %d bytes of device memory", calls, free0-free1)
	}
	if inUse1 != 0 || idle1 != idle0 {
		t.Errorf("pool: %d bytes in use (want 0), %d idle (was %d)", inUse1, idle1, idle0)
	}
	for i := 0; runtime.NumGoroutine() > g0 && i < 100; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > g0 {
		t.Errorf("%d goroutines, %d before", g, g0)
	}
}
