package live

import (
	"encoding/json"
	"fmt"
	"math"
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
//
// EnergyKWh is what the plan has the device move through the meter in
// the slot (PowerKW times the slot's length) from the state the round
// read: a storage's controller that can set its power delivers it by
// SlotEnd, counting from SlotStart or Created, whichever is later — a
// command that reaches it late, or a round made inside the slot (which
// plans slot 0 as a whole slot from the state it read), then still
// stores what the plan needs, within the device's power. A controller
// that reads only Action or PowerKW runs as before.
type Command struct {
	Round     string  `json:"round"`
	Created   string  `json:"created"`
	SlotStart string  `json:"slot_start"`
	SlotEnd   string  `json:"slot_end"`
	Expires   string  `json:"expires"`
	Action    string  `json:"action"`
	PowerKW   float64 `json:"power_kw"`
	EnergyKWh float64 `json:"energy_kwh"`
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
				// A refined plan names a wallbox's exact current
				// (Device.Exact) where the compiled level is not one.
				byName := func(a devices.Action) bool { return a.Name == name }
				act := (*devices.Action)(nil)
				if ai := slices.IndexFunc(dev.Actions, byName); ai >= 0 {
					act = &dev.Actions[ai]
				} else if ai := slices.IndexFunc(dev.Exact, byName); ai >= 0 {
					act = &dev.Exact[ai]
				}
				if act != nil {
					if e, ok := act.EffectIn(prop.Name, n.Horizon, t); ok {
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
			SlotEnd: to.Format(time.RFC3339), Expires: to.Add(grace).Format(time.RFC3339), Action: d.Actions[k], PowerKW: d.KW[k],
			EnergyKWh: math.Round(d.KW[k]*to.Sub(from).Hours()*1e6) / 1e6}
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
