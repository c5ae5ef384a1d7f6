package mqtt

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/mqtt/topic"
	"github.com/hearth-dcop/hearth/mva"
)

func TestConfigResolve(t *testing.T) {
	good := func() AgentConfig {
		return AgentConfig{Config: Config{
			Broker: Broker{URL: "tcp://127.0.0.1:1883"}, Run: "r", Protocol: "dpop", Agents: []string{"a0", "a1"},
		}, Agent: 1}
	}
	c, err := good().resolve()
	if err != nil {
		t.Fatal(err)
	}
	if c.Prefix != DefaultPrefix || c.ClientID != "hearth-a1" || c.Limits.MaxPayload != 256<<10 || c.Timing.StatusInterval == 0 || c.Logger == nil {
		t.Fatalf("defaults not applied: %+v", c)
	}
	for name, edit := range map[string]func(*AgentConfig){
		"bad prefix":      func(c *AgentConfig) { c.Prefix = "a/#" },
		"no run":          func(c *AgentConfig) { c.Run = "" },
		"run with slash":  func(c *AgentConfig) { c.Run = "a/b" },
		"reserved run":    func(c *AgentConfig) { c.Run = "cmd" },
		"run named home":  func(c *AgentConfig) { c.Run = "home" },
		"reserved agent":  func(c *AgentConfig) { c.Agents = []string{"a0", "status"} },
		"no protocol":     func(c *AgentConfig) { c.Protocol = "" },
		"no agents":       func(c *AgentConfig) { c.Agents = nil },
		"bad agent name":  func(c *AgentConfig) { c.Agents = []string{"a0", "a+"} },
		"duplicate agent": func(c *AgentConfig) { c.Agents = []string{"a0", "a0"} },
		"index too large": func(c *AgentConfig) { c.Agent = 2 },
		"negative index":  func(c *AgentConfig) { c.Agent = -1 },
		"no broker":       func(c *AgentConfig) { c.Broker.URL = "" },
	} {
		c := good()
		edit(&c)
		if _, err := c.resolve(); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.HasPrefix(name, "reserved") && !errors.Is(err, topic.ErrReserved) {
			t.Errorf("%s: %v does not say the name is reserved", name, err)
		}
	}
}

func TestAgentNames(t *testing.T) {
	p := &mva.Problem{Agents: []mva.Agent{{Name: "home-1"}, {Name: "home-2"}}}
	if got := AgentNames(p); got[0] != "home-1" || got[1] != "home-2" {
		t.Fatal(got)
	}
	p.Agents[1].Name = "a/b"
	if got := AgentNames(p); got[0] != "a0" || got[1] != "a1" {
		t.Fatal(got)
	}
	p.Agents[1].Name = "home-1"
	if got := AgentNames(p); got[1] != "a1" {
		t.Fatal(got)
	}
	p.Agents[1].Name = "inbox" // reserved: see topic.CheckAgent
	if got := AgentNames(p); got[1] != "a1" {
		t.Fatal(got)
	}
}

func TestTimingForAgents(t *testing.T) {
	tests := []struct {
		n                           int
		in                          Timing
		status, connect, retransmit time.Duration
	}{
		{3, Timing{}, time.Second, 10 * time.Second, 30 * time.Second},
		{200, Timing{}, 10 * time.Second, 60 * time.Second, 30 * time.Second},
		{1000, Timing{}, 50 * time.Second, 300 * time.Second, 150 * time.Second},
		{200, Timing{StatusInterval: time.Second, ConnectTimeout: time.Second, RetransmitAfter: time.Second},
			time.Second, time.Second, time.Second},
	}
	for _, tc := range tests {
		got := tc.in.ForAgents(tc.n)
		if got.StatusInterval != tc.status || got.ConnectTimeout != tc.connect || got.RetransmitAfter != tc.retransmit {
			t.Errorf("%d agents, %+v: got %+v", tc.n, tc.in, got)
		}
	}
}
