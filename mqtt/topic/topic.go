// Package topic is hearth's MQTT topic layout, shared by the runtime (which
// publishes and subscribes), `hearth run` and the embedded broker (whose
// access control reads the same topics):
//
//	<prefix>/<run>/inbox/<to>/<from>   protocol envelopes (and acknowledgements) from agent <from> to <to>
//	<prefix>/<run>/multicast/<from>    one message from agent <from> to many (envelope.Multicast)
//	<prefix>/<run>/status/<agent>      an agent's retained run status (JSON)
//	<prefix>/presence/<agent>          retained "online"/"offline", with a last will
//	<prefix>/cmd                       a controller's round command (`hearth run`)
//	<prefix>/cmd/<home>                a home asking for a round (its inputs changed)
//	<prefix>/<round>/result/<home>     a home's retained result of a round (JSON)
//	<prefix>/home/<home>/…             a home's published plans: …/plan/<device>, …/load
//	<discovery>/sensor/<home>/<object>/config   Home Assistant discovery (node_id = the home)
//
// The sender is a topic level of its own because brokers authorise topics,
// never payloads: a home's credentials allow it to publish only to topics
// that end in (or, under home/ and discovery, name) its own name, and
// receivers check that the envelope names the same sender as the topic.
//
// Runs and rounds share the second level with presence, cmd and home, so
// those are not valid run ids (CheckRun); and inbox, multicast, status and result,
// which a Mosquitto pattern with a '+' for the run level could otherwise
// reach under home/, are not valid agent names (CheckAgent).
package topic

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Level names of the layout.
const (
	Inbox = "inbox"
	// Multicast is the level of the topics on which an agent publishes
	// one message for many of its peers at once.
	Multicast = "multicast"
	Status    = "status"
	Presence  = "presence"
	Cmd       = "cmd"
	Result    = "result"
	Home      = "home"
	// Sensor is the Home Assistant component level of discovery topics.
	Sensor = "sensor"
)

// DefaultDiscovery is Home Assistant's default MQTT discovery prefix.
const DefaultDiscovery = "homeassistant"

// reservedRuns are the second-level names that are not runs: a run (or
// round) with one of these ids would share its topics.
var reservedRuns = []string{Presence, Cmd, Home}

// reservedAgents are the third-level names of run topics: an agent (home)
// with one of these names would have home/<name>/… topics that a run's
// inbox, status or result pattern with a '+' for the run also matches.
var reservedAgents = []string{Inbox, Multicast, Status, Result}

// ErrReserved is wrapped by CheckRun's and CheckAgent's error for a name
// the layout reserves.
var ErrReserved = errors.New("reserved name")

// MaxName is the longest agent name, run id or prefix level, in bytes.
const MaxName = 128

// ErrName is wrapped by every error about a name that cannot be a topic
// level.
var ErrName = errors.New("invalid name")

// CheckName reports whether s can be one topic level: non-empty, at most
// MaxName bytes of UTF-8 without control characters, none of the MQTT
// separators and wildcards '/', '+', '#', and no leading '$' (brokers
// reserve those topics).
func CheckName(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty", ErrName)
	case len(s) > MaxName:
		return fmt.Errorf("%w: %.20q… is longer than %d bytes", ErrName, s, MaxName)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: %q is not UTF-8", ErrName, s)
	case s[0] == '$':
		return fmt.Errorf("%w: %q starts with '$'", ErrName, s)
	}
	for _, r := range s {
		if r == '/' || r == '+' || r == '#' || unicode.IsControl(r) {
			return fmt.Errorf("%w: %q holds %q", ErrName, s, r)
		}
	}
	return nil
}

// CheckRun reports whether s can be a run or round id: a valid level
// (CheckName) other than presence, cmd and home.
func CheckRun(s string) error {
	if err := CheckName(s); err != nil {
		return err
	}
	if slices.Contains(reservedRuns, s) {
		return fmt.Errorf("%w: %q names other topics under the prefix (%s are reserved)", ErrReserved, s, strings.Join(reservedRuns, ", "))
	}
	return nil
}

// CheckAgent reports whether s can be an agent's (home's) name: a valid
// level (CheckName) other than inbox, multicast, status and result.
func CheckAgent(s string) error {
	if err := CheckName(s); err != nil {
		return err
	}
	if slices.Contains(reservedAgents, s) {
		return fmt.Errorf("%w: agent name %q is a level of the run topics (%s are reserved)", ErrReserved, s, strings.Join(reservedAgents, ", "))
	}
	return nil
}

// CheckPrefix reports whether p is a valid prefix: one or more valid
// levels separated by '/'.
func CheckPrefix(p string) error {
	if p == "" {
		return fmt.Errorf("%w: empty prefix", ErrName)
	}
	for _, l := range strings.Split(p, "/") {
		if err := CheckName(l); err != nil {
			return fmt.Errorf("prefix %q: %w", p, err)
		}
	}
	return nil
}

// Layout builds the topics of one run.
type Layout struct {
	Prefix string
	Run    string
}

// Inbox is the topic agent from publishes its envelopes for agent to on.
func (l Layout) Inbox(to, from string) string {
	return l.Prefix + "/" + l.Run + "/" + Inbox + "/" + to + "/" + from
}

// InboxFilter is agent to's subscription: every sender's topic to it.
func (l Layout) InboxFilter(to string) string {
	return l.Prefix + "/" + l.Run + "/" + Inbox + "/" + to + "/+"
}

