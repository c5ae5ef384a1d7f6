package baseline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/compile"
	"github.com/hearth-dcop/hearth/devices/internal/testhomes"
	"github.com/hearth-dcop/hearth/devices/shds"
)

// randomNeighbourhoods returns seeded random neighbourhoods whose rules
// some schedule satisfies, small enough to enumerate every home's
// schedules.
func randomNeighbourhoods(t *testing.T, count int) []*devices.Neighbourhood {
	t.Helper()
	var out []*devices.Neighbourhood
	for seed := uint64(1); len(out) < count && seed < 500; seed++ {
		n := testhomes.Random(seed, testhomes.Options{Homes: 3, Slots: 3, Devices: 2, Actions: 3, Mixed: true, Feeder: true})
		if _, err := compile.Compile(n, compile.Options{}); err != nil {
			if errors.Is(err, devices.ErrInfeasible) {
				continue
			}
			t.Fatalf("seed %d: %v", seed, err)
		}
		out = append(out, n)
	}
	if len(out) < count {
		t.Fatalf("only %d feasible random neighbourhoods", len(out))
	}
	return out
}

// brute is an independent evaluation of one home's schedules: every
// schedule keeping the home's rules (devices.Evaluate of the home alone),
// with its draw per slot and its price cost.
type scheduleCost struct {
	s     devices.HomeSchedule
	load  []float64
	price float64 // Weights.Price·Σ price·draw·Δ
}

func enumerate(t *testing.T, n *devices.Neighbourhood, hi int) []scheduleCost {
	t.Helper()
	one := *n
	one.Homes = n.Homes[hi : hi+1]
	one.Windows, one.Links, one.FeederLimit = nil, nil, 0
	var out []scheduleCost
	testhomes.Schedules(n, hi, func(hs devices.HomeSchedule) {
		c := devices.HomeSchedule{Actions: make([][]int, len(hs.Actions))}
		for d := range hs.Actions {
			c.Actions[d] = slices.Clone(hs.Actions[d])
		}
		ev, err := one.Evaluate(&devices.Schedule{Homes: []devices.HomeSchedule{c}})
		if err != nil {
			t.Fatal(err)
		}
		if ev.Feasible {
			out = append(out, scheduleCost{s: c, load: ev.Homes[0].Load, price: ev.PriceCost})
		}
	})
	return out
}

// peakOf is SH-MGM's peak term of a home by hand: Weights.Peak·Δ²·
// Σ_{coordinated t} (max(draw,0) + own outside load + N(t))².
func peakOf(n *devices.Neighbourhood, hi int, load, N []float64) float64 {
	dt := n.Horizon.Hours()
	sum := 0.0
	for _, w := range n.Windows {
		for t := w.From; t < w.To; t++ {
			v := math.Max(load[t], 0) + N[t]
			if o := n.Homes[hi].OutsideLoad; o != nil {
				v += o[t]
			}
			sum += v * v
		}
	}
	return n.Weights.Peak * dt * dt * sum
}

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func TestUncoordinatedIsEachHomesCheapestSchedule(t *testing.T) {
	for _, n := range randomNeighbourhoods(t, 25) {
		t.Run(n.Name, func(t *testing.T) {
			for _, ownPeak := range []bool{false, true} {
				out, err := Uncoordinated(context.Background(), n, Options{OwnPeak: ownPeak})
				if err != nil {
					t.Fatal(err)
				}
				for hi := range n.Homes {
					if !slices.Equal(out.Eval.Homes[hi].Rules, trues(len(n.Homes[hi].Rules))) {
						t.Fatalf("home %d breaks a rule: %v", hi, out.Eval.Violations)
					}
					best := math.Inf(1)
					zero := make([]float64, n.Horizon.Slots)
					for _, sc := range enumerate(t, n, hi) {
						c := sc.price
						if ownPeak {
							c += peakOf(n, hi, sc.load, zero)
						}
						best = math.Min(best, c)
					}
					got := n.Weights.Price * out.Eval.Homes[hi].Price
					if ownPeak {
						got += peakOf(n, hi, out.Eval.Homes[hi].Load, zero)
					}
					if !near(got, best) {
						t.Errorf("ownPeak=%v home %d: cost %v, the cheapest schedule costs %v", ownPeak, hi, got, best)
					}
				}
			}
		})
	}
}

func trues(n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = true
	}
	return out
}

