package gen

import (
	"testing"

	"github.com/hearth-dcop/hearth/mva"
)

func TestMeetingStructure(t *testing.T) {
	for _, c := range []struct {
		name string
		o    func(*MeetingOptions)
	}{
		{"defaults", func(*MeetingOptions) {}},
		{"many agents", func(o *MeetingOptions) { o.Agents = 100 }},
		{"three meetings", func(o *MeetingOptions) { o.Agents, o.Meetings, o.Span = 9, 3, 1 }},
		{"two agents", func(o *MeetingOptions) { o.Agents, o.Vars = 2, 1 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := DefaultMeeting()
			c.o(&o)
			p, err := Meeting(5, o)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Agents) != o.Agents {
				t.Fatalf("%d agents", len(p.Agents))
			}
			for i, n := range varsPerAgent(p) {
				if n != o.Vars {
					t.Fatalf("agent %d has %d events, want %d", i, n, o.Vars)
				}
			}
			d := mva.Decompose(p)
			for i, s := range d.Subs {
				if len(s.Boundary) != 1 || s.Boundary[0] != i*o.Vars {
					t.Fatalf("agent %d has boundary %v, want exactly its event 0", i, s.Boundary)
				}
			}
			if got := agentsConnected(p); got != (o.Meetings == 1) {
				t.Fatalf("agent graph connected = %v with %d meetings", got, o.Meetings)
			}
			local := make([]int, o.Agents)
			for _, f := range p.Functions {
				for _, v := range f.Scope {
					if len(p.Variables[v].Domain) != o.Slots {
						t.Fatalf("event %s has %d slots", p.Variables[v].Name, len(p.Variables[v].Domain))
					}
				}
				switch len(f.Scope) {
				case 1:
					for _, c := range f.Costs {
						if c < 0 || c > 100 {
							t.Fatalf("preference %s costs %v", f.Name, c)
						}
					}
				case 2:
					a, b := p.Variables[f.Scope[0]].Agent, p.Variables[f.Scope[1]].Agent
					if a == b {
						local[a]++
					}
					for x, c := range f.Costs {
						same := x/o.Slots == x%o.Slots
						if want := mva.IsHard(c); want != (same == (a == b)) || (!want && c != 0) {
							t.Fatalf("function %s: entry %d costs %v", f.Name, x, c)
						}
					}
				default:
					t.Fatalf("function %s has arity %d", f.Name, len(f.Scope))
				}
			}
			want := round(o.LocalDensity * float64(o.Vars*(o.Vars-1)/2))
			for i, n := range local {
				if n != want {
					t.Fatalf("agent %d has %d conflicts, want %d", i, n, want)
				}
			}
		})
	}
}

func TestMeetingFeasible(t *testing.T) {
	o := DefaultMeeting()
	o.Agents, o.Vars, o.Slots, o.LocalDensity = 3, 3, 3, 1
	for seed := range uint64(5) {
		p, err := Meeting(seed, o)
		if err != nil {
			t.Fatal(err)
		}
		if b, d := checkFeasible(t, p, "bruteforce"), checkFeasible(t, p, "dfbnb"); b != d {
			t.Fatalf("seed %d: brute force %v, dfbnb %v", seed, b, d)
		}
	}
	// At the thesis's size (10 events, 12 slots, density 0.7) search is
	// slow, so the documented argument is checked instead: shared meetings
	// in slot 0 and each agent's conflict graph coloured greedily.
	for _, d := range []float64{0.7, 1} {
		o = DefaultMeeting()
		o.LocalDensity = d
		p, err := Meeting(1, o)
		if err != nil {
			t.Fatal(err)
		}
		conflicts := primal(p)
		assign := make([]int, len(p.Variables))
		for v := range assign {
			if v%o.Vars == 0 {
				continue // the shared meeting: slot 0
			}
			used := map[int]bool{}
			for u := v - v%o.Vars; u < v; u++ {
				if conflicts[newEdge(u, v)] > 0 {
					used[assign[u]] = true
				}
			}
			for used[assign[v]] {
				assign[v]++
			}
		}
		if c, err := p.Eval(assign); err != nil || mva.IsHard(c) {
			t.Fatalf("density %v: the greedy schedule costs %v (%v)", d, c, err)
		}
	}
}