// Multicast is the topic agent from publishes its multicast envelopes on.
func (l Layout) Multicast(from string) string {
	return l.Prefix + "/" + l.Run + "/" + Multicast + "/" + from
}

// MulticastFilter matches every multicast topic of the run. Agents read
// them all and skip the envelopes that do not name them: a multicast
// carries a message to most agents of the run, or it is not sent as one.
func (l Layout) MulticastFilter() string {
	return l.Prefix + "/" + l.Run + "/" + Multicast + "/+"
}

// Status is agent's retained status topic.
func (l Layout) Status(agent string) string {
	return l.Prefix + "/" + l.Run + "/" + Status + "/" + agent
}

// StatusFilter matches every status topic of the run.
func (l Layout) StatusFilter() string {
	return l.Prefix + "/" + l.Run + "/" + Status + "/+"
}

// PresenceTopic is agent's retained presence topic; it is not per run,
// since a home is online or not whatever it is doing.
func PresenceTopic(prefix, agent string) string {
	return prefix + "/" + Presence + "/" + agent
}

// PresenceFilter matches every presence topic under prefix.
func PresenceFilter(prefix string) string { return prefix + "/" + Presence + "/+" }

// CmdTopic is where a controller publishes round commands.
func CmdTopic(prefix string) string { return prefix + "/" + Cmd }

// HomeCmdTopic is where home asks for a round.
func HomeCmdTopic(prefix, home string) string { return prefix + "/" + Cmd + "/" + home }

// ResultTopic is home's retained result of round.
func ResultTopic(prefix, round, home string) string {
	return prefix + "/" + round + "/" + Result + "/" + home
}

// HomeTopic is the topic of home's publication under prefix/home/home,
// e.g. HomeTopic(p, h, "plan", device) or HomeTopic(p, h, "load").
func HomeTopic(prefix, home string, levels ...string) string {
	return strings.Join(append([]string{prefix, Home, home}, levels...), "/")
}

// DiscoveryTopic is the Home Assistant discovery config topic of sensor
// object of home, in HA's node_id form
// <discovery>/sensor/<home>/<object>/config, which keeps the home a whole
// level (as Mosquitto's %u requires).
func DiscoveryTopic(discovery, home, object string) string {
	return discovery + "/" + Sensor + "/" + home + "/" + object + "/config"
}

// ClientID is the stable MQTT client id of agent under prefix. It is the
// same for every run, so that the broker keeps one persistent session per
// home rather than one per run.
func ClientID(prefix, agent string) string {
	return strings.ReplaceAll(prefix, "/", "-") + "-" + agent
}

// Kind says which part of the layout a parsed topic belongs to.
type Kind int

// Kinds of topics.
const (
	Unknown Kind = iota
	InboxTopic
	MulticastTopic
	StatusTopic
	PresenceTopicKind
	CmdTopicKind    // <prefix>/cmd (Agent empty) or <prefix>/cmd/<home>
	ResultTopicKind // <prefix>/<round>/result/<home> (Run is the round)
	HomeTopicKind   // <prefix>/home/<home>/… (Rest is …)
)

// Parsed is a topic split into the layout's parts.
type Parsed struct {
	Kind Kind
	// Run is the run (or a result's round); empty for the topics that
	// are not per run.
	Run string
	// Agent is the inbox's receiver, the status's, presence's, result's
	// or home topic's agent, or the home asking for a round.
	Agent string
	// From is an inbox or multicast topic's sender.
	From string
	// Rest is what follows <prefix>/home/<home>/, e.g. "plan/boiler".
	Rest string
}

// Parse splits t, a topic (no wildcards), under prefix. Unknown means the
// topic is not one of the layout's, or one of its levels is not a valid
// name.
func Parse(prefix, t string) Parsed {
	rest, ok := strings.CutPrefix(t, prefix+"/")
	if !ok {
		return Parsed{}
	}
	lv := strings.Split(rest, "/")
	for _, l := range lv {
		if CheckName(l) != nil {
			return Parsed{}
		}
	}
	switch {
	case len(lv) == 2 && lv[0] == Presence:
		return Parsed{Kind: PresenceTopicKind, Agent: lv[1]}
	case len(lv) == 1 && lv[0] == Cmd:
		return Parsed{Kind: CmdTopicKind}
	case len(lv) == 2 && lv[0] == Cmd:
		return Parsed{Kind: CmdTopicKind, Agent: lv[1]}
	case len(lv) >= 3 && lv[0] == Home:
		return Parsed{Kind: HomeTopicKind, Agent: lv[1], Rest: strings.Join(lv[2:], "/")}
	case CheckRun(lv[0]) != nil:
		return Parsed{}
	case len(lv) == 3 && lv[1] == Status:
		return Parsed{Kind: StatusTopic, Run: lv[0], Agent: lv[2]}
	case len(lv) == 3 && lv[1] == Multicast:
		return Parsed{Kind: MulticastTopic, Run: lv[0], From: lv[2]}
	case len(lv) == 3 && lv[1] == Result:
		return Parsed{Kind: ResultTopicKind, Run: lv[0], Agent: lv[2]}
	case len(lv) == 4 && lv[1] == Inbox:
		return Parsed{Kind: InboxTopic, Run: lv[0], Agent: lv[2], From: lv[3]}
	}
	return Parsed{}
}
