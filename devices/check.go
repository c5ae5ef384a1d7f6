package devices

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DefaultJointLimit bounds the joint states of a component of models that
// share actuators; past it the joint check is skipped (each model is still
// checked alone, and the solver still finds any infeasibility).
const DefaultJointLimit = 1 << 18

// Spaces returns the state space of every model of h.
func (h *Home) Spaces(hz Horizon, models []Model, limit int) ([]*Space, error) {
	out := make([]*Space, len(models))
	for i, m := range models {
		s, err := h.NewSpace(hz, m, limit)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// JointFeasible searches the joint trajectories of the models of one
// component (Components) for a schedule that satisfies all of them. decided
// is false when the joint state set exceeded limit (0 means
// DefaultJointLimit).
func (h *Home) JointFeasible(spaces []*Space, comp []int, limit int) (feasible, decided bool) {
	if limit <= 0 {
		limit = DefaultJointLimit
	}
	for _, mi := range comp {
		if !spaces[mi].Feasible() {
			return false, true
		}
	}
	if len(comp) == 1 {
		return true, true
	}
	// The union of the component's actuators and, per model, where its
	// own actuators sit in that union.
	var union []int
	pos := map[int]int{}
	last := 0
	for _, mi := range comp {
		for _, a := range spaces[mi].Model.Actuators {
			if _, ok := pos[a]; !ok {
				pos[a] = len(union)
				union = append(union, a)
			}
		}
		last = max(last, spaces[mi].Last)
	}
	own := make([][]int, len(comp))
	for c, mi := range comp {
		for _, a := range spaces[mi].Model.Actuators {
			own[c] = append(own[c], pos[a])
		}
	}
	type key string
	enc := func(t []int) key {
		var b strings.Builder
		for _, v := range t {
			b.WriteString(strconv.Itoa(v))
			b.WriteByte(',')
		}
		return key(b.String())
	}
	cur := [][]int{make([]int, len(comp))} // state positions at index 0
	sub := make([][]int, len(comp))
	for c := range comp {
		sub[c] = make([]int, len(own[c]))
	}
	for i := 1; i <= last; i++ {
		seen := map[key]bool{}
		var next [][]int
		for _, t := range cur {
			Joint(h, union, func(acts []int) {
				nt := make([]int, len(comp))
				for c, mi := range comp {
					sp := spaces[mi]
					if i > sp.Last {
						nt[c] = t[c]
						continue
					}
					for j, u := range own[c] {
						sub[c][j] = acts[u]
					}
					st, ok := sp.Step(i, sp.States[i-1][t[c]], sub[c])
					if !ok {
						return
					}
					nt[c] = sp.IndexOf(i, st)
				}
				if k := enc(nt); !seen[k] {
					seen[k] = true
					next = append(next, nt)
				}
			})
			if len(next) > limit {
				return true, false
			}
		}
		if len(next) == 0 {
			return false, true
		}
		cur = next
	}
	return true, true
}

// Check analyses every rule of h under hz and returns one *Error (marked
// Infeasible) per set of rules that no schedule can satisfy, blaming the
// rule that cannot be met and saying why; malformed models give a single
// non-Infeasible error. limit bounds state sets (0: DefaultStateLimit).
func (h *Home) Check(hz Horizon, limit int) []error {
	models, err := h.Models()
	if err != nil {
		return []error{err}
	}
	spaces, err := h.Spaces(hz, models, limit)
	if err != nil {
		return []error{err}
	}
	var errs []error
	for _, comp := range Components(models) {
		bad := -1
		for _, mi := range comp {
			if !spaces[mi].Feasible() {
				bad = mi
				errs = append(errs, h.diagnose(hz, models[mi], limit))
			}
		}
		if bad >= 0 {
			continue
		}
		if ok, decided := h.JointFeasible(spaces, comp, 0); decided && !ok {
			errs = append(errs, h.blameComponent(models, comp))
		}
	}
	return errs
}

// diagnose explains why model m alone is infeasible.
func (h *Home) diagnose(hz Horizon, m Model, limit int) error {
	p := &h.Properties[m.Property]
	var passive, active []int
	for _, ri := range m.Rules {
		if h.Rules[ri].Soft {
			continue // soft rules exclude no schedule
		}
		if h.Rules[ri].Active() {
			active = append(active, ri)
		} else {
			passive = append(passive, ri)
		}
	}
	feasible := func(rules []int) (*Space, bool) {
		s, err := h.NewSpace(hz, Model{Property: m.Property, Actuators: m.Actuators, Rules: rules}, limit)
		return s, err == nil && s.Feasible()
	}
	base, ok := feasible(passive)
	if !ok {
		for _, ri := range passive {
			if _, ok := feasible([]int{ri}); !ok {
				return h.infeasible(ri, "the bound cannot hold from the initial value %s with the devices that move %s %s", p.format(Steps(p.Initial, p.Scale)), p.Location, p.Name)
			}
		}
		ri := passive[len(passive)-1]
		return h.infeasible(ri, "the bounds on %s %s exclude each other or every trajectory the devices allow", p.Location, p.Name)
	}
	for _, ri := range active {
		if _, ok := feasible(append(append([]int{}, passive...), ri)); !ok {
			// The values the passive bounds allow, up to the rule's window.
			_, to, _ := hz.RuleWindow(&h.Rules[ri])
			if wide, err := h.newSpace(hz, Model{Property: m.Property, Actuators: m.Actuators, Rules: passive}, limit, to-1); err == nil {
				base = wide
			}
			return h.infeasible(ri, "%s", h.why(hz, base, ri))
		}
	}
	ri := active[len(active)-1]
	var others []string
	for _, o := range active[:len(active)-1] {
		others = append(others, strconv.Quote(h.Rules[o].Text))
	}
	return h.infeasible(ri, "it cannot be met together with %s on the same property", strings.Join(others, ", "))
}

// why explains an active rule that the reachable values (under the
// passive bounds alone, in base) cannot meet.
func (h *Home) why(hz Horizon, base *Space, ri int) string {
	r := &h.Rules[ri]
	p := &h.Properties[base.Model.Property]
	from, to, anyOf := hz.RuleWindow(r)
	if from >= to {
		if anyOf {
			return fmt.Sprintf("its window is empty: %s %d leaves no time index to check under %s dynamics", r.Prefix, r.T1, hz.Dynamics)
		}
		return "its window is empty"
	}
	lo, hi, seen := int64(0), int64(0), false
	for i := from; i < to && i <= base.Last; i++ {
		for _, st := range base.States[i] {
			if !seen || st.Value < lo {
				lo = st.Value
			}
			if !seen || st.Value > hi {
				hi = st.Value
			}
			seen = true
		}
	}
	if !seen {
		return "no trajectory reaches its window within the bounds"
	}
	goal := Steps(r.Goal, p.Scale)
	switch r.Rel {
	case Gt, Geq:
		if !r.Rel.Holds(hi, goal) {
			return fmt.Sprintf("at best %s %s reaches %s in the rule's window: the goal needs more than the devices can deliver in time%s", p.Location, p.Name, p.format(hi), h.awayNote(base.Model.Actuators, to))
		}
	case Lt, Leq:
		if !r.Rel.Holds(lo, goal) {
			return fmt.Sprintf("at least %s %s is %s in the rule's window: the devices cannot bring it down in time", p.Location, p.Name, p.format(lo))
		}
	}
	return fmt.Sprintf("no reachable value of %s %s in the rule's window (between %s and %s) satisfies %s %s for long enough", p.Location, p.Name, p.format(lo), p.format(hi), r.Rel, p.format(goal))
}

// awayNote says, for an infeasibility message, how many of the slots
// before index to the model's actuators are away in (Device.Away: a car
// outside its plugged-in window); "" where none is.
func (h *Home) awayNote(actuators []int, to int) string {
	var notes []string
	for _, di := range actuators {
		d := &h.Devices[di]
		n := 0
		for t := 0; t < to && t < len(d.Away); t++ {
			if d.Away[t] {
				n++
			}
		}
		if n > 0 {
			notes = append(notes, fmt.Sprintf("%s is away in %d of the %d slots before it", d.Name, n, min(to, len(d.Away))))
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, "; ") + ")"
}

// blameComponent reports a component whose models are feasible alone but
// not together (they share a device).
func (h *Home) blameComponent(models []Model, comp []int) error {
	var texts []string
	last := -1
	for _, mi := range comp {
		for _, ri := range models[mi].Rules {
			if h.Rules[ri].Soft {
				continue
			}
			if h.Rules[ri].Active() && ri > last {
				last = ri
			}
			texts = append(texts, strconv.Quote(h.Rules[ri].Text))
		}
	}
	if last < 0 {
		last = models[comp[0]].Rules[0]
	}
	var shared []string
	seen := map[int]int{}
	for _, mi := range comp {
		for _, a := range models[mi].Actuators {
			seen[a]++
			if seen[a] == 2 {
				shared = append(shared, h.Devices[a].Name)
			}
		}
	}
	return h.infeasible(last, "the rules %s cannot all be met: they share device %s, and no schedule of it satisfies them together", strings.Join(texts, ", "), strings.Join(shared, ", "))
}

func (h *Home) infeasible(ri int, format string, args ...any) error {
	e := errorf(h.Name, PartRule, ri, "rule %q cannot be satisfied: %s", h.Rules[ri].Text, fmt.Sprintf(format, args...))
	e.Infeasible = true
	return e
}

// format writes a value in steps in natural units.
func (p *Property) format(v int64) string {
	d := decimals(p.Scale)
	s := strconv.FormatFloat(float64(v)*p.Scale, 'f', d, 64)
	if d > 3 {
		// A fine resolution (an automatic wallbox's 1 mWh) would print
		// trailing zeros: 28.0966, not 28.096600.
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if p.Unit != "" {
		s += " " + p.Unit
	}
	return s
}

// decimals returns how many decimals show a multiple of scale.
func decimals(scale float64) int {
	d := 0
	for x := scale; d < 6 && math.Abs(x-math.Round(x)) > 1e-9; x *= 10 {
		d++
	}
	return d
}
