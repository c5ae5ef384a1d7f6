package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/mqtt/topic"
)

func TestACLRules(t *testing.T) {
	h, err := newACLHook("hearth/nb", "ha", []User{
		{Name: "u1", Password: "p", Home: "h1"}, {Name: "h2", Password: "p"}, {Name: "ctl", Password: "p", Controller: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	h1, ctl := h.users["u1"], h.users["ctl"]
	tests := []struct {
		topic string
		write bool
		want  bool
	}{
		// Protocol runs. Publishing: only as h1.
		{"hearth/nb/r/inbox/h2/h1", true, true},
		{"hearth/nb/r/inbox/h2/h2", true, false},
		{"hearth/nb/r/inbox/h2/+", true, false},
		{"hearth/nb/r/status/h1", true, true},
		{"hearth/nb/r/status/h2", true, false},
		{"hearth/nb/r/multicast/h1", true, true},
		{"hearth/nb/r/multicast/h2", true, false},
		{"hearth/nb/r/multicast/+", true, false},
		{"hearth/nb/presence/h1", true, true},
		{"hearth/nb/presence/h2", true, false},
		{"hearth/nb/r/inbox/h2/h1/x", true, false},
		{"hearth/other/r/inbox/h2/h1", true, false},
		{"hearth/nb/r/unknown/h1", true, false},
		{"hearth/nb/$r/status/h1", true, false},
		// Reserved second levels are not runs.
		{"hearth/nb/cmd/status/h1", true, false},
		{"hearth/nb/home/status/h1", true, false},
		{"hearth/nb/presence/inbox/h2/h1", true, false},
		{"hearth/nb/home/result/h1", true, false},
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
		{"hearth/nb/r/multicast/+", false, true},
		{"hearth/nb/+/multicast/+", false, true},
		{"hearth/nb/r/multicast/h2", false, true},
		{"hearth/nb/cmd/multicast/+", false, false},
		{"hearth/nb/presence/+", false, true},
		{"hearth/nb/presence/#", false, false},
		// Read as home "inbox"'s plans, which no home can publish: no
		// home may be named inbox (topic.CheckAgent).
		{"hearth/nb/home/inbox/h1/+", false, true},
		// Round commands: read the controller's and every home's; ask
		// for a round only as h1; the controller's topic is not h1's.
		{"hearth/nb/cmd", false, true},
		{"hearth/nb/cmd/+", false, true},
		{"hearth/nb/cmd/h2", false, true},
		{"hearth/nb/cmd/#", false, false},
		{"hearth/nb/cmd/h1", true, true},
		{"hearth/nb/cmd/h2", true, false},
		{"hearth/nb/cmd/+", true, false},
		{"hearth/nb/cmd", true, false},
		{"hearth/nb/cmd/h1/x", true, false},
		// Results: publish its own, read everyone's.
		{"hearth/nb/round-1/result/h1", true, true},
		{"hearth/nb/round-1/result/h2", true, false},
		{"hearth/nb/round-1/result/+", true, false},
		{"hearth/nb/+/result/h1", true, false},
		{"hearth/nb/cmd/result/h1", true, false},
		{"hearth/nb/round-1/result/h2", false, true},
		{"hearth/nb/+/result/+", false, true},
		{"hearth/nb/round-1/result/#", false, false},
		// Published plans: its own home only; read every home's.
		{"hearth/nb/home/h1/plan/boiler", true, true},
		{"hearth/nb/home/h1/load", true, true},
		{"hearth/nb/home/h1", true, true},
		{"hearth/nb/home/h2/plan/boiler", true, false},
		{"hearth/nb/home/h2/load", true, false},
		{"hearth/nb/home/+/load", true, false},
		{"hearth/nb/home/h1/#", true, false},
		{"hearth/nb/home/h1/plan/+", true, false},
		{"hearth/nb/home", true, false},
		{"hearth/nb/home/+/#", false, true},
		{"hearth/nb/home/h2/plan/+", false, true},
		{"hearth/nb/home/h2/load", false, true},
		{"hearth/nb/home/#", false, true},
		{"hearth/nb/home/h2/#/x", false, false},
		{"hearth/nb/home", false, false},
		// Home Assistant discovery under "ha": write its own sensors' configs.
		{"ha/sensor/h1/h1_load/config", true, true},
		{"ha/sensor/h1/h1_boiler_plan/config", true, true},
		{"ha/sensor/h2/h2_load/config", true, false},
		{"ha/sensor/+/x/config", true, false},
		{"ha/sensor/h1/#", true, false},
		{"ha/binary_sensor/h1/x/config", true, false},
		{"ha/number/h1/h1_ev_target_pct/config", true, true},
		// Live homes read the tariff; nobody writes it.
		{"hearth/nb/prices/import", false, true},
		{"hearth/nb/prices/+", false, true},
		{"hearth/nb/prices/import", true, false},
		{"hearth/nb/prices/#", false, false},
		{"ha/select/h1/h1_ev_departure/config", true, true},
		{"ha/number/h2/h2_ev_target_pct/config", true, false},
		{"homeassistant/sensor/h1/x/config", true, false},
		{"ha/sensor/h1/x/config", false, false},
		{"ha/#", false, false},
	}
	for _, tc := range tests {
		if got := h.allowed(h1, tc.topic, tc.write); got != tc.want {
			t.Errorf("h1: %s (write %v): got %v", tc.topic, tc.write, got)
		}
	}
	// The controller also starts rounds; it is otherwise a home (ctl).
	for _, tc := range []struct {
		topic string
		write bool
		want  bool
	}{
		{"hearth/nb/cmd", true, true},
		{"hearth/nb/cmd", false, true},
		{"hearth/nb/+/result/+", false, true},
		{"hearth/nb/cmd/h1", true, false},
		{"hearth/nb/round-1/result/h1", true, false},
		{"hearth/nb/home/h1/load", true, false},
	} {
		if got := h.allowed(ctl, tc.topic, tc.write); got != tc.want {
			t.Errorf("controller: %s (write %v): got %v", tc.topic, tc.write, got)
		}
	}
	if h1.clientID != "hearth-nb-h1" || h.users["h2"].home != "h2" || h1.controller || !ctl.controller {
		t.Fatalf("users %+v", h.users)
	}
}

func TestStartErrors(t *testing.T) {
	for name, cfg := range map[string]Config{
		"bad prefix":                 {Prefix: "a/+"},
		"missing cert":               {CertFile: "/nonexistent.pem", KeyFile: "/nonexistent.key"},
		"bad home":                   {Users: []User{{Name: "x/y", Password: "p"}}},
		"duplicate user":             {Users: []User{{Name: "x", Password: "p"}, {Name: "x", Password: "q"}}},
		"reserved home":              {Users: []User{{Name: "x", Password: "p", Home: "status"}}},
		"bad discovery":              {Discovery: "ha/#"},
		"discovery under the prefix": {Prefix: "homeassistant"},
		"prefix under discovery":     {Prefix: "ha/sensor/hearth", Discovery: "ha"},
		"bad address":                {Addr: "256.0.0.1:0"},
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
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	b2, err := Start(Config{Addr: addr})
	if err != nil {
		t.Fatalf("restart on %s: %v", addr, err)
	}
	_ = b2.Close()
}

func TestMosquittoACL(t *testing.T) {
	acl := ACLOptions{Prefix: "hearth/nb", Discovery: "ha", Controllers: []string{"ctl"}}.MosquittoACL()
	want := []string{
		"pattern write hearth/nb/+/inbox/+/%u", "pattern read hearth/nb/+/inbox/%u/+",
		"pattern write hearth/nb/+/multicast/%u", "pattern read hearth/nb/+/multicast/+",
		"pattern write hearth/nb/+/status/%u", "pattern read hearth/nb/+/status/+",
		"pattern write hearth/nb/presence/%u", "pattern read hearth/nb/presence/+",
		"pattern read hearth/nb/cmd", "pattern read hearth/nb/cmd/+", "pattern write hearth/nb/cmd/%u",
		"pattern write hearth/nb/+/result/%u", "pattern read hearth/nb/+/result/+",
		"pattern write hearth/nb/home/%u/#", "pattern read hearth/nb/home/+/#", "pattern read hearth/nb/prices/+",
		"pattern write ha/sensor/%u/#", "pattern write ha/number/%u/#", "pattern write ha/select/%u/#",
		"user ctl", "topic write hearth/nb/cmd",
	}
	var got []string
	for _, l := range strings.Split(acl, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			got = append(got, l)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("rules:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The controller's topic line comes after its user line, where
	// Mosquitto applies it to that user only.
	if strings.Index(acl, "user ctl") > strings.Index(acl, "topic write") {
		t.Error("topic line before its user line")
	}
	if d := MosquittoACL("hearth"); !strings.Contains(d, "pattern write homeassistant/sensor/%u/#\n") || strings.Contains(d, "user ") {
		t.Errorf("defaults:\n%s", d)
	}
}

// TestDialMemory connects one paho client through Broker.Dial and one
// over TCP: a message crosses from one to the other both ways, the
// broker's credentials hold on the memory connection too, and Dial fails
// once the broker is closed.
func TestDialMemory(t *testing.T) {
	b, err := Start(Config{Users: []User{{Name: "h1", Password: "pw1"}, {Name: "h2", Password: "pw2"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	client := func(user, pw string, memory bool, got chan string) (paho.Client, error) {
		o := paho.NewClientOptions().AddBroker(b.URL()).SetClientID(topic.ClientID("hearth", user)).SetUsername(user).SetPassword(pw).
			SetConnectTimeout(5 * time.Second).
			SetDefaultPublishHandler(func(_ paho.Client, m paho.Message) { got <- m.Topic() + " " + string(m.Payload()) })
		if memory {
			o.SetCustomOpenConnectionFn(func(*url.URL, paho.ClientOptions) (net.Conn, error) {
				return b.Dial(context.Background())
			})
		}
		c := paho.NewClient(o)
		tok := c.Connect()
		if !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			return nil, fmt.Errorf("connect %s (memory %v): %v", user, memory, tok.Error())
		}
		return c, nil
	}
	if _, err := client("h1", "wrong", true, nil); err == nil {
		t.Fatal("a memory connection with a wrong password was accepted")
	}
	gotMem, gotTCP := make(chan string, 1), make(chan string, 1)
	mem, err := client("h1", "pw1", true, gotMem)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Disconnect(0)
	tcp, err := client("h2", "pw2", false, gotTCP)
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Disconnect(0)
	for _, c := range []struct {
		sub    paho.Client
		filter string
	}{{mem, "hearth/r/inbox/h1/+"}, {tcp, "hearth/r/inbox/h2/+"}} {
		if tok := c.sub.Subscribe(c.filter, 1, nil); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			t.Fatalf("subscribe %s: %v", c.filter, tok.Error())
		}
	}
	mem.Publish("hearth/r/inbox/h2/h1", 1, false, "from memory")
	tcp.Publish("hearth/r/inbox/h1/h2", 1, false, "from tcp")
	for _, w := range []struct {
		ch   chan string
		want string
	}{{gotTCP, "hearth/r/inbox/h2/h1 from memory"}, {gotMem, "hearth/r/inbox/h1/h2 from tcp"}} {
		select {
		case got := <-w.ch:
			if got != w.want {
				t.Errorf("received %q, want %q", got, w.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%q never arrived", w.want)
		}
	}
	mem.Disconnect(0)
	tcp.Disconnect(0)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Dial(context.Background()); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Dial after Close: %v, want net.ErrClosed", err)
	}
}

// TestCloseWhileClientsChurn closes brokers while clients keep connecting
// and leaving through memory. mochi's own disconnection of a listener's
// clients read-locks its client list twice, and a connection or departure
// in between deadlocked Close (mochi-mqtt/server#488); the listener no
// longer calls it, so every Close must return.
func TestCloseWhileClientsChurn(t *testing.T) {
	for round := range 40 {
		b, err := Start(Config{})
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for k := range 8 {
			wg.Go(func() {
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					o := paho.NewClientOptions().AddBroker(b.URL()).SetClientID(fmt.Sprintf("c%d-%d", k, n)).
						SetConnectTimeout(time.Second).SetAutoReconnect(false).
						SetCustomOpenConnectionFn(func(*url.URL, paho.ClientOptions) (net.Conn, error) {
							return b.Dial(context.Background())
						})
					c := paho.NewClient(o)
					if tok := c.Connect(); tok.WaitTimeout(time.Second) && tok.Error() == nil {
						c.Disconnect(0)
					}
				}
			})
		}
		time.Sleep(time.Duration(5+round%10) * time.Millisecond)
		done := make(chan error, 1)
		go func() { done <- b.Close() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: Close did not return while clients came and went", round)
		}
		close(stop)
		wg.Wait()
	}
}

// TestLiveClientID: a home's second, live connection is accepted under
// its client id with LiveSuffix and a last will on its availability topic
// only.
func TestLiveClientID(t *testing.T) {
	b, err := Start(Config{Users: []User{{Name: "h1", Password: "pw"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, tc := range []struct {
		id, will string
		ok       bool
	}{
		{topic.ClientID("hearth", "h1") + LiveSuffix, "hearth/home/h1/availability", true},
		{topic.ClientID("hearth", "h1") + LiveSuffix, "", true},
		{topic.ClientID("hearth", "h1") + LiveSuffix, topic.PresenceTopic("hearth", "h1"), false},
		{topic.ClientID("hearth", "h1") + LiveSuffix, "hearth/home/h2/availability", false},
		{topic.ClientID("hearth", "h1"), "hearth/home/h1/availability", false},
		{topic.ClientID("hearth", "h1") + "-other", "", false},
	} {
		o := paho.NewClientOptions().AddBroker(b.URL()).SetClientID(tc.id).SetUsername("h1").SetPassword("pw").SetConnectTimeout(5 * time.Second)
		if tc.will != "" {
			o.SetWill(tc.will, "offline", 1, true)
		}
		c := paho.NewClient(o)
		tok := c.Connect()
		ok := tok.WaitTimeout(5*time.Second) && tok.Error() == nil
		if ok {
			c.Disconnect(0)
		}
		if ok != tc.ok {
			t.Errorf("client %s, will %q: connected %v, want %v (%v)", tc.id, tc.will, ok, tc.ok, tok.Error())
		}
	}
}
