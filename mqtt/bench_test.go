package mqtt

import (
	"context"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/mqtt/broker"
	"github.com/hearth-dcop/hearth/mva/protocol/dpop"
	"github.com/hearth-dcop/hearth/mva/sim"
)

// BenchmarkDPOPOverMQTT runs DPOP on a random problem of 6 agents with one
// MQTT client per agent through an embedded broker, and reports the ratio
// of its wall time to the simulated runtime's on the same problem,
// measured in the same run: the cost of the real transport (connections,
// presence, statuses, loopback TCP) over a protocol's own work.
func BenchmarkDPOPOverMQTT(b *testing.B) {
	ctx := context.Background()
	p := randomProblem(11, 6)
	o := sim.Options{Protocol: dpop.New, Solver: dfbnb, Seed: 1}
	const reps = 20
	start := time.Now()
	for range reps {
		if _, err := sim.Solve(ctx, p, o); err != nil {
			b.Fatal(err)
		}
	}
	base := float64(time.Since(start).Nanoseconds()) / reps
	br, err := broker.Start(broker.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	cfg := GroupConfig{Config: Config{Broker: Broker{URL: br.URL()}, Protocol: "dpop"}}
	var msgs, envs float64
	for b.Loop() {
		cfg.Run = "" // a fresh run id each time
		_, gr, err := solveGroup(ctx, p, o, cfg)
		if err != nil {
			b.Fatal(err)
		}
		msgs += float64(gr.Metrics.Messages)
		for _, s := range gr.Stats {
			envs += float64(s.Envelopes + s.Statuses)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n/base, "x-sim")
	b.ReportMetric(msgs/n, "messages")
	b.ReportMetric(envs/n, "mqtt-publishes")
}
