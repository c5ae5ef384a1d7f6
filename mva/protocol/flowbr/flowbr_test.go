package flowbr

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/wire"
)

// TestDiameter: on random graphs the bound is at least the true diameter
// of every component (Floyd–Warshall), at most its size less one, and the
// same for all of a component's homes.
func TestDiameter(t *testing.T) {
	const inf = 1 << 30
	for seed := uint64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 1 + rng.IntN(9)
		var links [][2]int
		for i := range n {
			for j := i + 1; j < n; j++ {
				if rng.Float64() < 0.3 {
					links = append(links, [2]int{i, j})
				}
			}
		}
		got, err := Diameter(n, links)
		if err != nil {
			t.Fatal(err)
		}
		d := make([][]int, n)
		for i := range d {
			d[i] = make([]int, n)
			for j := range d[i] {
				if i != j {
					d[i][j] = inf
				}
			}
		}
		for _, l := range links {
			d[l[0]][l[1]], d[l[1]][l[0]] = 1, 1
		}
		for k := range n {
			for i := range n {
				for j := range n {
					d[i][j] = min(d[i][j], d[i][k]+d[k][j])
				}
			}
		}
		for i := range n {
			size := 0
			for j := range n {
				if d[i][j] == inf {
					continue
				}
				size++
				if got[i] < d[i][j] || got[i] != got[j] {
					t.Fatalf("seed %d: bound %v, distance %d–%d is %d", seed, got, i, j, d[i][j])
				}
			}
			if got[i] > size-1 {
				t.Fatalf("seed %d: bound %d for a component of %d", seed, got[i], size)
			}
		}
	}
	if _, err := Diameter(2, [][2]int{{0, 2}}); err == nil {
		t.Error("a link outside the homes was accepted")
	}
}

// fixed answers every neighbour load with the same gain and candidate.
type fixed struct {
	gain float64
	cand []float64
}

func (f *fixed) Respond(context.Context, []float64) (float64, []float64, error) {
	return f.gain, f.cand, nil
}
func (f *fixed) Adopt() { f.gain = 0 }

// TestTwoHomes works a round through by hand: home 0 gains 3 and home 1
// gains 5 with moves into the same slot; the interaction 2·1·(2·2) = 8
// exceeds home 0's gain, so only home 1 (ranked first) moves in round 0.
func TestTwoHomes(t *testing.T) {
	ctx := context.Background()
	load := []float64{0, 0}
	r0 := &fixed{gain: 3, cand: []float64{2, 0}}
	r1 := &fixed{gain: 5, cand: []float64{2, 0}}
	cfg := func(id, other int) Config {
		return Config{ID: id, Neighbours: []int{other}, Load: load, Slots: []int{0, 1}, PeakW: 1, Rounds: 10, Diameter: 1}
	}
	a0, err := New(cfg(0, 1), r0)
	if err != nil {
		t.Fatal(err)
	}
	a1, err := New(cfg(1, 0), r1)
	if err != nil {
		t.Fatal(err)
	}
	agents := []*Agent{a0, a1}
	var queue []mva.Message
	for _, a := range agents {
		out, err := a.Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		queue = append(queue, out...)
	}
	for len(queue) > 0 {
		m := queue[0]
		queue = queue[1:]
		out, err := agents[m.To].Step(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		queue = append(queue, out...)
	}
	if !a0.Done() || !a1.Done() {
		t.Fatal("not done")
	}
	// Round 0: only home 1 moves. Round 1: home 0, re-answering the new
	// load, still gains 3 and no neighbour ranked before it gains, so it
	// moves. Round 2 has no move, and rounds 2 and 3 carry that news
	// D+1 = 2 rounds: 4 rounds. Had both moved in round 0, it would be 3.
	for i, a := range []*Agent{a0, a1} {
		if a.Moves() != 1 || a.Rounds() != 4 || a.Load()[0] != 2 {
			t.Errorf("home %d: %d moves in %d rounds, load %v", i, a.Moves(), a.Rounds(), a.Load())
		}
	}
}

// FuzzStep: whatever a neighbour sends, Step returns an error or
// messages, never a panic or a hang.
func FuzzStep(f *testing.F) {
	var w wire.Writer
	w.Int(0)
	w.Float(1)
	w.Bool(true)
	w.Floats([]float64{1, 2})
	w.Int(-1)
	f.Add(1, KindOffer, w.Bytes())
	var l wire.Writer
	l.Floats([]float64{0, 1})
	f.Add(2, KindLoad, l.Bytes())
	f.Add(1, KindDecide, []byte{0, 1})
	f.Fuzz(func(t *testing.T, from int, kind string, body []byte) {
		a, err := New(Config{ID: 0, Neighbours: []int{1, 2}, Load: []float64{0, 0}, Slots: []int{0, 1}, PeakW: 1, Rounds: 5, Diameter: 1},
			&fixed{gain: 1, cand: []float64{1, 1}})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := a.Start(ctx); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := a.Step(ctx, mva.Message{From: from, To: 0, Kind: kind, Body: body}); err != nil {
				return
			}
		}
	})
}
