package solve

import (
	"context"
	"time"

	"github.com/hearth-dcop/hearth/local/gpu"
	"github.com/hearth-dcop/hearth/mqtt"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/pipeline"
)

// MQTTResult is `hearth sim --json`: the result object of `hearth solve`
// plus what only a run over MQTT has: the broker, the run id, and each
// agent's transport counters.
type MQTTResult struct {
	mva.Result
	Broker string `json:"broker"`
	// Transport is how the agents reached the broker: "memory" (the
	// embedded broker, in this process) or "network".
	Transport string `json:"transport"`
	Run       string `json:"run"`
	// Agents are the counters of every protocol agent, in the order of
	// the (reformulated) problem's agents.
	Agents []mqtt.Stats `json:"agents"`
	// SecurityDrops counts, by reason, what the agents dropped as
	// unsigned, wrongly signed, replayed or retained on an inbox
	// (mqtt.SecurityDrops); absent when nothing was.
	SecurityDrops map[string]int64 `json:"security_drops,omitempty"`
}

// MQTT is `hearth sim` without the command line: it runs the
// protocol of o between p's agents over MQTT (cfg.Broker, or an embedded
// broker when it has no URL, reached through memory unless
// cfg.EmbeddedTCP), each agent with its own client, and reports
// the result in p's terms. progress, when not nil, counts the agents'
// activity while they run.
func MQTT(ctx context.Context, p *mva.Problem, o Options, dev *gpu.Device, cfg mqtt.GroupConfig, progress *pipeline.Progress) (MQTTResult, error) {
	d, err := Prepare(p, o, dev)
	if err != nil {
		return MQTTResult{}, err
	}
	d.count()
	start := time.Now()
	d.Pipeline.Progress = progress
	pl, err := pipeline.Prepare(ctx, p, d.Pipeline)
	if err != nil {
		return MQTTResult{}, err
	}
	cfg.Timing = cfg.Timing.ForAgents(len(pl.Problem().Agents))
	g := &mqtt.Group{Config: cfg}
	sol, err := pl.Run(ctx, g)
	if err != nil {
		return MQTTResult{}, err
	}
	// The user waited for the tables too.
	sol.Outcome.Metrics.WallMs = float64(time.Since(start).Microseconds()) / 1000
	transport := "network"
	if g.Last.InMemory {
		transport = "memory"
	}
	return MQTTResult{Result: d.Result(sol), Broker: g.Last.Broker, Transport: transport, Run: g.Last.Run, Agents: g.Last.Stats,
		SecurityDrops: mqtt.SecurityDropped(g.Last.Stats)}, nil
}
