package local

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/hearth-dcop/hearth/internal/cputime"
	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/format/wcsp"
)

// chainProblem is a small SHDS-like home of seed: devices with 0/1
// actions over slots, each with a progress counter chain (counter_t =
// counter_{t-1} + action_t, Hard where it does not add up, the last
// counter fixed to the device's need), seeded prices on the actions, and
// a Hard power limit on pairs of devices per slot, with a cost on
// running both. Its Hard structure is what makes a greedy descent
// infeasible and one-variable moves unable to repair it.
func chainProblem(seed int64, devices, slots int) *mva.Problem {
	r := rand.New(rand.NewPCG(uint64(seed), 7))
	p := &mva.Problem{Name: "chains-" + strconv.FormatInt(seed, 10), Sense: mva.Minimize, Agents: []mva.Agent{{Name: "home"}}}
	addVar := func(name string, d int) int {
		dom := make([]string, d)
		for i := range dom {
			dom[i] = strconv.Itoa(i)
		}
		p.Variables = append(p.Variables, mva.Variable{Name: name, Domain: dom})
		return len(p.Variables) - 1
	}
	add := func(scope []int, costs []float64) {
		p.Functions = append(p.Functions, mva.Function{Name: "f" + strconv.Itoa(len(p.Functions)), Scope: scope, Costs: costs})
	}
	act := make([][]int, devices)
	for dv := range devices {
		need := 1 + r.IntN(slots-1)
		var prev int
		for t := range slots {
			x := addVar(fmt.Sprintf("a%d_%d", dv, t), 2)
			act[dv] = append(act[dv], x)
			add([]int{x}, []float64{0, float64(r.IntN(20))})
			d := t + 2 // counts 0..t+1
			if t == slots-1 {
				d = need + 1
			}
			y := addVar(fmt.Sprintf("c%d_%d", dv, t), d)
			if t == 0 {
				// c = a
				costs := make([]float64, 2*d)
				for a := range 2 {
					for c := range d {
						costs[a*d+c] = mva.Hard
						if c == a {
							costs[a*d+c] = 0
						}
					}
				}
				add([]int{x, y}, costs)
			} else {
				// c_t = c_{t-1} + a_t, and the last is need.
				dp := p.DomainSize(prev)
				costs := make([]float64, dp*2*d)
				for c0 := range dp {
					for a := range 2 {
						for c := range d {
							ok := c == c0+a && (t < slots-1 || c == need)
							if !ok {
								costs[(c0*2+a)*d+c] = mva.Hard
							}
						}
					}
				}
				add([]int{prev, x, y}, costs)
			}
			prev = y
		}
	}
	for t := range slots {
		for dv := 0; dv+1 < devices; dv++ {
			both := float64(r.IntN(30))
			if r.IntN(3) == 0 {
				both = mva.Hard
			}
			add([]int{act[dv][t], act[dv+1][t]}, []float64{0, 0, 0, both})
		}
	}
	return p
}

