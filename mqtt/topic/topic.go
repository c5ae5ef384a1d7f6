// Package topic is hearth's MQTT topic layout, shared by the runtime (which
// publishes and subscribes) and the embedded broker (whose access control
// reads the same topics):
//
//	<prefix>/<run>/inbox/<to>/<from>   protocol envelopes from agent <from> to <to>
//	<prefix>/<run>/status/<agent>      an agent's retained run status (JSON)
//	<prefix>/presence/<agent>          retained "online"/"offline", with a last will
//
// The sender is a topic level of its own because brokers authorise topics,
// never payloads: a home's credentials allow it to publish only to topics
// that end in its own name, and receivers check that the envelope names the
// same sender as the topic.
package topic

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Level names of the layout.
const (
	Inbox    = "inbox"
	Status   = "status"
	Presence = "presence"
)

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
	StatusTopic
	PresenceTopicKind
)

// Parsed is a topic split into the layout's parts.
type Parsed struct {
	Kind Kind
	// Run is empty for presence topics.
	Run string
	// Agent is the inbox's receiver, the status's or presence's agent.
	Agent string
	// From is an inbox topic's sender.
	From string
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
	case len(lv) == 3 && lv[1] == Status:
		return Parsed{Kind: StatusTopic, Run: lv[0], Agent: lv[2]}
	case len(lv) == 4 && lv[1] == Inbox:
		return Parsed{Kind: InboxTopic, Run: lv[0], Agent: lv[2], From: lv[3]}
	}
	return Parsed{}
}
