package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hearth-dcop/hearth/devices"
)

// Publication is one MQTT message to publish. Building them as data keeps
// this package free of any MQTT client: the caller publishes them with
// QoS 1 in order.
type Publication struct {
	Topic    string
	Payload  []byte
	Retained bool
}

// PublishOptions tune Publications.
type PublishOptions struct {
	// Prefix is the first topic level(s); "" means DefaultPrefix.
	Prefix string
	// Start is the wall-clock time slot 0 begins; the payloads carry each
	// slot's start and end in RFC 3339 when it is set. Home Assistant
	// discovery needs it: the entities show the action of the slot that
	// holds the current time.
	Start time.Time
	// HomeAssistant adds MQTT discovery configurations.
	HomeAssistant bool
	// DiscoveryPrefix is Home Assistant's discovery prefix; "" means
	// DefaultDiscoveryPrefix.
	DiscoveryPrefix string
	// Meta, when set, says which round made the plans, when, and until
	// when they hold (`hearth run` with [live]).
	Meta PlanMeta
	// Availability, when set, is the topic on which the home says
	// online and offline (its last will): Home Assistant shows the
	// entities unavailable while it says offline.
	Availability string
}

// PlanMeta is the provenance of a plan: the round that made it, when (RFC
// 3339), and the end of its horizon, after which it says nothing.
type PlanMeta struct {
	Round      string `json:"round,omitempty"`
	Created    string `json:"created,omitempty"`
	ValidUntil string `json:"valid_until,omitempty"`
}

// Defaults of PublishOptions.
const (
	DefaultPrefix          = "hearth"
	DefaultDiscoveryPrefix = "homeassistant"
)

// PlanPayload is the retained JSON of <prefix>/home/<home>/plan/<device>.
type PlanPayload struct {
	PlanMeta
	Home        string     `json:"home"`
	Device      string     `json:"device"`
	Kind        string     `json:"kind,omitempty"`
	SlotMinutes int        `json:"slot_minutes"`
	Slots       []PlanSlot `json:"slots"`
}

// PlanSlot is one slot of a plan.
type PlanSlot struct {
	Slot int `json:"slot"`
	// Time is the slot's start on the clock, "HH:MM".
	Time string `json:"time"`
	// Start and End are RFC 3339 times, when PublishOptions.Start is set.
	Start  string  `json:"start,omitempty"`
	End    string  `json:"end,omitempty"`
	Action string  `json:"action,omitempty"`
	KW     float64 `json:"kw"`
}

// LoadPayload is the retained JSON of <prefix>/home/<home>/load.
type LoadPayload struct {
	PlanMeta
	Home        string  `json:"home"`
	SlotMinutes int     `json:"slot_minutes"`
	EnergyKWh   float64 `json:"energy_kwh"`
	EnergyCost  float64 `json:"energy_cost"`
	PeakKW      float64 `json:"peak_kw"`
	// CommittedKW is a compiled home's committed cap per coordination
	// window (kW; HomePlan.CommittedKW), absent where not given: the
	// energy homes of a mixed street share the [feeder] limit less it.
	CommittedKW []float64  `json:"committed_kw,omitempty"`
	Slots       []PlanSlot `json:"slots"`
}

