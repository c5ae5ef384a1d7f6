package baseline

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/compile"
	"github.com/hearth-dcop/hearth/devices/internal/testhomes"
)

// TestBlockReuseMatchesFresh runs block descent on every home with its
// reuse (blocks whose other devices did not change since their last
// solve are skipped; compiled blocks are kept per background) and
// without it (every block compiled and solved on every pass, as before),
// and checks the SH-MGM-style baseline's schedule, rounds and moves are
// the same, and that reuse solved fewer blocks.
func TestBlockReuseMatchesFresh(t *testing.T) {
	ns := []*devices.Neighbourhood{shdsFile(t, "dm_7_1_2")}
	for seed := uint64(1); len(ns) < 13 && seed < 500; seed++ {
		n := testhomes.Random(seed, testhomes.Options{Homes: 3, Slots: 4, Devices: 4, Actions: 3, Mixed: true})
		if _, err := compile.Compile(n, compile.Options{}); err != nil {
			if errors.Is(err, devices.ErrInfeasible) {
				continue
			}
			t.Fatalf("seed %d: %v", seed, err)
		}
		ns = append(ns, n)
	}
	var reused, fresh int
	for _, n := range ns {
		t.Run(n.Name, func(t *testing.T) {
			ctx := context.Background()
			a, err := SHMGM(ctx, n, Options{forceBlocks: true, eager: true})
			if err != nil {
				t.Fatal(err)
			}
			b, err := SHMGM(ctx, n, Options{forceBlocks: true, eager: true, noReuse: true})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a.Schedule, b.Schedule) || a.Rounds != b.Rounds || a.Moves != b.Moves || a.Converged != b.Converged {
				t.Fatalf("with reuse: rounds %d moves %d converged %v; without: %d %d %v; schedules equal %v",
					a.Rounds, a.Moves, a.Converged, b.Rounds, b.Moves, b.Converged, reflect.DeepEqual(a.Schedule, b.Schedule))
			}
			if a.Solves > b.Solves {
				t.Errorf("reuse solved %d blocks, without it %d", a.Solves, b.Solves)
			}
			reused += a.Solves
			fresh += b.Solves
		})
	}
	if reused >= fresh {
		t.Errorf("reuse solved %d blocks over the streets, without it %d: nothing skipped", reused, fresh)
	}
	t.Logf("%d streets: %d block solves with reuse, %d without", len(ns), reused, fresh)
}

// TestBlockResponsesMatchFresh asks every home of dm_7_1_2 (block descent
// forced) a seeded sequence of best responses to random neighbour loads,
// adopting some, with and without reuse: every candidate and gain must be
// the same, bit for bit, and the cached blocks must have served some
// solves.
func TestBlockResponsesMatchFresh(t *testing.T) {
	n := shdsFile(t, "dm_7_1_2")
	ctx := context.Background()
	for hi := range n.Homes {
		ro := Options{forceBlocks: true}.withPool()
		fo := Options{forceBlocks: true, noReuse: true}.withPool()
		r, _, err := newResponder(n, hi, &ro)
		if err != nil {
			t.Fatal(err)
		}
		f, _, err := newResponder(n, hi, &fo)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(7, uint64(hi)))
		N := make([]float64, n.Horizon.Slots)
		for q := range 12 {
			if q%3 != 2 { // a neighbour moves: a few slots change
				for range 1 + rng.IntN(4) {
					N[rng.IntN(len(N))] = float64(rng.IntN(20))
				}
			}
			gr, err := r.respond(ctx, N)
			if err != nil {
				t.Fatal(err)
			}
			gf, err := f.respond(ctx, N)
			if err != nil {
				t.Fatal(err)
			}
			if math.Float64bits(gr) != math.Float64bits(gf) || !reflect.DeepEqual(r.candidate(), f.candidate()) {
				t.Fatalf("home %d question %d: gain %v with reuse, %v without; candidates equal %v", hi, q, gr, gf, reflect.DeepEqual(r.candidate(), f.candidate()))
			}
			if rng.IntN(2) == 0 {
				r.adopt()
				f.adopt()
			}
		}
		if r.solves() >= f.solves() {
			t.Errorf("home %d: %d solves with reuse, %d without", hi, r.solves(), f.solves())
		}
		// The price-only start is one solve of no block.
		if b := r.(*blockHome); b.compiles >= r.solves()-1 {
			t.Errorf("home %d: %d blocks compiled for %d solves: no compiled block served again", hi, b.compiles, r.solves()-1)
		}
		t.Logf("home %d: %d solves with reuse (%d blocks compiled), %d without", hi, r.solves(), r.(*blockHome).compiles, f.solves())
	}
}

