package energy_test

import (
	"context"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/devices/energy"
	"github.com/hearth-dcop/hearth/devices/energy/internal/homegen"
	"github.com/hearth-dcop/hearth/devices/energy/internal/milp"
	"github.com/hearth-dcop/hearth/internal/cbc"
)

// benchHome is issue 17's benchmark home: 96 quarter-hour slots, PV, one
// battery and an EV (homegen seed 3 of the Day96 shape, with the extra
// batteries dropped).
func benchHome() *energy.Home {
	h := homegen.Home(3, homegen.Day96)
	h.Storage = []energy.Storage{h.Storage[0], h.Storage[len(h.Storage)-1]}
	h.Grid.DemandCharge = 0
	return h
}

// BenchmarkPlan96 plans the benchmark home with hearth and with CBC (the
// MILP of internal/milp, written, solved and read back) in the same run:
// compare the two as a ratio, e.g.
//
//	go test ./devices/energy -run XXX -bench Plan96 -count 5 -cpu 1
//
// Besides ns/op (wall time, stretched by other load on a shared machine)
// each reports cpu-ms/op: the CPU time of the process and, for CBC, of
// the solver's process.
func BenchmarkPlan96(b *testing.B) {
	h := benchHome()
	b.Run("hearth", func(b *testing.B) {
		defer reportCPU(b, cpuUsed())
		for range b.N {
			if _, err := energy.Solve(context.Background(), h, energy.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cbc", func(b *testing.B) {
		cbc.Require(b)
		dir := b.TempDir()
		defer reportCPU(b, cpuUsed())
		for range b.N {
			if _, err := milp.Solve(context.Background(), h, dir); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// reportCPU reports the CPU time per operation since start.
func reportCPU(b *testing.B, start time.Duration) {
	if used := cpuUsed() - start; start > 0 && b.N > 0 {
		b.ReportMetric(float64(used.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
}
