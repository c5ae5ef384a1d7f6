package compile_test

import (
	"math"
	"strings"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/compile"
	"github.com/hearth-dcop/hearth/devices/internal/testhomes"
)

// committed is the street's committed sum in window w of s, recomputed
// from the draws (each home's tightest cap of its top draw there), apart
// from the compiler and the evaluator.
func committed(c *compile.Compiled, s *devices.Schedule, w int) float64 {
	n := c.Model
	win := n.Windows[w]
	sum := 0.0
	for hi := range n.Homes {
		h := &n.Homes[hi]
		top := math.Inf(-1)
		for t := win.From; t < win.To; t++ {
			top = math.Max(top, h.Draw(t, func(d int) int { return s.Homes[hi].Actions[d][t] }))
		}
		caps := c.Homes[hi].Caps[w]
		k := devices.Tightest(caps, top)
		if k < 0 {
			return math.Inf(1)
		}
		sum += caps[k]
	}
	return sum
}

// TestFeederBudgets: with the feeder limit split into per-home budgets,
// on random streets of two and three homes, over every joint schedule:
// a schedule the compiled problem allows keeps a hard limit (its
// committed sum, recomputed apart, is at most the limit), and its
// compiled cost is never below the model's evaluation (a soft limit's
// per-home penalties add up to at least the street's excess; the rest is
// the exact problem). A street too large for one table compiles with
// budgets rather than failing.
func TestFeederBudgets(t *testing.T) {
	checked, allowed := 0, 0
	for seed := uint64(1); seed <= 300 && checked < 20; seed++ {
		n := testhomes.Random(seed, testhomes.Options{Homes: 2 + int(seed%2), Slots: 3, Devices: 2, Actions: 2, Mixed: true, Feeder: true, Soft: seed%3 == 0})
		if n.FeederLimit <= 0 {
			continue
		}
		c, err := compile.Compile(n, compile.Options{FeederBudgets: true})
		if err != nil {
			continue // the limit is below the lowest levels, or a rule no plan keeps
		}
		checked++
		s := &devices.Schedule{Homes: make([]devices.HomeSchedule, len(n.Homes))}
		var rec func(h int)
		rec = func(h int) {
			if h == len(n.Homes) {
				a, err := c.Encode(s)
				if err != nil {
					return // breaks a rule
				}
				got, err := c.Problem.Eval(a)
				if err != nil {
					t.Fatal(err)
				}
				ev, err := n.Evaluate(s)
				if err != nil {
					t.Fatal(err)
				}
				if got < ev.Cost-1e-9*math.Max(1, math.Abs(ev.Cost)) {
					t.Fatalf("seed %d: compiled cost %v below the evaluation %v", seed, got, ev.Cost)
				}
				if math.IsInf(got, 1) {
					return
				}
				allowed++
				for w := range n.Windows {
					if sum := committed(c, s, w); !n.FeederSoft && !devices.Fits(sum, n.FeederLimit) {
						t.Fatalf("seed %d window %d: allowed with caps adding up to %v, limit %v", seed, w, sum, n.FeederLimit)
					}
				}
				return
			}
			testhomes.Schedules(n, h, func(hs devices.HomeSchedule) {
				s.Homes[h] = hs
				rec(h + 1)
			})
		}
		rec(0)
	}
	if checked < 15 || allowed < 100 {
		t.Fatalf("only %d streets, %d allowed schedules checked", checked, allowed)
	}

	// 40 homes: one table would have levels^40 entries.
	for seed := uint64(1); ; seed++ {
		n := testhomes.Random(seed, testhomes.Options{Homes: 40, Slots: 2, Devices: 1, Actions: 2})
		n.FeederLimit = 0
		for h := range n.Homes {
			n.Homes[h].Rules = nil // every home has a plan
		}
		free, err := compile.Compile(n, compile.Options{})
		if err != nil {
			if seed > 200 {
				t.Fatal("no 40-home street compiles")
			}
			continue
		}
		lo, hi := 0.0, 0.0
		for _, h := range free.Homes {
			lo += h.Caps[0][0]
			hi += h.Caps[0][len(h.Caps[0])-1]
		}
		n.FeederLimit = (lo + hi) / 2
		c, err := compile.Compile(n, compile.Options{})
		if err != nil {
			t.Fatalf("40 homes with a feeder limit: %v", err)
		}
		budgets := 0
		for _, f := range c.Problem.Functions {
			if len(f.Scope) == 1 && strings.HasPrefix(f.Name, "feeder:") {
				budgets++
			}
		}
		if budgets < 40 {
			t.Fatalf("%d per-home feeder functions", budgets)
		}
		break
	}
}