// truth returns lp's optimum (one row) by brute force, or by bucket
// elimination (itself checked against brute force and toulbar2) where the
// space is past brute force's reach.
func truth(t *testing.T, p *mva.Problem, lp *mva.LocalProblem) float64 {
	t.Helper()
	var s mva.LocalSolver = NewBruteForce(lp)
	if space(p) > 1<<18 {
		be, err := NewBE(lp, BEOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s = be
	}
	c, err := s.SolveRow(context.Background(), nil, make([]int, lp.NumInterior()))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestInitialBound: on seeded random problems with Hard entries and on
// chain problems, the first incumbent is a real assignment whose cost is
// the functions' at it and at least the optimum (brute force's, or bucket
// elimination's on the larger chain problems), and the dive
// without a budget finds a feasible assignment exactly when one exists
// (its arc consistency removes no value of a feasible assignment).
func TestInitialBound(t *testing.T) {
	ctx := context.Background()
	var probs []*mva.Problem
	for seed := range int64(150) {
		p := randprob.New(seed, randprob.Options{
			Agents: 1, Vars: 4 + int(seed%8), MinDomain: 2, MaxDomain: 2 + int(seed%3),
			MaxArity: 2 + int(seed%3), Functions: 4 + int(seed%12),
			HardProb: []float64{0.2, 0.4, 0.6}[seed%3], IntCosts: true, MaxCost: 9,
		})
		if space(p) <= 1<<14 {
			probs = append(probs, p)
		}
	}
	for seed := range int64(60) {
		probs = append(probs, chainProblem(seed, 2+int(seed%2), 3+int(seed%3)))
	}
	dives, found, feasible, repaired := 0, 0, 0, 0
	for _, p := range probs {
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		want := truth(t, p, lp)
		// A first row conditions the functions and computes the
		// heuristic; then the incumbent is made again, as each row does.
		s := NewAOBB(lp, AOBBOptions{IBound: 2})
		in := make([]int, lp.NumInterior())
		got, err := s.SolveRow(ctx, nil, in)
		if err != nil {
			t.Fatal(err)
		}
		if !sameCost(got, want) {
			t.Fatalf("%s: aobb %v, brute force %v", p.Name, got, want)
		}
		s.ctx = ctx
		s.descend()
		descentHard := mva.IsHard(s.cost(s.val))
		c := s.initialBound(false)
		if e := lp.Eval(s.val); !sameCost(e, c) {
			t.Fatalf("%s: the first incumbent costs %v by initialBound, %v by the functions", p.Name, c, e)
		}
		if c < want && !sameCost(c, want) {
			t.Fatalf("%s: the first incumbent %v is below the optimum %v", p.Name, c, want)
		}
		if descentHard && !mva.IsHard(c) {
			repaired++
		}
		ok := s.dive(math.MaxInt64)
		dives++
		if ok != !mva.IsHard(want) {
			t.Fatalf("%s: dive found an assignment: %v; brute force's optimum %v", p.Name, ok, want)
		}
		if ok {
			found++
			if e := lp.Eval(s.val); mva.IsHard(e) {
				t.Fatalf("%s: the dive's assignment %v is infeasible", p.Name, s.val)
			}
		}
		if !mva.IsHard(want) {
			feasible++
		}
	}
	if found < 100 || dives-found < 30 || repaired < 20 {
		t.Errorf("%d dives, %d found (%d feasible problems), %d infeasible descents repaired: the dive is hardly tested", dives, found, feasible, repaired)
	}
}

// TestAOBBDiveAndGuesses: AOBB's answers equal brute force's (bucket
// elimination's on the larger chain problems) on chain problems and on
// random problems with many Hard entries, under every budget of
// aobbConfigs, where the dive and the guessed bounds run.
func TestAOBBDiveAndGuesses(t *testing.T) {
	var probs []*mva.Problem
	for seed := range int64(16) {
		probs = append(probs, chainProblem(100+seed, 2+int(seed%3), 3+int(seed%3)))
	}
	for seed := range int64(50) {
		p := randprob.New(1000+seed, randprob.Options{
			Agents: 1, Vars: 5 + int(seed%8), MinDomain: 2, MaxDomain: 3,
			MaxArity: 2 + int(seed%2), Functions: 6 + int(seed%10),
			HardProb: 0.45, IntCosts: seed%3 != 0, MaxCost: 20,
		})
		if space(p) <= 1<<14 {
			probs = append(probs, p)
		}
	}
	dives, guesses := 0, 0
	for _, p := range probs {
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		if space(p) <= 1<<16 {
			checkAOBBRows(t, p.Name, lp, [][]int{{}}, nil, false, true)
		} else {
			want := truth(t, p, lp)
			for _, c := range aobbConfigs {
				if c.opts.ShiftRows {
					continue
				}
				got, err := NewAOBB(lp, c.opts).SolveRow(context.Background(), nil, make([]int, lp.NumInterior()))
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("%s: aobb %s %v, bucket elimination %v", p.Name, c.name, got, want)
				}
			}
		}
		s := NewAOBB(lp, AOBBOptions{IBound: 1})
		if _, err := s.SolveRow(context.Background(), nil, make([]int, lp.NumInterior())); err != nil {
			t.Fatal(err)
		}
		dives += s.dives
		guesses += s.guesses
	}
	if dives < 20 || guesses < 10 {
		t.Errorf("%d dives, %d guessed bounds: hardly tested", dives, guesses)
	}
}

// TestAOBBSHDSResponses: the exported best responses of dm_7_1_5's homes
// 1 and 5 (toulbar2's optima, checked against toulbar2 itself by
// cmd/hearth's TestToulbar2Agreement). Home 5's descent is infeasible:
// the dive repairs it and the search guesses its bounds.
func TestAOBBSHDSResponses(t *testing.T) {
	for _, tc := range []struct {
		file        string
		want        float64
		dive, guess bool
	}{
		{"shds_dm_7_1_5_home1.wcsp", 3205820, false, false},
		{"shds_dm_7_1_5_home5.wcsp", 744290, true, true},
	} {
		f, err := os.Open(filepath.Join("..", "testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		p, err := wcsp.Read(f, tc.file)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		s := NewAOBB(lp, AOBBOptions{})
		in := make([]int, lp.NumInterior())
		got, err := s.SolveRow(context.Background(), nil, in)
		if err != nil {
			t.Fatal(err)
		}
		if got+p.Offset != tc.want {
			t.Errorf("%s: %v, want %v (%s)", tc.file, got+p.Offset, tc.want, s.Describe())
		}
		if e := lp.Eval(in); e != got {
			t.Errorf("%s: reported %v, its assignment costs %v", tc.file, got, e)
		}
		if (s.dives > 0) != tc.dive || (s.guesses > 0) != tc.guess {
			t.Errorf("%s: %d dives, %d guessed bounds; want dive %v, guess %v", tc.file, s.dives, s.guesses, tc.dive, tc.guess)
		}
	}
}

// BenchmarkAOBBSHDSResponses solves the two exported SHDS best responses
// from the file's problem (the pseudo-tree, the heuristic and the search,
// as `hearth solve FILE --local aobb` does after reading), reporting CPU
// time and OR nodes per solve.
func BenchmarkAOBBSHDSResponses(b *testing.B) {
	for _, name := range []string{"home1", "home5"} {
		path := filepath.Join("..", "testdata", "shds_dm_7_1_5_"+name+".wcsp")
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		p, err := wcsp.Read(f, path)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			var nodes int64
			cpu0 := cputime.Used()
			for b.Loop() {
				lp := mva.NewLocalProblem(p, mva.Whole(p))
				s := NewAOBB(lp, AOBBOptions{})
				if _, err := s.SolveRow(context.Background(), nil, make([]int, lp.NumInterior())); err != nil {
					b.Fatal(err)
				}
				nodes += s.Nodes()
			}
			b.ReportMetric(float64(nodes)/float64(b.N), "nodes/op")
			b.ReportMetric(float64(cputime.Used()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestDiveFiniteEntries: revise over the finite entries' list (where it
// is shorter than the live entries) removes what the walk over the live
// entries removes, and counts the same checks, through a propagation of
// every function and a seeded sequence of assignments and undos, on
// random problems with many Hard entries and on chain problems.
func TestDiveFiniteEntries(t *testing.T) {
	ctx := context.Background()
	var probs []*mva.Problem
	for seed := range int64(80) {
		p := randprob.New(500+seed, randprob.Options{
			Agents: 1, Vars: 4 + int(seed%8), MinDomain: 2, MaxDomain: 2 + int(seed%4),
			MaxArity: 2 + int(seed%3), Functions: 4 + int(seed%12),
			HardProb: []float64{0.3, 0.6, 0.85}[seed%3], IntCosts: true, MaxCost: 9,
		})
		probs = append(probs, p)
	}
	for seed := range int64(30) {
		probs = append(probs, chainProblem(300+seed, 2+int(seed%3), 3+int(seed%4)))
	}
	listed := 0 // revisions that read the finite entries' list
	for _, p := range probs {
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		s := NewAOBB(lp, AOBBOptions{IBound: 2})
		if _, err := s.SolveRow(ctx, nil, make([]int, lp.NumInterior())); err != nil {
			t.Fatal(err)
		}
		s.ctx = ctx
		fast, walk := newDiver(s), newDiver(s)
		fast.reset()
		walk.reset()
		for i := range walk.fin {
			walk.fin[i].n = math.MaxInt // never shorter: always the walk
			if fast.fin[i].n < len(s.cond[i].f.Costs) {
				listed++
			}
		}
		step := func(what string, f func(d *diver) bool) bool {
			c0 := s.checks
			okF := f(fast)
			cF := s.checks - c0
			c0 = s.checks
			okW := f(walk)
			cW := s.checks - c0
			if okF != okW || cF != cW || !slices.Equal(fast.live, walk.live) || !slices.Equal(fast.size, walk.size) {
				t.Fatalf("%s: %s: finite list %v (%d checks), walk %v (%d checks); live %v against %v",
					p.Name, what, okF, cF, okW, cW, fast.live, walk.live)
			}
			return okF
		}
		if !step("propagateAll", (*diver).propagateAll) {
			continue // infeasible: a dive stops here
		}
		r := rand.New(rand.NewPCG(uint64(len(p.Name)), 3))
		for k := 0; k < 3*len(s.pre); k++ {
			v := s.pre[r.IntN(len(s.pre))]
			var vals []int
			for a := range lp.Domains[v] {
				if fast.live[fast.off[v]+a] {
					vals = append(vals, a)
				}
			}
			if len(vals) < 2 {
				continue
			}
			a := vals[r.IntN(len(vals))]
			mark := len(fast.trail)
			if !step(fmt.Sprintf("assign %d=%d", v, a), func(d *diver) bool { return d.assign(v, a) }) || r.IntN(3) == 0 {
				fast.undo(mark)
				walk.undo(mark)
			}
		}
	}
	if listed < 100 {
		t.Errorf("%d functions with a shorter finite list: hardly tested", listed)
	}
}
