package solvefile

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/local"
)

// gcSettings reads the collector's target and soft memory limit through
// runtime/metrics, which (unlike a SetGCPercent/SetMemoryLimit round trip)
// changes nothing that GC's cleanup might be changing at once.
func gcSettings() (pct int, limit int64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64()), int64(s[1].Value.Uint64())
}

// offGOGC is how runtime/metrics reports GOGC=off (SetGCPercent(-1)).
const offGOGC = -1

// waitGC collects until the collector's settings are want (GC's
// cleanup runs on its own goroutine after the cycle that freed its
// sentinel) or gives up after a minute; it returns what it last read.
func waitGC(want int) (pct int, limit int64) {
	deadline := time.Now().Add(time.Minute)
	for {
		runtime.GC()
		pct, limit = gcSettings()
		if pct == want || time.Now().After(deadline) {
			return pct, limit
		}
		time.Sleep(time.Millisecond)
	}
}

// TestSolveGC: a solve starts with the collector off under a soft limit
// of firstGC; after its first collection it runs at gcPercent
// under twice the --memory budget (never below firstGC); restore
// puts the previous settings back, also when it comes before the first
// collection (the cleanup then changes nothing); GOGC or GOMEMLIMIT in the
// environment leave everything alone.
func TestSolveGC(t *testing.T) {
	for _, tc := range []struct {
		name, env, val string
		memoryMiB      int64
		firstGC        bool  // collect before restoring
		wantLimit      int64 // after the first collection; 0: unchanged settings throughout
	}{
		{name: "default budget", firstGC: true, wantLimit: 2 * local.DefaultMemory()},
		{name: "--memory 1024", memoryMiB: 1024, firstGC: true, wantLimit: 2 << 30},
		{name: "--memory 1 (limit floored)", memoryMiB: 1, firstGC: true, wantLimit: firstGC},
		{name: "restored before any collection", memoryMiB: 1024},
		{name: "GOGC set", env: "GOGC", val: "100", firstGC: true},
		{name: "GOMEMLIMIT set", env: "GOMEMLIMIT", val: "1GiB", firstGC: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOGC", "")
			t.Setenv("GOMEMLIMIT", "")
			if tc.env != "" {
				t.Setenv(tc.env, tc.val)
			}
			pct, lim := gcSettings()
			restore := GC(tc.memoryMiB)
			startPct, startLim := gcSettings()
			changes := tc.env == ""
			if changes && (startPct != offGOGC || startLim != firstGC) {
				t.Errorf("at the start: GOGC %d, limit %d; want off (%d) and %d", startPct, startLim, offGOGC, firstGC)
			}
			if !changes && (startPct != pct || startLim != lim) {
				t.Errorf("with %s set: GOGC %d, limit %d; want them unchanged (%d, %d)", tc.env, startPct, startLim, pct, lim)
			}
			if tc.firstGC && changes {
				if gotPct, gotLim := waitGC(gcPercent); gotPct != gcPercent || gotLim != tc.wantLimit {
					t.Errorf("after the first collection: GOGC %d, limit %d; want %d and %d", gotPct, gotLim, gcPercent, tc.wantLimit)
				}
			}
			restore()
			// Collect again: a cleanup still pending (restore came first)
			// must leave the restored settings alone.
			runtime.GC()
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
			if after, afterLim := gcSettings(); after != pct || afterLim != lim {
				t.Errorf("after: GOGC %d, limit %d; want %d, %d back", after, afterLim, pct, lim)
			}
		})
	}
}

// TestSolveGCOverlap: solves that overlap in one process share the
// collector's settings until the last of them ends, in whichever order
// they end, under the larger of their limits; the settings from before the
// first come back at the end.
func TestSolveGCOverlap(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	for _, tc := range []struct {
		name        string
		firstEnds   bool // the first solve ends before the second
		collect     bool // the first collection comes while both run
		wantBetween int  // GOGC after one of them has ended
	}{
		{name: "first ends first", firstEnds: true, wantBetween: offGOGC},
		{name: "second ends first", wantBetween: offGOGC},
		{name: "first ends first, after a collection", firstEnds: true, collect: true, wantBetween: gcPercent},
		{name: "second ends first, after a collection", collect: true, wantBetween: gcPercent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pct, lim := gcSettings()
			end1 := GC(1024)
			end2 := GC(2048)
			if tc.collect {
				if gotPct, gotLim := waitGC(gcPercent); gotPct != gcPercent || gotLim != 4<<30 {
					t.Errorf("after the first collection: GOGC %d, limit %d; want %d and the larger limit %d", gotPct, gotLim, gcPercent, int64(4<<30))
				}
			}
			if tc.firstEnds {
				end1()
				end1() // a second call changes nothing
			} else {
				end2()
			}
			if got, _ := gcSettings(); got != tc.wantBetween {
				t.Errorf("with one solve still running: GOGC %d; want %d", got, tc.wantBetween)
			}
			if tc.firstEnds {
				end2()
			} else {
				end1()
			}
			runtime.GC()
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
			if after, afterLim := gcSettings(); after != pct || afterLim != lim {
				t.Errorf("after both: GOGC %d, limit %d; want %d, %d back", after, afterLim, pct, lim)
			}
		})
	}
}
