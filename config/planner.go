package config

import (
	"slices"

	"github.com/hearth-dcop/hearth/devices"
)

// Planners of a home (the planner key of a home file or [[home]] table).
const (
	// PlannerCompiled is the default: the home is compiled to tables
	// (devices/compile) and joins the protocol between homes.
	PlannerCompiled = "compiled"
	// PlannerEnergy plans the home as an energy home (devices/energy:
	// continuous battery and EV power behind a two-way meter); it
	// coordinates with the street on the load that flows
	// (devices/street).
	PlannerEnergy = "energy"
)

// planner reads a home's planner key; a home without one is compiled.
// Which devices an energy home may hold is checked where it is mapped
// (devices/street), with the device's file and key.
func (r *homeReader) planner() {
	r.hs.planner = PlannerCompiled
	s, ok := r.n.str("planner")
	if !ok {
		return
	}
	valid := []string{PlannerCompiled, PlannerEnergy}
	if !slices.Contains(valid, s) {
		r.n.errorf("planner", "planner = %q: want %q (tables, coordinated by the protocol) or %q (continuous battery and EV power, coordinated on the load that flows)", s, PlannerCompiled, PlannerEnergy)
		return
	}
	r.hs.planner = s
}

// sized records the size parameters a device gave (zero fields: the
// catalogue's defaults), for the energy planner, which reads a storage's
// efficiencies and least charging power from them rather than from the
// compiled actions (whose effects are rounded to the property's steps).
func (hs *homeSrc) sized(device string, sz devices.Sizing) {
	if hs.sizes == nil {
		hs.sizes = map[string]devices.Sizing{}
	}
	hs.sizes[device] = sz
}
