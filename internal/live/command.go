package live

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/report"
)

// Command is the retained payload of P/home/H/command/D: what device D
// does in the slot that holds the clock. PowerKW > 0 draws from the
// home's meter, < 0 feeds it (a battery discharging). A controller acts
// on it until Expires (SlotEnd plus [live] command_grace), by which time
// the next slot's command has replaced it; past it, a controller falls
// back to its own default (hearth has stopped or lost the broker).
type Command struct {
	Round     string  `json:"round"`
	Created   string  `json:"created"`
	SlotStart string  `json:"slot_start"`
	SlotEnd   string  `json:"slot_end"`
	Expires   string  `json:"expires"`
	Action    string  `json:"action"`
	PowerKW   float64 `json:"power_kw"`
}

// Plan is a home's plan of a round, as the commands and the off-plan
// check read it.
type Plan struct {
	Round   string
	Created time.Time
	Horizon Horizon
	Plan    report.HomePlan
	// Stored[d] are the stored energy of device d at the slot
	// boundaries, nil for a device that stores none.
	Stored map[string][]float64
}

// NewPlan builds the plan of home hi of n from its devices' plan.
func NewPlan(round string, created time.Time, hz Horizon, n *devices.Neighbourhood, hi int, p report.HomePlan) Plan {
	pl := Plan{Round: round, Created: created, Horizon: hz, Plan: p, Stored: map[string][]float64{}}
	h := &n.Homes[hi]
	for _, dp := range p.Devices {
		di := slices.IndexFunc(h.Devices, func(d devices.Device) bool { return d.Name == dp.Device })
		if di < 0 {
			continue
		}
		dev := &h.Devices[di]
		for _, prop := range h.Properties {
			if prop.Location != dev.Location || !dev.Affects(prop.Location, prop.Name) {
				continue
			}
			vals := []float64{prop.Initial}
			v := prop.Initial
			for t, name := range dp.Actions {
				v += prop.DriftIn(n.Horizon, t)
				if ai := slices.IndexFunc(dev.Actions, func(a devices.Action) bool { return a.Name == name }); ai >= 0 {
					if e, ok := dev.Actions[ai].EffectIn(prop.Name, n.Horizon, t); ok {
						v += e
					}
				}
				vals = append(vals, v)
			}
			pl.Stored[dp.Device] = vals
			break
		}
	}
	return pl
}

// Commands returns the retained commands of the slot that holds now, one
// per device, or none when now lies outside the plan's horizon.
func (p Plan) Commands(prefix, home string, now time.Time, grace time.Duration) ([]report.Publication, error) {
	k, ok := p.Horizon.SlotOf(now)
	if !ok {
		return nil, nil
	}
	from, to := p.Horizon.Times(k)
	var out []report.Publication
	for _, d := range p.Plan.Devices {
		if k >= len(d.Actions) || k >= len(d.KW) {
			return nil, fmt.Errorf("plan of %s has %d slots, the horizon %d", d.Device, len(d.Actions), p.Horizon.Slots)
		}
		c := Command{Round: p.Round, Created: p.Created.Format(time.RFC3339), SlotStart: from.Format(time.RFC3339),
			SlotEnd: to.Format(time.RFC3339), Expires: to.Add(grace).Format(time.RFC3339), Action: d.Actions[k], PowerKW: d.KW[k]}
		b, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		out = append(out, report.Publication{Topic: CommandTopic(prefix, home, d.Device), Payload: b, Retained: true})
	}
	return out, nil
}

// ParseCommand decodes a command (for controllers and tests).
func ParseCommand(b []byte) (Command, error) {
	var c Command
	if len(b) > MaxPayload {
		return c, fmt.Errorf("command of %d bytes", len(b))
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("command: %w", err)
	}
	for _, s := range []string{c.Created, c.SlotStart, c.SlotEnd, c.Expires} {
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return c, fmt.Errorf("command: %q is not an RFC 3339 time", s)
		}
	}
	return c, nil
}
