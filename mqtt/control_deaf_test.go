package mqtt

import (
	"sync"
	"testing"
	"time"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/auth"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// forgetHook makes a broker forget the first persistent session of a
// client id as soon as it is established, as Mochi 2.7 does when the
// clean session before it (Control.cleanStart) is disposed of late: the
// client id's entry goes, so nothing reaches the new connection although
// its subscriptions stay.
type forgetHook struct {
	mochi.HookBase
	srv    *mochi.Server
	mu     sync.Mutex
	forgot int
}

func (h *forgetHook) ID() string { return "forget" }

func (h *forgetHook) Provides(b byte) bool { return b == mochi.OnSessionEstablished }

func (h *forgetHook) OnSessionEstablished(cl *mochi.Client, _ packets.Packet) {
	if cl.Properties.Clean {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.forgot == 0 {
		h.forgot++
		h.srv.Clients.Delete(cl.ID)
	}
}

// TestControlDeafConnection: a home whose first persistent connection the
// broker forgot connects again and takes the rounds asked for.
func TestControlDeafConnection(t *testing.T) {
	srv := mochi.New(&mochi.Options{Logger: discard})
	hook := &forgetHook{srv: srv}
	for _, h := range []mochi.Hook{new(auth.AllowHook), hook} {
		if err := srv.AddHook(h, nil); err != nil {
			t.Fatal(err)
		}
	}
	l := listeners.NewTCP(listeners.Config{ID: "t", Address: "127.0.0.1:0"})
	if err := srv.AddListener(l); err != nil {
		t.Fatal(err)
	}
	if err := srv.Serve(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	url := "tcp://" + l.Address()

	cfg := Config{Broker: Broker{URL: url}, Timing: fastTiming, Logger: testLogger(t)}
	c := NewControl(cfg, "a0", []string{"a1"}, true)
	c.SetTiming(0, time.Millisecond)
	c.SetHomes([]string{"a0", "a1"}, []string{"a1"})
	if err := c.Connect(testContext(t)); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	hook.mu.Lock()
	forgot := hook.forgot
	hook.mu.Unlock()
	if forgot != 1 {
		t.Fatalf("the broker forgot %d connections, want 1", forgot)
	}
	raw, err := rawClient(url, "controller", "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Disconnect(0)
	mustPublish(t, raw, 1, topic.CmdTopic("hearth"), []byte(`{"round":"r1"}`))
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, ok, _ := c.Next(time.Now())
		if ok {
			if r.ID != "r1" {
				t.Fatalf("round %q, want r1", r.ID)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no round within 10 s: the home is deaf")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
