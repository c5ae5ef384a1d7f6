package config

import "slices"

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
