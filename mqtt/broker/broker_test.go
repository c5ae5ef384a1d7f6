package broker

import (
	"strings"
	"testing"
)

func TestACLRules(t *testing.T) {
	h, err := newACLHook("hearth/nb", []User{{Name: "u1", Password: "p", Home: "h1"}, {Name: "h2", Password: "p"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		topic string
		write bool
		want  bool
	}{
		// Publishing: only as h1.
		{"hearth/nb/r/inbox/h2/h1", true, true},
		{"hearth/nb/r/inbox/h2/h2", true, false},
		{"hearth/nb/r/inbox/h2/+", true, false},
		{"hearth/nb/r/status/h1", true, true},
		{"hearth/nb/r/status/h2", true, false},
		{"hearth/nb/presence/h1", true, true},
		{"hearth/nb/presence/h2", true, false},
		{"hearth/nb/r/inbox/h2/h1/x", true, false},
		{"hearth/other/r/inbox/h2/h1", true, false},
		{"hearth/nb/r/unknown/h1", true, false},
		{"hearth/nb/$r/status/h1", true, false},
		// Subscribing and receiving: its own inbox, every status and presence.
		{"hearth/nb/r/inbox/h1/+", false, true},
		{"hearth/nb/+/inbox/h1/+", false, true},
		{"hearth/nb/r/inbox/h1/h2", false, true},
		{"hearth/nb/r/inbox/h2/+", false, false},
		{"hearth/nb/r/inbox/+/+", false, false},
		{"hearth/nb/r/inbox/h1/#", false, false},
		{"hearth/nb/#", false, false},
		{"#", false, false},
		{"hearth/nb/r/status/+", false, true},
		{"hearth/nb/+/status/+", false, true},
		{"hearth/nb/r/status/h2", false, true},
		{"hearth/nb/presence/+", false, true},
		{"hearth/nb/presence/#", false, false},
	}
	for _, tc := range tests {
		if got := h.allowed("h1", tc.topic, tc.write); got != tc.want {
			t.Errorf("%s (write %v): got %v", tc.topic, tc.write, got)
		}
	}
	if h.users["u1"].clientID != "hearth-nb-h1" || h.users["h2"].home != "h2" {
		t.Fatalf("users %+v", h.users)
	}
}

func TestStartErrors(t *testing.T) {
	for name, cfg := range map[string]Config{
		"bad prefix":     {Prefix: "a/+"},
		"missing cert":   {CertFile: "/nonexistent.pem", KeyFile: "/nonexistent.key"},
		"bad home":       {Users: []User{{Name: "x/y", Password: "p"}}},
		"duplicate user": {Users: []User{{Name: "x", Password: "p"}, {Name: "x", Password: "q"}}},
		"bad address":    {Addr: "256.0.0.1:0"},
	} {
		if b, err := Start(cfg); err == nil {
			_ = b.Close()
			t.Errorf("%s: started", name)
		}
	}
}

func TestRestartSamePort(t *testing.T) {
	b, err := Start(Config{})
	if err != nil {
		t.Fatal(err)
	}
	addr := b.Addr()
	if !strings.HasPrefix(addr, "127.0.0.1:") || strings.HasSuffix(addr, ":0") || b.URL() != "tcp://"+addr {
		t.Fatalf("addr %s url %s", addr, b.URL())
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b2, err := Start(Config{Addr: addr})
	if err != nil {
		t.Fatalf("restart on %s: %v", addr, err)
	}
	_ = b2.Close()
}

func TestMosquittoACL(t *testing.T) {
	acl := MosquittoACL("hearth/nb")
	for _, want := range []string{
		"pattern write hearth/nb/+/inbox/+/%u\n", "pattern read hearth/nb/+/inbox/%u/+\n",
		"pattern write hearth/nb/+/status/%u\n", "pattern write hearth/nb/presence/%u\n",
	} {
		if !strings.Contains(acl, want) {
			t.Errorf("missing %q in\n%s", want, acl)
		}
	}
}
