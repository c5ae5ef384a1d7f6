package topic

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"a0", "home-12", "maison é", "家", strings.Repeat("x", MaxName)} {
		if err := CheckName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a/b", "a+", "#", "$SYS", "a\x00", "a\n", "\xff", strings.Repeat("x", MaxName+1)} {
		if err := CheckName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for _, bad := range []string{"", "/a", "a/", "a//b", "a/+/b"} {
		if err := CheckPrefix(bad); err == nil {
			t.Errorf("prefix %q accepted", bad)
		}
	}
	if err := CheckPrefix("hearth/nb-1"); err != nil {
		t.Error(err)
	}
}

func TestLayoutParse(t *testing.T) {
	l := Layout{Prefix: "hearth/nb", Run: "r1"}
	tests := []struct {
		topic string
		want  Parsed
	}{
		{l.Inbox("a1", "a0"), Parsed{Kind: InboxTopic, Run: "r1", Agent: "a1", From: "a0"}},
		{l.Status("a2"), Parsed{Kind: StatusTopic, Run: "r1", Agent: "a2"}},
		{l.Multicast("a0"), Parsed{Kind: MulticastTopic, Run: "r1", From: "a0"}},
		{"hearth/nb/r1/multicast/a0/a1", Parsed{}},
		{"hearth/nb/r1/multicast/+", Parsed{}},
		{PresenceTopic("hearth/nb", "a3"), Parsed{Kind: PresenceTopicKind, Agent: "a3"}},
		{"hearth/nb/r1/inbox/a1", Parsed{}},
		{"hearth/nb/r1/inbox/a1/a0/x", Parsed{}},
		{"hearth/nbx/r1/status/a2", Parsed{}},
		{"hearth/nb/r1/status/+", Parsed{}},
		{"other/r1/status/a2", Parsed{}},
		{"hearth/nb/r1/other/a2", Parsed{}},
		{CmdTopic("hearth/nb"), Parsed{Kind: CmdTopicKind}},
		{HomeCmdTopic("hearth/nb", "h1"), Parsed{Kind: CmdTopicKind, Agent: "h1"}},
		{"hearth/nb/cmd/h1/x", Parsed{}},
		{ResultTopic("hearth/nb", "round-3", "h1"), Parsed{Kind: ResultTopicKind, Run: "round-3", Agent: "h1"}},
		{HomeTopic("hearth/nb", "h1", "plan", "boiler"), Parsed{Kind: HomeTopicKind, Agent: "h1", Rest: "plan/boiler"}},
		{HomeTopic("hearth/nb", "h1", "load"), Parsed{Kind: HomeTopicKind, Agent: "h1", Rest: "load"}},
		{"hearth/nb/home/h1", Parsed{}},
		// Reserved second levels are not runs.
		{"hearth/nb/home/status/h1", Parsed{Kind: HomeTopicKind, Agent: "status", Rest: "h1"}},
		{"hearth/nb/cmd/status/a2", Parsed{}},
		{"hearth/nb/presence/inbox/a1/a0", Parsed{}},
	}
	for _, tc := range tests {
		if got := Parse("hearth/nb", tc.topic); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.topic, got, tc.want)
		}
	}
	if f := l.InboxFilter("a1"); f != "hearth/nb/r1/inbox/a1/+" {
		t.Error(f)
	}
	if f := l.MulticastFilter(); f != "hearth/nb/r1/multicast/+" {
		t.Error(f)
	}
	if f := l.StatusFilter(); f != "hearth/nb/r1/status/+" {
		t.Error(f)
	}
	if id := ClientID("hearth/nb", "a1"); id != "hearth-nb-a1" {
		t.Error(id)
	}
	if d := DiscoveryTopic(DefaultDiscovery, "h1", "h1_load"); d != "homeassistant/sensor/h1/h1_load/config" {
		t.Error(d)
	}
}

func TestReservedNames(t *testing.T) {
	for _, tc := range []struct {
		name          string
		run, agent    bool // valid as a run id, as an agent name
		reservedError bool
	}{
		{"round-1", true, true, false},
		{"cmd", false, true, true},
		{"home", false, true, true},
		{"presence", false, true, true},
		{"inbox", true, false, true},
		{"status", true, false, true},
		{"multicast", true, false, true},
		{"result", true, false, true},
		{"Home", true, true, false}, // levels are case-sensitive
		{"a/b", false, false, false},
	} {
		errRun, errAgent := CheckRun(tc.name), CheckAgent(tc.name)
		if (errRun == nil) != tc.run || (errAgent == nil) != tc.agent {
			t.Errorf("%q: run %v, agent %v", tc.name, errRun, errAgent)
		}
		if got := errors.Is(errRun, ErrReserved) || errors.Is(errAgent, ErrReserved); got != tc.reservedError {
			t.Errorf("%q: reserved %v (%v, %v)", tc.name, got, errRun, errAgent)
		}
	}
}
