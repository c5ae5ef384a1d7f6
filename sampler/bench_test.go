package sampler

import (
	"context"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/internal/cputime"
	"github.com/hearth-dcop/hearth/internal/samplertest"
	"github.com/hearth-dcop/hearth/mva"
)

// evalRate is the baseline: full evaluations per CPU-second of uniformly
// random interior assignments with lp.Eval, the work of the naive
// sampler, measured once in the benchmark's own process.
var evalRate = sync.OnceValue(func() float64 {
	lp := samplertest.MeetingAgent(1, 4, 8, false)
	r := rand.New(rand.NewPCG(1, 1))
	a := make([]int, len(lp.Vars))
	const n = 200_000
	sink := 0.0
	cpu0 := cputime.Used()
	for range n {
		for k := range a {
			a[k] = r.IntN(lp.Domains[k])
		}
		sink += lp.Eval(a)
	}
	el := cputime.Used() - cpu0
	if sink < 0 || el <= 0 {
		return 0
	}
	return n / el.Seconds()
})

// BenchmarkTable fills the 4096-row MVA table of a meeting-scheduling
// agent with each sampler (R = 1 run of T = 10 trials per row), on one
// worker and on every core. It reports samples (trials) per second of
// wall time, per CPU-second ("samples/s/core"), and that per-core rate
// over the baseline's full evaluations per CPU-second ("x-eval").
func BenchmarkTable(b *testing.B) {
	lp := samplertest.MeetingAgent(1, 4, 8, false)
	rows, _ := lp.Rows()
	ctx := context.Background()
	for _, k := range kinds {
		for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(k.name+"/workers="+strconv.Itoa(workers), func(b *testing.B) {
				o := Options{Runs: 1, Trials: 10, Seed: 1, Workers: workers}
				s, err := k.make(lp, o)
				if err != nil {
					b.Fatal(err)
				}
				base := evalRate()
				t, _ := mva.NewTable(lp)
				cpu0, wall0 := cputime.Used(), time.Now()
				for b.Loop() {
					clear(t.Known)
					if err := t.Fill(ctx, s); err != nil {
						b.Fatal(err)
					}
				}
				samples := float64(b.N) * float64(rows*o.Runs*o.Trials)
				b.ReportMetric(samples/time.Since(wall0).Seconds(), "samples/s")
				if cpu := (cputime.Used() - cpu0).Seconds(); cpu > 0 && base > 0 {
					b.ReportMetric(samples/cpu, "samples/s/core")
					b.ReportMetric(samples/cpu/base, "x-eval")
				}
			})
		}
	}
}
