package devices_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/devices/internal/testhomes"
)

// TestSpaceAgainstEnumeration checks every model's state space against
// the states that enumerated schedules actually visit: States[i] must be
// exactly the states at index i of the schedules that keep every rule of
// the model, with trajectories and rule checks taken from Evaluate.
func TestSpaceAgainstEnumeration(t *testing.T) {
	checked := 0
	for seed := range uint64(120) {
		n := testhomes.Random(seed, testhomes.Options{Homes: 1, Slots: 3 + int(seed%2), Devices: 2, Actions: 3, Mixed: true})
		h := &n.Homes[0]
		models, err := h.Models()
		if err != nil {
			t.Fatal(err)
		}
		spaces, err := h.Spaces(n.Horizon, models, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := make([][]map[devices.State]bool, len(models))
		for mi, s := range spaces {
			want[mi] = make([]map[devices.State]bool, s.Last+1)
			for i := range want[mi] {
				want[mi][i] = map[devices.State]bool{}
			}
		}
		jointOK := make([]bool, len(models))
		comps := devices.Components(models)
		testhomes.Schedules(n, 0, func(hs devices.HomeSchedule) {
			ev, err := n.Evaluate(&devices.Schedule{Homes: []devices.HomeSchedule{hs}})
			if err != nil {
				t.Fatal(err)
			}
			he := ev.Homes[0]
			keeps := make([]bool, len(models))
			for mi, m := range models {
				keeps[mi] = true
				for _, ri := range m.Rules {
					keeps[mi] = keeps[mi] && he.Rules[ri]
				}
				if !keeps[mi] {
					continue
				}
				p := h.Properties[m.Property]
				for i := 0; i <= spaces[mi].Last; i++ {
					st := devices.State{Value: devices.Steps(he.Values[m.Property][i], p.Scale)}
					for bit, ri := range spaces[mi].AnyRules {
						if heldBy(n.Horizon, &h.Rules[ri], he.Values[m.Property], p.Scale, i) {
							st.Flags |= 1 << bit
						}
					}
					want[mi][i][st] = true
				}
			}
			for _, comp := range comps {
				all := true
				for _, mi := range comp {
					all = all && keeps[mi]
				}
				for _, mi := range comp {
					jointOK[mi] = jointOK[mi] || all
				}
			}
		})
		for mi, s := range spaces {
			for i := 0; i <= s.Last; i++ {
				var w []devices.State
				for st := range want[mi][i] {
					w = append(w, st)
				}
				slices.SortFunc(w, func(a, b devices.State) int {
					if a.Value != b.Value {
						return int(a.Value - b.Value)
					}
					return int(a.Flags) - int(b.Flags)
				})
				if fmt.Sprint(w) != fmt.Sprint(s.States[i]) {
					t.Fatalf("seed %d model %d index %d: space %v, enumeration %v", seed, mi, i, s.States[i], w)
				}
			}
			checked++
		}
		for _, comp := range comps {
			ok, decided := h.JointFeasible(spaces, comp, 0)
			if decided && ok != jointOK[comp[0]] {
				t.Fatalf("seed %d: JointFeasible %v, enumeration %v", seed, ok, jointOK[comp[0]])
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d models checked", checked)
	}
}

// heldBy reports whether ANY rule r has held at some index ≤ i of its
// window, while the window is open (i before its end).
func heldBy(hz devices.Horizon, r *devices.Rule, values []float64, scale float64, i int) bool {
	from, to, _ := hz.RuleWindow(r)
	if i >= to {
		return false // the space forgets a rule once its window has closed
	}
	goal := devices.Steps(r.Goal, scale)
	for j := from; j < to && j <= i; j++ {
		if r.Rel.Holds(devices.Steps(values[j], scale), goal) {
			return true
		}
	}
	return false
}
