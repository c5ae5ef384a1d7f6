package compile

import (
	"cmp"
	"slices"
)

// A storage's states before and after a slot determine its action there
// when no two of its actions change the state by the same amount: the
// transition function (state i−1, action, state i) is then a bijection
// between its feasible entries and the feasible pairs of states. The
// functions of a slot's actions (the meter, the level and demand links)
// may therefore read such a device's action from its two states instead
// of its action variable: the same costs on every assignment that keeps
// the transitions, Hard on pairs no action joins (the transition is
// Hard there anyway). The action variable is then left in its transition
// and unary price functions alone, where bucket elimination removes it
// first at no cost in width; read from the action variable, it ties the
// slot's other devices to the storage's chain, and min-fill (which counts
// edges, not domain sizes) eliminates the chain's states first, joining
// consecutive action variables: for the example street's battery with
// automatic levels (33 actions, 45 states) buckets of 10^8 entries.
//
// It pays where the device has many actions (automatic levels); a device
// of a few actions is cheaper as its action variable, and the catalogue's
// fixed levels keep exactly the functions they had. A slot reads states
// instead of actions only while its largest function's table (with the
// level or demand variable) stays within substBudget and Options.MaxTable,
// largest action sets first.

// substMinActions is the least number of actions for which a storage's
// action is read from its states.
const substMinActions = 9

// substBudget bounds the table of a slot's function once actions are read
// from states.
const substBudget = 1 << 18

// slotActs is what the functions of one slot's actions range over: each
// device's action variable, or a storage's two state variables.
type slotActs struct {
	scope []int
	srcs  []actSrc // per device of the home
}

// actSrc says where a device's action in the slot is read: digit pos of
// the scope, or, where pair is set, from the digits prev (−1 for the fixed
// initial state, which is state 0) and next of its states.
type actSrc struct {
	pos, prev, next int
	pair            map[[2]int]int // (state before, state after) → action
}

// slotScope returns home hi's slotActs in slot t, computed once per slot
// so that every function of the slot reads the same variables.
func (k *compiler) slotScope(hi, t int) *slotActs {
	if k.slots[hi] == nil {
		k.slots[hi] = make([]*slotActs, k.n.Horizon.Slots)
	}
	if sa := k.slots[hi][t]; sa != nil {
		return sa
	}
	n, h, hc := k.n, &k.n.Homes[hi], &k.c.Homes[hi]
	// The largest domain a function of the slot adds to its actions.
	extra := 1
	for w, win := range n.Windows {
		if win.From <= t && t < win.To {
			extra = max(extra, len(hc.Caps[w]))
		}
	}
	if levels, ok := n.DemandLevels(hi); ok {
		extra = max(extra, len(levels))
	}
	size := extra
	for d := range h.Devices {
		size *= len(h.Devices[d].Actions)
	}
	limit := min(substBudget, k.opts.MaxTable)
	byActions := make([]int, len(h.Devices))
	for d := range byActions {
		byActions[d] = d
	}
	slices.SortStableFunc(byActions, func(a, b int) int {
		return cmp.Compare(len(h.Devices[b].Actions), len(h.Devices[a].Actions))
	})
	from := map[int]bool{}
	for _, d := range byActions {
		na := len(h.Devices[d].Actions)
		if na < substMinActions || k.opts.actionsOnly {
			break
		}
		_, vars, ok := k.storageSource(hi, d, t, 0)
		if !ok {
			continue
		}
		s := size / na
		for _, v := range vars {
			s *= k.p.DomainSize(v)
		}
		if s <= limit {
			size, from[d] = s, true
		}
	}
	sa := &slotActs{srcs: make([]actSrc, len(h.Devices))}
	for d := range h.Devices {
		if from[d] {
			src, vars, _ := k.storageSource(hi, d, t, len(sa.scope))
			sa.srcs[d] = src
			sa.scope = append(sa.scope, vars...)
			continue
		}
		sa.srcs[d] = actSrc{pos: len(sa.scope), prev: -1, next: -1}
		sa.scope = append(sa.scope, hc.Actions[d][t])
	}
	k.slots[hi][t] = sa
	return sa
}

// storageSource reports whether device d's action in slot t follows from
// the states of a property it alone moves, and returns the source that
// reads it from the scope's digits at base on, and those state variables.
func (k *compiler) storageSource(hi, d, t, base int) (actSrc, []int, bool) {
	hz := k.n.Horizon
	h, hc := &k.n.Homes[hi], &k.c.Homes[hi]
	for mi := range hc.Models {
		m := &hc.Models[mi]
		s := m.Space
		if len(s.Model.Actuators) != 1 || s.Model.Actuators[0] != d {
			continue
		}
		// The index whose state slot t's actions make.
		i := -1
		for j := max(1, t); j <= min(t+1, s.Last); j++ {
			if hz.Mover(j) == t {
				i = j
			}
		}
		if i < 0 {
			continue
		}
		deltas := map[int64]bool{}
		for a := range h.Devices[d].Actions {
			deltas[s.Delta(t, []int{a})] = true
		}
		if len(deltas) != len(h.Devices[d].Actions) {
			continue // two actions move the state alike
		}
		src := actSrc{pos: -1, prev: -1, pair: map[[2]int]int{}}
		var vars []int
		prev := s.States[0][:min(1, len(s.States[0]))]
		if i > 1 {
			src.prev = base
			vars = append(vars, m.Vars[i-1])
			prev = s.States[i-1]
		}
		src.next = base + len(vars)
		vars = append(vars, m.Vars[i])
		for pj, st := range prev {
			for a := range h.Devices[d].Actions {
				if to, ok := s.Step(i, st, []int{a}); ok {
					src.pair[[2]int{pj, s.IndexOf(i, to)}] = a
				}
			}
		}
		return src, vars, true
	}
	return actSrc{}, nil, false
}

// actions sets acts (one per device) from the scope's digits and reports
// whether they stand for actions: a storage's two states may be no
// action apart.
func (sa *slotActs) actions(digits, acts []int) bool {
	for d, src := range sa.srcs {
		if src.pair == nil {
			acts[d] = digits[src.pos]
			continue
		}
		p := 0
		if src.prev >= 0 {
			p = digits[src.prev]
		}
		a, ok := src.pair[[2]int{p, digits[src.next]}]
		if !ok {
			return false
		}
		acts[d] = a
	}
	return true
}

// SlotScope returns the variables the functions of home hi's actions in
// slot t range over (the slot's meter, level and demand links), where the
// compiler made such a function — a storage of many actions is read from
// its states there, which keeps its chain apart from the slot's other
// devices (see above) — and ok false where it made none. actions sets
// acts (one per device of the home) from values of scope's variables
// (digits, in scope order) and reports whether they stand for actions. A
// caller adding a function of the slot's draw (the SH-MGM baseline's peak
// term) adds it on this scope at no cost in width.
func (c *Compiled) SlotScope(hi, t int) (scope []int, actions func(digits, acts []int) bool, ok bool) {
	if hi < 0 || hi >= len(c.slots) || t < 0 || t >= len(c.slots[hi]) || c.slots[hi][t] == nil {
		return nil, nil, false
	}
	sa := c.slots[hi][t]
	return sa.scope, sa.actions, true
}
