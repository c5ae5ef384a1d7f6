package devices

import "slices"

// Model is a property that some rule constrains, with the actuators that
// move it and the rules over it (shds-model.md §2.2). Properties that no
// rule mentions are not modelled: nothing depends on them.
type Model struct {
	Property  int   // index in Home.Properties
	Actuators []int // indices in Home.Devices, ascending
	Rules     []int // indices in Home.Rules, ascending
}

// Models groups h's rules by the property they constrain, in order of
// first mention. Every rule must name a property of the home that at
// least one device affects.
func (h *Home) Models() ([]Model, error) {
	byProp := map[int]int{}
	var out []Model
	for ri := range h.Rules {
		r := &h.Rules[ri]
		pi := h.Property(r.Location, r.Property)
		if pi < 0 {
			return nil, errorf(h.Name, PartRule, ri, "rule %q: the home has no property %s at %s: %s", r.Text, r.Property, r.Location, h.propertyHint(r.Location, r.Property))
		}
		mi, ok := byProp[pi]
		if !ok {
			m := Model{Property: pi}
			for di := range h.Devices {
				if h.Devices[di].Affects(r.Location, r.Property) {
					m.Actuators = append(m.Actuators, di)
				}
			}
			if len(m.Actuators) == 0 {
				return nil, errorf(h.Name, PartRule, ri, "rule %q: no device of the home changes %s at %s; add one whose actions have an effect on %s and that sits at or is named %s", r.Text, r.Property, r.Location, r.Property, r.Location)
			}
			mi = len(out)
			byProp[pi] = mi
			out = append(out, m)
		}
		out[mi].Rules = append(out[mi].Rules, ri)
	}
	return out, nil
}

// propertyHint lists what the home does have, for an unknown property.
func (h *Home) propertyHint(loc, name string) string {
	var same []string
	for _, p := range h.Properties {
		if p.Location == loc || p.Name == name {
			same = append(same, p.Location+" "+p.Name)
		}
	}
	if len(same) == 0 {
		for _, p := range h.Properties {
			same = append(same, p.Location+" "+p.Name)
		}
	}
	if len(same) == 0 {
		return "it has no properties at all (a device's catalogue entry or a sensor declares them)"
	}
	return "it has " + joinQuoted(same)
}

func joinQuoted(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += "\"" + x + "\""
	}
	return out
}

// Components groups models that share an actuator (transitively): only
// their joint trajectories decide feasibility, as the Roomba's cleanliness
// and battery do in SHDS (shds-model.md §4.3).
func Components(models []Model) [][]int {
	parent := make([]int, len(models))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	owner := map[int]int{}
	for mi, m := range models {
		for _, a := range m.Actuators {
			if o, ok := owner[a]; ok {
				parent[find(mi)] = find(o)
			} else {
				owner[a] = mi
			}
		}
	}
	groups := map[int][]int{}
	var roots []int
	for mi := range models {
		r := find(mi)
		if _, ok := groups[r]; !ok {
			roots = append(roots, r)
		}
		groups[r] = append(groups[r], mi)
	}
	out := make([][]int, 0, len(roots))
	for _, r := range roots {
		g := groups[r]
		slices.Sort(g)
		out = append(out, g)
	}
	return out
}
