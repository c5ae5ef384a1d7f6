package daemon

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
)

// TestPlanShare: three homes' planShare agents, their messages delivered
// by hand in a seeded order, each end done with every home's message;
// a message of another kind, from itself or out of range, empty, or a
// second one from a home is refused with an error naming it.
func TestPlanShare(t *testing.T) {
	ctx := context.Background()
	const n = 3
	agents := make([]*planShare, n)
	var queue []mva.Message
	for i := range n {
		agents[i] = &planShare{me: i, n: n, mine: []byte(fmt.Sprintf("plan %d", i)), got: make([][]byte, n)}
		agents[i].got[i] = agents[i].mine
		out, err := agents[i].Start(ctx)
		if err != nil || len(out) != n-1 {
			t.Fatalf("home %d: %d messages, %v", i, len(out), err)
		}
		queue = append(queue, out...)
	}
	// Delivered last first: the order does not matter.
	for k := len(queue) - 1; k >= 0; k-- {
		m := queue[k]
		if agents[m.To].Done() {
			t.Fatalf("home %d done before its last message", m.To)
		}
		if out, err := agents[m.To].Step(ctx, m); err != nil || len(out) != 0 {
			t.Fatalf("home %d: %v, %d messages", m.To, err, len(out))
		}
	}
	for i, a := range agents {
		if !a.Done() || len(a.missing()) != 0 {
			t.Fatalf("home %d: done %v, missing %v", i, a.Done(), a.missing())
		}
		for j, b := range a.got {
			if string(b) != fmt.Sprintf("plan %d", j) {
				t.Errorf("home %d holds %q from home %d", i, b, j)
			}
		}
	}
	bad := []struct {
		name string
		m    mva.Message
		want string
	}{
		{"kind", mva.Message{From: 1, To: 0, Kind: "util", Body: []byte("x")}, `a "util" message`},
		{"from itself", mva.Message{From: 0, To: 0, Kind: planKind, Body: []byte("x")}, "from agent 0 of 3"},
		{"out of range", mva.Message{From: 7, To: 0, Kind: planKind, Body: []byte("x")}, "from agent 7 of 3"},
		{"empty", mva.Message{From: 1, To: 0, Kind: planKind}, "an empty message from home 1"},
		{"second", mva.Message{From: 1, To: 0, Kind: planKind, Body: []byte("y")}, "a second message from home 1"},
	}
	for _, c := range bad {
		if _, err := agents[0].Step(ctx, c.m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// One home alone shares with nobody.
	got, err := sharePlans(ctx, nil, 1, 0, []byte("only"))
	if err != nil || len(got) != 1 || string(got[0]) != "only" {
		t.Fatalf("one home: %q, %v", got, err)
	}
	if _, err := sharePlans(ctx, nil, 2, 2, []byte("x")); err == nil {
		t.Fatal("home 2 of 2 accepted")
	}
}
