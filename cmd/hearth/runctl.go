package main

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/hearth-dcop/hearth/devices/report"
	"github.com/hearth-dcop/hearth/mqtt"
)

// newControl returns the control client of h (mqtt.Control): serving for
// the long-running agent, not for a one-shot publication.
func newControl(h *homeAgent, serving bool) *mqtt.Control {
	cfg := h.cfg
	cfg.Logger = h.log
	return mqtt.NewControl(cfg, h.name, h.neighbours, serving)
}

// publishResult publishes a round's outcome on c's connection, retained:
// rep, or the error that ended the round.
func publishResult(ctx context.Context, c *mqtt.Control, h *homeAgent, round string, rep roundResult, err error) error {
	if err != nil {
		rep.Error = err.Error()
		rep.V, rep.Round, rep.Agent = 1, round, h.name
	}
	b, jerr := json.Marshal(rep)
	if jerr != nil {
		return jerr
	}
	return c.PublishResult(ctx, round, b)
}

// publications converts a plan's publications for the control client.
func publications(pubs []report.Publication) []mqtt.Publication {
	out := make([]mqtt.Publication, len(pubs))
	for i, p := range pubs {
		out[i] = mqtt.Publication(p)
	}
	return out
}

// publishResultOnce publishes a round's outcome on a connection of its
// own (`hearth run --once`), and then plan (a home's plan, nil for
// none).
func publishResultOnce(ctx context.Context, h *homeAgent, round string, rep roundResult, err error, plan []report.Publication) error {
	c := newControl(h, false)
	if cerr := c.Connect(ctx); cerr != nil {
		return cerr
	}
	defer c.Disconnect()
	if perr := publishResult(ctx, c, h, round, rep, err); perr != nil {
		return perr
	}
	return c.Publish(ctx, publications(plan))
}

// recent remembers the last rounds run, so that a command repeated (a
// retained command, or one sent twice) does not run a round again.
type recent struct {
	ids  []string
	most int
}

func newRecent(most int) *recent { return &recent{most: most} }

func (r *recent) has(id string) bool { return slices.Contains(r.ids, id) }

func (r *recent) add(id string) {
	if len(r.ids) == r.most {
		r.ids = r.ids[1:]
	}
	r.ids = append(r.ids, id)
}
