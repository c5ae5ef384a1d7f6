package homesim_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/config"
	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/baseline"
	"github.com/hearth-dcop/hearth/devices/homesim"
	"github.com/hearth-dcop/hearth/devices/homesim/tracecheck"
	"github.com/hearth-dcop/hearth/mqtt/broker"
)

// controller is a fake `hearth run` for the street: it publishes, at
// every slot's start, each device's command of a fixed schedule on the
// command topics, retained, as the live agents do, and records the
// state messages it sees.
type controller struct {
	t      *testing.T
	client paho.Client
	mu     sync.Mutex
	states map[string]map[string]any
}

func newController(t *testing.T, url string) *controller {
	c := &controller{t: t, states: map[string]map[string]any{}}
	o := paho.NewClientOptions().AddBroker(url).SetClientID("fake-controller").SetCleanSession(true)
	c.client = paho.NewClient(o)
	if tok := c.client.Connect(); tok.Wait() && tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	tok := c.client.Subscribe("hearth/home/+/state/+", 1, func(_ paho.Client, m paho.Message) {
		var v map[string]any
		if err := json.Unmarshal(m.Payload(), &v); err != nil {
			t.Errorf("state %s: %v", m.Topic(), err)
			return
		}
		c.mu.Lock()
		c.states[m.Topic()] = v
		c.mu.Unlock()
	})
	tok.Wait()
	t.Cleanup(func() { c.client.Disconnect(100) })
	return c
}

// drive publishes slot k's commands of schedule s a slot ahead (at a
// minute past the start of slot k−1; slot 0's just before the day), so
// that the wall clock's jitter at high speed cannot make them late;
// the homes keep a command until its slot.
func (c *controller) drive(ctx context.Context, n *devices.Neighbourhood, s *devices.Schedule, clock *homesim.Clock, day time.Time) {
	slot := time.Duration(n.Horizon.SlotMinutes) * time.Minute
	for k := range n.Horizon.Slots {
		start := day.Add(time.Duration(k) * slot)
		publishAt := start.Add(-slot + time.Minute)
		if k == 0 {
			publishAt = start.Add(-2 * time.Minute)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(clock.Until(publishAt)):
		}
		for hi, h := range n.Homes {
			for d, dev := range h.Devices {
				a := dev.Actions[s.Homes[hi].Actions[d][k]]
				b, _ := json.Marshal(map[string]any{
					"round": "test", "created": publishAt.Format(time.RFC3339), "slot_start": start.Format(time.RFC3339),
					"slot_end": start.Add(slot).Format(time.RFC3339), "expires": start.Add(slot).Format(time.RFC3339),
					"action": a.Name, "power_kw": a.Power,
				})
				c.client.Publish("hearth/home/"+h.Name+"/command/"+dev.Name, 1, true, b)
			}
		}
	}
}

// TestStreetOverMQTT runs the example street's four homes against a fake
// controller that plays each home's own plan (the uncoordinated
// baseline, which keeps every rule): every goal must be kept, the
// independent replay must find no broken physics, the bill must match
// the plan's to within what the planner's rounding of effects to whole
// steps allows, and the state topics must carry the devices' values.
func TestStreetOverMQTT(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a simulated night over MQTT")
	}
	cfg, err := config.Load("../../examples/neighbourhood/neighbourhood.toml")
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Neighbourhood
	pvs := cfg.PV
	plan, err := baseline.Uncoordinated(context.Background(), n, baseline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := broker.Start(broker.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctrl := newController(t, b.URL())
	day := time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC)
	clock := homesim.Clock{Start: day, Epoch: time.Now().Add(1500 * time.Millisecond), Speed: 10000}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go ctrl.drive(ctx, n, plan.Schedule, &clock, day)
	homes := []int{0, 1, 2, 3}
	var logs strings.Builder
	d, err := homesim.Run(ctx, homesim.Config{Model: n, Homes: homes, Broker: homesim.Broker{URL: b.URL()}, Clock: clock, PV: pvs,
		Until: day.Add(14 * time.Hour), Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Complete {
		t.Fatal("the day was not simulated whole")
	}
	for hi, hd := range d.Homes {
		rep := tracecheck.Check(n, hi, pvs[hi], hd.Trace)
		if !rep.OK() {
			t.Errorf("%s: replay: %v", hd.Home, rep.Violations)
		}
		if len(rep.Missed) > 0 || hd.GoalsMet != hd.GoalsTotal {
			t.Errorf("%s: missed %v (report: %d/%d goals)", hd.Home, rep.Missed, hd.GoalsMet, hd.GoalsTotal)
		}
		if math.Abs(rep.Bill-hd.Bill) > 1e-9 {
			t.Errorf("%s: report bill %.6f, replay %.6f", hd.Home, hd.Bill, rep.Bill)
		}
		want := plan.Eval.Homes[hi].Price
		// Without noise only the first step's timing separates the two:
		// the virtual home stores and spends what the model's rounded
		// effects say (a battery's 4.75 kWh per hour is 4.7).
		if math.Abs(hd.Bill-want) > 0.02*math.Abs(want)+0.01 {
			t.Errorf("%s: realised bill %.4f, the plan's %.4f", hd.Home, hd.Bill, want)
		}
	}
	// A programme told to run after it has finished ("at its bound",
	// action run) is the clock, not the model: an off command that
	// reaches a home late under a loaded -race run lets the programme
	// run on, and 0.1 s is minutes of the simulated day. Its goals are
	// checked above. Every other clamp is a plan the physics refuse.
	var clamped []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "command clamped") && !(strings.Contains(l, `reason="at its bound"`) && strings.HasSuffix(l, "action=run")) {
			clamped = append(clamped, l)
		}
	}
	if len(clamped) != 0 {
		t.Errorf("%d commands clamped playing a feasible plan (%d in all):\n%s", len(clamped), d.Refusals, strings.Join(clamped, "\n"))
	}
	ctrl.mu.Lock()
	ev := ctrl.states["hearth/home/alder/state/ev"]
	// Every property a device moves, which live homes plan from: the
	// room the radiator heats, a programme's progress.
	room := ctrl.states["hearth/home/dogwood/state/radiator"]
	dw := ctrl.states["hearth/home/alder/state/dishwasher"]
	ctrl.mu.Unlock()
	if ev == nil || ev["plugged"] != true || ev["charge"] == nil || ev["time"] == nil {
		t.Errorf("alder's EV state: %v", ev)
	}
	if v, ok := room["temperature"].(float64); !ok || v < 10 || v > 30 {
		t.Errorf("dogwood's radiator state: %v, want the living room's temperature", room)
	}
	if v, ok := dw["progress"].(float64); !ok || v < 0 || v > 100 {
		t.Errorf("alder's dishwasher state: %v, want its progress", dw)
	}
	if testing.Verbose() {
		d.WriteText(os.Stdout)
	} else {
		d.WriteText(io.Discard)
	}
}
