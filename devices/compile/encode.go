package compile

import (
	"errors"
	"fmt"

	"github.com/hearth-dcop/hearth/devices"
	"github.com/hearth-dcop/hearth/mva"
)

// ErrBreaksRules is returned by Encode for a schedule whose property
// trajectories leave the admissible states: it breaks a rule, and no
// assignment of the problem represents it.
var ErrBreaksRules = errors.New("the schedule breaks a rule")

// Encode returns the assignment of the problem that represents schedule s:
// its actions, its levels (the tightest ones when s leaves them nil) and
// the state variables the actions imply. Problem.Eval of the result is the
// schedule's cost.
func (c *Compiled) Encode(s *devices.Schedule) ([]int, error) {
	if len(s.Homes) != len(c.Homes) {
		return nil, fmt.Errorf("schedule has %d homes, the problem %d", len(s.Homes), len(c.Homes))
	}
	assign := make([]int, len(c.Problem.Variables))
	for hi := range c.Homes {
		if err := c.EncodeHome(assign, hi, &s.Homes[hi]); err != nil {
			return nil, err
		}
	}
	return assign, nil
}

// EncodeHome writes the values of home hi's variables for hs into assign,
// leaving the other homes' values as they are: a home that knows only its
// own schedule (`hearth run`) encodes it so.
func (c *Compiled) EncodeHome(assign []int, hi int, hs *devices.HomeSchedule) error {
	if hi < 0 || hi >= len(c.Homes) {
		return fmt.Errorf("home %d of %d", hi, len(c.Homes))
	}
	if len(assign) != len(c.Problem.Variables) {
		return fmt.Errorf("assignment has %d values for %d variables", len(assign), len(c.Problem.Variables))
	}
	n := c.Model
	hc, h := &c.Homes[hi], &n.Homes[hi]
	if len(hs.Actions) != len(hc.Actions) {
		return fmt.Errorf("home %s: schedule has %d devices, the home %d", h.Name, len(hs.Actions), len(hc.Actions))
	}
	for d, row := range hc.Actions {
		if len(hs.Actions[d]) != len(row) {
			return fmt.Errorf("home %s: device %s: %d slots scheduled for %d", h.Name, h.Devices[d].Name, len(hs.Actions[d]), len(row))
		}
		for t, v := range row {
			a := hs.Actions[d][t]
			if a < 0 || a >= c.Problem.DomainSize(v) {
				return fmt.Errorf("home %s: device %s slot %d: action %d out of range", h.Name, h.Devices[d].Name, t, a)
			}
			assign[v] = a
		}
	}
	for w, v := range hc.Levels {
		l := -1
		if hs.Levels != nil {
			if len(hs.Levels) != len(hc.Levels) {
				return fmt.Errorf("home %s: schedule has %d levels for %d windows", h.Name, len(hs.Levels), len(hc.Levels))
			}
			l = hs.Levels[w]
		} else {
			win := n.Windows[w]
			top := h.Draw(win.From, func(d int) int { return hs.Actions[d][win.From] })
			for t := win.From + 1; t < win.To; t++ {
				top = max(top, h.Draw(t, func(d int) int { return hs.Actions[d][t] }))
			}
			l = devices.Tightest(hc.Caps[w], top)
		}
		if l < 0 || l >= c.Problem.DomainSize(v) {
			return fmt.Errorf("home %s: window %d: level %d out of range", h.Name, w, l)
		}
		assign[v] = l
	}
	if hc.Demand >= 0 {
		peak := 0.0
		for t := range n.Horizon.Slots {
			peak = max(peak, h.Draw(t, func(d int) int { return hs.Actions[d][t] }))
		}
		assign[hc.Demand] = max(devices.Tightest(hc.DemandLevels, peak), 0)
	}
	for mi := range hc.Models {
		m := &hc.Models[mi]
		sp := m.Space
		st := sp.States[0][0]
		acts := make([]int, len(sp.Model.Actuators))
		for i := 1; i <= sp.Last; i++ {
			t := n.Horizon.Mover(i)
			for j, d := range sp.Model.Actuators {
				acts[j] = hs.Actions[d][t]
			}
			next, ok := sp.Step(i, st, acts)
			if !ok {
				p := &h.Properties[sp.Model.Property]
				return fmt.Errorf("home %s: %s %s at index %d: %w", h.Name, p.Location, p.Name, i, ErrBreaksRules)
			}
			assign[m.Vars[i]] = sp.IndexOf(i, next)
			st = next
		}
	}
	return nil
}

// Decode returns the schedule an assignment of the problem stands for:
// every action and committed level. Neighbourhood.Evaluate on it gives the
// per-home report (load per slot, energy cost, peak, rules satisfied).
func (c *Compiled) Decode(assign []int) (*devices.Schedule, error) {
	if len(assign) != len(c.Problem.Variables) {
		return nil, fmt.Errorf("assignment has %d values for %d variables", len(assign), len(c.Problem.Variables))
	}
	s := &devices.Schedule{Homes: make([]devices.HomeSchedule, len(c.Homes))}
	for hi, hc := range c.Homes {
		hs := &s.Homes[hi]
		hs.Actions = make([][]int, len(hc.Actions))
		for d, row := range hc.Actions {
			hs.Actions[d] = make([]int, len(row))
			for t, v := range row {
				hs.Actions[d][t] = assign[v]
			}
		}
		hs.Levels = make([]int, len(hc.Levels))
		for w, v := range hc.Levels {
			hs.Levels[w] = assign[v]
		}
	}
	return s, nil
}

// Report decodes an assignment and evaluates the schedule.
func (c *Compiled) Report(assign []int) (*devices.Schedule, *devices.Evaluation, error) {
	s, err := c.Decode(assign)
	if err != nil {
		return nil, nil, err
	}
	ev, err := c.Model.Evaluate(s)
	if err != nil {
		return nil, nil, err
	}
	return s, ev, nil
}

// Stats are the compiled problem's size figures.
type Stats struct {
	Agents, Variables, Functions int
	// Boundary counts the variables in functions between homes.
	Boundary int
	// MaxTable and Entries are the largest table and the sum of all.
	MaxTable, Entries   int
	MaxArity, MaxDomain int
	// MVARows is the largest MVA table (∏ boundary domains of one home).
	MVARows int
}

// Stats returns the problem's size figures.
func (c *Compiled) Stats() Stats {
	p := c.Problem
	ps := p.Stats()
	s := Stats{Agents: ps.Agents, Variables: ps.Variables, Functions: ps.Functions, MaxArity: ps.MaxArity, MaxDomain: ps.MaxDomain}
	for _, f := range p.Functions {
		s.MaxTable = max(s.MaxTable, len(f.Costs))
		s.Entries += len(f.Costs)
	}
	d := mva.Decompose(p)
	for _, sub := range d.Subs {
		s.Boundary += len(sub.Boundary)
		rows := 1
		for _, v := range sub.Boundary {
			if rows > 1<<40/max(p.DomainSize(v), 1) {
				rows = 1 << 40
				break
			}
			rows *= p.DomainSize(v)
		}
		s.MVARows = max(s.MVARows, rows)
	}
	return s
}
