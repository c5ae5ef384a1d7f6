package daemon

import (
	"context"
	"log/slog"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/internal/live"
)

// handleTargets subscribes client (before it connects) to the command
// topics of a live home's targets (Home Assistant's number and select
// entities): a value that live.CheckTarget accepts is published,
// retained, on the target's state topic, where every home of the street
// reads it and plans with it; any other is refused with a warning that
// names the topic and why. Compiled and energy homes share it.
func handleTargets(client *live.Client, targets []report.Target, log *slog.Logger) {
	for _, t := range targets {
		client.Handle(t.CommandTopic, func(b []byte) {
			v, err := live.CheckTarget(t, b)
			if err != nil {
				log.Warn("target refused", "topic", t.CommandTopic, "err", err)
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), publishWait)
			defer cancel()
			if err := client.Publish(ctx, []report.Publication{{Topic: t.StateTopic, Payload: []byte(v), Retained: true}}); err != nil {
				log.Warn("target not published", "topic", t.StateTopic, "err", err)
				return
			}
			log.Info("target set", "device", t.Device, "target", t.Name, "value", v)
		})
	}
}

// publishTargets publishes, retained, the Home Assistant discovery
// configurations of home's targets (report.TargetPublications), when
// discovery is on; a failure is logged, not fatal: the home plans on.
func publishTargets(ctx context.Context, client *live.Client, pub config.Publish, home string, targets []report.Target, avail string, log *slog.Logger) {
	if !pub.HomeAssistant || len(targets) == 0 {
		return
	}
	pubs, err := report.TargetPublications(pub.DiscoveryPrefix, home, targets, avail)
	if err == nil {
		pctx, cancel := context.WithTimeout(ctx, publishWait)
		err = client.Publish(pctx, pubs)
		cancel()
	}
	if err != nil {
		log.Warn("Home Assistant targets not published", "err", err)
	}
}
