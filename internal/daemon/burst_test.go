package daemon

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/mqtt"
)

// TestAgentsBurst runs three long-running agents (Agent.Run) in this
// process, race-checked, and sends them a burst of three rounds in the
// reverse order of their creation: every agent runs each round once, in
// the order of creation, each with DPOP's optimum, and stops cleanly.
// The queue settles for 2 s (AgentConfig.Settle) rather than the
// default half second: under a loaded -race CI run an agent descheduled
// for longer than the settling time may start the burst's newest round
// before the older ones reach it, and with no round time-out here the
// split round would wait for ever (it failed so once in clean-clone CI,
// 60 s without three results).
func TestAgentsBurst(t *testing.T) {
	p := testProblem()
	want, b := dpopTruth(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	cfg := mqtt.Config{Broker: mqtt.Broker{URL: b.URL()}, Protocol: "dpop", Timing: mqtt.Timing{
		KeepAlive: 5 * time.Second, StatusInterval: 50 * time.Millisecond, RetransmitAfter: 2 * time.Second, ReconnectMax: 100 * time.Millisecond}}

	o := paho.NewClientOptions().AddBroker(b.URL()).SetClientID("watcher").SetOrderMatters(true)
	c := paho.NewClient(o)
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	defer c.Disconnect(0)
	var (
		mu      sync.Mutex
		online  = map[string]bool{}
		order   = map[string][]string{}
		results = map[string][]RoundResult{}
		changed = make(chan struct{}, 1)
	)
	names := mqtt.AgentNames(p)
	topics := []string{}
	for _, a := range names {
		topics = append(topics, "hearth/presence/"+a)
		for _, id := range []string{"c1", "c2", "c3"} {
			topics = append(topics, "hearth/"+id+"/result/"+a)
		}
	}
	for _, tp := range topics {
		tok := c.Subscribe(tp, 1, func(_ paho.Client, m paho.Message) {
			mu.Lock()
			defer mu.Unlock()
			parts := strings.Split(m.Topic(), "/")
			if parts[1] == "presence" {
				online[parts[2]] = strings.Contains(string(m.Payload()), `"online"`)
			} else {
				var r RoundResult
				if err := json.Unmarshal(m.Payload(), &r); err != nil {
					t.Error(err)
				}
				order[parts[3]] = append(order[parts[3]], parts[1])
				results[parts[3]] = append(results[parts[3]], r)
			}
			select {
			case changed <- struct{}{}:
			default:
			}
		})
		if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
	}
	await := func(what string, done func() bool) {
		t.Helper()
		for {
			mu.Lock()
			ok := done()
			mu.Unlock()
			if ok {
				return
			}
			select {
			case <-changed:
			case <-ctx.Done():
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}

	errs := make([]error, len(p.Agents))
	var wg sync.WaitGroup
	for i, a := range p.Agents {
		h, err := NewAgent(ctx, AgentConfig{Problem: p, Name: a.Name, Prepared: prepared(), MQTT: cfg, Attempts: 2, Settle: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = h.Run(runCtx, "")
		}()
	}
	await("every agent online", func() bool { return len(online) == len(names) })
	t0 := time.Now()
	for k, id := range []string{"c3", "c2", "c1"} {
		pl, err := mqtt.EncodeCommand(mqtt.Request{ID: id, Created: t0.Add(-time.Duration(k) * time.Millisecond)}, "")
		if err != nil {
			t.Fatal(err)
		}
		if tok := c.Publish("hearth/cmd", 1, false, pl); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
	}
	await("three results of every agent", func() bool {
		for _, a := range names {
			if len(order[a]) < 3 {
				return false
			}
		}
		return true
	})
	stop()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("agent %s: %v", names[i], err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range names {
		if got := strings.Join(order[a], ","); got != "c1,c2,c3" {
			t.Errorf("agent %s ran %s, want c1,c2,c3", a, got)
		}
		for _, r := range results[a] {
			if r.Error != "" || r.Objective == nil || math.Abs(*r.Objective-want.Cost) > 1e-9 || r.Attempts != 1 {
				t.Errorf("agent %s round %s: %+v, want optimum %v at the first attempt", a, r.Round, r, want.Cost)
			}
		}
	}
}
