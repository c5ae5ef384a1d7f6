package sampler

import (
	"context"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/mva"
)

// meetingAgent builds an agent like those of the DMCMC meeting-scheduling
// experiments (thesis §5.3): 10 interior variables with 12 values (time
// slots), binary functions on 70% of their pairs and a unary preference
// each, costs in [1, 1000]; plus 4 boundary variables of 8 values, each
// tied to two interior variables and to another agent, so that the MVA
// table has 8⁴ = 4096 rows. It returns agent 0's local problem.
func meetingAgent(seed uint64) *mva.LocalProblem {
	r := rand.New(rand.NewPCG(seed, 3))
	const nb, ni, db, di = 4, 10, 8, 12
	p := &mva.Problem{Name: "meeting-like", Agents: []mva.Agent{{Name: "a0"}, {Name: "a1"}}}
	addVar := func(d, agent int) int {
		dom := make([]string, d)
		for i := range dom {
			dom[i] = strconv.Itoa(i)
		}
		p.Variables = append(p.Variables, mva.Variable{Name: "x" + strconv.Itoa(len(p.Variables)), Domain: dom, Agent: agent})
		return len(p.Variables) - 1
	}
	table := func(n int) []float64 {
		c := make([]float64, n)
		for i := range c {
			c[i] = float64(1 + r.IntN(1000))
		}
		return c
	}
	var b, in []int
	for range nb {
		b = append(b, addVar(db, 0))
	}
	for range ni {
		in = append(in, addVar(di, 0))
	}
	for i, u := range in {
		p.Functions = append(p.Functions, mva.Function{Scope: []int{u}, Costs: table(di)})
		for _, v := range in[i+1:] {
			if r.Float64() < 0.7 {
				p.Functions = append(p.Functions, mva.Function{Scope: []int{u, v}, Costs: table(di * di)})
			}
		}
	}
	for k, v := range b {
		for _, u := range []int{in[(2*k)%ni], in[(2*k+5)%ni]} {
			p.Functions = append(p.Functions, mva.Function{Scope: []int{v, u}, Costs: table(db * di)})
		}
		y := addVar(db, 1)
		p.Functions = append(p.Functions, mva.Function{Scope: []int{v, y}, Costs: table(db * db)})
	}
	d := mva.Decompose(p)
	return mva.NewLocalProblem(p, &d.Subs[0])
}

// evalRate is the baseline: full evaluations per CPU-second of uniformly
// random interior assignments with lp.Eval, the work of the naive
// sampler, measured once in the benchmark's own process.
var evalRate = sync.OnceValue(func() float64 {
	lp := meetingAgent(1)
	r := rand.New(rand.NewPCG(1, 1))
	a := make([]int, len(lp.Vars))
	const n = 200_000
	sink := 0.0
	cpu0 := cpuTime()
	for range n {
		for k := range a {
			a[k] = r.IntN(lp.Domains[k])
		}
		sink += lp.Eval(a)
	}
	el := cpuTime() - cpu0
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
	lp := meetingAgent(1)
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
				cpu0, wall0 := cpuTime(), time.Now()
				for b.Loop() {
					clear(t.Known)
					if err := t.Fill(ctx, s); err != nil {
						b.Fatal(err)
					}
				}
				samples := float64(b.N) * float64(rows*o.Runs*o.Trials)
				b.ReportMetric(samples/time.Since(wall0).Seconds(), "samples/s")
				if cpu := (cpuTime() - cpu0).Seconds(); cpu > 0 && base > 0 {
					b.ReportMetric(samples/cpu, "samples/s/core")
					b.ReportMetric(samples/cpu/base, "x-eval")
				}
			})
		}
	}
}
