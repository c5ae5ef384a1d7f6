package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// haKeys are the discovery keys Home Assistant's MQTT sensor, number and
// select platforms document (home-assistant.io/integrations/*.mqtt, read
// in November 2026), the subset hearth may publish; required are those
// each must carry. object_id is absent on purpose: Home Assistant 2026.4
// stops reading it; default_entity_id ("<component>.<slug>") replaces it.
var haKeys = map[string]struct{ allowed, required []string }{
	"sensor": {
		allowed: []string{"name", "unique_id", "default_entity_id", "state_topic", "value_template", "json_attributes_topic",
			"json_attributes_template", "availability", "unit_of_measurement", "device_class", "state_class", "icon", "device"},
		required: []string{"state_topic", "unique_id", "default_entity_id", "device"},
	},
	"number": {
		allowed: []string{"name", "unique_id", "default_entity_id", "command_topic", "state_topic", "min", "max", "step", "mode",
			"unit_of_measurement", "availability", "icon", "device"},
		required: []string{"command_topic", "unique_id", "default_entity_id", "min", "max", "step", "device"},
	},
	"select": {
		allowed:  []string{"name", "unique_id", "default_entity_id", "command_topic", "state_topic", "options", "availability", "icon", "device"},
		required: []string{"command_topic", "options", "unique_id", "default_entity_id", "device"},
	},
}

// checkDiscovery checks a discovery configuration against haKeys and the
// rules of the keys' values.
func checkDiscovery(t *testing.T, topic string, payload []byte, avail string) {
	t.Helper()
	lv := strings.Split(topic, "/")
	if len(lv) != 5 || lv[4] != "config" {
		t.Fatalf("%s: not <disc>/<component>/<node>/<object>/config", topic)
	}
	component, object := lv[1], lv[3]
	spec, ok := haKeys[component]
	if !ok {
		t.Fatalf("%s: component %q", topic, component)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	for k := range m {
		if !slices.Contains(spec.allowed, k) {
			t.Errorf("%s: key %q is not a %s discovery key hearth publishes", topic, k, component)
		}
	}
	for _, k := range spec.required {
		if _, ok := m[k]; !ok {
			t.Errorf("%s: no %q", topic, k)
		}
	}
	var id string
	_ = json.Unmarshal(m["default_entity_id"], &id)
	if id != component+"."+object {
		t.Errorf("%s: default_entity_id %q, want %q", topic, id, component+"."+object)
	}
	if avail == "" {
		if _, ok := m["availability"]; ok {
			t.Errorf("%s: availability without a topic that says online", topic)
		}
		return
	}
	var av []map[string]string
	if err := json.Unmarshal(m["availability"], &av); err != nil || len(av) != 1 || av[0]["topic"] != avail ||
		av[0]["payload_available"] != "online" || av[0]["payload_not_available"] != "offline" {
		t.Errorf("%s: availability %s, want %s online/offline", topic, m["availability"], avail)
	}
	if component == "number" {
		var mode string
		_ = json.Unmarshal(m["mode"], &mode)
		if !slices.Contains([]string{"auto", "box", "slider"}, mode) {
			t.Errorf("%s: mode %q", topic, mode)
		}
	}
}

func TestDiscoverySchema(t *testing.T) {
	f := example(t)
	for _, avail := range []string{"", "street/hearth/home/alder/availability"} {
		pubs, err := Publications(f.n, f.homes.Schedules[:1], PublishOptions{Prefix: "street/hearth", Start: start, HomeAssistant: true, Availability: avail})
		if err != nil {
			t.Fatal(err)
		}
		targets := []Target{
			{Device: "ev", Name: "target_pct", Label: "ev target charge", Min: 0, Max: 100, Step: 5, Unit: "%",
				CommandTopic: "street/hearth/home/alder/set/ev/target_pct", StateTopic: "street/hearth/home/alder/target/ev/target_pct"},
			{Device: "ev", Name: "departure", Label: "ev departure", Options: []string{"06:00", "07:00"},
				CommandTopic: "street/hearth/home/alder/set/ev/departure", StateTopic: "street/hearth/home/alder/target/ev/departure"},
		}
		tp, err := TargetPublications("", "alder", targets, avail)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range append(pubs, tp...) {
			if strings.HasPrefix(p.Topic, "homeassistant/") {
				checkDiscovery(t, p.Topic, p.Payload, avail)
				n++
			}
		}
		if n != len(f.homes.Schedules[0].Devices)+1+len(targets) {
			t.Errorf("%d discovery configurations", n)
		}
	}
	if _, err := TargetPublications("", "a.b", nil, ""); err == nil {
		t.Error("a home name with '.' accepted as a node id")
	}
	if _, err := TargetPublications("", "a", []Target{{Device: "ev", Name: "x"}}, ""); err == nil {
		t.Error("a target without options or range accepted")
	}
}

// TestAttributesSize: Home Assistant does not record attributes above
// 16 KiB. The attributes template keeps AttributeSlots slots; here the
// largest such attributes — long action names, full RFC 3339 times with
// offsets, the largest powers — stay under the limit.
func TestAttributesSize(t *testing.T) {
	loc := time.FixedZone("", 5*3600+45*60)
	t0 := time.Date(2026, 11, 26, 23, 45, 0, 0, loc)
	var slots []PlanSlot
	for k := range AttributeSlots {
		from := t0.Add(time.Duration(k) * 15 * time.Minute)
		slots = append(slots, PlanSlot{Slot: 9999, Time: "23:45", Start: from.Format(time.RFC3339), End: from.Add(15 * time.Minute).Format(time.RFC3339),
			Action: strings.Repeat("x", 32), KW: -123456.789012})
	}
	attrs := map[string]any{"round": strings.Repeat("r", 64), "created": t0.Format(time.RFC3339), "valid_until": t0.Format(time.RFC3339),
		"slot_minutes": 15, "slots": slots}
	b, err := json.Marshal(attrs)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) >= 16*1024 {
		t.Errorf("attributes of %d bytes, Home Assistant's limit is 16384", len(b))
	}
	if !strings.Contains(attributesTemplate, fmt.Sprintf("slots[:%d]", AttributeSlots)) {
		t.Errorf("the attributes template keeps other than %d slots: %s", AttributeSlots, attributesTemplate)
	}
}
