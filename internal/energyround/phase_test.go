package energyround

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/devices/energy"
)

// TestPhases: finals published with Final reach Await, each phase's
// apart; a load that is not final, a final signed by another home, one
// with a wrong slot count or horizon are not taken for a home's final;
// a phase whose finals do not all come ends at the deadline, naming who
// is missing, and the waiting home publishes its own final again
// meanwhile.
func TestPhases(t *testing.T) {
	ctx := context.Background()
	keys := keyring(t, "alder", "oak", "fir")
	slot0 := time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC)
	want := Expect{Slots: 3, Slot0: slot0}
	p := NewPhases("hearth", keys, nil)
	sent := 0
	publish := func(_ context.Context, t string, b []byte) error {
		sent++
		return p.Receive(t, false, b)
	}
	load := func(home, round string, kw ...float64) Load {
		return Load{Round: round, Home: home, Slot0: slot0.Format(time.RFC3339), ImportKW: kw}
	}
	if PhaseRound("r1", 0) != "r1" || PhaseRound("r1", 2) != "r1-a2" {
		t.Fatalf("phase rounds %q, %q", PhaseRound("r1", 0), PhaseRound("r1", 2))
	}
	if _, err := Final(ctx, "hearth", load("alder", "r1", 1, 2, 3), keys.Signer("alder"), publish, nil); err != nil {
		t.Fatal(err)
	}
	// oak's load of a sweep, not final: not oak's final.
	b, err := Encode(Topic("hearth", "oak", "r1"), load("oak", "r1", 1, 1, 1), keys.Signer("oak"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Receive(Topic("hearth", "oak", "r1"), false, b); err != nil {
		t.Fatal(err)
	}
	// fir signs a final on oak's topic: dropped.
	forged := load("oak", "r1", 9, 9, 9)
	forged.Final = true
	b, err = Encode(Topic("hearth", "oak", "r1"), forged, keys.Signer("fir"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Receive(Topic("hearth", "oak", "r1"), false, b); !errors.Is(err, ErrDropped) {
		t.Errorf("a final signed by another home: %v", err)
	}
	again, err := Final(ctx, "hearth", load("fir", "r1", 0, 0, 0), keys.Signer("fir"), publish, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := sent
	got, missing, err := p.Await(ctx, "r1", []string{"alder", "oak"}, want, time.Now().Add(150*time.Millisecond), 20*time.Millisecond, again)
	if !errors.Is(err, ErrPhaseTimedOut) || len(missing) != 1 || missing[0] != "oak" || got != nil {
		t.Fatalf("without oak's final: %v, missing %v, %v", got, missing, err)
	}
	if sent-before < 2 {
		t.Errorf("the waiting home published its final %d times again in 150 ms at a 20 ms heartbeat", sent-before)
	}
	if _, err := Final(ctx, "hearth", load("oak", "r1", 1, 0, 0.5), keys.Signer("oak"), publish, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Final(ctx, "hearth", load("oak", "r1-a1", 1, 0, 0.5), keys.Signer("oak"), publish, nil); err != nil {
		t.Fatal(err)
	}
	got, missing, err = p.Await(ctx, "r1", []string{"alder", "oak"}, want, time.Now().Add(time.Second), 0, nil)
	if err != nil || missing != nil || got["alder"].ImportKW[2] != 3 || got["oak"].ImportKW[2] != 0.5 {
		t.Fatalf("phase 0: %v, missing %v, %v", got, missing, err)
	}
	one, _, err := p.Await(ctx, "r1-a1", []string{"oak"}, want, time.Now().Add(time.Second), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !SameLoads(got, one, []string{"oak"}) || SameLoads(got, one, []string{"alder", "oak"}) {
		t.Error("SameLoads: oak kept its load, alder has none in phase 1")
	}
	if AnyMoved(got, []string{"alder", "oak"}) {
		t.Error("AnyMoved: no final said it moved")
	}
	if _, _, err := p.Await(ctx, "r1", []string{"alder"}, Expect{Slots: 4, Slot0: slot0}, time.Now().Add(time.Second), 0, nil); !errors.Is(err, ErrDropped) || !strings.Contains(err.Error(), "hearth/home/alder/round/r1/load") {
		t.Errorf("a final of 3 slots in a round of 4: %v", err)
	}
	if _, _, err := p.Await(ctx, "r1", []string{"alder"}, Expect{Slots: 3, Slot0: slot0.Add(time.Hour)}, time.Now().Add(time.Second), 0, nil); !errors.Is(err, ErrDropped) {
		t.Errorf("a final of another horizon: %v", err)
	}
}

// TestPhasesInfeasible: an energy home's final that says the street
// cannot keep a hard feeder limit (Infeasible) ends a wait for the phase
// at once — before the other homes' finals and long before the
// deadline — with an error wrapping energy.ErrInfeasible that names the
// home and the reason (without ErrInfeasible's words twice); a wait for
// another phase, or for homes that do not include it, is not affected.
// A reason too long or with control characters goes out cut to
// printable text; a failed final of another horizon is a fault
// (ErrDropped), not the street's failure.
func TestPhasesInfeasible(t *testing.T) {
	ctx := context.Background()
	keys := keyring(t, "alder", "fir", "hazel")
	slot0 := time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC)
	want := Expect{Slots: 2, Slot0: slot0}
	p := NewPhases("hearth", keys, nil)
	publish := func(_ context.Context, t string, b []byte) error { return p.Receive(t, false, b) }
	reason := fmt.Errorf("energy round r1: window 1: the committed caps exceed the hard feeder limit 5 kW by 1.2 kW after 2 rounds of best responses: %w", energy.ErrInfeasible)
	l := Load{Round: "r1", Home: "hazel", Slot0: slot0.Format(time.RFC3339), ImportKW: []float64{1, 2}}
	if err := Infeasible(ctx, "hearth", l, reason.Error(), keys.Signer("hazel"), publish); err != nil {
		t.Fatal(err)
	}
	if _, err := Final(ctx, "hearth", Load{Round: "r1", Home: "alder", Slot0: l.Slot0, ImportKW: []float64{0, 1}}, keys.Signer("alder"), publish, nil); err != nil {
		t.Fatal(err)
	}
	_, missing, err := p.Await(ctx, "r1", []string{"fir", "hazel"}, want, time.Now().Add(time.Hour), 0, nil)
	if !errors.Is(err, energy.ErrInfeasible) || !strings.Contains(err.Error(), "energy home hazel: energy round r1: window 1: the committed caps exceed the hard feeder limit 5 kW") ||
		strings.Count(err.Error(), energy.ErrInfeasible.Error()) != 1 || len(missing) != 1 || missing[0] != "fir" {
		t.Fatalf("waiting for fir and hazel: missing %v, %v", missing, err)
	}
	got, _, err := p.Await(ctx, "r1", []string{"alder"}, want, time.Now().Add(time.Second), 0, nil)
	if err != nil || got["alder"].ImportKW[1] != 1 {
		t.Fatalf("waiting for alder alone: %v, %v", got, err)
	}
	if _, _, err := p.Await(ctx, "r1-a1", []string{"hazel"}, want, time.Now().Add(50*time.Millisecond), 0, nil); !errors.Is(err, ErrPhaseTimedOut) {
		t.Fatalf("another phase: %v", err)
	}
	// A reason too long, with control characters and a rune across the
	// cut, is published cut to printable text that decodes.
	long := "window 0:\n" + strings.Repeat("é", maxReason)
	l.Round = "r2"
	if err := Infeasible(ctx, "hearth", l, long, keys.Signer("hazel"), publish); err != nil {
		t.Fatal(err)
	}
	_, _, err = p.Await(ctx, "r2", []string{"hazel"}, want, time.Now().Add(time.Second), 0, nil)
	if !errors.Is(err, energy.ErrInfeasible) || !strings.Contains(err.Error(), "energy home hazel: window 0: éé") {
		t.Fatalf("a long reason: %v", err)
	}
	// A failed final of another horizon is a fault, not the street's
	// failure.
	l.Round, l.Slot0 = "r3", slot0.Add(time.Hour).Format(time.RFC3339)
	if err := Infeasible(ctx, "hearth", l, "window 0: over", keys.Signer("hazel"), publish); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Await(ctx, "r3", []string{"hazel"}, want, time.Now().Add(time.Second), 0, nil); errors.Is(err, energy.ErrInfeasible) || !errors.Is(err, ErrDropped) {
		t.Fatalf("another horizon's failure: %v", err)
	}
}
