package local

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hearth-dcop/hearth/internal/cputime"
	"github.com/hearth-dcop/hearth/internal/randprob"
	"github.com/hearth-dcop/hearth/mva"
	"github.com/hearth-dcop/hearth/mva/format"
	"github.com/hearth-dcop/hearth/mva/gen"
)

// reformCost returns the cost of the interior assignment t in the EDAC
// state's reformulation: c∅, the unary costs and the live binary
// functions' costs (the n-ary functions and eliminated variables, which
// VAC does not touch, left out). ok is false when t uses a removed value.
func reformCost(s *EDAC, t []int) (c float64, ok bool) {
	c = s.fs[0]
	for x := range s.n {
		if s.vacOut(x) {
			continue
		}
		if !s.alive(x, t[x]) {
			return 0, false
		}
		c += s.u(x, t[x])
	}
	for k := range s.bins {
		b := &s.bins[k]
		if s.is[b.live] == 0 {
			continue
		}
		c += s.side(k, b.x).cost(t[b.x], t[b.y])
	}
	return c, true
}

// forEachAssignment calls f with every interior assignment of s's
// domains.
func forEachAssignment(dom []int, f func([]int)) {
	t := make([]int, len(dom))
	for {
		f(t)
		i := 0
		for ; i < len(t); i++ {
			t[i]++
			if t[i] < dom[i] {
				break
			}
			t[i] = 0
		}
		if i == len(t) {
			return
		}
	}
}

// negativeCost returns a description of a negative live cost of s, "" if
// there is none.
func negativeCost(s *EDAC) string {
	for x := range s.n {
		for a := range s.dom[x] {
			if !s.vacOut(x) && s.alive(x, a) && s.u(x, a) < 0 {
				return "unary"
			}
		}
	}
	for k := range s.bins {
		b := &s.bins[k]
		if s.is[b.live] == 0 {
			continue
		}
		sd := s.side(k, b.x)
		for a := range b.dx {
			for c := range b.dy {
				if s.alive(b.x, a) && s.alive(b.y, c) && sd.cost(a, c) < 0 {
					return "binary"
				}
			}
		}
	}
	return ""
}

// checkVACRoot runs EDAC's root propagation on lp's only row with no
// upper bound, then VAC, and checks against brute force over every
// assignment: VAC's transfers keep every assignment's cost in the
// reformulation (c∅ + unary + binary) unchanged, leave no live cost
// negative, never lower c∅, and leave c∅ at most the optimum. It reports
// whether VAC raised c∅ (checked false when EDAC's root failed).
func checkVACRoot(t *testing.T, tag string, lp *mva.LocalProblem) (raised, checked bool) {
	t.Helper()
	opt, err := NewBruteForce(lp).SolveRow(context.Background(), nil, make([]int, lp.NumInterior()))
	if err != nil {
		t.Fatal(err)
	}
	s := newEDAC(lp) // no substitution: the reformulation is over lp's variables
	s.ub = mva.Hard
	if !s.condition(nil) {
		return false, false
	}
	s.reset()
	s.rooted = true
	if !s.propagate() {
		return false, false
	}
	// Each assignment's cost before VAC, NaN where it uses a removed
	// value, in forEachAssignment's order.
	var before []float64
	forEachAssignment(s.dom, func(a []int) {
		c, ok := reformCost(s, a)
		if !ok {
			c = math.NaN()
		}
		before = append(before, c)
	})
	lb0 := s.fs[0]
	s.useVAC = true
	ok := s.enforceVAC()
	lb := s.fs[0]
	if lb < lb0 {
		t.Fatalf("%s: VAC lowered c∅ from %v to %v", tag, lb0, lb)
	}
	if !mva.IsHard(opt) && lb > opt {
		t.Fatalf("%s: bound after VAC %v above the optimum %v (EDAC's %v)", tag, lb, opt, lb0)
	}
	if !ok {
		if !mva.IsHard(opt) {
			t.Fatalf("%s: VAC pruned the root of a feasible problem (optimum %v, bound %v)", tag, opt, lb)
		}
		return false, true
	}
	if neg := negativeCost(s); neg != "" {
		t.Fatalf("%s: a negative %s cost after VAC", tag, neg)
	}
	i := 0
	forEachAssignment(s.dom, func(a []int) {
		want := before[i]
		was := !math.IsNaN(want)
		i++
		got, is := reformCost(s, a)
		if !is || !was {
			// Only Hard assignments may lose a value (ub is Hard).
			if was && !mva.IsHard(want) {
				t.Fatalf("%s: assignment %v of cost %v lost a value", tag, a, want)
			}
			return
		}
		if got != want && !(mva.IsHard(got) && mva.IsHard(want)) {
			t.Fatalf("%s: assignment %v costs %v after VAC, %v before", tag, a, got, want)
		}
	})
	return lb > lb0, true
}

