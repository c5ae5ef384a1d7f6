package mqtt

import (
	"maps"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/mqtt/broker"
	"github.com/hearth-dcop/hearth/mqtt/topic"
)

// TestControlSigned: a signed home's control client takes round commands
// only from a controller's key and requests only from the requesting
// home's, drops the rest by reason, and signs what it publishes.
func TestControlSigned(t *testing.T) {
	keys := testKeys(t, 1, "a0", "a1")
	ctlKeys := testKeys(t, 2, "ctl")
	if err := keys.Add("ctl", ctlKeys.Signer("ctl").Public(), true); err != nil {
		t.Fatal(err)
	}
	ctl, a1 := ctlKeys.Signer("ctl"), keys.Signer("a1")
	b := startBroker(t, broker.Config{})
	cfg := Config{Broker: Broker{URL: b.URL()}, Timing: fastTiming, Logger: testLogger(t), Keys: keys}
	c := NewControl(cfg, "a0", []string{"a1"}, true)
	c.SetTiming(0, time.Millisecond)
	c.SetHomes([]string{"a0", "a1"}, []string{"a1"})
	if err := c.Connect(testContext(t)); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := rawClient(b.URL(), "intruder", "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Disconnect(0)
	cmd, req := topic.CmdTopic("hearth"), topic.HomeCmdTopic("hearth", "a1")
	older := ctl.Seal(cmd, []byte(`{"round":"old"}`))
	for _, p := range []struct{ topic, payload string }{
		{cmd, `{"round":"unsigned"}`},
		{cmd, string(a1.Seal(cmd, []byte(`{"round":"by-a-home"}`)))},
		{cmd, string(testKeys(t, 3, "ctl").Signer("ctl").Seal(cmd, []byte(`{"round":"forged"}`)))},
		{cmd, string(ctl.Seal(cmd, []byte(`{"round":"r1"}`)))},
		{cmd, string(older)},
		{req, string(ctl.Seal(req, []byte(`{"round":"r2","from":"a1"}`)))},
		{req, string(a1.Seal(req, []byte(`{"round":"r3","from":"a1"}`)))},
	} {
		mustPublish(t, raw, 1, p.topic, []byte(p.payload))
	}
	var got []string
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < 2 {
		r, ok, _ := c.Next(time.Now())
		if !ok {
			if time.Now().After(deadline) {
				t.Fatalf("rounds %v, want r1 and r3", got)
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if r.Signed.IsZero() {
			t.Errorf("round %s: no signing time", r.ID)
		}
		got = append(got, r.ID)
	}
	if got[0] != "r1" || got[1] != "r3" {
		t.Fatalf("rounds %v, want [r1 r3]", got)
	}
	want := map[string]int64{DropUnsigned: 1, DropWrongSigner: 2, DropBadSignature: 1, DropReplayed: 1}
	waitFor(t, "the drops", func() bool { return maps.Equal(c.Dropped(), want) })

	// What it publishes is signed: a result verifies as a0's.
	res := watchOne(t, b, topic.ResultTopic("hearth", "r1", "a0"))
	if err := c.PublishResult(testContext(t), "r1", []byte(`{"v":1,"round":"r1"}`)); err != nil {
		t.Fatal(err)
	}
	m := <-res
	opened, err := keys.Open(topic.ResultTopic("hearth", "r1", "a0"), m, func(s string) bool { return s == "a0" })
	if err != nil || string(opened.Content) != `{"v":1,"round":"r1"}` {
		t.Fatalf("published result %s: %v", m, err)
	}
}

// watchOne subscribes a fresh client to tp and returns its payloads.
func watchOne(t *testing.T, b *broker.Broker, tp string) <-chan []byte {
	t.Helper()
	c, err := rawClient(b.URL(), "watcher", "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Disconnect(0) })
	ch := make(chan []byte, 16)
	tok := c.Subscribe(tp, 1, func(_ paho.Client, m paho.Message) { ch <- m.Payload() })
	if !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	return ch
}
