package solvefile

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/hearth-dcop/hearth/local"
)

// gcPercent is the collector's target for a one-shot solve of an
// instance file once its heap has passed firstGC: the heap may grow
// to five times its live data between collections. A solve's live data is
// small and short-lived next to what its search allocates, so at Go's
// default (100) the collector costs 5–25% of the CPU time of a solve of
// 10–200 ms (measured against toulbar2 on the bench files: README, "Exact
// search"); at 400 most of it goes.
const gcPercent = 400

// firstGC is the Go-managed memory (heap, stacks, runtime metadata:
// what runtime/debug.SetMemoryLimit counts) a one-shot solve reaches
// before its first collection. At GOGC=400 Go's first collection comes
// at a 16 MiB heap, which the setup of a mid-sized solve passes on its
// own (EDAC's tables on gen_grid60_d2, 14 MiB): that cycle marks data
// that is all still live and frees nothing, and its background workers
// run on the idle core, CPU time that counts against the process (3–6%
// of gen_grid60_d2, gen_fap80 and gen_circuit500, each of which does
// exactly one collection; docs/DESIGN.md, "Process start-up"). Every
// bench file that finishes in under a second stays below 34 MiB of
// resident memory with no collection at all, so 64 MiB spares them the
// cycle while a large solve still gets collected early, long before its
// budget.
const firstGC = 64 << 20

// GC sets the collector for a one-shot solve whose exact solvers
// have budget memoryMiB (--memory; 0: local.DefaultMemory, a quarter of
// physical memory) and returns what puts the previous settings back (the
// tests run solves in process).
//
// Until the first collection the collector is off (GOGC=off) under a soft
// memory limit of firstGC: a short solve never collects, and one
// that allocates more is collected when it reaches the limit, as
// GOMEMLIMIT does. A cleanup on an object that only that first cycle
// frees then switches to gcPercent under a soft limit of twice the
// budget — the budget bounds the solvers' tables, the second half leaves
// room for the instance, its reformulation and GOGC=400's garbage — so
// that near it the collector runs as often as it must instead of the
// heap growing past what the machine holds. The limit is never below
// firstGC: one under what a small solve holds anyway (--memory 1)
// would only make the collector run back to back. GOGC or GOMEMLIMIT in
// the environment win: then nothing is changed.
//
// The settings are the process's: solves that overlap (in process, as
// tests may run them) share one period, from the first one's start to
// the last one's end, under the largest of their limits, and the last
// to end puts back what the first found.
func GC(memoryMiB int64) (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	budget := memoryMiB << 20
	if memoryMiB <= 0 {
		budget = local.DefaultMemory()
	}
	limit := max(2*budget, firstGC)
	st := &gcState
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.active == 0 {
		st.period++
		st.pct = debug.SetGCPercent(-1)
		st.lim = debug.SetMemoryLimit(firstGC)
		st.limit, st.switched = limit, false
		// The sentinel holds a pointer so that it is a heap object of
		// its own (the tiny allocator batches small pointer-free ones,
		// and a batch may outlive its first collection); nothing keeps
		// it, so the first cycle frees it and the cleanup runs just
		// after.
		sentinel := &struct{ _ *int }{}
		runtime.AddCleanup(sentinel, afterFirstGC, st.period)
	} else if limit > st.limit {
		st.limit = limit
		if st.switched {
			debug.SetMemoryLimit(limit)
		}
	}
	st.active++
	var once sync.Once
	return func() { once.Do(endGC) }
}

// gcState is GC's state: the solves running, the settings from
// before the first of them, and whether their first collection has come.
// period counts the periods with solves running, so that a cleanup that
// comes late (after the period's end, at a test's next collection)
// changes nothing.
var gcState struct {
	mu       sync.Mutex
	active   int   // solves running
	period   int   // periods so far, the current one included
	pct      int   // GOGC before the period
	lim      int64 // soft limit before the period
	limit    int64 // soft limit after the first collection
	switched bool  // the first collection of the period has come
}

// afterFirstGC runs once the first collection of a period of solves is
// done: the collector's target and limit for the rest of it.
func afterFirstGC(period int) {
	st := &gcState
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.active == 0 || period != st.period {
		return
	}
	st.switched = true
	debug.SetGCPercent(gcPercent)
	debug.SetMemoryLimit(st.limit)
}

// endGC ends one solve; the last of a period puts the settings from
// before it back.
func endGC() {
	st := &gcState
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.active--; st.active > 0 {
		return
	}
	debug.SetGCPercent(st.pct)
	debug.SetMemoryLimit(st.lim)
}