// TestVACEquivalentAndBounded runs checkVACRoot on hundreds of seeded
// random binary problems of whole costs (some Hard entries) and on small
// generated scale-free graphs (the family VAC is for: there it raises
// EDAC's bound on most of them); VAC must raise the bound on some.
func TestVACEquivalentAndBounded(t *testing.T) {
	raised, n := 0, 0
	for seed := range int64(150) {
		o := randprob.Options{Vars: 4 + int(seed%6), MinDomain: 2, MaxDomain: 2 + int(seed%3), MaxArity: 2,
			Functions: 8 + int(seed%12), IntCosts: true, MaxCost: []float64{3, 9, 100}[seed%3],
			HardProb: []float64{0, 0.05, 0.2}[seed%3]}
		p := randprob.New(seed, o)
		if space(p) > 1<<13 {
			continue
		}
		r, ok := checkVACRoot(t, "random seed "+strconv.Itoa(int(seed)), mva.NewLocalProblem(p, mva.Whole(p)))
		if r {
			raised++
		}
		if ok {
			n++
		}
	}
	sfRaised, sfN := 0, 0
	for seed := range uint64(24) {
		o := gen.DefaultScaleFree()
		o.Agents, o.Links, o.Domain, o.Tightness, o.Plant = 7, 2+int(seed%2), 3, 0.9, false
		p, err := gen.ScaleFree(seed, o)
		if err != nil {
			t.Fatal(err)
		}
		r, ok := checkVACRoot(t, "scale-free seed "+strconv.Itoa(int(seed)), mva.NewLocalProblem(p, mva.Whole(p)))
		if r {
			sfRaised++
		}
		if ok {
			sfN++
		}
	}
	if n < 100 || raised == 0 || sfRaised == 0 {
		t.Fatalf("VAC raised EDAC's root bound on %d of %d random problems, %d of %d scale-free graphs", raised, n, sfRaised, sfN)
	}
	t.Logf("VAC raised EDAC's root bound on %d of %d random problems, %d of %d scale-free graphs", raised, n, sfRaised, sfN)
}

// TestVACEqualsBruteForce solves hundreds of seeded random problems (the
// EDAC tests' mix: whole and fractional costs, Hard entries, ternary
// functions, agents' rows) with VAC at the root and compares with brute
// force.
func TestVACEqualsBruteForce(t *testing.T) {
	checked := 0
	for seed := range int64(150) {
		o := edacOptions(seed)
		p := randprob.New(seed, o)
		if space(p) > 1<<13 {
			continue
		}
		for _, sub := range wholeAndSubs(p) {
			lp := mva.NewLocalProblem(p, sub)
			rows, err := lp.Rows()
			if err != nil {
				t.Fatal(err)
			}
			ref, s := NewBruteForce(lp), NewEDAC(lp)
			s.useVAC = true
			s.noLocalSearch = seed%2 == 0
			b, got := make([]int, lp.NB), make([]int, lp.NumInterior())
			for r := range rows {
				lp.DecodeRow(r, b)
				checkRow(t, fmt.Sprintf("seed %d, edac with vac,", seed), lp, r, b, ref, s, o.IntCosts, got)
				checked++
			}
		}
	}
	if checked < 500 {
		t.Fatalf("only %d rows checked", checked)
	}
}