// TestGainSolverMatchesRow gives every exact home a gain solver (a
// bucket elimination in a searched order that answers the gain, the
// candidate being min-fill's row solved when asked for) and checks
// against responders without one: the same candidates bit for bit, the
// same gains to rounding, over seeded sequences of neighbour loads on
// dm_7_1_2 and random streets; and SH-MGM's schedules, rounds and moves
// equal, eager and lazy.
func TestGainSolverMatchesRow(t *testing.T) {
	ns := append([]*devices.Neighbourhood{shdsFile(t, "dm_7_1_2")}, randomNeighbourhoods(t, 8)...)
	ctx := context.Background()
	withGain := 0
	for _, n := range ns {
		for hi := range n.Homes {
			gopts := Options{gainFrom: 1}.withPool()
			ro := Options{}.withPool()
			g, _, err := newResponder(n, hi, &gopts)
			if err != nil {
				t.Fatal(err)
			}
			r, _, err := newResponder(n, hi, &ro)
			if err != nil {
				t.Fatal(err)
			}
			if e, ok := g.(*exactHome); !ok || e.gain == nil {
				continue
			}
			withGain++
			rng := rand.New(rand.NewPCG(3, uint64(hi)))
			N := make([]float64, n.Horizon.Slots)
			for q := range 10 {
				for range 1 + rng.IntN(3) {
					N[rng.IntN(len(N))] = float64(rng.IntN(40)) / 4
				}
				gg, err := g.respond(ctx, N)
				if err != nil {
					t.Fatal(err)
				}
				gr, err := r.respond(ctx, N)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(gg-gr) > 1e-9*math.Max(1, math.Abs(r.(*exactHome).now)) {
					t.Fatalf("%s home %d question %d: gain %v with the gain solver, %v without", n.Name, hi, q, gg, gr)
				}
				if q%2 == 0 {
					if !reflect.DeepEqual(g.candidate(), r.candidate()) {
						t.Fatalf("%s home %d question %d: the candidates differ", n.Name, hi, q)
					}
				}
				if rng.IntN(3) == 0 {
					g.adopt()
					r.adopt()
					if !reflect.DeepEqual(g.schedule(), r.schedule()) {
						t.Fatalf("%s home %d question %d: the adopted schedules differ", n.Name, hi, q)
					}
				}
			}
		}
		for _, eager := range []bool{true, false} {
			a, err := SHMGM(ctx, n, Options{gainFrom: 1, eager: eager})
			if err != nil {
				t.Fatal(err)
			}
			b, err := SHMGM(ctx, n, Options{eager: eager})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a.Schedule, b.Schedule) || a.Rounds != b.Rounds || a.Moves != b.Moves || a.Converged != b.Converged {
				t.Fatalf("%s eager %v: with gain solvers rounds %d moves %d; without %d %d; schedules equal %v", n.Name, eager, a.Rounds, a.Moves, b.Rounds, b.Moves, reflect.DeepEqual(a.Schedule, b.Schedule))
			}
		}
	}
	if withGain < 10 {
		t.Fatalf("only %d homes had a gain solver", withGain)
	}
	t.Logf("%d homes with a gain solver", withGain)
}

// TestRepeatedQuestionSkipped asks every home of dm_7_1_2 (exact and,
// forced, by block descent) the same neighbour load twice: the second
// answer costs no solve and equals a responder's that solves it again;
// after adopt the same load is a new question (solved).
func TestRepeatedQuestionSkipped(t *testing.T) {
	n := shdsFile(t, "dm_7_1_2")
	ctx := context.Background()
	for _, blocks := range []bool{false, true} {
		for hi := range n.Homes {
			ro := Options{forceBlocks: blocks, gainFrom: 1}.withPool()
			fo := Options{forceBlocks: blocks, gainFrom: 1, noReuse: true}.withPool()
			r, _, err := newResponder(n, hi, &ro)
			if err != nil {
				t.Fatal(err)
			}
			f, _, err := newResponder(n, hi, &fo)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(5, uint64(hi)))
			N := make([]float64, n.Horizon.Slots)
			for q := range 6 {
				for t := range N {
					N[t] = float64(rng.IntN(30)) / 2
				}
				for _, x := range []responder{r, f} {
					if _, err := x.respond(ctx, N); err != nil {
						t.Fatal(err)
					}
				}
				before := r.solves()
				gr, err := r.respond(ctx, slices.Clone(N))
				if err != nil {
					t.Fatal(err)
				}
				gf, err := f.respond(ctx, N)
				if err != nil {
					t.Fatal(err)
				}
				if r.solves() != before {
					t.Errorf("blocks %v home %d question %d: asked again, %d solves", blocks, hi, q, r.solves()-before)
				}
				if math.Float64bits(gr) != math.Float64bits(gf) || !reflect.DeepEqual(r.candidate(), f.candidate()) {
					t.Fatalf("blocks %v home %d question %d: asked again, gain %v, solved again %v (candidates equal %v)", blocks, hi, q, gr, gf, reflect.DeepEqual(r.candidate(), f.candidate()))
				}
				if q%2 == 1 {
					r.adopt()
					f.adopt()
					before = r.solves()
					if _, err := r.respond(ctx, N); err != nil {
						t.Fatal(err)
					}
					if _, err := f.respond(ctx, N); err != nil {
						t.Fatal(err)
					}
					if r.solves() == before {
						t.Errorf("blocks %v home %d question %d: after adopt the same load was not solved", blocks, hi, q)
					}
				}
			}
		}
	}
}
