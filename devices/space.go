package devices

import (
	"cmp"
	"fmt"
	"slices"
)

// State is where a modelled property's trajectory is at one index: its
// value in steps and which of the model's ANY rules (before/after goals)
// have held so far, up to their window's last index (after it nothing
// reads the bit, and it is clear).
type State struct {
	Value int64
	Flags uint64
}

func compareState(a, b State) int {
	if c := cmp.Compare(a.Value, b.Value); c != 0 {
		return c
	}
	return cmp.Compare(a.Flags, b.Flags)
}

// DefaultStateLimit bounds the states of one model at one index; the SHDS
// data set needs at most 291 (a heater and an oven warming the same room).
const DefaultStateLimit = 4096

// Space is the exact state space of a model: at every index, the states
// that some schedule of the model's actuators reaches while keeping every
// ALL rule, and from which every ANY rule can still be met in time. It is
// what the compiler's state variables range over, and an exact test of
// the model's feasibility.
type Space struct {
	Model Model
	// Last is the last index anything reads the state at: a soft rule's
	// window, a before/after goal's, an end value, or a bound or ALL rule
	// that excludes some reachable state there. The trajectory after it
	// does not matter: every schedule of the actuators keeps the model's
	// rules from Last on, so the state leaves the problem (a programme's
	// counter past its goal, a bound it never reaches). States exist for
	// indices 0..Last.
	Last int
	// States[i] is sorted by (Value, Flags). States[0] holds at most the
	// initial state. Every States[i] is empty when the model is
	// infeasible.
	States [][]State
	// AnyRules are the model's ANY rules, in flag-bit order; a soft one's
	// bit records whether it has held, without excluding any state.
	AnyRules []int

	hz Horizon
	// Slots of one length share a class: class[t] indexes drift and
	// delta for slot t (a single class on a horizon of one length).
	class []int
	drift []int64     // [class] steps
	delta [][][]int64 // [class][actuator position][action] steps
	// idle[class][actuator position] is the only action the actuator may
	// take in the class's slots where it is away (Device.Away), −1 where
	// it is plugged in; nil when no actuator is ever away.
	idle [][]int
	// reset[i] is the value (steps) the property takes at index i
	// whatever came before (Property.Reset); nil for none.
	reset map[int]int64
	init  int64
	// Per index: the ALL checks, the ANY checks (with their bit) and the
	// bits that must be set by then.
	all  [][]check
	anys [][]check
	must []uint64
	// expired[i] holds the bits of the ANY rules whose window closed
	// before index i: nothing reads them there, so apply clears them
	// and the states that differ only by them are one.
	expired []uint64
	broken  bool // an ANY window is empty
	index   []map[State]int
	// read is the last index a rule or end value reads; explore keeps
	// the states past it only up to the last index where a check
	// excludes a reachable state.
	read int
}

type check struct {
	rel  Relation
	goal int64
	bit  uint64
}

// NewSpace computes the state space of model m of home h. It fails only
// when a state set exceeds limit (0 means DefaultStateLimit); an
// infeasible model gives a Space whose Feasible is false.
func (h *Home) NewSpace(hz Horizon, m Model, limit int) (*Space, error) {
	return h.newSpace(hz, m, limit, 0)
}

