package shds

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hearth-dcop/hearth/devices"
)

// builder turns one home object of an instance into a devices.Home.
type builder struct {
	name string
	a    agent
	dict devices.HouseType
	hz   devices.Horizon
	opts Options
	g    int
}

// derivedActuator is the generator's rule for the actuator of a room or
// water-tank property (shds-model.md §1.1).
var derivedActuator = map[string]string{
	"temperature_heat": "Dyson_AM09",
	"temperature_cool": "Bryant_697CN030B",
	"cleanliness":      "Roomba_880",
	"water_temp":       "Rheem_XE40M12ST45U1",
}

// build parses, filters and checks the home's rules and returns the home
// and the rules dropped as infeasible.
func (b *builder) build() (*devices.Home, []string, error) {
	rules := make([]devices.Rule, 0, len(b.a.Rules))
	for _, text := range b.a.Rules {
		r, err := devices.ParseRule(text, devices.RuleSyntax{Flag: true})
		if err != nil {
			return nil, nil, err
		}
		if err := b.hz.CheckTime(&r); err != nil {
			return nil, nil, fmt.Errorf("rule %q: %v", r.Text, err)
		}
		rules = append(rules, r)
	}
	listed := b.actuatorList(rules)
	for i := range rules {
		r := &rules[i]
		if _, err := b.sensor(r); err != nil {
			return nil, nil, err
		}
		if len(b.wired(r.Location, r.Property, listed)) == 0 {
			return nil, nil, fmt.Errorf("rule %q: no actuator of the home changes %s at %s", r.Text, r.Property, r.Location)
		}
	}
	var dropped []string
	for range 4 {
		h, err := b.home(rules, listed)
		if err != nil {
			return nil, nil, err
		}
		bad, err := infeasibleRules(h, b.hz)
		if err != nil {
			return nil, nil, err
		}
		if len(bad) == 0 {
			return h, dropped, nil
		}
		switch b.opts.Infeasible {
		case Keep:
			return h, nil, nil
		case Strict:
			return nil, nil, fmt.Errorf("%w: the rules %s cannot all be satisfied", ErrInfeasible, strings.Join(quote(bad, h), ", "))
		}
		remove := map[string]bool{}
		for _, ri := range bad {
			remove[h.Rules[ri].Text] = true
			dropped = append(dropped, h.Rules[ri].Text)
		}
		rules = slices.DeleteFunc(rules, func(r devices.Rule) bool { return remove[r.Text] })
	}
	return nil, nil, fmt.Errorf("dropping infeasible rules did not settle")
}

func quote(idx []int, h *devices.Home) []string {
	out := make([]string, len(idx))
	for i, ri := range idx {
		out[i] = fmt.Sprintf("%q", h.Rules[ri].Text)
	}
	return out
}

// actuatorList returns the home's `actuators`, or derives it from the
// rules when the key is absent.
func (b *builder) actuatorList(rules []devices.Rule) map[string]bool {
	out := map[string]bool{}
	if b.a.Actuators != nil {
		for _, n := range *b.a.Actuators {
			out[n] = true
		}
		return out
	}
	for _, r := range rules {
		if r.Location != "room" && r.Location != "water_tank" {
			out[r.Location] = true
		} else if a, ok := derivedActuator[r.Property]; ok {
			out[a] = true
		}
	}
	return out
}

// sensor returns the one sensor of the house type at the rule's location
// sensing its property.
func (b *builder) sensor(r *devices.Rule) (string, error) {
	var found []string
	for n, d := range b.dict {
		if d.Type == "sensor" && d.Location == r.Location && d.SensingProperties[0] == r.Property {
			found = append(found, n)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("rule %q: no sensor of the device dictionary senses %s at %s", r.Text, r.Property, r.Location)
	}
	slices.Sort(found)
	return "", fmt.Errorf("rule %q: several sensors sense %s at %s: %s", r.Text, r.Property, r.Location, strings.Join(found, ", "))
}

// wired returns the dictionary actuators of model (loc, p), sorted: those
// with an effect on p that sit at or are named loc; under Profile SHDS only
// the listed ones.
func (b *builder) wired(loc, p string, listed map[string]bool) []string {
	var out []string
	for n, d := range b.dict {
		if d.Type != "actuator" || (d.Location != loc && n != loc) {
			continue
		}
		if b.opts.Profile == SHDS && !listed[n] {
			continue
		}
		if affects(d, p) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func affects(d devices.DictDevice, p string) bool {
	for _, a := range d.Actions {
		for _, e := range a.Effects {
			if e.Property == p {
				return true
			}
		}
	}
	return false
}

// home builds the model of the given rules: passive rules kept by the
// test of shds-model.md §3.2, one property per model, the union of the
// models' actuators as devices.
func (b *builder) home(rules []devices.Rule, listed map[string]bool) (*devices.Home, error) {
	active := map[string]bool{}
	for _, r := range rules {
		if r.Active() {
			for _, n := range b.wired(r.Location, r.Property, listed) {
				active[n] = true
			}
		}
	}
	h := &devices.Home{Name: b.name}
	f := float64(b.g) / 60
	for _, v := range b.a.BackgroundLoad {
		if !finite(v) || v > 1e9 || v < -1e9 {
			return nil, fmt.Errorf("backgroundLoad %v is not a usable number", v)
		}
		h.Background = append(h.Background, float64(q10(v)))
	}
	var devs []string
	for _, r := range rules {
		if !r.Active() && !b.keepPassive(r.Property, active) {
			continue
		}
		if h.Property(r.Location, r.Property) < 0 {
			s, _ := b.sensor(&r)
			h.Properties = append(h.Properties, devices.Property{
				Location: r.Location, Name: r.Property, Scale: 0.1,
				Initial: tenths(q10(*b.dict[s].CurrentState)),
			})
		}
		for _, n := range b.wired(r.Location, r.Property, listed) {
			if !slices.Contains(devs, n) {
				devs = append(devs, n)
			}
		}
		r.Goal = tenths(q10(r.Goal))
		h.Rules = append(h.Rules, r)
	}
	power := func(v float64) float64 { return float64(q10(v * f)) }
	delta := func(v float64) float64 { return tenths(q10(v * f)) }
	for _, n := range devs {
		d := b.dict[n]
		h.Devices = append(h.Devices, d.Actuator(n, power, delta))
	}
	return h, nil
}

// keepPassive is the §3.2 test: some active model's actuator affects the
// property (by name only, not location).
func (b *builder) keepPassive(p string, active map[string]bool) bool {
	for n := range active {
		if affects(b.dict[n], p) {
			return true
		}
	}
	return false
}

// infeasibleRules returns the rules of every component of models that no
// schedule satisfies (each model alone, then jointly where models share
// an actuator), sorted.
func infeasibleRules(h *devices.Home, hz devices.Horizon) ([]int, error) {
	models, err := h.Models()
	if err != nil {
		return nil, err
	}
	spaces, err := h.Spaces(hz, models, 0)
	if err != nil {
		return nil, err
	}
	var bad []int
	for _, comp := range devices.Components(models) {
		if ok, decided := h.JointFeasible(spaces, comp, 0); decided && !ok {
			for _, mi := range comp {
				bad = append(bad, models[mi].Rules...)
			}
		}
	}
	slices.Sort(bad)
	return bad, nil
}
