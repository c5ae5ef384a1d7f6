package daemon_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/hearth-dcop/hearth/internal/live"
)

// TestLiveOnceUneven runs a round of the live test street with `hearth
// run --once` (Home.Once) on 8 quarter hours and then 4 hours, at
// 05:10 with both homes' state published: the round lays the pattern
// from the quarter hour that holds now (05:00–05:15), so 07:00, alder's
// car's goal, is boundary 8; the plan, replayed here with each slot's
// hours from its published start and end and the wallbox's 89%, adds
// the 5 kWh the car lacks by then, and the command covers slot 0's
// quarter hour.
func TestLiveOnceUneven(t *testing.T) {
	day := func(h, m int) time.Time { return time.Date(2026, 11, 26, h, m, 0, 0, time.Local) }
	s, b := newLiveStreet(t, day(5, 10), 1, func(name string, src []byte) []byte {
		if name != "street.toml" {
			return src
		}
		return []byte(strings.Replace(string(src), "slots = 24\nslot = \"1h\"\n", "segments = [{ slot = \"15m\", count = 8 }, { slot = \"1h\", count = 4 }]\n", 1))
	})
	evCmd, evPlan := live.CommandTopic("hearth", "alder", "ev"), "hearth/home/alder/plan/ev"
	c, rec := recorder(t, b.URL(), "test-once-uneven", evCmd, evPlan)
	now := s.clock.Now().Format(time.RFC3339)
	for tp, st := range map[string]string{
		live.StateTopic("hearth", "alder", "ev"):        fmt.Sprintf(`{"time":%q,"charge":35,"plugged":true}`, now),
		live.StateTopic("hearth", "dogwood", "battery"): fmt.Sprintf(`{"time":%q,"soc":6}`, now),
	} {
		if tok := c.Publish(tp, 1, true, st); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	homes := []string{"alder", "dogwood"}
	errs := make([]error, len(homes))
	var wg sync.WaitGroup
	for i, name := range homes {
		hm := s.home(ctx, name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = hm.Once(ctx, "r1")
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", homes[i], err)
		}
	}
	p := parsePlan(t, rec.await(t, 0, "alder's plan", 10*time.Second, func(m paho.Message) bool { return m.Topic() == evPlan }))
	if len(p.Slots) != 12 {
		t.Fatalf("%d slots, want 12", len(p.Slots))
	}
	added := 0.0
	for k, sl := range p.Slots {
		from, to := mustTime(t, sl.Start), mustTime(t, sl.End)
		want := 15 * time.Minute
		if k >= 8 {
			want = time.Hour
		}
		if k == 0 && !from.Equal(day(5, 0)) || to.Sub(from) != want {
			t.Fatalf("slot %d runs %v–%v, want %v long from 05:00 on", k, from, to, want)
		}
		if from.Before(day(7, 0)) {
			added += sl.KW * 0.89 * to.Sub(from).Hours()
		}
	}
	if 35+added < 40 {
		t.Errorf("the plan adds %.2f kWh to the live 35 before 07:00; the goal is 40", added)
	}
	cmd, err := live.ParseCommand(rec.await(t, 0, "alder's command", 10*time.Second, func(m paho.Message) bool { return m.Topic() == evCmd }).Payload())
	if err != nil {
		t.Fatal(err)
	}
	if !mustTime(t, cmd.SlotStart).Equal(day(5, 0)) || !mustTime(t, cmd.SlotEnd).Equal(day(5, 15)) || cmd.Action != p.Slots[0].Action {
		t.Errorf("command %+v, want 05:00–05:15's %s", cmd, p.Slots[0].Action)
	}
}