// newSpace is NewSpace with states kept up to index last at least, for
// diagnostics that look past the model's own rules.
func (h *Home) newSpace(hz Horizon, m Model, limit, last int) (*Space, error) {
	if limit <= 0 {
		limit = DefaultStateLimit
	}
	p := &h.Properties[m.Property]
	s := &Space{Model: m, hz: hz, init: Steps(p.Initial, p.Scale), class: make([]int, hz.Slots)}
	for i, v := range p.Reset {
		if i >= 1 {
			if s.reset == nil {
				s.reset = map[int]int64{}
			}
			s.reset[i] = Steps(v, p.Scale)
		}
	}
	// Slots share a class when they have one length and the same
	// actuators away.
	type classKey struct {
		minutes int
		away    string
	}
	leaves := false
	for _, di := range m.Actuators {
		leaves = leaves || h.Devices[di].Away != nil
	}
	seen := map[classKey]int{}
	for t := range hz.Slots {
		key := classKey{minutes: hz.Minutes(t)}
		if leaves {
			b := make([]byte, len(m.Actuators))
			for j, di := range m.Actuators {
				b[j] = '0'
				if h.Devices[di].AwayIn(t) {
					b[j] = '1'
				}
			}
			key.away = string(b)
		}
		c, ok := seen[key]
		if !ok {
			// The first slot of each class stands for it.
			c = len(s.drift)
			seen[key] = c
			s.drift = append(s.drift, Steps(p.DriftIn(hz, t), p.Scale))
			if leaves {
				idle := make([]int, len(m.Actuators))
				for j, di := range m.Actuators {
					idle[j] = -1
					if h.Devices[di].AwayIn(t) {
						idle[j] = h.Devices[di].Idle()
					}
				}
				s.idle = append(s.idle, idle)
			}
			var rows [][]int64
			for _, di := range m.Actuators {
				d := &h.Devices[di]
				row := make([]int64, len(d.Actions))
				for k := range d.Actions {
					v, _ := d.Actions[k].EffectIn(p.Name, hz, t)
					row[k] = Steps(v, p.Scale)
				}
				rows = append(rows, row)
			}
			s.delta = append(s.delta, rows)
		}
		s.class[t] = c
	}
	if len(s.drift) == 0 {
		s.drift, s.delta = []int64{0}, [][][]int64{make([][]int64, len(m.Actuators))}
	}
	n := hz.Indices()
	s.all, s.anys, s.must, s.expired = make([][]check, n), make([][]check, n), make([]uint64, n), make([]uint64, n)
	for _, ri := range m.Rules {
		r := &h.Rules[ri]
		from, to, anyOf := hz.RuleWindow(r)
		goal := Steps(r.Goal, p.Scale)
		if r.Soft && !anyOf {
			// A soft ALL rule excludes no state; the compiler prices
			// the states of its window (Shortfall).
			if to > from {
				s.read = max(s.read, to-1)
			}
			continue
		}
		if !anyOf {
			// A hard ALL rule (a bound) is explored to its window's
			// end but read only where it excludes a state (explore).
			for i := from; i < to; i++ {
				s.all[i] = append(s.all[i], check{rel: r.Rel, goal: goal})
				s.Last = max(s.Last, i)
			}
			continue
		}
		if len(s.AnyRules) >= 64 {
			return nil, fmt.Errorf("home %s: property %s %s has more than 64 before/after rules: %w", h.Name, p.Location, p.Name, ErrTooLarge)
		}
		bit := uint64(1) << len(s.AnyRules)
		s.AnyRules = append(s.AnyRules, ri)
		if from >= to {
			if !r.Soft {
				s.broken = true
			}
			continue
		}
		for i := from; i < to; i++ {
			s.anys[i] = append(s.anys[i], check{rel: r.Rel, goal: goal, bit: bit})
		}
		for i := to; i < n; i++ {
			s.expired[i] |= bit
		}
		if r.Soft {
			// A soft ANY rule only records whether it held; the
			// compiler prices the states at its window's end whose
			// bit is unset.
			s.read = max(s.read, to-1)
			continue
		}
		s.must[to-1] |= bit
		s.read = max(s.read, to-1)
	}
	for i := 1; i < n; i++ {
		s.must[i] |= s.must[i-1]
	}
	for i := range n {
		s.must[i] &^= s.expired[i]
	}
	s.read = max(s.read, min(last, n-1))
	if p.EndValue != 0 && s.Last == n-1 {
		// The compiler values the state at the horizon's end.
		s.read = n - 1
	}
	s.Last = max(s.Last, s.read)
	if err := s.explore(h, limit); err != nil {
		return nil, err
	}
	return s, nil
}

// Feasible reports whether some schedule satisfies every rule of the
// model (taken alone).
func (s *Space) Feasible() bool { return len(s.States) > 0 && len(s.States[s.Last]) > 0 }

// Init returns the state at index 0 and whether it is allowed.
func (s *Space) Init() (State, bool) { return s.apply(0, s.init, 0) }

// apply finishes a state at index i: checks the ALL rules, records the ANY
// rules that hold, rejects it when a finished ANY window was missed and
// forgets the ANY rules whose window closed before i.
func (s *Space) apply(i int, v int64, flags uint64) (State, bool) {
	if r, ok := s.reset[i]; ok {
		v = r // the car comes back with its arrival charge
	}
	flags &^= s.expired[i]
	for _, c := range s.all[i] {
		if !c.rel.Holds(v, c.goal) {
			return State{}, false
		}
	}
	for _, c := range s.anys[i] {
		if c.rel.Holds(v, c.goal) {
			flags |= c.bit
		}
	}
	if flags&s.must[i] != s.must[i] {
		return State{}, false
	}
	return State{Value: v, Flags: flags}, true
}

// Delta returns the steps the model's actuators add in slot t when they
// run the given actions (one per actuator, in Model.Actuators order),
// drift included.
func (s *Space) Delta(t int, actions []int) int64 {
	c := s.class[t]
	d := s.drift[c]
	for j, k := range actions {
		d += s.delta[c][j][k]
	}
	return d
}

// Allowed reports whether the model's actuators may run actions in slot
// t: an actuator that is away there (Device.Away) only its idle action.
func (s *Space) Allowed(t int, actions []int) bool {
	if s.idle == nil || t < 0 || t >= len(s.class) {
		return true
	}
	for j, k := range s.idle[s.class[t]] {
		if k >= 0 && j < len(actions) && actions[j] != k {
			return false
		}
	}
	return true
}