// Publications returns, for every plan, the retained plan of each device
// and the home's load, and with HomeAssistant set the retained discovery
// configurations of one sensor per device and one for the home's load:
//
//	<prefix>/home/<home>/plan/<device>                          PlanPayload
//	<prefix>/home/<home>/load                                   LoadPayload
//	<discovery>/sensor/<home>/hearth_<home>_<device>/config     a sensor whose state is the current slot's action
//	<discovery>/sensor/<home>/hearth_<home>_load/config         a power sensor (kW) of the current slot's planned draw
//
// The discovery topics use Home Assistant's node_id form
// (<component>/<node_id>/<object_id>/config) with the home's name as the
// node id, because a broker's per-home rule can only match a whole topic
// level (Mosquitto's "pattern write homeassistant/sensor/%u/#"): a home's
// credentials then cover its own entities and no other home's. Home
// Assistant allows only letters, digits, '_' and '-' in a node id, so
// discovery refuses home names with '.'.
//
// The discovery payloads come first, so that Home Assistant has created
// the entities when the retained states arrive. Names are topic-safe by
// construction (devices.ValidName); in discovery object ids '.' becomes
// '_'.
func Publications(n *devices.Neighbourhood, plans []HomePlan, o PublishOptions) ([]Publication, error) {
	prefix := strings.TrimSuffix(o.Prefix, "/")
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if err := checkPrefix(prefix); err != nil {
		return nil, err
	}
	disc := strings.TrimSuffix(o.DiscoveryPrefix, "/")
	if disc == "" {
		disc = DefaultDiscoveryPrefix
	}
	if o.HomeAssistant {
		if o.Start.IsZero() {
			return nil, errors.New("publish: Home Assistant discovery needs the wall-clock start of slot 0")
		}
		if err := checkPrefix(disc); err != nil {
			return nil, err
		}
	}
	hz := n.Horizon
	times := SlotTimes(hz)
	// at[t] is slot t's start in minutes after o.Start (slots may
	// differ in length: devices.Horizon.Lengths).
	at := make([]int, hz.Slots+1)
	for t := range hz.Slots {
		at[t+1] = at[t] + hz.Minutes(t)
	}
	slot := func(t int) PlanSlot {
		s := PlanSlot{Slot: t, Time: times[t]}
		if !o.Start.IsZero() {
			s.Start = o.Start.Add(time.Duration(at[t]) * time.Minute).Format(time.RFC3339)
			s.End = o.Start.Add(time.Duration(at[t+1]) * time.Minute).Format(time.RFC3339)
		}
		return s
	}
	var states, configs []Publication
	for _, p := range plans {
		if !devices.ValidName(p.Home) {
			return nil, fmt.Errorf("publish: home name %q cannot be a topic level", p.Home)
		}
		if o.HomeAssistant && strings.Contains(p.Home, ".") {
			return nil, fmt.Errorf("publish: home name %q cannot be a Home Assistant node id (letters, digits, '_' and '-')", p.Home)
		}
		home := prefix + "/home/" + p.Home
		for _, d := range p.Devices {
			if !devices.ValidName(d.Device) {
				return nil, fmt.Errorf("publish: home %s: device name %q cannot be a topic level", p.Home, d.Device)
			}
			if len(d.Actions) != hz.Slots || len(d.KW) != hz.Slots {
				return nil, fmt.Errorf("publish: home %s device %s: %d actions for %d slots", p.Home, d.Device, len(d.Actions), hz.Slots)
			}
			pl := PlanPayload{PlanMeta: o.Meta, Home: p.Home, Device: d.Device, Kind: d.Kind, SlotMinutes: hz.SlotMinutes}
			for t := range hz.Slots {
				s := slot(t)
				s.Action, s.KW = d.Actions[t], d.KW[t]
				pl.Slots = append(pl.Slots, s)
			}
			topic := home + "/plan/" + d.Device
			if err := add(&states, topic, pl); err != nil {
				return nil, err
			}
			if o.HomeAssistant {
				id := "hearth_" + objectID(p.Home) + "_" + objectID(d.Device)
				cfg := haSensor(p.Home, d.Device+" plan", id, topic, currentTemplate("action", "value_json.slots[0].action"), o.Availability)
				cfg.Icon = "mdi:calendar-clock"
				if err := add(&configs, DiscoveryTopic(disc, p.Home, id), cfg); err != nil {
					return nil, err
				}
			}
		}
		if len(p.LoadKW) != hz.Slots {
			return nil, fmt.Errorf("publish: home %s: %d load values for %d slots", p.Home, len(p.LoadKW), hz.Slots)
		}
		lp := LoadPayload{PlanMeta: o.Meta, Home: p.Home, SlotMinutes: hz.SlotMinutes, EnergyKWh: p.EnergyKWh, EnergyCost: p.EnergyCost, PeakKW: p.PeakKW, CommittedKW: p.CommittedKW}
		for t := range hz.Slots {
			s := slot(t)
			s.KW = p.LoadKW[t]
			lp.Slots = append(lp.Slots, s)
		}
		topic := home + "/load"
		if err := add(&states, topic, lp); err != nil {
			return nil, err
		}
		if o.HomeAssistant {
			id := "hearth_" + objectID(p.Home) + "_load"
			cfg := haSensor(p.Home, "planned load", id, topic, currentTemplate("kw", "0"), o.Availability)
			cfg.Unit, cfg.DeviceClass, cfg.StateClass, cfg.Icon = "kW", "power", "measurement", "mdi:transmission-tower"
			if err := add(&configs, DiscoveryTopic(disc, p.Home, id), cfg); err != nil {
				return nil, err
			}
		}
	}
	return append(configs, states...), nil
}

// DiscoveryTopic is the Home Assistant discovery topic of a home's sensor
// object id under the discovery prefix disc.
func DiscoveryTopic(disc, home, objectID string) string {
	return disc + "/sensor/" + home + "/" + objectID + "/config"
}

