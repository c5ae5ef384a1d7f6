package devices

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// shdsDictionary is DeviceDictionary.json of the SHDS data set, byte for
// byte: github.com/nandofioretto/SHDS_dataset @ 0151ea6, inputs/
// (identical to the copy shipped with the data set, see
// notes/shds-model.md §1.2). It holds one object per house type (0 small,
// 1 medium, 2 large) with the nine appliance models and their sensors.
//
//go:embed DeviceDictionary.json
var shdsDictionary []byte

// SHDSDictionary returns the embedded SHDS device dictionary.
func SHDSDictionary() []byte { return slices.Clone(shdsDictionary) }

// DictDevice is one entry of an SHDS device dictionary.
type DictDevice struct {
	Type     string                `json:"type"`
	Subtype  string                `json:"subtype"`
	Location string                `json:"location"`
	Actions  map[string]DictAction `json:"actions"`
	// CurrentState is a sensor's initial value (a stray key on one
	// actuator, ignored there).
	CurrentState      *float64 `json:"current_state"`
	SensingProperties []string `json:"sensing_properties"`
}

// DictAction is an actuator's action: power per 60 minutes and effects per
// 60 minutes.
type DictAction struct {
	PowerConsumed float64      `json:"power_consumed"`
	Effects       []DictEffect `json:"effects"`
}

// DictEffect is an action's change of one property per 60 minutes.
type DictEffect struct {
	Property string  `json:"property"`
	Delta    float64 `json:"delta"`
}

// HouseType maps device names to devices, for one house type.
type HouseType map[string]DictDevice

// Dictionary is a parsed SHDS device dictionary: one map per house type.
type Dictionary []HouseType

// ParseDictionary reads the SHDS dictionary format (a JSON array of
// objects mapping device names to devices) and checks every entry.
func ParseDictionary(data []byte) (Dictionary, error) {
	var d Dictionary
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("device dictionary: %w", err)
	}
	if len(d) == 0 {
		return nil, fmt.Errorf("device dictionary: no house types")
	}
	for ht, devs := range d {
		for name, dev := range devs {
			if err := dev.check(); err != nil {
				return nil, fmt.Errorf("device dictionary: house type %d: %s: %w", ht, name, err)
			}
		}
	}
	return d, nil
}

func (d *DictDevice) check() error {
	switch d.Type {
	case "actuator":
		if len(d.Actions) == 0 {
			return fmt.Errorf("an actuator needs actions")
		}
		for an, a := range d.Actions {
			if !finite(a.PowerConsumed) || math.Abs(a.PowerConsumed) > 1e9 {
				return fmt.Errorf("action %s: power %v is not a usable number", an, a.PowerConsumed)
			}
			for _, e := range a.Effects {
				if e.Property == "" || !finite(e.Delta) || math.Abs(e.Delta) > 1e9 {
					return fmt.Errorf("action %s: effect %q %v is not a property and a usable number", an, e.Property, e.Delta)
				}
			}
		}
	case "sensor":
		if d.CurrentState == nil || !finite(*d.CurrentState) || math.Abs(*d.CurrentState) > 1e9 {
			return fmt.Errorf("a sensor needs a numeric current_state")
		}
		if len(d.SensingProperties) == 0 || d.SensingProperties[0] == "" {
			return fmt.Errorf("a sensor needs sensing_properties")
		}
	default:
		return fmt.Errorf("type %q is neither actuator nor sensor", d.Type)
	}
	if d.Location == "" {
		return fmt.Errorf("no location")
	}
	return nil
}

// Actuator returns the dictionary actuator as a Device with actions sorted
// by ascending power, ties by name (shds-model.md §2.3). conv turns the
// dictionary's per-60-minute power and deltas into the model's units.
func (d *DictDevice) Actuator(name string, power, delta func(float64) float64) Device {
	dev := Device{Name: name, Kind: name, Location: d.Location}
	for an, a := range d.Actions {
		act := Action{Name: an, Power: power(a.PowerConsumed)}
		for _, e := range a.Effects {
			act.Effects = append(act.Effects, Effect{Property: e.Property, Delta: delta(e.Delta)})
		}
		dev.Actions = append(dev.Actions, act)
	}
	SortActions(dev.Actions)
	return dev
}

// SortActions orders actions by ascending power, ties by name.
func SortActions(acts []Action) {
	slices.SortFunc(acts, func(a, b Action) int {
		if a.Power != b.Power {
			if a.Power < b.Power {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// Sensor returns the name of the sensor at location loc sensing property
// p (the first by name if there are several).
func (devs HouseType) Sensor(loc, p string) (string, bool) {
	var names []string
	for n, d := range devs {
		if d.Type == "sensor" && d.Location == loc && len(d.SensingProperties) > 0 && d.SensingProperties[0] == p {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "", false
	}
	slices.Sort(names)
	return names[0], true
}
