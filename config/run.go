package config

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Run is the [run] table: when `hearth run -c FILE --home NAME` starts a
// coordination round by itself, besides the rounds that commands, SIGHUP
// and changed inputs start. Every home derives a scheduled round's id from
// its date and time alone, so homes whose clocks agree (NTP, and the same
// time zone) meet in the same round without a message.
type Run struct {
	// At are daily clock times, in minutes after local midnight, sorted
	// and distinct.
	At []int
	// Every is the period of rounds aligned on local midnight (so "15m"
	// runs at :00, :15, :30 and :45); 0 means none. It divides 24 h.
	Every time.Duration
}

// Scheduled reports whether [run] starts any rounds.
func (r Run) Scheduled() bool { return len(r.At) > 0 || r.Every > 0 }

// Publish is the [publish] table: what `hearth run` publishes besides each
// home's plan and load.
type Publish struct {
	// HomeAssistant adds Home Assistant MQTT discovery configurations.
	HomeAssistant bool
	// DiscoveryPrefix is Home Assistant's discovery prefix.
	DiscoveryPrefix string
}

// DefaultDiscoveryPrefix is Home Assistant's own default.
const DefaultDiscoveryPrefix = "homeassistant"

// run reads [run].
func (l *loader) run(root *node) Run {
	var r Run
	t, ok := root.table("run")
	if !ok {
		return r
	}
	if times, ok := t.strs("at"); ok {
		for i, s := range times {
			m, err := parseClock(s)
			if err != nil {
				t.src.errorf(index(t.key("at"), i), "%v", err)
				continue
			}
			m %= 1440
			if slices.Contains(r.At, m) {
				t.src.errorf(index(t.key("at"), i), "%s is listed twice", fmtClock(m))
				continue
			}
			r.At = append(r.At, m)
		}
		slices.Sort(r.At)
	}
	if s, ok := t.str("every"); ok {
		d, err := time.ParseDuration(s)
		switch {
		case err != nil || d < time.Second || d > 24*time.Hour || d%time.Second != 0:
			t.errorf("every", "%q is not a whole number of seconds between 1s and 24h (write e.g. \"15m\" or \"1h\")", s)
		case (24*time.Hour)%d != 0:
			t.errorf("every", "%s does not divide a day, so its rounds would drift against the clock; use a divisor of 24h such as 5m, 15m, 30m, 1h or 6h", s)
		default:
			r.Every = d
		}
	}
	t.done("at", "every")
	return r
}

// publish reads [publish].
func (l *loader) publish(root *node) Publish {
	p := Publish{DiscoveryPrefix: DefaultDiscoveryPrefix}
	t, ok := root.table("publish")
	if !ok {
		return p
	}
	if v, ok := t.get("home_assistant"); ok {
		b, isBool := v.(bool)
		if !isBool {
			t.errorf("home_assistant", "want true or false, got %s", typeName(v))
		}
		p.HomeAssistant = b
	}
	if s, ok := t.str("discovery_prefix"); ok {
		if err := checkTopic(s); err != nil {
			t.errorf("discovery_prefix", "%v", err)
		} else {
			p.DiscoveryPrefix = s
		}
	}
	t.done("home_assistant", "discovery_prefix")
	return p
}

// checkTopic refuses what cannot prefix MQTT topics: wildcards, empty
// levels, and a leading '$' (reserved for the broker).
func checkTopic(s string) error {
	if s == "" || strings.HasPrefix(s, "$") {
		return fmt.Errorf("%q: use a non-empty topic that does not start with '$'", s)
	}
	for _, level := range strings.Split(s, "/") {
		if level == "" || strings.ContainsAny(level, "+#") {
			return fmt.Errorf("%q: use a topic without wildcards (# +) or empty levels (no leading, trailing or double '/')", s)
		}
	}
	return nil
}

// discoveryNames checks, with Home Assistant discovery on, that every
// home's name can be the node id of its discovery topics
// (<discovery>/sensor/<home>/<object_id>/config): Home Assistant accepts
// only letters, digits, '_' and '-' there, and the level must be the home's
// name itself for a broker's per-home rule (Mosquitto's %u) to match it.
func (l *loader) discoveryNames(root *node, cfg *Config) {
	if !cfg.Publish.HomeAssistant {
		return
	}
	for _, h := range cfg.Neighbourhood.Homes {
		if strings.Contains(h.Name, ".") {
			root.src.errorf("publish.home_assistant", "home %q: Home Assistant discovery allows letters, digits, '_' and '-' in a home's name; rename the home or set home_assistant = false", h.Name)
		}
	}
}

// Equal reports whether r and o schedule the same rounds.
func (r Run) Equal(o Run) bool { return slices.Equal(r.At, o.At) && r.Every == o.Every }
