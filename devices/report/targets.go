package report

import (
	"fmt"
	"strings"
)

// Target is a user's target for a device that Home Assistant shows as a
// control: a number (an EV's target charge, a battery's reserve, in %) or
// a select (an EV's departure time, one of the slot boundaries). A change
// arrives on CommandTopic; the home publishes the value in effect,
// retained, on StateTopic, where every home of the street reads it, so
// that all of them plan with it.
type Target struct {
	Device string
	// Name is the target's level in the topics: target_pct, reserve_pct,
	// departure.
	Name  string
	Label string
	// Number: Min, Max, Step and Unit; Select: Options.
	Min, Max, Step float64
	Unit           string
	Options        []string
	CommandTopic   string
	StateTopic     string
}

// HANumber is the discovery configuration of an MQTT number
// (https://www.home-assistant.io/integrations/number.mqtt/).
type HANumber struct {
	Name            string           `json:"name"`
	UniqueID        string           `json:"unique_id"`
	DefaultEntityID string           `json:"default_entity_id"`
	CommandTopic    string           `json:"command_topic"`
	StateTopic      string           `json:"state_topic"`
	Min             float64          `json:"min"`
	Max             float64          `json:"max"`
	Step            float64          `json:"step"`
	Mode            string           `json:"mode"`
	Unit            string           `json:"unit_of_measurement,omitempty"`
	Availability    []HAAvailability `json:"availability,omitempty"`
	Icon            string           `json:"icon,omitempty"`
	Device          HADevice         `json:"device"`
}

// HASelect is the discovery configuration of an MQTT select
// (https://www.home-assistant.io/integrations/select.mqtt/).
type HASelect struct {
	Name            string           `json:"name"`
	UniqueID        string           `json:"unique_id"`
	DefaultEntityID string           `json:"default_entity_id"`
	CommandTopic    string           `json:"command_topic"`
	StateTopic      string           `json:"state_topic"`
	Options         []string         `json:"options"`
	Availability    []HAAvailability `json:"availability,omitempty"`
	Icon            string           `json:"icon,omitempty"`
	Device          HADevice         `json:"device"`
}

// TargetPublications returns the retained discovery configurations of a
// home's targets under discovery prefix disc ("" for
// DefaultDiscoveryPrefix), available while avail says online ("" for
// always):
//
//	<disc>/number/<home>/hearth_<home>_<device>_<target>/config
//	<disc>/select/<home>/hearth_<home>_<device>_<target>/config
func TargetPublications(disc, home string, targets []Target, avail string) ([]Publication, error) {
	disc = strings.TrimSuffix(disc, "/")
	if disc == "" {
		disc = DefaultDiscoveryPrefix
	}
	if err := checkPrefix(disc); err != nil {
		return nil, err
	}
	if strings.Contains(home, ".") {
		return nil, fmt.Errorf("publish: home name %q cannot be a Home Assistant node id (letters, digits, '_' and '-')", home)
	}
	var out []Publication
	for _, t := range targets {
		id := "hearth_" + objectID(home) + "_" + objectID(t.Device) + "_" + objectID(t.Name)
		var (
			component string
			cfg       any
		)
		switch {
		case len(t.Options) > 0:
			component = "select"
			cfg = HASelect{Name: t.Label, UniqueID: id, DefaultEntityID: "select." + id, CommandTopic: t.CommandTopic, StateTopic: t.StateTopic,
				Options: t.Options, Availability: availability(avail), Icon: "mdi:clock-outline", Device: haDevice(home)}
		case t.Max > t.Min && t.Step > 0:
			component = "number"
			cfg = HANumber{Name: t.Label, UniqueID: id, DefaultEntityID: "number." + id, CommandTopic: t.CommandTopic, StateTopic: t.StateTopic,
				Min: t.Min, Max: t.Max, Step: t.Step, Mode: "slider", Unit: t.Unit, Availability: availability(avail), Icon: "mdi:target", Device: haDevice(home)}
		default:
			return nil, fmt.Errorf("publish: target %s of %s: neither options nor a range", t.Name, t.Device)
		}
		if err := add(&out, disc+"/"+component+"/"+home+"/"+id+"/config", cfg); err != nil {
			return nil, err
		}
	}
	return out, nil
}
