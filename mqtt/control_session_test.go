package mqtt

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/internal/mosquitto"
)

// TestControlNoCommandLost: commands published while the home's control
// client has handed its connection to a round's client, before that
// client connects, while it runs, and after it left but before the
// control client is back, all reach the queue — through the session the
// two clients share and the Listener the round's client carries — and
// come out in the order of their creation, not of their arrival. On
// Mosquitto, whose sessions and queues are those of a deployment.
func TestControlNoCommandLost(t *testing.T) {
	b := mosquitto.Start(t, mosquitto.Options{})
	ctx := testContext(t)
	cfg := Config{Broker: Broker{URL: b.URL()}, Timing: fastTiming, Logger: testLogger(t), Identity: NewIdentity()}
	c := NewControl(cfg, "a0", []string{"a1"}, true)
	c.SetHomes([]string{"a0", "a1"}, []string{"a1"})
	c.SetTiming(time.Minute, time.Millisecond)
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	ctl, err := rawClient(b.URL(), "controller", "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Disconnect(0)
	t0 := time.Now()
	send := func(id string, k int) {
		t.Helper()
		// Created in the reverse order of sending: the queue must
		// reorder.
		p, err := EncodeCommand(Request{ID: id, Created: t0.Add(-time.Duration(k) * time.Millisecond)}, "")
		if err != nil {
			t.Fatal(err)
		}
		if tok := ctl.Publish("hearth/cmd", 1, false, p); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
	}

	c.Pause()
	send("before-round", 1)
	// The round's client, with the home's client id; its peer never
	// comes, so it waits until cancelled.
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		acfg := AgentConfig{Config: cfg, Agent: 0}
		acfg.Run, acfg.Protocol, acfg.Agents, acfg.Listen = "r", "p", []string{"a0", "a1"}, c.Listener()
		_, _, err := RunAgent(rctx, acfg, &recorder{})
		done <- err
	}()
	waitQueued(t, c, "before-round")
	send("during-round", 2)
	waitQueued(t, c, "during-round")
	cancel()
	<-done
	send("after-round", 3)
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	waitQueued(t, c, "after-round")
	var got []string
	for {
		req, ok, wait := c.Next(time.Now().Add(time.Second))
		if !ok {
			if wait != 0 {
				t.Fatalf("a round waits %v", wait)
			}
			break
		}
		got = append(got, req.ID)
	}
	if want := []string{"after-round", "during-round", "before-round"}; !slices.Equal(got, want) {
		t.Errorf("rounds %v, want %v (by creation time)", got, want)
	}
}

// waitQueued waits until round id is in c's queue.
func waitQueued(t *testing.T, c *Control, id string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		in := slices.ContainsFunc(c.queue, func(q queuedRound) bool { return q.req.ID == id })
		c.mu.Unlock()
		if in {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("round %s never queued", id)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
