package gpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/hearth-dcop/hearth/internal/samplertest"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/sampler"
)

// TestEmulatorMatchesCPU runs the kernels' algorithm, transcribed in Go
// over the packed plan (emulate_test.go), against package sampler on
// random problems (whole and fractional costs, Hard entries), the
// hard-rows agent (repair on and off) and a meeting-like agent, for every
// kind and several group sizes: the tables must be equal bit for bit, and
// so must the checks. This pins the plan layout and the algorithm the
// device tests then hold the kernels to.
func TestEmulatorMatchesCPU(t *testing.T) {
	type tcase struct {
		name string
		lp   *mva.LocalProblem
		o    sampler.Options
	}
	var cases []tcase
	for i, lp := range randomLocals(6) {
		cases = append(cases, tcase{fmt.Sprintf("random %d", i), lp, sampler.Options{Seed: uint64(i), Runs: 3, Trials: 20}})
	}
	for _, repair := range []int{0, -1} {
		cases = append(cases, tcase{fmt.Sprintf("hard rows repair %d", repair), samplertest.HardRows(t),
			sampler.Options{Seed: 3, Runs: 4, Trials: 60, RepairSweeps: repair}})
	}
	cases = append(cases,
		tcase{"meeting", samplertest.MeetingAgent(1, 1, 4, false), sampler.Options{Seed: 9, Runs: 2, Trials: 10}},
		tcase{"meeting fractional τ=30", samplertest.MeetingAgent(2, 1, 3, true), sampler.Options{Seed: 9, Runs: 2, Trials: 10, Temperature: 30}},
		tcase{"dist", samplertest.DistProblem(t), sampler.Options{Seed: 4, Runs: 3, Trials: 50, StdDev: 0.7}},
	)
	for _, c := range cases {
		for k := range kinds {
			o := withDefaults(t, c.lp, k, kinds[k].opts(c.o))
			want, checks := cpuTable(t, k, c.lp, o)
			for _, g := range []int{1, 4, 32, defaultLanes(c.lp, kinds[k].kind)} {
				pl, err := newPlan(c.lp, o, kinds[k].kind, g)
				if err != nil {
					t.Fatal(err)
				}
				em := newEmulator(pl)
				got := em.table(c.lp)
				if r := sameTable(got, want); r >= 0 {
					t.Fatalf("%s %s G=%d row %d: emulator %v %v, CPU %v %v", c.name, kinds[k].name, g, r,
						got.Costs[r], got.Interior(r), want.Costs[r], want.Interior(r))
				}
				if em.checks != checks {
					t.Fatalf("%s %s G=%d: %d checks, CPU %d", c.name, kinds[k].name, g, em.checks, checks)
				}
			}
		}
	}
}

// TestExpTranscription: goExpAMD64 is math.Exp bit for bit on this host
// when it is amd64 (the variant detectExp picks), on the probes and on a
// million random arguments over the samplers' range.
func TestExpTranscription(t *testing.T) {
	mode := detectExp()
	if runtime.GOARCH != "amd64" {
		if mode != expDevice {
			t.Fatalf("%s: detectExp = %d, want expDevice", runtime.GOARCH, mode)
		}
		t.Skipf("%s: math.Exp is not the amd64 assembly", runtime.GOARCH)
	}
	if mode == expDevice {
		t.Fatal("amd64: neither transcription matches math.Exp")
	}
	fma := mode == expFMA
	r := rand.New(rand.NewPCG(1, 2))
	xs := expProbes()
	for range 1_000_000 {
		xs = append(xs, -760+780*r.Float64())
	}
	for _, x := range xs {
		a, b := goExpAMD64(x, fma), math.Exp(x)
		if math.Float64bits(a) != math.Float64bits(b) && !(math.IsNaN(a) && math.IsNaN(b)) {
			t.Fatalf("exp(%v): transcription %v, math.Exp %v", x, a, b)
		}
	}
	// The two paths differ somewhere, or detection would mean nothing.
	diff := 0
	for _, x := range xs[:100_000] {
		if goExpAMD64(x, true) != goExpAMD64(x, false) {
			diff++
		}
	}
	if diff == 0 {
		t.Fatal("the FMA and SSE2 paths never differ: the probe cannot tell them apart")
	}
	t.Logf("mode %d; FMA and SSE2 paths differ on %d of 100000 arguments", mode, diff)
}

func TestExactSums(t *testing.T) {
	lp := func(costs ...[]float64) *mva.LocalProblem {
		l := &mva.LocalProblem{}
		for _, c := range costs {
			l.Funcs = append(l.Funcs, mva.LocalFunction{Costs: c})
		}
		return l
	}
	cases := []struct {
		name  string
		lp    *mva.LocalProblem
		exact bool
	}{
		{"whole", lp([]float64{1, 2, 1000}, []float64{0, mva.Hard, 7}), true},
		{"halves", lp([]float64{0.5, 2.25}, []float64{-3.125}), true},
		{"tenths", lp([]float64{0.1, 2}), false},
		{"2^52 twice", lp([]float64{1 << 52}, []float64{1 << 52}), true},
		{"2^53 twice", lp([]float64{1 << 53}, []float64{1 << 53}), false},
		{"minus infinity", lp([]float64{math.Inf(-1), 1}), false},
		{"NaN", lp([]float64{math.NaN()}), false},
		{"subnormal", lp([]float64{math.SmallestNonzeroFloat64}), true},
		{"subnormal and one", lp([]float64{math.SmallestNonzeroFloat64, 1}), false},
	}
	for _, c := range cases {
		if got := exactSums(c.lp); got != c.exact {
			t.Errorf("%s: exactSums = %v, want %v", c.name, got, c.exact)
		}
	}
	if !floatTables(lp([]float64{1, 1e6, mva.Hard, 0.5})) || floatTables(lp([]float64{0.1})) || floatTables(lp([]float64{1 << 25, 1<<25 + 1})) {
		t.Error("floatTables")
	}
}

// TestPlanLimits: plans the kernels cannot hold are refused, so that the
// engine samples them on the CPU.
func TestPlanLimits(t *testing.T) {
	lp := samplertest.MeetingAgent(1, 1, 4, false)
	o := withDefaults(t, lp, 0, sampler.Options{})
	for _, g := range []int{0, 3, 64} {
		if _, err := newPlan(lp, o, kindGibbs, g); err == nil {
			t.Errorf("G=%d accepted", g)
		}
	}
	pl, err := newPlan(lp, o, kindGibbs, 16)
	if err != nil {
		t.Fatal(err)
	}
	if !pl.float || !pl.exact {
		t.Errorf("meeting agent: float %v exact %v, want both", pl.float, pl.exact)
	}
	if int(pl.word(hBytes)) != len(pl.blob) || pl.metaBytes()%8 != 0 || len(pl.blob)%8 != 0 {
		t.Errorf("layout: %d bytes, header says %d; tables at %d", len(pl.blob), pl.word(hBytes), pl.metaBytes())
	}
	if pl.metaBytes()+16*pl.groupBytes() > 48<<10 {
		t.Errorf("the meeting agent's plan (%d bytes) and 16 chains (%d bytes each) exceed 48 KiB", pl.metaBytes(), pl.groupBytes())
	}
}