// TestVACFiles logs, for the files of HEARTH_VAC_FILES (comma separated),
// EDAC's root bound, nodes and CPU time (median of HEARTH_VAC_RUNS runs)
// with and without VAC, and checks that both find the same optimum: a
// measuring aid, skipped without the variable.
func TestVACFiles(t *testing.T) {
	files, runs := measureFiles(t, "HEARTH_VAC_FILES", "HEARTH_VAC_RUNS")
	for _, f := range files {
		p, err := format.ReadFile(f, format.Options{})
		if err != nil {
			t.Fatal(err)
		}
		lp := mva.NewLocalProblem(p, mva.Whole(p))
		var opt [2]float64
		for i, vac := range []bool{false, true} {
			var cpus []time.Duration
			var s *EDAC
			for range runs {
				c0 := cputime.Used()
				s = NewEDAC(lp)
				s.useVAC = vac
				v, err := s.SolveRow(context.Background(), nil, make([]int, lp.NumInterior()))
				if err != nil {
					t.Fatal(err)
				}
				cpus = append(cpus, cputime.Used()-c0)
				opt[i] = v
			}
			slices.Sort(cpus)
			var it, acs int64
			var gain float64
			if s.vac != nil {
				it, gain, acs = s.vac.iters, s.vac.gain, s.vac.acs
			}
			t.Logf("%s vac=%v: optimum %v, root bound %v (vac %d iterations, +%v, %d arc consistencies), %d nodes, %d checks, cpu %v",
				f, vac, opt[i], s.rootLB, it, gain, acs, s.Nodes(), s.Checks(), cpus[len(cpus)/2])
		}
		if opt[0] != opt[1] && !(math.IsInf(opt[0], 1) && math.IsInf(opt[1], 1)) {
			t.Fatalf("%s: optimum %v without VAC, %v with", f, opt[0], opt[1])
		}
	}
}

// TestVACPendingScanMatchesFull solves seeded generated problems (binary
// grids of two values, scale-free graphs, random graphs: VAC's files'
// families) with vacAC's pending scan and with every variable queued
// (vacFull), and requires the same run: root bound, VAC's iterations,
// arc consistencies and gain, nodes and optimum. The scan skips only
// revisions that EDAC's AC* makes idle, so the two visit the same
// removals in the same order.
func TestVACPendingScanMatchesFull(t *testing.T) {
	ctx := context.Background()
	type inst struct {
		kind   string
		params map[string]string
	}
	var cases []inst
	for _, n := range []string{"6", "9", "12"} {
		cases = append(cases, inst{"grid", map[string]string{"rows": n, "cols": n, "domain": "2", "p2": "1", "plant": "false"}},
			inst{"grid", map[string]string{"rows": n, "cols": n, "domain": "3", "p2": "0.9", "plant": "false"}})
	}
	for _, n := range []string{"25", "40"} {
		cases = append(cases, inst{"scalefree", map[string]string{"agents": n, "domain": "4", "p2": "0.9", "plant": "false"}},
			inst{"randgraph", map[string]string{"agents": n, "p1": "0.1", "domain": "4", "p2": "0.9", "plant": "false"}})
	}
	raised := 0
	for _, c := range cases {
		for seed := range uint64(4) {
			p, err := gen.Generate(c.kind, seed+1, c.params)
			if err != nil {
				t.Fatalf("%s %v: %v", c.kind, c.params, err)
			}
			lp := mva.NewLocalProblem(p, mva.Whole(p))
			type run struct {
				opt, root, gain float64
				iters, acs      int64
				nodes           int64
			}
			var got [2]run
			for i, full := range []bool{false, true} {
				s := NewEDACVAC(lp)
				s.vacFull = full
				v, err := s.SolveRow(ctx, nil, make([]int, lp.NumInterior()))
				if err != nil {
					t.Fatal(err)
				}
				got[i] = run{opt: v, root: s.rootLB, nodes: s.Nodes()}
				if s.vac != nil {
					got[i].gain, got[i].iters, got[i].acs = s.vac.gain, s.vac.iters, s.vac.acs
				}
			}
			if got[0] != got[1] {
				t.Fatalf("%s %v seed %d: pending scan %+v, full queue %+v", c.kind, c.params, seed+1, got[0], got[1])
			}
			if got[0].iters > 0 {
				raised++
			}
		}
	}
	t.Logf("VAC raised the root bound on %d of %d problems", raised, 4*len(cases))
	if raised < len(cases) {
		t.Fatalf("VAC raised the root bound on only %d of %d problems", raised, 4*len(cases))
	}
}

