package dpop

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkDPOP runs DPOP (dfbnb, lazy tables) over the thesis's scaling
// axes (Figures 3.6–3.7) and reports the simulated runtime and message
// count per run besides the wall time of the whole simulation.
func BenchmarkDPOP(b *testing.B) {
	ctx := context.Background()
	o := ScaleOptions{Seed: 1}.withDefaults()
	for _, pt := range ThesisSweep() {
		b.Run(fmt.Sprintf("%s/A=%d/L=%d", pt.Axis, pt.Agents, pt.LocalVars), func(b *testing.B) {
			var simMs, msgs float64
			i := 0
			for b.Loop() {
				run, err := RunScale(ctx, pt, i%o.Instances, o)
				if err != nil {
					b.Fatal(err)
				}
				simMs += run.Metrics.SimTimeMs
				msgs += float64(run.Metrics.Messages)
				i++
			}
			b.ReportMetric(simMs/float64(i), "sim_ms")
			b.ReportMetric(msgs/float64(i), "messages")
		})
	}
}
