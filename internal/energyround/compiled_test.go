package energyround

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/devices/report"
)

// TestCompiledBase: the compiled homes' loads a mixed street's energy
// homes answer — only those their home signed, of the round and the
// horizon asked for, their positive part summed; a forged one is dropped
// with an error naming it, and a load that never comes ends the wait at
// the deadline, naming the home; a home already on a later horizon is
// not waited for.
func TestCompiledBase(t *testing.T) {
	keys := keyring(t, "alder", "oak")
	alder, oak := keys.Signer("alder"), keys.Signer("oak")
	slot0 := time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC)
	payload := func(home, round string, start time.Time, kw ...float64) []byte {
		lp := report.LoadPayload{PlanMeta: report.PlanMeta{Round: round}, Home: home, SlotMinutes: 60}
		for k, v := range kw {
			lp.Slots = append(lp.Slots, report.PlanSlot{Slot: k, Start: start.Add(time.Duration(k) * time.Hour).Format(time.RFC3339), KW: v})
		}
		b, err := json.Marshal(lp)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	c := NewCompiled("hearth", keys, nil)
	at := func(home string) string { return "hearth/home/" + home + "/load" }
	for _, tc := range []struct {
		name, topic string
		payload     []byte
		err         string
	}{
		{"alder's", at("alder"), alder.Seal(at("alder"), payload("alder", "r1", slot0, 1, -2, 3)), ""},
		{"oak's of another round", at("oak"), oak.Seal(at("oak"), payload("oak", "r0", slot0, 9, 9, 9)), ""},
		{"unsigned", at("oak"), payload("oak", "r1", slot0, 5, 5, 5), "unsigned"},
		{"signed by alder on oak's topic", at("oak"), alder.Seal(at("oak"), payload("oak", "r1", slot0, 5, 5, 5)), "signer may not publish"},
		{"another home inside", at("oak"), oak.Seal(at("oak"), payload("alder", "r1", slot0, 5, 5, 5)), `home "alder"`},
		{"a plan topic", "hearth/home/oak/plan/boiler", oak.Seal("hearth/home/oak/plan/boiler", payload("oak", "r1", slot0, 5, 5, 5)), ""},
	} {
		err := c.Receive(tc.topic, tc.payload)
		if tc.err == "" && err != nil || tc.err != "" && (!errors.Is(err, ErrDropped) || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), tc.topic)) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.err)
		}
	}
	start := time.Now()
	base, missing, err := c.Base(context.Background(), []string{"alder", "oak"}, "r1", slot0, 3, start.Add(200*time.Millisecond))
	if err != nil || len(missing) != 1 || missing[0] != "oak" || base[0] != 1 || base[1] != 0 || base[2] != 3 {
		t.Errorf("base %v, missing %v, err %v: want alder's positive part, oak missing", base, missing, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the wait took %v past a 200 ms deadline", took)
	}
	// oak's load of r1 arrives while an energy home waits.
	go func() {
		time.Sleep(50 * time.Millisecond)
		c.Receive(at("oak"), oak.Seal(at("oak"), payload("oak", "r1", slot0, 0.5, 0.5, -1)))
	}()
	base, missing, err = c.Base(context.Background(), []string{"alder", "oak"}, "r1", slot0, 3, time.Now().Add(10*time.Second))
	if err != nil || len(missing) != 0 || base[0] != 1.5 || base[1] != 0.5 || base[2] != 3 {
		t.Errorf("base %v, missing %v, err %v", base, missing, err)
	}
	// Another horizon is not this round's, whatever its name.
	if _, missing, _ := c.Base(context.Background(), []string{"alder"}, "", slot0.Add(time.Hour), 3, time.Now()); len(missing) != 1 {
		t.Errorf("a load from another slot 0 was taken")
	}
	// A home whose latest load plans a later horizon is not waited for.
	if err := c.Receive(at("alder"), alder.Seal(at("alder"), payload("alder", "r2", slot0.Add(time.Hour), 2, 2, 2))); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if _, missing, err := c.Base(context.Background(), []string{"alder", "oak"}, "", slot0, 3, start.Add(10*time.Second)); err != nil || len(missing) != 1 || missing[0] != "alder" {
		t.Errorf("alder already on the next horizon: missing %v, err %v", missing, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("waited %v for a home that plans a later horizon", took)
	}
	// elm has published nothing, but plans the next horizon (Ahead).
	c.Ahead("elm", slot0.Add(time.Hour))
	start = time.Now()
	if _, missing, err := c.Base(context.Background(), []string{"elm"}, "", slot0, 3, start.Add(10*time.Second)); err != nil || len(missing) != 1 {
		t.Errorf("elm ahead: missing %v, err %v", missing, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("waited %v for a home ahead", took)
	}
}