// Step returns the state at index i ≥ 1 reached from st at index i−1 when
// the model's actuators run actions in slot hz.Mover(i), and whether it is
// a state of the space.
func (s *Space) Step(i int, st State, actions []int) (State, bool) {
	if i < 1 || i > s.Last || len(actions) != len(s.Model.Actuators) {
		return State{}, false
	}
	if !s.Allowed(s.hz.Mover(i), actions) {
		return State{}, false
	}
	next, ok := s.apply(i, st.Value+s.Delta(s.hz.Mover(i), actions), st.Flags)
	if !ok {
		return State{}, false
	}
	_, in := s.index[i][next]
	return next, in
}

// Bit returns the flag bit of ANY rule ri of the model, 0 when ri is not
// one.
func (s *Space) Bit(ri int) uint64 {
	for k, r := range s.AnyRules {
		if r == ri {
			return 1 << k
		}
	}
	return 0
}

// IndexOf returns the position of st in States[i], or −1.
func (s *Space) IndexOf(i int, st State) int {
	if i < 0 || i > s.Last {
		return -1
	}
	if k, ok := s.index[i][st]; ok {
		return k
	}
	return -1
}

// explore runs the forward reachability and the backward pruning.
func (s *Space) explore(h *Home, limit int) error {
	s.States = make([][]State, s.Last+1)
	s.index = make([]map[State]int, s.Last+1)
	defer s.buildIndex()
	init, ok := s.Init()
	if s.broken || !ok {
		return nil
	}
	s.States[0] = []State{init}
	deltas := make([][]int64, len(s.drift))
	for c := range deltas {
		deltas[c] = s.distinctDeltas(c)
	}
	// excludes is the last index where a check excluded a state reached
	// from the index before (a superset of the states kept).
	excludes := 0
	for i := 1; i <= s.Last; i++ {
		seen := map[State]bool{}
		for _, st := range s.States[i-1] {
			for _, d := range deltas[s.class[s.hz.Mover(i)]] {
				next, ok := s.apply(i, st.Value+d, st.Flags)
				if !ok {
					excludes = i
				} else if !seen[next] {
					seen[next] = true
					s.States[i] = append(s.States[i], next)
				}
			}
		}
		if len(s.States[i]) > limit {
			p := &h.Properties[s.Model.Property]
			return fmt.Errorf("home %s: %s %s reaches more than %d states at index %d; use a coarser resolution for %s or a shorter horizon: %w", h.Name, p.Location, p.Name, limit, i, p.Name, ErrTooLarge)
		}
		if len(s.States[i]) == 0 {
			s.clear()
			return nil
		}
		slices.SortFunc(s.States[i], compareState)
	}
	// Past max(read, excludes) every schedule keeps the rules and
	// nothing reads the state: its values can no longer tell schedules
	// apart, so the model ends there. The states up to it, and the
	// backward pruning below, are the same as with the whole trajectory.
	if keep := max(s.read, excludes); keep < s.Last {
		clear(s.States[keep+1:])
		s.States, s.index, s.Last = s.States[:keep+1], s.index[:keep+1], keep
	}
	for i := s.Last - 1; i >= 0; i-- {
		next := map[State]bool{}
		for _, st := range s.States[i+1] {
			next[st] = true
		}
		keep := s.States[i][:0]
		for _, st := range s.States[i] {
			for _, d := range deltas[s.class[s.hz.Mover(i+1)]] {
				if n, ok := s.apply(i+1, st.Value+d, st.Flags); ok && next[n] {
					keep = append(keep, st)
					break
				}
			}
		}
		s.States[i] = keep
	}
	if len(s.States[0]) == 0 {
		s.clear()
	}
	return nil
}

func (s *Space) clear() {
	for i := range s.States {
		s.States[i] = nil
	}
}

func (s *Space) buildIndex() {
	for i := range s.States {
		s.index[i] = make(map[State]int, len(s.States[i]))
		for k, st := range s.States[i] {
			s.index[i][st] = k
		}
	}
}

// distinctDeltas returns the distinct total changes one slot of class c
// can make.
func (s *Space) distinctDeltas(c int) []int64 {
	sums := map[int64]bool{s.drift[c]: true}
	for j, row := range s.delta[c] {
		if s.idle != nil && s.idle[c][j] >= 0 {
			// Away: only the idle action.
			row = row[s.idle[c][j] : s.idle[c][j]+1]
		}
		next := map[int64]bool{}
		for v := range sums {
			for _, d := range row {
				next[v+d] = true
			}
		}
		sums = next
	}
	out := make([]int64, 0, len(sums))
	for v := range sums {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// Joint calls f with every joint action of the model's actuators (one
// action index per actuator, last fastest), the order of a table over
// them. f must not keep the slice.
func Joint(h *Home, actuators []int, f func(actions []int)) {
	acts := make([]int, len(actuators))
	for {
		f(acts)
		j := len(acts) - 1
		for ; j >= 0; j-- {
			acts[j]++
			if acts[j] < len(h.Devices[actuators[j]].Actions) {
				break
			}
			acts[j] = 0
		}
		if j < 0 {
			return
		}
	}
}