// TestVACLaterRoundSkipMatchesSchedule solves seeded generated problems
// of VAC's families with the later rounds' probe at their lowest
// threshold (vacLowest) and with their whole schedule (vacNoSkip), and
// requires the same root bound, VAC gain and iterations, nodes and
// optimum (Bool_θ(P)'s closure grows with θ, so the thresholds the probe
// skips could not have wiped out), and the probe to save arc
// consistencies on some of them.
func TestVACLaterRoundSkipMatchesSchedule(t *testing.T) {
	ctx := context.Background()
	type inst struct {
		kind   string
		params map[string]string
	}
	var cases []inst
	for _, n := range []string{"8", "12", "16"} {
		cases = append(cases, inst{"grid", map[string]string{"rows": n, "cols": n, "domain": "2", "p2": "1", "plant": "false"}})
	}
	for _, n := range []string{"30", "50"} {
		cases = append(cases, inst{"scalefree", map[string]string{"agents": n, "domain": "4", "p2": "0.9", "plant": "false"}},
			inst{"randgraph", map[string]string{"agents": n, "p1": "0.1", "domain": "4", "p2": "0.9", "plant": "false"}})
	}
	fewer := 0
	var total [2]int64
	for _, c := range cases {
		for seed := range uint64(4) {
			p, err := gen.Generate(c.kind, seed+1, c.params)
			if err != nil {
				t.Fatalf("%s %v: %v", c.kind, c.params, err)
			}
			lp := mva.NewLocalProblem(p, mva.Whole(p))
			type run struct {
				opt, root, gain float64
				iters, nodes    int64
			}
			var got [2]run
			var acs [2]int64
			for i, noSkip := range []bool{false, true} {
				s := NewEDACVAC(lp)
				s.vacNoSkip = noSkip
				v, err := s.SolveRow(ctx, nil, make([]int, lp.NumInterior()))
				if err != nil {
					t.Fatal(err)
				}
				got[i] = run{opt: v, root: s.rootLB, nodes: s.Nodes()}
				if s.vac != nil {
					got[i].gain, got[i].iters, acs[i] = s.vac.gain, s.vac.iters, s.vac.acs
				}
			}
			if got[0] != got[1] {
				t.Fatalf("%s %v seed %d: with the probe %+v, whole schedule %+v", c.kind, c.params, seed+1, got[0], got[1])
			}
			// A probe that wipes out is one arc consistency more; the
			// bound must not change either way.
			if acs[0] < acs[1] {
				fewer++
			}
			total[0] += acs[0]
			total[1] += acs[1]
		}
	}
	t.Logf("the probe saved arc consistencies on %d of %d problems; %d arc consistencies in all with it, %d without", fewer, 4*len(cases), total[0], total[1])
	if fewer == 0 {
		t.Fatal("the probe never saved an arc consistency: the test does not reach it")
	}
}