// TestSHMGMConvergesToBestResponses checks SH-MGM's fixed point against
// enumeration: when it converges, no home has a schedule that lowers its
// J_i given its neighbours' loads.
func TestSHMGMConvergesToBestResponses(t *testing.T) {
	for _, n := range randomNeighbourhoods(t, 25) {
		t.Run(n.Name, func(t *testing.T) {
			out, err := SHMGM(context.Background(), n, Options{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if !out.Converged {
				t.Fatalf("no convergence in %d rounds", out.Rounds)
			}
			nbrs := make([][]int, len(n.Homes))
			for _, l := range n.Linked() {
				nbrs[l[0]] = append(nbrs[l[0]], l[1])
				nbrs[l[1]] = append(nbrs[l[1]], l[0])
			}
			for hi := range n.Homes {
				he := &out.Eval.Homes[hi]
				if slices.Contains(he.Rules, false) {
					t.Fatalf("home %d breaks a rule: %v", hi, out.Eval.Violations)
				}
				N := make([]float64, n.Horizon.Slots)
				for _, j := range nbrs[hi] {
					for s, v := range out.Eval.Homes[j].Load {
						N[s] += v
					}
				}
				got := n.Weights.Price*he.Price + peakOf(n, hi, he.Load, N)
				best := math.Inf(1)
				for _, sc := range enumerate(t, n, hi) {
					best = math.Min(best, sc.price+peakOf(n, hi, sc.load, N))
				}
				if got > best && !near(got, best) {
					t.Errorf("home %d: J = %v, but a schedule has %v", hi, got, best)
				}
			}
			again, err := SHMGM(context.Background(), n, Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(out.Schedule.Homes, again.Schedule.Homes, sameActions) || again.Rounds != out.Rounds {
				t.Error("SH-MGM is not deterministic across worker counts")
			}
		})
	}
}

func sameActions(a, b devices.HomeSchedule) bool {
	return slices.EqualFunc(a.Actions, b.Actions, slices.Equal)
}

func TestSHMGMRoundLimit(t *testing.T) {
	n := shdsFile(t, "dm_7_1_2")
	out, err := SHMGM(context.Background(), n, Options{Rounds: -1})
	if err != nil {
		t.Fatal(err)
	}
	if out.Rounds != 0 || out.Converged || out.Solves != 2*len(n.Homes) {
		t.Errorf("rounds %d converged %v solves %d: want only the first schedule and round 0", out.Rounds, out.Converged, out.Solves)
	}
	out, err = SHMGM(context.Background(), n, Options{Rounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if out.Rounds != 1 {
		t.Errorf("rounds %d, want 1", out.Rounds)
	}
	// The default runs to convergence, and the same neighbourhood gives
	// the same schedule again, whatever the number of workers.
	a, err := SHMGM(context.Background(), n, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := SHMGM(context.Background(), n, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Converged || a.Rounds != b.Rounds || a.Moves != b.Moves || !slices.EqualFunc(a.Schedule.Homes, b.Schedule.Homes, sameActions) {
		t.Errorf("two runs differ: rounds %d/%d moves %d/%d converged %v", a.Rounds, b.Rounds, a.Moves, b.Moves, a.Converged)
	}
}

// shared is the data set folder of the project checkout, used when
// present; dm_7_1_2 is also in the importer's testdata.
const shared = "/work/shared/data/shds"

func shdsFile(t *testing.T, name string) *devices.Neighbourhood {
	t.Helper()
	path := filepath.Join("..", "shds", "testdata", name+".json")
	if _, err := os.Stat(path); err != nil {
		path = filepath.Join(shared, name+".json")
		if _, err := os.Stat(path); err != nil {
			t.Skipf("%s: not in testdata and no %s", name, shared)
		}
	}
	r, err := shds.ReadFile(path, shds.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Neighbourhood
}

// TestSHDSBaselines checks both baselines on the published instance:
// every rule kept, and SH-MGM's coordination through the neighbours' load
// lowers the peak below the homes' price-only optimum.
func TestSHDSBaselines(t *testing.T) {
	n := shdsFile(t, "dm_7_1_2")
	u, err := Uncoordinated(context.Background(), n, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := SHMGM(context.Background(), n, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []*Outcome{u, s} {
		if !o.Eval.Feasible {
			t.Fatalf("%s: %v", o.Name, o.Eval.Violations)
		}
	}
	if !s.Converged {
		t.Errorf("SH-MGM did not converge in %d rounds", s.Rounds)
	}
	if s.Eval.PeakLoad >= u.Eval.PeakLoad {
		t.Errorf("SH-MGM peak %v is not below the uncoordinated %v", s.Eval.PeakLoad, u.Eval.PeakLoad)
	}
	if s.Eval.LoadSquares >= u.Eval.LoadSquares {
		t.Errorf("SH-MGM Σ load² %v is not below the uncoordinated %v", s.Eval.LoadSquares, u.Eval.LoadSquares)
	}
}

func TestParallelReportsTheFirstError(t *testing.T) {
	for _, workers := range []int{1, 2, 8} {
		err := parallel(context.Background(), workers, 10, func(i int) error {
			if i == 3 || i == 7 {
				return fmt.Errorf("job %d", i)
			}
			return nil
		})
		// With one worker job 7 never runs; with more it may, and the
		// lowest index still wins.
		if err == nil || err.Error() != "job 3" {
			t.Errorf("workers %d: %v, want job 3", workers, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := parallel(ctx, 2, 5, func(int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestRefusesABadModel(t *testing.T) {
	n := &devices.Neighbourhood{Name: "empty", Horizon: devices.Horizon{Slots: 2, SlotMinutes: 60}, Prices: []float64{1, 1}, Levels: 1}
	if _, err := Uncoordinated(context.Background(), n, Options{}); err == nil {
		t.Error("Uncoordinated accepted a neighbourhood without homes")
	}
	if _, err := SHMGM(context.Background(), n, Options{}); err == nil {
		t.Error("SHMGM accepted a neighbourhood without homes")
	}
}

// TestBlockDescentIsBlockOptimal forces block descent on every home and
// checks SH-MGM's fixed point against enumeration: no home can lower its
// J_i by changing the devices of one block (devices sharing properties)
// alone, and every rule holds.
func TestBlockDescentIsBlockOptimal(t *testing.T) {
	for _, n := range randomNeighbourhoods(t, 20) {
		t.Run(n.Name, func(t *testing.T) {
			out, err := SHMGM(context.Background(), n, Options{forceBlocks: true})
			if err != nil {
				t.Fatal(err)
			}
			want := len(n.Homes)
			if n.Weights.Peak == 0 {
				want = 0 // price only: every home is exact
			}
			if !out.Converged || !out.Eval.Feasible || out.Approximate != want {
				t.Fatalf("converged %v feasible %v approximate %d: %v", out.Converged, out.Eval.Feasible, out.Approximate, out.Eval.Violations)
			}
			nbrs := make([][]int, len(n.Homes))
			for _, l := range n.Linked() {
				nbrs[l[0]] = append(nbrs[l[0]], l[1])
				nbrs[l[1]] = append(nbrs[l[1]], l[0])
			}
			for hi := range n.Homes {
				b, err := newBlockHome(n, hi, &Options{})
				if err != nil {
					t.Fatal(err)
				}
				cur := out.Schedule.Homes[hi]
				N := make([]float64, n.Horizon.Slots)
				for _, j := range nbrs[hi] {
					for s, v := range out.Eval.Homes[j].Load {
						N[s] += v
					}
				}
				he := &out.Eval.Homes[hi]
				got := n.Weights.Price*he.Price + peakOf(n, hi, he.Load, N)
				for _, bl := range b.blocks {
					for _, sc := range enumerate(t, n, hi) {
						if !sameOutside(sc.s, cur, bl.devices) {
							continue
						}
						if c := sc.price + peakOf(n, hi, sc.load, N); c < got && !near(c, got) {
							t.Errorf("home %d block %v: J = %v, changing the block gives %v", hi, bl.devices, got, c)
						}
					}
				}
			}
		})
	}
}

// sameOutside reports whether a and b agree on every device not in block.
func sameOutside(a, b devices.HomeSchedule, block []int) bool {
	for d := range a.Actions {
		if !slices.Contains(block, d) && !slices.Equal(a.Actions[d], b.Actions[d]) {
			return false
		}
	}
	return true
}

// TestFlowObjective: on a complete graph the flow objective is the bill
// plus the squared street load the evaluator sums apart
// (Evaluation.LoadSquares); on dm_7_1_2 also the checker's figure for the
// SH-MGM-style schedule is below the committed-level one.
func TestFlowObjective(t *testing.T) {
	n := shdsFile(t, "dm_7_1_2")
	for _, f := range []func(context.Context, *devices.Neighbourhood, Options) (*Outcome, error){Uncoordinated, SHMGM} {
		o, err := f(context.Background(), n, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := FlowObjective(n, o.Eval)
		want := o.Eval.PriceCost + n.Weights.Peak*o.Eval.LoadSquares
		if math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s: flow objective %v, bill plus squared load %v", o.Name, got, want)
		}
		if got > o.Eval.Cost {
			t.Errorf("%s: flow objective %v above the committed-level one %v", o.Name, got, o.Eval.Cost)
		}
	}
}