func add(out *[]Publication, topic string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("publish %s: %w", topic, err)
	}
	*out = append(*out, Publication{Topic: topic, Payload: b, Retained: true})
	return nil
}

// HASensor is a Home Assistant MQTT discovery configuration of a sensor
// (https://www.home-assistant.io/integrations/sensor.mqtt/). It names
// the entity by default_entity_id ("sensor.<id>"), which replaces the
// object_id that Home Assistant 2026.4 no longer reads.
type HASensor struct {
	Name                   string           `json:"name"`
	UniqueID               string           `json:"unique_id"`
	DefaultEntityID        string           `json:"default_entity_id"`
	StateTopic             string           `json:"state_topic"`
	ValueTemplate          string           `json:"value_template"`
	JSONAttributesTopic    string           `json:"json_attributes_topic"`
	JSONAttributesTemplate string           `json:"json_attributes_template"`
	Availability           []HAAvailability `json:"availability,omitempty"`
	Unit                   string           `json:"unit_of_measurement,omitempty"`
	DeviceClass            string           `json:"device_class,omitempty"`
	StateClass             string           `json:"state_class,omitempty"`
	Icon                   string           `json:"icon,omitempty"`
	Device                 HADevice         `json:"device"`
}

// HAAvailability is one entry of a discovery configuration's
// availability list: the entity is available while topic says online.
type HAAvailability struct {
	Topic               string `json:"topic"`
	PayloadAvailable    string `json:"payload_available"`
	PayloadNotAvailable string `json:"payload_not_available"`
}

// AttributeSlots is how many slots of a plan the entities' attributes
// hold: Home Assistant does not record attributes above 16 KiB, and a
// plan of many slots would pass it (TestAttributesSize).
const AttributeSlots = 48

// attributesTemplate keeps a plan's provenance and its first
// AttributeSlots slots as the entity's attributes.
var attributesTemplate = "{{ {'round': value_json.round, 'created': value_json.created, 'valid_until': value_json.valid_until, " +
	"'slot_minutes': value_json.slot_minutes, 'slots': value_json.slots[:" + strconv.Itoa(AttributeSlots) + "]} | tojson }}"

func availability(topic string) []HAAvailability {
	if topic == "" {
		return nil
	}
	return []HAAvailability{{Topic: topic, PayloadAvailable: "online", PayloadNotAvailable: "offline"}}
}

// HADevice groups a home's entities into one Home Assistant device.
type HADevice struct {
	Identifiers  []string `json:"identifiers"`
	Name         string   `json:"name"`
	Manufacturer string   `json:"manufacturer"`
	Model        string   `json:"model"`
}

func haSensor(home, name, id, topic, tmpl, avail string) HASensor {
	return HASensor{
		Name: name, UniqueID: id, DefaultEntityID: "sensor." + id,
		StateTopic: topic, ValueTemplate: tmpl, JSONAttributesTopic: topic, JSONAttributesTemplate: attributesTemplate,
		Availability: availability(avail),
		Device:       haDevice(home),
	}
}

func haDevice(home string) HADevice {
	return HADevice{Identifiers: []string{"hearth_" + objectID(home)}, Name: home, Manufacturer: "hearth", Model: "home schedule"}
}

// currentTemplate is a Jinja template that shows field of the slot whose
// [start, end) holds now(), or def before the first slot and after the
// last. Home Assistant renders it when a plan arrives; the publisher
// re-publishes the retained plan at every slot boundary so the state
// follows the clock.
func currentTemplate(field, def string) string {
	return "{% set ns = namespace(v=" + def + ") %}" +
		"{% set t = as_timestamp(now()) %}" +
		"{% for s in value_json.slots %}" +
		"{% if as_timestamp(s.start) <= t < as_timestamp(s.end) %}{% set ns.v = s." + field + " %}{% endif %}" +
		"{% endfor %}{{ ns.v }}"
}

// objectID maps a name to Home Assistant's object id alphabet.
func objectID(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return '_'
	}, s)
}

// checkPrefix refuses topic prefixes with wildcards, empty levels or a
// leading '$'.
func checkPrefix(p string) error {
	if strings.HasPrefix(p, "$") {
		return fmt.Errorf("publish: topic prefix %q starts with '$'", p)
	}
	for _, level := range strings.Split(p, "/") {
		if level == "" || strings.ContainsAny(level, "+#") {
			return fmt.Errorf("publish: topic prefix %q: levels must be non-empty and free of '+' and '#'", p)
		}
	}
	return nil
}
